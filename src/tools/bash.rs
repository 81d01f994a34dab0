//! The `bash` tool: runs one shell command in its own session (a child pi owns, see
//! `util::process`) with stdout and stderr on one pipe, so the output keeps the order the
//! command wrote it in; keeps only a bounded tail in memory (spilling the full raw output to a
//! user-only `$TMPDIR/pi-bash-<16 chars>.log` once it outgrows the limits), streams throttled
//! snapshots, and kills the whole group on abort or timeout. Commands the model runs also get
//! the session's `PI_*` variables ([`SessionEnv`]). Under `--sandbox` every command runs
//! confined; a failure the sandbox caused is explained in one line and, where the mode can ask,
//! the user may let it run once without the sandbox (`super::sandbox`).

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, RwLock};

use crate::util::sandbox::{self as sandbox_kernel, Sandbox};
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, select, Sender};
use serde_json::{json, Map, Value};

use super::truncate::{
    format_size, truncate_tail, Truncation, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES,
};
use crate::agent::tool::{Tool, ToolContext, ToolOutput};
use crate::ai::Content;
use crate::util::process::{self, OnShutdown, SpawnOptions};

/// Minimum spacing of streamed partial results.
const UPDATE_THROTTLE: Duration = Duration::from_millis(100);
/// How often the wait loop wakes to look at the abort flag and the deadline.
const TICK: Duration = Duration::from_millis(25);
/// After the shell exits, how long its pipes may stay quiet before we stop waiting for EOF (a
/// background grandchild may hold them open forever); output arriving restarts it, so a
/// descendant that keeps writing is read to the end (or the timeout), as pi 1.x does.
const EXIT_STDIO_GRACE: Duration = Duration::from_millis(100);
/// After killing the group, how long we keep draining what is already in the pipes.
const KILL_DRAIN: Duration = Duration::from_millis(50);
/// Between SIGTERM and SIGKILL to the process group.
const KILL_GRACE: Duration = Duration::from_millis(200);
const READ_CHUNK: usize = 64 * 1024;
/// The largest timeout pi accepts: Node's timer limit, 2^31 - 1 ms.
const MAX_TIMEOUT_MS: f64 = 2_147_483_647.0;

const DESCRIPTION: &str = "Run a bash command in the current working directory and get back its \
combined stdout and stderr. Only the tail of the output is returned: at most the last 2000 lines \
or 50KB, whichever limit is reached first; when output is cut, the complete output is written to \
a temporary file whose path is given. An optional timeout (in seconds) can be set.";

/// pi's `bash` tool. `shell` is the `shellPath` setting, `command_prefix` the
/// `shellCommandPrefix` setting; `BashTool::default()` behaves like pi with no settings.
#[derive(Debug, Clone, Default)]
pub struct BashTool {
    pub shell: Option<String>,
    pub command_prefix: Option<String>,
    /// The session's variables for commands the model runs (none for the user's own `!cmd`).
    pub session_env: Option<SessionEnv>,
}

