//! MCP with real servers nobody here wrote: the reference filesystem server over stdio (run
//! directly and through `npx`), and a Streamable HTTP server built with the official Python
//! SDK. `pi mcp add|list|remove`, direct and deferred exposure through `pi -p` against the
//! mock model, resources, and no server left running afterwards.

use serde_json::{json, Value};

use crate::support::mcp::{
    fake_entry, filesystem_server, marker, mcp_json, npx_cache, survivors, HttpServer,
};
use crate::support::mock::{sse_tool_calls, MockServer, Reply};
use crate::support::pi::PiCommand;

const API: &str = "openai-completions";

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect()
}

fn system_prompt(body: &Value) -> String {
    body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn filesystem_entry(extra: Value) -> Value {
    let (node, js) = filesystem_server();
    let mut e = json!({"command": node, "args": [js, "."]});
    for (k, v) in extra.as_object().unwrap() {
        e[k] = v.clone();
    }
    e
}

#[test]
fn mcp_add_then_list_shows_the_filesystem_server_connected_with_its_tools() {
    let (node, js) = filesystem_server();
    let m = marker("fs-list");
    let pi = PiCommand::new().env("PI_TEST_MARKER", &m);
    let add = pi
        .again()
        .args(["mcp", "add", "filesystem", "--", &node, &js, "."])
        .run();
    add.assert_code(0);
    let config = pi.agent_dir().join("mcp.json");
    assert_eq!(
        add.stdout,
        format!(
            "Added global MCP server \"filesystem\" in {}.\nCheck it with: pi mcp list\n",
            config.display()
        )
    );
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    assert_eq!(
        written,
        json!({"mcpServers": {"filesystem": {"command": node, "args": [js, "."]}}})
    );

    let list = pi.again().args(["mcp", "list"]).run();
    list.assert_code(0).assert_no_panic();
    let mut lines = list.stdout.lines();
    assert_eq!(
        lines.next(),
        Some("filesystem: connected, 14 tools (codemode, global)"),
        "{}",
        list.stdout
    );
    assert_eq!(lines.next(), Some(format!("  {node} {js} .").as_str()));
    let tools = lines.next().unwrap();
    assert!(
        tools.starts_with("  tools: read_file, read_text_file,"),
        "{tools}"
    );
    assert!(
        survivors(&m).is_empty(),
        "the server outlived `pi mcp list`"
    );

    let json_list = pi.again().args(["mcp", "list", "--json"]).run();
    json_list.assert_code(0);
    let doc: Value = serde_json::from_str(&json_list.stdout).unwrap();
    assert_eq!(doc["servers"][0]["state"], "connected");
    assert_eq!(doc["servers"][0]["scope"], "global");
    assert!(doc["servers"][0]["tools"]
        .as_array()
        .unwrap()
        .contains(&json!("read_text_file")));
    assert_eq!(doc["errors"], json!([]));

    let removed = pi.again().args(["mcp", "remove", "filesystem"]).run();
    removed.assert_code(0);
    let again = pi.again().args(["mcp", "remove", "filesystem"]).run();
    again.assert_code(1);
    assert_eq!(
        again.stderr,
        format!(
            "No global MCP server named \"filesystem\" in {}.\n",
            config.display()
        )
    );
    let empty = pi.again().args(["mcp", "list"]).run();
    empty.assert_code(0);
    assert_eq!(
        empty.stdout,
        format!(
            "No MCP servers configured. Add them to {} or .pi/mcp.json.\n",
            config.display()
        )
    );
}

#[test]
fn the_npx_wrapper_works_and_dies_with_pi() {
    let m = marker("npx");
    let pi = PiCommand::new()
        .env("PI_TEST_MARKER", &m)
        .env("npm_config_cache", npx_cache().to_string_lossy())
        .env("npm_config_offline", "true")
        .env("npm_config_update_notifier", "false");
    pi.again()
        .args([
            "mcp",
            "add",
            "filesystem",
            "--",
            "npx",
            "-y",
            "@modelcontextprotocol/server-filesystem",
            ".",
        ])
        .run()
        .assert_code(0);
    let list = pi.again().args(["mcp", "list"]).run();
    list.assert_code(0);
    assert!(
        list.stdout.starts_with("filesystem: connected, 14 tools (codemode, global)\n  npx -y @modelcontextprotocol/server-filesystem .\n"),
        "{}\n{}",
        list.stdout,
        list.stderr
    );
    assert!(survivors(&m).is_empty(), "npx or its server outlived pi");
}

#[test]
fn print_mode_calls_a_direct_filesystem_tool() {
    let mock = MockServer::start();
    let m = marker("fs-direct");
    let cmd = PiCommand::for_mock(API, &mock)
        .env("PI_TEST_MARKER", &m)
        .write_file("note.txt", "the secret is 42\n");
    let note = cmd.cwd().join("note.txt").to_string_lossy().into_owned();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[(
            "c1",
            "mcp__filesystem__read_text_file",
            json!({"path": note}),
        )],
    )));
    mock.push(Reply::text(API, "The note says the secret is 42."));
    let out = cmd
        .write_agent_file(
            "mcp.json",
            &mcp_json(json!({"filesystem": filesystem_entry(json!({"exposure": "direct"}))})),
        )
        .args(["-p", "what does note.txt say?"])
        .run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(
        out.stdout, "The note says the secret is 42.\n",
        "stderr: {}",
        out.stderr
    );
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 2);
    let offered = tool_names(&reqs[0].body);
    assert!(
        offered.contains(&"mcp__filesystem__read_text_file".to_string()),
        "{offered:?}"
    );
    assert!(
        !offered.contains(&"tool_search".to_string()),
        "no tool_search for direct servers"
    );
    assert!(!system_prompt(&reqs[0].body).contains("<mcp_servers>"));
    assert!(
        reqs[1].body_text().contains("the secret is 42"),
        "{}",
        reqs[1].body_text()
    );
    assert!(survivors(&m).is_empty(), "the server outlived pi");
}

