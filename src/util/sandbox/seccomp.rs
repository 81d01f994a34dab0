//! The seccomp filter: a short classic-BPF program, assembled here by hand, that refuses (with
//! EACCES) the system calls Landlock does not cover:
//!
//! * `socket` for every address family but `AF_UNIX` and `AF_NETLINK` — no internet (or raw,
//!   or any other) socket, while local sockets keep working — and `io_uring_setup`, since an
//!   io_uring can open sockets without calling `socket`;
//! * `truncate`, when the kernel's Landlock is older than ABI 3 and does not check it;
//! * `ioctl(TIOCSTI)` and `ioctl(TIOCLINUX)`, which push keystrokes into a terminal (a command
//!   has no controlling terminal, but it may hold a descriptor of one): always.
//!
//! Everything else is allowed. 32-bit calls into a 64-bit kernel (i386 on x86_64, arm on
//! aarch64, x32) get the same treatment; `socketcall`, whose arguments sit in memory a filter
//! cannot read, is refused outright.

use std::io;

/// What the filter refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    pub block_network: bool,
    pub block_truncate: bool,
    /// Refuse `ioctl(TIOCSTI)` and `ioctl(TIOCLINUX)`.
    pub block_tty_injection: bool,
}

/// System call numbers of one architecture (`None`: the call does not exist there).
struct Calls {
    arch: u32,
    socket: u32,
    socketcall: Option<u32>,
    truncate: &'static [u32],
    ioctl: u32,
}

const IO_URING_SETUP: u32 = 425; // the same number on every architecture
const X32_BIT: u32 = 0x4000_0000;

#[cfg(target_arch = "x86_64")]
const NATIVE: Calls = Calls {
    arch: 0xC000_003E, // AUDIT_ARCH_X86_64
    socket: 41,
    socketcall: None,
    truncate: &[76],
    ioctl: 16,
};
#[cfg(target_arch = "x86_64")]
const COMPAT: Calls = Calls {
    arch: 0x4000_0003, // AUDIT_ARCH_I386
    socket: 359,
    socketcall: Some(102),
    truncate: &[92, 193],
    ioctl: 54,
};
#[cfg(target_arch = "aarch64")]
const NATIVE: Calls = Calls {
    arch: 0xC000_00B7, // AUDIT_ARCH_AARCH64
    socket: 198,
    socketcall: None,
    truncate: &[45],
    ioctl: 29,
};
#[cfg(target_arch = "aarch64")]
const COMPAT: Calls = Calls {
    arch: 0x4000_0028, // AUDIT_ARCH_ARM
    socket: 281,
    socketcall: Some(102),
    truncate: &[92, 193],
    ioctl: 54,
};

/// Whether this build knows the system call numbers of its architecture.
pub const ARCH_SUPPORTED: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));

// Classic BPF opcodes (linux/filter.h) and seccomp return values.
const LD_W_ABS: u16 = 0x20; // A = 32-bit word at offset k of seccomp_data
const ALU_AND_K: u16 = 0x54; // A &= k
const JEQ_K: u16 = 0x15; // if A == k goto jt else goto jf
const RET_K: u16 = 0x06; // return k
const RET_ALLOW: u32 = 0x7fff_0000;
const RET_ERRNO: u32 = 0x0005_0000;

// Offsets into struct seccomp_data { int nr; u32 arch; u64 ip; u64 args[6]; } (little endian:
// the low half of args[0], which is all an `int domain` is, comes first).
const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
const OFF_ARG0: u32 = 16;
/// The low half of args[1]: the kernel reads an ioctl request as a 32-bit `unsigned int`, so
/// the high half is ignored here as it is there.
const OFF_ARG1: u32 = 24;
const TIOCSTI: u32 = 0x5412;
const TIOCLINUX: u32 = 0x541C;

