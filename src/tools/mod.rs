//! The built-in tools: read, write, edit, bash, grep, find, ls — pi's names and argument
//! schemas, our own implementations (no ripgrep or fd needed).

pub mod find;
pub mod grep;
pub mod ls;
mod search_util;
pub mod truncate;
