//! The built-in tools: read, write, edit, bash, grep, find, ls — pi's names and argument
//! schemas, our own implementations (no ripgrep or fd needed).

pub mod bash;
pub mod bash_terminal;
pub mod codemode;
pub mod diff;
pub mod edit;
pub mod editor_files;
pub mod editor_terminal;
pub mod find;
pub mod grep;
mod grep_file;
pub mod ls;
pub mod mutation_queue;
pub mod path;
pub mod permissions;
pub mod read;
pub mod sandbox;
mod search_util;
pub mod truncate;
pub mod write;
