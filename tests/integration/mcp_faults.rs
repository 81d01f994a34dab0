//! MCP servers that misbehave, played by our fake stdio server: results of every kind, a
//! crash mid-call, no answer, garbage, a flood, a 50 MB result, progress and logging, a
//! changed tool list, resources, broken configuration, and aborting pi while a call hangs.
//! Each fault ends up in a tool result; the session goes on and no server outlives pi.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::mcp::{fake_entry, marker, mcp_json, survivors};
use crate::support::mock::{sse_tool_calls, MockServer, Reply, Request};
use crate::support::pi::{Output, PiCommand};

const API: &str = "openai-completions";

/// The texts of the tool results in a request, in order.
fn tool_results(req: &Request) -> Vec<String> {
    req.body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// Runs `pi -p` against the fake server (direct exposure plus `extra` config): one reply per
/// batch of calls, then "done".
fn run_batches(
    batches: &[Vec<(&str, Value)>],
    extra: Value,
    cmd: PiCommand,
    mock: &MockServer,
) -> Output {
    for (i, batch) in batches.iter().enumerate() {
        let calls: Vec<(String, String, Value)> = batch
            .iter()
            .enumerate()
            .map(|(j, (tool, args))| {
                (
                    format!("c{i}_{j}"),
                    format!("mcp__fake__{tool}"),
                    args.clone(),
                )
            })
            .collect();
        let refs: Vec<(&str, &str, Value)> = calls
            .iter()
            .map(|(a, b, c)| (a.as_str(), b.as_str(), c.clone()))
            .collect();
        mock.push(Reply::sse(sse_tool_calls(API, &refs)));
    }
    mock.push(Reply::text(API, "done"));
    let mut entry = fake_entry(json!({"exposure": "direct"}));
    for (k, v) in extra.as_object().unwrap() {
        entry[k] = v.clone();
    }
    cmd.write_agent_file("mcp.json", &mcp_json(json!({ "fake": entry })))
        .args(["-p", "go"])
        .run()
}

#[test]
fn text_image_structured_and_error_results() {
    let mock = MockServer::start();
    let models = json!({"providers": {"mock": {
        "baseUrl": crate::support::pi::base_url_for(API, mock.port()), "api": API, "apiKey": "test-key",
        "models": [{"id": "mock-model", "input": ["text", "image"]}]}}});
    let cmd = PiCommand::for_mock(API, &mock).write_agent_file("models.json", &models.to_string());
    let out = run_batches(
        &[vec![
            ("echo", json!({"text": "hi there"})),
            ("image", json!({})),
            ("structured", json!({})),
            ("fail", json!({})),
        ]],
        json!({}),
        cmd,
        &mock,
    );
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "done\n");
    let reqs = mock.requests();
    let results = tool_results(&reqs[1]);
    assert_eq!(results[0], "hi there");
    assert!(results[1].contains("an image:"), "{results:?}");
    assert!(
        reqs[1]
            .body_text()
            .contains("data:image/png;base64,iVBORw0KGgo"),
        "the image reaches the model"
    );
    assert_eq!(results[2], "{\n  \"answer\": 42\n}");
    assert_eq!(results[3], "it broke");
}

#[test]
fn a_crash_mid_call_is_reported_and_the_next_call_reconnects() {
    let mock = MockServer::start();
    let m = marker("crash");
    let out = run_batches(
        &[
            vec![("crash", json!({}))],
            vec![("echo", json!({"text": "back again"}))],
        ],
        json!({}),
        PiCommand::for_mock(API, &mock).env("PI_TEST_MARKER", &m),
        &mock,
    );
    out.assert_code(0).assert_no_panic();
    let reqs = mock.requests();
    let crashed = tool_results(&reqs[1]);
    assert!(
        crashed[0].starts_with("MCP connection closed"),
        "{crashed:?}"
    );
    assert_eq!(tool_results(&reqs[2])[1], "back again");
    assert!(survivors(&m).is_empty());
}

