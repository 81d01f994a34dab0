//! The stdio transport: the server runs as a child in its own session (as pi's `detached`
//! spawn), one JSON-RPC message per line each way. Three threads per server: one reads stdout
//! (lines past the size limit are skipped without being buffered), one keeps the last 64 KiB
//! of stderr for diagnostics, one writes stdin (so a server that stops reading never blocks
//! pi). Stopping closes stdin, then sends SIGTERM and at last SIGKILL to the whole group, so
//! servers started through `npx` or `uvx` wrappers end too. The child is one of the children
//! pi owns (`util::process`): if pi exits before its owner stopped it, it is killed then.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::{unbounded, Sender};
use serde_json::Value;

use super::rpc::{id_from_head, Incoming, McpError, Sink, Transport, MAX_MESSAGE_BYTES};
use crate::util::process::{self, OnShutdown, OwnedChild, SpawnOptions};

const MAX_STDERR_BYTES: usize = 64 * 1024;
/// After stdin closes, how long the server may take to exit before SIGTERM.
const STDIN_CLOSE_GRACE: Duration = Duration::from_millis(500);
/// After SIGTERM, how long before SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(2);
/// After the server exited, how long its stderr may take to reach us (a grandchild that holds
/// the pipe open is not waited for longer).
const STDERR_DRAIN: Duration = Duration::from_millis(200);

/// What to start.
#[derive(Debug, Clone)]
pub struct StdioSpec {
    pub command: String,
    pub args: Vec<String>,
    /// Added to pi's own environment.
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Keeps the last bytes of a stream.
#[derive(Default)]
struct Tail {
    bytes: VecDeque<u8>,
}

impl Tail {
    fn push(&mut self, chunk: &[u8]) {
        self.bytes.extend(chunk);
        let over = self.bytes.len().saturating_sub(MAX_STDERR_BYTES);
        self.bytes.drain(..over);
    }

