//! Running the real `pi` binary from integration tests.
//!
//! Owns: scratch directories ([`TestDir`]) and the `pi` child processes the tests start.
//! Does not own: the mock server (see `mock.rs`).
//!
//! Every run gets its own HOME, agent dir (`PI_CODING_AGENT_DIR`) and working directory, an
//! environment cleared of everything but `PATH` (so no provider key or user config leaks in),
//! plus `PI_OFFLINE=1`. A run that outlives [`TIMEOUT`] is killed and the test fails.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use super::mock::MockServer;

/// No single `pi` run may take longer than this.
pub const TIMEOUT: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------------------------------------
// Scratch directories
// ---------------------------------------------------------------------------------------------

/// A directory under the system temp dir, removed (recursively) on drop. Its path is
/// canonical, so it compares equal to what the child sees as its cwd.
#[derive(Debug)]
pub struct TestDir {
    path: PathBuf,
}

impl TestDir {
    pub fn new(label: &str) -> TestDir {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let name = format!("pi-test-{label}-{}-{n}-{nanos}", std::process::id());
        let path = std::env::temp_dir().join(name);
        std::fs::create_dir_all(&path).expect("create test dir");
        let path = path.canonicalize().expect("canonicalize test dir");
        TestDir { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn join(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.path.join(rel)
    }

    /// Writes `rel` (creating parent dirs) and returns its absolute path.
    pub fn write(&self, rel: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> PathBuf {
        let p = self.path.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("create parent dir");
        }
        std::fs::write(&p, contents).expect("write test file");
        p
    }

    pub fn read(&self, rel: impl AsRef<Path>) -> String {
        std::fs::read_to_string(self.path.join(rel)).expect("read test file")
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

// ---------------------------------------------------------------------------------------------
// models.json / settings.json helpers
// ---------------------------------------------------------------------------------------------

/// The base URL a provider of `api` uses for a mock on `port`.
pub fn base_url_for(api: &str, port: u16) -> String {
    match api {
        "anthropic-messages" => format!("http://127.0.0.1:{port}"),
        "google-generative-ai" => format!("http://127.0.0.1:{port}/v1beta"),
        _ => format!("http://127.0.0.1:{port}/v1"),
    }
}

/// A models.json with one provider `mock` speaking `api` against the mock on `port`, key
/// `test-key`, one model `mock-model`.
pub fn models_json_for(api: &str, port: u16) -> String {
    serde_json::to_string_pretty(&serde_json::json!({
        "providers": {
            "mock": {
                "baseUrl": base_url_for(api, port),
                "api": api,
                "apiKey": "test-key",
                "models": [{"id": "mock-model"}]
            }
        }
    }))
    .unwrap()
}

/// Same as [`models_json_for`] without `apiKey`.
pub fn models_json_without_key(api: &str, port: u16) -> String {
    serde_json::to_string_pretty(&serde_json::json!({
        "providers": {
            "mock": {
                "baseUrl": base_url_for(api, port),
                "api": api,
                "models": [{"id": "mock-model"}]
            }
        }
    }))
    .unwrap()
}

/// settings.json that keeps retries fast (20 ms base delay).
pub const FAST_RETRY_SETTINGS: &str = r#"{"retry":{"baseDelayMs":20}}"#;
/// settings.json that turns auto-retry off.
pub const NO_RETRY_SETTINGS: &str = r#"{"retry":{"enabled":false}}"#;

// ---------------------------------------------------------------------------------------------
// PiCommand
// ---------------------------------------------------------------------------------------------

/// What a finished run left behind.
#[derive(Debug)]
pub struct Output {
    pub status: ExitStatus,
    /// Exit code; `None` when killed by a signal.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Output {
    pub fn success(&self) -> bool {
        self.status.success()
    }

    /// Asserts exit code `code`, printing both streams when it differs.
    #[track_caller]
    pub fn assert_code(&self, code: i32) -> &Output {
        assert_eq!(
            self.code,
            Some(code),
            "unexpected exit status {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status,
            self.stdout,
            self.stderr
        );
        self
    }

    #[track_caller]
    pub fn assert_no_panic(&self) -> &Output {
        assert!(
            !self.stderr.contains("panicked"),
            "pi panicked:\n{}",
            self.stderr
        );
        self
    }

    /// stdout split into lines, each parsed as JSON (panics on a non-JSON line).
    #[track_caller]
    pub fn json_lines(&self) -> Vec<serde_json::Value> {
        self.stdout
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {l}"))
            })
            .collect()
    }
}

/// Builder for one run of the `pi` binary in a sealed environment.
pub struct PiCommand {
    home: Arc<TestDir>,
    agent_dir: PathBuf,
    cwd: PathBuf,
    args: Vec<String>,
    envs: Vec<(String, String)>,
    stdin: Option<Vec<u8>>,
    timeout: Duration,
}

impl Default for PiCommand {
    fn default() -> Self {
        PiCommand::new()
    }
}

impl PiCommand {
    /// A fresh HOME with `HOME/.pi/agent` as agent dir and `HOME/work` as cwd.
    pub fn new() -> PiCommand {
        let home = Arc::new(TestDir::new("home"));
        let agent_dir = home.join(".pi/agent");
        let cwd = home.join("work");
        std::fs::create_dir_all(&agent_dir).expect("create agent dir");
        std::fs::create_dir_all(&cwd).expect("create cwd");
        PiCommand {
            home,
            agent_dir,
            cwd,
            args: Vec::new(),
            envs: Vec::new(),
            stdin: None,
            timeout: TIMEOUT,
        }
    }

    /// Another run in the same HOME, agent dir and cwd (so it sees this run's sessions and
    /// config), with this run's environment but no arguments or stdin.
    pub fn again(&self) -> PiCommand {
        PiCommand {
            home: Arc::clone(&self.home),
            agent_dir: self.agent_dir.clone(),
            cwd: self.cwd.clone(),
            args: Vec::new(),
            envs: self.envs.clone(),
            stdin: None,
            timeout: self.timeout,
        }
    }

    /// A run wired to `mock`: models.json for `api`, fast retries, `--model mock/mock-model`.
    pub fn for_mock(api: &str, mock: &MockServer) -> PiCommand {
        PiCommand::new()
            .write_agent_file("models.json", &models_json_for(api, mock.port()))
            .write_agent_file("settings.json", FAST_RETRY_SETTINGS)
            .args(["--model", "mock/mock-model"])
    }

    pub fn arg(mut self, a: impl Into<String>) -> Self {
        self.args.push(a.into());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    pub fn env(mut self, k: impl Into<String>, v: impl Into<String>) -> Self {
        self.envs.push((k.into(), v.into()));
        self
    }

    /// Text piped to stdin (otherwise stdin is `/dev/null`).
    pub fn stdin(mut self, text: impl AsRef<[u8]>) -> Self {
        self.stdin = Some(text.as_ref().to_vec());
        self
    }

    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.cwd = dir.as_ref().to_path_buf();
        self
    }

    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = t;
        self
    }

    /// Writes `name` (e.g. `models.json`, `settings.json`, `auth.json`) into the agent dir.
    pub fn write_agent_file(self, name: &str, text: &str) -> Self {
        let p = self.agent_dir.join(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("create agent subdir");
        }
        std::fs::write(p, text).expect("write agent file");
        self
    }

    /// Writes a file relative to the working directory.
    pub fn write_file(self, rel: &str, text: &str) -> Self {
        let p = self.cwd.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("create parent dir");
        }
        std::fs::write(p, text).expect("write file");
        self
    }