#[test]
fn a_server_that_never_answers_times_out_and_is_told_so() {
    let mock = MockServer::start();
    let cmd = PiCommand::for_mock(API, &mock);
    let record = cmd.home().join("record.jsonl");
    let _keep_home = cmd.again();
    let out = run_batches(
        &[vec![("hang", json!({}))]],
        json!({"timeout": 1, "env": {"FAKE_MCP_RECORD": record.to_string_lossy()}}),
        cmd,
        &mock,
    );
    out.assert_code(0).assert_no_panic();
    assert_eq!(
        tool_results(&mock.requests()[1]),
        ["MCP request timed out after 1000ms"]
    );
    let received = std::fs::read_to_string(&record).unwrap();
    let cancelled: Vec<Value> = received
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|m| m["method"] == "notifications/cancelled")
        .collect();
    assert_eq!(cancelled.len(), 1, "{received}");
    assert_eq!(cancelled[0]["params"]["reason"], "Request timed out");
    let call_id = received
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|m| m["method"] == "tools/call")
        .unwrap()["id"]
        .clone();
    assert_eq!(cancelled[0]["params"]["requestId"], call_id);
}

#[test]
fn garbage_floods_and_a_50_mb_result_leave_the_session_going() {
    let mock = MockServer::start();
    let out = run_batches(
        &[
            vec![("garbage", json!({}))],
            vec![("flood", json!({"lines": 200000}))],
            vec![("big", json!({"mb": 50}))],
            vec![("echo", json!({"text": "still alive"}))],
        ],
        json!({"timeout": 20}),
        PiCommand::for_mock(API, &mock),
        &mock,
    );
    out.assert_code(0).assert_no_panic();
    let reqs = mock.requests();
    assert_eq!(tool_results(&reqs[1]), ["Invalid JSON-RPC message"]);
    assert_eq!(tool_results(&reqs[2])[1], "after the flood");
    assert_eq!(
        tool_results(&reqs[3])[2],
        "MCP stdio message exceeds 16777216 bytes"
    );
    assert_eq!(tool_results(&reqs[4])[3], "still alive");
}

