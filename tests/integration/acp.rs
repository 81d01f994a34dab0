//! `pi --mode acp` / `pi acp`: the Agent Client Protocol over stdio, driven as an editor would:
//! JSON-RPC errors for bad input, initialize, a session whose prompt edits a file (shown as a
//! diff), cancel mid-stream, a prompt after it, mode and option switches, and the session
//! replayed by `session/load` in a fresh process.

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

fn update_kind(v: &Value) -> &str {
    v["params"]["update"]["sessionUpdate"]
        .as_str()
        .unwrap_or("")
}

#[test]
fn bad_lines_get_json_rpc_errors_and_the_agent_lives_on() {
    let mock = MockServer::start();
    let pi = PiCommand::for_mock(API, &mock).args(["--mode", "acp"]);
    let mut c = pi.converse();
    c.send("this is not json");
    let e = c.expect("a parse error", |v| v.get("error").is_some());
    assert_eq!(e["error"]["code"], -32700);
    assert_eq!(e["id"], Value::Null);
    let unknown = request(&mut c, 1, "session/fly", json!({}));
    assert_eq!(unknown["error"]["code"], -32601);
    let missing = request(&mut c, 2, "session/new", json!({}));
    assert_eq!(missing["error"]["code"], -32602);
    assert!(missing["error"]["message"]
        .as_str()
        .unwrap()
        .contains("cwd"));
    let relative = request(
        &mut c,
        3,
        "session/new",
        json!({"cwd": "rel", "mcpServers": []}),
    );
    assert_eq!(relative["error"]["code"], -32602);
    let init = request(&mut c, 4, "initialize", json!({"protocolVersion": 1}));
    assert_eq!(init["result"]["protocolVersion"], 1);
    // Clients read the pi release whose behaviour we follow, as `pi --version` gives programs.
    assert_eq!(init["result"]["agentInfo"]["version"], "1.6.0");
    assert_eq!(init["result"]["agentCapabilities"]["loadSession"], true);
    assert_eq!(
        init["result"]["agentCapabilities"]["promptCapabilities"]["image"],
        true
    );
    let (code, _, stderr) = c.finish();
    assert_eq!(code, Some(0), "closed stdin ends pi cleanly: {stderr}");
}

