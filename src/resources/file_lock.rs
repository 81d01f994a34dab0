//! Cross-process locks on shared files, compatible with the TypeScript pi (which uses
//! `proper-lockfile`): the lock on `settings.json` is the directory `settings.json.lock`,
//! created atomically with `mkdir`. A lock whose directory is older than 10 s is stale (its
//! owner died) and is taken over. Dropping the guard releases the lock.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// A lock older than this is considered abandoned (proper-lockfile's default).
const STALE_AFTER: Duration = Duration::from_secs(10);

/// Holds the lock on one file until dropped.
#[derive(Debug)]
pub struct FileLock {
    dir: PathBuf,
}

impl FileLock {
    /// Takes the lock on `path`, retrying `attempts` times `delay` apart while another
    /// process holds it. The file itself need not exist; its parent directory must.
    pub fn acquire(path: &Path, attempts: u32, delay: Duration) -> io::Result<FileLock> {
        let mut name = path.as_os_str().to_owned();
        name.push(".lock");
        let dir = PathBuf::from(name);
        let mut attempt = 0;
        loop {
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(FileLock { dir }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    if is_stale(&dir) {
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
}

fn is_stale(dir: &Path) -> bool {
    std::fs::metadata(dir)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age > STALE_AFTER)
}

impl Drop for FileLock {
    fn drop(&mut self) {
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
