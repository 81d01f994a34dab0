//! Tests of the anthropic provider: fixtures at every chunk boundary, request bodies, errors.

use super::*;
use crate::ai::providers::anthropic::test_support::*;

fn model() -> Model {
    test_model(
        "claude-sonnet-4-5",
        "anthropic-messages",
        "anthropic",
        "https://api.anthropic.com",
    )
}

fn run(name: &str, sizes: &[usize]) -> Vec<AssistantEvent> {
    let m = model();
    run_parser(&fixture("anthropic", name), sizes, &m, |r, w| {
        parse_stream_with(r, w, &m.cost, None)
    })
}

#[test]
fn parses_plain_text() {
    let events = run("text.sse", &[usize::MAX]);
    assert_eq!(
        summary(&events),
        [
            "start",
            "text_start 0",
            "text_delta 0 Hello, ",
            "text_delta 0 wörld ✓",
            "text_end 0 Hello, wörld ✓",
            "done stop",
        ]
    );
    let m = final_message(&events);
    assert_eq!(m.text(), "Hello, wörld ✓");
    assert_eq!(m.response_id.as_deref(), Some("msg_01TextFixture"));
    assert_eq!(m.stop_reason, StopReason::Stop);
    let u = m.usage;
    assert_eq!(
        (u.input, u.output, u.cache_read, u.cache_write),
        (12, 7, 200, 100)
    );
    assert_eq!(u.total_tokens, 319);
    // 1.x writes the one-hour share of the cache writes (none here) after `cost`.
    assert_eq!(u.cache_write_1h, Some(0));
    let line = serde_json::to_string(&u).unwrap();
    assert!(line.ends_with(r#"},"cacheWrite1h":0}"#), "{line}");
    assert!(
        (u.cost.total - (12.0 * 3.0 + 7.0 * 15.0 + 200.0 * 0.3 + 100.0 * 3.75) / 1e6).abs() < 1e-12
    );
}

#[test]
fn the_start_event_carries_the_input_usage_of_message_start() {
    // pi's message_start shows Anthropic's input usage, not zeros, and (1.x) the message id.
    let events = run("text.sse", &[usize::MAX]);
    let Some(AssistantEvent::Start { partial }) = events.first() else {
        panic!("no start event first");
    };
    assert_eq!(partial.response_id.as_deref(), Some("msg_01TextFixture"));
    assert_eq!(partial.usage.input, 12);
}

#[test]
fn parses_thinking_signature_and_redacted_thinking() {
    let events = run("thinking.sse", &[usize::MAX]);
    assert_eq!(
        summary(&events),
        [
            "start",
            "thinking_start 0",
            "thinking_delta 0 Let me think",
            "thinking_delta 0  about it.",
            "thinking_end 0 Let me think about it.",
            "thinking_start 1",
            "thinking_end 1 [Reasoning redacted]",
            "text_start 2",
            "text_delta 2 The answer is 42.",
            "text_end 2 The answer is 42.",
            "done length",
        ]
    );
    let m = final_message(&events);
    let Content::Thinking(t) = &m.content[0] else {
        panic!("thinking expected")
    };
    assert_eq!(
        t.thinking_signature.as_deref(),
        Some("EqQBCkgIARABGAIiQL2sig==")
    );
    assert!(!t.redacted);
    let Content::Thinking(r) = &m.content[1] else {
        panic!("redacted thinking expected")
    };
    assert!(r.redacted);
    assert_eq!(r.thinking_signature.as_deref(), Some("EmwKAhgBEgyredacted"));
    assert_eq!(m.usage.output, 30);
    assert_eq!(m.stop_reason, StopReason::Length);
}

#[test]
fn parses_tool_call_argument_fragments() {
    let events = run("tool_call.sse", &[usize::MAX]);
    assert_eq!(
        summary(&events),
        [
            "start",
            "text_start 0",
            "text_delta 0 Reading it.",
            "text_end 0 Reading it.",
            "toolcall_start 1",
            "toolcall_delta 1 ",
            "toolcall_delta 1 {\"path\": \"sr",
            "toolcall_delta 1 c/main.rs\", \"lim",
            "toolcall_delta 1 it\": 20}",
            "toolcall_end 1 toolu_01AbC read {\"path\":\"src/main.rs\",\"limit\":20}",
            "done toolUse",
        ]
    );
    // A listener rebuilding the message sees the partial arguments while they stream.
    let mut builder = None;
    for ev in &events {
        match ev {
            AssistantEvent::Start { partial } => {
                builder = Some(crate::ai::stream::MessageBuilder::new(partial.clone()))
            }
            AssistantEvent::ToolCallDelta { delta, .. } if delta.ends_with("sr") => {
                let b = builder.as_mut().unwrap();
                b.apply(ev);
                let json = b.tool_json(1).unwrap();
                assert_eq!(
                    crate::ai::partial_json::parse_partial_json(json),
                    json!({"path": "sr"})
                );
            }
            _ => builder.as_mut().unwrap().apply(ev),
        }
    }
    let m = final_message(&events);
    assert_eq!(m.stop_reason, StopReason::ToolUse);
    assert_eq!(m.tool_calls().count(), 1);
}

#[test]
fn in_stream_error_event_fails_readably() {
    let events = run("error.sse", &[usize::MAX]);
    assert_eq!(
        summary(&events),
        [
            "start",
            "text_start 0",
            "text_delta 0 Partial",
            "error error Overloaded"
        ]
    );
    let m = final_message(&events);
    assert_eq!(m.text(), "Partial");
    assert_eq!(m.usage.input, 9);
}

#[test]
fn truncated_stream_is_an_error() {
    let events = run("truncated.sse", &[usize::MAX]);
    let last = summary(&events).pop().unwrap();
    assert!(
        last.starts_with("error error Connection lost: stream ended"),
        "{last}"
    );
    assert_eq!(final_message(&events).text(), "Half a sen");
}

#[test]
fn malformed_chunk_names_the_event() {
    let events = run("malformed.sse", &[usize::MAX]);
    let last = summary(&events).pop().unwrap();
    assert!(
        last.starts_with("error error Could not parse Anthropic SSE event content_block_delta"),
        "{last}"
    );
}

#[test]
fn fixtures_parse_identically_at_any_chunking() {
    for name in [
        "text.sse",
        "thinking.sse",
        "tool_call.sse",
        "error.sse",
        "truncated.sse",
        "malformed.sse",
    ] {
        let whole = run(name, &[usize::MAX]);
        for sizes in CHUNKINGS {
            let got = run(name, sizes);
            assert_eq!(summary(&got), summary(&whole), "{name} at {sizes:?}");
            assert_eq!(
                untimed(final_message(&got)),
                untimed(final_message(&whole)),
                "{name} at {sizes:?}"
            );
        }
    }
}

#[test]
fn unknown_stop_reason_is_an_error() {
    let sse = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{}}}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"weird\"},\"usage\":{}}\n\n";
    let m = model();
    let events = run_parser(sse.as_bytes(), &[usize::MAX], &m, |r, w| parse_stream(r, w));
    assert_eq!(
        summary(&events).pop().unwrap(),
        "error error Unhandled stop reason: weird"
    );
}