#[test]
fn a_whole_session_edits_with_a_diff_cancels_switches_and_loads_in_a_fresh_process() {
    let mock = MockServer::start();
    let pi = PiCommand::for_mock(API, &mock)
        .write_file("notes.txt", "alpha\nbeta\n")
        .args(["--mode", "acp"]);
    let cwd = pi.cwd().to_string_lossy().into_owned();
    let file = pi.cwd().join("notes.txt");
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[(
            "call_1",
            "edit",
            json!({"path": "notes.txt", "edits": [{"oldText": "beta", "newText": "gamma"}]}),
        )],
    )));
    mock.push(Reply::text(API, "edited it"));
    let mut c = pi.converse();
    request(&mut c, 1, "initialize", json!({"protocolVersion": 1}));
    let new = request(
        &mut c,
        2,
        "session/new",
        json!({"cwd": cwd, "mcpServers": []}),
    );
    let result = &new["result"];
    let session = result["sessionId"]
        .as_str()
        .expect("a session id")
        .to_string();
    assert_eq!(
        result["modes"]["availableModes"].as_array().unwrap().len(),
        3
    );
    let options = result["configOptions"].as_array().unwrap();
    assert_eq!(options[0]["id"], "model");
    assert_eq!(options[0]["currentValue"], "mock/mock-model");
    assert_eq!(options[1]["id"], "thought_level");
    c.expect("the slash commands", |v| {
        update_kind(v) == "available_commands_update"
    });

    // A prompt whose tool call edits a file: the editor gets the whole file before and after.
    let prompt = json!({"sessionId": session, "prompt": [{"type": "text", "text": "change beta"}]});
    c.send(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt})
            .to_string(),
    );
    let call = c.expect("the tool call", |v| update_kind(v) == "tool_call");
    let call = &call["params"]["update"];
    assert_eq!(call["kind"], "edit");
    assert_eq!(call["title"], "edit notes.txt");
    assert_eq!(
        call["locations"][0]["path"],
        file.to_string_lossy().as_ref()
    );
    let done = c.expect("the tool result", |v| {
        update_kind(v) == "tool_call_update" && v["params"]["update"]["status"] == "completed"
    });
    assert_eq!(
        done["params"]["update"]["content"][0],
        json!({"type": "diff", "path": file.to_string_lossy(), "oldText": "alpha\nbeta\n",
            "newText": "alpha\ngamma\n"})
    );
    c.expect("the answer's text", |v| {
        update_kind(v) == "agent_message_chunk"
    });
    c.expect("the usage", |v| update_kind(v) == "usage_update");
    let end = c.expect("the prompt's answer", |v| v["id"] == 3);
    assert_eq!(end["result"]["stopReason"], "end_turn");

    // Cancel mid-stream: the prompt answers `cancelled`, and the next prompt runs.
    mock.push(Reply::text(API, "a long answer that streams slowly word by word").chunk_delay(300));
    mock.push(Reply::text(API, "after cancel"));
    let prompt = json!({"sessionId": session, "prompt": [{"type": "text", "text": "talk"}]});
    c.send(
        &json!({"jsonrpc": "2.0", "id": 4, "method": "session/prompt", "params": prompt})
            .to_string(),
    );
    c.expect("streaming text", |v| {
        update_kind(v) == "agent_message_chunk"
    });
    c.send(
        &json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}})
            .to_string(),
    );
    let end = c.expect("the cancelled prompt's answer", |v| v["id"] == 4);
    assert_eq!(end["result"]["stopReason"], "cancelled");
    let prompt = json!({"sessionId": session, "prompt": [{"type": "text", "text": "again"}]});
    let end = request(&mut c, 5, "session/prompt", prompt);
    assert_eq!(end["result"]["stopReason"], "end_turn");

    // Settings: thinking level and model as config options, the sandbox as the mode.
    c.send(
        &json!({"jsonrpc": "2.0", "id": 6, "method": "session/set_config_option",
            "params": {"sessionId": session, "configId": "thought_level", "value": "high"}})
        .to_string(),
    );
    // Told as an update too, before the answer (as pi-acp does).
    let told = c.expect("the options as an update", |v| {
        update_kind(v) == "config_option_update"
    });
    let set = c.expect("the answer", |v| v["id"] == 6);
    assert_eq!(
        told["params"]["update"]["configOptions"],
        set["result"]["configOptions"]
    );
    // The mock model does not reason: pi clamps every level to `off`, as it does in a terminal.
    assert_eq!(set["result"]["configOptions"][1]["currentValue"], "off");
    let bad = request(
        &mut c,
        60,
        "session/set_config_option",
        json!({"sessionId": session, "configId": "thought_level", "value": "extreme"}),
    );
    assert_eq!(bad["error"]["code"], -32602);
    let bad = request(
        &mut c,
        7,
        "session/set_config_option",
        json!({"sessionId": session, "configId": "model", "value": "nope/none"}),
    );
    assert_eq!(bad["error"]["code"], -32602);
    let mode = request(
        &mut c,
        8,
        "session/set_mode",
        json!({"sessionId": session, "modeId": "read-only"}),
    );
    assert!(mode["result"].is_object(), "{mode}");
    let (code, _, stderr) = c.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "alpha\ngamma\n");

    // A fresh process lists the session and replays all of it before answering the load.
    let mut c = pi
        .again()
        .args(["acp", "--model", "mock/mock-model"])
        .converse();
    request(&mut c, 1, "initialize", json!({"protocolVersion": 1}));
    let list = request(&mut c, 2, "session/list", json!({"cwd": cwd}));
    assert_eq!(list["result"]["sessions"][0]["sessionId"], session.as_str());
    c.send(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "session/load",
        "params": {"sessionId": session, "cwd": cwd, "mcpServers": []}})
        .to_string(),
    );
    let mut kinds = Vec::new();
    let answer = c.expect("the load's answer", |v| {
        v["id"] == 3 && v.get("method").is_none()
    });
    assert!(answer["result"]["modes"].is_object(), "{answer}");
    let (_, lines, _) = c.finish();
    for l in &lines {
        let v: Value = serde_json::from_str(l).unwrap();
        if v["id"] == 3 {
            break;
        }
        if v["method"] == "session/update" {
            kinds.push(update_kind(&v).to_string());
        }
    }
    let first_user = kinds.iter().position(|k| k == "user_message_chunk");
    assert_eq!(first_user, Some(0), "{kinds:?}");
    assert!(kinds.contains(&"tool_call".to_string()), "{kinds:?}");
    assert!(kinds.contains(&"tool_call_update".to_string()), "{kinds:?}");
    assert_eq!(
        kinds.iter().filter(|k| *k == "user_message_chunk").count(),
        3,
        "every prompt is replayed: {kinds:?}"
    );

    // session/resume opens it again without replaying anything.
    let mut c = pi
        .again()
        .args(["acp", "--model", "mock/mock-model"])
        .converse();
    request(&mut c, 1, "initialize", json!({"protocolVersion": 1}));
    c.send(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "session/resume",
        "params": {"sessionId": session, "cwd": cwd, "mcpServers": []}})
        .to_string(),
    );
    let answer = c.expect("the resume's answer", |v| v["id"] == 2);
    assert!(answer["result"]["configOptions"].is_array(), "{answer}");
    let (_, lines, _) = c.finish();
    assert!(
        !lines.iter().any(|l| l.contains("user_message_chunk")),
        "nothing replayed: {lines:?}"
    );
}

