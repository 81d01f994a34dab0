//! Tests of the Mistral provider: fixtures at many chunk sizes, request bodies, id rules.

use super::*;
use crate::ai::providers::anthropic::test_support::{read_tool, serve_once, tool_result};
use crate::ai::providers::openai_compat::test_support::*;

fn fixture(name: &str) -> Vec<u8> {
    let p = format!("{}/fixtures/mistral/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn model() -> Model {
    let mut m = test_model("mistral-conversations");
    m.provider = "mistral".into();
    m.id = "mistral-small-latest".into();
    m.base_url = "https://api.mistral.ai".into();
    m
}

/// Runs a fixture at every chunking and checks all runs agree; returns one run.
fn run(name: &str) -> Run {
    run_all_chunkings(&fixture(name), &model(), parse_stream)
}

#[test]
fn plain_text() {
    let r = run("text.sse");
    assert_eq!(
        r.trace,
        [
            "start",
            "text_start 0",
            "text_delta 0 ",
            "text_delta 0 Hello, w",
            "text_delta 0 orld! ✓",
            "text_delta 0 ",
            "text_end 0 Hello, world! ✓",
            "done stop",
        ]
    );
    let m = r.message;
    assert_eq!(m.text(), "Hello, world! ✓");
    assert_eq!(m.stop_reason, StopReason::Stop);
    assert_eq!(m.response_id.as_deref(), Some("cmpl-7f3a9c"));
    assert_eq!(
        (m.usage.input, m.usage.output, m.usage.total_tokens),
        (120, 5, 125)
    );
}

#[test]
fn thinking_chunks_then_text() {
    let r = run("thinking.sse");
    assert_eq!(
        r.trace,
        [
            "start",
            "text_start 0",
            "text_delta 0 ",
            "text_end 0 ",
            "thinking_start 1",
            "thinking_delta 1 Let me th",
            "thinking_delta 1 ink.",
            "thinking_end 1 Let me think.",
            "text_start 2",
            "text_delta 2 The answer",
            "text_delta 2  is 4.",
            "text_delta 2 ",
            "text_end 2 The answer is 4.",
            "done stop",
        ]
    );
    match &r.message.content[1] {
        Content::Thinking(t) => {
            assert_eq!(t.thinking, "Let me think.");
            assert_eq!(t.thinking_signature, None);
        }
        other => panic!("expected thinking, got {other:?}"),
    }
    assert_eq!(r.message.usage.total_tokens, 240);
}

#[test]
fn tool_calls_from_fragments() {
    let r = run("tool_call.sse");
    let ls_id = derive_tool_call_id("toolcall:1", 0);
    assert_eq!(ls_id, "toolcall1");
    assert_eq!(
        r.trace,
        [
            "start".to_string(),
            "text_start 0".into(),
            "text_delta 0 ".into(),
            "text_delta 0 Reading.".into(),
            "text_end 0 Reading.".into(),
            "toolcall_start 1".into(),
            "toolcall_delta 1 {\"path\":".into(),
            "toolcall_delta 1  \"src/ma".into(),
            "toolcall_delta 1 in.rs\"}".into(),
            "toolcall_start 2".into(),
            "toolcall_delta 2 {}".into(),
            // pi opens a text block even for the empty content of the final chunk.
            "text_start 3".into(),
            "text_delta 3 ".into(),
            "text_end 3 ".into(),
            "toolcall_end 1 D681PevKs read {\"path\":\"src/main.rs\"}".into(),
            format!("toolcall_end 2 {ls_id} ls {{}}"),
            "done toolUse".into(),
        ]
    );
    assert_eq!(r.message.stop_reason, StopReason::ToolUse);
    let calls: Vec<_> = r.message.tool_calls().cloned().collect();
    assert_eq!(calls[0].arguments, json!({"path": "src/main.rs"}));
    assert_eq!(r.message.usage.input, 300);
}

#[test]
fn in_stream_error_object() {
    let r = run("error.sse");
    assert_eq!(r.trace.last().unwrap(), "error error");
    assert_eq!(
        r.message.error_message.as_deref(),
        Some("Service unavailable, please retry.")
    );
    assert_eq!(r.message.text(), "Part");
}

#[test]
fn error_finish_reason_fails_like_pi() {
    let r = run("finish_error.sse");
    assert_eq!(r.message.stop_reason, StopReason::Error);
    assert_eq!(
        r.message.error_message.as_deref(),
        Some("An unknown error occurred")
    );
    assert!(r.trace.contains(&"text_end 0 Part".to_string()));
}

#[test]
fn truncated_stream_is_connection_lost() {
    let r = run("truncated.sse");
    assert_eq!(r.message.stop_reason, StopReason::Error);
    assert_eq!(
        r.message.error_message.as_deref(),
        Some(oc::CONNECTION_LOST)
    );
    assert_eq!(r.message.text(), "Cut off mid");
}

#[test]
fn malformed_chunk_is_a_clear_error() {
    let r = run("malformed.sse");
    assert_eq!(r.message.stop_reason, StopReason::Error);
    let msg = r.message.error_message.clone().unwrap();
    assert!(
        msg.starts_with("Malformed stream chunk from server"),
        "{msg}"
    );
    assert_eq!(r.message.text(), "ok");
}

#[test]
fn length_without_done_and_total_fallback() {
    let r = run("length.sse");
    assert_eq!(r.trace.last().unwrap(), "done length");
    assert_eq!(r.message.usage.total_tokens, 13);
    assert_eq!(map_finish_reason("model_length"), StopReason::Length);
    assert_eq!(map_finish_reason("content_filter"), StopReason::Stop);
}

fn conversation(call_id: &str) -> Context {
    let mut other = test_model("openai-completions");
    other.provider = "openai".into();
    let mut a = AssistantMessage::empty(&other);
    a.content = vec![
        Content::Thinking(ThinkingContent {
            thinking: "Need the file.".into(),
            thinking_signature: None,
            redacted: false,
        }),
        Content::text("Let me look."),
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
            tool_result(call_id, "read", vec![Content::text("hello\n")], false),
        ],
        tools: vec![read_tool()],
    }
}

