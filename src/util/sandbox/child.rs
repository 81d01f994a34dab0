//! What every confined child does between fork and exec, with or without namespaces: start
//! with only the descriptors it is given, drop every capability, and — without namespaces —
//! fork the command under pi's child as its subreaper, which kills what the command leaves
//! behind. Only system calls on memory prepared before the fork; nothing allocates.

use std::io;

use super::namespace::{close, close_all_but, exit_like, set_signals, wait_for, SYS_CLOSE_RANGE};

const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;

/// In a child between fork and exec: every descriptor from 3 up close-on-exec. Marked rather
/// than closed, so std's own exec-error pipe still works. Async-signal-safe.
pub fn cloexec_inherited() {
    // SAFETY: close_range on this process's own table, integer arguments only.
    let rc = unsafe { libc::syscall(SYS_CLOSE_RANGE, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC) };
    if rc == 0 {
        return;
    }
    // Before Linux 5.11: one fcntl per possible descriptor.
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into a local; fcntl takes integers.
    unsafe {
        let max = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur.min(1 << 20) as libc::c_int
        } else {
            1024
        };
        for fd in 3..max {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 && flags & libc::FD_CLOEXEC == 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}

/// Without namespaces: forks the command with pi's child as its subreaper. Returns only in the
/// command's process; pi's child waits for it, then kills (SIGKILL) whatever the command left
/// behind — orphans are reparented to it — and exits as the command did. Where the kernel
/// does not list a process's children (`CONFIG_PROC_CHILDREN`), leftovers are left alone.
pub fn fork_command_reaped(pi: libc::pid_t) -> io::Result<()> {
    // SAFETY: prctl, getpid, fork with integer arguments, in a single-threaded child.
    let (reaper, command) = unsafe {
        if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::getppid() != pi {
            libc::_exit(128 + libc::SIGKILL);
        }
        (libc::getpid(), libc::fork())
    };
    if command < 0 {
        return Err(io::Error::last_os_error());
    }
    if command == 0 {
        // SAFETY: prctl and getppid with integer arguments.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            if libc::getppid() != reaper {
                libc::_exit(128 + libc::SIGKILL);
            }
        }
        return Ok(());
    }
    set_signals(libc::SIG_IGN);
    close_all_but(-1);
    let (_, status) = wait_for(command);
    // SAFETY: open(2) of a constant path.
    let children = unsafe {
        libc::open(
            c"/proc/thread-self/children".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        )
    };
    if children >= 0 {
        close(children);
        loop {
            kill_children();
            if wait_for(-1).0 < 0 {
                break; // no child left
            }
        }
    }
    exit_like(status)
}

/// SIGKILLs every child listed in `/proc/thread-self/children` (still ours until reaped, so
/// no id can have been reused).
fn kill_children() {
    // SAFETY: open/read/kill/close on local buffers.
    unsafe {
        let fd = libc::open(
            c"/proc/thread-self/children".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return;
        }
        let mut buf = [0u8; 1024];
        let mut pid: libc::pid_t = 0;
        loop {
            let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
            if n <= 0 {
                break;
            }
            for &b in &buf[..n as usize] {
                if b.is_ascii_digit() {
                    pid = pid
                        .saturating_mul(10)
                        .saturating_add(libc::pid_t::from(b - b'0'));
                } else {
                    if pid > 0 {
                        libc::kill(pid, libc::SIGKILL);
                    }
                    pid = 0;
                }
            }
        }
        if pid > 0 {
            libc::kill(pid, libc::SIGKILL);
        }
        libc::close(fd);
    }
}

/// Drops every capability for good: the bounding and ambient sets, root's special treatment
/// at exec (securebits), and the current sets. In a user namespace the process holds every
/// capability there until this; as root outside one, too. Errors of the privileged steps are
/// ignored: without the capability there is nothing to drop.
pub fn drop_capabilities() -> io::Result<()> {
    const SECURE_ALL: libc::c_ulong = 0xEF; // NOROOT, NO_SETUID_FIXUP, KEEP_CAPS, NO_CAP_AMBIENT_RAISE + locks
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    // SAFETY: prctl with integer arguments; capset with structs we own.
    unsafe {
        for cap in 0..64 {
            libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        libc::prctl(libc::PR_SET_SECUREBITS, SECURE_ALL, 0, 0, 0);
        let header = Header {
            version: 0x2008_0522, // _LINUX_CAPABILITY_VERSION_3
            pid: 0,
        };
        let data = [
            Data {
                effective: 0,
                permitted: 0,
                inheritable: 0,
            },
            Data {
                effective: 0,
                permitted: 0,
                inheritable: 0,
            },
        ];
        if libc::syscall(libc::SYS_capset, &header as *const Header, data.as_ptr()) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
