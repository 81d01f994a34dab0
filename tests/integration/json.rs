//! `pi --mode json`: the session header, then one JSON line per agent event.

use serde_json::Value;

use crate::support::{MockServer, PiCommand, Reply};

fn event_types(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .map(|l| l["type"].as_str().unwrap_or("<no type>").to_string())
        .collect()
}

#[test]
fn json_mode_prints_header_then_events() {
    let api = "openai-completions";
    let text = "Hello there, JSON mode.";
    let mock = MockServer::with_replies([Reply::text(api, text)]);
    let pi = PiCommand::for_mock(api, &mock).args(["--mode", "json", "hi"]);
    let cwd = pi.cwd().to_path_buf();
    let out = pi.run();
    out.assert_code(0).assert_no_panic();
    let lines = out.json_lines();
    assert!(!lines.is_empty(), "no output");

    let header = &lines[0];
    assert_eq!(header["type"], "session");
    assert_eq!(header["version"], 3);
    assert!(
        header["id"].as_str().is_some_and(|s| !s.is_empty()),
        "header: {header}"
    );
    assert!(header["timestamp"].as_str().is_some(), "header: {header}");
    assert_eq!(header["cwd"].as_str(), Some(cwd.to_str().unwrap()));

    // consecutive message_update lines collapse into one for the order check
    let mut types = event_types(&lines[1..]);
    types.dedup_by(|a, b| a == "message_update" && b == "message_update");
    assert_eq!(
        types,
        [
            "agent_start",
            "turn_start",
            "message_start",
            "message_end",
            "message_start",
            "message_end",
            "message_start",
            "message_update",
            "message_end",
            "turn_end",
            "agent_end",
            "agent_settled"
        ],
        "stdout:\n{}",
        out.stdout
    );

    let starts: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "message_start")
        .collect();
    // pi 1.x: the prompt checkpoint, then the user message.
    assert_eq!(starts[0]["message"]["role"], "system");
    assert_eq!(starts[1]["message"]["role"], "user");
    assert_eq!(starts[2]["message"]["role"], "assistant");
    assert_eq!(
        starts[2]["message"]["stopReason"], "pending",
        "today's pi marks the message still streaming"
    );

    let deltas: String = lines
        .iter()
        .filter(|l| {
            l["type"] == "message_update" && l["assistantMessageEvent"]["type"] == "text_delta"
        })
        .map(|l| l["assistantMessageEvent"]["delta"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(deltas, text, "text_delta events carry the streamed text");
    // Today's pi: deltas only, with the usage so far; no message snapshots.
    for update in lines.iter().filter(|l| l["type"] == "message_update") {
        let keys: Vec<&String> = update.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["type", "usage", "assistantMessageEvent"], "{update}");
        assert!(update["usage"]["totalTokens"].is_u64());
        assert!(update["assistantMessageEvent"].get("partial").is_none());
    }
    let end = &lines[lines.len() - 2];
    assert_eq!(end["type"], "agent_end");
    assert_eq!(end["willRetry"], false);
    assert_eq!(
        lines.last().unwrap(),
        &serde_json::json!({"type": "agent_settled", "aborted": false})
    );
    let costs = &end["messages"][2]["usage"]["cost"];
    assert!(costs["total"].is_u64() || costs["total"].is_f64());
    assert!(
        !out.stdout.contains("\"total\":0.0"),
        "numbers are written as JavaScript writes them"
    );
}

#[test]
fn json_mode_llm_error_still_exits_zero() {
    let api = "anthropic-messages";
    let mock = MockServer::with_replies([Reply::api_error(api, 400, "bad request from mock")]);
    let out = PiCommand::for_mock(api, &mock)
        .args(["--mode", "json", "hi"])
        .run();
    out.assert_code(0).assert_no_panic();
    let lines = out.json_lines();
    assert_eq!(lines[0]["type"], "session");
    assert_eq!(lines.last().unwrap()["type"], "agent_settled");
    assert!(
        out.stdout.contains("bad request from mock"),
        "error is in the event stream"
    );
}

/// pi's shapes inside events: `toolcall_end.toolCall` is a content block (`type: toolCall`)
/// and `turn_end.toolResults[]` are messages (`role: toolResult`).
#[test]
fn tool_calls_and_results_in_events_carry_their_type_and_role() {
    let api = "openai-completions";
    let mock = MockServer::with_replies([
        Reply::sse(crate::support::mock::sse_tool_calls(
            api,
            &[("call_1", "read", serde_json::json!({"path": "a.txt"}))],
        )),
        Reply::text(api, "read it"),
    ]);
    let out = PiCommand::for_mock(api, &mock)
        .write_file("a.txt", "hello")
        .args(["--mode", "json", "read a.txt"])
        .run();
    out.assert_code(0).assert_no_panic();
    let lines = out.json_lines();
    let end = lines
        .iter()
        .find(|v| v["assistantMessageEvent"]["type"] == "toolcall_end")
        .expect("toolcall_end");
    assert_eq!(
        end["assistantMessageEvent"]["toolCall"],
        serde_json::json!({"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "a.txt"}})
    );
    let turn = lines
        .iter()
        .find(|v| v["type"] == "turn_end" && !v["toolResults"].as_array().unwrap().is_empty())
        .expect("turn_end with results");
    let result = &turn["toolResults"][0];
    assert_eq!(result["role"], "toolResult");
    assert_eq!(result["toolCallId"], "call_1");
    let first_key = result.as_object().unwrap().keys().next().unwrap().clone();
    assert_eq!(first_key, "role");
}

/// `agent_end` says whether an automatic retry follows; `agent_settled` comes once, when
/// nothing more will happen.
#[test]
fn agent_end_announces_a_retry_and_agent_settled_comes_once_at_the_end() {
    let api = "openai-completions";
    let mock = MockServer::with_replies([
        Reply::api_error(api, 503, "Service unavailable"),
        Reply::text(api, "recovered"),
    ]);
    let out = PiCommand::for_mock(api, &mock)
        .args(["--mode", "json", "hi"])
        .run();
    out.assert_code(0).assert_no_panic();
    let lines = out.json_lines();
    let ends: Vec<&Value> = lines.iter().filter(|l| l["type"] == "agent_end").collect();
    assert_eq!(ends.len(), 2, "{}", out.stdout);
    assert_eq!(ends[0]["willRetry"], true);
    assert_eq!(ends[1]["willRetry"], false);
    let settled: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l["type"] == "agent_settled")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(settled, [lines.len() - 1]);
    assert_eq!(lines.last().unwrap()["aborted"], false);
}