#[test]
fn progress_updates_stream_and_log_messages_go_to_mcp_log() {
    let mock = MockServer::start();
    let cmd = PiCommand::for_mock(API, &mock).args(["--mode", "json"]);
    let log = cmd.agent_dir().join("mcp.log");
    let _keep_home = cmd.again();
    let out = run_batches(
        &[vec![
            ("progress", json!({"steps": 3})),
            ("log", json!({"text": "line one\nline two"})),
        ]],
        json!({}),
        cmd,
        &mock,
    );
    out.assert_code(0).assert_no_panic();
    let updates: Vec<String> = out
        .json_lines()
        .into_iter()
        .filter(|e| e["type"] == "tool_execution_update")
        .map(|e| {
            e["partialResult"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(updates, ["Progress 1/3", "Progress 2/3", "Progress 3/3"]);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.ends_with(" [fake] warning fake: line one\n    line two\n"),
        "{text}"
    );
}

#[test]
fn a_changed_tool_list_adds_tools_and_pages_are_followed() {
    let mock = MockServer::start();
    let out = run_batches(
        &[
            vec![("change", json!({}))],
            vec![("echo", json!({"text": "x"}))],
            vec![("added", json!({}))],
        ],
        json!({"args": [crate::support::mcp::fake_server(), "--pages", "3"]}),
        PiCommand::for_mock(API, &mock),
        &mock,
    );
    out.assert_code(0).assert_no_panic();
    let reqs = mock.requests();
    let first: Vec<String> = reqs[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(
        first.contains(&"mcp__fake__change".into()) && first.contains(&"mcp__fake__echo".into()),
        "all pages: {first:?}"
    );
    assert!(!first.contains(&"mcp__fake__added".into()));
    assert_eq!(tool_results(&reqs[3])[2], "added works");
}

#[test]
fn resources_are_listed_and_read() {
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[
            ("l", "list_mcp_resources", json!({})),
            (
                "t",
                "list_mcp_resource_templates",
                json!({"server": "fake"}),
            ),
            (
                "r",
                "read_mcp_resource",
                json!({"server": "fake", "uri": "note://a"}),
            ),
            (
                "b",
                "read_mcp_resource",
                json!({"server": "fake", "uri": "blob://b.bin"}),
            ),
            (
                "x",
                "read_mcp_resource",
                json!({"server": "nope", "uri": "note://a"}),
            ),
        ],
    )));
    mock.push(Reply::text(API, "done"));
    let out = PiCommand::for_mock(API, &mock)
        .write_agent_file(
            "mcp.json",
            &mcp_json(json!({"fake": fake_entry(json!({"exposure": "direct"}))})),
        )
        .args(["-p", "resources?"])
        .run();
    out.assert_code(0).assert_no_panic();
    let results = tool_results(&mock.requests()[1]);
    let listing: Value = serde_json::from_str(&results[0]).unwrap();
    assert_eq!(
        listing,
        json!({"resources": [
            {"server": "fake", "uri": "note://a", "name": "a", "mimeType": "text/plain"},
            {"server": "fake", "uri": "blob://b.bin", "name": "b", "mimeType": "application/octet-stream"}
        ]})
    );
    assert_eq!(results[1], r#"{"server":"fake","resourceTemplates":[]}"#);
    assert_eq!(results[2], "the note text");
    let saved = results[3]
        .strip_prefix("[Binary resource blob://b.bin (application/octet-stream, 4B) saved to ")
        .and_then(|r| r.strip_suffix(']'))
        .unwrap_or_else(|| panic!("{}", results[3]));
    assert_eq!(std::fs::read(saved).unwrap(), [0, 1, 2, 3]);
    let _ = std::fs::remove_file(saved);
    assert_eq!(
        results[4],
        "MCP server \"nope\" has no resources. Servers with resources: fake"
    );
}

#[test]
fn an_invalid_entry_is_reported_once_and_the_others_still_connect() {
    let mock = MockServer::start();
    let cmd = PiCommand::for_mock(API, &mock);
    let config = cmd.agent_dir().join("mcp.json");
    let servers = json!({
        "old": {"url": "https://example.com/sse", "type": "sse"},
        "fake": fake_entry(json!({"exposure": "direct"})),
        // Direct, so the first prompt waits for it and the report comes before the answer.
        "dead": {"command": "python3", "args": [crate::support::mcp::fake_server(), "--exit-at-start", "--stderr", "boom: cannot start"], "exposure": "direct"},
    });
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("c", "mcp__fake__echo", json!({"text": "works"}))],
    )));
    mock.push(Reply::text(API, "done"));
    let cmd = cmd.write_agent_file("mcp.json", &mcp_json(servers));
    let out = cmd
        .again()
        .args(["--model", "mock/mock-model", "-p", "go"])
        .run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(tool_results(&mock.requests()[1]), ["works"]);
    let report = format!(
        "MCP servers need attention:\n  config: {}: server \"old\": legacy SSE transport is not supported; use the streamable HTTP URL\n  dead: failed: MCP connection closed\nRun `pi mcp list` to check them and `pi mcp login <server>` to sign in; the servers are configured in {} or {}.\n",
        config.display(),
        config.display(),
        cmd.cwd().join(".pi/mcp.json").display()
    );
    // `/mcp` exists only in the interactive mode (issue 35).
    assert!(!out.stderr.contains("Run /mcp"), "{}", out.stderr);
    assert_eq!(
        out.stderr.matches("MCP servers need attention").count(),
        1,
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains(&report), "{}", out.stderr);

    let list = cmd.again().args(["mcp", "list"]).run();
    list.assert_code(1);
    assert!(
        list.stdout.contains("dead: failed (direct, global)\n"),
        "{}",
        list.stdout
    );
    assert!(
        list.stdout
            .contains("  MCP connection closed\n  boom: cannot start\n"),
        "{}",
        list.stdout
    );
    assert!(
        list.stdout
            .contains("fake: connected, 12 tools (direct, global)\n"),
        "{}",
        list.stdout
    );
    assert!(list.stdout.ends_with(&format!(
        "config error: {}: server \"old\": legacy SSE transport is not supported; use the streamable HTTP URL\n",
        config.display()
    )));
}

#[test]
fn project_servers_need_trust_and_overrides_change_only_exposure_and_enabled() {
    let cmd = PiCommand::new()
        .write_agent_file(
            "mcp.json",
            &mcp_json(json!({"fake": fake_entry(json!({"description": "global one"}))})),
        )
        .write_file(
            ".pi/mcp.json",
            &mcp_json(json!({"fake": {"enabled": false}})),
        );
    let project = cmd.cwd().join(".pi/mcp.json");
    let untrusted = cmd.again().args(["mcp", "list", "--json"]).run();
    untrusted.assert_code(0);
    let doc: Value = serde_json::from_str(&untrusted.stdout).unwrap();
    assert_eq!(doc["servers"][0]["state"], "connected");
    assert_eq!(
        doc["note"],
        format!("{} is ignored because the project is not trusted. Start pi in the project to trust it.", project.display())
    );
    let trust = json!({ cmd.cwd().to_string_lossy(): true });
    let cmd = cmd.write_agent_file("trust.json", &trust.to_string());
    let trusted = cmd.again().args(["mcp", "list"]).run();
    trusted.assert_code(0);
    assert!(
        trusted.stdout.starts_with(&format!(
            "fake: disabled (codemode, global)\n  python3 {}\n  project override: {}\n",
            crate::support::mcp::fake_server(),
            project.display()
        )),
        "{}",
        trusted.stdout
    );
}

