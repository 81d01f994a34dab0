//! Ready-made components. Each renders lines no wider than the width it is given.

pub mod boxed;
pub mod editor;
mod editor_layout;
pub mod highlight;
pub mod image;
pub mod input;
pub mod loader;
pub mod markdown;
mod markdown_parse;
mod markdown_table;
pub mod select_list;
pub mod settings_list;
pub mod terminal_image;
pub mod text;
