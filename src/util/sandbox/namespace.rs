//! A command's own user, mount and PID namespaces, where the kernel lets an unprivileged user
//! have them. Inside, the command sees the whole file system mounted read-only, except the
//! writable roots and `$TMPDIR` (bound back read-write from the directories pi opened when it
//! started) and, on top of those, the protected paths (each root's `.git`, pi's agent
//! directory) bound read-only. So `chmod`, `utime`, `setxattr` and `truncate` — which Landlock
//! mostly does not check — fail outside the roots, and a root does not need splitting around
//! its `.git`. The command runs as PID 2 under a small waiting PID 1; when the command ends,
//! PID 1 exits and the kernel kills whatever the command left behind (`setsid`, double forks).
//!
//! The user and mount namespaces (the [`View`]) are built once, in a forked child, and kept by
//! their descriptors; every command joins them (`setns`) and makes only its PID namespace, so
//! no mount namespace is copied or torn down per command. Three processes per command: pi's
//! child (outside the PID namespace: it joins, forks, and exits with the command's status as
//! soon as it has it, so pi sees the command's exit code or signal as before), PID 1 (waits
//! for the command, reaps orphans, dies with its parent), and the command. Everything after
//! the fork only makes system calls on buffers prepared in the parent; nothing allocates.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::roots::{identity, Root};

// New system calls: the same numbers on x86_64 and aarch64 (the unified table from 424 on).
const SYS_OPEN_TREE: libc::c_long = 428;
const SYS_MOVE_MOUNT: libc::c_long = 429;
pub(super) const SYS_CLOSE_RANGE: libc::c_long = 436;
const SYS_OPENAT2: libc::c_long = 437;
const SYS_MOUNT_SETATTR: libc::c_long = 442;

const OPEN_TREE_CLONE: u32 = 1;
const OPEN_TREE_CLOEXEC: u32 = libc::O_CLOEXEC as u32;
const AT_RECURSIVE: u32 = 0x8000;
const AT_EMPTY_PATH: u32 = libc::AT_EMPTY_PATH as u32;
const MOVE_MOUNT_F_EMPTY_PATH: u32 = 0x4;
const MOVE_MOUNT_T_EMPTY_PATH: u32 = 0x40;
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
const RESOLVE_NO_SYMLINKS: u64 = 0x04;
const RESOLVE_BENEATH: u64 = 0x08;

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

/// A directory to bind back read-write: its path in the command's mount namespace and the
/// identity of the directory pi opened, which the path must still lead to (without a
/// symlink) or the directory stays read-only.
#[derive(Debug)]
struct Bind {
    path: CString,
    identity: (u64, u64),
    /// Relative paths beneath it to bind read-only on top (`.git`, the agent directory).
    protected: Vec<CString>,
}

/// What the shared view is built from, prepared in the parent.
#[derive(Debug)]
pub struct Plan {
    setgroups: &'static [u8],
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    binds: Vec<Bind>,
    /// One (resolved directory, detached clone) slot per bind, filled in by the child.
    slots: Vec<(RawFd, RawFd)>,
}

impl Plan {
    /// The plan for `writable` directories (roots and `$TMPDIR`) with `protected` real paths.
    pub fn new<'a>(writable: impl Iterator<Item = &'a Root>, protected: &[&Path]) -> Plan {
        let mut roots: Vec<&Root> = writable.collect();
        crate::util::sort::sort_by_key(&mut roots, |r| r.path.as_os_str().len());
        let mut binds: Vec<Bind> = Vec::new();
        let mut kept: Vec<&Path> = Vec::new();
        for root in roots {
            // A root inside another is bound with it.
            if kept.iter().any(|k| root.path.starts_with(k)) {
                continue;
            }
            let (Ok(id), Ok(path)) = (
                root.identity(),
                CString::new(root.path.as_os_str().as_bytes()),
            ) else {
                continue;
            };
            kept.push(&root.path);
            binds.push(Bind {
                path,
                identity: id,
                protected: Vec::new(),
            });
        }
        for p in protected {
            let Some(i) = kept.iter().position(|k| p.starts_with(k)) else {
                continue; // outside every writable root: read-only already
            };
            let Ok(rel) = p.strip_prefix(kept[i]) else {
                continue;
            };
            if let Ok(rel) = CString::new(rel.as_os_str().as_bytes()) {
                binds[i].protected.push(rel);
            }
        }
        // SAFETY: geteuid/getegid cannot fail.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let slots = vec![(-1, -1); binds.len()];
        Plan {
            setgroups: b"deny",
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            binds,
            slots,
        }
    }
}

