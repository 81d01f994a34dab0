//! Child processes pi starts and owns, and the one "run a child with a deadline" helper.
//!
//! Every child starts in its own process group (or session) and stays in a registry of live
//! groups until its leader is reaped, so a shutdown can stop every tree we started
//! ([`kill_all`]). A group is signalled only while its leader is unreaped: a waiter thread
//! learns of the exit without reaping (`waitid` with `WNOWAIT`) and reaps once no kill is
//! pending, so the id cannot have been reused by an unrelated process. Once the leader is
//! reaped, nothing is ever sent to the group again (a background process it left behind is
//! then on its own, as in pi).
//!
//! Every child starts with only the descriptors it is given (0, 1 and 2): whatever pi
//! inherited from its own parent or opened without close-on-exec is marked close-on-exec in
//! the child before it runs. A confined child also starts a new session (no controlling
//! terminal) and dies with the thread that started it (`PR_SET_PDEATHSIG`: the bash tool and
//! `run` wait on that thread), so nothing it runs outlives pi.
//!
//! Every child gets `PI_CODING_AGENT=true` and `AI_AGENT=pi` in its environment. A caller
//! starting a command the model (or the user, through pi) wrote passes the sandbox to confine
//! it with ([`SpawnOptions::sandbox`], see `util::sandbox`).

use std::collections::HashMap;
use std::io::{self, Read};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

use super::sandbox::{self, Sandbox};

/// How often [`run`] looks at its cancel check.
const CANCEL_POLL: Duration = Duration::from_millis(25);
/// After the child exits, how long [`run`] still waits for its pipes to close (a grandchild
/// that left the group may hold them open forever).
const EXIT_STDIO_GRACE: Duration = Duration::from_millis(100);
/// The waiter and kill threads only call into libc.
const SMALL_STACK: usize = 64 * 1024;
/// How a shutdown treats a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnShutdown {
    /// Killed the moment shutdown starts: commands (bash, `!cmd`, extension `exec`, helpers).
    #[default]
    KillAtOnce,
    /// Stopped by its owner's own shutdown (extensions hear `session_shutdown` first, servers
    /// are closed), and killed when pi exits.
    OwnerStops,
}

/// Which groups [`kill_all`] kills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Only [`OnShutdown::KillAtOnce`] groups: a shutdown has started.
    Commands,
    /// Every group: pi is exiting.
    Everything,
}

/// How to start a child.
#[derive(Debug, Clone, Default)]
pub struct SpawnOptions {
    /// A new session (`setsid`, like pi's `detached: true`) rather than only a new group: the
    /// child also leaves the controlling terminal.
    pub new_session: bool,
    /// One pipe for stdout and stderr, so the output keeps the order the child wrote it in
    /// (read it from [`OwnedChild::output`]).
    pub merge_output: bool,
    pub on_shutdown: OnShutdown,
    /// Confine the child (Landlock and seccomp, applied between fork and exec); `None` runs
    /// it with all of the user's rights.
    pub sandbox: Option<Arc<Sandbox>>,
}

/// A running (or finished) child and its process group.
pub struct OwnedChild {
    pid: libc::pid_t,
    group: Arc<Group>,
    exited: Receiver<()>,
    pub stdin: Option<ChildStdin>,
    pub stdout: Option<ChildStdout>,
    pub stderr: Option<ChildStderr>,
    /// stdout and stderr on one pipe, with [`SpawnOptions::merge_output`].
    pub output: Option<std::fs::File>,
}

struct Group {
    pgid: libc::pid_t,
    on_shutdown: OnShutdown,
    state: Mutex<GroupState>,
    changed: Condvar,
}

#[derive(Default)]
struct GroupState {
    /// Set when the leader exited: its status (`None` inside if it could not be read).
    status: Option<Option<ExitStatus>>,
    /// A TERM → KILL escalation is under way; the leader is not reaped before it ends.
    escalating: bool,
    reaped: bool,
}

impl Group {
    fn lock(&self) -> MutexGuard<'_, GroupState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sends `sig` to the whole group unless the leader is reaped; true if it was sent.
    fn signal(&self, state: &GroupState, sig: i32) -> bool {
        if state.reaped {
            return false;
        }
        // SAFETY: kill(2) on a group whose leader we have not reaped (the caller holds the
        // state lock the reaper takes), so the id is still ours.
        unsafe { libc::kill(-self.pgid, sig) == 0 }
    }

    fn kill(&self) -> bool {
        let state = self.lock();
        self.signal(&state, libc::SIGKILL)
    }

    /// The last step of a termination: SIGKILL, then the leader may be reaped.
    fn end_escalation(&self) {
        let mut state = self.lock();
        self.signal(&state, libc::SIGKILL);
        state.escalating = false;
        self.changed.notify_all();
    }
}

