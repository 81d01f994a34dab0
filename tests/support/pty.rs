//! Running the real `pi` binary on a pseudo-terminal, for interactive-mode tests.
//!
//! Owns: the pty pair, the child, and a reader thread that feeds everything the child writes
//! into a `vt100` screen, so tests type keys and read the screen as a user would.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub struct PtyChild {
    master: File,
    child: Child,
    screen: Arc<Mutex<vt100::Parser>>,
    /// Closed by the reader thread once the child's side of the pty is gone and read out.
    drained: std::sync::mpsc::Receiver<()>,
}

impl PtyChild {
    /// Starts `cmd` with a `cols`×`rows` terminal as its stdin, stdout and stderr, as the
    /// session leader with that terminal as its controlling tty.
    pub fn spawn(mut cmd: Command, cols: u16, rows: u16) -> PtyChild {
        let (mut master_fd, mut slave_fd) = (0, 0);
        let size = libc::winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: openpty fills the two fds; the null name/termios pointers are allowed.
        let rc = unsafe {
            libc::openpty(
                &mut master_fd,
                &mut slave_fd,
                std::ptr::null_mut(),
                std::ptr::null(),
                &size,
            )
        };
        assert_eq!(rc, 0, "openpty failed: {}", std::io::Error::last_os_error());
        // SAFETY: both fds are fresh from openpty and owned from here on.
        let (master, slave) =
            unsafe { (File::from_raw_fd(master_fd), OwnedFd::from_raw_fd(slave_fd)) };
        let stdio = |fd: &OwnedFd| fd.try_clone().expect("dup pty slave");
        cmd.stdin(stdio(&slave))
            .stdout(stdio(&slave))
            .stderr(stdio(&slave))
            .env("TERM", "xterm-256color");
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("spawn pi on a pty");
        drop(slave);
        let screen = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 1000)));
        let mut reader = master.try_clone().expect("clone pty master");
        let sink = Arc::clone(&screen);
        let (drained_tx, drained) = std::sync::mpsc::channel::<()>();
        // Detached: it ends when the child closes the pty (EIO on read).
        std::thread::spawn(move || {
            let _drained = drained_tx;
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .process(&buf[..n]);
            }
        });
        PtyChild {
            master,
            child,
            screen,
            drained,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `sig` (e.g. `libc::SIGTERM`) to the process.
    pub fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on our own child's pid; no memory is touched.
        let rc = unsafe { libc::kill(self.child.id() as libc::pid_t, sig) };
        assert_eq!(rc, 0, "kill({}, {sig}) failed", self.child.id());
    }

    /// Types `bytes` as the user would.
    pub fn send(&mut self, bytes: &str) {
        self.master
            .write_all(bytes.as_bytes())
            .expect("write to pty");
        self.master.flush().expect("flush pty");
    }

    /// The visible screen, rows joined by newlines.
    pub fn screen(&self) -> String {
        self.screen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .screen()
            .contents()
    }

    /// Whether the alternate screen is shown (pi 1.x's fullscreen mode).
    pub fn alternate_screen(&self) -> bool {
        self.screen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .screen()
            .alternate_screen()
    }

    /// Waits until the screen shows `text`; panics with the screen after `timeout`.
    pub fn wait_for(&self, text: &str, timeout: Duration) {
        let start = Instant::now();
        while !self.screen().contains(text) {
            assert!(
                start.elapsed() < timeout,
                "timed out waiting for {text:?}; screen:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until the screen no longer shows `text` (a run's "Working..." once it is over);
    /// panics with the screen after `timeout`.
    pub fn wait_gone(&self, text: &str, timeout: Duration) {
        let start = Instant::now();
        while self.screen().contains(text) {
            assert!(
                start.elapsed() < timeout,
                "timed out waiting for {text:?} to go; screen:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for the child to exit (killing it after `timeout`), then for the screen to hold
    /// everything it wrote.
    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for pi") {
                // A process it left holding the terminal must not stall the test.
                let _ = self.drained.recv_timeout(Duration::from_secs(5));
                return status;
            }
            if start.elapsed() > timeout {
                let _ = self.child.kill();
                panic!("pi did not exit; screen:\n{}", self.screen());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for PtyChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
