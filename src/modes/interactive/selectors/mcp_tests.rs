use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use super::super::common::test_support::*;
use super::*;
use crate::mcp::McpOptions;

fn fake(extra: Value) -> Value {
    let mut e = json!({
        "command": "python3",
        "args": [format!("{}/tests/support/mcp_fake_server.py", env!("CARGO_MANIFEST_DIR"))],
    });
    for (k, v) in extra.as_object().unwrap() {
        e[k] = v.clone();
    }
    e
}

fn manager(dir: &Path, servers: Value) -> Arc<McpManager> {
    std::fs::write(
        dir.join("mcp.json"),
        json!({ "mcpServers": servers }).to_string(),
    )
    .unwrap();
    let m = McpManager::start(McpOptions {
        agent_dir: dir.to_path_buf(),
        cwd: dir.to_path_buf(),
        project_trusted: false,
        tool_filter: None,
        tool_exclude: None,
        reporter: Arc::new(|_: &str, _: &str| {}),
        has_ui: true,
        extension_servers: None,
    });
    assert!(m.wait_until_settled(Duration::from_secs(20)));
    m
}

#[test]
fn the_list_puts_problems_first_and_manages_a_server() {
    let dir = tempfile::tempdir().unwrap();
    let m = manager(
        dir.path(),
        json!({
            "alpha": fake(json!({"toolExposure": {"echo": "direct"}})),
            "broken": {"command": "/nonexistent/mcp-server"},
            "bad": {"url": 3},
        }),
    );
    let mut s = McpScreen::new(Arc::clone(&m), theme());
    let lines = screen(&mut s, 120);
    assert_eq!(lines[1], " MCP servers");
    assert!(lines[2].starts_with(" config: "), "{lines:?}");
    let broken = lines.iter().position(|l| l.contains("broken")).unwrap();
    let alpha = lines.iter().position(|l| l.contains("alpha")).unwrap();
    assert!(broken < alpha, "failed servers come first: {lines:?}");
    assert!(lines[broken].contains("failed: "), "{}", lines[broken]);
    assert!(
        lines[alpha].contains("connected · 12 tools · resources · codemode · global"),
        "{}",
        lines[alpha]
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("enter manage • ") && l.ends_with(" close")),
        "{lines:?}"
    );
    assert_fits(&mut s);

    // alpha's page.
    s.handle_input(&key("down"));
    s.handle_input(&key("enter"));
    let lines = screen(&mut s, 120);
    assert_eq!(lines[1], " MCP server alpha");
    assert!(lines
        .iter()
        .any(|l| l.trim() == "State: connected · 12 tools · resources"));
    assert!(lines.iter().any(|l| l.contains(&format!(
        "global: {}",
        dir.path().join("mcp.json").display()
    ))));
    let labels: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("→ ").or_else(|| l.strip_prefix("  ")))
        .map(|l| l.split("  ").next().unwrap_or(""))
        .collect();
    assert_eq!(labels, ["Tools", "Reconnect", "Exposure", "Disable"]);

    // Its tools, with the exposures that differ.
    s.handle_input(&key("enter"));
    let lines = screen(&mut s, 120);
    assert_eq!(lines[1], " Tools of alpha");
    assert!(lines
        .iter()
        .any(|l| l.contains("Some tools override it with toolExposure.")));
    assert!(lines
        .iter()
        .any(|l| l.contains("echo") && l.contains("[direct] Echo the given text back.")));
    s.handle_input(&key("escape"));

    // Exposure: saved to mcp.json.
    for _ in 0..2 {
        s.handle_input(&key("down"));
    }
    s.handle_input(&key("enter"));
    let lines = screen(&mut s, 120);
    assert_eq!(lines[1], " Exposure of alpha");
    assert!(lines.iter().any(|l| l.contains("✓ codemode")));
    s.handle_input(&key("down"));
    s.handle_input(&key("down"));
    s.handle_input(&key("enter"));
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("mcp.json")).unwrap())
            .unwrap();
    assert_eq!(saved["mcpServers"]["alpha"]["exposure"], "direct");
    let lines = screen(&mut s, 120);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("Exposure") && l.contains("direct")),
        "{lines:?}"
    );

    // Disable: saved, and the page offers Enable.
    let disable = lines
        .iter()
        .filter(|l| l.starts_with("→ ") || l.starts_with("  "))
        .position(|l| l.contains("Disable"))
        .unwrap();
    let selected = lines
        .iter()
        .filter(|l| l.starts_with("→ ") || l.starts_with("  "))
        .position(|l| l.starts_with("→ "))
        .unwrap();
    for _ in selected..disable {
        s.handle_input(&key("down"));
    }
    s.handle_input(&key("enter"));
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("mcp.json")).unwrap())
            .unwrap();
    assert_eq!(saved["mcpServers"]["alpha"]["enabled"], false);
    let lines = screen(&mut s, 120);
    assert!(
        lines.iter().any(|l| l.trim() == "State: disabled"),
        "{lines:?}"
    );
    assert!(lines
        .iter()
        .any(|l| l.contains("Enable") && l.contains("saved to the global mcp.json")));

    // The broken server shows its full error.
    s.handle_input(&key("escape"));
    let lines = screen(&mut s, 120);
    let row = lines.iter().position(|l| l.contains("broken")).unwrap();
    let at = lines.iter().position(|l| l.starts_with("→ ")).unwrap();
    for _ in at..row {
        s.handle_input(&key("down"));
    }
    s.handle_input(&key("enter"));
    let lines = screen(&mut s, 120);
    assert_eq!(lines[1], " MCP server broken");
    assert!(
        lines.iter().any(|l| l.contains("/nonexistent/mcp-server")),
        "{lines:?}"
    );
    s.handle_input(&key("escape"));
    s.handle_input(&key("escape"));
    assert_eq!(s.take_outcome(), Some(McpOutcome::Closed(None)));
    m.shutdown();
}

