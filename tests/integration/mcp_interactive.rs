//! MCP in interactive pi on a pseudo-terminal: the `[MCP]` header section, the `/mcp`
//! manager (state, a server's page, disabling saved to mcp.json), `/reload` connecting a
//! server added to mcp.json meanwhile, `/mcp reconnect`, and no server left running. And a
//! server an extension registers (RPC mode), which the model then calls.

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

/// An extension (Python, speaking the protocol) that registers an MCP server when it loads and
/// reports what pi answers through `ui.notify`.
const REGISTERING_EXTENSION: &str = r#"#!/usr/bin/env python3
import json, sys

CONFIG = json.loads(sys.argv[1]) if len(sys.argv) > 1 else None

def send(m):
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()

def notify(text):
    send({"type": "call", "method": "ui.notify", "params": {"message": text}})

for line in sys.stdin:
    msg = json.loads(line)
    kind, mid = msg.get("type"), msg.get("id")
    if kind == "hello":
        send({"type": "register", "protocol": 1, "name": "mcp-reg", "events": ["mcp_servers_change"]})
        send({"type": "call", "id": "bad", "method": "registerMcpServer",
              "params": {"name": "bad name", "config": {"command": "x"}}})
        send({"type": "call", "id": "r1", "method": "registerMcpServer",
              "params": {"name": "reg", "config": CONFIG_PLACEHOLDER}})
    elif kind == "reply" and mid == "bad":
        notify("refused: " + msg.get("error", ""))
    elif kind == "reply" and mid == "r1":
        send({"type": "call", "id": "r2", "method": "getMcpServers"})
    elif kind == "reply" and mid == "r2":
        notify("servers: " + ",".join(s["name"] + "@" + s["extensionPath"].split("/")[-1] for s in msg["result"]))
    elif kind == "event" and msg.get("event") == "mcp_servers_change":
        notify("changed: " + str(len(msg["data"]["servers"])))
"#;

#[test]
fn an_extension_registers_a_server_the_model_then_calls() {
    use crate::support::mock::{sse_tool_calls, Reply};
    use std::os::unix::fs::PermissionsExt;
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[(
            "e",
            "mcp__reg__echo",
            json!({"text": "from an extension's server"}),
        )],
    )));
    mock.push(Reply::text(API, "done"));
    let m = marker("mcp-ext");
    let pi = PiCommand::for_mock(API, &mock)
        .env("PI_TEST_MARKER", &m)
        .args(["--mode", "rpc", "--no-session"]);
    let ext = pi.agent_dir().join("extensions/mcp_reg.py");
    std::fs::create_dir_all(ext.parent().unwrap()).unwrap();
    let config = fake_entry(json!({"exposure": "direct"})).to_string();
    std::fs::write(
        &ext,
        REGISTERING_EXTENSION.replace("CONFIG_PLACEHOLDER", &config),
    )
    .unwrap();
    std::fs::set_permissions(&ext, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut talk = pi.converse();
    let refused = talk.expect("refusal", |v| {
        v["method"] == "notify"
            && v["message"]
                .as_str()
                .is_some_and(|t| t.starts_with("refused"))
    });
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("Invalid MCP server registered by extension"),
        "{refused}"
    );
    talk.expect("mcp_servers_change", |v| {
        v["method"] == "notify" && v["message"] == "changed: 1"
    });
    talk.expect("the registration", |v| {
        v["method"] == "notify" && v["message"] == "servers: reg@mcp_reg.py"
    });
    talk.send(r#"{"type":"prompt","message":"echo something"}"#);
    let end = talk.expect("tool end", |v| v["type"] == "tool_execution_end");
    assert_eq!(end["isError"], false, "{end}");
    talk.expect("agent_end", |v| v["type"] == "agent_end");
    let (code, _, _) = talk.finish();
    assert_eq!(code, Some(0));
    assert!(mock.requests()[1]
        .body_text()
        .contains("from an extension's server"));
    assert!(
        survivors(&m).is_empty(),
        "the registered server outlived pi"
    );
}