#[test]
fn deferred_tools_are_found_through_tool_search_first() {
    let mock = MockServer::start();
    let cmd = PiCommand::for_mock(API, &mock).write_file("note.txt", "deferred hello\n");
    let note = cmd.cwd().join("note.txt").to_string_lossy().into_owned();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[(
            "s1",
            "tool_search",
            json!({"query": "read text file contents"}),
        )],
    )));
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[(
            "c1",
            "mcp__filesystem__read_text_file",
            json!({"path": note}),
        )],
    )));
    mock.push(Reply::text(API, "It says deferred hello."));
    let entry =
        filesystem_entry(json!({"exposure": "deferred", "description": "Files of the project"}));
    let out = cmd
        .write_agent_file("mcp.json", &mcp_json(json!({"filesystem": entry})))
        .args(["-p", "read note.txt"])
        .run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(
        out.stdout, "It says deferred hello.\n",
        "stderr: {}",
        out.stderr
    );
    let reqs = mock.requests();
    let first = tool_names(&reqs[0].body);
    assert!(first.contains(&"tool_search".to_string()), "{first:?}");
    assert!(
        !first.iter().any(|t| t.starts_with("mcp__")),
        "deferred tools are not declared: {first:?}"
    );
    let prompt = system_prompt(&reqs[0].body);
    assert!(
        prompt.ends_with("<mcp_servers>\nMCP servers whose tools are not declared to you. Load the tools of `tool_search` servers with `tool_search`.\n- mcp__filesystem (tool_search): Files of the project\n</mcp_servers>"),
        "{prompt}"
    );
    assert!(prompt
        .contains("- tool_search: Search for tools that are not loaded yet and load the matches"));
    let search_result = reqs[1].body_text();
    assert!(
        search_result.contains("They are available from your next call"),
        "{search_result}"
    );
    assert!(
        search_result.contains("mcp__filesystem__read_text_file"),
        "{search_result}"
    );
    let second = tool_names(&reqs[1].body);
    assert!(
        second.contains(&"mcp__filesystem__read_text_file".to_string()),
        "{second:?}"
    );
    assert!(reqs[2].body_text().contains("deferred hello"));
}

