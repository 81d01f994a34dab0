//! The `codemode` tool through the real binary: the mock model sends a script, and the tool
//! result the session records is what the script printed, its nested calls having gone through
//! the same tool path as direct calls.

use serde_json::json;

use crate::support::mock::{sse_tool_calls, MockServer, Reply};
use crate::support::pi::PiCommand;
use crate::support::session::tool_results;

const API: &str = "openai-completions";

/// Runs one `codemode` call with `code` (plus `extra` args for pi) and returns the text and
/// error flag of its tool result.
fn run_script(code: &str, setup: impl FnOnce(PiCommand) -> PiCommand) -> (String, bool) {
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("cm_1", "codemode", json!({ "code": code }))],
    )));
    mock.push(Reply::text(API, "done"));
    let cmd = setup(PiCommand::for_mock(API, &mock).args(["--tools", "+codemode", "-p", "go"]));
    let out = cmd.run();
    out.assert_code(0).assert_no_panic();
    let results = tool_results(cmd.agent_dir());
    assert_eq!(results.len(), 1, "{results:?}\nstderr: {}", out.stderr);
    let (id, text, is_error) = results.into_iter().next().unwrap();
    assert_eq!(id, "cm_1");
    (text, is_error)
}

#[test]
fn a_script_reads_runs_bash_and_returns_only_what_it_chose() {
    let code = r#"
const [a, b] = await Promise.all([tools.read({ path: "a.txt" }), tools.read({ path: "b.txt" })]);
const r = await tools.bash({ command: "echo out; exit 3" });
console.log("lines", a.split("\n").length);
text(a.trim() + "+" + b.trim());
return { code: r.exit_code, output: r.output.trim(), truncated: r.truncated };
"#;
    let (text, is_error) = run_script(code, |c| {
        c.write_file("a.txt", "alpha\n")
            .write_file("b.txt", "beta\n")
    });
    assert!(!is_error, "{text}");
    assert!(text.starts_with("Script completed\nWall time "), "{text}");
    assert!(
        text.ends_with(
            "==> text 1/2 <==\nalpha+beta\n==> text 2/2 <==\n{\"code\":3,\"output\":\"out\",\"truncated\":false}\n<console_output>\nlines 2\n</console_output>"
        ),
        "{text}"
    );
}

#[test]
fn five_tool_calls_under_promise_all_run_at_once() {
    // Each command waits until all five have started: run one after another they would
    // never finish (each gives up after ~20 s and the script reports which ones did).
    let code = r#"
const one = (i) => tools.bash({ command: `touch s${i}; for n in $(seq 200); do [ $(ls s* | wc -l) -ge 5 ] && exit 0; sleep 0.1; done; exit 9` });
const all = await Promise.all([1, 2, 3, 4, 5].map(one));
return all.map((r) => r.exit_code).join(",");
"#;
    let (text, is_error) = run_script(code, |c| c);
    assert!(!is_error, "{text}");
    assert!(text.ends_with("Output:\n0,0,0,0,0"), "{text}");
}

#[test]
fn an_exception_keeps_partial_output_and_names_the_calls_made() {
    let code =
        "text('before');\nawait tools.read({ path: 'a.txt' });\nthrow new TypeError('boom');";
    let (text, is_error) = run_script(code, |c| c.write_file("a.txt", "x"));
    assert!(is_error);
    assert!(text.starts_with("Script failed\n"), "{text}");
    assert!(
        text.contains("before\nScript error:\nTypeError: boom"),
        "{text}"
    );
    assert!(
        text.ends_with("Tool calls made before the failure (they are not undone): read (ok)"),
        "{text}"
    );
}

#[test]
fn a_failed_tool_call_rejects_with_the_tool_error() {
    let code = "try { await tools.read({ path: 'missing.txt' }); } catch (e) { return 'caught: ' + e.message; }";
    let (text, is_error) = run_script(code, |c| c);
    assert!(!is_error, "{text}");
    assert!(
        text.contains("caught: ") && text.contains("missing.txt"),
        "{text}"
    );
}

