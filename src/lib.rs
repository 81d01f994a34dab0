//! pi: a minimal terminal coding agent. The library is the SDK; `main.rs` is the `pi` binary.
//!
//! Layers, lowest first (a module imports only from its own floor or below):
//! `util` (bottom-floor helpers: owned child processes, shutdown on signals, terminal text
//! cleaning) → `ai` (LLM wire APIs, models) and `resources` (config files, auth) → `agent`
//! (the run loop) → `harness` (retry, model selection, system prompt; mode-agnostic) → `modes`
//! (print, json) → `cli` (flags, help, dispatch).
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

/// The version we are a drop-in for; printed by `pi --version`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
