//! Extensions (issue 9): the examples under `examples/extensions/` loaded from the global
//! folder, a trusted project folder and `-e`, changing what pi does in print, JSON and RPC
//! modes; and extensions that hang, crash or write garbage being reported and disabled while
//! the session carries on.

use std::path::PathBuf;

use serde_json::json;

use crate::support::mock::{sse_tool_calls, MockServer, Reply};
use crate::support::pi::PiCommand;

const API: &str = "openai-completions";

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("examples/extensions")
        .join(name)
}

/// Copies an example (keeping its executable bit) to `dir/name`.
fn install(example_name: &str, dir: &std::path::Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let to = dir.join(example_name);
    std::fs::copy(example(example_name), &to).unwrap();
    to
}

/// Writes an executable script.
fn script(path: &std::path::Path, text: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_path_buf()
}

#[test]
fn a_python_tool_from_the_global_folder_serves_the_model() {
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("call_1", "word_count", json!({"text": "one two three"}))],
    )));
    mock.push(Reply::text(API, "It has three words."));
    let pi = PiCommand::for_mock(API, &mock).args(["-p", "count the words"]);
    install("word_count.py", &pi.agent_dir().join("extensions"));
    let out = pi.run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(
        out.stdout, "It has three words.\n",
        "stderr: {}",
        out.stderr
    );
    let reqs = mock.requests();
    assert!(
        reqs[0].body_text().contains("\"word_count\""),
        "the tool is offered"
    );
    assert!(
        reqs[1].body_text().contains("3 words"),
        "{}",
        reqs[1].body_text()
    );
}

#[test]
fn the_permission_gate_blocks_rm_rf_without_a_ui() {
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("call_1", "bash", json!({"command": "rm -rf build"}))],
    )));
    mock.push(Reply::text(API, "ok"));
    let gate = example("permission_gate.py");
    let pi = PiCommand::for_mock(API, &mock)
        .args(["--mode", "json", "-e", gate.to_str().unwrap(), "clean up"])
        .write_file("build/keep.txt", "precious");
    let out = pi.run();
    out.assert_code(0).assert_no_panic();
    let end = out
        .json_lines()
        .into_iter()
        .find(|v| v["type"] == "tool_execution_end")
        .expect("tool end");
    assert_eq!(end["isError"], true);
    assert_eq!(
        end["result"]["content"][0]["text"],
        "Dangerous command blocked (no UI for confirmation)"
    );
    assert!(pi.cwd().join("build/keep.txt").exists());
}

#[test]
fn a_shell_command_and_its_flag_drive_a_prompt() {
    let mock = MockServer::with_replies([Reply::text(API, "Hello, Ada!")]);
    let greet = example("greet.sh");
    let out = PiCommand::for_mock(API, &mock)
        .args(["-e", greet.to_str().unwrap(), "--shout", "-p", "/greet Ada"])
        .run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "Hello, Ada!\n", "stderr: {}", out.stderr);
    assert_eq!(
        mock.single_request().last_user_text().as_deref(),
        Some("PLEASE GREET ADA WARMLY.")
    );

    let out = PiCommand::for_mock(API, &mock)
        .args(["-e", greet.to_str().unwrap(), "--loud", "-p", "hi"])
        .run();
    out.assert_code(1);
    assert!(
        out.stderr.contains("Error: Unknown option: --loud"),
        "{}",
        out.stderr
    );
}