/// Whether the kernel has seccomp filters with an errno action.
pub fn available() -> Result<(), String> {
    if !ARCH_SUPPORTED {
        return Err("pi's seccomp filter does not know this CPU architecture".into());
    }
    // SAFETY: PR_GET_SECCOMP takes no pointers.
    if unsafe { libc::prctl(libc::PR_GET_SECCOMP) } < 0 {
        return Err("this kernel has no seccomp (CONFIG_SECCOMP)".into());
    }
    let action: u32 = RET_ERRNO;
    // SAFETY: SECCOMP_GET_ACTION_AVAIL reads one u32 we own.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_GET_ACTION_AVAIL,
            0u32,
            &action as *const u32,
        )
    };
    if rc != 0 {
        return Err(format!(
            "this kernel has no seccomp filters with an errno action ({})",
            io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// A jump target while assembling.
#[derive(Clone, Copy, PartialEq)]
enum Label {
    Allow,
    Deny,
    Socket,
    Ioctl,
    Compat,
}

/// A tiny assembler: jumps name labels and are resolved once every label is placed.
struct Asm {
    code: Vec<libc::sock_filter>,
    jumps: Vec<(usize, Option<Label>, Option<Label>)>,
    labels: Vec<(Label, usize)>,
}

impl Asm {
    fn op(&mut self, code: u16, k: u32) {
        self.code.push(libc::sock_filter {
            code,
            jt: 0,
            jf: 0,
            k,
        });
    }

    /// `if A == k` jump to `t` (else `f`); `None` falls through to the next instruction.
    fn jeq(&mut self, k: u32, t: Option<Label>, f: Option<Label>) {
        self.jumps.push((self.code.len(), t, f));
        self.op(JEQ_K, k);
    }

    fn label(&mut self, l: Label) {
        self.labels.push((l, self.code.len()));
    }

    fn finish(mut self) -> Vec<libc::sock_filter> {
        for (at, t, f) in std::mem::take(&mut self.jumps) {
            let offset = |l: Option<Label>| -> u8 {
                let to = l.and_then(|l| self.labels.iter().find(|(x, _)| *x == l));
                // Jumps only go forward and the program is a few dozen instructions long.
                to.map_or(0, |&(_, to)| u8::try_from(to - at - 1).unwrap_or(0))
            };
            let (jt, jf) = (offset(t), offset(f));
            self.code[at].jt = jt;
            self.code[at].jf = jf;
        }
        self.code
    }
}

/// The filter program for `policy` (empty when it refuses nothing).
pub fn program(policy: Policy) -> Vec<libc::sock_filter> {
    if !ARCH_SUPPORTED
        || !(policy.block_network || policy.block_truncate || policy.block_tty_injection)
    {
        return Vec::new();
    }
    build(policy)
}

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn build(policy: Policy) -> Vec<libc::sock_filter> {
    use Label::*;
    let mut a = Asm {
        code: Vec::new(),
        jumps: Vec::new(),
        labels: Vec::new(),
    };
    a.op(LD_W_ABS, OFF_ARCH);
    a.jeq(NATIVE.arch, None, Some(Compat));
    a.op(LD_W_ABS, OFF_NR);
    if cfg!(target_arch = "x86_64") {
        // x32 calls are the x86_64 numbers with bit 30 set.
        a.op(ALU_AND_K, !X32_BIT);
    }
    calls(&mut a, &NATIVE, policy);
    a.label(Compat);
    a.jeq(COMPAT.arch, None, Some(Deny)); // an architecture we do not know: refuse
    a.op(LD_W_ABS, OFF_NR);
    calls(&mut a, &COMPAT, policy);
    if policy.block_network {
        a.label(Socket);
        a.op(LD_W_ABS, OFF_ARG0);
        a.jeq(libc::AF_UNIX as u32, Some(Allow), None);
        a.jeq(libc::AF_NETLINK as u32, Some(Allow), Some(Deny));
    }
    if policy.block_tty_injection {
        a.label(Ioctl);
        a.op(LD_W_ABS, OFF_ARG1);
        a.jeq(TIOCSTI, Some(Deny), None);
        a.jeq(TIOCLINUX, Some(Deny), Some(Allow));
    }
    a.label(Allow);
    a.op(RET_K, RET_ALLOW);
    a.label(Deny);
    a.op(RET_K, RET_ERRNO | libc::EACCES as u32);
    a.finish()
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn build(_policy: Policy) -> Vec<libc::sock_filter> {
    Vec::new()
}

/// With the call number in A: the checks for one architecture, ending in "allow".
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn calls(a: &mut Asm, arch: &Calls, policy: Policy) {
    use Label::*;
    if policy.block_network {
        a.jeq(arch.socket, Some(Socket), None);
        if let Some(n) = arch.socketcall {
            a.jeq(n, Some(Deny), None);
        }
        a.jeq(IO_URING_SETUP, Some(Deny), None);
    }
    if policy.block_truncate {
        for &n in arch.truncate {
            a.jeq(n, Some(Deny), None);
        }
    }
    if policy.block_tty_injection {
        a.jeq(arch.ioctl, Some(Ioctl), None);
    }
    a.op(RET_K, RET_ALLOW);
}

/// Installs `filter` on the calling thread (the child, between fork and exec, after
/// no_new_privs is set). Async-signal-safe: builds the header on the stack, one system call.
pub fn install(filter: &[libc::sock_filter]) -> io::Result<()> {
    let prog = libc::sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: `prog` points at a filter that outlives the call; the kernel copies it.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            0u32,
            &prog as *const libc::sock_fprog,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