/// A folder holding only `python3` (for the client's MCP server): the PATH pi sees in the SDK
/// tests, so nothing in them can lean on Node.
fn path_without_node(dir: &std::path::Path) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    let python = String::from_utf8(out.stdout).unwrap().trim().to_string();
    std::os::unix::fs::symlink(&python, bin.join("python3")).unwrap();
    bin.to_string_lossy().into_owned()
}

/// What an SDK client script needs to start pi: its program, args, folder and environment
/// (PATH without Node), and the MCP server the client passes in `session/new`.
pub(crate) fn client_spec(pi: &PiCommand, dir: &std::path::Path) -> std::path::PathBuf {
    let cmd = pi.command();
    let mut env = serde_json::Map::new();
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            env.insert(k.to_string_lossy().into(), json!(v.to_string_lossy()));
        }
    }
    env.insert("PATH".into(), json!(path_without_node(dir)));
    let spec = json!({
        "program": cmd.get_program().to_string_lossy(),
        "args": cmd.get_args().map(|a| a.to_string_lossy()).collect::<Vec<_>>(),
        "cwd": pi.cwd().to_string_lossy(),
        "env": env,
        "mcp": {"name": "acpfake", "command": "python3", "args": [crate::support::mcp::fake_server()]},
    });
    let path = dir.join("spec.json");
    std::fs::write(&path, spec.to_string()).unwrap();
    path
}

/// The replies one SDK scenario needs, in order.
fn scenario_mock() -> MockServer {
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[(
            "call_1",
            "edit",
            json!({"path": "notes.txt", "edits": [{"oldText": "beta", "newText": "gamma"}]}),
        )],
    )));
    mock.push(Reply::text(API, "edited it"));
    mock.push(Reply::text(API, "a long answer that streams slowly word by word").chunk_delay(300));
    mock.push(Reply::text(API, "after cancel"));
    mock.push(Reply::text(API, "hello back"));
    mock
}

fn scenario_pi(mock: &MockServer) -> PiCommand {
    PiCommand::for_mock(API, mock)
        .write_file("notes.txt", "alpha\nbeta\n")
        .write_agent_file("prompts/hello.md", "Say hello to $1")
}

/// After a client's scenario: the file was edited, the template expanded, the client's MCP
/// server reached the model.
fn check_scenario(pi: &PiCommand, mock: &MockServer, out: std::process::Output) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("ok"),
        "the client's scenario failed:\n{stdout}\n{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(pi.cwd().join("notes.txt")).unwrap(),
        "alpha\ngamma\n"
    );
    let requests = mock.requests();
    assert_eq!(
        requests.last().unwrap().last_user_text().as_deref(),
        Some("Say hello to world"),
        "the slash command ran the prompt template"
    );
    assert!(
        requests.iter().any(|r| r.body_text().contains("acpfake")),
        "the client's MCP server reached the model"
    );
}