#[test]
fn rpc_lists_extension_commands_and_forwards_status_updates() {
    let mock = MockServer::with_replies([Reply::text(API, "done")]);
    let pi = PiCommand::for_mock(API, &mock).args(["--mode", "rpc", "--no-session"]);
    let ext = pi.agent_dir().join("extensions");
    install("status_line.py", &ext);
    install("greet.sh", &ext);
    let mut talk = pi.converse();
    talk.send(r#"{"id":"c","type":"get_commands"}"#);
    let commands = talk.expect("get_commands", |v| v["id"] == "c");
    let greet = commands["data"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "greet")
        .expect("greet listed")
        .clone();
    assert_eq!(greet["source"], "extension");
    assert_eq!(greet["description"], "Ask the agent to greet someone");
    talk.send(r#"{"id":"p","type":"prompt","message":"hi"}"#);
    // The extension answers `turn_end` on its own time, before or after `agent_end`.
    let turn_complete =
        |v: &serde_json::Value| v["method"] == "setStatus" && v["statusText"] == "Turn 1 complete";
    let (mut ended, mut completed) = (false, false);
    while !(ended && completed) {
        let v = talk.expect("agent_end and the turn_end status", |v| {
            v["type"] == "agent_end" || turn_complete(v)
        });
        ended |= v["type"] == "agent_end";
        completed |= turn_complete(&v);
    }
    let (code, lines, stderr) = talk.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let statuses: Vec<String> = lines
        .iter()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "extension_ui_request" && v["method"] == "setStatus")
        .map(|v| v["statusText"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(statuses, ["Ready", "Turn 1...", "Turn 1 complete"]);
}

#[test]
fn rpc_emits_an_extensions_custom_message_and_the_model_gets_it_as_user_text() {
    let mock = MockServer::with_replies([Reply::text(API, "noted")]);
    let pi = PiCommand::for_mock(API, &mock).args(["--mode", "rpc", "--no-session"]);
    script(
        &pi.agent_dir().join("extensions").join("note.py"),
        "#!/usr/bin/env python3\nimport json, sys\n\
         for line in sys.stdin:\n    msg = json.loads(line)\n\
         \x20   if msg['type'] == 'hello':\n\
         \x20       print(json.dumps({'type': 'register', 'protocol': 1, 'commands': [{'name': 'note', 'description': 'Add a note'}]}), flush=True)\n\
         \x20   elif msg['type'] == 'command':\n\
         \x20       print(json.dumps({'type': 'call', 'method': 'sendMessage', 'params': {'message': {'customType': 'note', 'content': 'Remember this', 'display': True}}}), flush=True)\n\
         \x20       print(json.dumps({'type': 'reply', 'id': msg['id'], 'result': None}), flush=True)\n",
    );
    let mut talk = pi.converse();
    talk.send(r#"{"id":"n","type":"prompt","message":"/note"}"#);
    let start = talk.expect("message_start", |v| v["type"] == "message_start");
    assert_eq!(
        start["message"],
        json!({"role": "custom", "customType": "note", "content": "Remember this",
               "display": true, "timestamp": start["message"]["timestamp"]})
    );
    assert!(start["message"]["timestamp"].is_i64());
    let end = talk.expect("message_end", |v| v["type"] == "message_end");
    assert_eq!(end["message"], start["message"]);
    talk.send(r#"{"id":"p","type":"prompt","message":"go on"}"#);
    talk.expect("agent_end", |v| v["type"] == "agent_end");
    let (code, _, stderr) = talk.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].user_texts(), ["Remember this", "go on"]);
}

#[test]
fn rpc_confirm_round_trip_decides_a_dangerous_command() {
    let mock = MockServer::start();
    for id in ["call_1", "call_2"] {
        mock.push(Reply::sse(sse_tool_calls(
            API,
            &[(id, "bash", json!({"command": "rm -rf build"}))],
        )));
        mock.push(Reply::text(API, "ok"));
    }
    let gate = example("permission_gate.py");
    let pi = PiCommand::for_mock(API, &mock)
        .args([
            "--mode",
            "rpc",
            "--no-session",
            "-e",
            gate.to_str().unwrap(),
        ])
        .write_file("build/keep.txt", "x");
    let cwd = pi.cwd().to_path_buf();
    let mut talk = pi.converse();
    for (answer, expect_blocked) in [(false, true), (true, false)] {
        talk.send(r#"{"type":"prompt","message":"clean"}"#);
        let ask = talk.expect("confirm", |v| {
            v["type"] == "extension_ui_request" && v["method"] == "confirm"
        });
        assert_eq!(ask["message"], "Allow `rm -rf build`?");
        talk.send(
            &json!({"type": "extension_ui_response", "id": ask["id"], "confirmed": answer})
                .to_string(),
        );
        let end = talk.expect("tool end", |v| v["type"] == "tool_execution_end");
        assert_eq!(end["isError"], expect_blocked, "{end}");
        talk.expect("agent_end", |v| v["type"] == "agent_end");
        assert_eq!(cwd.join("build").exists(), expect_blocked);
        // The run's thread hands the session back just after `agent_end`.
        loop {
            talk.send(r#"{"id":"s","type":"get_state"}"#);
            let state = talk.expect("state", |v| v["id"] == "s");
            if state["data"]["isStreaming"] == false {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
    let (code, _, _) = talk.finish();
    assert_eq!(code, Some(0));
}

#[test]
fn rpc_reports_extension_errors_as_events() {
    let mock = MockServer::with_replies([Reply::text(API, "fine")]);
    let pi = PiCommand::for_mock(API, &mock).args(["--mode", "rpc", "--no-session"]);
    script(
        &pi.agent_dir().join("extensions/noisy"),
        "#!/bin/sh\nread hello\necho '{\"type\":\"register\",\"protocol\":1,\"events\":[\"agent_start\"]}'\n\
         read flags\nread event\necho '{\"type\":\"error\",\"event\":\"agent_start\",\"error\":\"handler threw\"}'\n\
         cat >/dev/null\n",
    );
    let mut talk = pi.converse();
    talk.send(r#"{"type":"prompt","message":"go"}"#);
    let err = talk.expect("extension_error", |v| v["type"] == "extension_error");
    assert_eq!(err["event"], "agent_start");
    assert_eq!(err["error"], "handler threw");
    assert!(err["extensionPath"].as_str().unwrap().ends_with("noisy"));
    // The error may arrive before or after the run ends (the hook does not block it): wait
    // for the session to be idle rather than for an `agent_end` that may be behind us.
    loop {
        talk.send(r#"{"id":"s","type":"get_state"}"#);
        let state = talk.expect("state", |v| v["id"] == "s");
        if state["data"]["isStreaming"] == false {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let (code, lines, _) = talk.finish();
    assert_eq!(code, Some(0));
    assert!(lines.iter().any(|l| l.contains("\"agent_end\"")));
}

#[test]
fn an_extension_that_hangs_at_the_handshake_is_disabled() {
    let mock = MockServer::with_replies([Reply::text(API, "still here")]);
    let pi = PiCommand::for_mock(API, &mock)
        .args(["-p", "hi"])
        .env("PI_EXTENSION_HANDSHAKE_TIMEOUT_MS", "300");
    script(
        &pi.agent_dir().join("extensions/sleepy"),
        "#!/bin/sh\nsleep 30\n",
    );
    let started = std::time::Instant::now();
    let out = pi.run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "still here\n");
    assert!(
        out.stderr
            .contains("did not register within 300 ms; extension disabled"),
        "{}",
        out.stderr
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "not stalled by the sleeper"
    );
}

#[test]
fn a_crash_mid_session_fails_its_tool_and_the_session_goes_on() {
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("call_1", "boom", json!({}))],
    )));
    mock.push(Reply::text(API, "recovered"));
    let pi = PiCommand::for_mock(API, &mock).args(["-p", "go"]);
    script(
        &pi.agent_dir().join("extensions/crashy.py"),
        "#!/usr/bin/env python3\nimport json, sys\nfor line in sys.stdin:\n    m = json.loads(line)\n    \
         if m['type'] == 'hello':\n        print(json.dumps({'type': 'register', 'protocol': 1, \
         'tools': [{'name': 'boom', 'description': 'explodes'}]}), flush=True)\n    \
         elif m['type'] == 'tool':\n        sys.exit(3)\n",
    );
    let out = pi.run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "recovered\n", "{}", out.stderr);
    let second = mock.requests()[1].body_text();
    assert!(
        second.contains("Tool boom failed: extension crashy exited (exit status: 3)"),
        "{second}"
    );
    assert!(
        out.stderr.contains("crashy.py): extension exited"),
        "{}",
        out.stderr
    );
}

#[test]
fn garbage_output_and_a_silent_hook_disable_the_extension() {
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("call_1", "ls", json!({}))],
    )));
    mock.push(Reply::text(API, "carried on"));
    let pi = PiCommand::for_mock(API, &mock)
        .args(["-p", "go", "--tools", "ls"])
        .env("PI_EXTENSION_EVENT_TIMEOUT_MS", "300");
    let ext = pi.agent_dir().join("extensions");
    // Answers nothing to tool_call: the call is blocked after the timeout, never let through.
    script(
        &ext.join("silent"),
        "#!/bin/sh\nread hello\necho '{\"type\":\"register\",\"protocol\":1,\"events\":[\"tool_call\"]}'\ncat >/dev/null\n",
    );
    // Writes garbage at the first turn.
    script(
        &ext.join("garbled"),
        "#!/bin/sh\nread hello\necho '{\"type\":\"register\",\"protocol\":1,\"events\":[\"turn_start\"]}'\n\
         read flags\nread event\necho 'this is not json'\ncat >/dev/null\n",
    );
    let out = pi.run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "carried on\n", "{}", out.stderr);
    assert!(
        out.stderr.contains("wrote a line that is not JSON"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("did not answer \"tool_call\" within 300 ms; extension disabled"),
        "{}",
        out.stderr
    );
    let second = mock.requests()[1].body_text();
    assert!(
        second.contains("Extension silent failed, blocking execution"),
        "{second}"
    );
}

#[test]
fn an_untrusted_projects_extension_never_starts() {
    let mock = MockServer::start();
    mock.push(Reply::text(API, "one"));
    mock.push(Reply::text(API, "two"));
    mock.push(Reply::text(API, "three"));
    let pi = PiCommand::for_mock(API, &mock).args(["-p", "hi"]);
    let marker = pi.cwd().join("started");
    script(
        &pi.cwd().join(".pi/extensions/marker"),
        &format!(
            "#!/bin/sh\ntouch '{}'\nread hello\necho '{{\"type\":\"register\",\"protocol\":1}}'\ncat >/dev/null\n",
            marker.display()
        ),
    );
    let out = pi.run();
    out.assert_code(0);
    assert!(!marker.exists(), "untrusted project code ran");
    // pi: print mode skips untrusted project resources without a word.
    assert!(!out.stderr.contains(".pi/extensions"), "{}", out.stderr);

    let out = pi
        .again()
        .args(["--model", "mock/mock-model", "--approve", "-p", "hi"])
        .run();
    out.assert_code(0);
    assert!(marker.exists(), "a trusted project's extension runs");
    // `--approve` is for this process only: nothing is saved, the next run skips it again.
    assert!(!pi.agent_dir().join("trust.json").exists());
    std::fs::remove_file(&marker).unwrap();
    pi.again()
        .args(["--model", "mock/mock-model", "-p", "hi"])
        .run()
        .assert_code(0);
    assert!(!marker.exists(), "the approval was not remembered");
}

/// A jiti package for Node versions without type stripping, if one can be found here.
fn jiti_dir() -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = std::env::var_os("PI_TEST_JITI")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    candidates.push("/work/scratch/pits/node_modules/jiti".into());
    for root in ["/usr/local/lib/node_modules", "/usr/lib/node_modules"] {
        candidates.push(PathBuf::from(root).join("jiti"));
    }
    candidates
        .into_iter()
        .find(|c| c.join("lib/jiti.mjs").is_file())
}

fn node_version() -> Option<(u32, u32)> {
    let out = std::process::Command::new("node")
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut parts = text.trim().trim_start_matches('v').split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

#[test]
fn a_pi_typescript_extension_runs_through_the_node_bridge() {
    let Some(version) = node_version() else {
        eprintln!(
            "SKIPPED a_pi_typescript_extension_runs_through_the_node_bridge: node is not on PATH"
        );
        return;
    };
    let jiti = jiti_dir();
    if version < (22, 6) && jiti.is_none() {
        eprintln!(
            "SKIPPED a_pi_typescript_extension_runs_through_the_node_bridge: Node {version:?} \
             cannot strip types and no jiti package was found (set PI_TEST_JITI)"
        );
        return;
    }
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("call_1", "hello", json!({"name": "Ada"}))],
    )));
    mock.push(Reply::text(API, "greeted"));
    mock.push(Reply::text(API, "hello world"));
    let mut pi = PiCommand::for_mock(API, &mock)
        .args(["-p", "greet Ada"])
        .env("XDG_CACHE_HOME", "cache");
    if let Some(j) = &jiti {
        pi = pi.env("PI_JITI", j.to_string_lossy());
    }
    install("hello.ts", &pi.agent_dir().join("extensions"));
    let out = pi.run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "greeted\n", "{}", out.stderr);
    assert!(mock.requests()[1].body_text().contains("Hello, Ada!"));

    let out = pi
        .again()
        .args(["--model", "mock/mock-model", "-p", "/hello world"])
        .run();
    out.assert_code(0);
    assert_eq!(out.stdout, "hello world\n", "{}", out.stderr);
    assert_eq!(
        mock.requests()[2].last_user_text().as_deref(),
        Some("Say hello to world")
    );
}