fn conversation() -> Context {
    let other = AssistantMessage {
        content: vec![
            Content::Thinking(ThinkingContent {
                thinking: "foreign thoughts".into(),
                thinking_signature: Some("rs_1".into()),
                redacted: false,
            }),
            Content::ToolCall(ToolCall {
                id: "call_abc|fc_123".into(),
                name: "read".into(),
                arguments: json!({"path": "a.txt"}),
                thought_signature: None,
            }),
        ],
        stop_reason: StopReason::ToolUse,
        ..AssistantMessage::empty(&test_model("gpt-5", "openai-responses", "openai", ""))
    };
    let same = AssistantMessage {
        content: vec![
            Content::Thinking(ThinkingContent {
                thinking: "my thoughts".into(),
                thinking_signature: Some("sig-1".into()),
                redacted: false,
            }),
            Content::Text(TextContent {
                text: "Two calls.".into(),
                text_signature: None,
            }),
            Content::ToolCall(ToolCall {
                id: "toolu_1".into(),
                name: "bash".into(),
                arguments: json!({"command": "ls"}),
                thought_signature: None,
            }),
            Content::ToolCall(ToolCall {
                id: "toolu_2".into(),
                name: "read".into(),
                arguments: json!({"path": "img.png"}),
                thought_signature: None,
            }),
        ],
        stop_reason: StopReason::ToolUse,
        ..AssistantMessage::empty(&model())
    };
    Context {
        system_prompt: Some("You are pi.".into()),
        messages: vec![
            Message::user_text("read a.txt"),
            Message::Assistant(other),
            tool_result("call_abc|fc_123", "read", vec![Content::text("A")], false),
            Message::user_text("now list and look"),
            Message::Assistant(same),
            tool_result("toolu_1", "bash", vec![Content::text("boom")], true),
            tool_result(
                "toolu_2",
                "read",
                vec![Content::Image(ImageContent {
                    data: "iVBOR".into(),
                    mime_type: "image/png".into(),
                })],
                false,
            ),
        ],
        tools: vec![read_tool(), bash_tool()],
    }
}