#[test]
fn a_runaway_loop_stops_at_its_deadline() {
    let code = "// @options: {\"timeout_ms\": 300}\nwhile (true) {}";
    let (text, is_error) = run_script(code, |c| c);
    assert!(is_error);
    assert!(
        text.contains("Script error:\nScript timed out: Execution timed out after 300 ms\n\nNo tool calls were made."),
        "{text}"
    );
}

#[test]
fn an_allocation_bomb_hits_the_memory_cap_and_pi_lives() {
    let code = "const a = []; while (true) a.push('x'.repeat(1 << 20) + a.length);";
    let (text, is_error) = run_script(code, |c| c);
    assert!(is_error);
    assert!(text.contains("out of memory"), "{text}");
}

#[test]
fn a_promise_that_can_never_settle_fails_at_once() {
    let (text, is_error) = run_script("await new Promise(() => {});", |c| c);
    assert!(is_error);
    assert!(
        text.contains("waiting on a promise that can never settle"),
        "{text}"
    );
}

#[test]
fn exit_ends_the_script_successfully() {
    let (text, is_error) = run_script("text('a'); try { exit(); } catch (e) {} text('b');", |c| c);
    assert!(!is_error, "{text}");
    assert!(text.ends_with("Output:\na"), "{text}");
}

#[test]
fn output_over_the_budget_is_cut_and_spilled_to_a_file() {
    let code = "// @options: {\"max_output_tokens\": 10}\nreturn 'a'.repeat(100) + 'END';";
    let (text, is_error) = run_script(code, |c| c);
    assert!(!is_error, "{text}");
    assert!(
        text.contains("Warning: truncated output (original token count: 26)"),
        "{text}"
    );
    let path = text
        .split("[Full output: ")
        .nth(1)
        .and_then(|r| r.split(" (read with").next())
        .expect("spill path");
    assert_eq!(
        std::fs::read_to_string(path).unwrap(),
        format!("{}END", "a".repeat(100))
    );
    let _ = std::fs::remove_file(path);
}

#[test]
fn discovery_globals_describe_and_find_tools() {
    let code = r#"
const found = await searchTools("read file contents", { limit: 1 });
const d = await describeTool("read");
return [ALL_TOOLS.map((t) => t.name).join(","), found[0].name, d.includes("codemode tool declaration:\n```ts\ndeclare const tools: { read(args: {")].join("|");
"#;
    let (text, is_error) = run_script(code, |c| c);
    assert!(!is_error, "{text}");
    assert!(text.ends_with("read,bash,edit,write|read|true"), "{text}");
}

#[test]
fn a_bad_options_line_fails_before_the_script_runs() {
    let (text, is_error) = run_script("text(1)\n// @options: {}", |c| c);
    assert!(is_error);
    assert_eq!(
        text,
        "The // @options: line must be the first line of the input; found one on line 2"
    );
}

#[test]
fn store_keeps_values_across_turns_as_session_entries_and_a_failed_script_writes_nothing() {
    let mock = MockServer::start();
    let call = |id: &str, code: &str| {
        Reply::sse(sse_tool_calls(
            API,
            &[(id, "codemode", json!({ "code": code }))],
        ))
    };
    mock.push(call("s1", "store('cursor', {page: 2}); store('gone', 1); store('gone', undefined); return load('cursor').page;"));
    mock.push(call(
        "s2",
        "store('cursor', 'never'); throw new Error('no');",
    ));
    mock.push(Reply::text(API, "stored"));
    mock.push(call(
        "s3",
        "return JSON.stringify([load('cursor'), load('gone')]);",
    ));
    mock.push(Reply::text(API, "loaded"));
    let cmd = PiCommand::for_mock(API, &mock).args(["--tools", "+codemode", "-p", "first"]);
    cmd.run().assert_code(0).assert_no_panic();
    cmd.again()
        .args([
            "--model",
            "mock/mock-model",
            "--tools",
            "+codemode",
            "-c",
            "-p",
            "second",
        ])
        .run()
        .assert_code(0)
        .assert_no_panic();
    let file = crate::support::session::the_session_file(cmd.agent_dir());
    let entries: Vec<serde_json::Value> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let stores: Vec<&serde_json::Value> = entries
        .iter()
        .filter(|e| e["type"] == "custom" && e["customType"] == "codemode-store")
        .collect();
    assert_eq!(stores.len(), 1, "{entries:#?}");
    assert_eq!(
        stores[0]["data"],
        json!({"set": {"cursor": {"page": 2}}, "delete": ["gone"]})
    );
    let results = tool_results(cmd.agent_dir());
    assert!(results[0].1.ends_with("Output:\n2"), "{results:?}");
    assert!(
        results[2].1.ends_with("Output:\n[{\"page\":2},null]"),
        "{results:?}"
    );
}

