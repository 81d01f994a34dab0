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
    assert!(
        unknown.get("id").is_none(),
        "pi does not echo the id of an unknown command"
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
    let types: Vec<&str> = all.iter().map(|v| v["type"].as_str().unwrap()).collect();
    assert_eq!(types[1], "agent_start");
    assert_eq!(*types.last().unwrap(), "agent_end");
    let update = all.iter().find(|v| v["type"] == "message_update").unwrap();
    assert_eq!(
        update["assistantMessageEvent"]["partial"]["role"],
        "assistant"
    );
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
    assert!(
        output.starts_with("1002\n") && output.ends_with("3000\n"),
        "{output:.40}"
    );
    let path = data["fullOutputPath"].as_str().unwrap();
    let full = std::fs::read_to_string(path).unwrap();
    assert!(full.starts_with("1\n2\n"));
    let _ = std::fs::remove_file(path);
}
