//! The one integration-test binary: drives the real `pi` binary against the in-process mock
//! LLM server in `tests/support`. Modules are grouped by area.

// Not part of the binary: std's sorts are fine here (clippy.toml keeps them out of `src/`).
#![allow(clippy::disallowed_methods)]

#[path = "../support/mod.rs"]
mod support;

mod acp;
mod acp_tools;
mod approvals;
mod auth;
mod bounds;
mod cli;
mod cli_flags;
mod cloud_providers;
mod codemode;
mod codemode_models;
mod compaction;
mod errors;
mod export;
mod ext_bridge;
mod ext_bridge_events;
mod ext_models;
mod extension_sessions;
mod extensions;
mod interactive;
mod interactive_extensions;
mod interactive_fullscreen;
mod interactive_trust;
mod json;
mod local_servers;
mod login;
mod mcp;
mod mcp_faults;
mod mcp_interactive;
mod mcp_oauth;
mod memory;
mod mock_selftest;
mod offline;
mod packages;
mod print;
mod processes;
mod provider_layer;
mod resources;
mod retry;
mod rewind;
mod rpc;
mod sandbox;
mod sandbox_child;
mod sandbox_config;
mod sandbox_writes;
mod session_safety;
mod sessions;
mod signals;
mod system_messages;
mod tools;
