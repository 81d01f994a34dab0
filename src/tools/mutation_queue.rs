//! Per-file serialization of mutations: two `write`/`edit` calls on the same file (after
//! symlink resolution) never interleave and run in the order the model made the calls, while
//! different files proceed in parallel. The order is fixed when a batch is dispatched
//! ([`reservation`], taken on the run thread in call order, as pi queues each call when it
//! starts it), not by which call's thread reaches the file first.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};

/// One file's queue: the next ticket to hand out, the ticket whose turn it is, and tickets
/// given up before their turn came.
#[derive(Default)]
struct Queue {
    next: u64,
    serving: u64,
    given_up: BTreeSet<u64>,
}

struct Queues {
    map: Mutex<HashMap<PathBuf, Queue>>,
    turn: Condvar,
}

fn queues() -> &'static Queues {
    static QUEUES: OnceLock<Queues> = OnceLock::new();
    QUEUES.get_or_init(|| Queues {
        map: Mutex::new(HashMap::new()),
        turn: Condvar::new(),
    })
}

fn lock_map() -> MutexGuard<'static, HashMap<PathBuf, Queue>> {
    queues().map.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The queue key: the real path when the file exists, else the path as given.
fn key(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// A place in a file's queue. Dropping it (used or not) lets the next one go.
struct Ticket {
    key: PathBuf,
    number: u64,
}

impl Ticket {
    fn take(path: &Path) -> Ticket {
        let key = key(path);
        let mut map = lock_map();
        let q = map.entry(key.clone()).or_default();
        let number = q.next;
        q.next += 1;
        Ticket { key, number }
    }

    fn wait_turn(&self) {
        let mut map = lock_map();
        while map.get(&self.key).is_some_and(|q| q.serving != self.number) {
            map = queues()
                .turn
                .wait(map)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut map = lock_map();
        let Some(q) = map.get_mut(&self.key) else {
            return;
        };
        if q.serving != self.number {
            q.given_up.insert(self.number);
            return;
        }
        q.serving += 1;
        while q.given_up.remove(&q.serving) {
            q.serving += 1;
        }
        if q.serving == q.next {
            map.remove(&self.key);
        }
        queues().turn.notify_all();
    }
}

thread_local! {
    /// The ticket reserved for the call this thread runs, until the tool uses it.
    static RESERVED: RefCell<Option<Ticket>> = const { RefCell::new(None) };
}

/// Takes `path`'s next place now; the returned closure hands it to the thread that runs the
/// call, whose [`with_file_lock`] then waits for that place.
pub fn reservation(path: &Path) -> Box<dyn FnOnce() + Send> {
    let ticket = Ticket::take(path);
    Box::new(move || RESERVED.with(|r| *r.borrow_mut() = Some(ticket)))
}

/// Runs `f` while holding `path`'s turn (the place reserved for this call, else the next
/// one); callers on the same file wait their turn.
pub fn with_file_lock<R>(path: &Path, f: impl FnOnce() -> R) -> R {
    let ticket = RESERVED
        .with(|r| r.borrow_mut().take())
        .unwrap_or_else(|| Ticket::take(path));
    ticket.wait_turn();
    let result = f();
    drop(ticket);
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

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
        assert!(!lock_map().contains_key(&key(&path)));
    }

    #[test]
    fn reserved_places_run_in_reservation_order_and_unused_ones_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g");
        let order = Arc::new(Mutex::new(Vec::new()));
        // Reserved in order 0..6; started in reverse, so each thread arrives before the ones
        // ahead of it. Place 3 is given up without being used.
        let places: Vec<_> = (0..6).map(|_| reservation(&path)).collect();
        let handles: Vec<_> = places
            .into_iter()
            .enumerate()
            .rev()
            .map(|(i, enter)| {
                let (path, order) = (path.clone(), order.clone());
                std::thread::spawn(move || {
                    enter();
                    if i != 3 {
                        with_file_lock(&path, || order.lock().unwrap().push(i));
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(*order.lock().unwrap(), [0, 1, 2, 4, 5]);
        assert!(!lock_map().contains_key(&key(&path)));
    }
}