/// The session variables pi gives the model's commands (`PI_SESSION_ID`, `PI_SESSION_FILE`,
/// `PI_PROVIDER`, `PI_MODEL`, `PI_REASONING_LEVEL`), shared with the harness that keeps them
/// current. Inherited values of these names are never passed on. It also carries the
/// session's `codemode` store (`store()`/`load()` values), the other per-session state a
/// built-in tool keeps in step with the session.
#[derive(Debug, Clone, Default)]
pub struct SessionEnv(
    Arc<RwLock<Vec<(&'static str, String)>>>,
    super::codemode::store::StoreLink,
);

impl SessionEnv {
    pub const NAMES: [&'static str; 5] = [
        "PI_SESSION_ID",
        "PI_SESSION_FILE",
        "PI_PROVIDER",
        "PI_MODEL",
        "PI_REASONING_LEVEL",
    ];

    /// Replaces the variables; names outside [`SessionEnv::NAMES`] are ignored.
    pub fn set(&self, vars: Vec<(&'static str, String)>) {
        let vars = vars
            .into_iter()
            .filter(|(k, _)| Self::NAMES.contains(k))
            .collect();
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = vars;
    }

    /// The session's `codemode` store.
    pub fn codemode_store(&self) -> &super::codemode::store::StoreLink {
        &self.1
    }

    fn apply(&self, cmd: &mut Command) {
        for name in Self::NAMES {
            cmd.env_remove(name);
        }
        for (k, v) in self.0.read().unwrap_or_else(|p| p.into_inner()).iter() {
            cmd.env(k, v);
        }
    }
}

impl Tool for BashTool {
    fn name(&self) -> &str {
        "bash"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "Bash command to execute"},
                "timeout": {
                    "type": "number",
                    "description": "Timeout in seconds (optional, no default timeout)"
                }
            },
            "required": ["command"]
        })
    }

    fn prompt_snippet(&self) -> &str {
        "Run shell commands (ls, grep, find, etc.)"
    }

    fn execute(
        &self,
        _call_id: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, String> {
        let command = args
            .get("command")
            .and_then(Value::as_str)
            .ok_or_else(|| "bash: missing string argument \"command\"".to_string())?;
        let command = match self.command_prefix.as_deref() {
            Some(prefix) if !prefix.is_empty() => format!("{prefix}\n{command}"),
            _ => command.to_string(),
        };
        let timeout = args.get("timeout").and_then(Value::as_f64);
        self.run(&command, timeout, ctx, sandbox_kernel::active())
    }
}

/// pi 1.x refuses a timeout it cannot honour instead of quietly ignoring it.
fn check_timeout(timeout: Option<f64>) -> Result<Option<Duration>, String> {
    let Some(secs) = timeout else {
        return Ok(None);
    };
    if !secs.is_finite() || secs <= 0.0 {
        return Err("Invalid timeout: must be a finite number of seconds".into());
    }
    if secs * 1000.0 > MAX_TIMEOUT_MS {
        return Err(format!(
            "Invalid timeout: maximum is {} seconds",
            js_number(MAX_TIMEOUT_MS / 1000.0)
        ));
    }
    Ok(Duration::try_from_secs_f64(secs).ok())
}

/// Why the wait loop stopped before the command finished on its own.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Stop {
    Aborted,
    TimedOut,
}

/// A finished (or stopped) command: its output accumulator, final snapshot and how it ended.
struct Finished {
    acc: Accumulator,
    snapshot: Snapshot,
    status: Option<ExitStatus>,
    /// How long after the start the shell exited, when it did.
    exited_after: Option<Duration>,
    stop: Option<Stop>,
    /// The sandbox's error when the command created a `.git` or `.pi` (removed again).
    swept: Option<String>,
}

/// Output limit of `structuredContent.output` (pi 1.6.0).
const STRUCTURED_OUTPUT_MAX_BYTES: usize = 1024 * 1024;

/// The shell's exit code; a shell killed by a signal gets the shell convention 128 + signal, as
/// pi 1.x reports it, so the kill does not read as success.
fn exit_code(status: ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|sig| 128 + sig))
}

/// A user-run command (`!cmd`, RPC `bash`): the raw decoded tail, before any cleaning.
pub(crate) struct UserRun {
    /// The decoded tail of the output, starting at a line start (at most twice the byte limit).
    pub tail: String,
    /// Output was dropped in front of `tail`.
    pub dropped: bool,
    /// `None` when killed by a signal.
    pub exit_code: Option<i32>,
    pub cancelled: bool,
    /// The temp file holding the full raw output, when the output outgrew the limits.
    pub full_output_path: Option<PathBuf>,
}

impl BashTool {
    /// Runs a command typed by the user (`shellCommandPrefix` applied) until it ends or `abort`
    /// is set; no timeout. `on_text` gets the output as it arrives (decoded, uncleaned).
    pub(crate) fn run_user(
        &self,
        command: &str,
        cwd: &Path,
        abort: crate::ai::Abort,
        on_text: &(dyn Fn(&str) + Sync),
    ) -> Result<UserRun, String> {
        self.user_run(command, cwd, abort, &|_| {}, on_text)
    }

