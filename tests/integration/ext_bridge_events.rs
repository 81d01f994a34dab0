//! What pi 1.x added to the extension API, through the Node.js bridge: MCP servers an
//! extension registers, `user_bash` for `!` commands, `project_trust` at startup, and message
//! renderers drawing an extension's messages in interactive mode.

use std::time::Duration;

use serde_json::json;

use crate::ext_bridge::{have_node, module, with_ext};
use crate::support::mcp::{fake_entry, marker, survivors};
use crate::support::mock::sse_tool_calls;
use crate::support::pty::PtyChild;
use crate::support::{MockServer, PiCommand, Reply};

const API: &str = "openai-completions";

#[test]
fn an_mcp_server_registered_while_loading_connects_and_serves_the_model() {
    if !have_node("an_mcp_server_registered_while_loading_connects_and_serves_the_model") {
        return;
    }
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("e", "mcp__reg__echo", json!({"text": "through the bridge"}))],
    )));
    mock.push(Reply::text(API, "done"));
    let m = marker("ext-mcp");
    let pi = PiCommand::for_mock(API, &mock).env("PI_TEST_MARKER", &m);
    let config = fake_entry(json!({"exposure": "direct"}));
    let ext = module(
        &pi,
        "mcp.mjs",
        &r#"
export default function (pi) {
  const refused = [];
  for (const [name, config] of [["bad name", { command: "x" }], ["empty", {}]]) {
    try { pi.registerMcpServer(name, config); } catch (e) { refused.push(e.message); }
  }
  pi.registerMcpServer("reg", CONFIG);
  pi.registerMcpServer("gone", CONFIG);
  pi.unregisterMcpServer("gone");
  pi.on("before_agent_start", () => ({
    message: { customType: "mcp", display: false,
      content: `refused=${refused.join("|")} servers=${pi.getMcpServers().map((s) => s.name).join(",")}` },
  }));
}
"#
        .replace("CONFIG", &config.to_string()),
    );
    let out = with_ext(pi, &ext).args(["-p", "echo it"]).run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "done\n", "{}", out.stderr);
    let requests = mock.requests();
    let first = requests[0].body_text();
    assert!(
        first.contains("Invalid MCP server name \\\"bad name\\\""),
        "{first}"
    );
    assert!(
        first.contains("needs a \\\"command\\\" or a \\\"url\\\""),
        "{first}"
    );
    assert!(first.contains("servers=reg"), "{first}");
    assert!(
        first.contains("mcp__reg__echo"),
        "the server's tools are declared: {first}"
    );
    assert!(!first.contains("mcp__gone__"), "{first}");
    assert!(requests[1].body_text().contains("through the bridge"));
    assert!(
        survivors(&m).is_empty(),
        "the registered server outlived pi"
    );
}

#[test]
fn a_message_renderer_draws_the_extensions_messages_in_interactive_mode() {
    if !have_node("a_message_renderer_draws_the_extensions_messages_in_interactive_mode") {
        return;
    }
    let mock = MockServer::start();
    let pi = PiCommand::for_mock(API, &mock);
    let ext = module(
        &pi,
        "renderer.mjs",
        r#"
import { Text } from "@earendil-works/pi-tui";
export default function (pi) {
  pi.registerMessageRenderer("status-card", (message, { expanded }, theme) =>
    new Text(`<< card: ${message.content} (${message.details.n}) w/ ${theme.fg("accent", "style")} >>`, 0, 0));
  pi.registerMessageRenderer("shy", () => undefined);
  pi.registerCommand("card", {
    description: "Show a card",
    handler: async () => {
      await pi.sendMessage({ customType: "status-card", content: "all good", display: true, details: { n: 7 } });
      await pi.sendMessage({ customType: "shy", content: "default look", display: true });
    },
  });
}
"#,
    );
    let pi = with_ext(pi, &ext);
    let mut child = PtyChild::spawn(pi.command(), 100, 30);
    child.wait_for("renderer.mjs", Duration::from_secs(20));
    child.send("/card\r");
    child.wait_for("<< card: all good (7) w/ style >>", Duration::from_secs(10));
    // A renderer that draws nothing leaves pi's default look.
    child.wait_for("[shy]", Duration::from_secs(10));
    child.wait_for("default look", Duration::from_secs(10));
    assert!(!child.screen().contains("[status-card]"));
    child.send("\x04");
    child.wait_exit(Duration::from_secs(10));
}