fn registry() -> MutexGuard<'static, HashMap<libc::pid_t, Arc<Group>>> {
    static REGISTRY: OnceLock<Mutex<HashMap<libc::pid_t, Arc<Group>>>> = OnceLock::new();
    REGISTRY
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

/// Set by [`kill_all`]: children started in that scope from then on are killed at once.
static CLOSING_COMMANDS: AtomicBool = AtomicBool::new(false);
static CLOSING_EVERYTHING: AtomicBool = AtomicBool::new(false);

/// Held (shared) from just before a child is started until it is in the registry. A child
/// that exists but is not registered yet is invisible to [`kill_all`], and the process may
/// exit before the spawning thread gets to check the closing flags; so `kill_all` takes it
/// exclusively, waiting for spawns in flight (a fork and exec: milliseconds).
static SPAWN_GATE: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Kills (SIGKILL) every live group in `scope`, and every one started in it from now on.
pub fn kill_all(scope: Scope) {
    CLOSING_COMMANDS.store(true, Ordering::SeqCst);
    if scope == Scope::Everything {
        CLOSING_EVERYTHING.store(true, Ordering::SeqCst);
    }
    drop(SPAWN_GATE.write().unwrap_or_else(|p| p.into_inner()));
    let groups: Vec<Arc<Group>> = registry()
        .values()
        .filter(|g| scope == Scope::Everything || g.on_shutdown == OnShutdown::KillAtOnce)
        .cloned()
        .collect();
    for g in groups {
        g.kill();
    }
}

/// How many groups are live (leader not yet reaped).
pub fn live_groups() -> usize {
    registry().len()
}

/// Starts `cmd` as a child we own (see the module doc). The command's stdio settings are used
/// as given, except that `merge_output` replaces stdout and stderr.
pub fn spawn(cmd: &mut Command, opts: SpawnOptions) -> io::Result<OwnedChild> {
    cmd.env("PI_CODING_AGENT", "true").env("AI_AGENT", "pi");
    let confined = opts.sandbox.is_some();
    let new_session = opts.new_session || confined;
    // SAFETY: getpid cannot fail.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the step only makes system calls (close_range or fcntl, setsid, prctl,
    // getppid) and touches no memory of ours.
    unsafe {
        cmd.pre_exec(move || {
            sandbox::cloexec_inherited();
            if new_session && libc::setsid() == -1 {
                return Err(io::Error::last_os_error());
            }
            if confined {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
                if libc::getppid() != parent {
                    // pi's thread ended between the fork and the prctl.
                    libc::_exit(128 + libc::SIGKILL);
                }
            }
            Ok(())
        });
    }
    if !new_session {
        cmd.process_group(0);
    }
    // Sandbox (issue 16): prepared here, enforced by the child after the steps above (its
    // step must be the last: with namespaces it forks, see util::sandbox).
    if let Some(sandbox) = &opts.sandbox {
        sandbox.confine(cmd)?;
    }
    let merged = if opts.merge_output {
        let (read, write) = pipe()?;
        cmd.stdout(Stdio::from(write.try_clone()?))
            .stderr(Stdio::from(write));
        Some(read)
    } else {
        None
    };
    let gate = SPAWN_GATE.read().unwrap_or_else(|p| p.into_inner());
    let spawned = cmd.spawn();
    if merged.is_some() {
        // The command holds its copies of the write end until replaced; the reader would
        // never see EOF while they are open.
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
    }
    let mut child = spawned?;
    let pid = child.id() as libc::pid_t;
    let group = Arc::new(Group {
        pgid: pid,
        on_shutdown: opts.on_shutdown,
        state: Mutex::new(GroupState::default()),
        changed: Condvar::new(),
    });
    registry().insert(pid, Arc::clone(&group));
    drop(gate);
    let (notify, exited) = crossbeam_channel::bounded::<()>(0);
    if let Err(e) = spawn_waiter(pid, Arc::clone(&group), notify) {
        group.kill();
        reap(pid);
        group.lock().reaped = true;
        registry().remove(&pid);
        return Err(e);
    }
    // A shutdown that started while we were spawning did not see this group.
    let closing = match opts.on_shutdown {
        OnShutdown::KillAtOnce => CLOSING_COMMANDS.load(Ordering::SeqCst),
        OnShutdown::OwnerStops => CLOSING_EVERYTHING.load(Ordering::SeqCst),
    };
    if closing {
        group.kill();
    }
    Ok(OwnedChild {
        pid,
        group,
        exited,
        stdin: child.stdin.take(),
        stdout: child.stdout.take(),
        stderr: child.stderr.take(),
        output: merged.map(std::fs::File::from),
    })
}

impl OwnedChild {
    pub fn id(&self) -> u32 {
        self.pid as u32
    }

