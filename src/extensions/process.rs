//! One extension child process and the three threads that serve it: a writer (so pi never
//! blocks on an extension that stopped reading), a reader that routes replies and tool updates
//! to whoever waits for them (and `cancel` lines to the call they stop) and hands everything
//! else to the host, and a stderr drain. A child that exits, or writes a line that is not a
//! protocol message, is marked dead: every waiter is told why at once, every call it started
//! (`exec`) is cancelled, and nothing is sent to it again. The process is a child pi owns
//! (`util::process`): stopped by `shutdown`, and killed whatever happens when pi exits.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver, Sender};
use serde_json::Value;

use crate::ai::Abort;
use crate::util::process::{self, OnShutdown, OwnedChild, SpawnOptions};

/// How often a waiter looks at the abort flag.
const ABORT_POLL: Duration = Duration::from_millis(25);
/// How long the reader waits for an exit status after the child closed its stdout.
const EXIT_STATUS_WAIT: Duration = Duration::from_millis(200);

/// What reaches a waiter for one request id.
#[derive(Debug)]
pub enum Incoming {
    /// The final `reply` line.
    Reply(Value),
    /// A `tool_update` line (tools only).
    Update(Value),
    /// The extension died; the reason.
    Dead(String),
}

/// Why a request got no result.
#[derive(Debug, Clone, PartialEq)]
pub enum RequestError {
    Timeout(Duration),
    Aborted,
    /// The extension is gone (exited, killed, or disabled for misbehaving).
    Dead(String),
    /// The extension answered with `"error"`.
    Failed(String),
}

impl std::fmt::Display for RequestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestError::Timeout(d) => write!(f, "did not answer within {} ms", d.as_millis()),
            RequestError::Aborted => write!(f, "aborted"),
            RequestError::Dead(reason) => write!(f, "{reason}"),
            RequestError::Failed(e) => write!(f, "{e}"),
        }
    }
}

/// What the reader and stderr threads report to the host.
pub enum ProcessEvent {
    /// A line that is not a reply: `register`, `call`, `error`.
    Message(Value),
    Stderr(String),
    /// The process died or was disabled; the reason (reported once).
    Died(String),
}

pub type EventSink = Arc<dyn Fn(ProcessEvent) + Send + Sync>;

struct Shared {
    pending: Mutex<HashMap<u64, Sender<Incoming>>>,
    dead: Mutex<Option<String>>,
    alive: AtomicBool,
    /// Set when pi shuts the extension down on purpose: its exit is then no error.
    closing: AtomicBool,
    child: OwnedChild,
    sink: EventSink,
    /// Unsolicited lines handed to `sink`, and how many of them the host has handled (under
    /// the lock `settled` waits on): a request's caller can wait for the calls an extension
    /// made before it replied.
    forwarded: AtomicU64,
    handled: Mutex<u64>,
    settled: Condvar,
    /// Calls the extension made that are still running (`exec`), by call id, so a `cancel`
    /// line or the extension's death can stop them.
    calls: Mutex<HashMap<String, Abort>>,
}

impl Shared {
    /// Marks the process dead (first reason wins), fails every waiter and kills the child.
    fn die(&self, reason: String) {
        {
            let mut dead = self.dead.lock().unwrap_or_else(|p| p.into_inner());
            if dead.is_some() {
                return;
            }
            *dead = Some(reason.clone());
        }
        self.alive.store(false, Ordering::SeqCst);
        let waiters: Vec<_> = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain()
            .collect();
        for (_, tx) in waiters {
            let _ = tx.send(Incoming::Dead(reason.clone()));
        }
        for (_, call) in self.calls.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            call.abort();
        }
        {
            // Under the lock `settle` checks `alive` with, so it cannot miss this.
            let _handled = self.handled.lock().unwrap_or_else(|p| p.into_inner());
            self.settled.notify_all();
        }
        self.child.kill();
        if !self.closing.load(Ordering::SeqCst) {
            (self.sink)(ProcessEvent::Died(reason));
        }
    }
}