fn check(rc: libc::c_long) -> io::Result<libc::c_long> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

pub(super) fn close(fd: RawFd) {
    if fd >= 0 {
        // SAFETY: closing a descriptor this process opened in the child.
        unsafe { libc::close(fd) };
    }
}

/// Writes `data` to a `/proc/self` file (a NUL-terminated path).
fn write_proc(path: &[u8], data: &[u8]) -> io::Result<()> {
    // SAFETY: `path` is NUL-terminated; open/write/close are async-signal-safe.
    unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        let err = io::Error::last_os_error();
        libc::close(fd);
        if n != data.len() as isize {
            return Err(err);
        }
    }
    Ok(())
}

/// `path` (absolute) opened with `O_PATH` in this mount namespace, relative to `dir` and
/// beneath it when `dir` is given, never following a symlink.
fn open_no_symlinks(dir: Option<RawFd>, path: &CString) -> io::Result<RawFd> {
    let how = OpenHow {
        flags: (libc::O_PATH | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: RESOLVE_NO_SYMLINKS
            | RESOLVE_NO_MAGICLINKS
            | if dir.is_some() { RESOLVE_BENEATH } else { 0 },
    };
    // SAFETY: openat2 with a NUL-terminated path and an open_how we own.
    let fd = check(unsafe {
        libc::syscall(
            SYS_OPENAT2,
            dir.unwrap_or(libc::AT_FDCWD),
            path.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    })?;
    Ok(fd as RawFd)
}

/// A detached copy of the mount tree at `fd`.
fn clone_tree(fd: RawFd) -> io::Result<RawFd> {
    // SAFETY: open_tree on a descriptor we hold, with an empty path.
    let t = check(unsafe {
        libc::syscall(
            SYS_OPEN_TREE,
            fd,
            c"".as_ptr(),
            OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH,
        )
    })?;
    Ok(t as RawFd)
}

fn set_read_only(dir: RawFd, path: &std::ffi::CStr, flags: u32) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: MOUNT_ATTR_RDONLY,
        attr_clr: 0,
        propagation: libc::MS_PRIVATE,
        userns_fd: 0,
    };
    // SAFETY: mount_setattr with a NUL-terminated path and a mount_attr we own.
    check(unsafe {
        libc::syscall(
            SYS_MOUNT_SETATTR,
            dir,
            path.as_ptr(),
            flags | AT_RECURSIVE,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    })?;
    Ok(())
}

/// Attaches the detached tree `tree` on top of the directory (or file) `onto`.
fn attach(tree: RawFd, onto: RawFd) -> io::Result<()> {
    // SAFETY: move_mount between two descriptors we hold, with empty paths.
    check(unsafe {
        libc::syscall(
            SYS_MOVE_MOUNT,
            tree,
            c"".as_ptr(),
            onto,
            c"".as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH,
        )
    })?;
    Ok(())
}

/// A new user namespace (the user mapped to itself), with `more` namespaces.
fn enter_user(plan: &Plan, more: libc::c_int) -> io::Result<()> {
    // SAFETY: unshare with flags only.
    if unsafe { libc::unshare(libc::CLONE_NEWUSER | more) } != 0 {
        return Err(io::Error::last_os_error());
    }
    write_proc(b"/proc/self/setgroups\0", plan.setgroups)?;
    write_proc(b"/proc/self/uid_map\0", &plan.uid_map)?;
    write_proc(b"/proc/self/gid_map\0", &plan.gid_map)
}

/// The user and mount namespaces every command joins, built once (and again when a protected
/// path appears or goes): held by their descriptors, with no process in them between
/// commands. Sharing one view keeps a mount namespace's setup and teardown (a copy of every
/// mount, and an RCU grace period when it is unmounted) off each command's path.
#[derive(Debug)]
pub struct View {
    user: OwnedFd,
    mnt: OwnedFd,
    /// The protected paths that existed when the view was built (the ones it has mounts for),
    /// with their device and inode.
    pub protected: Vec<(PathBuf, (u64, u64))>,
}

impl View {
    /// Builds the view of `plan` in a forked child and keeps its namespaces.
    pub fn build(plan: &mut Plan, protected: Vec<(PathBuf, (u64, u64))>) -> io::Result<View> {
        let mut sync = [-1; 2];
        // SAFETY: pipe2 into a local array.
        if unsafe { libc::pipe2(sync.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let [ready, report] = sync;
        // SAFETY: the child only makes system calls on `plan`, prepared before, and never
        // returns; the parent kills it once it has the namespaces.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            let e = io::Error::last_os_error();
            close(ready);
            close(report);
            return Err(e);
        }
        if pid == 0 {
            close(ready);
            let code: i32 = match enter_user(plan, 0).and_then(|_| enter_from(plan)) {
                Ok(()) => 0,
                Err(e) => e.raw_os_error().unwrap_or(libc::EINVAL),
            };
            // SAFETY: write from a local, then wait to be killed.
            unsafe {
                libc::write(report, code.to_ne_bytes().as_ptr().cast(), 4);
                loop {
                    libc::pause();
                }
            }
        }
        close(report);
        let mut bytes = [0u8; 4];
        let n = loop {
            // SAFETY: read into a local buffer.
            let n = unsafe { libc::read(ready, bytes.as_mut_ptr().cast(), 4) };
            if n >= 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                break n;
            }
        };
        close(ready);
        let code = i32::from_ne_bytes(bytes);
        let opened = if n != 4 {
            Err(io::Error::other("the sandbox's view builder died"))
        } else if code != 0 {
            Err(io::Error::from_raw_os_error(code))
        } else {
            let open =
                |ns: &str| std::fs::File::open(format!("/proc/{pid}/ns/{ns}")).map(OwnedFd::from);
            open("user").and_then(|user| Ok((user, open("mnt")?)))
        };
        // SAFETY: kill and reap our own child.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        wait_for(pid);
        let (user, mnt) = opened?;
        Ok(View {
            user,
            mnt,
            protected,
        })
    }
}

/// In pi's child: joins the view's namespaces, makes a new PID namespace (the next fork is
/// PID 1, see [`fork_command`]) and enters `cwd` again through the view — if it still leads
/// (without symlinks) to the directory the child stands in; otherwise the command starts at
/// the view's root.
pub fn join(view: &View, cwd: Option<&CString>) -> io::Result<()> {
    // SAFETY: open(2) of "." with constant flags.
    let here = unsafe {
        libc::open(
            c".".as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    // SAFETY: setns and unshare on descriptors we hold, in a single-threaded child.
    let joined = unsafe {
        libc::setns(view.user.as_raw_fd(), libc::CLONE_NEWUSER) == 0
            && libc::setns(view.mnt.as_raw_fd(), libc::CLONE_NEWNS) == 0
            && libc::unshare(libc::CLONE_NEWPID) == 0
    };
    let result = if joined {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    };
    if let (true, Some(path), Ok(id)) = (joined, cwd, identity(here)) {
        if let Ok(fd) = open_no_symlinks(None, path) {
            if identity(fd).ok() == Some(id) {
                // SAFETY: fchdir to a directory we hold.
                unsafe { libc::fchdir(fd) };
            }
            close(fd);
        }
    }
    close(here);
    result
}

fn enter_from(plan: &mut Plan) -> io::Result<()> {
    // SAFETY: unshare with flags only.
    if unsafe { libc::unshare(libc::CLONE_NEWNS) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // Copies of the writable trees, taken while they are still writable. A root whose path no
    // longer leads (without symlinks) to the directory pi opened stays read-only.
    for (bind, slot) in plan.binds.iter().zip(plan.slots.iter_mut()) {
        let Ok(fd) = open_no_symlinks(None, &bind.path) else {
            continue;
        };
        if identity(fd).ok() != Some(bind.identity) {
            close(fd);
            continue;
        }
        match clone_tree(fd) {
            Ok(tree) => *slot = (fd, tree),
            Err(e) => {
                close(fd);
                return Err(e);
            }
        }
    }
    set_read_only(libc::AT_FDCWD, c"/", 0)?;
    for (bind, slot) in plan.binds.iter().zip(plan.slots.iter_mut()) {
        let (fd, tree) = std::mem::replace(slot, (-1, -1));
        if fd < 0 {
            continue;
        }
        let attached = attach(tree, fd);
        close(tree);
        close(fd);
        attached?;
        if bind.protected.is_empty() {
            continue;
        }
        // The root again, now through the writable mount on top of it.
        let root = open_no_symlinks(None, &bind.path)?;
        for rel in &bind.protected {
            let Ok(p) = open_no_symlinks(Some(root), rel) else {
                continue; // not there (or a symlink, which leads nowhere writable)
            };
            let done = clone_tree(p).and_then(|t| {
                let r = set_read_only(t, c"", AT_EMPTY_PATH).and_then(|_| attach(t, p));
                close(t);
                r
            });
            close(p);
            if let Err(e) = done {
                close(root);
                return Err(e);
            }
        }
        close(root);
    }
    Ok(())
}

/// Sets every catchable signal but SIGCHLD to `action` (pi's own handlers must not run in a
/// forked copy of pi).
pub(super) fn set_signals(action: libc::sighandler_t) {
    for sig in 1..32 {
        if sig == libc::SIGKILL || sig == libc::SIGSTOP {
            continue;
        }
        let a = if sig == libc::SIGCHLD {
            libc::SIG_DFL
        } else {
            action
        };
        // SAFETY: signal(2) with SIG_DFL or SIG_IGN.
        unsafe { libc::signal(sig, a) };
    }
}

/// Closes every descriptor but `keep` (all of them for -1).
pub(super) fn close_all_but(keep: RawFd) {
    // SAFETY: close_range (or close, before Linux 5.11) on this process's own table.
    unsafe {
        let low = if keep > 0 {
            libc::syscall(SYS_CLOSE_RANGE, 0u32, (keep - 1) as u32, 0u32)
        } else {
            0
        };
        let high = libc::syscall(SYS_CLOSE_RANGE, (keep + 1) as u32, u32::MAX, 0u32);
        if low != 0 || high != 0 {
            let mut limit = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            let max = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
                limit.rlim_cur.min(1 << 20) as RawFd
            } else {
                1024
            };
            for fd in (0..max).filter(|&fd| fd != keep) {
                libc::close(fd);
            }
        }
    }
}

/// Exits the way the wait status `status` says a process ended.
pub(super) fn exit_like(status: libc::c_int) -> ! {
    // SAFETY: only exit paths and signal calls on this process.
    unsafe {
        if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            let none = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &none);
            libc::signal(sig, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, sig);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::kill(libc::getpid(), sig);
            libc::_exit(128 + sig);
        }
        libc::_exit(if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            1
        })
    }
}

