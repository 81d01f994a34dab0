//! Sessions: pi's append-only JSONL tree. `entry` is the file vocabulary and `normalize` brings
//! every shape any pi version wrote to it; `lines` splits files into bounded lines; `file` reads
//! files whole (and migrates old versions in memory), `lazy` resumes them without parsing;
//! `store` writes them (byte for byte for what it read), `lease` keeps a second pi from
//! writing the same one; `tree` turns a leaf into agent/LLM
//! context (compaction, branch summaries, 1.x context edits); `dir` locates, lists and forks
//! session files; `ids` makes ids and timestamps; `ops` holds the tree commands (fork, clone,
//! name, label, stats); `export` writes the HTML session viewer and branch JSONL.

pub mod branch_summary;
pub mod compaction;
pub mod dir;
pub mod entry;
pub mod error;
pub mod export;
pub mod file;
pub mod ids;
pub mod json;
pub(crate) mod lazy;
pub mod lease;
pub mod lines;
pub mod normalize;
pub mod ops;
pub mod store;
pub mod tree;

pub use entry::{AgentMessage, Entry, SessionHeader, CURRENT_VERSION};
pub use store::SessionWriter;
pub use tree::{build_context, to_llm_messages, SessionContext, Tree};

#[cfg(test)]
#[path = "tests/compaction.rs"]
mod compaction_tests;
#[cfg(test)]
#[path = "tests/context.rs"]
mod context_tests;
#[cfg(test)]
#[path = "tests/dirs.rs"]
mod dirs_tests;
#[cfg(test)]
#[path = "tests/entries.rs"]
mod entries_tests;
#[cfg(test)]
#[path = "tests/export.rs"]
mod export_tests;
#[cfg(test)]
#[path = "tests/files.rs"]
mod files_tests;
#[cfg(test)]
#[path = "tests/lazy.rs"]
mod lazy_tests;
#[cfg(test)]
#[path = "tests/ops.rs"]
mod ops_tests;
#[cfg(test)]
#[path = "tests/robust.rs"]
mod robust_tests;
#[cfg(test)]
#[path = "tests/tagged.rs"]
mod tagged_tests;
