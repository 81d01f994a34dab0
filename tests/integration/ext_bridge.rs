//! pi's JavaScript extension API through our Node.js bridge, as extensions written for pi 0.73
//! and 1.x use it: imports under both package scopes, the built-in tool factories, a model
//! provider that streams through the extension, pi 1.x's `before_agent_start` union and
//! actionable `turn_end`, `ctx.mode`, one Node process for every extension, a restart when the
//! session is replaced, and components drawn in the terminal (a custom editor, `ui.custom`).
//! The extensions are plain JavaScript, so any Node.js ≥ 20.6 runs them (no type stripping or
//! jiti needed); without `node` on PATH the tests say so and pass.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use crate::support::mock::sse_tool_calls;
use crate::support::pty::PtyChild;
use crate::support::{base_url_for, MockServer, PiCommand, Reply};

const API: &str = "openai-completions";

pub(crate) fn have_node(test: &str) -> bool {
    let ok = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIPPED {test}: node is not on PATH");
    }
    ok
}

/// Writes `source` as an extension module in the run's home and returns its path.
pub(crate) fn module(pi: &PiCommand, name: &str, source: &str) -> PathBuf {
    let path = pi.home().join("exts").join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, source).unwrap();
    path
}

pub(crate) fn with_ext(pi: PiCommand, path: &Path) -> PiCommand {
    let cache = pi.home().join("cache");
    pi.args(["-e", &path.to_string_lossy()])
        .env("XDG_CACHE_HOME", cache.to_string_lossy())
}

#[test]
fn tool_factories_run_pis_own_tools_and_honour_spawn_hooks() {
    if !have_node("tool_factories_run_pis_own_tools_and_honour_spawn_hooks") {
        return;
    }
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[
            ("call_1", "peek", json!({"path": "note.txt"})),
            ("call_2", "bash", json!({"command": "echo hooked=$HOOKED"})),
        ],
    )));
    mock.push(Reply::text(API, "done"));
    let pi = PiCommand::for_mock(API, &mock).write_file("note.txt", "the secret note");
    let ext = module(
        &pi,
        "factories.mjs",
        r#"
import { createReadTool, createBashTool, getAgentDir, formatSize, DEFAULT_MAX_BYTES } from "@earendil-works/pi-coding-agent";
import { Type } from "@mariozechner/pi-ai";
export default function (pi) {
  pi.registerTool({
    name: "peek", label: "Peek", description: "Read a file through pi's read tool",
    parameters: Type.Object({ path: Type.String() }),
    async execute(id, params, signal, onUpdate, ctx) {
      const read = createReadTool(ctx.cwd);
      const r = await read.execute(id, { path: params.path }, signal, onUpdate);
      const size = formatSize(DEFAULT_MAX_BYTES);
      return { content: [{ type: "text", text: `${r.content[0].text} (${size}, ${getAgentDir() ? "agent dir" : "none"})` }] };
    },
  });
  const bash = createBashTool(process.cwd(), {
    spawnHook: ({ command, cwd, env }) => ({ command, cwd, env: { ...env, HOOKED: "yes" } }),
  });
  pi.registerTool({ ...bash });
}
"#,
    );
    let out = with_ext(pi, &ext).args(["-p", "look"]).run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "done\n", "{}", out.stderr);
    let body = mock.requests()[1].body_text();
    assert!(
        body.contains("the secret note (50.0KB, agent dir)"),
        "{body}"
    );
    assert!(body.contains("hooked=yes"), "{body}");
}