#[test]
fn build_request_replays_tool_calls_and_grouped_results() {
    let mut opts = StreamOptions {
        api_key: "sk-ant-api03-key".into(),
        ..Default::default()
    };
    opts.headers.push(("X-Extra".into(), "1".into()));
    let (url, headers, body) = build_request(&model(), &conversation(), &opts);
    assert_eq!(url, "https://api.anthropic.com/v1/messages");
    assert_eq!(
        headers,
        pairs(&[
            ("accept", "application/json"),
            ("anthropic-dangerous-direct-browser-access", "true"),
            ("anthropic-beta", "interleaved-thinking-2025-05-14"),
            ("X-Extra", "1"),
            ("x-api-key", "sk-ant-api03-key"),
            ("anthropic-version", "2023-06-01"),
        ])
    );
    let eph = json!({"type": "ephemeral"});
    let expected = json!({
        "model": "claude-sonnet-4-5",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "read a.txt"}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "call_abc_fc_123", "name": "read", "input": {"path": "a.txt"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_abc_fc_123", "content": "A", "is_error": false},
            ]},
            {"role": "user", "content": [{"type": "text", "text": "now list and look"}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "my thoughts", "signature": "sig-1"},
                {"type": "text", "text": "Two calls."},
                {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}},
                {"type": "tool_use", "id": "toolu_2", "name": "read", "input": {"path": "img.png"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "boom", "is_error": true},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": [
                    {"type": "text", "text": "(see attached image)"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}},
                ], "is_error": false, "cache_control": eph},
            ]},
        ],
        "max_tokens": 32000,
        "stream": true,
        "system": [{"type": "text", "text": "You are pi.", "cache_control": eph}],
        "tools": [
            {"name": "read", "description": "Read a file", "eager_input_streaming": true,
             "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
            {"name": "bash", "description": "Run a command", "eager_input_streaming": true,
             "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
             "cache_control": eph},
        ],
        "thinking": {"type": "disabled"},
    });
    assert_eq!(body, expected);
}

#[test]
fn build_request_budget_thinking_drops_temperature() {
    let ctx = Context {
        messages: vec![Message::user_text("hi")],
        ..Default::default()
    };
    let opts = StreamOptions {
        api_key: "k".into(),
        reasoning: Some(ThinkingLevel::Medium),
        temperature: Some(0.5),
        ..Default::default()
    };
    let (_, _, body) = build_request(&model(), &ctx, &opts);
    assert_eq!(body["max_tokens"], json!(32000 + 8192));
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 8192, "display": "summarized"})
    );
    assert!(body.get("temperature").is_none());
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [
            {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}
        ]}])
    );
    // Without reasoning the temperature is sent.
    let opts = StreamOptions {
        reasoning: None,
        max_tokens: Some(100),
        ..opts
    };
    let (_, _, body) = build_request(&model(), &ctx, &opts);
    assert_eq!(body["temperature"], json!(0.5));
    assert_eq!(body["max_tokens"], json!(100));
}

