//! `--mode rpc`: pi's JSON-lines protocol — response shapes, errors for garbage and unknown
//! commands, a prompt's events, queueing while streaming, abort, and exit at stdin EOF.

use crate::support::{MockServer, PiCommand, Reply};

const API: &str = "openai-completions";

fn lines(stdin: &[&str]) -> String {
    let mut s = stdin.join("\n");
    s.push('\n');
    s
}

fn responses(out: &[serde_json::Value]) -> Vec<&serde_json::Value> {
    out.iter().filter(|v| v["type"] == "response").collect()
}

#[test]
fn queries_answer_with_pis_shapes_and_bad_lines_are_errors() {
    let mock = MockServer::start();
    let out = PiCommand::for_mock(API, &mock)
        .args(["--mode", "rpc", "--no-session"])
        .stdin(lines(&[
            r#"{"id":"1","type":"get_state"}"#,
            r#"{"id":"x","type":"bogus"}"#,
            "garbage",
            r#"{"id":"2","type":"get_messages"}"#,
            r#"{"id":"3","type":"get_last_assistant_text"}"#,
            r#"{"id":"4","type":"set_session_name","name":"  "}"#,
            r#"{"id":"5","type":"get_session_stats"}"#,
            r#"{"id":"6","type":"set_steering_mode","mode":"all"}"#,
            r#"{"id":"7","type":"get_state"}"#,
        ]))
        .run();
    out.assert_code(0).assert_no_panic();
    let all = out.json_lines();
    let r = responses(&all);
    assert_eq!(r.len(), 9, "{}", out.stdout);
    let state = &r[0]["data"];
    assert_eq!(r[0]["id"], "1");
    assert_eq!(state["model"]["id"], "mock-model");
    assert_eq!(state["isStreaming"], false);
    assert_eq!(state["steeringMode"], "one-at-a-time");
    assert_eq!(state["messageCount"], 0);
    let unknown = r.iter().find(|v| v["command"] == "bogus").unwrap();
    assert_eq!(unknown["error"], "Unknown command: bogus");
    assert_eq!(
        unknown["id"], "x",
        "the id is echoed, so a client waiting on it gets its answer"
    );
    let parse = r.iter().find(|v| v["command"] == "parse").unwrap();
    assert!(parse["error"]
        .as_str()
        .unwrap()
        .starts_with("Failed to parse command: "));
    let by_id = |id: &str| r.iter().find(|v| v["id"] == id).unwrap();
    assert_eq!(by_id("2")["data"]["messages"], serde_json::json!([]));
    assert_eq!(by_id("3")["data"], serde_json::json!({}));
    assert_eq!(by_id("4")["error"], "Session name cannot be empty");
    assert_eq!(by_id("5")["data"]["totalMessages"], 0);
    assert!(by_id("6").get("data").is_none() && by_id("6")["success"] == true);
    assert_eq!(by_id("7")["data"]["steeringMode"], "all");
}

#[test]
fn a_prompt_is_acknowledged_then_streams_events_and_the_state_follows() {
    let mock = MockServer::with_replies([Reply::text(API, "rpc answer")]);
    let out = PiCommand::for_mock(API, &mock)
        .args(["--mode", "rpc", "--no-session"])
        .stdin(lines(&[r#"{"id":"p","type":"prompt","message":"hello"}"#]))
        .run();
    out.assert_code(0).assert_no_panic();
    let all = out.json_lines();
    assert_eq!(all[0]["type"], "response");
    assert_eq!(all[0]["command"], "prompt");
    assert_eq!(all[0]["success"], true);
    assert_eq!(
        all[0]["data"],
        serde_json::json!({"disposition": "started"})
    );
    let types: Vec<&str> = all.iter().map(|v| v["type"].as_str().unwrap()).collect();
    assert_eq!(types[1], "agent_start");
    assert_eq!(&types[types.len() - 2..], ["agent_end", "agent_settled"]);
    let update = all.iter().find(|v| v["type"] == "message_update").unwrap();
    assert!(update["usage"].is_object(), "{update}");
    assert!(update.get("message").is_none(), "{update}");
}

#[test]
fn prompt_while_streaming_needs_a_streaming_behavior_and_steer_is_queued() {
    let mock = MockServer::with_replies([
        Reply::text(API, "a slow first answer that takes a while").chunk_delay(60),
        Reply::text(API, "saw the steering"),
    ]);
    let out = PiCommand::for_mock(API, &mock)
        .args(["--mode", "rpc", "--no-session"])
        .stdin(lines(&[
            r#"{"id":"a","type":"prompt","message":"first"}"#,
            r#"{"id":"b","type":"prompt","message":"second"}"#,
            r#"{"id":"c","type":"prompt","message":"steer this","streamingBehavior":"steer"}"#,
        ]))
        .run();
    out.assert_code(0).assert_no_panic();
    let all = out.json_lines();
    let r = responses(&all);
    let b = r.iter().find(|v| v["id"] == "b").unwrap();
    assert_eq!(b["success"], false);
    assert!(b["error"]
        .as_str()
        .unwrap()
        .starts_with("Agent is already processing."));
    let c = r.iter().find(|v| v["id"] == "c").unwrap();
    assert_eq!(c["success"], true);
    let q = all.iter().find(|v| v["type"] == "queue_update").unwrap();
    assert_eq!(q["steering"], serde_json::json!(["steer this"]));
    // Depending on timing the steering joins the first request (queued before the model was
    // called) or gets a turn of its own; either way the model sees it.
    assert!(mock
        .requests()
        .iter()
        .any(|r| r.body_text().contains("steer this")));
}

#[test]
fn abort_ends_a_stalled_run_and_answers_after_it() {
    let mock =
        MockServer::with_replies([Reply::text(API, "never finishes").stall_after(2, 20_000)]);
    let out = PiCommand::for_mock(API, &mock)
        .args(["--mode", "rpc", "--no-session"])
        .stdin(lines(&[
            r#"{"id":"p","type":"prompt","message":"go"}"#,
            r#"{"id":"x","type":"abort"}"#,
            r#"{"id":"s","type":"get_state"}"#,
        ]))
        .run();
    out.assert_code(0).assert_no_panic();
    assert!(
        out.elapsed < std::time::Duration::from_secs(5),
        "{:?}",
        out.elapsed
    );
    let all = out.json_lines();
    let pos = |pred: &dyn Fn(&serde_json::Value) -> bool| all.iter().position(pred).unwrap();
    let end = pos(&|v| v["type"] == "agent_end");
    let abort = pos(&|v| v["id"] == "x");
    assert!(end < abort, "abort answers once the run has ended");
    let last = all[end]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["stopReason"], "aborted");
    assert_eq!(all[pos(&|v| v["id"] == "s")]["data"]["isStreaming"], false);
}

#[test]
fn without_a_key_the_server_starts_and_prompt_fails_preflight() {
    let out = PiCommand::new()
        .env("PI_LOCAL_SERVER_PORTS", "1")
        .args(["--mode", "rpc", "--no-session"])
        .stdin(lines(&[
            r#"{"id":"s","type":"get_state"}"#,
            r#"{"id":"p","type":"prompt","message":"hi"}"#,
        ]))
        .run();
    out.assert_code(0).assert_no_panic();
    let all = out.json_lines();
    assert!(all[0]["data"].get("model").is_none());
    assert_eq!(all[1]["success"], false);
    assert!(all[1]["error"]
        .as_str()
        .unwrap()
        .starts_with("No API key found"));
}

/// A two-exchange session written in print mode; returns the command (for `again`) and its
/// file.
fn two_exchange_session(mock: &MockServer) -> (PiCommand, std::path::PathBuf) {
    let first = PiCommand::for_mock(API, mock).args(["-p", "first question"]);
    first.run().assert_code(0);
    first
        .again()
        .args(["--model", "mock/mock-model", "-c", "-p", "second question"])
        .run()
        .assert_code(0);
    let mut files = Vec::new();
    for d in std::fs::read_dir(first.agent_dir().join("sessions")).unwrap() {
        for f in std::fs::read_dir(d.unwrap().path()).unwrap() {
            files.push(f.unwrap().path());
        }
    }
    assert_eq!(files.len(), 1, "{files:?}");
    (first, files.remove(0))
}

fn rpc_on(cmd: &PiCommand, file: &std::path::Path, stdin: &[&str]) -> Vec<serde_json::Value> {
    let out = cmd
        .again()
        .args(["--model", "mock/mock-model", "--mode", "rpc", "--session"])
        .arg(file.to_string_lossy())
        .stdin(lines(stdin))
        .run();
    out.assert_code(0).assert_no_panic();
    out.json_lines()
}

fn by_id<'a>(all: &'a [serde_json::Value], id: &str) -> &'a serde_json::Value {
    all.iter()
        .find(|v| v["type"] == "response" && v["id"] == id)
        .unwrap_or_else(|| panic!("no response {id}: {all:?}"))
}

