//! Per-file serialization of mutations: two `write`/`edit` calls on the same file (after
//! symlink resolution) never interleave, while different files proceed in parallel.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

type LockMap = Mutex<HashMap<PathBuf, Arc<Mutex<()>>>>;

fn locks() -> &'static LockMap {
    static LOCKS: OnceLock<LockMap> = OnceLock::new();
    LOCKS.get_or_init(Default::default)
}

/// The queue key: the real path when the file exists, else the path as given.
fn key(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Runs `f` while holding the lock of `path`; callers on the same file wait their turn.
pub fn with_file_lock<R>(path: &Path, f: impl FnOnce() -> R) -> R {
    let key = key(path);
    let lock = {
        let mut map = locks().lock().unwrap_or_else(PoisonError::into_inner);
        map.entry(key.clone()).or_default().clone()
    };
    let result = {
        let _guard = lock.lock().unwrap_or_else(PoisonError::into_inner);
        f()
    };
    let mut map = locks().lock().unwrap_or_else(PoisonError::into_inner);
    // Only the map and this call hold it: nobody is waiting, so forget the entry.
    if Arc::strong_count(&lock) == 2 {
        map.remove(&key);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn same_path_never_overlaps_and_map_is_cleaned() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let inside = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let (path, inside) = (path.clone(), inside.clone());
                std::thread::spawn(move || {
                    with_file_lock(&path, || {
                        assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0);
                        std::thread::sleep(std::time::Duration::from_millis(5));
                        inside.fetch_sub(1, Ordering::SeqCst);
                    })
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert!(!locks().lock().unwrap().contains_key(&key(&path)));
    }
}