#[test]
fn build_request_adaptive_thinking_with_oauth() {
    let mut m = model();
    m.id = "claude-opus-4-6".into();
    let mut map = Map::new();
    map.insert("xhigh".into(), json!("max"));
    m.thinking_level_map = Some(map);
    let ctx = Context {
        system_prompt: Some("sys".into()),
        messages: vec![Message::user_text("hi")],
        tools: vec![read_tool()],
    };
    let opts = StreamOptions {
        api_key: "sk-ant-oat01-token".into(),
        reasoning: Some(ThinkingLevel::Xhigh),
        ..Default::default()
    };
    let (_, headers, body) = build_request(&m, &ctx, &opts);
    assert!(headers.contains(&(
        "anthropic-beta".into(),
        "claude-code-20250219,oauth-2025-04-20".into()
    )));
    assert!(headers.contains(&("authorization".into(), "Bearer sk-ant-oat01-token".into())));
    assert!(!headers.iter().any(|(k, _)| k == "x-api-key"));
    assert_eq!(
        body["thinking"],
        json!({"type": "adaptive", "display": "summarized"})
    );
    assert_eq!(body["output_config"], json!({"effort": "max"}));
    assert_eq!(body["system"][0]["text"], json!(CLAUDE_CODE_IDENTITY));
    assert_eq!(body["system"][1]["text"], json!("sys"));
    assert_eq!(body["tools"][0]["name"], json!("Read"));
    assert_eq!(body["max_tokens"], json!(32000));
}

#[test]
fn abort_ends_the_stream_as_aborted() {
    let m = model();
    let events = run_parser(&fixture("anthropic", "text.sse"), &[1], &m, |r, w| {
        w.abort.abort();
        parse_stream(r, w)
    });
    assert_eq!(
        summary(&events),
        ["start", "error aborted Request was aborted"]
    );
}

#[test]
fn stream_posts_to_the_messages_endpoint() {
    let (base, server) = serve_once("200 OK", "", fixture("anthropic", "tool_call.sse"));
    let mut m = model();
    m.base_url = base;
    let ctx = Context {
        messages: vec![Message::user_text("hi")],
        ..Default::default()
    };
    let opts = StreamOptions {
        api_key: "sk-test".into(),
        ..Default::default()
    };
    let events: Vec<AssistantEvent> = stream(&m, &ctx, &opts, Abort::new()).iter().collect();
    assert_eq!(summary(&events).pop().unwrap(), "done toolUse");
    let req = server.join().unwrap().to_ascii_lowercase();
    assert!(req.starts_with("post /v1/messages "), "{req}");
    assert!(req.contains("x-api-key: sk-test"));
    assert!(req.contains("anthropic-version: 2023-06-01"));
    assert!(req.contains("\"stream\":true"));
}

#[test]
fn stream_reports_http_errors_with_retry_after() {
    let body = br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let (base, server) = serve_once("529 Overloaded", "retry-after: 2\r\n", body.to_vec());
    let mut m = model();
    m.base_url = base;
    let events: Vec<AssistantEvent> = stream(
        &m,
        &Context::default(),
        &StreamOptions::default(),
        Abort::new(),
    )
    .iter()
    .collect();
    server.join().unwrap();
    match events.last() {
        Some(AssistantEvent::Error { error, cause, .. }) => {
            assert_eq!(error.error_message.as_deref(), Some("529 Overloaded"));
            assert_eq!(
                cause,
                &Some(ProviderError::Provider {
                    status: Some(529),
                    message: "529 Overloaded".into(),
                    retry_after_ms: Some(2000)
                }),
                "a 529 is decided by its words, as pi decides it"
            );
        }
        other => panic!("{other:?}"),
    }
}

