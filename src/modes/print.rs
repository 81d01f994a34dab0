//! Print mode (`-p`) and JSON mode (`--mode json`): send the initial message, then each further
//! CLI message in turn, waiting for every run (retries included). Text mode prints only the
//! final assistant reply; JSON mode prints the session header and then every event as a line.
//!
//! The session runs on its actor (`harness::actor`): this mode sends it one [`Op`] per prompt
//! and renders the events its listener hears.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::agent::AgentEvent;
use crate::ai::{Content, Message, StopReason};
use crate::harness::actor;
use crate::harness::extensions::UserInput;
use crate::harness::op::{ActorEnv, ActorOptions, Expand, Op, SessionEvent, WhenBusy};
use crate::harness::AgentSession;
use crate::session::json::to_js_string;

/// A writer the listener (on the session's thread) and this mode share.
pub type SharedOut = Arc<Mutex<Box<dyn Write + Send>>>;

/// What to print and where.
pub struct PrintRun {
    pub json: bool,
    /// The session header line for JSON mode.
    pub header: serde_json::Value,
    /// The prompts as typed; extension commands and `input` hooks see them first.
    pub prompts: Vec<UserInput>,
    /// Skill and template expansion.
    pub expand: Expand,
    pub stdout: SharedOut,
    pub stderr: SharedOut,
}

fn lock(out: &SharedOut) -> std::sync::MutexGuard<'_, Box<dyn Write + Send>> {
    out.lock().unwrap_or_else(|p| p.into_inner())
}

/// What the listener reports back to the loop that sends the prompts.
#[derive(Default)]
struct Progress {
    /// stdout is closed (`| head`): no more output, no more prompts.
    broken_pipe: AtomicBool,
    /// A run was aborted: the prompts after it are not sent.
    aborted: AtomicBool,
}

/// One event of a print run: JSON mode prints it as a line, text mode only reports session
/// write errors.
fn print_event(
    json: bool,
    stdout: &SharedOut,
    stderr: &SharedOut,
    progress: &Progress,
    ev: &AgentEvent,
) {
    if let (false, AgentEvent::SessionWriteError { error }) = (json, ev) {
        let _ = writeln!(lock(stderr), "Warning: {error}");
    }
    if let AgentEvent::AgentSettled { aborted: true } = ev {
        progress.aborted.store(true, Ordering::SeqCst);
    }
    if json && !progress.broken_pipe.load(Ordering::SeqCst) {
        // Numbers as JavaScript prints them (`0`, not `0.0`), so output matches pi's bytes.
        let line = ev.to_json_line();
        let mut out = lock(stdout);
        // A closed stdout (`| head`) stops output but never panics.
        if writeln!(out, "{line}").and_then(|_| out.flush()).is_err() {
            progress.broken_pipe.store(true, Ordering::SeqCst);
        }
    }
}

/// Runs the prompts on the session's actor and returns the exit code (pi's: text mode maps a
/// failed or truncated reply to 1; JSON mode exits 0 because the failure is in the event
/// stream), with the session back for the caller's last words.
pub fn run(session: AgentSession, r: PrintRun) -> Result<(i32, AgentSession), String> {
    let PrintRun {
        json,
        header,
        prompts,
        expand,
        stdout,
        stderr,
    } = r;
    let progress = Arc::new(Progress::default());
    if json {
        let mut out = lock(&stdout);
        if writeln!(out, "{}", to_js_string(&header))
            .and_then(|_| out.flush())
            .is_err()
        {
            progress.broken_pipe.store(true, Ordering::SeqCst);
        }
    }
    let session_dir = std::path::PathBuf::new();
    let listener = {
        let (stdout, stderr, progress) = (stdout.clone(), stderr.clone(), progress.clone());
        Box::new(move |ev: SessionEvent<'_>| {
            if let SessionEvent::Agent(ev) = ev {
                print_event(json, &stdout, &stderr, &progress, ev);
            }
        })
    };
    let (handle, actor) = actor::spawn(
        session,
        ActorEnv::fixed(session_dir),
        ActorOptions::default(),
        listener,
    )?;
    // What extensions asked for on `session_start` (entries, messages, active tools) is in
    // place before the first prompt, as in pi.
    handle.send(Op::RunExtensionWork);
    for prompt in prompts {
        handle.barrier();
        let stop = progress.aborted.load(Ordering::SeqCst)
            || progress.broken_pipe.load(Ordering::SeqCst)
            || handle.is_aborted()
            || crate::util::shutdown::signal().is_some();
        if stop {
            break;
        }
        handle.prompt(prompt, expand.clone(), WhenBusy::Wait, None);
    }
    handle.shutdown();
    drop(handle);
    let session = actor.join()?;
    let code = if json {
        0
    } else {
        final_reply(&session, &mut **lock(&stdout), &mut **lock(&stderr))
    };
    let _ = lock(&stdout).flush();
    Ok((code, session))
}

/// Text mode's output: the last reply's text, or its error on stderr.
fn final_reply(session: &AgentSession, stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
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
