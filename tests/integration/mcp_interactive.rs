//! MCP in interactive pi on a pseudo-terminal: the `[MCP]` header section, the `/mcp`
//! manager (state, a server's page, disabling saved to mcp.json), `/reload` connecting a
//! server added to mcp.json meanwhile, `/mcp reconnect`, and no server left running.

use std::time::Duration;

use serde_json::{json, Value};

use crate::support::mcp::{fake_entry, marker, mcp_json, survivors};
use crate::support::mock::MockServer;
use crate::support::pi::PiCommand;
use crate::support::pty::PtyChild;

const API: &str = "openai-completions";
const WAIT: Duration = Duration::from_secs(20);

/// A lone Escape: what follows must not arrive before the terminal parser gives up waiting
/// for the rest of an escape sequence.
fn escape(child: &mut PtyChild) {
    child.send("\x1b");
    std::thread::sleep(Duration::from_millis(300));
}

#[test]
fn mcp_screen_header_and_reload() {
    let mock = MockServer::start();
    let m = marker("mcp-screen");
    let pi = PiCommand::for_mock(API, &mock)
        .env("PI_TEST_MARKER", &m)
        .write_agent_file(
            "mcp.json",
            &mcp_json(json!({
                "fake": fake_entry(json!({"exposure": "direct"})),
                "spare": fake_entry(json!({"enabled": false})),
            })),
        );
    let config = pi.agent_dir().join("mcp.json");
    let mut child = PtyChild::spawn(pi.command(), 120, 40);
    child.wait_for("[MCP]", WAIT);
    child.wait_for("fake, spare (disabled)", WAIT);

    child.send("/mcp\r");
    child.wait_for("MCP servers", WAIT);
    child.wait_for("connected · 12 tools · resources · direct · global", WAIT);
    child.wait_for("disabled · codemode · global", WAIT);
    child.send("\r");
    child.wait_for("MCP server fake", WAIT);
    child.wait_for("State: connected · 12 tools · resources", WAIT);
    // Tools, Reconnect, Exposure, Disable: the fourth.
    child.send("\x1b[B\x1b[B\x1b[B\r");
    child.wait_for("State: disabled", WAIT);
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    assert_eq!(saved["mcpServers"]["fake"]["enabled"], false);
    escape(&mut child);
    child.wait_for("disabled · direct · global", WAIT);
    escape(&mut child);

    // A server added to mcp.json meanwhile connects on /reload.
    let mut doc = saved;
    doc["mcpServers"]["added"] = fake_entry(json!({"exposure": "direct"}));
    std::fs::write(&config, doc.to_string()).unwrap();
    child.send("/reload\r");
    child.wait_for("Reloaded", WAIT);
    child.send("/mcp\r");
    child.wait_for("added", WAIT);
    child.wait_for("connected · 12 tools · resources · direct · global", WAIT);
    escape(&mut child);

    child.send("/mcp reconnect added\r");
    child.wait_for(
        "Reconnected to MCP server \"added\" (connected · 12 tools",
        WAIT,
    );
    child.send("/mcp login added\r");
    child.wait_for("No enabled MCP server uses OAuth", WAIT);

    child.send("\x04");
    assert!(child.wait_exit(WAIT).success());
    assert!(survivors(&m).is_empty(), "a server outlived pi");
}
