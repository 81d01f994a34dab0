//! Extensions: programs outside the binary that add tools, slash commands, CLI flags,
//! shortcuts, model providers, UI and event hooks, speaking the JSON-lines protocol of
//! `docs/extensions.md` over their stdin/stdout. `discovery` finds them (with project trust),
//! `load` starts them, `extension` is one of them, `host` is the session's door to them,
//! `connection` owns each child process and its threads and `process` one extension's share
//! of it, `calls` answers what they ask of pi (`call_kind` reads each call into a typed
//! `Call`; `requests` is what the session is asked, as data),
//! `services` lends them pi's tools and models (and streams their providers), `tool` turns
//! their tools into agent tools, `hooks` chains their answers, `node_bridge` runs pi's
//! TypeScript extensions through one Node.js process, and `ui` is the surface each mode
//! provides.

pub mod call_kind;
pub mod calls;
mod connection;
pub mod discovery;
pub mod exec;
pub mod extension;
pub mod hooks;
pub mod host;
mod load;
pub mod node_bridge;
pub mod process;
pub mod protocol;
pub mod requests;
pub mod services;
pub mod tool;
pub mod ui;

pub use discovery::{discover, DiscoveryOptions, ExtensionSource, Launch, Scope};
pub use extension::Extension;
pub use host::{
    stderr_sink, CommandInfo, ErrorSink, ExtensionError, ExtensionHost, HostOptions, Loaded,
    StderrSink,
};
pub use requests::{Action, ModeRequest, PendingAction, ReplyTo, SessionView};
pub use tool::ExtensionTool;
