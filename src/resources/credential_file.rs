//! Credential files pi shares with the TypeScript pi (`auth.json`, the MCP OAuth store): each
//! is written 0600 in a 0700 directory, atomically, and rewritten under pi's cross-process
//! lock, kept fresh while a slow token refresh runs. Below both the credential storage
//! (`auth`) and the OAuth flows that refresh what it holds (`oauth`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::file_lock::FileLock;

/// Why a credential file could not be read, locked or written. The text names the file.
#[derive(Debug)]
pub enum CredentialFileError {
    /// Reading, creating or writing `path` failed.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file holds something other than a JSON object.
    NotAnObject(PathBuf),
    /// The file is not valid JSON.
    Parse {
        path: PathBuf,
        source: serde_json::Error,
    },
    /// Another process held the lock for longer than we wait.
    Locked(PathBuf),
    /// The lock directory `<path>.lock` could not be taken.
    Lock {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl std::fmt::Display for CredentialFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CredentialFileError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            CredentialFileError::NotAnObject(path) => {
                write!(f, "{}: not a JSON object", path.display())
            }
            CredentialFileError::Parse { path, source } => {
                write!(f, "{}: {source}", path.display())
            }
            CredentialFileError::Locked(path) => {
                write!(f, "{}: lock is held by another process", path.display())
            }
            CredentialFileError::Lock { path, source } => {
                write!(f, "{}.lock: {source}", path.display())
            }
        }
    }
}

impl std::error::Error for CredentialFileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CredentialFileError::Io { source, .. } | CredentialFileError::Lock { source, .. } => {
                Some(source)
            }
            CredentialFileError::Parse { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// For callers whose own errors are still text.
impl From<CredentialFileError> for String {
    fn from(e: CredentialFileError) -> String {
        e.to_string()
    }
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> CredentialFileError + '_ {
    move |source| CredentialFileError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Replaces `path` with `text` (mode 0600, fsynced), creating the parent directory (0700):
/// a reader in another process sees the old file or the new one, never a torn write. A
/// symlinked auth.json (dotfile managers) is written through, not replaced.
pub fn write_private_atomic(path: &Path, text: &str) -> Result<(), CredentialFileError> {
    use std::os::unix::fs::DirBuilderExt;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.exists() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(io_error(dir))?;
        }
    }
    let options = crate::util::atomic::Options {
        mode: crate::util::atomic::Mode::Exactly(0o600),
        ..crate::util::atomic::Options::durable()
    };
    crate::util::atomic::replace(path, text.as_bytes(), options).map_err(io_error(path))
}

/// A lock directory untouched for this long belongs to a dead process (pi's proper-lockfile
/// refreshes its lock's mtime every 15 s during a refresh, with a 30 s stale limit).
const LOCK_STALE: Duration = Duration::from_secs(30);
/// How often a holder touches its lock so nobody deems it stale.
const LOCK_TOUCH: Duration = Duration::from_secs(5);
/// How often a waiter tries again.
const LOCK_RETRY: Duration = Duration::from_millis(20);

/// Runs `f` holding `<path>.lock` — a directory, the lock pi's proper-lockfile takes, so this
/// excludes TypeScript pi processes as well as other threads and processes of ours. Waits up to
/// `wait` for the lock; a lock untouched for 30 s is stale and taken over. While `f` runs (a
/// token refresh may take a while) the lock is kept fresh.
pub(crate) fn with_lock<T, E: From<CredentialFileError>>(
    path: &Path,
    wait: Duration,
    f: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let attempts = (wait.as_millis() / LOCK_RETRY.as_millis()).max(1) as u32;
    let mut lock = FileLock::acquire_with_stale(path, attempts, LOCK_RETRY, LOCK_STALE).map_err(
        |e| match e.kind() {
            std::io::ErrorKind::WouldBlock => CredentialFileError::Locked(path.to_path_buf()),
            _ => CredentialFileError::Lock {
                path: path.to_path_buf(),
                source: e,
            },
        },
    )?;
    lock.keep_fresh(LOCK_TOUCH);
    f()
}
