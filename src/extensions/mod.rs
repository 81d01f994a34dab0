//! Extensions: programs outside the binary that add tools, slash commands, CLI flags,
//! shortcuts and event hooks, speaking the JSON-lines protocol of `docs/extensions.md` over
//! their stdin/stdout. `discovery` finds them (with project trust), `host` starts them and is
//! the session's door to them, `process` owns each child and its threads, `calls` answers what
//! they ask of pi, `tool` turns their tools into agent tools, `node_bridge` runs pi's
//! TypeScript extensions through Node.js, and `ui` is the dialog surface each mode provides.

pub mod calls;
pub mod discovery;
pub mod exec;
pub mod hooks;
pub mod host;
pub mod node_bridge;
pub mod process;
pub mod protocol;
pub mod tool;
pub mod ui;

pub use calls::{Action, PendingAction, ReplyTo, SessionView};
pub use discovery::{discover, DiscoveryOptions, ExtensionSource, Launch, Scope};
pub use host::{
    stderr_sink, CommandInfo, ErrorSink, Extension, ExtensionError, ExtensionHost, HostOptions,
    Loaded, StderrSink,
};
pub use tool::ExtensionTool;