/// Abort stops a script spinning in a loop: with one worker allowed, the next script only
/// runs if the aborted one let its worker go.
#[test]
fn abort_interrupts_a_spinning_script_and_frees_its_worker() {
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("spin", "codemode", json!({ "code": "for (;;) {}" }))],
    )));
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("next", "codemode", json!({ "code": "return 'ran'" }))],
    )));
    mock.push(Reply::text(API, "ok"));
    let cmd = PiCommand::for_mock(API, &mock)
        .env("PI_CODEMODE_MAX_WORKERS", "1")
        .args(["--mode", "rpc", "--no-session", "--tools", "+codemode"]);
    let mut talk = cmd.converse();
    talk.send(r#"{"id":"p","type":"prompt","message":"spin"}"#);
    talk.expect("tool_execution_start", |v| {
        v["type"] == "tool_execution_start"
    });
    talk.send(r#"{"id":"a","type":"abort"}"#);
    let end = talk.expect("tool_execution_end", |v| v["type"] == "tool_execution_end");
    assert_eq!(end["isError"], true);
    let text = end["result"]["content"].to_string();
    assert!(
        text.contains("Script aborted: This operation was aborted")
            || text.contains("Operation aborted"),
        "{text}"
    );
    talk.expect("agent_end", |v| v["type"] == "agent_end");
    talk.send(r#"{"id":"p2","type":"prompt","message":"again"}"#);
    let end = talk.expect("second tool_execution_end", |v| {
        v["type"] == "tool_execution_end" && v["toolCallId"] == "next"
    });
    assert_eq!(end["isError"], false, "{end}");
    assert!(
        end["result"]["content"].to_string().contains("ran"),
        "{end}"
    );
    talk.expect("agent_end", |v| v["type"] == "agent_end");
    let (code, _, stderr) = talk.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

/// MCP tools with the default `codemode` exposure are not declared to the model, yet a script
/// calls them, and gets their call result.
#[test]
fn a_script_calls_an_mcp_tool_the_model_was_not_given() {
    use crate::support::mcp::{fake_entry, mcp_json};
    let code = r#"
const r = await tools.mcp__fake__echo({ text: "hi there" });
const bad = await tools.mcp__fake__fail({});
return [r.content[0].text, bad.isError === true].join("|");
"#;
    let (text, is_error) = run_script(code, |c| {
        c.write_agent_file(
            "mcp.json",
            &mcp_json(json!({"fake": fake_entry(json!({}))})),
        )
    });
    assert!(!is_error, "{text}");
    assert!(text.contains("Output:\n"), "{text}");
    assert!(text.contains("hi there|true"), "{text}");
}

/// `defaultTools: ["+codemode"]` turns the tool on, and nested calls are validated like
/// direct ones: a call with a missing argument rejects with the validation error.
#[test]
fn default_tools_setting_enables_codemode_and_nested_calls_are_validated() {
    let mock = MockServer::start();
    let code = "try { await tools.read({}); } catch (e) { return e.message; }";
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("v", "codemode", json!({ "code": code }))],
    )));
    mock.push(Reply::text(API, "done"));
    let cmd = PiCommand::for_mock(API, &mock)
        .write_agent_file("settings.json", r#"{"defaultTools": ["+codemode"]}"#)
        .args(["-p", "go"]);
    cmd.run().assert_code(0).assert_no_panic();
    assert!(mock.requests()[0].body_text().contains("\"codemode\""));
    let results = tool_results(cmd.agent_dir());
    assert!(!results[0].2, "{results:?}");
    assert!(
        results[0].1.contains("Validation failed for tool \"read\""),
        "{results:?}"
    );
}

