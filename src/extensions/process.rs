//! One extension as pi talks to it: requests with ids and deadlines, the calls it makes, and
//! its death — over a [`Connection`] it has to itself, or shares with the other extensions of
//! the Node.js bridge. Disabling an extension of a shared process drops just that extension;
//! shutting the last one down stops the process.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;
use serde_json::Value;

use super::connection::{Channel, Connection};
pub use super::connection::{EventSink, Incoming, ProcessEvent};
use crate::ai::Abort;

/// How often a waiter looks at the abort flag.
const ABORT_POLL: Duration = Duration::from_millis(25);

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

/// A call the extension made, running until it finishes or is cancelled.
pub struct CallGuard {
    channel: Arc<Channel>,
    key: String,
    pub abort: Abort,
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.channel.untrack_call(&self.key);
    }
}

/// Kills the child when the last extension handle of its process goes away, whatever happened.
struct ChildOwner(Arc<Connection>);

impl Drop for ChildOwner {
    fn drop(&mut self) {
        self.0.kill();
    }
}

/// A process shared by several extensions (the Node.js bridge): hand out one
/// [`ExtensionProcess`] per extension with [`SharedProcess::attach`].
#[derive(Clone)]
pub struct SharedProcess {
    conn: Arc<Connection>,
    owner: Arc<ChildOwner>,
}

impl SharedProcess {
    pub fn spawn(argv: &[String], cwd: &std::path::Path, protocol: u64) -> Result<Self, String> {
        let conn = Connection::spawn(argv, cwd, protocol, true)?;
        Ok(SharedProcess {
            owner: Arc::new(ChildOwner(Arc::clone(&conn))),
            conn,
        })
    }

    /// The extension numbered `ext` on this process.
    pub fn attach(&self, path: PathBuf, ext: u64, sink: EventSink) -> ExtensionProcess {
        let channel = self.conn.add_channel(Some(ext), sink);
        ExtensionProcess {
            path,
            conn: Arc::clone(&self.conn),
            channel,
            _owner: Arc::clone(&self.owner),
        }
    }

    /// A line for the whole process (not for one extension).
    pub fn send(&self, msg: Value) {
        self.conn.write(msg);
    }

    pub fn is_alive(&self) -> bool {
        self.conn.is_alive()
    }
}

pub struct ExtensionProcess {
    /// The extension as the user named it (file or directory).
    pub path: PathBuf,
    conn: Arc<Connection>,
    channel: Arc<Channel>,
    _owner: Arc<ChildOwner>,
}

impl ExtensionProcess {
    /// Starts `argv` in `cwd` as a process of its own. The first line the child writes is
    /// delivered to `sink` like any other message; the host treats it as the registration.
    pub fn spawn(
        path: PathBuf,
        argv: &[String],
        cwd: &std::path::Path,
        sink: EventSink,
    ) -> Result<ExtensionProcess, String> {
        let conn = Connection::spawn(argv, cwd, super::protocol::PROTOCOL_VERSION, false)?;
        let channel = conn.add_channel(None, sink);
        Ok(ExtensionProcess {
            path,
            _owner: Arc::new(ChildOwner(Arc::clone(&conn))),
            conn,
            channel,
        })
    }

    /// Its number on a shared process.
    pub fn ext(&self) -> Option<u64> {
        self.channel.ext
    }

    pub fn is_alive(&self) -> bool {
        self.channel.is_alive() && self.conn.is_alive()
    }

    /// The host finished handling one unsolicited line (see [`ExtensionProcess::settle`]).
    pub fn mark_handled(&self) {
        self.channel.mark_handled();
    }

    /// Waits (at most `limit`) until every unsolicited line read so far has been handled, so
    /// the calls an extension sent before replying to a command take effect before the
    /// command is over.
    pub fn settle(&self, limit: Duration) {
        self.channel.settle(limit);
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
        self.channel.track_call(key.clone(), abort.clone());
        CallGuard {
            channel: Arc::clone(&self.channel),
            key,
            abort,
        }
    }

    /// Why the extension is dead, if it is.
    pub fn dead_reason(&self) -> Option<String> {
        self.channel
            .dead_reason()
            .or_else(|| self.conn.dead_reason())
    }

    /// Queues a line for the extension (tagged with its number on a shared process); never
    /// blocks.
    pub fn send(&self, mut msg: Value) {
        if !self.is_alive() {
            return;
        }
        if let (Some(ext), Some(obj)) = (self.channel.ext, msg.as_object_mut()) {
            obj.insert("ext".into(), ext.into());
        }
        self.conn.write(msg);
    }

    pub fn next_id(&self) -> u64 {
        self.conn.next_id()
    }

    /// Registers a waiter for `id`; replies and updates for it arrive on the receiver.
    pub fn expect(&self, id: u64) -> Result<Receiver<Incoming>, RequestError> {
        self.conn
            .expect(&self.channel, id)
            .map_err(RequestError::Dead)
    }

    fn forget(&self, id: u64) {
        self.conn.forget(id);
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

    /// Disables the extension: its waiters learn `reason`, and it is killed (or, on a shared
    /// process, dropped by the bridge).
    pub fn disable(&self, reason: String) {
        self.conn.disable_channel(&self.channel, &reason);
    }

    /// Shuts the extension down: its own process gets stdin closed, then TERM and KILL if it
    /// does not exit within `grace` each time; a shared process goes the same way once all its
    /// extensions are shut down.
    pub fn shutdown(&self, grace: Duration) {
        self.channel.close();
        if !self.conn.multiplexed || self.conn.all_closed() {
            self.conn.shutdown(grace);
        }
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
