//! Linux Landlock through its three raw system calls: which ABI the kernel speaks, and building
//! a ruleset (read everything, write only beneath the given roots) in the parent, to be
//! enforced in the child with [`restrict_self`].
//!
//! Landlock rules only ever allow, and a right granted on a directory holds for everything
//! beneath it. So a protected path inside a writable root (a repository's `.git`, pi's agent
//! directory) is kept read-only by *splitting* the root: the directories on the way down to it
//! get no write right of their own, and each of their other entries gets the rights instead.
//! The price is that entries cannot be created, removed or renamed directly in those split
//! directories (the workspace root of a git repository, for one). Where the command gets its
//! own mount namespace (`namespace.rs`), protected paths are read-only mounts instead and no
//! root is split.
//!
//! Roots are given as descriptors opened when pi started (`roots.rs`), and the entries of a
//! split root are opened relative to it (`openat`, never following a symlink): no path a
//! command could have swapped is resolved again.
//!
//! On ABI 6 and later the ruleset also scopes abstract Unix sockets and signals: a command can
//! neither connect to an abstract socket nor signal a process outside its own sandbox.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

// Access rights (linux/landlock.h). Bits 0–12 exist since ABI 1.
const EXECUTE: u64 = 1 << 0;
const WRITE_FILE: u64 = 1 << 1;
const READ_FILE: u64 = 1 << 2;
const READ_DIR: u64 = 1 << 3;
const MAKE_CHAR: u64 = 1 << 6;
const MAKE_BLOCK: u64 = 1 << 11;
/// Linking or renaming across directories (ABI 2; before it, always refused with EXDEV).
const REFER: u64 = 1 << 13;
/// truncate(2) and O_TRUNC (ABI 3; before it, truncate(2) is not checked at all).
const TRUNCATE: u64 = 1 << 14;
const ABI1_ALL: u64 = (1 << 13) - 1;

/// Scopes (ABI 6): abstract Unix sockets and signals stay inside the sandbox.
const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
const SCOPE_SIGNAL: u64 = 1 << 1;

const CREATE_RULESET_VERSION: u32 = 1;
const RULE_PATH_BENEATH: u32 = 1;

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    /// ABI 4; zero: network rules are left to seccomp.
    handled_access_net: u64,
    /// ABI 6 (older kernels accept the larger struct while the field is zero).
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// The Landlock ABI version the kernel supports: `Err` says why there is none (not built in,
/// or disabled at boot).
pub fn abi_version() -> Result<u32, String> {
    // SAFETY: the documented version query: null attributes, size 0, the VERSION flag.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    if v >= 1 {
        return Ok(v as u32);
    }
    Err(match io::Error::last_os_error().raw_os_error() {
        Some(libc::ENOSYS) => "this kernel has no Landlock (Linux 5.13 or later, built with CONFIG_SECURITY_LANDLOCK)".into(),
        Some(libc::EOPNOTSUPP) => "Landlock is built into this kernel but not enabled (add `landlock` to the `lsm=` boot parameter)".into(),
        _ => format!("Landlock is unavailable: {}", io::Error::last_os_error()),
    })
}

/// The rights pi hands out under a given ABI.
#[derive(Debug, Clone, Copy)]
pub struct Rights {
    /// Every right the ruleset handles (anything handled and not granted is refused).
    pub handled: u64,
    pub read: u64,
    /// Everything handled except creating device nodes (a root-owned process could otherwise
    /// make a block device in the workspace and write the raw disk).
    pub write_dir: u64,
    /// The subset that applies to a file rather than a directory.
    pub write_file: u64,
    /// What the sandbox is scoped to (ABI 6): abstract Unix sockets and signals.
    pub scoped: u64,
}

impl Rights {
    pub fn for_abi(abi: u32) -> Rights {
        let mut handled = ABI1_ALL;
        if abi >= 2 {
            handled |= REFER;
        }
        if abi >= 3 {
            handled |= TRUNCATE;
        }
        Rights {
            handled,
            read: EXECUTE | READ_FILE | READ_DIR,
            write_dir: handled & !(MAKE_CHAR | MAKE_BLOCK),
            write_file: handled & (EXECUTE | READ_FILE | WRITE_FILE | TRUNCATE),
            scoped: if abi >= 6 {
                SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
            } else {
                0
            },
        }
    }
}

/// A ruleset being filled in (in the parent). Its fd is close-on-exec: a child inherits it
/// through fork, enforces it, and drops it at exec.
pub struct Ruleset {
    fd: OwnedFd,
    rights: Rights,
}

