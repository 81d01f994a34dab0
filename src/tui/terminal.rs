//! The terminal the UI draws on: a small [`Terminal`] trait and [`ProcessTerminal`], the real
//! one behind stdin/stdout.
//!
//! `ProcessTerminal::start` puts the tty in raw mode, turns on bracketed paste and asks for
//! the Kitty keyboard protocol (`CSI ? u`). Whoever parses stdin reports the reply through
//! [`Terminal::kitty_reply_seen`], which pushes flags 1+2+4; when no reply came within
//! [`KITTY_QUERY_TIMEOUT`], [`Terminal::tick`] falls back to xterm modifyOtherKeys mode 2
//! (tmux answers that one). The alternate screen is used only by the fullscreen mode (see
//! [`Tui::enter_alt_screen`](super::Tui::enter_alt_screen)); restoring leaves it.
//!
//! Threads: `start` spawns `pi-input` (reads raw stdin bytes, polls so the stop flag is seen
//! within 100 ms) and `pi-winch` (SIGWINCH → [`TerminalEvent::Resize`]); both send on the
//! channel returned by [`ProcessTerminal::events`] and are joined by `stop`. Every mode we
//! turn on is recorded in a process-wide slot so `Drop`, [`restore_terminal`] and the panic
//! hook from [`install_panic_hook`] can always put the tty back.

use std::io::{self, Write};
use std::os::unix::io::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

/// How long to wait for the Kitty protocol reply before falling back to modifyOtherKeys.
pub const KITTY_QUERY_TIMEOUT: Duration = Duration::from_millis(150);

pub const BRACKETED_PASTE_ON: &str = "\x1b[?2004h";
pub const BRACKETED_PASTE_OFF: &str = "\x1b[?2004l";
pub const KITTY_QUERY: &str = "\x1b[?u";
/// Push Kitty flags 1 (disambiguate) + 2 (event types) + 4 (alternate keys).
pub const KITTY_PUSH: &str = "\x1b[>7u";
pub const KITTY_POP: &str = "\x1b[<u";
pub const MODIFY_OTHER_KEYS_ON: &str = "\x1b[>4;2m";
pub const MODIFY_OTHER_KEYS_OFF: &str = "\x1b[>4;0m";
pub const SHOW_CURSOR: &str = "\x1b[?25h";
/// The alternate screen (the fullscreen mode draws there; the normal screen and its
/// scrollback stay as they were).
pub const ENTER_ALT_SCREEN: &str = "\x1b[?1049h";
pub const EXIT_ALT_SCREEN: &str = "\x1b[?1049l";
pub const AUTOWRAP_OFF: &str = "\x1b[?7l";
pub const AUTOWRAP_ON: &str = "\x1b[?7h";
pub const HIDE_CURSOR: &str = "\x1b[?25l";

/// What a terminal can do for the renderer and the app. Output is buffered until `flush`.
pub trait Terminal {
    fn write(&mut self, data: &str);
    fn flush(&mut self) -> io::Result<()>;
    /// `(columns, rows)`.
    fn size(&self) -> (usize, usize);

    /// Moves the cursor `lines` down (positive) or up (negative).
    fn move_by(&mut self, lines: isize) {
        match lines {
            n if n > 0 => self.write(&format!("\x1b[{n}B")),
            n if n < 0 => self.write(&format!("\x1b[{}A", -n)),
            _ => {}
        }
    }
    fn hide_cursor(&mut self) {
        self.write(HIDE_CURSOR);
    }
    fn show_cursor(&mut self) {
        self.write(SHOW_CURSOR);
    }
    fn clear_line(&mut self) {
        self.write("\x1b[K");
    }
    fn clear_from_cursor(&mut self) {
        self.write("\x1b[J");
    }
    fn clear_screen(&mut self) {
        self.write("\x1b[2J\x1b[H");
    }
    /// Sets the window title; each run of control characters (C0, DEL, C1) becomes one
    /// space, so a title made of a session name cannot end the sequence or start another.
    fn set_title(&mut self, title: &str) {
        let mut clean = String::with_capacity(title.len());
        let mut in_controls = false;
        for c in title.chars() {
            if c.is_control() {
                if !in_controls {
                    clean.push(' ');
                }
                in_controls = true;
            } else {
                clean.push(c);
                in_controls = false;
            }
        }
        self.write(&format!("\x1b]0;{clean}\x07"));
    }