#[test]
fn request_with_tool_call_and_result() {
    let opts = StreamOptions {
        api_key: "mk-test".into(),
        session_id: Some("sess-1".into()),
        ..Default::default()
    };
    let (url, headers, body) = build_request(&model(), &conversation("call_1|fc+/=abc"), &opts);
    assert_eq!(url, "https://api.mistral.ai/v1/chat/completions");
    assert!(headers.contains(&("Authorization".into(), "Bearer mk-test".into())));
    assert!(headers.contains(&("x-affinity".into(), "sess-1".into())));
    let id = derive_tool_call_id("call_1|fc+/=abc", 0);
    assert_eq!(id.len(), 9);
    assert!(id.chars().all(|c| c.is_ascii_alphanumeric()));
    let expected = json!({
        "model": "mistral-small-latest",
        "max_tokens": 16384,
        "stream": true,
        "messages": [
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": [{"type": "text", "text": "read a.txt"}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Let me look."}
            ], "tool_calls": [
                {"id": id, "type": "function",
                 "function": {"name": "read", "arguments": "{\"path\":\"a.txt\"}"}, "index": 0}
            ], "prefix": false},
            {"role": "tool", "content": [{"type": "text", "text": "hello"}],
             "tool_call_id": id, "name": "read"}
        ],
        "tools": [{"type": "function", "function": {
            "name": "read", "description": read_tool().description,
            "strict": false, "parameters": read_tool().parameters
        }}]
    });
    assert_eq!(body, expected);
    let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["model", "max_tokens", "stream", "messages", "tools"]);
}

#[test]
fn same_model_thinking_and_error_results() {
    let m = model();
    let mut ctx = conversation("D681PevKs");
    if let Message::Assistant(a) = &mut ctx.messages[1] {
        a.provider = m.provider.clone();
        a.api = m.api.clone();
        a.model = m.id.clone();
    }
    if let Message::ToolResult(r) = &mut ctx.messages[2] {
        r.is_error = true;
        r.content.clear();
    }
    let (_, _, body) = build_request(&m, &ctx, &StreamOptions::default());
    let a = &body["messages"][2];
    assert_eq!(
        a["content"][0],
        json!({"type": "thinking", "thinking": [{"type": "text", "text": "Need the file."}]})
    );
    assert_eq!(a["tool_calls"][0]["id"], "D681PevKs");
    assert_eq!(
        body["messages"][3]["content"][0]["text"],
        "[tool error] (no tool output)"
    );
}

