//! `pi acp` and the editor around the tools: an approval rule's question as
//! `session/request_permission` with allow once, allow always (for the session, or saved to the
//! settings) and reject; `bash` in the editor's own terminal when it offers terminals.

use serde_json::{json, Value};

use crate::support::mock::sse_tool_calls;
use crate::support::pi::PiConversation;
use crate::support::{MockServer, PiCommand, Reply};

const API: &str = "openai-completions";

fn request(pi: &mut PiConversation, id: u64, method: &str, params: Value) -> Value {
    pi.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
    pi.expect(&format!("the answer to {method}"), |v| {
        v["id"] == id && v.get("method").is_none()
    })
}

/// initialize (with `capabilities`) and session/new; the session id.
fn open_session(c: &mut PiConversation, cwd: &std::path::Path, capabilities: Value) -> String {
    request(
        c,
        1,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": capabilities}),
    );
    let new = request(
        c,
        2,
        "session/new",
        json!({"cwd": cwd.to_string_lossy(), "mcpServers": []}),
    );
    new["result"]["sessionId"].as_str().unwrap().to_string()
}

fn send_prompt(c: &mut PiConversation, id: u64, session: &str, text: &str) {
    let prompt = json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]});
    c.send(
        &json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt", "params": prompt})
            .to_string(),
    );
}

#[test]
fn approval_questions_offer_once_always_and_reject_and_always_is_remembered() {
    let mock = MockServer::start();
    // The same call twice, then two others: one allowed "always" (saved), one rejected.
    let calls = [
        "echo one >> log",
        "echo one >> log",
        "echo two >> log",
        "echo three >> log",
        "echo one >> log",
    ];
    for (i, command) in calls.iter().enumerate() {
        mock.push(Reply::sse(sse_tool_calls(
            API,
            &[(&format!("c{i}"), "bash", json!({ "command": command }))],
        )));
    }
    mock.push(Reply::text(API, "ok"));
    let pi = PiCommand::for_mock(API, &mock)
        .write_agent_file(
            "settings.json",
            r#"{"permissions": {"ask": ["bash(echo *)"]}}"#,
        )
        .args(["--mode", "acp"]);
    let cwd = pi.cwd().to_path_buf();
    let settings = pi.agent_dir().join("settings.json");
    let mut c = pi.converse();
    let session = open_session(&mut c, &cwd, json!({}));
    send_prompt(&mut c, 3, &session, "log");
    // Asked for: call 1 (allow for the session), call 3 (always, saved), call 4 (reject).
    // Calls 2 and 5 repeat call 1: not asked again.
    for (command, pick) in [
        ("echo one", "allow_always"),
        ("echo two", "allow_always saved"),
        ("echo three", "reject_once"),
    ] {
        let ask = c.expect("a permission request", |v| {
            v["method"] == "session/request_permission"
        });
        assert_eq!(ask["params"]["sessionId"], session.as_str());
        assert!(
            ask.to_string().contains(command),
            "the editor sees the call: {ask}"
        );
        let options = ask["params"]["options"].as_array().unwrap().clone();
        let kinds: Vec<&str> = options
            .iter()
            .map(|o| o["kind"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            ["allow_once", "allow_always", "allow_always", "reject_once"],
            "{ask}"
        );
        let option = match pick {
            "allow_always" => &options[1],
            "allow_always saved" => &options[2],
            _ => &options[3],
        };
        assert!(
            pick != "allow_always saved" || option["name"].as_str().unwrap().contains("saved"),
            "{option}"
        );
        c.send(
            &json!({"jsonrpc": "2.0", "id": ask["id"],
                "result": {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}})
            .to_string(),
        );
    }
    let end = c.expect("the prompt's answer", |v| v["id"] == 3);
    assert_eq!(end["result"]["stopReason"], "end_turn");
    let (code, lines, _) = c.finish();
    assert_eq!(code, Some(0));
    let asked = lines
        .iter()
        .filter(|l| l.contains("session/request_permission"))
        .count();
    assert_eq!(asked, 3, "repeated calls were not asked again: {lines:?}");
    assert_eq!(
        std::fs::read_to_string(cwd.join("log")).unwrap(),
        "one\none\ntwo\none\n",
        "allowed calls ran, the rejected one did not"
    );
    let saved = std::fs::read_to_string(settings).unwrap();
    assert!(
        saved.contains("bash(echo two >> log)") && !saved.contains("bash(echo one >> log)"),
        "only \"always\" is saved: {saved}"
    );
}

#[test]
fn bash_runs_in_the_editors_terminal_when_it_offers_terminals_and_a_cancel_kills_it() {
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[(
            "t1",
            "bash",
            json!({"command": "echo from-the-editor; echo model=$PI_MODEL; exit 3"}),
        )],
    )));
    mock.push(Reply::text(API, "it failed"));
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("t2", "bash", json!({"command": "sleep 600"}))],
    )));
    let pi = PiCommand::for_mock(API, &mock);
    let dir = tempfile::tempdir().unwrap();
    let spec = super::acp::client_spec(
        &pi.again().args(["acp", "--model", "mock/mock-model"]),
        dir.path(),
    );
    let sdk = crate::support::mcp::deps_dir().join("acp-npm");
    assert!(
        sdk.join("node_modules/@agentclientprotocol/sdk").is_dir(),
        "missing the TypeScript ACP SDK in {}: run scripts/test-deps.sh",
        sdk.display()
    );
    let out = std::process::Command::new("node")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/support/acp_terminal_client.mjs"
        ))
        .arg(&sdk)
        .arg(&spec)
        .output()
        .expect("run the TypeScript ACP client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.starts_with("ok"),
        "the client's scenario failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_str(stdout.lines().nth(1).unwrap()).unwrap();
    let created = &seen["created"][0];
    assert_eq!(created["args"][0], "-c");
    assert_eq!(created["cwd"], pi.cwd().to_string_lossy().as_ref());
    // What the editor ran printed, and how it ended, is what the model read.
    let sent = mock.requests()[1].body_text();
    assert!(
        sent.contains("from-the-editor")
            && sent.contains("model=mock-model")
            && sent.contains("Command exited with code 3"),
        "{sent}"
    );
}

#[test]
fn under_a_sandbox_pi_runs_bash_itself_even_when_the_editor_offers_terminals() {
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("s1", "bash", json!({"command": "echo confined-here"}))],
    )));
    mock.push(Reply::text(API, "ok"));
    let pi =
        PiCommand::for_mock(API, &mock).args(["--sandbox", "workspace-write", "--mode", "acp"]);
    let cwd = pi.cwd().to_path_buf();
    let mut c = pi.converse();
    let session = open_session(&mut c, &cwd, json!({"terminal": true}));
    send_prompt(&mut c, 3, &session, "run");
    let next = c.expect("the answer, not a terminal", |v| {
        v["id"] == 3 || v["method"] == "terminal/create"
    });
    assert_eq!(next["result"]["stopReason"], "end_turn", "{next}");
    let (code, lines, _) = c.finish();
    assert_eq!(code, Some(0));
    let shown = lines
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| {
            v["params"]["update"]["sessionUpdate"] == "tool_call_update"
                && v["params"]["update"]["status"] == "completed"
        })
        .expect("the call's result");
    assert_eq!(
        shown["params"]["update"]["content"][0]["content"]["text"], "confined-here\n",
        "{shown}"
    );
}