/// A call the extension made, running until it finishes or is cancelled.
pub struct CallGuard {
    shared: Arc<Shared>,
    key: String,
    pub abort: Abort,
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.shared
            .calls
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.key);
    }
}

pub struct ExtensionProcess {
    /// The extension as the user named it (file or directory).
    pub path: PathBuf,
    writer: Mutex<Option<Sender<Value>>>,
    shared: Arc<Shared>,
    next_id: AtomicU64,
}

impl ExtensionProcess {
    /// Starts `argv` in `cwd` with piped stdio. The first line the child writes is delivered to
    /// `sink` like any other message; the host treats it as the registration.
    pub fn spawn(
        path: PathBuf,
        argv: &[String],
        cwd: &std::path::Path,
        sink: EventSink,
    ) -> Result<ExtensionProcess, String> {
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| "empty command line".to_string())?;
        let mut cmd = Command::new(program);
        cmd.args(args)
            .current_dir(cwd)
            .env(
                "PI_EXTENSION_PROTOCOL",
                super::protocol::PROTOCOL_VERSION.to_string(),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Its own process group, so its helpers go with it; stopped by `shutdown` (after
        // `session_shutdown`), not at the first signal.
        let options = SpawnOptions {
            on_shutdown: OnShutdown::OwnerStops,
            ..Default::default()
        };
        let mut child = process::spawn(&mut cmd, options)
            .map_err(|e| format!("could not start {program}: {e}"))?;
        let (stdin, stdout, stderr) =
            match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
                (Some(i), Some(o), Some(e)) => (i, o, e),
                _ => {
                    child.kill();
                    return Err("could not open the extension's pipes".into());
                }
            };
        let shared = Arc::new(Shared {
            pending: Mutex::new(HashMap::new()),
            dead: Mutex::new(None),
            alive: AtomicBool::new(true),
            closing: AtomicBool::new(false),
            child,
            sink,
            forwarded: AtomicU64::new(0),
            handled: Mutex::new(0),
            settled: Condvar::new(),
            calls: Mutex::new(HashMap::new()),
        });
        let (tx, rx) = unbounded::<Value>();
        spawn_writer(stdin, rx, Arc::clone(&shared))?;
        spawn_reader(stdout, Arc::clone(&shared))?;
        spawn_stderr(stderr, Arc::clone(&shared))?;
        Ok(ExtensionProcess {
            path,
            writer: Mutex::new(Some(tx)),
            shared,
            next_id: AtomicU64::new(1),
        })
    }

    pub fn is_alive(&self) -> bool {
        self.shared.alive.load(Ordering::SeqCst)
    }

    /// The host finished handling one unsolicited line (see [`ExtensionProcess::settle`]).
    pub fn mark_handled(&self) {
        let mut handled = self
            .shared
            .handled
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        *handled += 1;
        self.shared.settled.notify_all();
    }

    /// Waits (at most `limit`) until every unsolicited line read so far has been handled, so
    /// the calls an extension sent before replying to a command take effect before the
    /// command is over.
    pub fn settle(&self, limit: Duration) {
        let target = self.shared.forwarded.load(Ordering::SeqCst);
        let handled = self
            .shared
            .handled
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let _ = self
            .shared
            .settled
            .wait_timeout_while(handled, limit, |h| *h < target && self.is_alive());
    }