/// The example extensions shipped in pi's own npm package, where one is installed (for
/// example beside the TypeScript pi used for side-by-side checks; `PI_TEST_TS_PACKAGE` names
/// another `@mariozechner/pi-coding-agent` directory).
fn pi_package_examples() -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = std::env::var_os("PI_TEST_TS_PACKAGE")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    candidates.push("/work/scratch/pits/node_modules/@mariozechner/pi-coding-agent".into());
    for root in ["/usr/local/lib/node_modules", "/usr/lib/node_modules"] {
        candidates.push(PathBuf::from(root).join("@mariozechner/pi-coding-agent"));
    }
    candidates
        .into_iter()
        .map(|c| c.join("examples/extensions"))
        .find(|c| c.join("permission-gate.ts").is_file() && c.join("hello.ts").is_file())
}

/// pi-mono's own `hello.ts` (a tool built with `defineTool` and TypeBox) and
/// `permission-gate.ts` (a `tool_call` hook) run unchanged through the Node bridge.
#[test]
fn pi_monos_own_example_extensions_run_unchanged() {
    let Some(examples) = pi_package_examples() else {
        eprintln!(
            "SKIPPED pi_monos_own_example_extensions_run_unchanged: no installed \
             @mariozechner/pi-coding-agent package (set PI_TEST_TS_PACKAGE)"
        );
        return;
    };
    let Some(version) = node_version() else {
        eprintln!("SKIPPED pi_monos_own_example_extensions_run_unchanged: node is not on PATH");
        return;
    };
    let jiti = jiti_dir();
    if version < (22, 6) && jiti.is_none() {
        eprintln!(
            "SKIPPED pi_monos_own_example_extensions_run_unchanged: Node {version:?} cannot \
             strip types and no jiti package was found (set PI_TEST_JITI)"
        );
        return;
    }
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("call_1", "hello", json!({"name": "Ada"}))],
    )));
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("call_2", "bash", json!({"command": "rm -rf build"}))],
    )));
    mock.push(Reply::text(API, "done"));
    let mut pi = PiCommand::for_mock(API, &mock)
        .args(["--mode", "json"])
        .args(["-e", &examples.join("hello.ts").to_string_lossy()])
        .args(["-e", &examples.join("permission-gate.ts").to_string_lossy()])
        .arg("greet Ada, then clean up")
        .env("XDG_CACHE_HOME", "cache")
        .write_file("build/keep.txt", "precious");
    if let Some(j) = &jiti {
        pi = pi.env("PI_JITI", j.to_string_lossy());
    }
    let out = pi.run();
    out.assert_code(0).assert_no_panic();
    let ends: Vec<serde_json::Value> = out
        .json_lines()
        .into_iter()
        .filter(|v| v["type"] == "tool_execution_end")
        .collect();
    assert_eq!(ends.len(), 2, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(ends[0]["result"]["content"][0]["text"], "Hello, Ada!");
    assert_eq!(ends[0]["result"]["details"]["greeted"], "Ada");
    assert_eq!(ends[1]["isError"], true);
    assert_eq!(
        ends[1]["result"]["content"][0]["text"],
        "Dangerous command blocked (no UI for confirmation)"
    );
    assert!(pi.cwd().join("build/keep.txt").exists());
}