    /// [`BashTool::run_user`], calling `on_output` with the output so far (the tail, as the
    /// tool's updates carry it) while the command runs, for a live view.
    pub(crate) fn run_user_streaming(
        &self,
        command: &str,
        cwd: &Path,
        abort: crate::ai::Abort,
        on_output: &(dyn Fn(String) + Sync),
    ) -> Result<UserRun, String> {
        self.user_run(command, cwd, abort, on_output, &|_| {})
    }

    fn user_run(
        &self,
        command: &str,
        cwd: &Path,
        abort: crate::ai::Abort,
        on_output: &(dyn Fn(String) + Sync),
        on_text: &(dyn Fn(&str) + Sync),
    ) -> Result<UserRun, String> {
        let command = match self.command_prefix.as_deref() {
            Some(prefix) if !prefix.is_empty() => format!("{prefix}\n{command}"),
            _ => command.to_string(),
        };
        self.user_run_in(
            &command,
            cwd,
            abort,
            on_output,
            on_text,
            sandbox_kernel::active(),
        )
    }

    fn user_run_in(
        &self,
        command: &str,
        cwd: &Path,
        abort: crate::ai::Abort,
        on_output: &(dyn Fn(String) + Sync),
        on_text: &(dyn Fn(&str) + Sync),
        sandbox: Option<Arc<Sandbox>>,
    ) -> Result<UserRun, String> {
        let forward = |update: ToolOutput| {
            let text: String = update
                .content
                .iter()
                .filter_map(|c| match c {
                    crate::ai::Content::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect();
            on_output(text);
        };
        let ctx = ToolContext {
            cwd: cwd.to_path_buf(),
            abort,
            on_update: &forward,
            nested: None,
        };
        let f = self.spawn_and_wait(command, None, &ctx, on_text, sandbox.clone())?;
        let mut tail = f.acc.snapshot_text().to_string();
        let dropped = f.acc.total_decoded > tail.len();
        let exit_code = f.status.and_then(exit_code);
        let cancelled = f.stop == Some(Stop::Aborted);
        // Sandbox (issue 16): the user's own command is explained and may run once unconfined.
        let failed = !cancelled && exit_code.is_some_and(|c| c != 0);
        if let Some(why) = failed
            .then(|| super::sandbox::explain(sandbox.as_ref(), command, &tail))
            .flatten()
        {
            if super::sandbox::allowed_once(command, &why, &ctx.abort) {
                on_text(&format!("\n{}\n", super::sandbox::RAN_UNCONFINED));
                return self.user_run_in(command, cwd, ctx.abort.clone(), on_output, on_text, None);
            }
            let line = format!("\n{}\n", why.line);
            on_text(&line);
            tail.push_str(&line);
        }
        let mut exit_code = exit_code;
        if let Some(why) = &f.swept {
            let line = format!("\n{why}\n");
            on_text(&line);
            tail.push_str(&line);
            // Issue 29: what the command made was undone, so it did not succeed.
            exit_code = Some(exit_code.filter(|c| *c != 0).unwrap_or(1));
        }
        Ok(UserRun {
            dropped,
            tail,
            exit_code,
            cancelled,
            full_output_path: f.snapshot.full_output_path,
        })
    }

    fn run(
        &self,
        command: &str,
        timeout: Option<f64>,
        ctx: &ToolContext,
        sandbox: Option<Arc<Sandbox>>,
    ) -> Result<ToolOutput, String> {
        let mut swept = None;
        let result = self.run_judged(command, timeout, ctx, sandbox, &mut swept);
        // Issue 29: a command that made a .git or .pi fails, whatever its own status.
        match swept {
            None => result,
            Some(why) => Err(match result {
                Ok(out) => {
                    let text: String = out
                        .content
                        .iter()
                        .filter_map(|c| match c {
                            Content::Text(t) => Some(t.text.as_str()),
                            _ => None,
                        })
                        .collect();
                    format!("{text}\n\n{why}")
                }
                Err(e) => format!("{e}\n\n{why}"),
            }),
        }
    }

    fn run_judged(
        &self,
        command: &str,
        timeout: Option<f64>,
        ctx: &ToolContext,
        sandbox: Option<Arc<Sandbox>>,
        swept: &mut Option<String>,
    ) -> Result<ToolOutput, String> {
        (ctx.on_update)(ToolOutput::default());
        let limit = check_timeout(timeout)?;
        let started = Instant::now();
        let Finished {
            mut acc,
            snapshot,
            status,
            exited_after,
            stop,
            swept: found,
        } = self.spawn_and_wait(command, limit, ctx, &|_| {}, sandbox.clone())?;
        *swept = found;
        match stop {
            Some(Stop::Aborted) => {
                let (text, _) = acc.format(&snapshot, "");
                return Err(append_status(&text, "Command aborted"));
            }
            Some(Stop::TimedOut) => {
                let (text, _) = acc.format(&snapshot, "");
                let secs = js_number(timeout.unwrap_or_default());
                let mut status_line = format!("Command timed out after {secs} seconds");
                // The shell itself finished; its background processes kept the pipes busy.
                if let (Some(code), Some(after)) = (status.and_then(exit_code), exited_after) {
                    let tenths = (after.as_secs_f64() * 10.0).round() / 10.0;
                    status_line.push_str(&format!(
                        ". The shell exited with code {code} after {} seconds, but background \
                         processes it started kept writing output until the timeout.",
                        js_number(tenths)
                    ));
                }
                return Err(append_status(&text, &status_line));
            }
            None => {}
        }
        let (text, details) = acc.format(&snapshot, "(no output)");
        let mut failed = false;
        let text = match status.and_then(exit_code) {
            Some(code) if code != 0 => {
                let text = append_status(&text, &format!("Command exited with code {code}"));
                // Sandbox (issue 16): say what it refused; the user may allow one unconfined run.
                if let Some(why) = super::sandbox::explain(sandbox.as_ref(), command, &text) {
                    if super::sandbox::allowed_once(command, &why, &ctx.abort) {
                        let again = self.run(command, timeout, ctx, None);
                        return super::sandbox::marked_unconfined(again);
                    }
                    return Err(format!("{text}\n{}", why.line));
                }
                // pi 1.6.0: an error result that keeps its details (none unless the output was
                // cut) and its `structuredContent`, rather than a bare error message.
                failed = true;
                text
            }
            _ => text,
        };
        let mut out = ToolOutput::text(text);
        out.details = details;
        out.is_error = failed;
        // pi 1.6.0's `structuredContent` for programmatic callers.
        let (output, truncated) = acc.full_output(STRUCTURED_OUTPUT_MAX_BYTES);
        let mut structured = serde_json::Map::new();
        structured.insert("output".into(), output.into());
        structured.insert("truncated".into(), truncated.into());
        if let (true, Some(p)) = (truncated, &snapshot.full_output_path) {
            structured.insert("full_output_path".into(), p.to_string_lossy().into());
        }
        structured.insert(
            "exit_code".into(),
            status.and_then(exit_code).unwrap_or(0).into(),
        );
        let tenths = (started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
        // A whole number prints as JavaScript prints it (`0`, not `0.0`).
        let wall = if tenths.fract() == 0.0 {
            json!(tenths as u64)
        } else {
            json!(tenths)
        };
        structured.insert("wall_time_seconds".into(), wall);
        out.structured_content = Some(Value::Object(structured));
        Ok(out)
    }

    fn spawn_and_wait(
        &self,
        command: &str,
        timeout: Option<Duration>,
        ctx: &ToolContext,
        on_text: &(dyn Fn(&str) + Sync),
        sandbox: Option<Arc<Sandbox>>,
    ) -> Result<Finished, String> {
        let shell = resolve_shell(self.shell.as_deref())?;
        if !ctx.cwd.exists() {
            return Err(format!(
                "Working directory does not exist: {}\nCannot execute bash commands.",
                ctx.cwd.display()
            ));
        }
        let mut cmd = Command::new(&shell);
        cmd.arg("-c")
            .arg(command)
            .current_dir(&ctx.cwd)
            .stdin(Stdio::null());
        if let Some(path) = shell_path_env() {
            cmd.env("PATH", path);
        }
        if let Some(env) = &self.session_env {
            env.apply(&mut cmd);
        }
        // Its own session, as pi spawns with `detached: true`, so the whole tree can be killed.
        let confined = sandbox.is_some();
        // Issue 29: what the command leaves in the roots is checked once it has ended.
        let before = sandbox
            .as_ref()
            .map(|s| (Arc::clone(s), s.before_command()));
        let options = SpawnOptions {
            new_session: true,
            merge_output: true,
            on_shutdown: OnShutdown::KillAtOnce,
            sandbox,
        };
        let mut child = process::spawn(&mut cmd, options).map_err(|e| match confined {
            true => format!("Could not start {shell} in the sandbox: {e}"),
            false => spawn_error(&shell, &e),
        })?;

        // Bounded so a fast producer waits for us instead of filling memory. The reader's end
        // (EOF or a read error) disconnects the channel after the last chunk.
        let (tx, rx) = bounded::<Vec<u8>>(8);
        match child.output.take() {
            Some(out) => spawn_reader(out, tx),
            None => drop(tx),
        }
        // Each channel is swapped for `never` once it has said its last word.
        let mut data = rx.clone();
        let mut exited = child.exited();

        let deadline = timeout.and_then(|d| Instant::now().checked_add(d));
        let mut acc = Accumulator::new(DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
        let mut eof = false;
        let started = Instant::now();
        // The shell's status, when it exited, and the last sign of life since (exit or output).
        let mut exit: Option<(Option<ExitStatus>, Instant, Instant)> = None;
        let mut stop: Option<(Stop, Instant)> = None;
        let mut dirty = false;
        let mut last_update: Option<Instant> = None;

        loop {
            let now = Instant::now();
            if let Some((_, since)) = stop {
                if now.duration_since(since) >= KILL_DRAIN {
                    break;
                }
            } else if ctx.abort.is_aborted() {
                child.terminate(KILL_GRACE);
                stop = Some((Stop::Aborted, now));
            } else if deadline.is_some_and(|d| now >= d) {
                child.terminate(KILL_GRACE);
                stop = Some((Stop::TimedOut, now));
            }
            if let Some((_, _, active)) = exit {
                if eof || now.duration_since(active) >= EXIT_STDIO_GRACE {
                    break;
                }
            }
            if dirty && last_update.is_none_or(|t| now.duration_since(t) >= UPDATE_THROTTLE) {
                dirty = false;
                last_update = Some(now);
                (ctx.on_update)(acc.update_output());
            }
            let mut wait = TICK;
            if dirty {
                if let Some(t) = last_update {
                    wait = wait.min((t + UPDATE_THROTTLE).saturating_duration_since(now));
                }
            }
            if let Some(d) = deadline.filter(|_| stop.is_none()) {
                wait = wait.min(d.saturating_duration_since(now));
            }
            select! {
                recv(data) -> msg => match msg {
                    Ok(bytes) => {
                        on_text(&acc.append(&bytes));
                        dirty = true;
                        if let Some((_, _, active)) = exit.as_mut() {
                            *active = Instant::now();
                        }
                    }
                    Err(_) => {
                        eof = true;
                        data = crossbeam_channel::never();
                    }
                },
                recv(exited) -> _ => {
                    let at = Instant::now();
                    exit = Some((child.status().flatten(), at, at));
                    exited = crossbeam_channel::never();
                },
                default(wait) => {}
            }
        }
        // A reader still blocked on a pipe held open by a surviving grandchild stays
        // detached: its next send fails once the receivers are dropped here, and it ends at
        // EOF.
        drop(data);
        drop(rx);

        let tail = acc.finish();
        on_text(&tail);
        if dirty || !tail.is_empty() {
            (ctx.on_update)(acc.update_output());
        }
        let snapshot = acc.snapshot(true);
        acc.close_file();
        Ok(Finished {
            acc,
            snapshot,
            status: exit.and_then(|(s, _, _)| s),
            exited_after: exit
                .filter(|&(_, at, _)| stop.is_none_or(|(_, since)| at <= since))
                .map(|(_, at, _)| at.duration_since(started)),
            stop: stop.map(|(s, _)| s),
            swept: before.and_then(|(s, b)| s.after_command(&b)),
        })
    }
}

fn spawn_reader(mut pipe: impl Read + Send + 'static, tx: Sender<Vec<u8>>) {
    // Detached: it ends at EOF, on a read error, or when the tool stops listening; its end
    // drops `tx`, which tells the tool there is no more output.
    std::thread::spawn(move || {
        let mut buf = vec![0u8; READ_CHUNK];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    if tx.send(buf[..n].to_vec()).is_err() {
                        return;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
    });
}

/// The configured shell (must exist), else `/bin/bash`, else `bash` on PATH, else `sh`.
fn resolve_shell(custom: Option<&str>) -> Result<String, String> {
    if let Some(path) = custom.filter(|p| !p.is_empty()) {
        if Path::new(path).exists() {
            return Ok(path.to_string());
        }
        return Err(format!("Custom shell path not found: {path}"));
    }
    if Path::new("/bin/bash").exists() {
        return Ok("/bin/bash".into());
    }
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("bash"))
            .find(|p| p.is_file())
    });
    Ok(on_path.map_or_else(|| "sh".into(), |p| p.to_string_lossy().into_owned()))
}

/// PATH with `<agentDir>/bin` (managed tools) in front, unless it is already listed.
fn shell_path_env() -> Option<std::ffi::OsString> {
    let bin = crate::resources::agent_dir().join("bin");
    let current = std::env::var_os("PATH").unwrap_or_default();
    let entries: Vec<PathBuf> = std::env::split_paths(&current)
        .filter(|p| !p.as_os_str().is_empty())
        .collect();
    if entries.contains(&bin) {
        return None;
    }
    std::env::join_paths(std::iter::once(bin).chain(entries)).ok()
}

fn spawn_error(shell: &str, e: &std::io::Error) -> String {
    let code = match e.raw_os_error() {
        Some(libc::ENOENT) => "ENOENT".to_string(),
        Some(libc::EACCES) => "EACCES".to_string(),
        Some(libc::ENOTDIR) => "ENOTDIR".to_string(),
        _ => e.to_string(),
    };
    format!("spawn {shell} {code}")
}

fn append_status(text: &str, status: &str) -> String {
    if text.is_empty() {
        status.to_string()
    } else {
        format!("{text}\n\n{status}")
    }
}

/// A number the way JavaScript prints it (`5`, `0.2`).
fn js_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e21 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// Tail snapshot of the accumulated output.
struct Snapshot {
    truncation: Truncation,
    full_output_path: Option<PathBuf>,
}

/// Bounded-memory record of a command's output: a decoded rolling tail for display plus counts,
/// and the raw bytes (buffered, then in a temp file once the output outgrows the limits).
struct Accumulator {
    max_lines: usize,
    max_bytes: usize,
    max_rolling: usize,
    /// Undecoded bytes of a UTF-8 sequence split across chunks.
    pending: Vec<u8>,
    tail: String,
    tail_at_line_start: bool,
    total_raw: usize,
    total_decoded: usize,
    total_lines: usize,
    current_line_bytes: usize,
    raw: Vec<u8>,
    file: Option<BufWriter<File>>,
    path: Option<PathBuf>,
    /// Creating the temp file failed; stop buffering raw bytes.
    file_failed: bool,
}

impl Accumulator {
    fn new(max_lines: usize, max_bytes: usize) -> Self {
        Accumulator {
            max_lines,
            max_bytes,
            max_rolling: (max_bytes * 2).max(1),
            pending: Vec::new(),
            tail: String::new(),
            tail_at_line_start: true,
            total_raw: 0,
            total_decoded: 0,
            total_lines: 0,
            current_line_bytes: 0,
            raw: Vec::new(),
            file: None,
            path: None,
            file_failed: false,
        }
    }

    /// Takes a chunk of raw output; returns its decoded text.
    fn append(&mut self, data: &[u8]) -> String {
        self.total_raw += data.len();
        let decoded = if self.pending.is_empty() {
            decode_stream(data, &mut self.pending)
        } else {
            let mut joined = std::mem::take(&mut self.pending);
            joined.extend_from_slice(data);
            decode_stream(&joined, &mut self.pending)
        };
        self.push_text(&decoded);
        if self.file.is_some() || self.needs_file() {
            self.ensure_file();
            if let Some(f) = self.file.as_mut() {
                let _ = f.write_all(data);
            }
        } else if !self.file_failed {
            self.raw.extend_from_slice(data);
        }
        decoded
    }

    /// Ends the output; returns the text an unfinished UTF-8 sequence at the end became.
    fn finish(&mut self) -> String {
        let mut tail = String::new();
        if !self.pending.is_empty() {
            self.pending.clear();
            tail.push('\u{FFFD}');
            self.push_text(&tail);
        }
        if self.needs_file() {
            self.ensure_file();
        }
        tail
    }

    fn push_text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.total_decoded += text.len();
        self.tail.push_str(text);
        if self.tail.len() > self.max_rolling * 2 {
            self.trim_tail();
        }
        let bytes = text.as_bytes();
        // Lines as pi 1.x counts them: completed lines, plus the open one if it has text.
        let open = usize::from(self.current_line_bytes > 0);
        let newlines = memchr::memchr_iter(b'\n', bytes).count();
        if newlines == 0 {
            self.current_line_bytes += bytes.len();
        } else {
            let last = memchr::memrchr(b'\n', bytes).unwrap_or(0);
            self.current_line_bytes = bytes.len() - last - 1;
        }
        self.total_lines += newlines + usize::from(self.current_line_bytes > 0) - open;
    }

    fn trim_tail(&mut self) {
        let mut start = self.tail.len() - self.max_rolling;
        while !self.tail.is_char_boundary(start) {
            start += 1;
        }
        if start > 0 {
            self.tail_at_line_start = self.tail.as_bytes()[start - 1] == b'\n';
            self.tail.drain(..start);
        }
    }

    fn snapshot_text(&self) -> &str {
        if self.tail_at_line_start {
            return &self.tail;
        }
        match self.tail.find('\n') {
            Some(i) => &self.tail[i + 1..],
            None => &self.tail,
        }
    }

    fn needs_file(&self) -> bool {
        self.total_raw > self.max_bytes
            || self.total_decoded > self.max_bytes
            || self.total_lines > self.max_lines
    }

    /// The whole output for `structuredContent` (pi 1.6.0): as it came when it fits in `max`
    /// bytes, else its first and last `max / 2` bytes around an omission marker.
    fn full_output(&mut self, max: usize) -> (String, bool) {
        let Some(path) = self.path.clone() else {
            return (String::from_utf8_lossy(&self.raw).into_owned(), false);
        };
        if let Some(f) = self.file.as_mut() {
            let _ = f.flush();
        }
        let Ok(bytes) = std::fs::read(&path) else {
            return (String::new(), true);
        };
        if bytes.len() <= max {
            return (String::from_utf8_lossy(&bytes).into_owned(), false);
        }
        let head_len = max / 2;
        let tail_len = max - head_len;
        let mut head = &bytes[..head_len];
        // Cut at character boundaries: drop an incomplete sequence at the head's end and
        // continuation bytes at the tail's start.
        while let Err(e) = std::str::from_utf8(head) {
            if e.error_len().is_some() {
                break;
            }
            head = &head[..e.valid_up_to()];
        }
        let mut tail = &bytes[bytes.len() - tail_len..];
        while tail.first().is_some_and(|b| b & 0xc0 == 0x80) {
            tail = &tail[1..];
        }
        let omitted = bytes.len() - head_len - tail_len;
        (
            format!(
                "{}\n\n[... {omitted} bytes omitted ...]\n\n{}",
                String::from_utf8_lossy(head),
                String::from_utf8_lossy(tail)
            ),
            true,
        )
    }

    fn ensure_file(&mut self) {
        if self.path.is_some() || self.file_failed {
            return;
        }
        match create_temp_file() {
            Some((path, file)) => {
                let mut w = BufWriter::with_capacity(READ_CHUNK, file);
                let _ = w.write_all(&self.raw);
                self.raw = Vec::new();
                self.file = Some(w);
                self.path = Some(path);
            }
            None => {
                self.file_failed = true;
                self.raw = Vec::new();
            }
        }
    }

    fn close_file(&mut self) {
        if let Some(mut f) = self.file.take() {
            let _ = f.flush();
        }
    }

    fn snapshot(&mut self, persist_if_truncated: bool) -> Snapshot {
        let mut t = truncate_tail(self.snapshot_text(), self.max_lines, self.max_bytes);
        let truncated = self.total_lines > self.max_lines || self.total_decoded > self.max_bytes;
        t.truncated_by = if truncated {
            t.truncated_by
                .or(Some(if self.total_decoded > self.max_bytes {
                    "bytes"
                } else {
                    "lines"
                }))
        } else {
            None
        };
        t.truncated = truncated;
        t.total_lines = self.total_lines;
        t.total_bytes = self.total_decoded;
        t.max_lines = self.max_lines;
        t.max_bytes = self.max_bytes;
        if persist_if_truncated && truncated {
            self.ensure_file();
        }
        if let Some(f) = self.file.as_mut() {
            // So a reader of the path sees everything received so far.
            let _ = f.flush();
        }
        Snapshot {
            truncation: t,
            full_output_path: self.path.clone(),
        }
    }

    fn details(snapshot: &Snapshot) -> Map<String, Value> {
        let mut d = Map::new();
        if snapshot.truncation.truncated {
            d.insert("truncation".into(), json!(snapshot.truncation));
        }
        if let Some(p) = &snapshot.full_output_path {
            d.insert("fullOutputPath".into(), json!(p.to_string_lossy()));
        }
        d
    }

    /// A streamed partial result: the current tail, details as pi sends them.
    fn update_output(&mut self) -> ToolOutput {
        let snapshot = self.snapshot(true);
        let details = Self::details(&snapshot);
        ToolOutput {
            content: vec![Content::text(snapshot.truncation.content)],
            details: Some(Value::Object(details)),
            terminate: false,
            is_error: false,
            structured_content: None,
        }
    }

    /// The final text (tail plus pi's notice when truncated) and details when truncated.
    fn format(&self, snapshot: &Snapshot, empty: &str) -> (String, Option<Value>) {
        let t = &snapshot.truncation;
        let mut text = if t.content.is_empty() {
            empty.to_string()
        } else {
            t.content.clone()
        };
        if !t.truncated {
            return (text, None);
        }
        let path = snapshot
            .full_output_path
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|| "undefined".into());
        let end = t.total_lines;
        let start = end + 1 - t.output_lines.min(end);
        let notice = if t.last_line_partial {
            format!(
                "[Showing last {} of line {end} (line is {}). Full output: {path}]",
                format_size(t.output_bytes),
                format_size(self.current_line_bytes)
            )
        } else if t.truncated_by == Some("lines") {
            format!("[Showing lines {start}-{end} of {end}. Full output: {path}]")
        } else {
            format!(
                "[Showing lines {start}-{end} of {end} ({} limit). Full output: {path}]",
                format_size(DEFAULT_MAX_BYTES)
            )
        };
        text.push_str("\n\n");
        text.push_str(&notice);
        (text, Some(Value::Object(Self::details(snapshot))))
    }
}

