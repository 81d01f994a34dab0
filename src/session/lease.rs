//! The live lease on a session (issue 35): while a pi process may write a session it holds
//! `flock(LOCK_EX|LOCK_NB)` on `<session>.jsonl.lock` beside it. The lock dies with the
//! process, so a crash never leaves a session locked; a normal end removes the file.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// A held `flock` on a session's `.lock` file; the file is removed while still held when the
/// lease ends normally (a crash leaves it behind, unlocked).
pub struct Lease {
    /// Held only for its lock.
    _file: File,
    path: PathBuf,
}

impl Drop for Lease {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Lease {
    /// Locks `path`'s lease file, or says the session is in use.
    pub fn take(path: &Path) -> Result<Lease, LeaseError> {
        let lock = lock_path(path);
        let failed = |e: io::Error| {
            LeaseError::Io(format!("Could not lock session {}: {e}", path.display()))
        };
        // A lock file removed by the holder between our open and our flock is not the lease:
        // lock again until the path names the file we locked.
        for _ in 0..20 {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&lock)
                .map_err(failed)?;
            use std::os::fd::AsRawFd;
            // SAFETY: flock on a descriptor we own; no memory is passed.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if rc != 0 {
                let e = io::Error::last_os_error();
                return Err(match e.raw_os_error() {
                    Some(libc::EWOULDBLOCK) => LeaseError::InUse(path.to_path_buf()),
                    _ => failed(e),
                });
            }
            let held = file.metadata().map_err(failed)?;
            if std::fs::metadata(&lock).is_ok_and(|m| crate::util::files::same_file(&held, &m)) {
                return Ok(Lease {
                    _file: file,
                    path: lock,
                });
            }
        }
        Err(LeaseError::InUse(path.to_path_buf()))
    }
}

/// Why a session's lease could not be taken.
#[derive(Debug)]
pub enum LeaseError {
    /// Another pi process is writing this session.
    InUse(PathBuf),
    Io(String),
}

impl std::fmt::Display for LeaseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LeaseError::InUse(path) => write!(
                f,
                "Session {} is in use by another pi process. Fork it to continue separately (pi --fork {}), or wait until the other pi exits.",
                path.display(),
                path.display()
            ),
            LeaseError::Io(e) => f.write_str(e),
        }
    }
}

/// The lease file beside a session: `<file>.lock`.
pub fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}