    pub fn home(&self) -> &Path {
        self.home.path()
    }

    pub fn agent_dir(&self) -> &Path {
        &self.agent_dir
    }

    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    pub fn command(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pi"));
        cmd.args(&self.args)
            .current_dir(&self.cwd)
            .env_clear()
            .env(
                "PATH",
                std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()),
            )
            .env("HOME", self.home.path())
            .env("PI_CODING_AGENT_DIR", &self.agent_dir)
            .env("PI_OFFLINE", "1")
            .env("PI_SKIP_VERSION_CHECK", "1")
            .env("PI_TELEMETRY", "0")
            .env("TERM", "dumb")
            .env("NO_COLOR", "1")
            .stdin(if self.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in &self.envs {
            cmd.env(k, v);
        }
        cmd
    }

    /// Starts `pi` without waiting (for signal tests).
    pub fn spawn(&self) -> PiChild {
        let mut child = self.command().spawn().expect("spawn pi");
        let stdin_thread = match (child.stdin.take(), self.stdin.clone()) {
            (Some(mut pipe), Some(data)) => Some(thread::spawn(move || {
                let _ = pipe.write_all(&data);
            })),
            _ => None,
        };
        let stdout = child.stdout.take().map(drain);
        let stderr = child.stderr.take().map(drain);
        PiChild {
            child,
            stdout,
            stderr,
            stdin_thread,
            started: Instant::now(),
            timeout: self.timeout,
            _home: self.home.clone(),
        }
    }