/// Lossy streaming UTF-8 decode: invalid sequences become U+FFFD; an incomplete sequence at the
/// end is left in `pending` for the next chunk.
fn decode_stream(mut bytes: &[u8], pending: &mut Vec<u8>) -> String {
    let mut out = String::with_capacity(bytes.len());
    loop {
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                out.push_str(s);
                return out;
            }
            Err(e) => {
                let valid = e.valid_up_to();
                // The prefix up to `valid_up_to` is valid UTF-8, so this never falls back.
                out.push_str(std::str::from_utf8(&bytes[..valid]).unwrap_or_default());
                match e.error_len() {
                    Some(len) => {
                        out.push('\u{FFFD}');
                        bytes = &bytes[valid + len..];
                    }
                    None => {
                        pending.extend_from_slice(&bytes[valid..]);
                        return out;
                    }
                }
            }
        }
    }
}

/// `$TMPDIR/pi-bash-<16 random characters>.log`, created exclusively and readable by the
/// user only (the output may hold secrets).
fn create_temp_file() -> Option<(PathBuf, File)> {
    let file = tempfile::Builder::new()
        .prefix("pi-bash-")
        .suffix(".log")
        .rand_bytes(16)
        .tempfile()
        .ok()?;
    // Kept: the path is handed to the model and the user.
    let (file, path) = file.keep().ok()?;
    Some((path, file))
}

#[cfg(test)]
#[path = "tests/bash.rs"]
mod tests;
