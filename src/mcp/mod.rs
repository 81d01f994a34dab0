//! pi 1.x's MCP client, in our thread model: servers from `mcp.json` (user, and trusted
//! project) and from extensions, reached over stdio or Streamable HTTP (with OAuth), their
//! tools offered to the model as `mcp__<server>__<tool>` by exposure, resources through three
//! resource tools, `tool_search` for tools not declared up front, and `pi mcp
//! add|remove|list|login|logout`.
//!
//! Floors, lowest first: `url`, `rpc` (JSON-RPC messages, errors, the transport interface) →
//! `stdio`, `http` (transports), `oauth` (sign-in and tokens) → `client` (the protocol) →
//! `credentials`, `connection` (one server's life) → `content` (results as pi content) →
//! `tools`, `resources`, `search`, `prompt`
//! (what the model sees) → `manager` (the session's servers) and `manager_ops` (their changes:
//! `/mcp`, `/reload`, extension registrations). Beside them: `config`, `oauth_config`, `edit`
//! (the files), `registry` (servers extensions register), `log` (`mcp.log`), and
//! `command_args` → `command`/`command_auth` (`pi mcp`).

pub mod client;
pub mod command;
mod command_args;
mod command_auth;
pub mod config;
pub mod connection;
pub mod content;
pub mod credentials;
pub mod edit;
pub mod http;
pub mod log;
pub mod manager;
pub mod manager_ops;
pub mod oauth;
pub mod oauth_config;
pub mod prompt;
pub mod registry;
pub mod resources;
pub mod rpc;
pub mod search;
pub mod stdio;
pub mod tools;
pub mod url;

pub use manager::{McpManager, McpOptions, Reporter};
pub use manager_ops::ServerView;
pub use registry::ExtensionServers;
