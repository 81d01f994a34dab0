//! The overlays of interactive mode: each selector is a [`crate::tui::Component`] built from
//! plain data (no session handle), driven through `handle_input`, and polled by the app with
//! `take_outcome()` once per input. They render like pi's: a border, a header, the list with
//! the selected row highlighted and an `(n/m)` line when it scrolls, hints at the bottom.

pub mod common;
pub mod config;
pub mod login;
pub mod login_method;
pub mod mcp;
pub mod mcp_signin;
pub mod model;
pub mod scoped_models;
pub mod session_picker;
pub mod session_search;
pub mod settings;
pub mod thinking;
pub mod tree;
pub mod tree_layout;
pub mod tree_text;
pub mod trust;
pub mod user_message;