    fn text(&self) -> String {
        let (a, b) = self.bytes.as_slices();
        let mut v = a.to_vec();
        v.extend_from_slice(b);
        String::from_utf8_lossy(&v).into_owned()
    }
}

pub struct StdioTransport {
    child: OwnedChild,
    /// Lines for the stdin writer; dropping it closes the server's stdin.
    writer: Mutex<Option<Sender<Vec<u8>>>>,
    stderr: Arc<Mutex<Tail>>,
    /// Disconnects when the stderr reader reached the end of the pipe.
    stderr_done: crossbeam_channel::Receiver<()>,
    closed: AtomicBool,
}

fn spawn_error(command: &str, e: &std::io::Error) -> McpError {
    let code = match e.kind() {
        std::io::ErrorKind::NotFound => "ENOENT".to_string(),
        std::io::ErrorKind::PermissionDenied => "EACCES".to_string(),
        _ => e.to_string(),
    };
    McpError::Other(format!("spawn {command} {code}"))
}

/// Starts the server and its reader and writer threads.
pub fn start(spec: &StdioSpec, sink: Sink) -> Result<Arc<dyn Transport>, McpError> {
    let mut cmd = Command::new(&spec.command);
    if crate::util::offline::offline() {
        // `npx -y`/`uvx` would otherwise wait on the registry (npm retries for a minute):
        // offline they use their cache or fail at once. The server's own `env` still wins.
        cmd.envs(crate::util::offline::RUNNER_OFFLINE_ENV);
    }
    cmd.args(&spec.args)
        .current_dir(&spec.cwd)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let options = SpawnOptions {
        new_session: true,
        on_shutdown: OnShutdown::OwnerStops,
        ..Default::default()
    };
    let mut child =
        process::spawn(&mut cmd, options).map_err(|e| spawn_error(&spec.command, &e))?;
    let (stdin, stdout, stderr) = (
        child.stdin.take().expect("stdin is piped"),
        child.stdout.take().expect("stdout is piped"),
        child.stderr.take().expect("stderr is piped"),
    );
    let tail = Arc::new(Mutex::new(Tail::default()));
    let (tx, rx) = unbounded::<Vec<u8>>();
    let (stderr_eof, stderr_done) = crossbeam_channel::bounded::<()>(0);
    // The three threads end by themselves when the child's pipes close; none is joined, so a
    // stuck pipe never holds pi back.
    let spawned = std::thread::Builder::new()
        .name("pi-mcp-stdin".into())
        .spawn(move || {
            let mut stdin = stdin;
            for line in rx {
                if stdin.write_all(&line).and_then(|_| stdin.flush()).is_err() {
                    break;
                }
            }
        })
        .and_then(|_| {
            let tail = Arc::clone(&tail);
            std::thread::Builder::new()
                .name("pi-mcp-stderr".into())
                .spawn(move || {
                    read_stderr(stderr, &tail);
                    drop(stderr_eof);
                })
        })
        .and_then(|_| {
            std::thread::Builder::new()
                .name("pi-mcp-stdout".into())
                .spawn(move || read_stdout(stdout, &sink))
        });
    let transport = Arc::new(StdioTransport {
        child,
        writer: Mutex::new(Some(tx)),
        stderr: tail,
        stderr_done,
        closed: AtomicBool::new(false),
    });
    if let Err(e) = spawned {
        transport.close();
        return Err(McpError::Other(format!("could not start a thread: {e}")));
    }
    Ok(transport)
}

fn read_stderr(mut stderr: impl Read, tail: &Mutex<Tail>) {
    let mut buf = [0u8; 8192];
    loop {
        match stderr.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => lock(tail).push(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// Reads the server's stdout to its end, handing each message to the sink, then `Closed`.
fn read_stdout(mut stdout: impl Read, sink: &Sink) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut framer = LineFramer::default();
    loop {
        match stdout.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => framer.push(&buf[..n], &**sink),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    framer.finish(&**sink);
    sink(Incoming::Closed(None));
}

/// Splits a stdio server's output into messages, one JSON value per line, fed with chunks as
/// they are read. A line over the limit is dropped as it streams by, keeping only its head (to
/// tell whose reply it was).
#[derive(Debug, Default)]
pub struct LineFramer {
    line: Vec<u8>,
    /// Bytes of the oversized line being skipped, if any.
    skipping: Option<usize>,
}

impl LineFramer {
    /// Hands every message `chunk` completes to `sink`.
    pub fn push(&mut self, mut chunk: &[u8], sink: &dyn Fn(Incoming)) {
        while !chunk.is_empty() {
            let newline = memchr::memchr(b'\n', chunk);
            let piece = &chunk[..newline.unwrap_or(chunk.len())];
            chunk = newline.map_or(&[][..], |i| &chunk[i + 1..]);
            match self.skipping.as_mut() {
                Some(skipped) => *skipped += piece.len(),
                None if self.line.len() + piece.len() > MAX_MESSAGE_BYTES => {
                    self.line.extend_from_slice(&piece[..piece.len().min(512)]);
                    self.line.truncate(512);
                    self.skipping = Some(self.line.len() + piece.len());
                }
                None => self.line.extend_from_slice(piece),
            }
            if newline.is_none() {
                break;
            }
            if self.skipping.take().is_some() {
                sink(Incoming::Garbage {
                    id: id_from_head(&self.line),
                    error: format!("MCP stdio message exceeds {MAX_MESSAGE_BYTES} bytes"),
                });
            } else {
                deliver_line(&self.line, sink);
            }
            self.line.clear();
        }
    }

    /// At the end of the output: a message left unfinished is reported.
    pub fn finish(self, sink: &dyn Fn(Incoming)) {
        if self.skipping.is_some() || !String::from_utf8_lossy(&self.line).trim().is_empty() {
            sink(Incoming::Garbage {
                id: None,
                error: "MCP stdio server closed with an incomplete JSON-RPC message".into(),
            });
        }
    }
}

fn deliver_line(line: &[u8], sink: &dyn Fn(Incoming)) {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    match serde_json::from_slice::<Value>(line) {
        Ok(v) => sink(Incoming::Message(v)),
        Err(e) => sink(Incoming::Garbage {
            id: None,
            error: format!("Invalid JSON from MCP server: {e}"),
        }),
    }
}

impl Transport for StdioTransport {
    fn send(&self, message: Value) -> Result<(), McpError> {
        let mut line = serde_json::to_vec(&message).map_err(|e| McpError::Other(e.to_string()))?;
        line.push(b'\n');
        match lock(&self.writer).as_ref() {
            Some(tx) if !self.closed.load(Ordering::SeqCst) => {
                tx.send(line).map_err(|_| McpError::Closed(None))
            }
            _ => Err(McpError::Closed(None)),
        }
    }

    fn close(&self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        lock(&self.writer).take();
        if self.child.wait_timeout(STDIN_CLOSE_GRACE).is_none() {
            self.child.terminate(TERM_GRACE);
            // The kill after the grace comes from util::process; a leader that still does not
            // exit (stuck in the kernel) is left to it rather than waited for forever.
            self.child
                .wait_timeout(TERM_GRACE + Duration::from_millis(500));
        }
    }

    fn stderr_tail(&self) -> Option<String> {
        // Asked after a failure, which is often the server exiting (its stdout closed a
        // moment before its exit is known): what it wrote last may still be in the pipe.
        if self.child.wait_timeout(Duration::from_millis(50)).is_some() {
            let _ = self.stderr_done.recv_timeout(STDERR_DRAIN);
        }
        let text = lock(&self.stderr).text();
        let text = text.trim();
        (!text.is_empty()).then(|| tail_chars(text, 2000).to_string())
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        self.close();
    }
}

/// The last `n` characters of `text`.
pub fn tail_chars(text: &str, n: usize) -> &str {
    match text.char_indices().rev().nth(n.saturating_sub(1)) {
        Some((i, _)) if n > 0 => &text[i..],
        _ if n == 0 => "",
        _ => text,
    }
}

#[cfg(test)]
#[path = "tests/stdio.rs"]
mod tests;