    /// Registers a call the extension made (`id` as it sent it; `None` for one it will not
    /// cancel) so its `cancel` line or its death raises the returned guard's abort flag.
    pub fn begin_call(&self, id: Option<&Value>) -> CallGuard {
        static UNNAMED: AtomicU64 = AtomicU64::new(0);
        let key = match id {
            Some(id) => id.to_string(),
            None => format!("#{}", UNNAMED.fetch_add(1, Ordering::SeqCst)),
        };
        let abort = Abort::new();
        if !self.is_alive() {
            abort.abort();
        }
        self.shared
            .calls
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key.clone(), abort.clone());
        CallGuard {
            shared: Arc::clone(&self.shared),
            key,
            abort,
        }
    }

    /// Why the process is dead, if it is.
    pub fn dead_reason(&self) -> Option<String> {
        self.shared
            .dead
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Queues a line for the writer thread; never blocks.
    pub fn send(&self, msg: Value) {
        if !self.is_alive() {
            return;
        }
        if let Some(tx) = self
            .writer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
        {
            let _ = tx.send(msg);
        }
    }

    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::SeqCst)
    }

    /// Registers a waiter for `id`; replies and updates for it arrive on the receiver.
    pub fn expect(&self, id: u64) -> Result<Receiver<Incoming>, RequestError> {
        let (tx, rx) = unbounded();
        let mut pending = self
            .shared
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        // Checked under the lock `die` drains, so a waiter is never left behind.
        if let Some(reason) = self.dead_reason() {
            return Err(RequestError::Dead(reason));
        }
        pending.insert(id, tx);
        Ok(rx)
    }

    fn forget(&self, id: u64) {
        self.shared
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id);
    }

    /// Sends `msg` (which carries `id`) and waits for its reply, passing updates to
    /// `on_update`. Gives up after `timeout` (if any) or when `abort` is raised; the extension
    /// then gets a `cancel` line for the id.
    pub fn request(
        &self,
        id: u64,
        msg: Value,
        timeout: Option<Duration>,
        abort: Option<&Abort>,
        on_update: &mut dyn FnMut(Value),
    ) -> Result<Value, RequestError> {
        let rx = self.expect(id)?;
        self.send(msg);
        let deadline = timeout.map(|t| Instant::now() + t);
        let outcome = loop {
            let wait = deadline
                .map(|d| d.saturating_duration_since(Instant::now()))
                .unwrap_or(ABORT_POLL)
                .min(ABORT_POLL);
            match rx.recv_timeout(wait) {
                Ok(Incoming::Reply(v)) => break reply_result(v),
                Ok(Incoming::Update(v)) => on_update(v),
                Ok(Incoming::Dead(reason)) => break Err(RequestError::Dead(reason)),
                Err(_) => {}
            }
            if abort.is_some_and(Abort::is_aborted) {
                self.send(serde_json::json!({"type": "cancel", "id": id}));
                break Err(RequestError::Aborted);
            }
            if let (Some(d), Some(t)) = (deadline, timeout) {
                if Instant::now() >= d {
                    break Err(RequestError::Timeout(t));
                }
            }
        };
        self.forget(id);
        outcome
    }

    /// Disables the extension: it is killed and every waiter learns `reason`.
    pub fn disable(&self, reason: String) {
        self.shared.die(reason);
    }

    /// Closes stdin, then escalates to TERM and KILL if the child does not exit within
    /// `grace` each time.
    pub fn shutdown(&self, grace: Duration) {
        self.shared.closing.store(true, Ordering::SeqCst);
        self.writer.lock().unwrap_or_else(|p| p.into_inner()).take();
        let child = &self.shared.child;
        if child.wait_timeout(grace).is_none() {
            child.terminate(grace);
            // SIGKILL goes out after `grace`; the exit follows at once.
            child.wait_timeout(grace + EXIT_STATUS_WAIT);
        }
        self.shared.alive.store(false, Ordering::SeqCst);
        let mut dead = self.shared.dead.lock().unwrap_or_else(|p| p.into_inner());
        dead.get_or_insert_with(|| "extension was shut down".into());
    }
}

impl Drop for ExtensionProcess {
    fn drop(&mut self) {
        // Whatever happened, no extension outlives the session that started it.
        self.shared.child.kill();
    }
}

fn reply_result(v: Value) -> Result<Value, RequestError> {
    match v.get("error") {
        Some(e) if !e.is_null() => Err(RequestError::Failed(
            e.as_str()
                .map(str::to_string)
                .unwrap_or_else(|| e.to_string()),
        )),
        _ => Ok(v.get("result").cloned().unwrap_or(Value::Null)),
    }
}