#[test]
fn before_agent_start_messages_are_custom_messages_after_the_prompt() {
    let mock = MockServer::with_replies([Reply::text(API, "ok")]);
    let pi = PiCommand::for_mock(API, &mock).args(["--mode", "json", "hello"]);
    script(
        &pi.agent_dir().join("extensions").join("ctx.py"),
        "#!/usr/bin/env python3\nimport json, sys\n\
         for line in sys.stdin:\n    msg = json.loads(line)\n\
         \x20   if msg['type'] == 'hello':\n\
         \x20       print(json.dumps({'type': 'register', 'protocol': 1, 'events': ['before_agent_start']}), flush=True)\n\
         \x20   elif msg.get('event') == 'before_agent_start':\n\
         \x20       print(json.dumps({'type': 'reply', 'id': msg['id'], 'result': {'message': {'customType': 'ctx', 'content': 'Extra context', 'display': False, 'details': {'n': 1}}}}), flush=True)\n",
    );
    let out = pi.run();
    out.assert_code(0).assert_no_panic();
    let starts: Vec<serde_json::Value> = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "message_start")
        .map(|v| v["message"].clone())
        .collect();
    let roles: Vec<&str> = starts.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        ["system", "user", "custom", "assistant"],
        "{}",
        out.stdout
    );
    assert_eq!(starts[2]["customType"], "ctx");
    assert_eq!(starts[2]["details"], json!({"n": 1}));
    assert_eq!(mock.requests()[0].user_texts(), ["hello", "Extra context"]);
    // Recorded as pi records it: a custom_message entry, not a user message.
    let dir = pi.agent_dir().join("sessions");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten())
        .map(|f| f.path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .expect("a session file");
    let entries: Vec<serde_json::Value> = std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<String> = entries
        .iter()
        .map(|e| match e["type"].as_str().unwrap() {
            "message" => format!("message:{}", e["message"]["role"].as_str().unwrap()),
            t => t.to_string(),
        })
        .filter(|k| k != "model_change" && k != "thinking_level_change")
        .collect();
    assert_eq!(
        kinds,
        [
            "session",
            "message:system",
            "message:user",
            "custom_message",
            "message:assistant"
        ]
    );
    let custom = entries
        .iter()
        .find(|e| e["type"] == "custom_message")
        .unwrap();
    assert_eq!(custom["customType"], "ctx");
    assert_eq!(custom["display"], false);
}