#[test]
fn a_provider_an_extension_registers_streams_through_it() {
    if !have_node("a_provider_an_extension_registers_streams_through_it") {
        return;
    }
    let mock = MockServer::with_replies([Reply::text(API, "from the mock")]);
    let models = json!({"providers": {"mock": {"baseUrl": base_url_for(API, mock.port()),
        "api": API, "apiKey": "test-key", "models": [{"id": "mock-model"}]}}});
    let pi = PiCommand::new().write_agent_file("models.json", &models.to_string());
    // The provider relays to the mock through pi's own model call and prefixes the answer.
    let ext = module(
        &pi,
        "relay.mjs",
        r#"
import { complete, createAssistantMessageEventStream, getModel } from "@earendil-works/pi-ai/compat";
function relay(model, context, options) {
  const stream = createAssistantMessageEventStream();
  (async () => {
    const reply = await complete(getModel("mock", "mock-model"), context, { signal: options?.signal });
    const text = "relayed: " + reply.content.map((b) => b.text ?? "").join("");
    const message = { role: "assistant", content: [{ type: "text", text }], api: model.api,
      provider: model.provider, model: model.id, usage: reply.usage, stopReason: "stop", timestamp: Date.now() };
    stream.push({ type: "start", partial: message });
    stream.push({ type: "text_start", contentIndex: 0, partial: message });
    stream.push({ type: "text_delta", contentIndex: 0, delta: text, partial: message });
    stream.push({ type: "text_end", contentIndex: 0, content: text, partial: message });
    stream.push({ type: "done", reason: "stop", message });
    stream.end();
  })();
  return stream;
}
export default function (pi) {
  pi.registerProvider("relay", {
    baseUrl: "http://relay.invalid", apiKey: "relay-key", api: "relay-api",
    models: [{ id: "relay-1", name: "Relay", contextWindow: 1000, maxTokens: 100 }],
    streamSimple: relay,
  });
}
"#,
    );
    let out = with_ext(pi, &ext)
        .args(["--model", "relay/relay-1", "-p", "hi"])
        .run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "relayed: from the mock\n", "{}", out.stderr);
    assert_eq!(mock.requests()[0].last_user_text().as_deref(), Some("hi"));
}

#[test]
fn before_agent_start_sees_the_union_and_turn_end_can_ask_for_one_more_turn() {
    if !have_node("before_agent_start_sees_the_union_and_turn_end_can_ask_for_one_more_turn") {
        return;
    }
    let mock = MockServer::with_replies([
        Reply::text(API, "first answer"),
        Reply::text(API, "second answer"),
    ]);
    let pi = PiCommand::for_mock(API, &mock);
    let ext = module(
        &pi,
        "boundaries.mjs",
        r#"
export default function (pi) {
  let asked = false;
  pi.on("before_agent_start", (event, ctx) => ({
    message: { customType: "note", content: `type=${event.messageType} prompt=${event.prompt} mode=${ctx.mode} trusted=${ctx.isProjectTrusted()} tools=${event.systemPromptOptions.selectedTools} snippet=${event.systemPromptOptions.toolSnippets.read !== undefined} cwd=${event.systemPromptOptions.cwd === process.cwd()}`, display: false },
  }));
  pi.on("turn_end", (event) => {
    if (asked || event.toolResults.length) return;
    asked = true;
    return { entries: [...event.entries, { type: "custom_message", customType: "redo", content: "Answer again, briefly.", display: false }], continue: true };
  });
  const off = pi.on("agent_start", () => { throw new Error("unsubscribed handlers never run"); });
  off();
}
"#,
    );
    let out = with_ext(pi, &ext).args(["-p", "hello"]).run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "second answer\n", "{}", out.stderr);
    assert!(!out.stderr.contains("never run"), "{}", out.stderr);
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let first = requests[0].body_text();
    assert!(
        first.contains("type=user prompt=hello mode=print trusted=true"),
        "a project without its own pi resources is trusted: {first}"
    );
    assert!(
        first.contains("tools=read,bash,edit,write snippet=true cwd=true"),
        "systemPromptOptions says what the prompt is built from: {first}"
    );
    let second = requests[1].user_texts();
    assert_eq!(
        second.last().map(String::as_str),
        Some("Answer again, briefly.")
    );
}

#[test]
fn an_extension_writing_to_stdout_stays_enabled_and_its_text_goes_to_stderr() {
    if !have_node("an_extension_writing_to_stdout_stays_enabled_and_its_text_goes_to_stderr") {
        return;
    }
    let mock = MockServer::with_replies([Reply::text(API, "one"), Reply::text(API, "two")]);
    let pi = PiCommand::for_mock(API, &mock);
    // Like pi's notify.ts example: a terminal notification written straight to stdout, which
    // is the bridge's protocol stream.
    let ext = module(
        &pi,
        "notify.mjs",
        r#"
export default function (pi) {
  pi.on("agent_end", () => { process.stdout.write("\x1b]777;notify;Pi;Ready\x07"); });
  pi.on("before_agent_start", () => ({ message: { customType: "n", content: "still here", display: false } }));
}
"#,
    );
    let mut rpc = with_ext(pi, &ext)
        .args(["--mode", "rpc", "--no-session"])
        .converse();
    for id in ["a", "b"] {
        rpc.send(&json!({"id": id, "type": "prompt", "message": id}).to_string());
        rpc.expect("agent_end", |v| v["type"] == "agent_end");
    }
    let (code, lines, stderr) = rpc.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        lines.iter().all(|l| !l.contains("]777;notify")),
        "nothing reaches pi's own stdout: {lines:?}"
    );
    assert_eq!(
        stderr
            .matches("[notify] \x1b]777;notify;Pi;Ready\x07")
            .count(),
        2,
        "{stderr:?}"
    );
    assert!(!stderr.contains("disabled"), "{stderr}");
    let requests = mock.requests();
    assert!(
        requests[1].body_text().contains("still here"),
        "the extension still runs on the second prompt"
    );
}

