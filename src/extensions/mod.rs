//! Extensions: what pi offers code outside the binary. For now the UI surface extensions
//! talk to; each mode supplies its own implementation (the TUI draws dialogs, RPC forwards
//! them to the client as `extension_ui_request`, print mode has no UI).

pub mod ui;
