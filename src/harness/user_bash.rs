//! Commands the user runs themselves (`!cmd`/`!!cmd` in interactive mode, `bash` over RPC):
//! turning a finished run into pi's `bashExecution` message — its output cleaned by
//! `util::terminal_text` (escapes, control and invisible characters removed) — and recording
//! it in the session and the agent's context. Extensions see the command first (`user_bash`)
//! and may run it elsewhere or answer for it.

use crate::ai::{now_ms, Extra};
use crate::session::entry::{AgentMessage, BashExecutionMessage};
use crate::session::tree::to_llm_messages;
use crate::tools::bash::UserRun;
use crate::tools::truncate::{truncate_tail, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES};

use super::AgentSession;

/// What the thread running a user's command sends back: the output so far (interactive mode
/// shows it; RPC streams it as events instead), then the run's end.
pub(crate) enum BashUpdate {
    /// The output so far.
    Output(String),
    Done(Result<UserRun, String>),
}

/// Asks extensions' `user_bash` handlers about a command the user typed: `None` to run it
/// here, else the run an extension made of it (or why the command is not run: a handler
/// failed, and the host reported it).
pub(crate) fn by_extension(
    host: Option<&crate::extensions::ExtensionHost>,
    command: &str,
    exclude_from_context: bool,
    cwd: &std::path::Path,
    abort: &crate::ai::Abort,
) -> Option<Result<UserRun, String>> {
    let host = host.filter(|h| h.has_subscribers("user_bash"))?;
    match host.user_bash(command, exclude_from_context, &cwd.to_string_lossy(), abort) {
        Ok(None) => None,
        Ok(Some(r)) => Some(Ok(UserRun {
            tail: r["output"].as_str().unwrap_or_default().to_string(),
            dropped: r["truncated"] == true,
            exit_code: r["exitCode"].as_i64().map(|c| c as i32),
            cancelled: r["cancelled"] == true,
            full_output_path: r["fullOutputPath"].as_str().map(Into::into),
        })),
        Err(e) => Some(Err(e)),
    }
}

/// pi's `bashExecution` message for a finished run. `exclude_from_context` is `!!`.
pub(crate) fn bash_message(
    command: String,
    run: UserRun,
    exclude_from_context: bool,
) -> BashExecutionMessage {
    let clean = crate::util::terminal_text::clean(&run.tail);
    let t = truncate_tail(&clean, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
    let truncated = t.truncated || run.dropped;
    BashExecutionMessage {
        command,
        output: if truncated { t.content } else { clean },
        exit_code: if run.cancelled {
            None
        } else {
            run.exit_code.map(|c| Some(i64::from(c)))
        },
        cancelled: run.cancelled,
        truncated,
        full_output_path: run
            .full_output_path
            .map(|p| p.to_string_lossy().into_owned()),
        timestamp: now_ms(),
        exclude_from_context: exclude_from_context.then_some(true),
        extra: Extra::new(),
    }
}

/// Appends the message to the session and (unless excluded) the agent's context.
pub fn record(s: &mut AgentSession, msg: BashExecutionMessage) {
    let message = AgentMessage::BashExecution(msg);
    s.agent_mut()
        .messages
        .extend(to_llm_messages(std::slice::from_ref(&message)));
    if let Err(e) = s.session.append_message(message) {
        s.write_errors.push(e.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::bash_message;
    use crate::tools::bash::UserRun;

    #[test]
    fn stored_output_has_no_escapes_or_invisible_characters() {
        let run = UserRun {
            tail: "\u{1b}[31mred\u{1b}[0m\r\nuser\u{202E}nimda\u{200B}\n".into(),
            dropped: false,
            exit_code: Some(0),
            cancelled: false,
            full_output_path: None,
        };
        let msg = bash_message("ls".into(), run, false);
        assert_eq!(msg.output, "red\nusernimda\n");
        assert!(!msg.truncated);
    }
}
