//! One extension child process and the three threads that serve it: a writer (so pi never
//! blocks on a child that stopped reading), a reader that routes replies and partial results to
//! whoever waits for them (and `cancel` lines to the call they stop) and hands everything else
//! to the extension it belongs to, and a stderr drain.
//!
//! A process carries one extension, or — the Node.js bridge — several, each line then tagged
//! with the extension's `ext` number (a [`Channel`]). A child that exits, or writes a line that
//! is not a protocol message, is dead for all its extensions: every waiter is told why at once,
//! every call they started (`exec`) is cancelled, and nothing is sent to it again. The child is
//! one pi owns (`util::process`): stopped by `shutdown`, killed whatever happens when pi exits.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::Duration;

use crossbeam_channel::{unbounded, Receiver, Sender};
use serde_json::Value;

use crate::ai::Abort;
use crate::util::process::{self, OnShutdown, OwnedChild, SpawnOptions};

/// How long the reader waits for an exit status after the child closed its stdout.
pub(super) const EXIT_STATUS_WAIT: Duration = Duration::from_millis(200);

/// What reaches a waiter for one request id.
#[derive(Debug)]
pub enum Incoming {
    /// The final `reply` line.
    Reply(Value),
    /// A partial result: `tool_update` (tools) or `stream_event` (provider streams).
    Update(Value),
    /// The extension died; the reason.
    Dead(String),
}

/// What the reader and stderr threads report about one extension.
pub enum ProcessEvent {
    /// A line that is not a reply: `register`, `call`, `error`.
    Message(Value),
    Stderr(String),
    /// The extension died or was disabled; the reason (reported once).
    Died(String),
}

pub type EventSink = Arc<dyn Fn(ProcessEvent) + Send + Sync>;

struct Waiter {
    channel: Option<u64>,
    tx: Sender<Incoming>,
}

/// One extension's share of a process.
pub(super) struct Channel {
    /// Its `ext` number on a shared process; `None` for a process of its own.
    pub ext: Option<u64>,
    sink: EventSink,
    dead: Mutex<Option<String>>,
    alive: AtomicBool,
    /// Set when pi shuts the extension down on purpose: its end is then no error.
    closing: AtomicBool,
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

impl Channel {
    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst)
    }

    pub fn dead_reason(&self) -> Option<String> {
        self.dead.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn is_closing(&self) -> bool {
        self.closing.load(Ordering::SeqCst)
    }

    /// Marks the extension dead (first reason wins), cancels its calls and reports it.
    fn die(&self, reason: &str) -> bool {
        {
            let mut dead = self.dead.lock().unwrap_or_else(|p| p.into_inner());
            if dead.is_some() {
                return false;
            }
            *dead = Some(reason.to_string());
        }
        self.alive.store(false, Ordering::SeqCst);
        for call in self
            .calls
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
        {
            call.abort();
        }
        {
            // Under the lock `settle` checks `alive` with, so it cannot miss this.
            let _handled = self.handled.lock().unwrap_or_else(|p| p.into_inner());
            self.settled.notify_all();
        }
        if !self.is_closing() {
            (self.sink)(ProcessEvent::Died(reason.to_string()));
        }
        true
    }

    /// Marks the extension as shut down on purpose.
    pub fn close(&self) {
        self.closing.store(true, Ordering::SeqCst);
        self.alive.store(false, Ordering::SeqCst);
        let mut dead = self.dead.lock().unwrap_or_else(|p| p.into_inner());
        dead.get_or_insert_with(|| "extension was shut down".into());
    }

    pub fn mark_handled(&self) {
        let mut handled = self.handled.lock().unwrap_or_else(|p| p.into_inner());
        *handled += 1;
        self.settled.notify_all();
    }

    pub fn settle(&self, limit: Duration) {
        let target = self.forwarded.load(Ordering::SeqCst);
        let handled = self.handled.lock().unwrap_or_else(|p| p.into_inner());
        let _ = self
            .settled
            .wait_timeout_while(handled, limit, |h| *h < target && self.is_alive());
    }

    /// Registers a call so its `cancel` line or the extension's death raises `abort`.
    pub fn track_call(&self, key: String, abort: Abort) {
        if !self.is_alive() {
            abort.abort();
        }
        self.calls
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, abort);
    }

    pub fn untrack_call(&self, key: &str) {
        self.calls
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key);
    }
}

