//! pi: a minimal terminal coding agent. The library is the SDK; `main.rs` is the `pi` binary.
//!
//! Floors, lowest first (a module imports only from the floors below it, and no two files
//! import each other; `tests/layers.rs` checks both, DESIGN.md explains them): `util`
//! (bottom-floor helpers) → `ai` (LLM wire APIs, models) and `tui` (terminal UI library) →
//! `agent` (the run loop and its messages) and `resources` (config files, auth) → `session`
//! (the JSONL store) and `tools` → `mcp` → `extensions` → `harness` (retry, compaction,
//! session switches, system prompt; mode-agnostic) → `modes` (interactive, print, json, rpc)
//! → `cli` (flags, help, dispatch).
//!
//! Embedding: build an [`agent::Agent`] (model, tools, system prompt), wrap it in a
//! [`harness::AgentSession`] (retry, compaction, session file), then `prompt` and react to
//! [`agent::AgentEvent`]s; `examples/sdk.rs` is a complete, runnable program.

pub mod agent;
pub mod ai;
pub mod cli;
pub mod extensions;
pub mod harness;
pub mod mcp;
pub mod modes;
pub mod resources;
pub mod session;
pub mod tools;
pub mod tui;
pub mod util;

/// This build's own version (pi in Rust): the interactive header, exports, the man page.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The TypeScript pi release whose behaviour, files and protocols we follow. Clients read it:
/// `pi --version` prints it (pi-acp compares it with npm's latest for its update notice) and
/// extensions see it as pi's version. The built-in catalog comes from the same release.
pub const PI_VERSION: &str = "1.6.0";

/// What `pi --version` prints: [`PI_VERSION`] alone for programs (a pipe), the way the
/// TypeScript pi does; a person at a terminal also sees ours.
pub fn version_line(to_terminal: bool) -> String {
    if to_terminal {
        format!("{PI_VERSION} (pi in Rust {VERSION})")
    } else {
        PI_VERSION.to_string()
    }
}
