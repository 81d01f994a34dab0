//! Credential files pi shares with the TypeScript pi (`auth.json`, the MCP OAuth store): each
//! is written 0600 in a 0700 directory, atomically, and rewritten under pi's cross-process
//! lock, kept fresh while a slow token refresh runs. Below both the credential storage
//! (`auth`) and the OAuth flows that refresh what it holds (`oauth`).

use std::path::Path;
use std::time::Duration;

use super::file_lock::FileLock;

/// Replaces `path` with `text` (mode 0600, fsynced), creating the parent directory (0700):
/// a reader in another process sees the old file or the new one, never a torn write. A
/// symlinked auth.json (dotfile managers) is written through, not replaced.
pub fn write_private_atomic(path: &Path, text: &str) -> Result<(), String> {
    use std::os::unix::fs::DirBuilderExt;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.exists() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|e| format!("{}: {e}", dir.display()))?;
        }
    }
    let options = crate::util::atomic::Options {
        mode: crate::util::atomic::Mode::Exactly(0o600),
        ..crate::util::atomic::Options::durable()
    };
    crate::util::atomic::replace(path, text.as_bytes(), options)
        .map_err(|e| format!("{}: {e}", path.display()))
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
pub(crate) fn with_lock<T>(
    path: &Path,
    wait: Duration,
    f: impl FnOnce() -> Result<T, String>,
) -> Result<T, String> {
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let attempts = (wait.as_millis() / LOCK_RETRY.as_millis()).max(1) as u32;
    let mut lock = FileLock::acquire_with_stale(path, attempts, LOCK_RETRY, LOCK_STALE).map_err(
        |e| match e.kind() {
            std::io::ErrorKind::WouldBlock => {
                format!("{}: lock is held by another process", path.display())
            }
            _ => format!("{}.lock: {e}", path.display()),
        },
    )?;
    lock.keep_fresh(LOCK_TOUCH);
    f()
}
