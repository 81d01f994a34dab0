//! RPC `bash` and `abort_bash`. A `bash` command runs on its own thread so the server keeps
//! reading stdin and `abort_bash` can stop it; its output streams as
//! `bash_execution_update {id, delta}` events (cleaned like the stored output, escape
//! sequences split across chunks included) and its response is written when it ends. Lines
//! other than `abort_bash` that arrive meanwhile wait (see `Server::must_wait`) and are
//! handled in order afterwards, so a client that pipes `bash` then `prompt` gets the command's
//! output into the prompt's context. The result becomes a `bashExecution` message (no message
//! event): appended to the session and (unless `excludeFromContext`) the agent's messages at
//! once when idle, or when the running prompt ends.

use std::path::PathBuf;

use crossbeam_channel::Receiver;
use serde_json::{json, Map, Value};

use super::commands::response;
use super::Server;
use crate::ai::Abort;
use crate::harness::user_bash::record;
use crate::session::entry::BashExecutionMessage;
use crate::tools::bash::{BashTool, UserRun};
use crate::util::terminal_text::Cleaner;

/// What a finished `bash` thread hands back.
pub(super) struct BashDone {
    id: Option<Value>,
    command: String,
    exclude_from_context: bool,
    run: Result<UserRun, String>,
}

struct BashRun {
    abort: Abort,
    done: Receiver<BashDone>,
}

/// The server's bash state.
pub(super) struct BashState {
    run: Option<BashRun>,
    /// Results that arrived while a prompt held the session.
    pending: Vec<BashExecutionMessage>,
    cwd: PathBuf,
}

impl BashState {
    pub(super) fn new(cwd: PathBuf) -> Self {
        BashState {
            run: None,
            pending: Vec::new(),
            cwd,
        }
    }

    /// The channel the main loop waits on for the running command, if any.
    pub(super) fn done(&self) -> Option<Receiver<BashDone>> {
        self.run.as_ref().map(|r| r.done.clone())
    }

    pub(super) fn is_running(&self) -> bool {
        self.run.is_some()
    }
}

impl Server {
    pub(super) fn start_bash(&mut self, cmd: &Value, id: Option<Value>) {
        let command = cmd["command"].as_str().unwrap_or("").to_string();
        let exclude_from_context = cmd["excludeFromContext"].as_bool() == Some(true);
        if let Some(s) = &self.idle {
            self.bash.cwd = s.agent().cwd.clone();
        }
        let cwd = self.bash.cwd.clone();
        let abort = Abort::new();
        let (tx, done) = crossbeam_channel::bounded(1);
        let flag = abort.clone();
        let out = self.out.clone();
        let host = self.extensions.clone();
        let spawned = std::thread::Builder::new()
            .name("pi-rpc-bash".into())
            .spawn(move || {
                let cleaner = std::sync::Mutex::new(Cleaner::default());
                let on_text = |text: &str| {
                    let delta = cleaner.lock().unwrap_or_else(|p| p.into_inner()).push(text);
                    if !delta.is_empty() {
                        out.line(&update_event(&id, &delta));
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
                let _ = tx.send(BashDone {
                    id,
                    command,
                    exclude_from_context,
                    run,
                });
            });
        match spawned {
            Ok(_) => self.bash.run = Some(BashRun { abort, done }),
            Err(e) => self.out.line(&response(&None, "bash", Err(e.to_string()))),
        }
    }

    pub(super) fn abort_bash(&mut self) {
        if let Some(r) = &self.bash.run {
            r.abort.abort();
        }
    }

    /// The running command ended: record it, answer, then handle the lines that waited.
    pub(super) fn bash_done(&mut self, done: Result<BashDone, crossbeam_channel::RecvError>) {
        self.bash.run = None;
        if let Ok(BashDone {
            id,
            command,
            exclude_from_context,
            run,
        }) = done
        {
            let result = run.map(|run| {
                let msg =
                    crate::harness::user_bash::bash_message(command, run, exclude_from_context);
                let data = bash_result(&msg);
                self.bash.pending.push(msg);
                self.flush_bash();
                data
            });
            self.out.line(&response(&id, "bash", result.map(Some)));
        }
        self.handle_waiting();
    }

    /// At stdin EOF: let running commands (and the lines behind them) finish.
    pub(super) fn finish_bash(&mut self) {
        while let Some(done) = self.bash.done() {
            let r = done.recv();
            self.bash_done(r);
        }
    }

    /// Moves recorded results into the session and the agent's context, once idle.
    pub(super) fn flush_bash(&mut self) {
        let Some(s) = self.idle.as_mut() else {
            return;
        };
        for msg in self.bash.pending.drain(..) {
            record(s, msg);
        }
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