    /// Disconnects when the leader exits: `select!` on it, then read [`OwnedChild::status`].
    pub fn exited(&self) -> Receiver<()> {
        self.exited.clone()
    }

    /// `Some` once the leader exited (with its status, when it could be read).
    pub fn status(&self) -> Option<Option<ExitStatus>> {
        self.group.lock().status
    }

    /// Waits at most `limit` for the leader to exit.
    pub fn wait_timeout(&self, limit: Duration) -> Option<Option<ExitStatus>> {
        let state = self.group.lock();
        let (state, _) = self
            .group
            .changed
            .wait_timeout_while(state, limit, |s| s.status.is_none())
            .unwrap_or_else(|p| p.into_inner());
        state.status
    }

    /// SIGKILL to the whole group now; false if nothing was sent (the leader is reaped).
    pub fn kill(&self) -> bool {
        self.group.kill()
    }

    /// `sig` to the whole group now; false if nothing was sent (the leader is reaped).
    pub fn signal(&self, sig: i32) -> bool {
        let state = self.group.lock();
        self.group.signal(&state, sig)
    }

    /// SIGTERM to the whole group now and SIGKILL after `grace` (from a detached thread, so
    /// this returns at once); with no grace, SIGKILL at once. False if nothing was sent (the
    /// leader is reaped, or a termination is already under way).
    pub fn terminate(&self, grace: Duration) -> bool {
        if grace.is_zero() {
            return self.kill();
        }
        let mut state = self.group.lock();
        if state.reaped || state.escalating {
            return false;
        }
        let sent = self.group.signal(&state, libc::SIGTERM);
        state.escalating = true;
        drop(state);
        let group = Arc::clone(&self.group);
        let timer = std::thread::Builder::new()
            .name("pi-child-kill".into())
            .stack_size(SMALL_STACK)
            .spawn(move || {
                // A deadline, not a wait for an event: the leader may die at once while the
                // rest of its group is still shutting down.
                std::thread::sleep(grace);
                group.end_escalation();
            });
        if timer.is_err() {
            self.group.end_escalation();
        }
        sent
    }

    /// Whether the leader has been reaped (after which the group is never signalled again).
    pub fn is_reaped(&self) -> bool {
        self.group.lock().reaped
    }
}

/// Learns of the leader's exit, tells `exited` listeners, and reaps it once no kill is pending.
fn spawn_waiter(pid: libc::pid_t, group: Arc<Group>, exited: Sender<()>) -> io::Result<()> {
    std::thread::Builder::new()
        .name("pi-child-wait".into())
        .stack_size(SMALL_STACK)
        .spawn(move || {
            let status = wait_without_reaping(pid);
            let mut state = group.lock();
            state.status = Some(status);
            group.changed.notify_all();
            // Disconnecting is how every `select!` on `exited` hears of it.
            drop(exited);
            while state.escalating {
                state = group.changed.wait(state).unwrap_or_else(|p| p.into_inner());
            }
            reap(pid);
            state.reaped = true;
            group.changed.notify_all();
            drop(state);
            registry().remove(&pid);
        })
        .map(|_| ())
}

fn wait_without_reaping(pid: libc::pid_t) -> Option<ExitStatus> {
    loop {
        // SAFETY: a zeroed siginfo_t is a valid value; waitid only writes into it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid on our own child, writing into `info` which we own.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if rc == 0 {
            return decode_status(&info);
        }
        if io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return None;
        }
    }
}

/// The wait status `waitpid` would have given, rebuilt from `waitid`'s answer.
fn decode_status(info: &libc::siginfo_t) -> Option<ExitStatus> {
    // SAFETY: for a CLD_* answer of waitid, si_status is the field the kernel filled in.
    let status = unsafe { info.si_status() };
    let raw = match info.si_code {
        libc::CLD_EXITED => (status & 0xff) << 8,
        libc::CLD_KILLED => status & 0x7f,
        libc::CLD_DUMPED => (status & 0x7f) | 0x80,
        _ => return None,
    };
    Some(ExitStatus::from_raw(raw))
}

fn reap(pid: libc::pid_t) {
    loop {
        // SAFETY: waitpid on our own child; a null status pointer is allowed.
        let rc = unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
        if rc != -1 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return;
        }
    }
}

/// A close-on-exec pipe: (read end, write end).
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two fds into the array we own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both fds are fresh from pipe2 and owned from here on.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

// ---------------------------------------------------------------------------------------------
// Run a child with a deadline
// ---------------------------------------------------------------------------------------------

/// How [`run`] runs a command.
pub struct RunOptions<'a> {
    /// Stop the child after this long.
    pub timeout: Option<Duration>,
    /// Looked at every 25 ms while the child runs; `true` stops it.
    pub cancelled: &'a dyn Fn() -> bool,
    /// Bytes kept of each output stream; the rest is read and dropped.
    pub max_output: usize,
    /// Between SIGTERM and SIGKILL when the child is stopped (zero: SIGKILL at once).
    pub kill_grace: Duration,
    /// Capture stderr; otherwise it goes to `/dev/null`.
    pub capture_stderr: bool,
    /// Confine the command (see [`SpawnOptions::sandbox`]).
    pub sandbox: Option<Arc<Sandbox>>,
}