/// A script has no way out but `tools.*`: no Node or QuickJS std/os globals, no timers, no
/// fetch, and a dynamic import finds no module loader.
#[test]
fn a_script_cannot_reach_files_network_or_processes() {
    let code = r#"
const kinds = [typeof require, typeof process, typeof std, typeof os, typeof setTimeout, typeof fetch, typeof XMLHttpRequest].join(",");
let imported = "no error";
try { await import("/etc/passwd"); imported = "imported"; } catch (e) { imported = "refused"; }
return kinds + "|" + imported;
"#;
    let (text, is_error) = run_script(code, |c| c);
    assert!(!is_error, "{text}");
    assert!(
        text.ends_with(
            "undefined,undefined,undefined,undefined,undefined,undefined,undefined|refused"
        ),
        "{text}"
    );
}

/// Unbounded recursion is a script error, not a crashed pi.
#[test]
fn deep_recursion_is_a_range_error() {
    let (text, is_error) = run_script(
        "function f(n) { return f(n + 1) + 1; }\nreturn f(0);",
        |c| c,
    );
    assert!(is_error);
    assert!(
        text.contains("RangeError: Maximum call stack size exceeded"),
        "{text}"
    );
}

#[test]
fn a_scripts_tool_calls_pass_the_approval_rules_as_direct_calls_do() {
    let code = r#"
const denied = await tools.bash({ command: "cd . && touch pushed" }).then((r) => "ran: " + JSON.stringify(r), (e) => "refused: " + e.message);
const allowed = await tools.bash({ command: "touch fine" });
return denied + " / " + allowed.exit_code;
"#;
    let mut cwd = None;
    let (text, is_error) = run_script(code, |c| {
        cwd = Some(c.cwd().to_path_buf());
        c.write_agent_file(
            "settings.json",
            r#"{"permissions": {"deny": ["bash(touch pushed*)"]}}"#,
        )
    });
    let cwd = cwd.unwrap();
    assert!(!is_error, "{text}");
    assert!(
        // A blocked call rejects, as pi 1.6.0's scripts see it.
        text.contains("refused: Not run: the approval rule \"bash(touch pushed*)\""),
        "{text}"
    );
    assert!(text.ends_with("/ 0"), "{text}");
    assert!(!cwd.join("pushed").exists(), "the denied command ran");
}

