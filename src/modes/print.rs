//! Print mode (`-p`) and JSON mode (`--mode json`): send the initial message, then each further
//! CLI message in turn, waiting for every run (retries included). Text mode prints only the
//! final assistant reply; JSON mode prints the session header and then every event as a line.

use std::io::Write;

use crate::agent::AgentEvent;
use crate::ai::{Content, Message, StopReason};
use crate::harness::extensions::UserInput;
use crate::harness::AgentSession;
use crate::session::json::to_js_string;

/// What to print and where.
pub struct PrintRun<'a> {
    pub json: bool,
    /// The session header line for JSON mode.
    pub header: serde_json::Value,
    /// The prompts as typed; extension commands and `input` hooks see them first.
    pub prompts: Vec<UserInput>,
    /// Skill and template expansion.
    pub expand: &'a dyn Fn(&str) -> String,
    pub stdout: &'a mut dyn Write,
    pub stderr: &'a mut dyn Write,
}

/// Runs the prompts and returns the exit code (pi's: text mode maps a failed or truncated
/// reply to 1; JSON mode exits 0 because the failure is in the event stream).
/// One event of a print run: JSON mode prints it as a line, text mode only reports session
/// write errors.
fn print_event(
    json: bool,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
    broken_pipe: &mut bool,
    ev: &AgentEvent,
) {
    if let (false, AgentEvent::SessionWriteError { error }) = (json, ev) {
        let _ = writeln!(stderr, "Warning: {error}");
    }
    if json && !*broken_pipe {
        // Numbers as JavaScript prints them (`0`, not `0.0`), so output matches pi's bytes.
        let line = ev.to_json_line();
        // A closed stdout (`| head`) stops output but never panics.
        *broken_pipe |= writeln!(stdout, "{line}")
            .and_then(|_| stdout.flush())
            .is_err();
    }
}

pub fn run(session: &mut AgentSession, r: PrintRun) -> i32 {
    let PrintRun {
        json,
        header,
        prompts,
        expand,
        stdout,
        stderr,
    } = r;
    let mut broken_pipe = false;
    if json {
        broken_pipe |= writeln!(stdout, "{}", to_js_string(&header))
            .and_then(|_| stdout.flush())
            .is_err();
    }
    // What extensions asked for on `session_start` (entries, messages, active tools) is in
    // place before the first prompt, as in pi.
    session.run_extension_work(&mut |ev| print_event(json, stdout, stderr, &mut broken_pipe, ev));
    for prompt in prompts {
        if session.abort.is_aborted() || broken_pipe {
            break;
        }
        let mut on_event =
            |ev: &AgentEvent| print_event(json, stdout, stderr, &mut broken_pipe, ev);
        session.submit(prompt, expand, &mut on_event);
    }
    if json {
        return 0;
    }
    match session.messages().last() {
        Some(Message::Assistant(a))
            if matches!(a.stop_reason, StopReason::Error | StopReason::Aborted) =>
        {
            let msg = a
                .error_message
                .clone()
                .unwrap_or_else(|| format!("Request {}", a.stop_reason.as_str()));
            let _ = writeln!(stderr, "{msg}");
            1
        }
        Some(Message::Assistant(a)) => {
            for c in &a.content {
                if let Content::Text(t) = c {
                    if writeln!(stdout, "{}", t.text).is_err() {
                        break;
                    }
                }
            }
            let _ = stdout.flush();
            // pi 1.x: a reply cut off by the output-token limit is printed, then reported.
            if a.stop_reason == StopReason::Length {
                let _ = writeln!(
                    stderr,
                    "Response was truncated: the model reached its output token limit."
                );
                return 1;
            }
            0
        }
        _ => 0,
    }
}
