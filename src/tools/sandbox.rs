//! The sandbox as the tools meet it (see `util::sandbox`): the `write`/`edit` check, the line
//! that explains a failed confined command, and asking the user — in modes that have one — to
//! run that command once without the sandbox. Print and JSON modes never ask.

use std::path::Path;
use std::sync::{Arc, RwLock};

use crate::ai::Abort;
use crate::util::sandbox::{self, Explanation, Sandbox};

/// Asks the user a yes/no question (title, message); `true` only for an explicit yes. Blocks
/// until answered, and answers no once `abort` is raised.
pub type AskFn = Arc<dyn Fn(&str, &str, &Abort) -> bool + Send + Sync>;

static ASKER: RwLock<Option<AskFn>> = RwLock::new(None);

/// How the mode asks "run this once without the sandbox?" (`None`: never asked).
pub fn set_asker(ask: Option<AskFn>) {
    *ASKER.write().unwrap_or_else(|p| p.into_inner()) = ask;
}

/// An error for the model when the sandbox does not let the tools write `path` (absolute).
pub fn check_write(path: &Path) -> Result<(), String> {
    match sandbox::active() {
        Some(s) => s.check_write(path),
        None => Ok(()),
    }
}

/// What the sandbox refused that made `command` fail, judged from its `output`.
pub fn explain(sandbox: Option<&Arc<Sandbox>>, command: &str, output: &str) -> Option<Explanation> {
    sandbox?.explain_failure(command, output)
}

/// Whether the user allows `command`, refused by the sandbox, to run once without it.
pub fn allowed_once(command: &str, why: &Explanation, abort: &Abort) -> bool {
    let ask = ASKER.read().unwrap_or_else(|p| p.into_inner()).clone();
    let Some(ask) = ask else {
        return false;
    };
    let shown: String = command.chars().take(200).collect();
    let more = if shown.len() < command.len() {
        "…"
    } else {
        ""
    };
    let message = format!(
        "This command failed in the sandbox ({}):\n\n  {shown}{more}\n\nRun it once without the sandbox?",
        why.summary
    );
    ask("Sandbox", &message, abort)
}

/// The note a result gets when the command ran again without the sandbox.
pub const RAN_UNCONFINED: &str = "(Ran again without the sandbox: the user allowed it once.)";