#[test]
fn user_bash_handlers_answer_for_a_command_run_it_elsewhere_or_block_it() {
    if !have_node("user_bash_handlers_answer_for_a_command_run_it_elsewhere_or_block_it") {
        return;
    }
    let mock = MockServer::with_replies([Reply::text(API, "ok")]);
    let pi = PiCommand::for_mock(API, &mock);
    let ext = module(
        &pi,
        "bash.mjs",
        r#"
export default function (pi) {
  pi.on("user_bash", (event) => {
    if (event.command.startsWith("remote ")) {
      return { result: { output: `ran remotely: ${event.command} !!=${event.excludeFromContext}`, exitCode: 0, cancelled: false, truncated: false } };
    }
    if (event.command === "wrapped") {
      return { operations: { exec: async (cmd, cwd, { onData }) => { onData(Buffer.from(`via operations: ${cmd}`)); return { exitCode: 3 }; } } };
    }
    if (event.command === "bad") return { result: { output: 1 } };
    if (event.command === "throws") throw new Error("no shell for you");
  });
}
"#,
    );
    let pi = with_ext(pi, &ext).args(["--mode", "rpc", "--no-session"]);
    let mut talk = pi.converse();
    let bash = |talk: &mut crate::support::pi::PiConversation, id: &str, command: &str| {
        talk.send(&json!({"id": id, "type": "bash", "command": command}).to_string());
        talk.expect(id, |v| v["type"] == "response" && v["id"] == id)
    };
    let r = bash(&mut talk, "a", "remote ls");
    assert_eq!(
        r["data"]["output"], "ran remotely: remote ls !!=false",
        "{r}"
    );
    assert_eq!(r["data"]["exitCode"], 0);
    let r = bash(&mut talk, "b", "wrapped");
    assert_eq!(r["data"]["output"], "via operations: wrapped", "{r}");
    assert_eq!(r["data"]["exitCode"], 3);
    for (id, command) in [("c", "bad"), ("d", "throws")] {
        let r = bash(&mut talk, id, command);
        assert_eq!(r["success"], false, "{r}");
    }
    let r = bash(&mut talk, "e", "echo local");
    assert_eq!(r["data"]["output"], "local\n", "{r}");
    talk.send(r#"{"id":"p","type":"prompt","message":"what ran?"}"#);
    talk.expect("agent_end", |v| v["type"] == "agent_end");
    let (code, _, stderr) = talk.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let context = mock.requests()[0].user_texts().join("\n");
    assert!(context.contains("ran remotely: remote ls"), "{context}");
    assert!(context.contains("via operations: wrapped"), "{context}");
    assert!(!context.contains("no shell"), "{context}");
}

#[test]
fn a_user_extension_decides_project_trust_before_the_folders_extensions_load() {
    if !have_node("a_user_extension_decides_project_trust_before_the_folders_extensions_load") {
        return;
    }
    let mock = MockServer::with_replies([Reply::text(API, "one"), Reply::text(API, "two")]);
    let decider = r#"
import { appendFileSync } from "node:fs";
export default function (pi) {
  pi.on("project_trust", (event, ctx) => {
    appendFileSync(process.env.TRUST_LOG, `asked ${ctx.mode} ${event.cwd}\n`);
    return { trusted: process.env.TRUST_ANSWER, remember: process.env.TRUST_ANSWER === "yes" };
  });
}
"#;
    let project = r#"
export default function (pi) {
  pi.on("before_agent_start", (event) => ({ systemPrompt: event.systemPrompt + "\nPROJECT EXTENSION LOADED" }));
}
"#;
    let pi = PiCommand::for_mock(API, &mock)
        .write_agent_file("extensions/decider.mjs", decider)
        .write_file(".pi/extensions/project.mjs", project);
    let log = pi.home().join("trust.log");
    let cwd = pi.cwd().to_path_buf();
    let run = |answer: &str| {
        pi.again()
            .env("TRUST_LOG", log.to_string_lossy())
            .env("TRUST_ANSWER", answer)
            .env("XDG_CACHE_HOME", pi.home().join("cache").to_string_lossy())
            .args(["--no-session", "-p", "hi"])
            .run()
    };
    // "no" wins over nothing saved: the folder's extension stays out.
    run("no").assert_code(0).assert_no_panic();
    assert!(!mock.requests()[0]
        .body_text()
        .contains("PROJECT EXTENSION LOADED"));
    // "yes" with remember: loaded, and saved to trust.json.
    run("yes").assert_code(0).assert_no_panic();
    assert!(mock.requests()[1]
        .body_text()
        .contains("PROJECT EXTENSION LOADED"));
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(pi.agent_dir().join("trust.json")).unwrap())
            .unwrap();
    assert_eq!(saved[cwd.to_string_lossy().as_ref()], true, "{saved}");
    let asked = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        asked.lines().collect::<Vec<_>>(),
        [
            format!("asked print {}", cwd.display()),
            format!("asked print {}", cwd.display())
        ]
    );
}