    /// Whether the Kitty keyboard protocol was negotiated.
    fn kitty_protocol_active(&self) -> bool;
    /// The stdin reader saw the reply to the Kitty query (`CSI ? <flags> u`).
    fn kitty_reply_seen(&mut self) {}
    /// When [`Terminal::tick`] next has something to do (the Kitty fallback timer).
    fn next_timer(&self) -> Option<Instant> {
        None
    }
    /// Runs timers that are due at `now`.
    fn tick(&mut self, _now: Instant) {}

    /// Enters raw mode and turns on paste and keyboard protocols.
    fn start(&mut self) -> io::Result<()>;
    /// Undoes everything `start` did; safe to call twice.
    fn stop(&mut self) -> io::Result<()>;
    /// Ctrl+Z: restores the terminal, stops the process, and re-enters raw mode when the
    /// shell resumes it.
    fn suspend(&mut self) -> io::Result<()> {
        self.stop()?;
        self.start()
    }
}

/// What the terminal threads report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TerminalEvent {
    /// Raw bytes read from stdin, unparsed (key parsing lives with the input code).
    Input(Vec<u8>),
    /// The window size changed; read the new size with [`Terminal::size`].
    Resize,
    /// SIGTSTP from outside (`kill -TSTP`): suspend as Ctrl+Z does, restoring the terminal
    /// first, and redraw on `fg` (pi 1.6.0).
    Suspend,
}

/// The keyboard-protocol handshake: query Kitty, push its flags on a reply, fall back to
/// modifyOtherKeys when none came in time. Each step returns the bytes to send.
#[derive(Debug, Default)]
pub struct KeyboardProtocol {
    deadline: Option<Instant>,
    kitty: bool,
    modify_other_keys: bool,
}

impl KeyboardProtocol {
    /// Starts the handshake: send the query, wait until `now + KITTY_QUERY_TIMEOUT`.
    pub fn begin(&mut self, now: Instant) -> &'static str {
        self.deadline = Some(now + KITTY_QUERY_TIMEOUT);
        KITTY_QUERY
    }

    /// The terminal answered the query.
    pub fn reply_seen(&mut self) -> Option<&'static str> {
        if self.kitty {
            return None;
        }
        self.kitty = true;
        self.deadline = None;
        // A reply arriving after the fallback still wins: Kitty is the richer protocol.
        Some(KITTY_PUSH)
    }

    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// No reply by the deadline: turn on modifyOtherKeys.
    pub fn tick(&mut self, now: Instant) -> Option<&'static str> {
        let deadline = self.deadline?;
        if now < deadline {
            return None;
        }
        self.deadline = None;
        if self.kitty || self.modify_other_keys {
            return None;
        }
        self.modify_other_keys = true;
        Some(MODIFY_OTHER_KEYS_ON)
    }

    pub fn kitty_active(&self) -> bool {
        self.kitty
    }

    /// Bytes that undo whatever was turned on; resets the state.
    pub fn end(&mut self) -> String {
        let mut out = String::new();
        if self.kitty {
            out.push_str(KITTY_POP);
        }
        if self.modify_other_keys {
            out.push_str(MODIFY_OTHER_KEYS_OFF);
        }
        *self = KeyboardProtocol::default();
        out
    }
}

/// Which modes are on, kept process-wide so a panic or an early exit can undo them.
#[derive(Clone, Copy)]
struct Restore {
    termios: libc::termios,
    kitty: bool,
    modify_other_keys: bool,
}

static RESTORE: Mutex<Option<Restore>> = Mutex::new(None);

/// The alternate screen (with mouse tracking and autowrap off) is on: restoring must leave it.
static ALT_SCREEN: AtomicBool = AtomicBool::new(false);