    /// Runs `pi` to completion; kills it and fails the test after the timeout.
    pub fn run(&self) -> Output {
        self.spawn().wait()
    }
}

fn drain<R: Read + Send + 'static>(mut r: R) -> JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        buf
    })
}

/// A running `pi`. Killed on drop if still running.
pub struct PiChild {
    child: Child,
    stdout: Option<JoinHandle<Vec<u8>>>,
    stderr: Option<JoinHandle<Vec<u8>>>,
    stdin_thread: Option<JoinHandle<()>>,
    started: Instant,
    timeout: Duration,
    /// Keeps the scratch HOME alive while the process runs.
    _home: Arc<TestDir>,
}

impl PiChild {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `sig` (e.g. `libc::SIGINT`) to the process.
    pub fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on our own child's pid; no memory is touched.
        let rc = unsafe { libc::kill(self.child.id() as libc::pid_t, sig) };
        assert_eq!(rc, 0, "kill({}, {sig}) failed", self.child.id());
    }

    /// Waits for exit (killing it after the timeout, which fails the test) and collects output.
    /// `elapsed` counts from the call to `wait`.
    #[track_caller]
    pub fn wait(mut self) -> Output {
        let since = Instant::now();
        let deadline = self.started + self.timeout;
        let status = loop {
            if let Some(st) = self.child.try_wait().expect("try_wait") {
                break st;
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                let out = self.collect_streams();
                panic!(
                    "pi did not finish within {:?}; killed\n--- stdout ---\n{}\n--- stderr ---\n{}",
                    self.timeout, out.0, out.1
                );
            }
            thread::sleep(Duration::from_millis(5));
        };
        let elapsed = since.elapsed();
        let (stdout, stderr) = self.collect_streams();
        Output {
            status,
            code: status.code(),
            stdout,
            stderr,
            elapsed,
        }
    }

    /// [`wait`](Self::wait), also returning the process's peak RSS in KiB: the kernel's
    /// high-water mark (`VmHWM` in `/proc/<pid>/status`), read every few milliseconds while
    /// it runs. (`ru_maxrss` would not do: Linux folds the forking test process's own peak
    /// into the child's at exec.) A peak in the last milliseconds before exit can be missed;
    /// a tool's is long over by then.
    #[track_caller]
    pub fn wait_with_peak_rss(mut self) -> (Output, u64) {
        let since = Instant::now();
        let deadline = self.started + self.timeout;
        let pid = self.child.id() as libc::pid_t;
        let status_file = format!("/proc/{pid}/status");
        let mut peak_kib = 0u64;
        let raw = loop {
            if let Ok(text) = std::fs::read_to_string(&status_file) {
                let hwm = text
                    .lines()
                    .find_map(|l| l.strip_prefix("VmHWM:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok());
                peak_kib = peak_kib.max(hwm.unwrap_or(0));
            }
            let mut status = 0;
            // SAFETY: a zeroed rusage is a valid out-parameter.
            let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: wait4 on our own child with valid out-pointers.
            let rc = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
            if rc == pid {
                break status;
            }
            assert!(rc == 0, "wait4 failed: {}", std::io::Error::last_os_error());
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                let out = self.collect_streams();
                panic!(
                    "pi did not finish within {:?}; killed\n--- stdout ---\n{}\n--- stderr ---\n{}",
                    self.timeout, out.0, out.1
                );
            }
            thread::sleep(Duration::from_millis(5));
        };
        let elapsed = since.elapsed();
        let (stdout, stderr) = self.collect_streams();
        let status = std::os::unix::process::ExitStatusExt::from_raw(raw);
        let out = Output {
            status,
            code: status.code(),
            stdout,
            stderr,
            elapsed,
        };
        (out, peak_kib)
    }

    fn collect_streams(&mut self) -> (String, String) {
        if let Some(t) = self.stdin_thread.take() {
            let _ = t.join();
        }
        let get = |h: Option<JoinHandle<Vec<u8>>>| {
            h.map(|h| String::from_utf8_lossy(&h.join().unwrap_or_default()).into_owned())
                .unwrap_or_default()
        };
        (get(self.stdout.take()), get(self.stderr.take()))
    }
}