#[test]
fn what_session_start_handlers_ask_for_is_in_place_before_the_first_prompt() {
    if !have_node("what_session_start_handlers_ask_for_is_in_place_before_the_first_prompt") {
        return;
    }
    let mock = MockServer::with_replies([Reply::text(API, "ok")]);
    let pi = PiCommand::for_mock(API, &mock);
    let ext = module(
        &pi,
        "start.mjs",
        r#"
export default function (pi) {
  pi.on("session_start", async () => {
    await new Promise((r) => setTimeout(r, 200));
    pi.appendEntry("my-state", { count: 1 });
    pi.sendMessage({ customType: "note", content: "a note", display: true });
    pi.setActiveTools(["read"]);
  });
}
"#,
    );
    let out = with_ext(pi.again(), &ext).args(["-p", "hi"]).run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "ok\n", "{}", out.stderr);
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].user_texts(), ["a note", "hi"]);
    let body: serde_json::Value = serde_json::from_str(&requests[0].body_text()).unwrap();
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["read"]);
    let prompt = body["messages"][0]["content"].as_str().unwrap();
    assert!(prompt.contains("- read:"), "{prompt}");
    assert!(
        !prompt.contains("- bash:"),
        "the prompt follows the active tools: {prompt}"
    );
    let file = std::fs::read_dir(pi.agent_dir().join("sessions"))
        .unwrap()
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten())
        .map(|f| f.path())
        .next()
        .unwrap();
    let kinds: Vec<String> = std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|e| match e["type"].as_str().unwrap() {
            "message" => e["message"]["role"].as_str().unwrap().to_string(),
            t => t.to_string(),
        })
        .filter(|k| !k.ends_with("_change") && k != "session")
        .collect();
    assert_eq!(
        kinds,
        ["custom", "custom_message", "system", "user", "assistant"]
    );
}

#[test]
fn a_message_a_command_sends_reaches_the_model_as_a_text_block() {
    if !have_node("a_message_a_command_sends_reaches_the_model_as_a_text_block") {
        return;
    }
    let mock = MockServer::with_replies([Reply::text(API, "ok")]);
    let pi = PiCommand::for_mock(API, &mock);
    let ext = module(
        &pi,
        "note.mjs",
        r#"
export default function (pi) {
  pi.registerCommand("note", { description: "note", handler: async () => {
    pi.sendMessage({ customType: "note", content: "from command", display: true, details: { a: 1 } }, { triggerTurn: true });
  } });
}
"#,
    );
    let out = with_ext(pi, &ext)
        .args(["--no-session", "-p", "/note"])
        .run();
    out.assert_code(0).assert_no_panic();
    let body: serde_json::Value = serde_json::from_str(&mock.requests()[0].body_text()).unwrap();
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        last["content"],
        json!([{"type": "text", "text": "from command"}]),
        "{body}"
    );
}

#[test]
fn what_agent_end_handlers_ask_for_is_recorded_before_print_mode_exits() {
    if !have_node("what_agent_end_handlers_ask_for_is_recorded_before_print_mode_exits") {
        return;
    }
    let mock = MockServer::with_replies([Reply::text(API, "ok")]);
    let pi = PiCommand::for_mock(API, &mock);
    let ext = module(
        &pi,
        "end.mjs",
        r#"
export default function (pi) {
  pi.on("agent_end", async (event, ctx) => {
    await new Promise((r) => setTimeout(r, 200));
    pi.setSessionName("named by extension");
    const leaf = ctx.sessionManager.getLeafEntry();
    if (leaf) pi.setLabel(leaf.id, "labelled");
  });
}
"#,
    );
    let out = with_ext(pi.again(), &ext).args(["-p", "hi"]).run();
    out.assert_code(0).assert_no_panic();
    let file = std::fs::read_dir(pi.agent_dir().join("sessions"))
        .unwrap()
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten())
        .map(|f| f.path())
        .next()
        .unwrap();
    let entries: Vec<serde_json::Value> = std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let info = entries
        .iter()
        .find(|e| e["type"] == "session_info")
        .expect("named");
    assert_eq!(info["name"], "named by extension");
    let label = entries
        .iter()
        .find(|e| e["type"] == "label")
        .expect("labelled");
    assert_eq!(label["label"], "labelled");
}