#[test]
fn the_python_sdk_client_drives_a_whole_session_without_node() {
    let mock = scenario_mock();
    let pi = scenario_pi(&mock);
    let dir = tempfile::tempdir().unwrap();
    let spec = client_spec(
        &pi.again().args(["acp", "--model", "mock/mock-model"]),
        dir.path(),
    );
    let python = crate::support::mcp::deps_dir().join("venv/bin/python3");
    let out = std::process::Command::new(python)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/support/acp_client.py"
        ))
        .arg(&spec)
        .output()
        .expect("run the Python ACP client");
    check_scenario(&pi, &mock, out);
}

#[test]
fn the_typescript_sdk_client_drives_a_whole_session_without_node_on_pis_path() {
    let mock = scenario_mock();
    let pi = scenario_pi(&mock);
    let dir = tempfile::tempdir().unwrap();
    let spec = client_spec(
        &pi.again().args(["acp", "--model", "mock/mock-model"]),
        dir.path(),
    );
    let sdk = crate::support::mcp::deps_dir().join("acp-npm");
    assert!(
        sdk.join("node_modules/@agentclientprotocol/sdk").is_dir(),
        "missing the TypeScript ACP SDK in {}: run scripts/test-deps.sh",
        sdk.display()
    );
    // The client runs on Node; pi, which it starts, sees a PATH without it.
    let out = std::process::Command::new("node")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/support/acp_client.mjs"
        ))
        .arg(&sdk)
        .arg(&spec)
        .output()
        .expect("run the TypeScript ACP client");
    check_scenario(&pi, &mock, out);
}

#[test]
fn built_in_commands_answer_in_the_chat_and_are_offered() {
    let mock = MockServer::start();
    let pi = PiCommand::for_mock(API, &mock)
        // A small kept tail, so /compact has something to summarize once there is a turn.
        .write_agent_file(
            "settings.json",
            r#"{"compaction": {"keepRecentTokens": 1}}"#,
        )
        .args(["--mode", "acp"]);
    let cwd = pi.cwd().to_string_lossy().into_owned();
    let mut c = pi.converse();
    request(&mut c, 1, "initialize", json!({"protocolVersion": 1}));
    let new = request(
        &mut c,
        2,
        "session/new",
        json!({"cwd": cwd, "mcpServers": []}),
    );
    let session = new["result"]["sessionId"].as_str().unwrap().to_string();
    let offered = c.expect("the slash commands", |v| {
        update_kind(v) == "available_commands_update"
    });
    let names: Vec<&str> = offered["params"]["update"]["availableCommands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["compact", "session", "export", "rewind"]);
    let mut say = |id: u64, text: &str| {
        let prompt = json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]});
        c.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt", "params": prompt})
                .to_string(),
        );
        let chunk = c.expect("the command's text", |v| {
            update_kind(v) == "agent_message_chunk"
        });
        let end = c.expect("the command's answer", |v| v["id"] == id);
        assert_eq!(end["result"]["stopReason"], "end_turn", "{end}");
        chunk["params"]["update"]["content"]["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
    mock.push(Reply::text(API, "hello"));
    assert_eq!(say(30, "hi"), "hello");
    let info = say(3, "/session");
    assert!(info.starts_with(&format!("Session {session}")), "{info}");
    let exported = say(4, "/export out.html");
    assert!(exported.starts_with("Session exported to "), "{exported}");
    let compact = say(5, "/compact");
    assert!(
        compact.starts_with("Error: "),
        "nothing to compact yet: {compact}"
    );
    // Worded as pi-acp words it, the summary after the counts.
    mock.push(Reply::text(API, "more"));
    say(31, "again");
    // The summary of what came before, and of the start of the turn cut in two.
    mock.push(Reply::text(API, "## Goal\nthe summary"));
    mock.push(Reply::text(API, "## Goal\nthe summary"));
    let compact = say(6, "/compact");
    assert!(
        compact.starts_with("Compaction completed.\nTokens before: ")
            && compact.contains("\n\n## Goal\nthe summary"),
        "{compact}"
    );
    let (code, _, _) = c.finish();
    assert_eq!(code, Some(0));
    assert!(pi.cwd().join("out.html").is_file());
    assert_eq!(
        mock.requests().len(),
        5,
        "no command but /compact's two summaries reached the model"
    );
}