#[test]
fn every_typescript_extension_shares_one_node_process_and_restarts_with_the_session() {
    if !have_node(
        "every_typescript_extension_shares_one_node_process_and_restarts_with_the_session",
    ) {
        return;
    }
    let pi = PiCommand::new();
    let mut cmd = pi.again();
    for i in 0..3 {
        let ext = module(
            &pi,
            &format!("e{i}.mjs"),
            &format!(
                r#"
import {{ appendFileSync }} from "node:fs";
let starts = 0;
export default function (pi) {{
  starts++;
  pi.on("session_start", (event) => appendFileSync("log.txt", `e{i} ${{process.pid}} ${{event.reason}} ${{starts}}\n`));
  pi.on("session_shutdown", (event) => appendFileSync("log.txt", `e{i} shutdown ${{event.reason}}\n`));
}}
"#
            ),
        );
        cmd = with_ext(cmd, &ext);
    }
    let mut rpc = cmd.args(["--mode", "rpc"]).converse();
    rpc.send(r#"{"id":"1","type":"get_state"}"#);
    rpc.expect("get_state", |v| v["id"] == "1");
    rpc.send(r#"{"id":"2","type":"new_session"}"#);
    rpc.expect("new_session", |v| v["id"] == "2");
    rpc.send(r#"{"id":"3","type":"get_state"}"#);
    rpc.expect("get_state", |v| v["id"] == "3");
    let _ = rpc.finish();
    let log = std::fs::read_to_string(pi.cwd().join("log.txt")).unwrap();
    let starts: Vec<Vec<&str>> = log
        .lines()
        .map(|l| l.split(' ').collect::<Vec<_>>())
        .filter(|w| w[1] != "shutdown")
        .collect();
    assert_eq!(starts.len(), 6, "{log}");
    assert!(
        starts.iter().all(|w| w[1] == starts[0][1]),
        "one Node process serves every extension: {log}"
    );
    for name in ["e0", "e1", "e2"] {
        let mine: Vec<_> = starts.iter().filter(|w| w[0] == name).collect();
        assert_eq!(mine[0][2..], ["startup", "1"], "{log}");
        // A fresh module instance: its module-level counter starts again.
        assert_eq!(mine[1][2..], ["new", "1"], "{log}");
        assert!(log.contains(&format!("{name} shutdown new")), "{log}");
    }
}

#[test]
fn a_custom_editor_and_a_custom_view_are_drawn_and_keyed_in_the_terminal() {
    if !have_node("a_custom_editor_and_a_custom_view_are_drawn_and_keyed_in_the_terminal") {
        return;
    }
    let mock = MockServer::with_replies([Reply::text(API, "got it")]);
    let pi = PiCommand::for_mock(API, &mock);
    let ext = module(
        &pi,
        "ui.mjs",
        r#"
import { CustomEditor } from "@mariozechner/pi-coding-agent";
import { SelectList, matchesKey } from "@earendil-works/pi-tui";
class MarkedEditor extends CustomEditor {
  render(width) {
    const lines = super.render(width);
    lines[0] = "[marked editor]";
    return lines;
  }
}
export default function (pi) {
  pi.on("session_start", (_e, ctx) => ctx.ui.setEditorComponent((tui, theme, kb) => new MarkedEditor(tui, theme, kb)));
  pi.registerCommand("pick", {
    description: "Pick a fruit",
    handler: async (_args, ctx) => {
      const choice = await ctx.ui.custom((tui, theme, kb, done) => {
        const list = new SelectList([{ value: "apple", label: "apple" }, { value: "banana", label: "banana" }], 5);
        list.onSelect = (item) => done(item.value);
        list.onCancel = () => done(undefined);
        return { render: (w) => ["Pick a fruit:", ...list.render(w)], handleInput: (d) => list.handleInput(d), invalidate() {} };
      });
      ctx.ui.notify(`picked ${choice}`, "info");
    },
  });
}
"#,
    );
    // Kept alive: dropping the command would remove its home while pi runs.
    let pi = with_ext(pi, &ext);
    let mut child = PtyChild::spawn(pi.command(), 80, 24);
    child.wait_for("[marked editor]", Duration::from_secs(20));
    child.send("/pick\r");
    child.wait_for("Pick a fruit:", Duration::from_secs(10));
    child.send("\x1b[B");
    child.wait_for("→ banana", Duration::from_secs(5));
    child.send("\r");
    child.wait_for("picked banana", Duration::from_secs(5));
    child.send("hello there\r");
    child.wait_for("got it", Duration::from_secs(10));
    assert_eq!(
        mock.requests()[0].last_user_text().as_deref(),
        Some("hello there")
    );
    child.send("\x04");
    child.wait_exit(Duration::from_secs(10));
}

pub(crate) fn node_strips_types() -> bool {
    let Ok(out) = std::process::Command::new("node").arg("--version").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let mut parts = text.trim().trim_start_matches('v').split('.');
    let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    (major, minor) >= (22, 6)
}

#[test]
fn on_a_node_without_type_stripping_the_bridge_installs_jiti_once() {
    let test = "on_a_node_without_type_stripping_the_bridge_installs_jiti_once";
    if !have_node(test) {
        return;
    }
    if node_strips_types() {
        eprintln!("SKIPPED {test}: this Node strips types itself, so no jiti is needed");
        return;
    }
    let mock = MockServer::with_replies([Reply::text(API, "one"), Reply::text(API, "two")]);
    let pi = PiCommand::for_mock(API, &mock);
    // A stand-in npm that "installs" a tiny jiti (enough for a TypeScript file that is plain
    // JavaScript), logging each call, so nothing reaches the registry.
    let log = pi.home().join("npm.log");
    let npm = module(
        &pi,
        "npm.sh",
        &format!(
            r#"#!/bin/sh
echo "$*" >> '{log}'
prefix="$3"
mkdir -p "$prefix/node_modules/jiti/lib"
cat > "$prefix/node_modules/jiti/lib/jiti.mjs" <<'JS'
import {{ readFileSync }} from "node:fs";
export function createJiti() {{
  return {{ import: async (p) => (await import("data:text/javascript," + encodeURIComponent(readFileSync(p, "utf8")))).default }};
}}
JS
"#,
            log = log.display()
        ),
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&npm, std::fs::Permissions::from_mode(0o755)).unwrap();
    let ext = module(
        &pi,
        "hello.ts",
        r#"import { writeFileSync } from "node:fs";
export default function (pi) { writeFileSync("loaded.txt", "yes"); }
"#,
    );
    let run = || {
        with_ext(pi.again(), &ext)
            .env("PI_NPM", npm.to_string_lossy())
            .env("PI_JITI", "")
            // Online: offline, jiti is never installed (tests/integration/offline.rs).
            .env("PI_OFFLINE", "")
            .args(["--model", "mock/mock-model", "-p", "hi"])
            .run()
    };
    let out = run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "one\n", "{}", out.stderr);
    assert!(
        out.stderr.contains("loading TypeScript here needs jiti"),
        "the install is announced: {}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_to_string(pi.cwd().join("loaded.txt")).unwrap(),
        "yes"
    );
    let out = run();
    out.assert_code(0);
    assert_eq!(out.stdout, "two\n", "{}", out.stderr);
    assert!(!out.stderr.contains("needs jiti"), "{}", out.stderr);
    let calls = std::fs::read_to_string(&log).unwrap();
    assert_eq!(calls.lines().count(), 1, "installed once: {calls}");
    assert!(calls.starts_with("install --prefix "), "{calls}");
}

#[test]
fn extensions_see_the_registrys_models_in_order_with_overrides_and_other_extensions_providers() {
    if !have_node("extensions_see_the_registrys_models_in_order_with_overrides_and_other_extensions_providers") {
        return;
    }
    let mock = MockServer::with_replies([Reply::text(API, "ok")]);
    let models = json!({"providers": {
        "mock": {"baseUrl": base_url_for(API, mock.port()), "api": API, "apiKey": "test-key",
            "models": [{"id": "mock-model"}]},
        // A built-in model changed in the middle of the catalog.
        "anthropic": {"modelOverrides": {"claude-sonnet-4-5": {"name": "Overridden Sonnet"}}},
    }});
    let auth = json!({"anthropic": {"type": "api_key", "key": "test-anthropic-key"}});
    let pi = PiCommand::new()
        .write_agent_file("models.json", &models.to_string())
        .write_agent_file("auth.json", &auth.to_string());
    let relay = module(
        &pi,
        "relay.mjs",
        r#"
export default function (pi) {
  pi.registerProvider("relay", {
    baseUrl: "http://relay.invalid", apiKey: "relay-key", api: "openai-completions",
    models: [{ id: "relay-1", name: "Relay", contextWindow: 1000, maxTokens: 100 }],
  });
}
"#,
    );
    let seen = pi.home().join("seen.json");
    let look = module(
        &pi,
        "look.mjs",
        &r#"
import { writeFileSync } from "node:fs";
import { getModel, getModels, getProviders } from "@mariozechner/pi-ai";
export default function (pi) {
  pi.on("agent_start", (_event, ctx) => {
    const r = ctx.modelRegistry;
    writeFileSync(SEEN, JSON.stringify({
      all: r.getAll(),
      available: r.getAvailable().map((m) => `${m.provider}/${m.id}`),
      found: r.find("anthropic", "claude-sonnet-4-5"),
      auth: [r.hasConfiguredAuth(r.find("mock", "mock-model")), r.hasConfiguredAuth(r.find("openai", "gpt-4o"))],
      relay: getModel("relay", "relay-1"),
      mockIds: getModels("mock").map((m) => m.id),
      providers: getProviders(),
      current: ctx.model,
      stable: r.getAll() === r.getAll() && r.getAvailable() === r.getAvailable(),
    }));
  });
}
"#
        .replace("SEEN", &format!("{:?}", seen.to_string_lossy())),
    );
    let out = with_ext(pi.again(), &relay)
        .args(["-e", &look.to_string_lossy()])
        .args(["--model", "mock/mock-model", "-p", "hi"])
        .run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "ok\n", "{}", out.stderr);
    let seen: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();

    // Every model pi's registry has, in its order and JSON form, then the extension's provider.
    let registry = pi::resources::model_registry::ModelRegistry::load(pi.agent_dir());
    let expected: Vec<serde_json::Value> = registry
        .all()
        .iter()
        .map(|m| serde_json::to_value(m).unwrap())
        .collect();
    let all = seen["all"].as_array().unwrap();
    assert_eq!(all.len(), expected.len() + 1);
    for (got, want) in all.iter().zip(&expected) {
        assert_eq!(as_js(got), as_js(want));
    }
    let relay_model = &all[expected.len()];
    assert_eq!(
        (
            &relay_model["provider"],
            &relay_model["id"],
            &relay_model["contextWindow"]
        ),
        (&json!("relay"), &json!("relay-1"), &json!(1000))
    );
    assert_eq!(&seen["relay"], relay_model);
    assert_eq!(seen["found"]["name"], "Overridden Sonnet");
    assert_eq!(seen["found"]["baseUrl"], "https://api.anthropic.com");
    assert!(all.iter().any(|m| m == &seen["found"]));

    // Available: the models of the providers with a key (auth.json, models.json, the extension's).
    let keyed = ["anthropic", "mock", "relay"];
    let available: Vec<String> = all
        .iter()
        .filter(|m| keyed.contains(&m["provider"].as_str().unwrap()))
        .map(|m| {
            format!(
                "{}/{}",
                m["provider"].as_str().unwrap(),
                m["id"].as_str().unwrap()
            )
        })
        .collect();
    assert!(available.len() > 3);
    assert_eq!(seen["available"], json!(available));
    assert_eq!(seen["auth"], json!([true, false]));

    assert_eq!(seen["mockIds"], json!(["mock-model"]));
    let providers = seen["providers"].as_array().unwrap();
    for p in ["anthropic", "openai", "mock", "relay"] {
        assert!(
            providers.contains(&json!(p)),
            "{p} missing from {providers:?}"
        );
    }
    assert_eq!(seen["current"]["id"], "mock-model");
    assert_eq!(seen["current"]["baseUrl"], base_url_for(API, mock.port()));
    assert_eq!(seen["stable"], true);
}

/// `v` with every number as a float, as JavaScript holds them (`0.0` comes back as `0`).
fn as_js(v: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Number(n) => json!(n.as_f64()),
        Value::Array(a) => Value::Array(a.iter().map(as_js).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), as_js(v))).collect()),
        other => other.clone(),
    }
}