/// One child process and what is routed through it.
pub(super) struct Connection {
    child: OwnedChild,
    writer: Mutex<Option<Sender<Value>>>,
    pending: Mutex<HashMap<u64, Waiter>>,
    /// By `ext` number (`None`: the one extension of a process of its own); ordered so that an
    /// untagged stderr line of a shared process goes to its first extension.
    channels: RwLock<BTreeMap<Option<u64>, Arc<Channel>>>,
    dead: Mutex<Option<String>>,
    alive: AtomicBool,
    closing: AtomicBool,
    next_id: AtomicU64,
    /// Whether lines carry `ext` (a shared process).
    pub multiplexed: bool,
    shut_down: Mutex<bool>,
}

impl Connection {
    /// Starts `argv` in `cwd` with piped stdio, in its own process group.
    pub fn spawn(
        argv: &[String],
        cwd: &std::path::Path,
        protocol: u64,
        multiplexed: bool,
    ) -> Result<Arc<Connection>, String> {
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| "empty command line".to_string())?;
        let mut cmd = Command::new(program);
        cmd.args(args)
            .current_dir(cwd)
            .env("PI_EXTENSION_PROTOCOL", protocol.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Stopped by `shutdown` (after `session_shutdown`), not at the first signal. Its own
        // session: an extension process has no controlling terminal (issue 29).
        let options = SpawnOptions {
            new_session: true,
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
        let (tx, rx) = unbounded::<Value>();
        let conn = Arc::new(Connection {
            child,
            writer: Mutex::new(Some(tx)),
            pending: Mutex::new(HashMap::new()),
            channels: RwLock::new(BTreeMap::new()),
            dead: Mutex::new(None),
            alive: AtomicBool::new(true),
            closing: AtomicBool::new(false),
            next_id: AtomicU64::new(1),
            multiplexed,
            shut_down: Mutex::new(false),
        });
        let thread =
            |what: &str, e: std::io::Error| format!("could not start the {what} thread: {e}");
        spawn_writer(stdin, rx, Arc::clone(&conn)).map_err(|e| thread("writer", e))?;
        spawn_reader(stdout, Arc::clone(&conn)).map_err(|e| thread("reader", e))?;
        spawn_stderr(stderr, Arc::clone(&conn)).map_err(|e| thread("stderr", e))?;
        Ok(conn)
    }

    /// Adds an extension to this process.
    pub fn add_channel(&self, ext: Option<u64>, sink: EventSink) -> Arc<Channel> {
        let channel = Arc::new(Channel {
            ext,
            sink,
            dead: Mutex::new(None),
            alive: AtomicBool::new(true),
            closing: AtomicBool::new(false),
            forwarded: AtomicU64::new(0),
            handled: Mutex::new(0),
            settled: Condvar::new(),
            calls: Mutex::new(HashMap::new()),
        });
        if let Some(reason) = self.dead_reason() {
            channel.die(&reason);
        }
        self.channels
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(ext, Arc::clone(&channel));
        channel
    }

    fn channel(&self, ext: Option<u64>) -> Option<Arc<Channel>> {
        let channels = self.channels.read().unwrap_or_else(|p| p.into_inner());
        match ext {
            Some(_) => channels.get(&ext).cloned(),
            None => channels.values().next().cloned(),
        }
    }

    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst)
    }

    pub fn dead_reason(&self) -> Option<String> {
        self.dead.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::SeqCst)
    }

    /// Queues a line for the writer thread; never blocks.
    pub fn write(&self, msg: Value) {
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

    /// Registers a waiter for `id` on behalf of `channel`.
    pub fn expect(&self, channel: &Channel, id: u64) -> Result<Receiver<Incoming>, String> {
        let (tx, rx) = unbounded();
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        // Checked under the lock `die` drains, so a waiter is never left behind.
        if let Some(reason) = channel.dead_reason().or_else(|| self.dead_reason()) {
            return Err(reason);
        }
        pending.insert(
            id,
            Waiter {
                channel: channel.ext,
                tx,
            },
        );
        Ok(rx)
    }

    pub fn forget(&self, id: u64) {
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id);
    }

    /// Ends one extension of a shared process (its waiters learn `reason`); the process and its
    /// other extensions carry on. The bridge is told to drop it.
    pub fn disable_channel(&self, channel: &Channel, reason: &str) {
        if !self.multiplexed {
            return self.die(reason);
        }
        self.fail_waiters(Some(channel.ext), reason);
        if channel.die(reason) {
            if let Some(ext) = channel.ext {
                self.write(serde_json::json!({"type": "disable", "ext": ext}));
            }
        }
    }

    fn fail_waiters(&self, only: Option<Option<u64>>, reason: &str) {
        let waiters: Vec<Waiter> = {
            let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            let ids: Vec<u64> = pending
                .iter()
                .filter(|(_, w)| only.is_none_or(|c| w.channel == c))
                .map(|(id, _)| *id)
                .collect();
            ids.into_iter()
                .filter_map(|id| pending.remove(&id))
                .collect()
        };
        for w in waiters {
            let _ = w.tx.send(Incoming::Dead(reason.to_string()));
        }
    }

    /// Marks the process dead (first reason wins), fails every waiter and kills the child.
    pub fn die(&self, reason: &str) {
        {
            let mut dead = self.dead.lock().unwrap_or_else(|p| p.into_inner());
            if dead.is_some() {
                return;
            }
            *dead = Some(reason.to_string());
        }
        self.alive.store(false, Ordering::SeqCst);
        self.fail_waiters(None, reason);
        let channels: Vec<Arc<Channel>> = self
            .channels
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        for c in channels {
            if self.closing.load(Ordering::SeqCst) {
                c.close();
            }
            c.die(reason);
        }
        self.child.kill();
    }

    /// Whether every extension of the process has been shut down.
    pub fn all_closed(&self) -> bool {
        self.channels
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .all(|c| c.is_closing())
    }

    /// Closes stdin, then escalates to TERM and KILL if the child does not exit within
    /// `grace` each time. Only the first call does the work; later ones return at once.
    pub fn shutdown(&self, grace: Duration) {
        let mut done = self.shut_down.lock().unwrap_or_else(|p| p.into_inner());
        if *done {
            return;
        }
        *done = true;
        self.closing.store(true, Ordering::SeqCst);
        for c in self
            .channels
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
        {
            c.close();
        }
        self.writer.lock().unwrap_or_else(|p| p.into_inner()).take();
        let child = &self.child;
        if child.wait_timeout(grace).is_none() {
            child.terminate(grace);
            // SIGKILL goes out after `grace`; the exit follows at once.
            child.wait_timeout(grace + EXIT_STATUS_WAIT);
        }
        self.alive.store(false, Ordering::SeqCst);
        let mut dead = self.dead.lock().unwrap_or_else(|p| p.into_inner());
        dead.get_or_insert_with(|| "extension was shut down".into());
    }

    pub fn kill(&self) {
        self.child.kill();
    }
}

