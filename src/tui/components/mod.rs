//! Ready-made components.

pub mod editor;
mod editor_layout;
pub mod input;