/// Records that the alternate screen was entered or left, for [`restore_terminal`].
pub fn note_alt_screen(on: bool) {
    ALT_SCREEN.store(on, Ordering::Relaxed);
}

/// Puts the tty back the way `start` found it: cooked mode, cursor shown, bracketed paste,
/// Kitty flags and modifyOtherKeys off. Does nothing when the terminal was not started.
pub fn restore_terminal() {
    let taken = match RESTORE.lock() {
        Ok(mut slot) => slot.take(),
        Err(poisoned) => poisoned.into_inner().take(),
    };
    let Some(state) = taken else { return };
    let mut out = String::new();
    if ALT_SCREEN.swap(false, Ordering::Relaxed) {
        out.push_str(super::mouse::DISABLE);
        out.push_str(AUTOWRAP_ON);
        out.push_str(EXIT_ALT_SCREEN);
    }
    out.push_str(BRACKETED_PASTE_OFF);
    if state.kitty {
        out.push_str(KITTY_POP);
    }
    if state.modify_other_keys {
        out.push_str(MODIFY_OTHER_KEYS_OFF);
    }
    out.push_str(SHOW_CURSOR);
    let mut stdout = io::stdout();
    // Best effort: there is nobody left to report a failed write to.
    let _ = stdout.write_all(out.as_bytes());
    let _ = stdout.flush();
    // SAFETY: tcsetattr reads a termios we got from tcgetattr on the same fd.
    unsafe {
        libc::tcsetattr(io::stdin().as_raw_fd(), libc::TCSANOW, &state.termios);
    }
}

fn update_restore(f: impl FnOnce(&mut Restore)) {
    if let Ok(mut slot) = RESTORE.lock() {
        if let Some(state) = slot.as_mut() {
            f(state);
        }
    }
}

/// Installs (once) a panic hook that restores the terminal before the previous hook prints
/// the panic, so the message is readable and the shell is usable afterwards. A panic that
/// becomes an error (`util::panic::catch`: a tool call, a provider stream) leaves the screen
/// alone: the session goes on, and the message reaches the user as that error.
pub fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if crate::util::panic::caught_here() {
                return;
            }
            restore_terminal();
            previous(info);
        }));
    });
}

/// The real terminal on stdin/stdout.
pub struct ProcessTerminal {
    out: io::BufWriter<io::Stdout>,
    started: bool,
    keyboard: KeyboardProtocol,
    events_tx: Sender<TerminalEvent>,
    events_rx: Receiver<TerminalEvent>,
    threads: Option<Threads>,
}

struct Threads {
    stop: Arc<AtomicBool>,
    input: JoinHandle<()>,
    winch_handle: signal_hook::iterator::Handle,
    winch: JoinHandle<()>,
}

impl Default for ProcessTerminal {
    fn default() -> Self {
        Self::new()
    }
}

impl ProcessTerminal {
    pub fn new() -> Self {
        let (events_tx, events_rx) = crossbeam_channel::unbounded();
        ProcessTerminal {
            out: io::BufWriter::with_capacity(64 * 1024, io::stdout()),
            started: false,
            keyboard: KeyboardProtocol::default(),
            events_tx,
            events_rx,
            threads: None,
        }
    }

    /// Input bytes and resizes, for the app's `select!` loop.
    pub fn events(&self) -> Receiver<TerminalEvent> {
        self.events_rx.clone()
    }

