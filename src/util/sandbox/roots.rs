//! Writable roots held open: each root is opened once, when pi starts (`O_PATH|O_DIRECTORY`),
//! and every command's rules are built from that descriptor, never by resolving the path
//! again. A model that swaps a root for a symlink (`writableRoots: [".."]`, then
//! `mv project x && ln -s ~ project`) changes what the path names, not what pi holds.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A writable root: its real path when pi started (for messages and path checks) and the
/// directory itself, held open.
#[derive(Debug)]
pub struct Root {
    pub path: PathBuf,
    pub fd: OwnedFd,
}

impl Root {
    /// Opens `path` (a real path: symlinks already resolved) as the directory it names now.
    pub fn open(path: &Path) -> io::Result<Root> {
        let c = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: open(2) on a NUL-terminated path we own.
        let fd = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Root {
            path: path.to_path_buf(),
            // SAFETY: a fresh fd from open(2), owned from here on.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// The directory's device and inode, to recognise it again.
    pub fn identity(&self) -> io::Result<(u64, u64)> {
        identity(self.raw_fd())
    }
}

/// `(st_dev, st_ino)` of an open descriptor.
pub fn identity(fd: RawFd) -> io::Result<(u64, u64)> {
    // SAFETY: fstat fills the zeroed stat we own.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((st.st_dev, st.st_ino))
}
