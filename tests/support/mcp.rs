//! MCP test fixtures: the real third-party servers installed by `scripts/test-deps.sh` (the
//! tests fail, loudly, when they are missing), our misbehaving fake stdio server, a Streamable
//! HTTP server built with the official Python SDK, and a check that no server outlived pi.

use std::io::Read;
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Where `scripts/test-deps.sh` installed the real servers.
pub fn deps_dir() -> PathBuf {
    let dir = std::env::var_os("PI_TEST_DEPS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-deps"));
    assert!(
        dir.join("npm").is_dir() && dir.join("venv").is_dir(),
        "the MCP test servers are not installed in {}: run scripts/test-deps.sh (make test does)",
        dir.display()
    );
    dir
}

/// `node` and the entry point of @modelcontextprotocol/server-filesystem.
pub fn filesystem_server() -> (String, String) {
    let js =
        deps_dir().join("npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    assert!(
        js.is_file(),
        "missing {}: run scripts/test-deps.sh",
        js.display()
    );
    ("node".into(), js.to_string_lossy().into_owned())
}

/// The npx cache primed with the filesystem server (for `npx -y …` offline).
pub fn npx_cache() -> PathBuf {
    let cache = deps_dir().join("npx-cache");
    assert!(
        cache.is_dir(),
        "missing {}: run scripts/test-deps.sh",
        cache.display()
    );
    cache
}

pub fn fake_server() -> String {
    format!(
        "{}/tests/support/mcp_fake_server.py",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// An `mcpServers` entry running the fake server with `extra` fields.
pub fn fake_entry(extra: Value) -> Value {
    let mut e = json!({"command": "python3", "args": [fake_server()]});
    for (k, v) in extra.as_object().expect("an object") {
        e[k] = v.clone();
    }
    e
}

pub fn mcp_json(servers: Value) -> String {
    serde_json::to_string_pretty(&json!({ "mcpServers": servers })).unwrap()
}

/// The Python SDK's Streamable HTTP server on a free port; killed on drop.
pub struct HttpServer {
    child: Child,
    pub url: String,
}

impl HttpServer {
    pub fn start() -> HttpServer {
        Self::start_script("mcp_http_server.py", deps_dir().join("venv/bin/python"))
    }

    /// `tests/support/mcp_order_server.py` (standard library only): logs the messages it
    /// sees in order and registers tools on `initialized` and when its GET stream opens.
    pub fn start_order_server() -> HttpServer {
        Self::start_script("mcp_order_server.py", PathBuf::from("python3"))
    }

    /// What the order server saw, in order (`GET` for its notification stream).
    pub fn seen(&self) -> Vec<String> {
        let url = self.url.replace("/mcp", "/log");
        let body = ureq::get(&url)
            .call()
            .expect("the order server's log")
            .into_body()
            .read_to_string()
            .unwrap();
        serde_json::from_str(&body).unwrap()
    }

    fn start_script(name: &str, python: PathBuf) -> HttpServer {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let script = format!("{}/tests/support/{name}", env!("CARGO_MANIFEST_DIR"));
        let mut child = Command::new(python)
            .arg(script)
            .arg(port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the Python MCP server");
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = child.try_wait() {
                let mut err = String::new();
                let _ = child.stderr.take().unwrap().read_to_string(&mut err);
                panic!("the Python MCP server exited ({status}): {err}");
            }
            assert!(
                Instant::now() < deadline,
                "the Python MCP server did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        HttpServer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Pids of live processes whose environment holds `PI_TEST_MARKER=<marker>` (pi passes its
/// environment to the servers it starts, and they to theirs).
pub fn processes_with_marker(marker: &str) -> Vec<u32> {
    let needle = format!("PI_TEST_MARKER={marker}");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(env) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        let state = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = state
            .rsplit(')')
            .next()
            .is_some_and(|s| s.trim_start().starts_with('Z'));
        if !zombie && env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()) {
            found.push(pid);
        }
    }
    found
}

/// Waits (a little) for the marked processes to be gone; returns those still alive.
pub fn survivors(marker: &str) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let left = processes_with_marker(marker);
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A marker unique to this test run.
pub fn marker(label: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{label}-{}-{nanos}", std::process::id())
}

/// Our OAuth-protected MCP server with its own authorization server
/// (`tests/support/mcp_oauth_server.py`, stdlib only) on a free port; killed on drop.
pub struct OAuthServer {
    child: Child,
    pub origin: String,
    /// The MCP endpoint.
    pub url: String,
}

impl OAuthServer {
    pub fn start(options: Value) -> OAuthServer {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let script = format!(
            "{}/tests/support/mcp_oauth_server.py",
            env!("CARGO_MANIFEST_DIR")
        );
        let mut child = Command::new("python3")
            .arg(script)
            .arg(port.to_string())
            .arg(options.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the OAuth test server");
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = child.try_wait() {
                let mut err = String::new();
                let _ = child.stderr.take().unwrap().read_to_string(&mut err);
                panic!("the OAuth test server exited ({status}): {err}");
            }
            assert!(
                Instant::now() < deadline,
                "the OAuth test server did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let origin = format!("http://127.0.0.1:{port}");
        OAuthServer {
            child,
            url: format!("{origin}/mcp"),
            origin,
        }
    }

    /// Counters and the last requests the server saw.
    pub fn stats(&self) -> Value {
        let text = ureq::get(&format!("{}/stats", self.origin))
            .call()
            .expect("stats")
            .into_body()
            .read_to_string()
            .unwrap();
        serde_json::from_str(&text).unwrap()
    }

    /// Changes options (`{"expires_in": 1}`) or expires every access token (`{"expire_all": true}`).
    pub fn control(&self, change: Value) {
        ureq::post(&format!("{}/control", self.origin))
            .send(change.to_string())
            .expect("control");
    }
}

impl Drop for OAuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Plays the user's browser: opens the authorization URL (the test server approves at once and
/// redirects) and follows the redirect to pi's loopback callback. Returns the callback page.
pub fn approve_in_browser(authorization_url: &str) -> (u16, String) {
    let agent = browser();
    let mut resp = agent
        .get(authorization_url)
        .call()
        .unwrap_or_else(|e| panic!("authorize request failed: {e}"));
    assert_eq!(
        resp.status(),
        302,
        "authorize did not redirect: {}",
        resp.body_mut().read_to_string().unwrap_or_default()
    );
    let location = location(&resp);
    let mut page = agent
        .get(&location)
        .call()
        .unwrap_or_else(|e| panic!("the callback {location} failed: {e}"));
    let status = page.status().as_u16();
    (status, page.body_mut().read_to_string().unwrap_or_default())
}

/// A client that reports every status and follows no redirect, as a test inspects them.
fn browser() -> ureq::Agent {
    ureq::Agent::config_builder()
        .max_redirects(0)
        .http_status_as_error(false)
        .build()
        .into()
}

fn location(resp: &ureq::http::Response<ureq::Body>) -> String {
    resp.headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .expect("a redirect")
        .to_string()
}

/// The redirect target of an authorization URL, without following it (for pasting).
pub fn authorize_redirect(authorization_url: &str) -> String {
    let resp = browser()
        .get(authorization_url)
        .call()
        .unwrap_or_else(|e| panic!("authorize request failed: {e}"));
    location(&resp)
}
