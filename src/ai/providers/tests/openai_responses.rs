//! Tests of the openai_responses provider: fixtures at every chunk boundary, request bodies, errors.

use super::*;
use crate::ai::providers::openai_compat::test_support::*;

fn fixture(name: &str) -> Vec<u8> {
    let p = format!(
        "{}/fixtures/openai-responses/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn run(name: &str) -> Run {
    run_all_chunkings(
        &fixture(name),
        &test_model("openai-responses"),
        parse_stream,
    )
}

#[test]
fn plain_text() {
    let r = run("text.sse");
    assert_eq!(
        r.trace,
        [
            "start",
            "text_start 0",
            "text_delta 0 Hello, w",
            "text_delta 0 orld! ✓",
            "text_end 0 Hello, world! ✓",
            "done stop",
        ]
    );
    let m = r.message;
    assert_eq!(m.response_id.as_deref(), Some("resp_0123456789abcdef"));
    match &m.content[0] {
        Content::Text(t) => assert_eq!(
            t.text_signature.as_deref(),
            Some(r#"{"v":1,"id":"msg_00"}"#)
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        (m.usage.input, m.usage.output, m.usage.total_tokens),
        (120, 5, 125)
    );
}

#[test]
fn reasoning_summary_then_text() {
    let r = run("reasoning.sse");
    assert_eq!(
        r.trace,
        [
            "start",
            "thinking_start 0",
            "thinking_delta 0 Let me t",
            "thinking_delta 0 hink.",
            "thinking_delta 0 \n\n",
            "thinking_end 0 Let me think.",
            "text_start 1",
            "text_delta 1 The answ",
            "text_delta 1 er is 4.",
            "text_end 1 The answer is 4.",
            "done stop",
        ]
    );
    let m = r.message;
    match &m.content[0] {
        Content::Thinking(t) => {
            let sig: Value =
                serde_json::from_str(t.thinking_signature.as_deref().unwrap()).unwrap();
            assert_eq!(sig["id"], "rs_00");
            assert_eq!(sig["encrypted_content"], "ENC==");
        }
        other => panic!("{other:?}"),
    }
    let u = m.usage;
    assert_eq!(
        (u.input, u.cache_read, u.output, u.total_tokens),
        (200, 800, 40, 1040)
    );
}

#[test]
fn function_calls_from_fragments() {
    let r = run("tool_call.sse");
    assert_eq!(
        r.trace,
        [
            "start",
            "text_start 0",
            "text_delta 0 Reading.",
            "text_end 0 Reading.",
            "toolcall_start 1",
            "toolcall_delta 1 {\"path\"",
            "toolcall_delta 1 : \"src/",
            "toolcall_delta 1 main.rs",
            "toolcall_delta 1 \"}",
            "toolcall_end 1 call_read1|fc_01 read {\"path\":\"src/main.rs\"}",
            "toolcall_start 2",
            "toolcall_delta 2 {}",
            "toolcall_end 2 call_ls2|fc_02 ls {}",
            "done toolUse",
        ]
    );
}

#[test]
fn error_event_fails_with_code_and_message() {
    let r = run("error.sse");
    assert_eq!(r.trace.last().unwrap(), "error error");
    assert_eq!(
        r.message.error_message.as_deref(),
        Some("Error Code server_error: The server had an error processing your request.")
    );
    assert_eq!(r.message.text(), "Partial answer");
}

#[test]
fn response_failed_fails() {
    let r = run("failed.sse");
    assert_eq!(r.message.stop_reason, StopReason::Error);
    assert_eq!(
        r.message.error_message.as_deref(),
        Some("rate_limit_exceeded: Slow down")
    );
}

#[test]
fn missing_completed_is_connection_lost() {
    let r = run("truncated.sse");
    assert_eq!(
        r.message.error_message.as_deref(),
        Some(oc::CONNECTION_LOST)
    );
    assert_eq!(r.message.text(), "Cut off in the middle");
}

#[test]
fn malformed_event_is_a_clear_error() {
    let r = run("malformed.sse");
    let msg = r.message.error_message.clone().unwrap();
    assert!(
        msg.starts_with("Malformed stream chunk from server"),
        "{msg}"
    );
}

#[test]
fn incomplete_maps_to_length() {
    let r = run("incomplete.sse");
    assert_eq!(r.trace.last().unwrap(), "done length");
    assert_eq!(r.message.usage.total_tokens, 13);
}

fn conversation(model: &Model, call_id: &str) -> Context {
    let mut a = AssistantMessage::empty(model);
    a.content = vec![
        Content::Text(TextContent {
            text: "Let me look.".into(),
            text_signature: Some(r#"{"v":1,"id":"msg_abc","phase":"commentary"}"#.into()),
        }),
        Content::ToolCall(ToolCall {
            id: call_id.into(),
            name: "read".into(),
            arguments: json!({"path": "a.txt"}),
            thought_signature: None,
        }),
    ];
    a.stop_reason = StopReason::ToolUse;
    Context {
        system_prompt: Some("You are helpful.".into()),
        messages: vec![
            Message::user_text("read a.txt"),
            Message::Assistant(a),
            Message::ToolResult(ToolResultMessage {
                tool_call_id: call_id.into(),
                tool_name: "read".into(),
                content: vec![Content::text("hello")],
                details: None,
                is_error: false,
                duration_ms: None,
                timestamp: 0,
                extra: Extra::new(),
            }),
        ],
        tools: vec![ToolSpec {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object"}),
        }],
    }
}

#[test]
fn request_body_like_pi() {
    let model = test_model("openai-responses");
    let opts = StreamOptions {
        api_key: "sk-test".into(),
        session_id: Some("sess-1".into()),
        ..Default::default()
    };
    let ctx = conversation(&model, "call_1|fc_1");
    let (url, headers, body) = build_request(&model, &ctx, &opts);
    assert_eq!(url, "http://127.0.0.1:8765/v1/responses");
    assert!(headers.contains(&("Authorization".into(), "Bearer sk-test".into())));
    assert!(headers.contains(&("session_id".into(), "sess-1".into())));
    assert!(headers.contains(&("x-client-request-id".into(), "sess-1".into())));
    let expected = json!({
        "model": "mock-model",
        "input": [
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": [{"type": "input_text", "text": "read a.txt"}]},
            {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": "Let me look.", "annotations": []}],
             "status": "completed", "id": "msg_abc", "phase": "commentary"},
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read",
             "arguments": "{\"path\":\"a.txt\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "hello"}
        ],
        "stream": true,
        "prompt_cache_key": "sess-1",
        "store": false,
        "max_output_tokens": 16384,
        "tools": [{"type": "function", "name": "read", "description": "Read a file",
                   "parameters": {"type": "object"}, "strict": false}]
    });
    assert_eq!(body, expected);
}

#[test]
fn reasoning_options() {
    let mut model = test_model("openai-responses");
    model.reasoning = true;
    let ctx = Context {
        system_prompt: Some("sys".into()),
        ..Default::default()
    };
    let opts = StreamOptions {
        reasoning: Some(ThinkingLevel::Xhigh),
        ..Default::default()
    };
    let (_, _, body) = build_request(&model, &ctx, &opts);
    assert_eq!(body["input"][0]["role"], "developer");
    // xhigh is unsupported without a thinkingLevelMap entry: clamped down to high.
    assert_eq!(
        body["reasoning"],
        json!({"effort": "high", "summary": "auto"})
    );
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    let (_, _, body) = build_request(&model, &ctx, &StreamOptions::default());
    assert_eq!(body["reasoning"], json!({"effort": "none"}));
}

#[test]
fn foreign_ids_are_normalized_for_openai() {
    let mut model = test_model("openai-responses");
    model.provider = "openai".into();
    let mut ctx = conversation(&model, "call+1|item/xyz");
    if let Message::Assistant(a) = &mut ctx.messages[1] {
        a.provider = "anthropic".into();
        a.api = "anthropic-messages".into();
    }
    let (_, _, body) = build_request(&model, &ctx, &StreamOptions::default());
    let fc = &body["input"][3];
    assert_eq!(fc["call_id"], "call_1");
    assert_eq!(fc["id"], format!("fc_{}", oc::short_hash("item/xyz")));
    assert_eq!(body["input"][4]["call_id"], "call_1");
    // A foreign text block has no signature: ids fall back to msg_<index>.
    assert_eq!(body["input"][2]["id"], "msg_1");
}

/// `stream` with every event's `type` doubled (the last one counts), which the hot shape
/// refuses and the full reading takes as before.
fn cold_copy(stream: &str) -> String {
    stream.replace("{\"type\":", "{\"type\":\"x\",\"type\":")
}

#[test]
fn hot_deltas_read_as_the_full_reading_does() {
    let model = test_model("openai-responses");
    for name in [
        "text.sse",
        "reasoning.sse",
        "tool_call.sse",
        "incomplete.sse",
    ] {
        let hot = String::from_utf8(fixture(name)).unwrap();
        let cold = cold_copy(&hot);
        let count = |s: &str| {
            s.lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .filter_map(|d| serde_json::from_str::<ResponsesDelta>(d).ok())
                .filter(|e| DELTA_KINDS.contains(&&*e.kind))
                .count()
        };
        assert!(count(&hot) >= 2, "{name}");
        assert_eq!(count(&cold), 0, "{name}");
        let (a, b) = (
            run_all_chunkings(hot.as_bytes(), &model, parse_stream),
            run_all_chunkings(cold.as_bytes(), &model, parse_stream),
        );
        assert_eq!(a.trace, b.trace, "{name}");
        let mut m = b.message.clone();
        m.timestamp = a.message.timestamp;
        assert_eq!(m, a.message, "{name}");
    }
}