#[test]
fn reasoning_modes() {
    let mut m = model();
    m.reasoning = true;
    let opts = StreamOptions {
        reasoning: Some(ThinkingLevel::Medium),
        max_tokens: Some(500),
        temperature: Some(0.3),
        ..Default::default()
    };
    let (_, _, body) = build_request(&m, &Context::default(), &opts);
    assert_eq!(body["reasoning_effort"], "high");
    assert!(body.get("prompt_mode").is_none());
    assert_eq!(body["max_tokens"], 500);
    assert_eq!(body["temperature"], 0.3);
    let mut map = Map::new();
    map.insert("medium".into(), json!("medium"));
    m.thinking_level_map = Some(map);
    let (_, _, body) = build_request(&m, &Context::default(), &opts);
    assert_eq!(body["reasoning_effort"], "medium");
    m.id = "magistral-medium-latest".into();
    let (_, _, body) = build_request(&m, &Context::default(), &opts);
    assert_eq!(body["prompt_mode"], "reasoning");
    assert!(body.get("reasoning_effort").is_none());
    let off = StreamOptions::default();
    let (_, _, body) = build_request(&m, &Context::default(), &off);
    assert!(body.get("prompt_mode").is_none());
}

#[test]
fn tool_call_ids_are_nine_alphanumerics_without_collisions() {
    assert_eq!(derive_tool_call_id("abc_def-ghi", 0), "abcdefghi");
    let mut n = IdNormalizer::default();
    let a = n.normalize("call_1|fc+/=abc");
    assert_eq!(n.normalize("call_1|fc+/=abc"), a);
    // Same alphanumerics, different id: must not reuse the first id's value.
    let b = n.normalize("call_1|fc+/=ab/c");
    assert_ne!(a, b);
    assert_eq!(b, derive_tool_call_id("call_1|fc+/=ab/c", 1));
    for id in [&a, &b] {
        assert_eq!(id.len(), 9);
    }
}

#[test]
fn http_errors_read_like_pi() {
    assert_eq!(
        format_http_error(Some(401), "401 Unauthorized"),
        "Mistral API error (401): Unauthorized"
    );
    assert_eq!(
        format_http_error(None, "Connection error: x"),
        "Connection error: x"
    );
    let long = format!("429 {}", "x".repeat(4010));
    assert!(format_http_error(Some(429), &long).ends_with("... [truncated 10 chars]"));
    assert_eq!(
        tool_result_text("", true, false, false),
        "(image omitted: model does not support images)"
    );
}

#[test]
fn streams_over_http_and_reports_status_errors() {
    let (base, server) = serve_once("200 OK", "", fixture("text.sse"));
    let mut m = model();
    m.base_url = base;
    let ctx = Context {
        messages: vec![Message::user_text("hi")],
        ..Default::default()
    };
    let opts = StreamOptions {
        api_key: "mk-test".into(),
        ..Default::default()
    };
    let events: Vec<AssistantEvent> = stream(&m, &ctx, &opts, Abort::new()).iter().collect();
    match events.last() {
        Some(AssistantEvent::Done { message, .. }) => assert_eq!(message.text(), "Hello, world! ✓"),
        other => panic!("{other:?}"),
    }
    let req = server.join().unwrap();
    assert!(req.starts_with("POST /v1/chat/completions "), "{req}");
    assert!(req
        .to_ascii_lowercase()
        .contains("authorization: bearer mk-test"));

    let body = br#"{"object":"error","message":"Unauthorized","type":"invalid_request_error"}"#;
    let (base, server) = serve_once("401 Unauthorized", "", body.to_vec());
    m.base_url = base;
    let events: Vec<AssistantEvent> = stream(&m, &ctx, &opts, Abort::new()).iter().collect();
    match events.last() {
        Some(AssistantEvent::Error { error, .. }) => assert_eq!(
            error.error_message.as_deref(),
            Some("Mistral API error (401): Unauthorized")
        ),
        other => panic!("{other:?}"),
    }
    server.join().unwrap();
}

#[test]
fn hot_text_chunks_read_as_the_full_reading_does() {
    for name in ["text.sse", "thinking.sse", "tool_call.sse", "length.sse"] {
        let hot = String::from_utf8(fixture(name)).unwrap();
        // A duplicate `id` (the last one counts) makes the hot shape refuse every chunk.
        let cold = hot.replace("{\"id\":", "{\"id\":null,\"id\":");
        let count = |s: &str| {
            s.lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .filter(|d| serde_json::from_str::<MistralChunk>(d).is_ok())
                .count()
        };
        assert!(count(&hot) >= 1, "{name}");
        assert_eq!(count(&cold), 0, "{name}");
        let (a, b) = (
            run_all_chunkings(hot.as_bytes(), &model(), parse_stream),
            run_all_chunkings(cold.as_bytes(), &model(), parse_stream),
        );
        assert_eq!(a.trace, b.trace, "{name}");
        let mut m = b.message.clone();
        m.timestamp = a.message.timestamp;
        assert_eq!(m, a.message, "{name}");
    }
}