fn spawn_writer(
    mut stdin: std::process::ChildStdin,
    rx: Receiver<Value>,
    shared: Arc<Shared>,
) -> Result<(), String> {
    // Detached: it ends when the sender is dropped (shutdown) or the pipe breaks.
    std::thread::Builder::new()
        .name("pi-ext-writer".into())
        .spawn(move || {
            for msg in rx {
                let mut line = msg.to_string();
                line.push('\n');
                if stdin
                    .write_all(line.as_bytes())
                    .and_then(|_| stdin.flush())
                    .is_err()
                {
                    // The reader will see EOF and report the exit.
                    if !shared.alive.load(Ordering::SeqCst) {
                        return;
                    }
                }
            }
        })
        .map(|_| ())
        .map_err(|e| format!("could not start the writer thread: {e}"))
}

/// A protocol line from the extension, or why it is not one.
fn parse_line(line: &str) -> Result<Value, String> {
    let v: Value = serde_json::from_str(line).map_err(|_| {
        let shown: String = line.chars().take(120).collect();
        format!("wrote a line that is not JSON: {shown:?}")
    })?;
    match v.get("type").and_then(Value::as_str) {
        Some("reply" | "tool_update" | "register" | "call" | "cancel" | "error") => Ok(v),
        _ => Err(format!("wrote an unknown message: {}", {
            let s = v.to_string();
            s.chars().take(120).collect::<String>()
        })),
    }
}

fn spawn_reader(stdout: std::process::ChildStdout, shared: Arc<Shared>) -> Result<(), String> {
    // Detached: it ends at EOF, which the kill in `die`/`shutdown` guarantees.
    std::thread::Builder::new()
        .name("pi-ext-reader".into())
        .spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let text = String::from_utf8_lossy(&buf);
                let line = text.trim_end_matches(['\n', '\r']);
                if line.trim().is_empty() {
                    continue;
                }
                let msg = match parse_line(line) {
                    Ok(m) => m,
                    Err(reason) => {
                        shared.die(reason);
                        return;
                    }
                };
                let routed = match (msg["type"].as_str(), msg["id"].as_u64()) {
                    (Some("reply"), Some(id)) => {
                        let tx = shared
                            .pending
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .remove(&id);
                        // A late reply (after a timeout) has nobody waiting; that is fine.
                        if let Some(tx) = tx {
                            let _ = tx.send(Incoming::Reply(msg.clone()));
                        }
                        true
                    }
                    (Some("tool_update"), Some(id)) => {
                        let pending = shared.pending.lock().unwrap_or_else(|p| p.into_inner());
                        if let Some(tx) = pending.get(&id) {
                            let _ = tx.send(Incoming::Update(msg.clone()));
                        }
                        true
                    }
                    (Some("cancel"), _) => {
                        let key = msg.get("id").map(Value::to_string).unwrap_or_default();
                        let calls = shared.calls.lock().unwrap_or_else(|p| p.into_inner());
                        // A call that already finished has nothing left to stop.
                        if let Some(call) = calls.get(&key) {
                            call.abort();
                        }
                        true
                    }
                    _ => false,
                };
                if !routed {
                    shared.forwarded.fetch_add(1, Ordering::SeqCst);
                    (shared.sink)(ProcessEvent::Message(msg));
                }
            }
            let status = shared.child.wait_timeout(EXIT_STATUS_WAIT).flatten();
            shared.die(match status {
                Some(s) => format!("exited ({s})"),
                None => "closed its output".to_string(),
            });
        })
        .map(|_| ())
        .map_err(|e| format!("could not start the reader thread: {e}"))
}

fn spawn_stderr(stderr: std::process::ChildStderr, shared: Arc<Shared>) -> Result<(), String> {
    // Detached: it ends at EOF.
    std::thread::Builder::new()
        .name("pi-ext-stderr".into())
        .spawn(move || {
            let reader = BufReader::new(stderr);
            for line in reader.split(b'\n').map_while(Result::ok) {
                let text = String::from_utf8_lossy(&line).trim_end().to_string();
                if !text.is_empty() {
                    (shared.sink)(ProcessEvent::Stderr(text));
                }
            }
        })
        .map(|_| ())
        .map_err(|e| format!("could not start the stderr thread: {e}"))
}
