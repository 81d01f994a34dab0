//! Ready-made components. Each renders lines no wider than the width it is given.

pub mod boxed;
pub mod highlight;
pub mod image;
pub mod loader;
pub mod markdown;
mod markdown_parse;
mod markdown_table;
pub mod select_list;
pub mod settings_list;
pub mod terminal_image;
pub mod text;