    fn enter_raw_mode(&mut self) -> io::Result<()> {
        let fd = io::stdin().as_raw_fd();
        // SAFETY: termios is plain data; tcgetattr fills it or fails and we return.
        let mut original: libc::termios = unsafe { std::mem::zeroed() };
        if unsafe { libc::tcgetattr(fd, &mut original) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let mut raw = original;
        // SAFETY: cfmakeraw only edits the struct we own.
        unsafe { libc::cfmakeraw(&mut raw) };
        if unsafe { libc::tcsetattr(fd, libc::TCSANOW, &raw) } != 0 {
            return Err(io::Error::last_os_error());
        }
        if let Ok(mut slot) = RESTORE.lock() {
            *slot = Some(Restore {
                termios: original,
                kitty: false,
                modify_other_keys: false,
            });
        }
        Ok(())
    }

    fn spawn_threads(&mut self) -> io::Result<()> {
        let stop = Arc::new(AtomicBool::new(false));
        let input = {
            let stop = Arc::clone(&stop);
            let tx = self.events_tx.clone();
            std::thread::Builder::new()
                .name("pi-input".into())
                .spawn(move || read_input(io::stdin().as_raw_fd(), &stop, &tx))?
        };
        use signal_hook::consts::{SIGTSTP, SIGWINCH};
        let mut signals = signal_hook::iterator::Signals::new([SIGWINCH, SIGTSTP])?;
        let winch_handle = signals.handle();
        let tx = self.events_tx.clone();
        let winch = std::thread::Builder::new()
            .name("pi-winch".into())
            .spawn(move || {
                for signal in signals.forever() {
                    let event = if signal == SIGTSTP {
                        TerminalEvent::Suspend
                    } else {
                        TerminalEvent::Resize
                    };
                    if tx.send(event).is_err() {
                        break;
                    }
                }
            })?;
        self.threads = Some(Threads {
            stop,
            input,
            winch_handle,
            winch,
        });
        Ok(())
    }
}

/// How long the input loop waits in one poll; bounds how late it sees `stop`.
const INPUT_POLL: i32 = 50;

/// The `pi-input` loop: wait for `fd` with a short poll so `stop` is honoured within
/// [`INPUT_POLL`] ms, then forward whatever bytes arrived. Ends at EOF or a read error.
fn read_input(fd: std::os::unix::io::RawFd, stop: &AtomicBool, tx: &Sender<TerminalEvent>) {
    let mut buf = [0u8; 4096];
    while !stop.load(Ordering::Relaxed) {
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the duration of the call.
        let ready = unsafe { libc::poll(&mut pfd, 1, INPUT_POLL) };
        if ready <= 0 || stop.load(Ordering::Relaxed) {
            continue;
        }
        if pfd.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0
            && pfd.revents & libc::POLLIN == 0
        {
            return;
        }
        // SAFETY: reads at most buf.len() bytes into buf.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        match n {
            0 => return,
            n if n < 0 => {
                let err = io::Error::last_os_error();
                if !matches!(
                    err.kind(),
                    io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock
                ) {
                    return;
                }
            }
            n => {
                let bytes = buf[..n.unsigned_abs()].to_vec();
                if tx.send(TerminalEvent::Input(bytes)).is_err() {
                    return;
                }
            }
        }
    }
}

impl Terminal for ProcessTerminal {
    fn write(&mut self, data: &str) {
        // A failed terminal write has no better place to go; the next flush reports it.
        let _ = self.out.write_all(data.as_bytes());
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    fn size(&self) -> (usize, usize) {
        if let Ok((cols, rows)) = termion::terminal_size() {
            if cols > 0 && rows > 0 {
                return (usize::from(cols), usize::from(rows));
            }
        }
        let env = |name: &str, default: usize| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse().ok())
                .filter(|&n: &usize| n > 0)
                .unwrap_or(default)
        };
        (env("COLUMNS", 80), env("LINES", 24))
    }

    fn kitty_protocol_active(&self) -> bool {
        self.keyboard.kitty_active()
    }

    fn kitty_reply_seen(&mut self) {
        if !self.started {
            return;
        }
        if let Some(bytes) = self.keyboard.reply_seen() {
            self.write(bytes);
            let _ = self.flush();
            update_restore(|r| r.kitty = true);
        }
    }

    fn next_timer(&self) -> Option<Instant> {
        self.keyboard.deadline()
    }

    fn tick(&mut self, now: Instant) {
        if let Some(bytes) = self.keyboard.tick(now) {
            self.write(bytes);
            let _ = self.flush();
            update_restore(|r| r.modify_other_keys = true);
        }
    }

    fn start(&mut self) -> io::Result<()> {
        if self.started {
            return Ok(());
        }
        install_panic_hook();
        self.enter_raw_mode()?;
        self.started = true;
        self.write(BRACKETED_PASTE_ON);
        let query = self.keyboard.begin(Instant::now());
        self.write(query);
        self.flush()?;
        if self.threads.is_none() {
            self.spawn_threads()?;
        }
        // A resize while we were stopped (suspend) was never seen: ask for a fresh look.
        let _ = self.events_tx.send(TerminalEvent::Resize);
        Ok(())
    }

    fn stop(&mut self) -> io::Result<()> {
        if let Some(threads) = self.threads.take() {
            threads.stop.store(true, Ordering::Relaxed);
            threads.winch_handle.close();
            // Both threads wake within one 50 ms poll (or at once for the signal iterator).
            let _ = threads.input.join();
            let _ = threads.winch.join();
        }
        if !self.started {
            return Ok(());
        }
        self.started = false;
        self.flush()?;
        // restore_terminal writes paste/kitty/modifyOtherKeys off (it tracks the same modes
        // through update_restore) and the cursor on, then puts back the termios.
        restore_terminal();
        let _ = self.keyboard.end();
        Ok(())
    }

    fn suspend(&mut self) -> io::Result<()> {
        self.stop()?;
        // Stops the process even if someone installed a SIGTSTP handler; returns on SIGCONT.
        signal_hook::low_level::emulate_default_handler(signal_hook::consts::SIGTSTP)?;
        self.start()
    }
}