fn spawn_writer(
    mut stdin: std::process::ChildStdin,
    rx: Receiver<Value>,
    conn: Arc<Connection>,
) -> std::io::Result<()> {
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
                    && !conn.is_alive()
                {
                    // The reader will have seen EOF and reported the exit.
                    return;
                }
            }
        })
        .map(|_| ())
}

impl Connection {
    /// Routes one line: replies and partial results to their waiter, `cancel` to the call it
    /// stops, anything else to its extension.
    fn route(&self, msg: Value) {
        let ext = if self.multiplexed {
            match msg["ext"].as_u64() {
                Some(n) => Some(n),
                // A shared process must say whose line it is; an untagged one is dropped.
                None => return,
            }
        } else {
            None
        };
        match (msg["type"].as_str(), msg["id"].as_u64()) {
            (Some("reply"), Some(id)) => {
                let waiter = self
                    .pending
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&id);
                // A late reply (after a timeout) has nobody waiting; that is fine.
                if let Some(w) = waiter {
                    let _ = w.tx.send(Incoming::Reply(msg));
                }
            }
            (Some("tool_update" | "stream_event"), Some(id)) => {
                let pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(w) = pending.get(&id) {
                    let _ = w.tx.send(Incoming::Update(msg));
                }
            }
            (Some("cancel"), _) => {
                if let Some(channel) = self.channel(ext) {
                    let key = msg.get("id").map(Value::to_string).unwrap_or_default();
                    let calls = channel.calls.lock().unwrap_or_else(|p| p.into_inner());
                    // A call that already finished has nothing left to stop.
                    if let Some(call) = calls.get(&key) {
                        call.abort();
                    }
                }
            }
            _ => {
                if let Some(channel) = self.channel(ext) {
                    if channel.is_alive() || msg["type"] == "register" {
                        channel.forwarded.fetch_add(1, Ordering::SeqCst);
                        (channel.sink)(ProcessEvent::Message(msg));
                    }
                }
            }
        }
    }
}