fn roles(v: &serde_json::Value) -> Vec<String> {
    v["data"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn new_session_starts_empty_with_a_new_id() {
    let mock = MockServer::with_replies([Reply::text(API, "a1"), Reply::text(API, "a2")]);
    let (cmd, file) = two_exchange_session(&mock);
    let all = rpc_on(
        &cmd,
        &file,
        &[
            r#"{"id":"s0","type":"get_state"}"#,
            r#"{"id":"n","type":"new_session"}"#,
            r#"{"id":"m","type":"get_messages"}"#,
            r#"{"id":"s1","type":"get_state"}"#,
        ],
    );
    assert_eq!(
        by_id(&all, "n")["data"],
        serde_json::json!({"cancelled": false})
    );
    assert_eq!(by_id(&all, "m")["data"]["messages"], serde_json::json!([]));
    let (s0, s1) = (&by_id(&all, "s0")["data"], &by_id(&all, "s1")["data"]);
    // Two exchanges and the prompt checkpoint the first prompt wrote, as pi 1.x counts them.
    assert_eq!(s0["messageCount"], 5);
    assert_eq!(s1["messageCount"], 0);
    assert_ne!(s0["sessionId"], s1["sessionId"]);
    assert_ne!(s0["sessionFile"], s1["sessionFile"]);
    assert_eq!(s1["model"]["id"], "mock-model");
    // Events: none besides the responses, as in pi.
    assert!(all.iter().all(|v| v["type"] == "response"), "{all:?}");
}

#[test]
fn fork_keeps_what_came_before_the_chosen_user_message() {
    let mock = MockServer::with_replies([Reply::text(API, "a1"), Reply::text(API, "a2")]);
    let (cmd, file) = two_exchange_session(&mock);
    let all = rpc_on(&cmd, &file, &[r#"{"id":"f","type":"get_fork_messages"}"#]);
    let forks = by_id(&all, "f")["data"]["messages"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(forks.len(), 2);
    assert_eq!(forks[0]["text"], "first question");
    let first_id = forks[0]["entryId"].as_str().unwrap();
    let second_id = forks[1]["entryId"].as_str().unwrap();

    let at_second = format!(r#"{{"id":"k","type":"fork","entryId":"{second_id}"}}"#);
    let at_first = format!(r#"{{"id":"k2","type":"fork","entryId":"{first_id}"}}"#);
    let all = rpc_on(
        &cmd,
        &file,
        &[
            &at_second,
            r#"{"id":"m","type":"get_messages"}"#,
            r#"{"id":"s","type":"get_state"}"#,
            r#"{"id":"bad","type":"fork","entryId":"nope"}"#,
        ],
    );
    let k = by_id(&all, "k");
    assert_eq!(
        k["data"],
        serde_json::json!({"text": "second question", "cancelled": false})
    );
    // The prompt checkpoint written before the first question comes along.
    assert_eq!(roles(by_id(&all, "m")), ["system", "user", "assistant"]);
    assert_eq!(
        by_id(&all, "m")["data"]["messages"][1]["content"][0]["text"],
        "first question"
    );
    let forked = by_id(&all, "s")["data"]["sessionFile"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(forked, file.to_string_lossy());
    let head: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&forked)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(head["parentSession"], file.to_string_lossy().as_ref());
    assert_eq!(by_id(&all, "bad")["error"], "Invalid entry ID for forking");

    let all = rpc_on(
        &cmd,
        &file,
        &[&at_first, r#"{"id":"m","type":"get_messages"}"#],
    );
    assert_eq!(by_id(&all, "k2")["data"]["text"], "first question");
    // Only the prompt checkpoint came before the first question.
    assert_eq!(roles(by_id(&all, "m")), ["system"]);
}

#[test]
fn clone_copies_the_branch_and_switch_session_goes_back() {
    let mock = MockServer::with_replies([Reply::text(API, "a1"), Reply::text(API, "a2")]);
    let (cmd, file) = two_exchange_session(&mock);
    let back = format!(
        r#"{{"id":"w","type":"switch_session","sessionPath":{}}}"#,
        serde_json::Value::from(file.to_string_lossy().as_ref())
    );
    let all = rpc_on(
        &cmd,
        &file,
        &[
            r#"{"id":"c","type":"clone"}"#,
            r#"{"id":"s1","type":"get_state"}"#,
            r#"{"id":"n","type":"new_session"}"#,
            r#"{"id":"m0","type":"get_messages"}"#,
            &back,
            r#"{"id":"m","type":"get_messages"}"#,
            r#"{"id":"s2","type":"get_state"}"#,
        ],
    );
    assert_eq!(
        by_id(&all, "c")["data"],
        serde_json::json!({"cancelled": false})
    );
    let cloned = by_id(&all, "s1")["data"]["sessionFile"].as_str().unwrap();
    assert_ne!(cloned, file.to_string_lossy());
    // Two exchanges plus the prompt checkpoint (pi 1.x counts it).
    assert_eq!(by_id(&all, "s1")["data"]["messageCount"], 5);
    assert!(
        std::path::Path::new(cloned).exists(),
        "a clone with replies is written at once"
    );
    assert_eq!(by_id(&all, "m0")["data"]["messages"], serde_json::json!([]));
    assert_eq!(
        by_id(&all, "w")["data"],
        serde_json::json!({"cancelled": false})
    );
    assert_eq!(
        roles(by_id(&all, "m")),
        ["system", "user", "assistant", "user", "assistant"]
    );
    assert_eq!(
        by_id(&all, "s2")["data"]["sessionFile"],
        file.to_string_lossy().as_ref()
    );
}

#[test]
fn clone_without_entries_is_an_error_and_switch_to_a_new_path_starts_there() {
    // Without a model nothing is recorded, so the session has no current entry.
    let cmd = PiCommand::new().env("PI_LOCAL_SERVER_PORTS", "1");
    let target = cmd.cwd().join("fresh.jsonl");
    let switch = format!(
        r#"{{"id":"w","type":"switch_session","sessionPath":{}}}"#,
        serde_json::Value::from(target.to_string_lossy().as_ref())
    );
    let out = cmd
        .args(["--mode", "rpc", "--no-session"])
        .stdin(lines(&[
            r#"{"id":"c","type":"clone"}"#,
            &switch,
            r#"{"id":"s","type":"get_state"}"#,
        ]))
        .run();
    out.assert_code(0).assert_no_panic();
    let all = out.json_lines();
    assert_eq!(
        by_id(&all, "c")["error"],
        "Cannot clone session: no current entry selected"
    );
    assert_eq!(
        by_id(&all, "w")["data"],
        serde_json::json!({"cancelled": false})
    );
    assert_eq!(
        by_id(&all, "s")["data"]["sessionFile"],
        target.to_string_lossy().as_ref()
    );
}

#[test]
fn bash_answers_with_clean_output_and_reaches_the_next_prompt() {
    let mock = MockServer::with_replies([Reply::text(API, "seen")]);
    let out = PiCommand::for_mock(API, &mock)
        .args(["--mode", "rpc", "--no-session"])
        .stdin(lines(&[
            r#"{"id":"b1","type":"bash","command":"echo hi; printf '\\033[31mred\\033[0m\\r\\n'"}"#,
            r#"{"id":"b2","type":"bash","command":"echo oops >&2; exit 3"}"#,
            r#"{"id":"m","type":"get_messages"}"#,
            r#"{"id":"c","type":"cycle_model"}"#,
            r#"{"id":"p","type":"prompt","message":"what happened?"}"#,
        ]))
        .run();
    out.assert_code(0).assert_no_panic();
    let all = out.json_lines();
    let r = responses(&all);
    let by_id = |id: &str| *r.iter().find(|v| v["id"] == id).unwrap();
    let b1 = by_id("b1");
    assert_eq!(b1["success"], true, "{}", out.stdout);
    assert_eq!(
        b1["data"],
        serde_json::json!({"output": "hi\nred\n", "exitCode": 0, "cancelled": false, "truncated": false})
    );
    let b2 = &by_id("b2")["data"];
    assert_eq!(b2["exitCode"], 3);
    assert_eq!(b2["output"], "oops\n");
    assert!(
        !all.iter()
            .any(|v| v["type"] == "message_start" && v["message"]["role"] == "bashExecution"),
        "bash emits no events"
    );
    // Both runs are in the agent's context, as the user messages pi's convertToLlm makes.
    assert_eq!(by_id("m")["data"]["messages"].as_array().unwrap().len(), 2);
    // Only one model is available: nothing to cycle to.
    assert_eq!(by_id("c")["success"], true);
    assert!(by_id("c")["data"].is_null());
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 1);
    let body = reqs[0].body_text();
    assert!(body.contains("Ran `echo hi;"), "{body}");
    assert!(body.contains(r"hi\nred"), "{body}");
    assert!(body.contains("Command exited with code 3"), "{body}");
}

#[test]
fn abort_bash_cancels_a_running_command_quickly() {
    let mock = MockServer::start();
    let out = PiCommand::for_mock(API, &mock)
        .args(["--mode", "rpc", "--no-session"])
        .stdin(lines(&[
            r#"{"id":"b","type":"bash","command":"echo started; sleep 5"}"#,
            r#"{"id":"x","type":"abort_bash"}"#,
        ]))
        .run();
    out.assert_code(0).assert_no_panic();
    assert!(
        out.elapsed < std::time::Duration::from_secs(3),
        "{:?}",
        out.elapsed
    );
    let all = out.json_lines();
    let r = responses(&all);
    let x = r.iter().position(|v| v["id"] == "x").unwrap();
    let b = r.iter().position(|v| v["id"] == "b").unwrap();
    assert!(
        x < b,
        "abort_bash answers at once; bash when the command ends"
    );
    assert_eq!(r[x]["success"], true);
    assert_eq!(r[b]["data"]["cancelled"], true);
    assert!(r[b]["data"].get("exitCode").is_none(), "{}", r[b]);
}

#[test]
fn cycle_model_moves_to_the_next_available_model_and_wraps() {
    let mock = MockServer::start();
    let mut models: serde_json::Value =
        serde_json::from_str(&crate::support::models_json_for(API, mock.port())).unwrap();
    models["providers"]["mock"]["models"] =
        serde_json::json!([{"id": "mock-model"}, {"id": "mock-two"}]);
    let out = PiCommand::for_mock(API, &mock)
        .write_agent_file("models.json", &models.to_string())
        .args(["--mode", "rpc", "--no-session"])
        .stdin(lines(&[
            r#"{"id":"1","type":"cycle_model"}"#,
            r#"{"id":"s","type":"get_state"}"#,
            r#"{"id":"2","type":"cycle_model"}"#,
        ]))
        .run();
    out.assert_code(0).assert_no_panic();
    let all = out.json_lines();
    let r = responses(&all);
    let by_id = |id: &str| *r.iter().find(|v| v["id"] == id).unwrap();
    let first = &by_id("1")["data"];
    assert_eq!(first["model"]["id"], "mock-two", "{}", out.stdout);
    assert_eq!(first["isScoped"], false);
    assert!(first["thinkingLevel"].is_string());
    assert_eq!(by_id("s")["data"]["model"]["id"], "mock-two");
    assert_eq!(by_id("2")["data"]["model"]["id"], "mock-model");
}

#[test]
fn bash_keeps_the_tail_of_long_output_and_points_to_the_full_file() {
    let mock = MockServer::start();
    let out = PiCommand::for_mock(API, &mock)
        .args(["--mode", "rpc", "--no-session"])
        .stdin(lines(&[
            r#"{"id":"b","type":"bash","command":"seq 1 3000"}"#,
        ]))
        .run();
    out.assert_code(0).assert_no_panic();
    let all = out.json_lines();
    let data = &responses(&all)[0]["data"];
    assert_eq!(data["truncated"], true, "{}", out.stdout);
    assert_eq!(data["exitCode"], 0);
    let output = data["output"].as_str().unwrap();
    // pi 1.x counts 3000 lines (the final newline ends the last one) and keeps the last 2000.
    assert!(
        output.starts_with("1001\n") && output.ends_with("\n3000"),
        "{output:.40}"
    );
    let path = data["fullOutputPath"].as_str().unwrap();
    let full = std::fs::read_to_string(path).unwrap();
    assert!(full.starts_with("1\n2\n"));
    let _ = std::fs::remove_file(path);
}

fn three_models(mock: &MockServer) -> String {
    let mut models: serde_json::Value =
        serde_json::from_str(&crate::support::models_json_for(API, mock.port())).unwrap();
    models["providers"]["mock"]["models"] = serde_json::json!([
        {"id": "mock-model"},
        {"id": "mock-two", "reasoning": true},
        {"id": "mock-three", "reasoning": true}
    ]);
    models.to_string()
}

#[test]
fn models_scope_picks_the_start_model_and_cycling_stays_inside_it() {
    let mock = MockServer::start();
    let out = PiCommand::new()
        .write_agent_file("models.json", &three_models(&mock))
        .args([
            "--mode",
            "rpc",
            "--no-session",
            "--models",
            "mock/mock-t*:high,mock-three",
        ])
        .stdin(lines(&[
            r#"{"id":"s","type":"get_state"}"#,
            r#"{"id":"1","type":"cycle_model"}"#,
            r#"{"id":"2","type":"cycle_model"}"#,
        ]))
        .run();
    out.assert_code(0).assert_no_panic();
    let all = out.json_lines();
    let r = responses(&all);
    let by_id = |id: &str| *r.iter().find(|v| v["id"] == id).unwrap();
    // The glob matches mock-two and mock-three (in catalog order), with thinking high.
    assert_eq!(
        by_id("s")["data"]["model"]["id"],
        "mock-two",
        "{}",
        out.stdout
    );
    assert_eq!(by_id("s")["data"]["thinkingLevel"], "high");
    assert_eq!(by_id("1")["data"]["model"]["id"], "mock-three");
    assert_eq!(by_id("1")["data"]["isScoped"], true);
    assert_eq!(by_id("2")["data"]["model"]["id"], "mock-two");
}

/// Queue modes and toggles are saved in the global settings; model and thinking-level changes
/// a client makes last for the session only, as in pi 1.x (0.84.3; 0.73.1 saved them too).
#[test]
fn mode_changes_are_remembered_and_model_changes_last_for_the_session() {
    let mock = MockServer::start();
    let cmd = PiCommand::new()
        .write_agent_file("models.json", &three_models(&mock))
        .write_agent_file(
            "settings.json",
            r#"{"theme": "light", "custom": {"keep": 1}}"#,
        );
    let out = cmd
        .again()
        .args(["--mode", "rpc", "--no-session"])
        .stdin(lines(&[
            r#"{"id":"1","type":"set_model","provider":"mock","modelId":"mock-three"}"#,
            r#"{"id":"2","type":"set_thinking_level","level":"low"}"#,
            r#"{"id":"3","type":"set_steering_mode","mode":"all"}"#,
            r#"{"id":"4","type":"set_follow_up_mode","mode":"all"}"#,
            r#"{"id":"5","type":"set_auto_retry","enabled":false}"#,
            r#"{"id":"6","type":"set_auto_compaction","enabled":false}"#,
        ]))
        .run();
    out.assert_code(0).assert_no_panic();
    let all = out.json_lines();
    assert!(
        responses(&all).iter().all(|r| r["success"] == true),
        "{}",
        out.stdout
    );
    let text = std::fs::read_to_string(cmd.agent_dir().join("settings.json")).unwrap();
    let saved: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        saved,
        serde_json::json!({"theme": "light", "custom": {"keep": 1},
            "steeringMode": "all", "followUpMode": "all",
            "retry": {"enabled": false}, "compaction": {"enabled": false}})
    );
    assert!(!cmd.agent_dir().join("settings.json.lock").exists());
    // The next start picks the remembered modes up, not the model or level.
    let out = cmd
        .again()
        .args(["--mode", "rpc", "--no-session"])
        .stdin(lines(&[r#"{"id":"s","type":"get_state"}"#]))
        .run();
    let all = out.json_lines();
    let state = &responses(&all)[0]["data"];
    assert_ne!(state["model"]["id"], "mock-three", "{}", out.stdout);
    assert_ne!(state["thinkingLevel"], "low");
    assert_eq!(state["steeringMode"], "all");
    assert_eq!(state["followUpMode"], "all");
    assert_eq!(state["autoCompactionEnabled"], false);
}

/// A client that sends its next prompt the moment it reads `agent_end` is served, not told
/// the agent is still processing (the run hands the session back right after that event).
#[test]
fn a_prompt_right_after_agent_end_is_accepted() {
    let mock = MockServer::with_replies((0..6).map(|i| Reply::text(API, &format!("reply {i}"))));
    let mut talk = PiCommand::for_mock(API, &mock)
        .args(["--mode", "rpc", "--no-session"])
        .converse();
    for i in 0..6 {
        talk.send(&format!(
            r#"{{"id":"p{i}","type":"prompt","message":"hi {i}"}}"#
        ));
        let ack = talk.expect("prompt response", |v| v["id"] == format!("p{i}"));
        assert_eq!(ack["success"], true, "prompt {i}: {ack}");
        talk.expect("agent_end", |v| v["type"] == "agent_end");
    }
    let (code, _, stderr) = talk.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(mock.requests().len(), 6);
}

/// A tool stuck in the kernel (grep opening a FIFO nobody writes to) does not hold the server:
/// `abort` ends the run with the call as an aborted result and is answered, and so is the next
/// command.
#[test]
fn abort_answers_while_a_tool_is_stuck_in_the_kernel() {
    let mock = MockServer::with_replies([Reply::sse(crate::support::mock::sse_tool_calls(
        API,
        &[(
            "call_1",
            "grep",
            serde_json::json!({"pattern": "x", "path": "pipe"}),
        )],
    ))]);
    let cmd =
        PiCommand::for_mock(API, &mock).args(["--mode", "rpc", "--no-session", "--tools", "grep"]);
    let fifo = cmd.cwd().join("pipe");
    let c = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let mut talk = cmd.converse();
    talk.send(r#"{"id":"p","type":"prompt","message":"search the pipe"}"#);
    talk.expect("tool_execution_start", |v| {
        v["type"] == "tool_execution_start"
    });
    talk.send(r#"{"id":"a","type":"abort"}"#);
    let end = talk.expect("tool_execution_end", |v| v["type"] == "tool_execution_end");
    assert_eq!(end["isError"], true, "{end}");
    assert_eq!(end["result"]["content"][0]["text"], "Operation aborted");
    talk.expect("agent_end", |v| v["type"] == "agent_end");
    talk.expect("abort response", |v| v["id"] == "a");
    talk.send(r#"{"id":"s","type":"get_state"}"#);
    let state = talk.expect("get_state response", |v| v["id"] == "s");
    assert_eq!(state["data"]["isStreaming"], false);
    let (code, _, stderr) = talk.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

fn roles_of(v: &serde_json::Value) -> Vec<String> {
    roles(v)
}

/// `get_messages` returns pi's AgentMessages: an RPC `bash` run is a `bashExecution`, a
/// compaction a `compactionSummary` — after the commands and in a loaded session — not the
/// user messages they become for the model.
#[test]
fn get_messages_keeps_bash_runs_and_compaction_summaries_as_they_are() {
    let mock = MockServer::with_replies([
        Reply::text(API, "a1"),
        Reply::text(API, "a2"),
        Reply::text(API, "## Goal\nSUMMARY"),
    ]);
    let (cmd, file) = two_exchange_session(&mock);
    let cmd = cmd
        .again()
        .write_agent_file("settings.json", r#"{"compaction":{"keepRecentTokens":1}}"#);
    let all = rpc_on(
        &cmd,
        &file,
        &[
            r#"{"id":"b","type":"bash","command":"echo hi"}"#,
            r#"{"id":"m1","type":"get_messages"}"#,
            r#"{"id":"c","type":"compact"}"#,
            r#"{"id":"m2","type":"get_messages"}"#,
            r#"{"id":"s","type":"get_state"}"#,
        ],
    );
    assert_eq!(
        roles_of(by_id(&all, "m1")),
        [
            "system",
            "user",
            "assistant",
            "user",
            "assistant",
            "bashExecution"
        ]
    );
    let bash = &by_id(&all, "m1")["data"]["messages"][5];
    assert_eq!(bash["command"], "echo hi");
    assert_eq!(bash["output"], "hi\n");
    assert_eq!(by_id(&all, "c")["success"], true, "{all:?}");
    let result = &by_id(&all, "c")["data"];
    let keys: Vec<&String> = result.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "summary",
            "firstKeptEntryId",
            "tokensBefore",
            "estimatedTokensAfter",
            "usage",
            "details"
        ]
    );
    assert!(result["estimatedTokensAfter"]
        .as_u64()
        .is_some_and(|t| t > 0));
    let after = roles_of(by_id(&all, "m2"));
    // The compaction's prompt checkpoint, then its summary (pi 1.x).
    assert_eq!(after[..2], ["system", "compactionSummary"], "{after:?}");
    assert_eq!(
        by_id(&all, "m2")["data"]["messages"][1]["summary"],
        "## Goal\nSUMMARY"
    );
    assert!(after.contains(&"bashExecution".to_string()), "{after:?}");
    // The same after loading the session afresh.
    let all = rpc_on(&cmd, &file, &[r#"{"id":"m3","type":"get_messages"}"#]);
    assert_eq!(roles_of(by_id(&all, "m3")), after);
}

#[test]
fn session_info_changed_carries_the_new_name() {
    let mock = MockServer::start();
    let out = PiCommand::for_mock(API, &mock)
        .args(["--mode", "rpc", "--no-session"])
        .stdin(lines(&[
            r#"{"id":"n","type":"set_session_name","name":"  My feature "}"#,
            r#"{"id":"s","type":"get_state"}"#,
        ]))
        .run();
    out.assert_code(0).assert_no_panic();
    let all = out.json_lines();
    let changed = all
        .iter()
        .find(|v| v["type"] == "session_info_changed")
        .unwrap();
    assert_eq!(changed["name"], "My feature");
    assert_eq!(by_id(&all, "s")["data"]["sessionName"], "My feature");
}

/// A text block cut by abort ends with `text_end` before the aborted `message_end`.
#[test]
fn abort_ends_the_open_text_block_before_the_message() {
    let mock =
        MockServer::with_replies([Reply::text(API, "never finishes").stall_after(2, 20_000)]);
    let mut talk = PiCommand::for_mock(API, &mock)
        .args(["--mode", "rpc", "--no-session"])
        .converse();
    talk.send(r#"{"id":"p","type":"prompt","message":"go"}"#);
    talk.expect("text_delta", |v| {
        v["assistantMessageEvent"]["type"] == "text_delta"
    });
    talk.send(r#"{"id":"a","type":"abort"}"#);
    let text_end = talk.expect("text_end or message_end", |v| {
        v["assistantMessageEvent"]["type"] == "text_end" || v["type"] == "message_end"
    });
    assert_eq!(
        text_end["assistantMessageEvent"]["type"], "text_end",
        "{text_end}"
    );
    let end = talk.expect("message_end", |v| v["type"] == "message_end");
    assert_eq!(end["message"]["stopReason"], "aborted");
    assert_eq!(
        text_end["assistantMessageEvent"]["content"],
        end["message"]["content"][0]["text"]
    );
    talk.expect("abort response", |v| v["id"] == "a");
    let (code, _, stderr) = talk.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

/// A steering message delivered to the model leaves the queue, and the client hears of it
/// (before the message starts), so it stops showing it as pending.
#[test]
fn queue_update_reports_the_queue_emptied_by_delivery() {
    let mock = MockServer::with_replies([
        Reply::sse(crate::support::mock::sse_tool_calls(
            API,
            &[(
                "call_1",
                "bash",
                serde_json::json!({"command": "sleep 0.3"}),
            )],
        )),
        Reply::text(API, "changed course"),
    ]);
    let mut talk = PiCommand::for_mock(API, &mock)
        .args(["--mode", "rpc", "--no-session"])
        .converse();
    talk.send(r#"{"id":"p","type":"prompt","message":"go"}"#);
    talk.expect("tool_execution_start", |v| {
        v["type"] == "tool_execution_start"
    });
    talk.send(r#"{"id":"s","type":"steer","message":"change course"}"#);
    let queued = talk.expect("queue_update", |v| v["type"] == "queue_update");
    assert_eq!(queued["steering"], serde_json::json!(["change course"]));
    let emptied = talk.expect("queue_update", |v| v["type"] == "queue_update");
    assert_eq!(emptied["steering"], serde_json::json!([]));
    assert_eq!(emptied["followUp"], serde_json::json!([]));
    let next = talk.expect("message_start", |v| v["type"] == "message_start");
    assert_eq!(next["message"]["content"][0]["text"], "change course");
    talk.expect("agent_end", |v| v["type"] == "agent_end");
    let (code, _, stderr) = talk.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

/// Commands with a missing or mistyped field are refused with an error naming it, and
/// nothing is sent to the model.
#[test]
fn commands_with_bad_fields_are_refused_naming_the_field() {
    let mock = MockServer::start();
    let out = PiCommand::for_mock(API, &mock)
        .args(["--mode", "rpc", "--no-session"])
        .stdin(lines(&[
            r#"{"id":"1","type":"prompt"}"#,
            r#"{"id":"2","type":"prompt","message":5}"#,
            r#"{"id":"3","type":"steer"}"#,
            r#"{"id":"4","type":"follow_up","message":null}"#,
            r#"{"id":"5","type":"set_session_name","name":7}"#,
            r#"{"id":"6","type":"get_state"}"#,
        ]))
        .run();
    out.assert_code(0).assert_no_panic();
    let all = out.json_lines();
    let error = |id: &str| by_id(&all, id)["error"].as_str().unwrap_or("").to_string();
    assert_eq!(
        error("1"),
        "Invalid prompt command: \"message\" must be a string (it is missing)"
    );
    assert_eq!(
        error("2"),
        "Invalid prompt command: \"message\" must be a string (it is a number)"
    );
    assert_eq!(
        error("3"),
        "Invalid steer command: \"message\" must be a string (it is missing)"
    );
    assert_eq!(
        error("4"),
        "Invalid follow_up command: \"message\" must be a string (it is null)"
    );
    assert_eq!(
        error("5"),
        "Invalid set_session_name command: \"name\" must be a string (it is a number)"
    );
    let state = &by_id(&all, "6")["data"];
    assert_eq!(state["pendingMessageCount"], 0);
    assert!(state.get("sessionName").is_none());
    assert_eq!(mock.request_count(), 0);
}

/// A command that needs the session while a run still holds it outside the agent loop (an
/// extension command that takes a while) is served once the run hands the session back,
/// however long that takes, instead of being refused as "already processing".
#[test]
fn a_prompt_after_a_slow_extension_command_waits_for_the_session() {
    use std::os::unix::fs::PermissionsExt;
    let mock = MockServer::with_replies([Reply::text(API, "after the command")]);
    let pi = PiCommand::for_mock(API, &mock).args(["--mode", "rpc", "--no-session"]);
    let ext = pi.agent_dir().join("extensions");
    std::fs::create_dir_all(&ext).unwrap();
    let script = ext.join("slow.py");
    std::fs::write(
        &script,
        "#!/usr/bin/env python3\nimport json, sys, time\n\
         for line in sys.stdin:\n    msg = json.loads(line)\n\
         \x20   if msg['type'] == 'hello':\n\
         \x20       print(json.dumps({'type': 'register', 'protocol': 1, 'commands': [{'name': 'slow', 'description': 'Takes a while'}]}), flush=True)\n\
         \x20   elif msg['type'] == 'command':\n\
         \x20       time.sleep(0.6)\n\
         \x20       print(json.dumps({'type': 'reply', 'id': msg['id'], 'result': None}), flush=True)\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut talk = pi.converse();
    talk.send(r#"{"id":"c","type":"prompt","message":"/slow"}"#);
    let handled = talk.expect("command handled", |v| v["id"] == "c");
    assert_eq!(
        handled["data"],
        serde_json::json!({"disposition": "handled"})
    );
    talk.send(r#"{"id":"p","type":"prompt","message":"hi"}"#);
    let accepted = talk.expect("prompt response", |v| v["id"] == "p");
    assert_eq!(accepted["success"], true, "{accepted}");
    talk.expect("agent_end", |v| v["type"] == "agent_end");
    let (code, _, stderr) = talk.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(mock.request_count(), 1);
}

/// Today's pi protocol on a turn with tools: prompt and steer dispositions, the delta-only
/// `message_update` with `usage`, `toolcall_start` naming the call, the `pending` message
/// start, `tool_execution_end.durationMs` only for a tool that ran, `agent_end.willRetry` and
/// `agent_settled` last.
#[test]
fn a_turn_with_tools_speaks_todays_protocol() {
    let mock = MockServer::with_replies([
        Reply::sse(crate::support::mock::sse_tool_calls(
            API,
            &[
                (
                    "call_1",
                    "bash",
                    serde_json::json!({"command": "sleep 0.3; echo ran"}),
                ),
                ("call_2", "nonexistent", serde_json::json!({})),
            ],
        )),
        Reply::text(API, "done"),
        Reply::text(API, "saw the follow-up"),
        Reply::text(API, "saw the queued prompt"),
    ]);
    let mut talk = PiCommand::for_mock(API, &mock)
        .args(["--mode", "rpc", "--no-session"])
        .converse();
    talk.send(r#"{"id":"p","type":"prompt","message":"go"}"#);
    let ack = talk.expect("prompt response", |v| v["id"] == "p");
    assert_eq!(ack["data"], serde_json::json!({"disposition": "started"}));
    let start = talk.expect("assistant message_start", |v| {
        v["type"] == "message_start" && v["message"]["role"] == "assistant"
    });
    assert_eq!(start["message"]["stopReason"], "pending");
    let call = talk.expect("toolcall_start", |v| {
        v["assistantMessageEvent"]["type"] == "toolcall_start"
    });
    assert_eq!(
        call["assistantMessageEvent"],
        serde_json::json!({"type": "toolcall_start", "contentIndex": 0, "id": "call_1", "toolName": "bash"})
    );
    assert!(call["usage"]["cost"].is_object());
    talk.expect("tool_execution_start", |v| {
        v["type"] == "tool_execution_start"
    });
    talk.send(r#"{"id":"f","type":"follow_up","message":"and then this"}"#);
    let queued = talk.expect("follow_up response", |v| v["id"] == "f");
    assert_eq!(queued["data"], serde_json::json!({"disposition": "queued"}));
    talk.send(r#"{"id":"q","type":"prompt","message":"more","streamingBehavior":"followUp"}"#);
    let queued = talk.expect("queued prompt response", |v| v["id"] == "q");
    assert_eq!(queued["data"], serde_json::json!({"disposition": "queued"}));
    let settled = talk.expect("agent_settled", |v| v["type"] == "agent_settled");
    assert_eq!(settled["aborted"], false);
    let (code, lines, stderr) = talk.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(lines.last().unwrap().contains("agent_settled"), "{lines:?}");
    let all: Vec<serde_json::Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let end_of = |id: &str| {
        all.iter()
            .find(|v| v["type"] == "tool_execution_end" && v["toolCallId"] == id)
            .unwrap()
    };
    assert!(end_of("call_2").get("durationMs").is_none(), "never ran");
    let ran = end_of("call_1");
    assert!(
        ran["durationMs"].as_u64().is_some_and(|ms| ms >= 250),
        "{ran}"
    );
    let ends: Vec<&serde_json::Value> = all.iter().filter(|v| v["type"] == "agent_end").collect();
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0]["willRetry"], false);
    assert_eq!(
        mock.request_count(),
        4,
        "both queued messages were delivered"
    );
}

/// `get_entries [since]`, `get_tree`, `clear_queue` and `get_available_thinking_levels`, as
/// today's pi answers them.
#[test]
fn entries_tree_queue_and_thinking_levels_commands() {
    let mock = MockServer::with_replies([Reply::text(API, "a1"), Reply::text(API, "a2")]);
    let (cmd, file) = two_exchange_session(&mock);
    let all = rpc_on(
        &cmd,
        &file,
        &[
            r#"{"id":"e","type":"get_entries"}"#,
            r#"{"id":"t","type":"get_tree"}"#,
            r#"{"id":"s1","type":"steer","message":"later one"}"#,
            r#"{"id":"s2","type":"follow_up","message":"later two"}"#,
            r#"{"id":"c","type":"clear_queue"}"#,
            r#"{"id":"st","type":"get_state"}"#,
            r#"{"id":"l","type":"get_available_thinking_levels"}"#,
            r#"{"id":"bad","type":"get_entries","since":"nope"}"#,
        ],
    );
    let entries = by_id(&all, "e")["data"]["entries"]
        .as_array()
        .unwrap()
        .clone();
    let leaf = by_id(&all, "e")["data"]["leafId"].clone();
    let stored: Vec<serde_json::Value> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(entries, stored, "every entry but the header, as stored");
    assert_eq!(leaf, stored.last().unwrap()["id"]);
    // The tree of a linear session is one chain.
    let mut node = &by_id(&all, "t")["data"]["tree"][0];
    let mut chain = Vec::new();
    loop {
        chain.push(node["entry"]["id"].clone());
        match node["children"].as_array().unwrap().as_slice() {
            [] => break,
            [only] => node = only,
            more => panic!("branches: {more:?}"),
        }
    }
    let ids: Vec<serde_json::Value> = stored.iter().map(|e| e["id"].clone()).collect();
    assert_eq!(chain, ids);
    assert_eq!(by_id(&all, "t")["data"]["leafId"], leaf);
    assert_eq!(
        by_id(&all, "c")["data"],
        serde_json::json!({"steering": ["later one"], "followUp": ["later two"]})
    );
    let updates: Vec<&serde_json::Value> =
        all.iter().filter(|v| v["type"] == "queue_update").collect();
    assert_eq!(
        *updates.last().unwrap(),
        &serde_json::json!({"type": "queue_update", "steering": [], "followUp": []})
    );
    assert_eq!(by_id(&all, "st")["data"]["pendingMessageCount"], 0);
    assert_eq!(
        by_id(&all, "l")["data"],
        serde_json::json!({"levels": ["off"]}),
        "the mock model does not reason"
    );
    assert_eq!(by_id(&all, "bad")["error"], "Entry not found: nope");

    // `since` returns what came after that entry.
    let since = format!(
        r#"{{"id":"e2","type":"get_entries","since":{}}}"#,
        ids[ids.len() - 2]
    );
    let all = rpc_on(&cmd, &file, &[&since]);
    assert_eq!(
        by_id(&all, "e2")["data"]["entries"],
        serde_json::json!([stored.last().unwrap()])
    );
}

/// An abort is reported in `agent_settled`.
#[test]
fn agent_settled_says_the_run_was_aborted() {
    let mock =
        MockServer::with_replies([Reply::text(API, "never finishes").stall_after(2, 20_000)]);
    let mut talk = PiCommand::for_mock(API, &mock)
        .args(["--mode", "rpc", "--no-session"])
        .converse();
    talk.send(r#"{"id":"p","type":"prompt","message":"go"}"#);
    talk.expect("message_update", |v| v["type"] == "message_update");
    talk.send(r#"{"id":"a","type":"abort"}"#);
    let settled = talk.expect("agent_settled", |v| v["type"] == "agent_settled");
    assert_eq!(settled["aborted"], true);
    talk.expect("abort response", |v| v["id"] == "a");
    let (code, _, stderr) = talk.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

/// As pi answers them: an empty line is a parse error, a command without a `type` is an
/// unknown command `undefined` (with its id, and no `command`).
#[test]
fn empty_lines_and_commands_without_a_type_are_answered() {
    let mock = MockServer::start();
    let out = PiCommand::for_mock(API, &mock)
        .args(["--mode", "rpc", "--no-session"])
        .stdin(lines(&[
            "",
            r#"{"id":"m"}"#,
            r#"{"id":"s","type":"get_state"}"#,
        ]))
        .run();
    out.assert_code(0).assert_no_panic();
    let all = out.json_lines();
    assert_eq!(all.len(), 3, "{}", out.stdout);
    assert_eq!(all[0]["command"], "parse");
    assert_eq!(all[0]["success"], false);
    assert_eq!(
        all[1],
        serde_json::json!({"id": "m", "type": "response", "success": false,
            "error": "Unknown command: undefined"})
    );
    assert_eq!(all[2]["id"], "s");
}

#[test]
fn get_commands_says_where_discovered_prompts_and_skills_come_from_as_pi_does() {
    let mock = MockServer::start();
    let pi = PiCommand::for_mock(API, &mock)
        .write_agent_file(
            "prompts/review.md",
            "---\ndescription: Review code\n---\nReview $1",
        )
        .write_agent_file(
            "skills/valid-skill/SKILL.md",
            "---\nname: valid-skill\ndescription: A skill\n---\nDo it.",
        );
    let agent = pi.agent_dir().to_path_buf();
    let pi = pi
        .args(["--mode", "rpc", "--no-session"])
        .stdin(lines(&[r#"{"id":"c","type":"get_commands"}"#]));
    let out = pi.run();
    out.assert_code(0);
    let all = out.json_lines();
    let commands = all[0]["data"]["commands"].as_array().unwrap();
    for (name, file) in [
        ("review", "prompts/review.md"),
        ("skill:valid-skill", "skills/valid-skill/SKILL.md"),
    ] {
        let c = commands.iter().find(|c| c["name"] == name).unwrap();
        assert_eq!(
            c["sourceInfo"],
            serde_json::json!({"path": agent.join(file).to_string_lossy(), "source": "auto",
                "scope": "user", "origin": "top-level", "baseDir": agent.to_string_lossy()}),
            "{name}"
        );
    }
}

/// 1.x's `max` thinking level: offered only for a model whose `thinkingLevelMap` names it,
/// accepted by `--thinking`, `set_thinking_level` and cycling, and sent as the mapped value.
#[test]
fn max_thinking_level_where_the_model_maps_it() {
    let mock = MockServer::with_replies([Reply::text(API, "deep")]);
    let models = serde_json::json!({"providers": {"mock": {
        "baseUrl": crate::support::base_url_for(API, mock.port()),
        "api": API,
        "apiKey": "test-key",
        "models": [{"id": "mock-model", "reasoning": true,
                    "thinkingLevelMap": {"xhigh": "xhigh", "max": "max-effort"}}]
    }}});
    let out = PiCommand::for_mock(API, &mock)
        .write_agent_file("models.json", &models.to_string())
        .args([
            "--mode",
            "rpc",
            "--no-session",
            "--model",
            "mock/mock-model",
        ])
        .args(["--thinking", "max"])
        .stdin(lines(&[
            r#"{"id":"s0","type":"get_state"}"#,
            r#"{"id":"l","type":"get_available_thinking_levels"}"#,
            r#"{"id":"h","type":"set_thinking_level","level":"high"}"#,
            r#"{"id":"c","type":"cycle_thinking_level"}"#,
            r#"{"id":"c2","type":"cycle_thinking_level"}"#,
            r#"{"id":"p","type":"prompt","message":"think"}"#,
        ]))
        .run();
    out.assert_code(0).assert_no_panic();
    let all = out.json_lines();
    assert_eq!(by_id(&all, "s0")["data"]["thinkingLevel"], "max");
    assert_eq!(
        by_id(&all, "l")["data"]["levels"],
        serde_json::json!(["off", "minimal", "low", "medium", "high", "xhigh", "max"])
    );
    assert_eq!(by_id(&all, "c")["data"]["level"], "xhigh");
    assert_eq!(by_id(&all, "c2")["data"]["level"], "max");
    let body = mock.single_request().body;
    assert_eq!(body["reasoning_effort"], "max-effort", "{body}");
}

/// pi 1.6.0 (#12119): `get_last_assistant_text` skips an assistant message from a turn that did
/// not end normally and has no text (here a provider error), so it answers the previous reply.
#[test]
fn last_assistant_text_skips_a_failed_reply_without_text() {
    let mock = MockServer::with_replies([
        Reply::text(API, "the answer"),
        Reply::api_error(API, 400, "bad request"),
    ]);
    let mut talk = PiCommand::for_mock(API, &mock)
        .args(["--mode", "rpc", "--no-session"])
        .converse();
    talk.send(r#"{"id":"p1","type":"prompt","message":"one"}"#);
    talk.expect("agent_end", |v| v["type"] == "agent_end");
    talk.send(r#"{"id":"p2","type":"prompt","message":"two"}"#);
    let end = talk.expect("agent_end", |v| v["type"] == "agent_end");
    let last = end["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["stopReason"], "error", "{end}");
    talk.send(r#"{"id":"t","type":"get_last_assistant_text"}"#);
    let text = talk.expect("get_last_assistant_text response", |v| v["id"] == "t");
    assert_eq!(text["data"], serde_json::json!({"text": "the answer"}));
    let (code, _, stderr) = talk.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

/// pi 1.6.0: `abort` during a manual compaction cancels it and answers once pi is idle, so a
/// client that waits for the answer never races the compaction's end.
#[test]
fn abort_cancels_a_manual_compaction_and_answers_after_it() {
    let mock = MockServer::with_replies([
        Reply::text(API, "first answer"),
        Reply::text(API, &"## Goal\nnever finished ".repeat(40)).chunk_delay(500),
    ]);
    let pi = PiCommand::for_mock(API, &mock)
        .args(["--mode", "rpc"])
        .write_agent_file("settings.json", r#"{"compaction":{"keepRecentTokens":1}}"#);
    let mut talk = pi.converse();
    talk.send(r#"{"id":"p","type":"prompt","message":"first question"}"#);
    talk.expect("agent_end", |v| v["type"] == "agent_end");
    talk.send(r#"{"id":"c","type":"compact"}"#);
    talk.expect("compaction start", |v| v["type"] == "compaction_start");
    talk.send(r#"{"id":"a","type":"abort"}"#);
    let first = talk.expect("an answer", |v| {
        v["type"] == "response" && (v["id"] == "c" || v["id"] == "a")
    });
    assert_eq!(first["id"], "c", "the compaction ends first: {first}");
    assert_eq!(first["success"], false, "{first}");
    let abort = talk.expect("abort", |v| v["id"] == "a");
    assert_eq!(abort["success"], true, "{abort}");
    let (code, _, stderr) = talk.finish();
    assert_eq!(code, Some(0), "{stderr}");
}