impl Ruleset {
    pub fn new(rights: Rights) -> io::Result<Ruleset> {
        let attr = RulesetAttr {
            handled_access_fs: rights.handled,
            handled_access_net: 0,
            scoped: rights.scoped,
        };
        // SAFETY: `attr` is a valid landlock_ruleset_attr (its first field) of the given size.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                &attr as *const RulesetAttr,
                std::mem::size_of::<RulesetAttr>(),
                0u32,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh fd the kernel just returned; we own it from here on.
        Ok(Ruleset {
            fd: unsafe { OwnedFd::from_raw_fd(fd as RawFd) },
            rights,
        })
    }

    /// Everything readable and executable, everywhere.
    pub fn allow_read_everywhere(&mut self) -> io::Result<()> {
        let root = open_path(Path::new("/"), true)?;
        self.add(root.as_fd(), self.rights.read)
    }

    /// Read and write a file (a device such as `/dev/null`); a missing one is skipped.
    pub fn allow_file(&mut self, path: &Path) -> io::Result<()> {
        match open_path(path, true) {
            Ok(fd) => self.add(fd.as_fd(), self.rights.write_file),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Full rights beneath the directory `root` (held open, named `path`), except beneath any
    /// of `protected` (see the module doc); with no protected path given, no split.
    pub fn allow_tree(
        &mut self,
        path: &Path,
        root: BorrowedFd<'_>,
        protected: &[PathBuf],
    ) -> io::Result<()> {
        self.grant(path, root, protected)
    }

    fn grant(&mut self, path: &Path, fd: BorrowedFd<'_>, protected: &[PathBuf]) -> io::Result<()> {
        if protected.iter().any(|p| p == path) {
            return Ok(());
        }
        let is_dir = file_type(fd)? == libc::S_IFDIR;
        // Only a protected path that exists needs a split (one a command creates later is
        // as writable as the rest of the root).
        let inside: Vec<PathBuf> = protected
            .iter()
            .filter(|p| p.starts_with(path) && p.symlink_metadata().is_ok())
            .cloned()
            .collect();
        if !is_dir {
            return self.add(fd, self.rights.write_file);
        }
        if inside.is_empty() {
            return self.add(fd, self.rights.write_dir);
        }
        // Split: this directory keeps only the global read right; its entries get the rest.
        // Listed and opened through the descriptor, never through `path`.
        for entry in std::fs::read_dir(format!("/proc/self/fd/{}", fd.as_raw_fd()))? {
            let Ok(entry) = entry else { continue };
            let name = entry.file_name();
            // A symlink is never followed: it could point anywhere.
            let Ok(child_fd) = open_beneath(fd, Path::new(&name)) else {
                continue;
            };
            if file_type(child_fd.as_fd())? == libc::S_IFLNK {
                continue;
            }
            self.grant(&path.join(&name), child_fd.as_fd(), &inside)?;
        }
        Ok(())
    }

    fn add(&mut self, fd: BorrowedFd<'_>, access: u64) -> io::Result<()> {
        let attr = PathBeneathAttr {
            allowed_access: access & self.rights.handled,
            parent_fd: fd.as_raw_fd(),
        };
        // SAFETY: a valid landlock_path_beneath_attr for a ruleset fd we own.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                self.fd.as_raw_fd(),
                RULE_PATH_BENEATH,
                &attr as *const PathBeneathAttr,
                0u32,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// The finished ruleset, for [`restrict_self`] in the child.
    pub fn into_fd(self) -> OwnedFd {
        self.fd
    }
}

/// `path` opened with `O_PATH` (no read permission needed), not following a final symlink
/// unless `follow`.
fn open_path(path: &Path, follow: bool) -> io::Result<OwnedFd> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let mut flags = libc::O_PATH | libc::O_CLOEXEC;
    if !follow {
        flags |= libc::O_NOFOLLOW;
    }
    // SAFETY: open(2) on a NUL-terminated path we own.
    let fd = unsafe { libc::open(c.as_ptr(), flags) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh fd from open(2).
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The entry `name` of the directory `dir`, opened with `O_PATH`, not following a symlink.
fn open_beneath(dir: BorrowedFd<'_>, name: &Path) -> io::Result<OwnedFd> {
    let c = CString::new(name.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: openat(2) relative to a descriptor we hold, on a NUL-terminated name we own.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c.as_ptr(),
            libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh fd from openat(2).
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn file_type(fd: BorrowedFd<'_>) -> io::Result<libc::mode_t> {
    // SAFETY: fstat fills the zeroed stat we own.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st.st_mode & libc::S_IFMT)
}

/// Enforces the ruleset on the calling thread (the child, between fork and exec, after
/// no_new_privs is set). Async-signal-safe: one system call.
pub fn restrict_self(ruleset: RawFd) -> io::Result<()> {
    // SAFETY: landlock_restrict_self on an fd we were handed; no memory is touched.
    let rc = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