fn spawn_reader(stdout: std::process::ChildStdout, conn: Arc<Connection>) -> std::io::Result<()> {
    // Detached: it ends at EOF, which the kill in `die`/`shutdown` guarantees.
    std::thread::Builder::new()
        .name("pi-ext-reader".into())
        .spawn(move || {
            let at_end = super::protocol::read_messages(BufReader::new(stdout), |msg| match msg {
                Ok(msg) => {
                    conn.route(msg);
                    true
                }
                Err(reason) => {
                    conn.die(&reason.to_string());
                    false
                }
            });
            if !at_end {
                return;
            }
            let status = conn.child.wait_timeout(EXIT_STATUS_WAIT).flatten();
            conn.die(&match status {
                Some(s) => format!("exited ({s})"),
                None => "closed its output".to_string(),
            });
        })
        .map(|_| ())
}

/// `@<ext> text`: a shared process's stderr line tagged with the extension that wrote it
/// (`@<ext>` alone: an empty line).
fn tagged(line: &str) -> Option<(u64, &str)> {
    let rest = line.strip_prefix('@')?;
    let (n, text) = rest.split_once(' ').unwrap_or((rest, ""));
    Some((n.parse().ok()?, text))
}

fn spawn_stderr(stderr: std::process::ChildStderr, conn: Arc<Connection>) -> std::io::Result<()> {
    // Detached: it ends at EOF.
    std::thread::Builder::new()
        .name("pi-ext-stderr".into())
        .spawn(move || {
            let reader = BufReader::new(stderr);
            for line in reader.split(b'\n').map_while(Result::ok) {
                let text = String::from_utf8_lossy(&line).trim_end().to_string();
                if text.is_empty() {
                    continue;
                }
                let (channel, text) = match tagged(&text).filter(|_| conn.multiplexed) {
                    Some((n, rest)) => (conn.channel(Some(n)), rest.to_string()),
                    None => (conn.channel(None), text),
                };
                if text.trim().is_empty() {
                    continue;
                }
                if let Some(c) = channel {
                    (c.sink)(ProcessEvent::Stderr(text));
                }
            }
        })
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_tags_name_the_extension() {
        assert_eq!(tagged("@3 hello world"), Some((3, "hello world")));
        assert_eq!(tagged("@3"), Some((3, "")));
        assert_eq!(tagged("plain line"), None);
        assert_eq!(tagged("@x nope"), None);
    }
}