/// pi 1.6.0: a script's calls emit `tool_execution_*` events naming the script's call
/// (`parentToolCallId`, ids `<script id>/<n>`), the script streams its calls as partial results,
/// and its tool result message records them as `nestedCalls`.
#[test]
fn nested_calls_emit_events_with_their_parent_and_are_recorded_on_the_result() {
    let mock = MockServer::start();
    let code = "const a = await tools.read({ path: 'a.txt' });\nawait tools.read({ path: 'nope.txt' }).catch(() => 0);\nreturn a;";
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("cm_1", "codemode", json!({ "code": code }))],
    )));
    mock.push(Reply::text(API, "done"));
    let cmd = PiCommand::for_mock(API, &mock)
        .write_file("a.txt", "alpha\n")
        .args(["--tools", "+codemode", "--mode", "json", "go"]);
    let out = cmd.run();
    out.assert_code(0).assert_no_panic();
    let events = out.json_lines();
    let nested: Vec<_> = events
        .iter()
        .filter(|e| e.get("parentToolCallId").is_some())
        .map(|e| {
            (
                e["type"].as_str().unwrap().to_string(),
                e["toolCallId"].as_str().unwrap().to_string(),
                e["parentToolCallId"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let ev = |t: &str, id: &str| (t.to_string(), id.to_string(), "cm_1".to_string());
    assert_eq!(
        nested,
        vec![
            ev("tool_execution_start", "cm_1/1"),
            ev("tool_execution_end", "cm_1/1"),
            ev("tool_execution_start", "cm_1/2"),
            ev("tool_execution_end", "cm_1/2"),
        ],
        "{events:#?}"
    );
    // The script's own progress: its calls as they start and finish.
    let last_update = events
        .iter()
        .rfind(|e| e["type"] == "tool_execution_update" && e["toolCallId"] == "cm_1")
        .expect("a partial result of the script");
    let calls = &last_update["partialResult"]["details"]["calls"];
    assert_eq!(calls[0]["args"], "{\"path\":\"a.txt\"}", "{calls}");
    assert_eq!(calls[1]["status"], "error", "{calls}");
    // The session keeps the record on the script's result.
    let file = crate::support::session::the_session_file(cmd.agent_dir());
    let text = std::fs::read_to_string(file).unwrap();
    let result = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|e| e["message"]["role"] == "toolResult")
        .expect("the script's result");
    let record = &result["message"]["nestedCalls"];
    assert_eq!(record["complete"], true, "{record}");
    assert_eq!(record["calls"][0]["id"], "cm_1/1");
    assert_eq!(record["calls"][0]["arguments"], json!({"path": "a.txt"}));
    assert_eq!(record["calls"][1]["status"], "error");
    assert!(record["calls"][1]["error"]
        .as_str()
        .unwrap()
        .contains("nope.txt"));
}

/// The tools one request declared: `(name, description)`.
fn declared_tools(settings: &str) -> Vec<(String, String)> {
    let mock = MockServer::start();
    mock.push(Reply::text(API, "hi"));
    let cmd = PiCommand::for_mock(API, &mock)
        .write_agent_file("settings.json", settings)
        .args(["--tools", "+codemode", "-p", "go"]);
    cmd.run().assert_code(0).assert_no_panic();
    let body = mock.requests().remove(0).body;
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["function"]["name"].as_str().unwrap().to_string(),
                t["function"]["description"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// `codemode.mode`, as pi 1.6.0 presents tools: `on` keeps them declared and says how scripts
/// call them; `only` leaves them out of the request and lists their declarations in the
/// `codemode` description, within `codemode.inlineBudget`.
#[test]
fn codemode_mode_and_inline_budget_decide_how_the_other_tools_are_presented() {
    let on = declared_tools("{}");
    let names: Vec<&str> = on.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["read", "bash", "edit", "write", "codemode"]);
    assert!(
        on[1].1.ends_with("\n\nCodemode: `tools.bash(args)` resolves to `{ output, truncated, full_output_path?, exit_code, wall_time_seconds }`."),
        "{}",
        on[1].1
    );
    assert!(on[2]
        .1
        .ends_with("Codemode: `tools.edit(args)` resolves to a string."));
    assert!(!on[4].1.contains("Nested tools:"), "{}", on[4].1);

    let only = declared_tools(r#"{"codemode": {"mode": "only"}}"#);
    assert_eq!(only.len(), 1, "{only:?}");
    let description = &only[0].1;
    assert!(
        description.contains("\n\nNested tools:\n\n### `read`\n"),
        "{description}"
    );
    assert!(
        description.contains("declare const tools: { bash(args: {"),
        "{description}"
    );

    let none = declared_tools(r#"{"codemode": {"mode": "only", "inlineBudget": 0}}"#);
    assert_eq!(none.len(), 1);
    assert!(none[0].1.ends_with("\n\nNested tools:"), "{}", none[0].1);
}
