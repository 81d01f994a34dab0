//! The sandbox as the tools meet it (see `util::sandbox`): the `write`/`edit` check, the line
//! that explains a failed confined command, and asking the user — in modes that have one — to
//! run that command once without the sandbox. Print and JSON modes never ask.

use std::path::Path;
use std::sync::{Arc, RwLock};

use crate::agent::tool::ToolOutput;
use crate::ai::{Abort, Content};
use crate::util::sandbox::{self, Explanation, Sandbox, Target};

/// Asks the user a yes/no question (title, message); `true` only for an explicit yes. Blocks
/// until answered, and answers no once `abort` is raised.
pub type AskFn = Arc<dyn Fn(&str, &str, &Abort) -> bool + Send + Sync>;

static ASKER: RwLock<Option<AskFn>> = RwLock::new(None);

/// How the mode asks "run this once without the sandbox?" (`None`: never asked).
pub fn set_asker(ask: Option<AskFn>) {
    *ASKER.write().unwrap_or_else(|p| p.into_inner()) = ask;
}

/// Under the sandbox, the file the `write`/`edit` tools change at `path` (absolute), opened
/// beneath its writable root (every write then goes through it, never by path), or an error
/// for the model; `None` without a sandbox.
pub fn open_for_write(path: &Path) -> Result<Option<Target>, String> {
    match sandbox::active() {
        Some(s) => s.open_for_write(path).map(Some),
        None => Ok(None),
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

/// A tool result (or error) of the unconfined run, with [`RAN_UNCONFINED`] after its text.
pub fn marked_unconfined(result: Result<ToolOutput, String>) -> Result<ToolOutput, String> {
    let note = |text: &str| format!("{text}\n\n{RAN_UNCONFINED}");
    match result {
        Ok(mut out) => {
            let last_text = out.content.iter_mut().rev().find_map(|c| match c {
                Content::Text(t) => Some(t),
                _ => None,
            });
            match last_text {
                Some(t) => t.text = note(&t.text),
                None => out.content.push(Content::text(RAN_UNCONFINED)),
            }
            Ok(out)
        }
        Err(e) => Err(note(&e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unconfined_run_is_marked_in_its_result() {
        let ok = marked_unconfined(Ok(ToolOutput::text("out"))).unwrap();
        assert_eq!(
            ok.content,
            vec![Content::text(format!("out\n\n{RAN_UNCONFINED}"))]
        );
        let err = marked_unconfined(Err("failed".into())).unwrap_err();
        assert_eq!(err, format!("failed\n\n{RAN_UNCONFINED}"));
    }

    #[test]
    fn without_a_mode_that_can_ask_nothing_is_allowed() {
        let why = Explanation {
            line: "Sandbox (read-only): …".into(),
            summary: "writing /x is blocked".into(),
        };
        // No asker is set in unit tests (print and JSON mode never set one).
        assert!(!allowed_once("touch /x", &why, &Abort::new()));
    }
}
