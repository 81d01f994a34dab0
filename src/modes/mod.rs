//! Output modes over the shared `AgentSession`: interactive (the terminal UI), print (`-p`,
//! text answer), json (one event per line) and rpc (JSON commands and events).

pub mod interactive;
pub mod print;
pub mod rpc;
pub mod rpc_session;
pub mod rpc_ui;