#[test]
fn codemode_servers_act_as_deferred_and_say_so() {
    let mock = MockServer::start();
    mock.push(Reply::text(API, "ok"));
    let out = PiCommand::for_mock(API, &mock)
        .write_agent_file(
            "mcp.json",
            &mcp_json(json!({"fake": fake_entry(json!({}))})),
        )
        .args(["-p", "hi"])
        .run();
    out.assert_code(0);
    assert!(
        out.stderr.contains("MCP: the codemode tools of fake are callable from codemode scripts when the codemode tool is on (--tools +codemode), and are also reached through tool_search"),
        "{}",
        out.stderr
    );
    let first = tool_names(&mock.requests()[0].body);
    assert!(first.contains(&"tool_search".to_string()), "{first:?}");
}

#[test]
fn streamable_http_server_from_the_python_sdk() {
    let server = HttpServer::start();
    let pi = PiCommand::new();
    pi.again()
        .args([
            "mcp",
            "add",
            "calc",
            "--url",
            &server.url,
            "--exposure",
            "direct",
        ])
        .run()
        .assert_code(0);
    let list = pi.again().args(["mcp", "list"]).run();
    list.assert_code(0);
    assert_eq!(
        list.stdout,
        format!("calc: connected, 2 tools (direct, global)\n  {}\n  tools: add, shout\n  offers resources\n", server.url),
        "{}",
        list.stderr
    );

    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[
            ("a", "mcp__calc__add", json!({"a": 2, "b": 40})),
            (
                "r",
                "read_mcp_resource",
                json!({"server": "calc", "uri": "note://hello"}),
            ),
            ("l", "list_mcp_resources", json!({})),
        ],
    )));
    mock.push(Reply::text(API, "42"));
    let out = PiCommand::for_mock(API, &mock)
        .write_agent_file(
            "mcp.json",
            &mcp_json(json!({"calc": {"url": server.url, "exposure": "direct"}})),
        )
        .args(["-p", "add 2 and 40"])
        .run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "42\n", "{}", out.stderr);
    let reqs = mock.requests();
    let offered = tool_names(&reqs[0].body);
    for t in [
        "mcp__calc__add",
        "mcp__calc__shout",
        "list_mcp_resources",
        "read_mcp_resource",
        "list_mcp_resource_templates",
    ] {
        assert!(offered.contains(&t.to_string()), "{t} in {offered:?}");
    }
    let results: Vec<String> = reqs[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        results,
        ["42", "hello from a resource", results[2].as_str()]
    );
    let listing: Value = serde_json::from_str(&results[2]).unwrap();
    assert_eq!(listing["resources"][0]["server"], "calc");
    assert_eq!(listing["resources"][0]["uri"], "note://hello");
    assert_eq!(
        listing["resources"][0]
            .as_object()
            .unwrap()
            .keys()
            .next()
            .map(String::as_str),
        Some("server"),
        "the server is named first"
    );
}

#[test]
fn no_mcp_turns_servers_off_for_one_run() {
    let mock = MockServer::start();
    mock.push(Reply::text(API, "fine"));
    let m = marker("no-mcp");
    let out = PiCommand::for_mock(API, &mock)
        .env("PI_TEST_MARKER", &m)
        .env("FAKE_MCP_PIDFILE", "/dev/null")
        .write_agent_file(
            "mcp.json",
            &mcp_json(json!({"fake": fake_entry(json!({"exposure": "direct"}))})),
        )
        .args(["--no-mcp", "-p", "hi"])
        .run();
    out.assert_code(0);
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    let offered = tool_names(&mock.requests()[0].body);
    assert!(
        !offered
            .iter()
            .any(|t| t.starts_with("mcp__") || t == "tool_search"),
        "{offered:?}"
    );
}

#[test]
fn rpc_mode_reaches_mcp_tools_too() {
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("e", "mcp__fake__echo", json!({"text": "via rpc"}))],
    )));
    mock.push(Reply::text(API, "done"));
    let m = marker("rpc");
    let out = PiCommand::for_mock(API, &mock)
        .env("PI_TEST_MARKER", &m)
        .write_agent_file(
            "mcp.json",
            &mcp_json(json!({"fake": fake_entry(json!({"exposure": "direct"}))})),
        )
        .args(["--mode", "rpc", "--no-session"])
        .stdin("{\"id\":\"p\",\"type\":\"prompt\",\"message\":\"echo\"}\n")
        .run();
    out.assert_code(0).assert_no_panic();
    let events = out.json_lines();
    let end = events
        .iter()
        .find(|e| e["type"] == "tool_execution_end")
        .unwrap_or_else(|| panic!("{}", out.stdout));
    assert_eq!(end["toolName"], "mcp__fake__echo");
    assert_eq!(end["result"]["content"][0]["text"], "via rpc");
    assert_eq!(
        end["result"]["details"],
        json!({"server": "fake", "tool": "echo"})
    );
    assert_eq!(end["isError"], false);
    assert!(survivors(&m).is_empty());
}

