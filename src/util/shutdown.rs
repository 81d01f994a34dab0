//! Shutdown on SIGINT, SIGTERM and SIGHUP, the same in every mode.
//!
//! The first signal kills every command pi started (their whole process groups, see
//! [`super::process`]) and hands over to the mode that called [`take_over`]: its hooks run
//! (raising the session's abort flag, say) and every [`notice`] receiver disconnects, so the
//! mode's loop ends and it shuts down its own way — extensions hear `session_shutdown`,
//! session writes finish — and pi exits with 128 + the signal ([`exit_code`]). If that takes
//! longer than the deadline, if a second signal comes, or if no mode has taken over yet, pi
//! exits at once, after killing every child it owns.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};

use super::process::{self, Scope};

type Hook = Box<dyn Fn() + Send + Sync>;

/// The signal that started the shutdown (0: none yet).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// A mode handles the shutdown from here on.
static TAKEN_OVER: AtomicBool = AtomicBool::new(false);

struct Hub {
    hooks: Mutex<Vec<Hook>>,
    /// Dropped when the shutdown starts, which disconnects every `notice` receiver.
    sender: Mutex<Option<Sender<()>>>,
    notice: Receiver<()>,
}

fn hub() -> &'static Hub {
    static HUB: OnceLock<Hub> = OnceLock::new();
    HUB.get_or_init(|| {
        let (tx, rx) = crossbeam_channel::bounded(0);
        Hub {
            hooks: Mutex::new(Vec::new()),
            sender: Mutex::new(Some(tx)),
            notice: rx,
        }
    })
}

/// Starts listening for SIGINT, SIGTERM and SIGHUP (once per process; later calls do
/// nothing). After the first signal the mode has `deadline` to return; `before_exit` runs
/// before any hard exit (to put the terminal back, say).
pub fn install(deadline: Duration, before_exit: fn()) {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    hub();
    // Detached on purpose: it lives as long as the process.
    let _ = std::thread::Builder::new()
        .name("pi-signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                if SIGNAL
                    .compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst)
                    .is_err()
                {
                    // A second signal: stop waiting for the mode.
                    hard_exit(before_exit);
                }
                process::kill_all(Scope::Commands);
                if !TAKEN_OVER.load(Ordering::SeqCst) {
                    hard_exit(before_exit);
                }
                start(deadline, before_exit);
            }
        });
}

/// Runs the mode's hooks, wakes its loop, and arms the deadline.
fn start(deadline: Duration, before_exit: fn()) {
    let hub = hub();
    for hook in hub.hooks.lock().unwrap_or_else(|p| p.into_inner()).iter() {
        hook();
    }
    hub.sender.lock().unwrap_or_else(|p| p.into_inner()).take();
    let timer = std::thread::Builder::new()
        .name("pi-shutdown-deadline".into())
        .spawn(move || {
            std::thread::sleep(deadline);
            hard_exit(before_exit);
        });
    if timer.is_err() {
        hard_exit(before_exit);
    }
}

/// How long `before_exit` may take (it writes to a terminal that may be gone or stalled).
const BEFORE_EXIT_LIMIT: Duration = Duration::from_millis(250);

fn hard_exit(before_exit: fn()) -> ! {
    process::kill_all(Scope::Everything);
    let (done, finished) = crossbeam_channel::bounded::<()>(0);
    let helper = std::thread::Builder::new()
        .name("pi-before-exit".into())
        .spawn(move || {
            before_exit();
            drop(done);
        });
    if helper.is_ok() {
        let _ = finished.recv_timeout(BEFORE_EXIT_LIMIT);
    }
    let sig = SIGNAL.load(Ordering::SeqCst);
    std::process::exit(128 + sig);
}

/// The calling mode handles shutdown from now on: `on_start` runs (on the signal thread)
/// when it begins. Until a mode takes over, a signal ends pi at once.
pub fn take_over(on_start: impl Fn() + Send + Sync + 'static) {
    hub()
        .hooks
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(Box::new(on_start));
    TAKEN_OVER.store(true, Ordering::SeqCst);
    // A signal that came in between found no mode: it exits on its own.
}

/// Disconnects once shutdown has started: a mode's loop `select!`s on it.
pub fn notice() -> Receiver<()> {
    hub().notice.clone()
}

/// The signal that started the shutdown, if one did.
pub fn signal() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// `code`, or 128 + the signal once a shutdown has started.
pub fn exit_code(code: i32) -> i32 {
    signal().map_or(code, |s| 128 + s)
}
