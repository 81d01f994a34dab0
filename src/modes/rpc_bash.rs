//! RPC `bash` and `abort_bash`. A `bash` command runs on its own thread so the server keeps
//! reading stdin and `abort_bash` can stop it; its output streams as
//! `bash_execution_update {id, delta}` events (cleaned like the stored output, escape
//! sequences split across chunks included) and its response is written when it ends. Lines
//! other than `abort_bash` that arrive meanwhile wait (see the server's `must_wait`) and are
//! handled in order afterwards, so a client that pipes `bash` then `prompt` gets the command's
//! output into the prompt's context. The result becomes a `bashExecution` message (no message
//! event): the server has the session actor append it to the session and (unless
//! `excludeFromContext`) the agent's messages at once when idle, or when the running prompt
//! ends.

use std::path::PathBuf;
use std::sync::Arc;

use crossbeam_channel::Receiver;
use serde_json::{json, Map, Value};

use crate::ai::Abort;
use crate::extensions::ExtensionHost;
use crate::harness::user_bash::BashUpdate;
use crate::modes::rpc_out::{response, Out};
use crate::session::entry::BashExecutionMessage;
use crate::tools::bash::BashTool;
use crate::util::terminal_text::Cleaner;

struct BashRun {
    abort: Abort,
    /// Gets the run's end (`BashUpdate::Done`; the output streams as events instead).
    done: Receiver<BashUpdate>,
    id: Option<Value>,
    command: String,
    exclude_from_context: bool,
}

/// The server's bash state.
pub(super) struct BashState {
    run: Option<BashRun>,
    cwd: PathBuf,
}

impl BashState {
    pub(super) fn new(cwd: PathBuf) -> Self {
        BashState { run: None, cwd }
    }

    /// The channel the main loop waits on for the running command, if any.
    pub(super) fn done(&self) -> Option<Receiver<BashUpdate>> {
        self.run.as_ref().map(|r| r.done.clone())
    }

    pub(super) fn is_running(&self) -> bool {
        self.run.is_some()
    }
}

impl BashState {
    /// Starts `cmd` on its own thread, in the idle session's directory (`session_cwd`) or the
    /// last one known; its output streams to `out` as update events.
    pub(super) fn start(
        &mut self,
        cmd: &Value,
        id: Option<Value>,
        session_cwd: Option<PathBuf>,
        out: &Out,
        host: Option<Arc<ExtensionHost>>,
    ) {
        let command = cmd["command"].as_str().unwrap_or("").to_string();
        let exclude_from_context = cmd["excludeFromContext"].as_bool() == Some(true);
        if let Some(cwd) = session_cwd {
            self.cwd = cwd;
        }
        let cwd = self.cwd.clone();
        let abort = Abort::new();
        let (tx, done) = crossbeam_channel::bounded(1);
        let flag = abort.clone();
        let thread_out = out.clone();
        let (thread_id, thread_command) = (id.clone(), command.clone());
        let spawned = std::thread::Builder::new()
            .name("pi-rpc-bash".into())
            .spawn(move || {
                let (id, command) = (thread_id, thread_command);
                let cleaner = std::sync::Mutex::new(Cleaner::default());
                let on_text = |text: &str| {
                    let delta = cleaner.lock().unwrap_or_else(|p| p.into_inner()).push(text);
                    if !delta.is_empty() {
                        thread_out.line(&update_event(&id, &delta));
                    }
                };
                let by_ext = crate::harness::user_bash::by_extension(
                    host.as_deref(),
                    &command,
                    exclude_from_context,
                    &cwd,
                    &flag,
                );
                let run = match by_ext {
                    Some(run) => run,
                    None => BashTool::default().run_user(&command, &cwd, flag, &on_text),
                };
                let _ = tx.send(BashUpdate::Done(run));
            });
        match spawned {
            Ok(_) => {
                self.run = Some(BashRun {
                    abort,
                    done,
                    id,
                    command,
                    exclude_from_context,
                })
            }
            Err(e) => out.line(&response(&None, "bash", Err(e.to_string()))),
        }
    }

    pub(super) fn abort(&self) {
        if let Some(r) = &self.run {
            r.abort.abort();
        }
    }

    /// The running command ended: the response to write, and the message to record in the
    /// session (when it ran).
    pub(super) fn finished(
        &mut self,
        done: Result<BashUpdate, crossbeam_channel::RecvError>,
    ) -> Option<(Value, Option<BashExecutionMessage>)> {
        let BashRun {
            id,
            command,
            exclude_from_context,
            ..
        } = self.run.take()?;
        let Ok(BashUpdate::Done(run)) = done else {
            return None;
        };
        let mut message = None;
        let result = run.map(|mut run| {
            // Killed by pi's shutdown: cancelled, whether its end or the signal's notice came
            // first.
            run.cancelled |= crate::util::shutdown::signal().is_some();
            let msg = crate::harness::user_bash::bash_message(command, run, exclude_from_context);
            let data = bash_result(&msg);
            message = Some(msg);
            data
        });
        Some((response(&id, "bash", result.map(Some)), message))
    }
}

/// `{"type":"bash_execution_update","id"?,"delta"}` (no `id` when the command had none).
fn update_event(id: &Option<Value>, delta: &str) -> Value {
    match id {
        Some(id) => json!({"type": "bash_execution_update", "id": id, "delta": delta}),
        None => json!({"type": "bash_execution_update", "delta": delta}),
    }
}

/// pi's BashResult: `{output, exitCode?, cancelled, truncated, fullOutputPath?}`.
fn bash_result(m: &BashExecutionMessage) -> Value {
    let mut r = Map::new();
    r.insert("output".into(), m.output.clone().into());
    if let Some(Some(code)) = m.exit_code {
        r.insert("exitCode".into(), code.into());
    }
    r.insert("cancelled".into(), m.cancelled.into());
    r.insert("truncated".into(), m.truncated.into());
    if let Some(p) = &m.full_output_path {
        r.insert("fullOutputPath".into(), p.clone().into());
    }
    Value::Object(r)
}
