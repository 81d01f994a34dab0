//! Cross-process locks on shared files, compatible with the TypeScript pi (which uses
//! `proper-lockfile`): the lock on `settings.json` is the directory `settings.json.lock`,
//! created atomically with `mkdir`. A lock whose directory has not been touched for the stale
//! limit belongs to a dead process and is taken over; a holder doing slow work keeps its lock
//! fresh with [`FileLock::keep_fresh`]. Dropping the guard releases the lock.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// A lock untouched for this long is considered abandoned (proper-lockfile's default).
const STALE_AFTER: Duration = Duration::from_secs(10);

/// Holds the lock on one file until dropped.
#[derive(Debug)]
pub struct FileLock {
    dir: PathBuf,
    keeper: Option<(crossbeam_channel::Sender<()>, std::thread::JoinHandle<()>)>,
}

impl FileLock {
    /// Takes the lock on `path`, retrying `attempts` times `delay` apart while another
    /// process holds it. The file itself need not exist; its parent directory must.
    pub fn acquire(path: &Path, attempts: u32, delay: Duration) -> io::Result<FileLock> {
        FileLock::acquire_with_stale(path, attempts, delay, STALE_AFTER)
    }

    /// Like [`FileLock::acquire`] with a custom stale limit.
    pub fn acquire_with_stale(
        path: &Path,
        attempts: u32,
        delay: Duration,
        stale_after: Duration,
    ) -> io::Result<FileLock> {
        let mut name = path.as_os_str().to_owned();
        name.push(".lock");
        let dir = PathBuf::from(name);
        let mut attempt = 0;
        loop {
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(FileLock { dir, keeper: None }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    if is_stale(&dir, stale_after) {
                        // Another process may race us here; whoever creates it next wins.
                        let _ = std::fs::remove_dir(&dir);
                        continue;
                    }
                    attempt += 1;
                    if attempt >= attempts {
                        return Err(io::Error::new(
                            io::ErrorKind::WouldBlock,
                            format!(
                                "{} is locked by another pi process (remove {} if none is running)",
                                path.display(),
                                dir.display()
                            ),
                        ));
                    }
                    std::thread::sleep(delay);
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// pi's settings policy: 10 attempts, 20 ms apart.
    pub fn acquire_quick(path: &Path) -> io::Result<FileLock> {
        FileLock::acquire(path, 10, Duration::from_millis(20))
    }

    /// Touches the lock every `every` from a `pi-file-lock` thread until the lock is
    /// dropped, so slow work under it (a token refresh) is never mistaken for a dead owner.
    pub fn keep_fresh(&mut self, every: Duration) {
        if self.keeper.is_some() {
            return;
        }
        let (stop_tx, stop_rx) = crossbeam_channel::bounded::<()>(0);
        let dir = self.dir.clone();
        let spawned = std::thread::Builder::new()
            .name("pi-file-lock".into())
            .spawn(move || {
                while let Err(crossbeam_channel::RecvTimeoutError::Timeout) =
                    stop_rx.recv_timeout(every)
                {
                    if let Ok(d) = std::fs::File::open(&dir) {
                        let _ = d.set_modified(SystemTime::now());
                    }
                }
            });
        if let Ok(handle) = spawned {
            self.keeper = Some((stop_tx, handle));
        }
    }
}

fn is_stale(dir: &Path, stale_after: Duration) -> bool {
    std::fs::metadata(dir)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age > stale_after)
}

impl Drop for FileLock {
    fn drop(&mut self) {
        if let Some((stop, handle)) = self.keeper.take() {
            // Dropping the sender wakes the keeper at once; join so it never touches a
            // released lock.
            drop(stop);
            let _ = handle.join();
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excludes_a_second_holder_and_releases_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        let first = FileLock::acquire_quick(&file).unwrap();
        assert!(dir.path().join("settings.json.lock").is_dir());
        let err = FileLock::acquire(&file, 2, Duration::from_millis(1)).unwrap_err();
        assert!(
            err.to_string().contains("locked by another pi process"),
            "{err}"
        );
        drop(first);
        assert!(!dir.path().join("settings.json.lock").exists());
        let _again = FileLock::acquire_quick(&file).unwrap();
    }

    #[test]
    fn serializes_concurrent_writers() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("counter");
        std::fs::write(&file, "0").unwrap();
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let file = file.clone();
                std::thread::spawn(move || {
                    for _ in 0..25 {
                        let _lock =
                            FileLock::acquire(&file, 1000, Duration::from_millis(1)).unwrap();
                        let n: u32 = std::fs::read_to_string(&file).unwrap().parse().unwrap();
                        std::fs::write(&file, (n + 1).to_string()).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "100");
    }
}