#[test]
fn a_bang_command_in_interactive_mode_goes_through_user_bash() {
    if !have_node("a_bang_command_in_interactive_mode_goes_through_user_bash") {
        return;
    }
    let mock = MockServer::start();
    let pi = PiCommand::for_mock(API, &mock);
    let ext = module(
        &pi,
        "remote.mjs",
        r#"
export default function (pi) {
  pi.on("user_bash", (event) => ({
    result: { output: `answered for: ${event.command}`, exitCode: 0, cancelled: false, truncated: false },
  }));
}
"#,
    );
    let pi = with_ext(pi, &ext);
    let mut child = PtyChild::spawn(pi.command(), 100, 30);
    child.wait_for("remote.mjs", Duration::from_secs(20));
    child.send("!echo local\r");
    child.wait_for("answered for: echo local", Duration::from_secs(10));
    assert!(!child.screen().contains("\nlocal"), "{}", child.screen());
    child.send("\x04");
    child.wait_exit(Duration::from_secs(10));
}

/// pi 1.x's `entry_appended`: JSON mode reports an entry an extension appends, as written.
#[test]
fn an_entry_an_extension_appends_is_reported_as_entry_appended() {
    if !have_node("an_entry_an_extension_appends_is_reported_as_entry_appended") {
        return;
    }
    let mock = MockServer::with_replies([Reply::text(API, "ok")]);
    let pi = PiCommand::for_mock(API, &mock);
    let ext = module(
        &pi,
        "append.mjs",
        r#"
export default function (pi) {
  pi.on("agent_end", async () => { pi.appendEntry("my-state", { count: 2 }); });
}
"#,
    );
    let out = with_ext(pi.again(), &ext)
        .args(["--mode", "json", "-p", "hi"])
        .run();
    out.assert_code(0).assert_no_panic();
    let appended: Vec<serde_json::Value> = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["type"] == "entry_appended")
        .collect();
    assert_eq!(appended.len(), 1, "{}", out.stdout);
    let entry = &appended[0]["entry"];
    assert_eq!(entry["type"], "custom");
    assert_eq!(entry["customType"], "my-state");
    assert_eq!(entry["data"], json!({"count": 2}));
    let file = std::fs::read_dir(pi.agent_dir().join("sessions"))
        .unwrap()
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten())
        .map(|f| f.path())
        .next()
        .unwrap();
    let written: Vec<serde_json::Value> = std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(written.contains(entry), "the entry as written: {entry}");
}

/// pi 1.6.0: events a `session_start` handler causes (here `entry_appended`) reach JSON and RPC
/// clients, once: at start-up and, in RPC mode, after `new_session`, whose `session_start`
/// handlers run once for the new session.
#[test]
fn session_start_events_reach_json_and_rpc_clients_once() {
    if !have_node("session_start_events_reach_json_and_rpc_clients_once") {
        return;
    }
    let mock = MockServer::with_replies([Reply::text(API, "ok")]);
    let pi = PiCommand::for_mock(API, &mock);
    let ext = module(
        &pi,
        "starter.mjs",
        r#"
export default function (pi) {
  pi.on("session_start", async (event) => { pi.appendEntry("started", { reason: event.reason }); });
}
"#,
    );
    let appended = |stdout: &str| -> Vec<serde_json::Value> {
        stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|e| e["type"] == "entry_appended")
            .map(|e| e["entry"]["data"].clone())
            .collect()
    };
    let out = with_ext(pi.again(), &ext)
        .args(["--mode", "json", "-p", "hi"])
        .run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(
        appended(&out.stdout),
        [json!({"reason": "startup"})],
        "{}",
        out.stdout
    );

    let mut talk = with_ext(pi.again(), &ext)
        .args(["--mode", "rpc"])
        .converse();
    let first = talk.expect("startup entry_appended", |v| v["type"] == "entry_appended");
    assert_eq!(first["entry"]["data"], json!({"reason": "startup"}));
    talk.send(r#"{"id":"n","type":"new_session"}"#);
    talk.expect("new_session response", |v| v["id"] == "n");
    let second = talk.expect("new entry_appended", |v| v["type"] == "entry_appended");
    assert_eq!(second["entry"]["data"], json!({"reason": "new"}));
    talk.send(r#"{"id":"s","type":"get_state"}"#);
    talk.expect("get_state response", |v| v["id"] == "s");
    let (code, lines, stderr) = talk.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        appended(&lines.join("\n")),
        [json!({"reason": "startup"}), json!({"reason": "new"})],
        "session_start handlers run once for the new session"
    );
}