impl Default for RunOptions<'_> {
    fn default() -> Self {
        RunOptions {
            timeout: None,
            cancelled: &|| false,
            max_output: usize::MAX,
            kill_grace: Duration::ZERO,
            capture_stderr: true,
            sandbox: None,
        }
    }
}

/// What [`run`] collected.
#[derive(Debug, Default)]
pub struct RunOutput {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// `None` if the child was still running when we gave up waiting, or its status was
    /// unreadable.
    pub status: Option<ExitStatus>,
    /// Stopped because the timeout passed.
    pub timed_out: bool,
    /// Stopped because `cancelled` said so.
    pub cancelled: bool,
    /// Output beyond `max_output` was dropped.
    pub truncated: bool,
}

impl RunOutput {
    /// Stopped by us, for whatever reason.
    pub fn killed(&self) -> bool {
        self.timed_out || self.cancelled
    }
}

/// Runs `cmd` (stdin from `/dev/null`) until it exits, the timeout passes or `cancelled`
/// says so; then its whole group is stopped. Never waits on a pipe a stray grandchild keeps
/// open: output is taken as it stands shortly after the child exits.
pub fn run(cmd: &mut Command, opts: &RunOptions) -> io::Result<RunOutput> {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped());
    cmd.stderr(if opts.capture_stderr {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    let options = SpawnOptions {
        sandbox: opts.sandbox.clone(),
        ..SpawnOptions::default()
    };
    let mut child = spawn(cmd, options)?;
    let stdout = Capture::start(child.stdout.take(), opts.max_output);
    let stderr = Capture::start(child.stderr.take(), opts.max_output);
    let deadline = opts.timeout.and_then(|t| Instant::now().checked_add(t));
    let exited = child.exited();
    let mut out = RunOutput::default();
    loop {
        let now = Instant::now();
        if (opts.cancelled)() {
            out.cancelled = true;
            break;
        }
        if deadline.is_some_and(|d| now >= d) {
            out.timed_out = true;
            break;
        }
        let wait = deadline.map_or(CANCEL_POLL, |d| CANCEL_POLL.min(d - now));
        if let Err(RecvTimeoutError::Disconnected) = exited.recv_timeout(wait) {
            break;
        }
    }
    if out.killed() {
        child.terminate(opts.kill_grace);
        child.wait_timeout(opts.kill_grace + EXIT_STDIO_GRACE);
    }
    out.status = child.status().flatten();
    let until = Instant::now() + EXIT_STDIO_GRACE;
    let (o, o_cut) = stdout.finish(until);
    let (e, e_cut) = stderr.finish(until);
    out.stdout = o;
    out.stderr = e;
    out.truncated = o_cut || e_cut;
    Ok(out)
}

/// One output stream read on its own thread into a capped buffer.
struct Capture {
    buf: Arc<Mutex<(Vec<u8>, bool)>>,
    eof: Receiver<()>,
}

impl Capture {
    fn start(pipe: Option<impl Read + Send + 'static>, max: usize) -> Capture {
        let buf = Arc::new(Mutex::new((Vec::new(), false)));
        let (done, eof) = crossbeam_channel::bounded::<()>(0);
        if let Some(mut pipe) = pipe {
            let shared = Arc::clone(&buf);
            // Detached: it ends at EOF, which comes once every holder of the pipe is gone.
            let _ = std::thread::Builder::new()
                .name("pi-child-output".into())
                .spawn(move || {
                    let _done = done;
                    let mut chunk = vec![0u8; 64 * 1024];
                    loop {
                        match pipe.read(&mut chunk) {
                            Ok(0) => return,
                            Ok(n) => {
                                let mut b = shared.lock().unwrap_or_else(|p| p.into_inner());
                                let room = max.saturating_sub(b.0.len());
                                b.0.extend_from_slice(&chunk[..n.min(room)]);
                                b.1 |= n > room;
                            }
                            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                            Err(_) => return,
                        }
                    }
                });
        }
        Capture { buf, eof }
    }

    /// What was read by `until` (or by EOF, if sooner), and whether some was dropped.
    fn finish(self, until: Instant) -> (Vec<u8>, bool) {
        let _ = self
            .eof
            .recv_timeout(until.saturating_duration_since(Instant::now()));
        let mut b = self.buf.lock().unwrap_or_else(|p| p.into_inner());
        (std::mem::take(&mut b.0), b.1)
    }
}

#[cfg(test)]
#[path = "process_tests.rs"]
mod tests;