#[test]
fn add_validates_and_keeps_other_content() {
    let cmd = PiCommand::new().write_agent_file(
        "mcp.json",
        "{\n\t\"custom\": {\"keep\": true},\n\t\"mcpServers\": {}\n}\n",
    );
    let bad = cmd
        .again()
        .args(["mcp", "add", "bad name", "--", "x"])
        .run();
    bad.assert_code(1);
    assert_eq!(
        bad.stderr,
        "invalid server name \"bad name\" (use letters, digits, \"_\" and \"-\")\n"
    );
    let mixed = cmd
        .again()
        .args(["mcp", "add", "x", "--env", "A=1", "--url", "https://x/mcp"])
        .run();
    mixed.assert_code(1);
    assert_eq!(mixed.stderr, "--env only applies to stdio servers.\n");
    let usage = cmd.again().args(["mcp", "add", "x"]).run();
    usage.assert_code(1);
    assert!(usage.stderr.starts_with(
        "Usage: pi mcp add <server> [options] (--url <url> | -- <command> [args...])"
    ));
    let ok = cmd
        .again()
        .args([
            "mcp",
            "add",
            "docs",
            "--url",
            "https://docs.example/mcp",
            "--bearer-token-env-var",
            "DOCS_TOKEN",
            "--exposure",
            "codemode-deferred",
            "--description",
            "Docs",
        ])
        .run();
    ok.assert_code(0);
    assert!(
        ok.stdout.ends_with("Check it with: pi mcp list\n"),
        "{}",
        ok.stdout
    );
    let text = std::fs::read_to_string(cmd.agent_dir().join("mcp.json")).unwrap();
    assert_eq!(
        text,
        "{\n\t\"custom\": {\n\t\t\"keep\": true\n\t},\n\t\"mcpServers\": {\n\t\t\"docs\": {\n\t\t\t\"url\": \"https://docs.example/mcp\",\n\t\t\t\"headers\": {\n\t\t\t\t\"Authorization\": \"Bearer ${DOCS_TOKEN}\"\n\t\t\t},\n\t\t\t\"exposure\": \"codemode\",\n\t\t\t\"description\": \"Docs\"\n\t\t}\n\t}\n}\n"
    );
    let local = cmd
        .again()
        .args([
            "mcp",
            "add",
            "-l",
            "tool",
            "--env",
            "K=${V}",
            "--",
            "uvx",
            "tools-mcp",
            "--flag",
        ])
        .run();
    local.assert_code(0);
    let project: Value =
        serde_json::from_str(&std::fs::read_to_string(cmd.cwd().join(".pi/mcp.json")).unwrap())
            .unwrap();
    assert_eq!(
        project,
        json!({"mcpServers": {"tool": {"command": "uvx", "args": ["tools-mcp", "--flag"], "env": {"K": "${V}"}}}})
    );
    assert!(
        local.stdout.contains("The project is not trusted"),
        "{}",
        local.stdout
    );
    let remove = cmd.again().args(["mcp", "remove", "tool"]).run();
    remove.assert_code(1);
    assert!(
        remove.stderr.ends_with("; use --local.\n"),
        "{}",
        remove.stderr
    );
}

#[test]
fn aborting_pi_while_a_call_hangs_ends_pi_and_its_servers() {
    let mock = MockServer::start();
    let m = marker("abort");
    let cmd = PiCommand::for_mock(API, &mock).env("PI_TEST_MARKER", &m);
    let record = cmd.home().join("record.jsonl");
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("c", "mcp__fake__hang", json!({}))],
    )));
    let entry = fake_entry(
        json!({"exposure": "direct", "env": {"FAKE_MCP_RECORD": record.to_string_lossy()}}),
    );
    let child = cmd
        .write_agent_file("mcp.json", &mcp_json(json!({ "fake": entry })))
        .args(["-p", "go"])
        .spawn();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !std::fs::read_to_string(&record)
        .unwrap_or_default()
        .contains("tools/call")
    {
        assert!(
            Instant::now() < deadline,
            "the call never reached the server"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !crate::support::mcp::processes_with_marker(&m).is_empty(),
        "the server runs"
    );
    child.signal(libc::SIGINT);
    let out = child.wait();
    out.assert_code(130).assert_no_panic();
    assert!(survivors(&m).is_empty(), "a server outlived pi");
}