/// The typed error the stream ends with when the server answers `status` with `body`.
fn cause_of_answer(status: &str, headers: &str, body: &str) -> Option<ProviderError> {
    let (base, server) = serve_once(status, headers, body.as_bytes().to_vec());
    let mut m = model();
    m.base_url = base;
    let events: Vec<AssistantEvent> = stream(
        &m,
        &Context::default(),
        &StreamOptions::default(),
        Abort::new(),
    )
    .iter()
    .collect();
    server.join().unwrap();
    match events.last() {
        Some(AssistantEvent::Error { cause, .. }) => cause.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_status_and_body_type_the_error_at_the_edge() {
    let limited = cause_of_answer(
        "429 Too Many Requests",
        "retry-after: 3\r\n",
        r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#,
    );
    assert_eq!(
        limited,
        Some(ProviderError::RateLimited {
            message: "429 Number of request tokens has exceeded your per-minute rate limit".into(),
            retry_after_ms: Some(3000)
        })
    );
    let overflow = cause_of_answer(
        "400 Bad Request",
        "",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
    );
    assert!(
        matches!(overflow, Some(ProviderError::Overflow { .. })),
        "{overflow:?}"
    );
    let auth = cause_of_answer(
        "401 Unauthorized",
        "",
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
    );
    assert!(matches!(auth, Some(ProviderError::Auth { .. })), "{auth:?}");
}

#[test]
fn cut_anywhere_never_panics_and_always_terminates() {
    let m = model();
    for name in ["thinking.sse", "tool_call.sse"] {
        let bytes = fixture("anthropic", name);
        // An event needs its closing blank line (SSE spec), so any cut short of the end is
        // an incomplete stream.
        let complete = bytes.len();
        for cut in 0..bytes.len() {
            let events = run_parser(&bytes[..cut], &[usize::MAX], &m, |r, w| parse_stream(r, w));
            match events.last() {
                Some(AssistantEvent::Error {
                    reason: StopReason::Error,
                    ..
                }) if cut < complete => {}
                Some(AssistantEvent::Done { .. }) if cut >= complete => {}
                other => panic!("{name} cut at {cut}: {other:?}"),
            }
        }
    }
}

#[test]
fn normalizes_foreign_tool_call_ids() {
    assert_eq!(normalize_id("call_abc|fc/1.2"), "call_abc_fc_1_2");
    assert_eq!(normalize_id(&"x".repeat(80)).len(), 64);
}

#[test]
fn one_hour_cache_writes_are_read_and_priced_at_twice_the_input_rate() {
    let mut u = Usage::default();
    let price = ModelCost {
        input: 3.0,
        output: 15.0,
        cache_read: 0.3,
        cache_write: 3.75,
    };
    let wire = serde_json::json!({"input_tokens": 10, "cache_creation_input_tokens": 100,
        "cache_creation": {"ephemeral_5m_input_tokens": 60, "ephemeral_1h_input_tokens": 40}});
    read_usage(&mut u, &wire, &price);
    assert_eq!((u.cache_write, u.cache_write_1h), (100, Some(40)));
    let want = (60.0 * 3.75 + 40.0 * 3.0 * 2.0) / 1e6;
    assert!((u.cost.cache_write - want).abs() < 1e-15, "{u:?}");
    // Other providers' usage has no such field.
    let line = serde_json::to_string(&Usage::default()).unwrap();
    assert!(!line.contains("cacheWrite1h"), "{line}");
}

#[test]
fn hot_block_deltas_read_as_the_full_reading_does() {
    // A duplicate `type` (the last one counts) makes the hot shape refuse an event the full
    // reading takes as before.
    let m = model();
    for name in ["text.sse", "thinking.sse", "tool_call.sse"] {
        let hot = String::from_utf8(fixture("anthropic", name)).unwrap();
        let cold = hot.replace(
            "{\"type\":\"content_block_delta\",",
            "{\"type\":\"x\",\"type\":\"content_block_delta\",",
        );
        // (`message_delta` reads as the shape too; the parser checks the type.)
        let refused =
            hot_lines::<AnthropicBlockDelta>(&hot) - hot_lines::<AnthropicBlockDelta>(&cold);
        assert!(refused >= 2, "{name}");
        assert_same_reading(hot.as_bytes(), cold.as_bytes(), &m, |r, w| {
            parse_stream_with(r, w, &m.cost, None)
        });
    }
}
