//! Commands in the editor's own terminal. When pi runs inside an editor that offers terminals
//! (ACP's `clientCapabilities.terminal`: `terminal/create`, `terminal/wait_for_exit`, …), the
//! model's `bash` commands run there, so the editor shows each as a live terminal in the tool
//! call; without one, and always under a sandbox (whose confinement applies only to the
//! commands pi starts itself), pi runs them.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use crate::ai::Abort;

/// One command for the editor to run.
#[derive(Debug, Clone, PartialEq)]
pub struct TerminalCommand {
    /// The shell, run with `args` (`-c`, the command line).
    pub program: String,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    /// Variables set on top of the editor's environment.
    pub env: Vec<(String, String)>,
    /// The most output the editor keeps (its tail).
    pub output_limit: u64,
}

/// How the command ended.
#[derive(Debug, Clone, PartialEq)]
pub enum TerminalExit {
    Exited {
        code: Option<u32>,
        signal: Option<String>,
    },
    /// The run was cancelled; the command was killed.
    Aborted,
    /// The tool's timeout passed; the command was killed.
    TimedOut,
}

/// What a command in the editor's terminal left.
#[derive(Debug, Clone, PartialEq)]
pub struct TerminalRun {
    pub terminal_id: String,
    pub output: String,
    /// The editor dropped the output's start (beyond `output_limit`).
    pub truncated: bool,
    pub exit: TerminalExit,
}

/// An editor that runs commands in its terminals.
pub trait EditorTerminal: Send + Sync {
    /// Runs `command` to its end (or until `abort` or `timeout`, then kills it) and releases the
    /// terminal; `started` hears the terminal's id as soon as it exists.
    fn run(
        &self,
        command: &TerminalCommand,
        abort: &Abort,
        timeout: Option<Duration>,
        started: &mut dyn FnMut(&str),
    ) -> Result<TerminalRun, String>;
}

static EDITOR: RwLock<Option<Arc<dyn EditorTerminal>>> = RwLock::new(None);

/// Installs (or removes) the editor `bash` runs its commands in.
pub fn set(editor: Option<Arc<dyn EditorTerminal>>) {
    *EDITOR.write().unwrap_or_else(|p| p.into_inner()) = editor;
}

/// The editor `bash` runs in, unless a sandbox confines commands.
pub fn current() -> Option<Arc<dyn EditorTerminal>> {
    if crate::util::sandbox::active().is_some() {
        return None;
    }
    EDITOR.read().unwrap_or_else(|p| p.into_inner()).clone()
}