#[test]
fn before_provider_request_rewrites_the_body_sent() {
    let mock = MockServer::with_replies([Reply::text(API, "ok")]);
    let pi = PiCommand::for_mock(API, &mock).args(["--no-session", "-p", "hello"]);
    script(
        &pi.agent_dir().join("extensions").join("payload.py"),
        "#!/usr/bin/env python3\nimport json, sys\n\
         for line in sys.stdin:\n    msg = json.loads(line)\n\
         \x20   if msg['type'] == 'hello':\n\
         \x20       print(json.dumps({'type': 'register', 'protocol': 1, 'events': ['before_provider_request']}), flush=True)\n\
         \x20   elif msg.get('event') == 'before_provider_request':\n\
         \x20       p = msg['data']['payload']\n\
         \x20       p['temperature'] = 0.25\n\
         \x20       print(json.dumps({'type': 'reply', 'id': msg['id'], 'result': p}), flush=True)\n",
    );
    let out = pi.run();
    out.assert_code(0).assert_no_panic();
    let body: serde_json::Value = serde_json::from_str(&mock.requests()[0].body_text()).unwrap();
    assert_eq!(body["temperature"], 0.25, "{body}");
    assert_eq!(body["model"], "mock-model");
}

#[test]
fn a_command_from_a_dash_e_extension_is_listed_with_pis_cli_source() {
    let pi = PiCommand::new();
    script(
        &pi.cwd().join("cmd.py"),
        "#!/usr/bin/env python3\nimport json, sys\n\
         for line in sys.stdin:\n    msg = json.loads(line)\n\
         \x20   if msg['type'] == 'hello':\n\
         \x20       print(json.dumps({'type': 'register', 'protocol': 1, 'commands': [{'name': 'hello', 'description': 'Say hello'}]}), flush=True)\n",
    );
    let path = pi.cwd().join("cmd.py").to_string_lossy().into_owned();
    let pi = pi.args(["--mode", "rpc", "--no-session", "-e", "./cmd.py"]);
    let mut talk = pi.converse();
    talk.send(r#"{"id":"c","type":"get_commands"}"#);
    let commands = talk.expect("get_commands", |v| v["id"] == "c");
    let hello = commands["data"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "hello")
        .expect("listed")
        .clone();
    assert_eq!(
        hello["sourceInfo"],
        json!({"path": path, "source": "cli", "scope": "temporary", "origin": "top-level"})
    );
    let (code, _, stderr) = talk.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn a_malformed_call_gets_one_error_naming_the_method_and_the_field() {
    let mock = MockServer::with_replies([Reply::text(API, "ok")]);
    let pi = PiCommand::for_mock(API, &mock).args(["-p", "hello"]);
    // On `before_agent_start` it makes a call with a bad parameter and a notification missing
    // one, then hands the answer it got back to pi as context, where the model request shows it.
    script(
        &pi.agent_dir().join("extensions").join("bad_calls.py"),
        "#!/usr/bin/env python3\nimport json, sys\n\
         event = None\n\
         for line in sys.stdin:\n    msg = json.loads(line)\n\
         \x20   if msg['type'] == 'hello':\n\
         \x20       print(json.dumps({'type': 'register', 'protocol': 1, 'events': ['before_agent_start']}), flush=True)\n\
         \x20   elif msg.get('event') == 'before_agent_start':\n\
         \x20       event = msg['id']\n\
         \x20       print(json.dumps({'type': 'call', 'method': 'ui.setStatus', 'params': {'text': 'no key'}}), flush=True)\n\
         \x20       print(json.dumps({'type': 'call', 'id': 'c1', 'method': 'setActiveTools', 'params': {'names': ['read', 7]}}), flush=True)\n\
         \x20   elif msg['type'] == 'reply' and msg.get('id') == 'c1':\n\
         \x20       print(json.dumps({'type': 'reply', 'id': event, 'result': {'message': {'customType': 'err', 'content': msg.get('error', 'no error'), 'display': False}}}), flush=True)\n",
    );
    let out = pi.run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(
        mock.requests()[0].user_texts(),
        [
            "hello",
            "setActiveTools: \"names[1]\": invalid type: integer `7`, expected a string"
        ]
    );
    assert!(
        out.stderr.contains("ui.setStatus: missing \"key\""),
        "a notification nobody answers is reported: {}",
        out.stderr
    );
}
