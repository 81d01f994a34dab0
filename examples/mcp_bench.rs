//! MCP costs for `make bench` (scripts/bench.sh): what MCP adds to start-up when no server is
//! configured, and what one `tools/call` round trip over stdio costs on top of the server's
//! own time (our client against the same server driven over raw pipes).
//!
//! Prints `mcp_start_us median=…` and `mcp_call_us raw=… ours=… overhead=…` (medians, µs).

// Not part of the binary: std's sorts are fine here (clippy.toml keeps them out of `src/`).
#![allow(clippy::disallowed_methods)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pi::mcp::client::{Client, ClientOptions, RequestOptions};
use pi::mcp::stdio::{self, StdioSpec};
use serde_json::json;

const CALLS: usize = 2000;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn fake_server() -> String {
    format!(
        "{}/tests/support/mcp_fake_server.py",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// `McpManager::start` in a directory without `mcp.json`: what every run pays.
fn start_cost() -> f64 {
    let dir = std::env::temp_dir().join(format!("pi-mcp-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut times = Vec::new();
    for _ in 0..1000 {
        let t = Instant::now();
        let m = pi::mcp::McpManager::start(pi::mcp::McpOptions {
            agent_dir: dir.clone(),
            cwd: dir.clone(),
            project_trusted: true,
            tool_filter: None,
            tool_exclude: None,
            reporter: Arc::new(|_: &str, _: &str| {}),
            has_ui: false,
            extension_servers: None,
        });
        times.push(t.elapsed().as_secs_f64() * 1e6);
        assert!(m.snapshot().is_empty());
    }
    let _ = std::fs::remove_dir_all(&dir);
    median(times)
}

/// The server over raw pipes: write a call, read its answer line. The server's own time.
fn raw_calls() -> f64 {
    let mut child = Command::new("python3")
        .arg(fake_server())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}});
    writeln!(stdin, "{init}").unwrap();
    stdout.read_line(&mut line).unwrap();
    let mut times = Vec::new();
    for i in 1..=CALLS {
        let call = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hello"}}});
        let t = Instant::now();
        writeln!(stdin, "{call}").unwrap();
        stdin.flush().unwrap();
        line.clear();
        stdout.read_line(&mut line).unwrap();
        let _: serde_json::Value = serde_json::from_str(&line).unwrap();
        times.push(t.elapsed().as_secs_f64() * 1e6);
    }
    drop(stdin);
    let _ = child.wait();
    median(times)
}

/// The same calls through our client and stdio transport.
fn client_calls() -> f64 {
    let spec = StdioSpec {
        command: "python3".into(),
        args: vec![fake_server()],
        env: Vec::new(),
        cwd: std::env::temp_dir(),
    };
    let options = ClientOptions {
        timeout: Duration::from_secs(30),
        roots: Vec::new(),
        on_notification: Arc::new(|_, _| {}),
        on_close: Arc::new(|_| {}),
    };
    let client = Client::connect(options, None, |sink| stdio::start(&spec, sink)).expect("connect");
    let mut times = Vec::new();
    let o = RequestOptions::new(Duration::from_secs(30), None);
    for _ in 0..CALLS {
        let t = Instant::now();
        client
            .call_tool("echo", json!({"text": "hello"}), o)
            .unwrap();
        times.push(t.elapsed().as_secs_f64() * 1e6);
    }
    client.close();
    median(times)
}

fn main() {
    println!("mcp_start_us median={:.1}", start_cost());
    // Alternate to spread machine noise over both sides.
    let (mut raw, mut ours) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        raw.push(raw_calls());
        ours.push(client_calls());
    }
    let (raw, ours) = (median(raw), median(ours));
    println!(
        "mcp_call_us raw={raw:.1} ours={ours:.1} overhead={:.1}",
        ours - raw
    );
}