impl Drop for ProcessTerminal {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kitty_reply_pushes_flags_and_stop_pops_them() {
        let t0 = Instant::now();
        let mut k = KeyboardProtocol::default();
        assert_eq!(k.begin(t0), "\x1b[?u");
        assert_eq!(k.deadline(), Some(t0 + Duration::from_millis(150)));
        assert_eq!(k.reply_seen(), Some("\x1b[>7u"));
        assert_eq!(k.reply_seen(), None, "pushed once");
        assert!(k.kitty_active());
        assert_eq!(k.tick(t0 + Duration::from_secs(1)), None);
        assert_eq!(k.end(), "\x1b[<u");
        assert!(!k.kitty_active());
    }

    #[test]
    fn no_reply_in_150ms_falls_back_to_modify_other_keys() {
        let t0 = Instant::now();
        let mut k = KeyboardProtocol::default();
        k.begin(t0);
        assert_eq!(k.tick(t0 + Duration::from_millis(149)), None);
        assert_eq!(k.tick(t0 + Duration::from_millis(150)), Some("\x1b[>4;2m"));
        assert_eq!(k.tick(t0 + Duration::from_millis(300)), None);
        assert_eq!(k.deadline(), None);
        assert_eq!(k.end(), "\x1b[>4;0m");
    }

    #[test]
    fn the_input_loop_forwards_bytes_and_stops_when_asked() {
        let mut fds = [0; 2];
        // SAFETY: pipe fills two fds we close below.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let [read_fd, write_fd] = fds;
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = crossbeam_channel::unbounded();
        let reader = {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || read_input(read_fd, &stop, &tx))
        };
        // SAFETY: writes 3 bytes from a live buffer to our pipe.
        let written = unsafe { libc::write(write_fd, b"a\x1b[".as_ptr().cast(), 3) };
        assert_eq!(written, 3);
        let got = rx.recv_timeout(Duration::from_secs(2));
        assert_eq!(got, Ok(TerminalEvent::Input(b"a\x1b[".to_vec())));
        stop.store(true, Ordering::Relaxed);
        // The loop polls with a short timeout, so it notices the flag with no more input;
        // a generous bound keeps this a check that it stops, not a timing test.
        let (done_tx, done_rx) = crossbeam_channel::bounded(1);
        std::thread::spawn(move || {
            let _ = done_tx.send(reader.join().is_ok());
        });
        assert_eq!(
            done_rx.recv_timeout(Duration::from_secs(10)),
            Ok(true),
            "the input thread stops once asked"
        );
        // SAFETY: closing the fds pipe() gave us, once.
        unsafe {
            libc::close(read_fd);
            libc::close(write_fd);
        }
    }
}