#[test]
fn closed_stdin_mid_run_ends_pi_with_no_command_or_client_mcp_server_left() {
    use crate::support::mcp::{fake_server, marker, survivors};
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("call_1", "bash", json!({"command": "sleep 60"}))],
    )));
    let m = marker("acp-eof");
    let pi = PiCommand::for_mock(API, &mock)
        .args(["--mode", "acp"])
        .env("PI_TEST_MARKER", &m);
    let cwd = pi.cwd().to_string_lossy().into_owned();
    let mut c = pi.converse();
    request(&mut c, 1, "initialize", json!({"protocolVersion": 1}));
    let server =
        json!({"name": "eoffake", "command": "python3", "args": [fake_server()], "env": []});
    let new = request(
        &mut c,
        2,
        "session/new",
        json!({"cwd": cwd, "mcpServers": [server]}),
    );
    let session = new["result"]["sessionId"].as_str().unwrap().to_string();
    let prompt = json!({"sessionId": session, "prompt": [{"type": "text", "text": "sleep"}]});
    c.send(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt})
            .to_string(),
    );
    c.expect("the running command", |v| {
        update_kind(v) == "tool_call" && v["params"]["update"]["kind"] == "execute"
    });
    assert!(
        !crate::support::mcp::processes_with_marker(&m).is_empty(),
        "the command and the client's MCP server run"
    );
    let (code, _, stderr) = c.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        survivors(&m).is_empty(),
        "a command or MCP server outlived pi"
    );
}

#[test]
fn a_sandboxed_command_that_wants_out_asks_the_editor_for_permission() {
    let mock = MockServer::start();
    for id in ["a", "b"] {
        mock.push(Reply::sse(sse_tool_calls(
            API,
            &[(
                id,
                "bash",
                json!({"command": format!("touch ~/outside-{id}")}),
            )],
        )));
    }
    mock.push(Reply::text(API, "ok"));
    let pi = PiCommand::for_mock(API, &mock).args(["--sandbox", "read-only", "--mode", "acp"]);
    let (home, cwd) = (
        pi.home().to_path_buf(),
        pi.cwd().to_string_lossy().into_owned(),
    );
    let mut c = pi.converse();
    request(&mut c, 1, "initialize", json!({"protocolVersion": 1}));
    let new = request(
        &mut c,
        2,
        "session/new",
        json!({"cwd": cwd, "mcpServers": []}),
    );
    assert_eq!(new["result"]["modes"]["currentModeId"], "read-only");
    let session = new["result"]["sessionId"].as_str().unwrap().to_string();
    let prompt = json!({"sessionId": session, "prompt": [{"type": "text", "text": "touch"}]});
    c.send(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt})
            .to_string(),
    );
    for allow in [true, false] {
        let ask = c.expect("a permission request", |v| {
            v["method"] == "session/request_permission"
        });
        assert_eq!(ask["params"]["sessionId"], session.as_str());
        let kinds: Vec<&str> = ask["params"]["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["allow_once", "reject_once"]);
        let option = if allow { "yes" } else { "no" };
        c.send(
            &json!({"jsonrpc": "2.0", "id": ask["id"],
                "result": {"outcome": {"outcome": "selected", "optionId": option}}})
            .to_string(),
        );
        let end = c.expect("the command's result", |v| {
            update_kind(v) == "tool_call_update"
                && matches!(
                    v["params"]["update"]["status"].as_str(),
                    Some("completed" | "failed")
                )
        });
        let status = if allow { "completed" } else { "failed" };
        assert_eq!(end["params"]["update"]["status"], status, "{end}");
    }
    let end = c.expect("the prompt's answer", |v| v["id"] == 3);
    assert_eq!(end["result"]["stopReason"], "end_turn");
    let (code, _, _) = c.finish();
    assert_eq!(code, Some(0));
    assert!(
        home.join("outside-a").exists(),
        "allowed once: ran unsandboxed"
    );
    assert!(
        !home.join("outside-b").exists(),
        "refused: the sandbox held"
    );
}

