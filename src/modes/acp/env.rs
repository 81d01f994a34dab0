//! What `--mode acp` is given by the command line layer: how to open a pi session for an
//! editor's folder (new or from a file), how to change the sandbox, and who is signed in.
//! The server never builds a session itself, so it shares pi's start-up with every other mode.

use std::path::PathBuf;

use serde_json::Value;

use crate::ai::Model;
use crate::harness::AgentSession;
use crate::resources::loader::Resources;
use crate::util::sandbox::Mode as SandboxMode;

pub use crate::harness::op::CredentialsFn;
/// Installs a sandbox mode for the commands started from now on, in a folder.
pub type SetSandboxFn = Box<dyn FnMut(&std::path::Path, SandboxMode) -> Result<(), String>>;

/// A session to open for a client.
pub struct OpenRequest {
    /// The editor's folder (absolute).
    pub cwd: PathBuf,
    /// An existing session file to resume (`session/load`); `None` for a new session.
    pub file: Option<PathBuf>,
    /// The client's MCP servers, each as a name and an `mcp.json` entry.
    pub mcp_servers: Vec<(String, Value)>,
    /// The sandbox the session starts in (the mode the client picked last, if any).
    pub sandbox: Option<SandboxMode>,
}

/// A session opened for a client, with what changing its model needs.
pub struct Opened {
    pub session: AgentSession,
    pub resources: Resources,
    /// False when the session started on a placeholder model (no provider is signed in).
    pub has_model: bool,
    pub available_models: Box<dyn Fn() -> Vec<Model> + Send>,
    pub credentials: CredentialsFn,
    /// The sandbox mode in force.
    pub sandbox: SandboxMode,
    /// Problems the client's MCP servers had (an invalid entry), for the editor to show.
    pub warnings: Vec<String>,
}

/// A provider one can sign in to with `pi auth login`.
pub struct Login {
    pub provider: String,
    pub name: String,
}

pub struct AcpEnv {
    pub open: Box<dyn FnMut(OpenRequest) -> Result<Opened, String>>,
    /// Installs another sandbox mode for the commands pi starts from now on.
    pub set_sandbox: SetSandboxFn,
    /// `~/.pi/agent`: where session files are listed from.
    pub agent_dir: PathBuf,
    pub logins: Vec<Login>,
    /// Whether a provider has credentials (a stored login, or a key in the environment).
    pub signed_in: Box<dyn Fn(&str) -> bool>,
}