impl Drop for PiChild {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// A live conversation (RPC clients that answer what pi asks)
// ---------------------------------------------------------------------------------------------

/// A running `pi` whose stdin stays open: write lines, read stdout lines as they come.
pub struct PiConversation {
    child: Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<String>,
    seen: Vec<String>,
    stderr: Option<JoinHandle<Vec<u8>>>,
    _home: Arc<TestDir>,
}

impl PiCommand {
    /// Starts `pi` with a pipe on stdin for [`PiConversation::send`].
    pub fn converse(&self) -> PiConversation {
        let mut cmd = self.command();
        cmd.stdin(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn pi");
        let stdin = child.stdin.take();
        let stderr = child.stderr.take().map(drain);
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        PiConversation {
            child,
            stdin,
            lines: rx,
            seen: Vec::new(),
            stderr,
            _home: self.home.clone(),
        }
    }
}

impl PiConversation {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        stdin.write_all(line.as_bytes()).expect("write to pi");
        stdin.write_all(b"\n").expect("write to pi");
        stdin.flush().expect("flush to pi");
    }

    /// The next stdout line (as JSON) matching `pred`; fails the test after `TIMEOUT`.
    #[track_caller]
    pub fn expect(
        &mut self,
        what: &str,
        pred: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) {
                        if pred(&v) {
                            return v;
                        }
                    }
                }
                Err(_) => panic!(
                    "no {what} from pi; stdout so far:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }

    /// Sends `sig` (e.g. `libc::SIGTERM`) to the process.
    pub fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on our own child's pid; no memory is touched.
        let rc = unsafe { libc::kill(self.child.id() as libc::pid_t, sig) };
        assert_eq!(rc, 0, "kill({}, {sig}) failed", self.child.id());
    }

    /// Waits for exit with stdin still open (after a signal, say); returns (exit code, every
    /// stdout line, stderr).
    #[track_caller]
    pub fn wait_exit(mut self) -> (Option<i32>, Vec<String>, String) {
        let deadline = Instant::now() + TIMEOUT;
        let status = loop {
            if let Some(st) = self.child.try_wait().expect("try_wait") {
                break st;
            }
            assert!(Instant::now() < deadline, "pi did not exit");
            thread::sleep(Duration::from_millis(5));
        };
        self.stdin.take();
        while let Ok(line) = self.lines.recv_timeout(Duration::from_millis(200)) {
            self.seen.push(line);
        }
        let stderr = self
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        (status.code(), std::mem::take(&mut self.seen), stderr)
    }

    /// Closes stdin and waits for exit; returns (exit code, every stdout line, stderr).
    #[track_caller]
    pub fn finish(mut self) -> (Option<i32>, Vec<String>, String) {
        self.stdin.take();
        let deadline = Instant::now() + TIMEOUT;
        let status = loop {
            if let Some(st) = self.child.try_wait().expect("try_wait") {
                break st;
            }
            assert!(
                Instant::now() < deadline,
                "pi did not exit after stdin closed"
            );
            thread::sleep(Duration::from_millis(5));
        };
        while let Ok(line) = self.lines.recv_timeout(Duration::from_millis(200)) {
            self.seen.push(line);
        }
        let stderr = self
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        (status.code(), std::mem::take(&mut self.seen), stderr)
    }
}

impl Drop for PiConversation {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
