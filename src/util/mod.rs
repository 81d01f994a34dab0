//! Bottom-floor helpers every layer may use: they import nothing from the rest of the crate.

pub mod process;
pub mod shutdown;
pub mod terminal_text;