pub(super) fn wait_for(pid: libc::pid_t) -> (libc::pid_t, libc::c_int) {
    loop {
        let mut status = 0;
        // SAFETY: waitpid writing into a local.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r >= 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return (r, status);
        }
    }
}

/// After [`enter`]: forks PID 1, which forks the command. Returns only in the command's
/// process (to go on to exec); pi's child and PID 1 wait, then exit as the command did.
pub fn fork_command(pi: libc::pid_t) -> io::Result<()> {
    // Entering a user namespace cleared the parent-death signal util::process set: again.
    // SAFETY: prctl and getppid with integer arguments.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        if libc::getppid() != pi {
            libc::_exit(128 + libc::SIGKILL);
        }
    }
    let mut pipe = [-1; 2];
    // SAFETY: pipe2 into a local array.
    if unsafe { libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let [status_read, status_write] = pipe;
    // SAFETY: fork in a single-threaded child; both sides only make system calls.
    let init = unsafe { libc::fork() };
    if init < 0 {
        return Err(io::Error::last_os_error());
    }
    if init == 0 {
        // PID 1: dies with pi's child, forks the command.
        // SAFETY: prctl and close with integer arguments.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            libc::close(status_read);
        }
        // SAFETY: as above.
        let command = unsafe { libc::fork() };
        if command == 0 {
            close(status_write);
            return Ok(());
        }
        set_signals(libc::SIG_DFL);
        close_all_but(status_write);
        if command < 0 {
            // SAFETY: leaving PID 1.
            unsafe { libc::_exit(127) };
        }
        loop {
            let (pid, status) = wait_for(-1);
            if pid == command || pid < 0 {
                if pid == command {
                    let bytes = status.to_ne_bytes();
                    // SAFETY: write from a local buffer.
                    unsafe { libc::write(status_write, bytes.as_ptr().cast(), bytes.len()) };
                }
                // SAFETY: leaving PID 1 ends the namespace: the kernel kills the rest.
                unsafe { libc::_exit(0) };
            }
        }
    }
    // pi's child: stops, as a command, only when SIGKILLed; mirrors the command's end. It
    // does not wait for PID 1 once the status is in: the namespaces' teardown (killing what
    // the command left, unmounting) goes on without holding pi up.
    set_signals(libc::SIG_IGN);
    close_all_but(status_read);
    let mut bytes = [0u8; 4];
    let n = loop {
        // SAFETY: read into a local buffer.
        let n = unsafe { libc::read(status_read, bytes.as_mut_ptr().cast(), bytes.len()) };
        if n >= 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            break n;
        }
    };
    if n == 4 {
        exit_like(libc::c_int::from_ne_bytes(bytes));
    }
    let (_, init_status) = wait_for(init);
    exit_like(init_status)
}

/// Whether this kernel gives an unprivileged user the namespaces (and the mount calls) a
/// command's read-only view needs: tried once, in a forked child, at start-up.
pub fn available() -> Result<(), String> {
    if std::env::var_os("PI_SANDBOX_NO_NAMESPACES").is_some() {
        return Err("disabled by PI_SANDBOX_NO_NAMESPACES".into());
    }
    let mut plan = Plan::new(std::iter::empty(), &[]);
    // SAFETY: the child only makes system calls on `plan`, prepared above, then _exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork: {}", io::Error::last_os_error()));
    }
    if pid == 0 {
        let code = match enter_user(&plan, libc::CLONE_NEWPID).and_then(|_| enter_from(&mut plan)) {
            Ok(()) => 0,
            Err(e) => e.raw_os_error().unwrap_or(255).clamp(1, 255),
        };
        // SAFETY: leaving the probe child.
        unsafe { libc::_exit(code) };
    }
    let (_, status) = wait_for(pid);
    match libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)) {
        Some(0) => Ok(()),
        Some(errno) => Err(format!(
            "the kernel refuses an unprivileged user, mount and PID namespace ({})",
            io::Error::from_raw_os_error(errno)
        )),
        None => Err("the namespace probe died".into()),
    }
}