#[test]
fn an_editor_that_offers_its_buffers_gets_the_file_tools_reads_and_writes() {
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("r1", "read", json!({"path": "notes.txt"}))],
    )));
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[(
            "w1",
            "write",
            json!({"path": "notes.txt", "content": "from the model\n"}),
        )],
    )));
    mock.push(Reply::text(API, "done"));
    let pi = PiCommand::for_mock(API, &mock)
        .write_file("notes.txt", "on disk\n")
        .args(["--mode", "acp"]);
    let cwd = pi.cwd().to_string_lossy().into_owned();
    let file = pi.cwd().join("notes.txt");
    let mut c = pi.converse();
    let caps = json!({"fs": {"readTextFile": true, "writeTextFile": true}});
    request(
        &mut c,
        1,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": caps}),
    );
    let new = request(
        &mut c,
        2,
        "session/new",
        json!({"cwd": cwd, "mcpServers": []}),
    );
    let session = new["result"]["sessionId"].as_str().unwrap().to_string();
    let prompt = json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]});
    c.send(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt})
            .to_string(),
    );
    let mut wrote = None;
    loop {
        let v = c.expect("an editor request or the answer", |v| {
            v["id"] == 3 || v["method"].as_str().is_some_and(|m| m.starts_with("fs/"))
        });
        if v["id"] == 3 && v.get("method").is_none() {
            assert_eq!(v["result"]["stopReason"], "end_turn", "{v}");
            break;
        }
        assert_eq!(v["params"]["sessionId"], session.as_str());
        assert_eq!(v["params"]["path"], file.to_string_lossy().as_ref());
        let result = match v["method"].as_str().unwrap() {
            "fs/read_text_file" => json!({"content": "unsaved in the editor\n"}),
            _ => {
                wrote = Some(v["params"]["content"].clone());
                json!({})
            }
        };
        c.send(&json!({"jsonrpc": "2.0", "id": v["id"], "result": result}).to_string());
    }
    let (code, _, _) = c.finish();
    assert_eq!(code, Some(0));
    assert_eq!(
        wrote,
        Some(json!("from the model\n")),
        "the editor wrote it"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "on disk\n",
        "pi left the disk to the editor"
    );
    assert!(
        mock.requests()[1]
            .body_text()
            .contains("unsaved in the editor"),
        "the model saw the editor's buffer"
    );
}

#[test]
fn rewind_lists_the_messages_and_puts_the_files_and_conversation_back() {
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[(
            "w",
            "write",
            json!({"path": "notes.txt", "content": "changed by the turn\n"}),
        )],
    )));
    mock.push(Reply::text(API, "written"));
    let pi = PiCommand::for_mock(API, &mock)
        .write_agent_file("settings.json", r#"{"checkpoints": {"enabled": true}}"#)
        .write_file("notes.txt", "mine\n")
        .args(["--mode", "acp"]);
    let cwd = pi.cwd().to_path_buf();
    let mut c = pi.converse();
    request(&mut c, 1, "initialize", json!({"protocolVersion": 1}));
    let new = request(
        &mut c,
        2,
        "session/new",
        json!({"cwd": cwd.to_string_lossy(), "mcpServers": []}),
    );
    let session = new["result"]["sessionId"].as_str().unwrap().to_string();
    let mut say = |id: u64, text: &str| {
        let prompt = json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]});
        c.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt", "params": prompt})
                .to_string(),
        );
        let mut said = String::new();
        loop {
            let v = c.expect("the answer", |v| {
                v["id"] == id || update_kind(v) == "agent_message_chunk"
            });
            if v["id"] == id {
                assert_eq!(v["result"]["stopReason"], "end_turn", "{v}");
                return said;
            }
            said.push_str(v["params"]["update"]["content"]["text"].as_str().unwrap());
        }
    };
    assert_eq!(say(3, "change the notes"), "written");
    assert_eq!(
        std::fs::read_to_string(cwd.join("notes.txt")).unwrap(),
        "changed by the turn\n"
    );
    let list = say(4, "/rewind");
    assert!(list.contains("* 1. change the notes"), "{list}");
    let done = say(5, "/rewind 1");
    assert!(done.contains("1 modified"), "{done}");
    assert!(done.contains("conversation is back"), "{done}");
    assert_eq!(
        std::fs::read_to_string(cwd.join("notes.txt")).unwrap(),
        "mine\n"
    );
    let bad = say(6, "/rewind 9");
    assert!(bad.contains("No message 9"), "{bad}");
    let (code, _, _) = c.finish();
    assert_eq!(code, Some(0));
    assert_eq!(mock.requests().len(), 2, "no command reached the model");
}