#[test]
fn an_empty_list_says_where_servers_go() {
    let dir = tempfile::tempdir().unwrap();
    let m = manager(dir.path(), json!({}));
    let mut s = McpScreen::new(m, theme());
    let lines = screen(&mut s, 200);
    assert!(lines.iter().any(|l| l.contains(&format!(
        "No MCP servers configured. Add them to {} or .pi/mcp.json.",
        dir.path().join("mcp.json").display()
    ))));
    s.handle_input(&key("escape"));
    assert_eq!(s.take_outcome(), Some(McpOutcome::Closed(None)));
}

/// Polls the screen until `done` holds for its lines (sign-ins run on threads).
fn render_until(s: &mut McpScreen, what: &str, done: impl Fn(&[String]) -> bool) -> Vec<String> {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let lines = screen(s, 400);
        if done(&lines) {
            return lines;
        }
        assert!(std::time::Instant::now() < deadline, "no {what}: {lines:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn signing_in_with_a_pasted_redirect_url() {
    let server = crate::mcp::oauth::test_server::Server::start();
    let dir = tempfile::tempdir().unwrap();
    let m = manager(
        dir.path(),
        json!({"docs": {"url": format!("{}/mcp", server.origin)}}),
    );
    let mut s = McpScreen::new(Arc::clone(&m), theme());
    let lines = screen(&mut s, 120);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("docs") && l.contains("needs sign-in · codemode · global")),
        "{lines:?}"
    );
    s.handle_input(&key("enter"));
    let lines = screen(&mut s, 120);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("→ Sign in") && l.contains("opens the browser")),
        "{lines:?}"
    );
    s.handle_input(&key("enter"));
    let lines = render_until(&mut s, "authorization URL", |l| {
        l.iter()
            .any(|x| x.contains("paste the URL it was redirected to"))
    });
    assert_eq!(lines[1], " Sign in to docs");
    let from = lines
        .iter()
        .position(|l| l.contains("If it did not open, visit:"))
        .unwrap()
        + 1;
    let url: String = lines[from..]
        .iter()
        .take_while(|l| !l.is_empty())
        .map(|l| l.trim())
        .collect();
    assert!(
        url.starts_with(&format!("{}/authorize?", server.origin)),
        "{url}"
    );
    let redirect = crate::mcp::oauth::test_server::authorize(&url);
    type_text(&mut s, &redirect);
    s.handle_input(&key("enter"));
    let lines = render_until(&mut s, "the server page again", |l| {
        l.iter().any(|x| x.trim() == "State: connected · 2 tools")
    });
    assert_eq!(lines[1], " MCP server docs");
    assert!(lines.iter().any(|l| l.contains("Sign out")), "{lines:?}");
    // Sign out: the credentials are gone and the server needs a sign-in again.
    let at = lines.iter().position(|l| l.starts_with("→ ")).unwrap();
    let row = lines.iter().position(|l| l.contains("Sign out")).unwrap();
    for _ in at..row {
        s.handle_input(&key("down"));
    }
    s.handle_input(&key("enter"));
    render_until(&mut s, "needs sign-in", |l| {
        l.iter().any(|x| x.trim() == "State: needs sign-in")
    });
    let auth = std::fs::read_to_string(dir.path().join("mcp-auth.json")).unwrap();
    assert!(!auth.contains("access_token"), "{auth}");
    m.shutdown();
}

#[test]
fn escape_cancels_a_sign_in() {
    let server = crate::mcp::oauth::test_server::Server::start();
    let dir = tempfile::tempdir().unwrap();
    let m = manager(
        dir.path(),
        json!({"docs": {"url": format!("{}/mcp", server.origin)}}),
    );
    let mut s = McpScreen::signing_in(Arc::clone(&m), theme(), "docs");
    render_until(&mut s, "authorization URL", |l| {
        l.iter()
            .any(|x| x.contains("paste the URL it was redirected to"))
    });
    s.handle_input(&key("escape"));
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let outcome = loop {
        if let Some(o) = s.take_outcome() {
            break o;
        }
        assert!(std::time::Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(
        outcome,
        McpOutcome::Closed(Some(("Sign-in cancelled.".into(), "info")))
    );
    m.shutdown();
}