#[test]
fn interactive_mode_shows_mcp_reports_and_runs_mcp_tools() {
    use crate::support::pty::PtyChild;
    use std::time::Duration;
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("e", "mcp__fake__echo", json!({"text": "pty echo"}))],
    )));
    mock.push(Reply::text(API, "The server echoed."));
    let m = marker("pty");
    let pi = PiCommand::for_mock(API, &mock)
        .env("PI_TEST_MARKER", &m)
        .write_agent_file(
            "mcp.json",
            &mcp_json(json!({
                "fake": fake_entry(json!({"exposure": "direct"})),
                "old": {"url": "https://example.com/sse", "type": "sse"}
            })),
        );
    let mut child = PtyChild::spawn(pi.command(), 100, 30);
    child.wait_for("MCP servers need attention", Duration::from_secs(15));
    child.wait_for("server \"old\": legacy SSE", Duration::from_secs(5));
    child.send("use the echo tool");
    child.send("\r");
    child.wait_for("The server echoed.", Duration::from_secs(15));
    child.send("\x04");
    assert!(child.wait_exit(Duration::from_secs(10)).success());
    assert!(mock.requests()[1].body_text().contains("pty echo"));
    assert!(
        survivors(&m).is_empty(),
        "the server outlived interactive pi"
    );
}

/// Issue 35: over Streamable HTTP, `tools/list` used to race `notifications/initialized`
/// (each message went on its own thread) and the GET notification stream opened only after
/// it, so the tools a server registers on `initialized` (as the reference `server-everything`
/// does) were missing in some starts and their `list_changed` was lost. The server saw the
/// messages in protocol order, a `list_changed` heard while listing lists again, and every
/// tool is there, on every start.
#[test]
fn streamable_http_messages_go_in_protocol_order_and_every_tool_is_listed() {
    let all = [
        "add",
        "after_initialized",
        "during_list",
        "from_stream",
        "shout",
    ];
    for start in 1..=4 {
        let server = HttpServer::start_order_server();
        let pi = PiCommand::new().write_agent_file(
            "mcp.json",
            &mcp_json(json!({"order": {"url": server.url, "exposure": "direct"}})),
        );
        let list = pi.again().args(["mcp", "list"]).run();
        list.assert_code(0).assert_no_panic();
        let tools_line = list
            .stdout
            .lines()
            .find_map(|l| l.trim().strip_prefix("tools: "))
            .unwrap_or_else(|| panic!("start {start}: no tools line: {}", list.stdout));
        let mut tools: Vec<&str> = tools_line.split(", ").collect();
        tools.sort_unstable();
        assert_eq!(tools, all, "start {start}: {}", list.stdout);
        let seen = server.seen();
        assert_eq!(
            seen[..4],
            [
                "initialize",
                "notifications/initialized",
                "GET",
                "tools/list"
            ],
            "start {start}: {seen:?}"
        );
        // The `list_changed` that came while listing made pi list again.
        assert!(
            seen[4..].contains(&"tools/list".to_string()),
            "start {start}: {seen:?}"
        );
    }

    // A `-p` run offers the model every tool too.
    let server = HttpServer::start_order_server();
    let mock = MockServer::with_replies([Reply::text(API, "ok")]);
    let out = PiCommand::for_mock(API, &mock)
        .write_agent_file(
            "mcp.json",
            &mcp_json(json!({"order": {"url": server.url, "exposure": "direct"}})),
        )
        .args(["-p", "which tools?"])
        .run();
    out.assert_code(0).assert_no_panic();
    let offered = tool_names(&mock.requests()[0].body);
    for tool in all {
        let name = format!("mcp__order__{tool}");
        assert!(offered.contains(&name), "{name} missing: {offered:?}");
    }
}
