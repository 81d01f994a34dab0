//! Tests of the openai_completions provider: fixtures at every chunk boundary, request bodies, errors.

use super::*;
use crate::ai::providers::openai_compat::test_support::*;

fn fixture(name: &str) -> Vec<u8> {
    let p = format!(
        "{}/fixtures/openai-completions/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// Runs a fixture at every chunking and checks all runs agree; returns one run.
fn run(name: &str) -> Run {
    run_all_chunkings(
        &fixture(name),
        &test_model("openai-completions"),
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
    assert_eq!(m.text(), "Hello, world! ✓");
    assert_eq!(m.stop_reason, StopReason::Stop);
    assert_eq!(m.response_id.as_deref(), Some("chatcmpl-AbC123"));
    assert_eq!(m.response_model.as_deref(), Some("mock-model-2025-01-01"));
    assert_eq!(
        (m.usage.input, m.usage.output, m.usage.total_tokens),
        (120, 5, 125)
    );
    // pi 1.x keeps the provider's own stop reason and the reasoning-token count.
    assert_eq!(m.extra["rawStopReason"], "stop");
    assert_eq!(m.usage.reasoning, Some(0));
    let line = serde_json::to_string(&m.usage).unwrap();
    assert!(
        line.contains(r#""cacheWrite":0,"reasoning":0,"totalTokens":125"#),
        "{line}"
    );
}

#[test]
fn the_start_event_carries_the_first_chunks_response_id() {
    // pi 1.x's message_start already shows the completion id and the served model.
    let m = test_model("openai-completions");
    let (tx, rx) = crossbeam_channel::unbounded();
    let mut w = StreamWriter::new(tx, &m, Abort::new());
    parse_stream(&fixture("text.sse")[..], &mut w).unwrap();
    let Ok(AssistantEvent::Start { partial }) = rx.try_recv() else {
        panic!("no start event first");
    };
    assert_eq!(partial.response_id.as_deref(), Some("chatcmpl-AbC123"));
    assert_eq!(
        partial.response_model.as_deref(),
        Some("mock-model-2025-01-01")
    );
}

#[test]
fn an_empty_stream_still_starts_before_it_fails() {
    let m = test_model("openai-completions");
    let (tx, rx) = crossbeam_channel::unbounded();
    let mut w = StreamWriter::new(tx, &m, Abort::new());
    assert!(parse_stream(&b""[..], &mut w).is_err());
    assert!(matches!(rx.try_recv(), Ok(AssistantEvent::Start { .. })));
}

#[test]
fn reasoning_then_text_with_cached_usage() {
    let r = run("reasoning.sse");
    assert_eq!(
        r.trace,
        [
            "start",
            "thinking_start 0",
            "thinking_delta 0 Let me th",
            "thinking_delta 0 ink.",
            "text_start 1",
            "text_delta 1 The answer",
            "text_delta 1  is 4.",
            "thinking_end 0 Let me think.",
            "text_end 1 The answer is 4.",
            "done stop",
        ]
    );
    let m = r.message;
    match &m.content[0] {
        Content::Thinking(t) => {
            assert_eq!(t.thinking, "Let me think.");
            assert_eq!(t.thinking_signature.as_deref(), Some("reasoning_content"));
        }
        other => panic!("expected thinking, got {other:?}"),
    }
    let u = m.usage;
    assert_eq!(
        (u.input, u.cache_read, u.output, u.total_tokens),
        (200, 800, 40, 1040)
    );
}

#[test]
fn tool_calls_from_fragments() {
    let r = run("tool_call.sse");
    assert_eq!(
        r.trace,
        [
            "start",
            "text_start 0",
            "text_delta 0 Reading.",
            "toolcall_start 1",
            "toolcall_delta 1 ",
            "toolcall_delta 1 {\"path\":",
            "toolcall_delta 1  \"src/ma",
            "toolcall_delta 1 in.rs\"}",
            "toolcall_start 2",
            "toolcall_delta 2 ",
            "toolcall_delta 2 {}",
            "text_end 0 Reading.",
            "toolcall_end 1 call_read1 read {\"path\":\"src/main.rs\"}",
            "toolcall_end 2 call_ls2 ls {}",
            "done toolUse",
        ]
    );
    assert_eq!(r.message.stop_reason, StopReason::ToolUse);
    let calls: Vec<_> = r.message.tool_calls().cloned().collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].arguments, json!({"path": "src/main.rs"}));
}

#[test]
fn in_stream_error_chunk() {
    let r = run("error.sse");
    assert_eq!(r.trace.last().unwrap(), "error error");
    assert_eq!(
        r.message.error_message.as_deref(),
        Some("The server had an error while processing your request.")
    );
    assert_eq!(r.message.text(), "Part");
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
fn finish_reason_without_done_is_accepted() {
    let r = run("length_no_done.sse");
    assert_eq!(r.message.stop_reason, StopReason::Length);
    assert_eq!(r.trace.last().unwrap(), "done length");
    assert_eq!(r.message.usage.total_tokens, 13);
}

#[test]
fn content_filter_is_an_error() {
    let r = run("content_filter.sse");
    assert_eq!(r.message.stop_reason, StopReason::Error);
    assert_eq!(
        r.message.error_message.as_deref(),
        Some("Provider finish_reason: content_filter")
    );
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
fn usage_counts_cached_tokens_as_reads_and_writes_apart_like_pi_1_6() {
    let u = parse_usage(&json!({
        "prompt_tokens": 1000, "completion_tokens": 50,
        "prompt_tokens_details": {"cached_tokens": 700, "cache_write_tokens": 200}
    }));
    assert_eq!(
        (u.input, u.cache_read, u.cache_write, u.output),
        (100, 700, 200, 50)
    );
    assert_eq!(u.total_tokens, 1050);
    let u = parse_usage(
        &json!({"prompt_tokens": 90, "completion_tokens": 9, "prompt_cache_hit_tokens": 40}),
    );
    assert_eq!((u.input, u.cache_read), (50, 40));
    // Kimi: a top-level `cached_tokens`, and a top-level `reasoning_tokens`.
    let u = parse_usage(&json!({"prompt_tokens": 90, "completion_tokens": 9,
        "cached_tokens": 30, "reasoning_tokens": 4}));
    assert_eq!((u.input, u.cache_read, u.reasoning), (60, 30, Some(4)));
}

#[test]
fn reported_usage_is_marked_and_openrouter_bills_its_own_total() {
    let plain = reported_usage(&json!({"prompt_tokens": 10, "completion_tokens": 2}));
    assert_eq!(plain.cost.total_from_provider, Some(false));
    let line = serde_json::to_string(&plain.cost).unwrap();
    assert!(line.ends_with(r#","totalFromProvider":false}"#), "{line}");
    // Not reported at all: no mark, as 1.6.0 prices only what a provider reported.
    assert_eq!(Usage::default().cost.total_from_provider, None);

    let mut billed = reported_usage(
        &json!({"prompt_tokens": 10, "completion_tokens": 2, "cost": 0.25, "is_byok": false}),
    );
    assert_eq!(
        (billed.cost.total, billed.cost.total_from_provider),
        (0.25, Some(true))
    );
    // Pricing from the catalog keeps the billed total.
    billed.apply_pricing(&ModelCost {
        input: 1.0,
        output: 1.0,
        cache_read: 0.0,
        cache_write: 0.0,
    });
    assert_eq!(billed.cost.total, 0.25);
    let byok = reported_usage(&json!({"cost": 0.1, "is_byok": true,
        "cost_details": {"upstream_inference_cost": null,
            "upstream_inference_prompt_cost": 0.2, "upstream_inference_completions_cost": 0.3}}));
    assert!((byok.cost.total - 0.6).abs() < 1e-12);
    assert_eq!(byok.cost.total_from_provider, Some(true));
    // Incomplete accounting keeps the catalog price.
    let partial = reported_usage(&json!({"cost": 0.1, "is_byok": true}));
    assert_eq!(partial.cost.total_from_provider, Some(false));
}

fn conversation() -> Context {
    let model = test_model("openai-completions");
    let mut a = AssistantMessage::empty(&model);
    a.content = vec![
        Content::text("Let me look."),
        Content::ToolCall(ToolCall {
            id: "call_1".into(),
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
                tool_call_id: "call_1".into(),
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
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }],
    }
}

#[test]
fn request_matches_observed_pi_body() {
    let model = test_model("openai-completions");
    let opts = StreamOptions {
        api_key: "sk-test".into(),
        ..Default::default()
    };
    let (url, headers, body) = build_request(&model, &conversation(), &opts);
    assert_eq!(url, "http://127.0.0.1:8765/v1/chat/completions");
    assert!(headers.contains(&("Authorization".into(), "Bearer sk-test".into())));
    let expected = json!({
        "model": "mock-model",
        "messages": [
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": [{"type": "text", "text": "read a.txt"}]},
            {"role": "assistant", "content": "Let me look.", "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "read", "arguments": "{\"path\":\"a.txt\"}"}}
            ]},
            {"role": "tool", "content": "hello", "tool_call_id": "call_1"}
        ],
        "stream": true,
        "stream_options": {"include_usage": true},
        "store": false,
        "max_completion_tokens": 16384,
        "tools": [{"type": "function", "function": {
            "name": "read", "description": "Read a file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}
        }}]
    });
    assert_eq!(
        body, expected,
        "no `strict` unless the endpoint supports it (pi 1.x)"
    );
    let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "model",
            "messages",
            "stream",
            "stream_options",
            "store",
            "max_completion_tokens",
            "tools"
        ]
    );
}

#[test]
fn compat_overrides_and_detection() {
    let mut model = test_model("openai-completions");
    model.reasoning = true;
    let ctx = conversation();
    let opts = StreamOptions {
        api_key: "k".into(),
        max_tokens: Some(999),
        reasoning: Some(ThinkingLevel::High),
        headers: vec![("X-Extra".into(), "1".into())],
        ..Default::default()
    };
    // pi 1.6.0: other hosts get `system` by default, OpenAI's own API `developer`.
    let (_, _, body) = build_request(&model, &ctx, &opts);
    assert_eq!(body["messages"][0]["role"], "system");
    let mut own = model.clone();
    own.provider = "openai".into();
    let (_, _, body) = build_request(&own, &ctx, &opts);
    assert_eq!(body["messages"][0]["role"], "developer");
    let mut forced = Map::new();
    forced.insert("supportsDeveloperRole".into(), json!(true));
    model.compat = Some(forced);
    let (_, headers, body) = build_request(&model, &ctx, &opts);
    assert_eq!(body["messages"][0]["role"], "developer");
    assert_eq!(body["max_completion_tokens"], 999);
    assert_eq!(body["reasoning_effort"], "high");
    assert!(headers.contains(&("X-Extra".into(), "1".into())));

    let mut compat = Map::new();
    compat.insert("maxTokensField".into(), json!("max_tokens"));
    compat.insert("supportsDeveloperRole".into(), json!(false));
    compat.insert("supportsStore".into(), json!(false));
    compat.insert("supportsStrictMode".into(), json!(true));
    compat.insert("requiresToolResultName".into(), json!(true));
    model.compat = Some(compat);
    let (_, _, body) = build_request(&model, &ctx, &opts);
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(body["max_tokens"], 999);
    assert!(body.get("max_completion_tokens").is_none());
    assert!(body.get("store").is_none());
    assert_eq!(body["tools"][0]["function"]["strict"], false);
    assert_eq!(body["messages"][3]["name"], "read");

    let mut moonshot = test_model("openai-completions");
    moonshot.base_url = "https://api.moonshot.ai/v1".into();
    let c = Compat::resolve(&moonshot);
    assert!(c.use_max_tokens_field && !c.supports_store && !c.supports_strict_mode);
    let mut ds = test_model("openai-completions");
    ds.base_url = "https://api.deepseek.com".into();
    ds.reasoning = true;
    let (_, _, body) = build_request(&ds, &Context::default(), &opts);
    assert_eq!(body["thinking"], json!({"type": "enabled"}));
    assert_eq!(body["reasoning_effort"], "high");
}

#[test]
fn foreign_pipe_ids_are_normalized() {
    let model = test_model("openai-completions");
    let mut ctx = conversation();
    if let Message::Assistant(a) = &mut ctx.messages[1] {
        a.provider = "openai".into();
        a.api = "openai-responses".into();
        if let Content::ToolCall(t) = &mut a.content[1] {
            t.id = "call_1|fc_+/=abc".into();
        }
    }
    if let Message::ToolResult(r) = &mut ctx.messages[2] {
        r.tool_call_id = "call_1|fc_+/=abc".into();
    }
    let (_, _, body) = build_request(&model, &ctx, &StreamOptions::default());
    assert_eq!(body["messages"][2]["tool_calls"][0]["id"], "call_1");
    assert_eq!(body["messages"][3]["tool_call_id"], "call_1");
}

#[test]
fn an_empty_tool_result_says_no_output_not_image() {
    // pi 1.x: "(see attached image)" only when the result holds an image.
    let model = test_model("openai-completions");
    let mut ctx = conversation();
    if let Message::ToolResult(r) = &mut ctx.messages[2] {
        r.content = vec![Content::text("")];
    }
    let (_, _, body) = build_request(&model, &ctx, &StreamOptions::default());
    assert_eq!(body["messages"][3]["content"], "(no tool output)");
}

#[test]
fn aborted_stream_reports_aborted() {
    let model = test_model("openai-completions");
    let (tx, rx) = crossbeam_channel::unbounded();
    let abort = Abort::new();
    abort.abort();
    let mut w = StreamWriter::new(tx, &model, abort);
    let data = fixture("text.sse");
    let err = parse_stream(
        Chunked {
            data,
            pos: 0,
            n: 16,
        },
        &mut w,
    )
    .unwrap_err();
    w.fail(err);
    match rx.try_iter().last() {
        Some(AssistantEvent::Error { reason, .. }) => assert_eq!(reason, StopReason::Aborted),
        other => panic!("{other:?}"),
    }
}

#[test]
fn tool_history_without_tools_sends_empty_tools() {
    let model = test_model("openai-completions");
    let mut ctx = conversation();
    ctx.tools.clear();
    let (_, _, body) = build_request(&model, &ctx, &StreamOptions::default());
    assert_eq!(body["tools"], json!([]));
}

#[test]
fn an_empty_reply_names_the_models_window() {
    let e = "Empty reply: the server answered 200 (text/event-stream) and sent no data.";
    assert_eq!(
        with_window(e.into(), 4096).to_string(),
        format!("{e} This model's context window is 4096 tokens.")
    );
    assert_eq!(
        with_window("Connection lost".into(), 4096).to_string(),
        "Connection lost"
    );
}

#[test]
fn replayed_thinking_goes_back_only_under_a_reasoning_field() {
    let model = test_model("openai-completions");
    let compat = Compat::resolve(&model);
    let with_signature = |sig: &str| {
        let mut a = AssistantMessage::empty(&model);
        a.content = vec![
            Content::Thinking(ThinkingContent {
                thinking: "hidden thoughts".into(),
                thinking_signature: Some(sig.into()),
                redacted: false,
            }),
            Content::text("visible"),
        ];
        convert_assistant(&model, &a, &compat).unwrap()
    };
    let m = with_signature("reasoning_content");
    assert_eq!(m["reasoning_content"], "hidden thoughts");
    assert_eq!(m["content"], "visible");
    // Another provider's signature is not a field name (pi 1.x sends nothing then).
    let m = with_signature("sig");
    assert!(m.get("sig").is_none(), "{m}");
    assert_eq!(m["content"], "visible");
}

/// `data`'s chunks, each made to miss the hot path in a way the full reading ignores.
fn cold_copy(data: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(data)
        .replace("\"delta\":{}", "\"delta\":{\"reasoning_details\":[]}")
        .replace("\"delta\":{\"", "\"delta\":{\"reasoning_details\":[],\"")
        .into_bytes()
}

fn hot_chunks(data: &[u8]) -> usize {
    let text = String::from_utf8_lossy(data);
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| serde_json::from_str::<HotChunk>(d).is_ok())
        .count()
}

#[test]
fn hot_chunks_read_as_the_full_reading_does() {
    let model = test_model("openai-completions");
    for name in [
        "text.sse",
        "reasoning.sse",
        "tool_call.sse",
        "content_filter.sse",
    ] {
        let hot = fixture(name);
        let cold = cold_copy(&hot);
        assert!(hot_chunks(&hot) >= 2, "{name} takes the hot path");
        assert_eq!(hot_chunks(&cold), 0, "{name} copy misses it");
        let (a, b) = (
            run_all_chunkings(&hot, &model, parse_stream),
            run_all_chunkings(&cold, &model, parse_stream),
        );
        assert_eq!(a.trace, b.trace, "{name}");
        let mut m = b.message.clone();
        m.timestamp = a.message.timestamp;
        assert_eq!(m, a.message, "{name}");
    }
    // Escaped strings, several tool calls by index and id, each reasoning field.
    let chunks = [
        r#"{"id":"r1","model":"m2","choices":[{"delta":{"content":"a\"\u00e9\n"}}]}"#,
        r#"{"choices":[{"delta":{"reasoning":"","reasoning_text":"why"}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"read","arguments":"{\"p"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"c2","function":{"name":"ls"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"id":"c1","function":{"arguments":"\":1}"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]}}]}"#,
        r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
    ];
    let hot: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    let hot = format!("{hot}data: [DONE]\n\n").into_bytes();
    let cold = cold_copy(&hot);
    assert_eq!(hot_chunks(&hot), chunks.len() - 1);
    let (a, b) = (
        run_all_chunkings(&hot, &model, parse_stream),
        run_all_chunkings(&cold, &model, parse_stream),
    );
    assert_eq!(a.trace, b.trace);
    assert!(
        a.trace.contains(&"text_delta 0 a\"é\n".to_string()),
        "{:?}",
        a.trace
    );
    assert!(
        a.trace
            .contains(&"toolcall_end 2 c1 read {\"p\":1}".to_string()),
        "{:?}",
        a.trace
    );
    assert!(
        a.trace.contains(&"toolcall_end 3 c2 ls {}".to_string()),
        "{:?}",
        a.trace
    );
    let mut m = b.message.clone();
    m.timestamp = a.message.timestamp;
    assert_eq!(m, a.message);
    assert_eq!(a.message.response_id.as_deref(), Some("r1"));
}

/// The assistant message as the body carries it (written, then read back).
fn convert_assistant(model: &Model, a: &AssistantMessage, compat: &Compat) -> Option<Value> {
    assistant_is_sent(a, compat).then(|| {
        let mut out = Vec::new();
        write_assistant(&mut out, model, a, compat);
        serde_json::from_slice(&out).unwrap()
    })
}

/// A conversation with every kind of content: text and image prompts, thinking (signed,
/// unsigned, blank), tool calls with and without text, tool results with text, several
/// texts, images and nothing, a reply from another model, an aborted one, characters JSON
/// escapes.
fn rich_conversation(model: &Model) -> Context {
    let other = {
        let mut m = model.clone();
        m.id = "other-model".into();
        m.provider = "elsewhere".into();
        m
    };
    let image = |data: &str| {
        Content::Image(ImageContent {
            data: data.into(),
            mime_type: "image/png".into(),
        })
    };
    let thinking = |text: &str, sig: Option<&str>| {
        Content::Thinking(ThinkingContent {
            thinking: text.into(),
            thinking_signature: sig.map(String::from),
            redacted: false,
        })
    };
    let call = |id: &str, sig: Option<&str>| {
        Content::ToolCall(ToolCall {
            id: id.into(),
            name: "bash".into(),
            arguments: json!({"command": "printf 'a\\tb\"c'", "n": 1.5}),
            thought_signature: sig.map(String::from),
        })
    };
    let result = |id: &str, content: Vec<Content>| {
        Message::ToolResult(ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "bash".into(),
            content,
            details: None,
            is_error: false,
            duration_ms: None,
            timestamp: 0,
            extra: Extra::new(),
        })
    };
    let reply = |m: &Model, content: Vec<Content>, stop: StopReason| {
        let mut a = AssistantMessage::empty(m);
        a.content = content;
        a.stop_reason = stop;
        Message::Assistant(a)
    };
    Context {
        system_prompt: Some("Be \"brief\".\n\u{1}é 日本 🙂".into()),
        messages: vec![
            Message::user_text("plain\ttext \\ here"),
            Message::User(UserMessage {
                content: UserContent::Blocks(vec![
                    Content::text("look at this"),
                    image("iVBORw0KGgo="),
                ]),
                timestamp: 0,
                extra: Extra::new(),
            }),
            reply(
                model,
                vec![
                    thinking("first I think", Some("reasoning_content")),
                    thinking("  ", None),
                    thinking("then more", None),
                    Content::text("Running it."),
                    Content::text("   "),
                    call("call_1", None),
                    call(
                        "call_2",
                        Some(r#"{"type":"reasoning.encrypted","data":"x"}"#),
                    ),
                ],
                StopReason::ToolUse,
            ),
            result(
                "call_1",
                vec![
                    Content::text("line 1"),
                    Content::text(""),
                    Content::text("l\u{7f}3"),
                ],
            ),
            result("call_2", vec![image("AAAA"), Content::text("")]),
            reply(model, vec![call("call_3", None)], StopReason::ToolUse),
            result("call_3", vec![image("BBBB")]),
            reply(
                &other,
                vec![
                    thinking("their thoughts", Some("sig")),
                    call("toolu|9", None),
                ],
                StopReason::ToolUse,
            ),
            result("toolu|9", vec![]),
            reply(model, vec![Content::text("partial")], StopReason::Aborted),
            reply(
                model,
                vec![thinking("only thinking", None)],
                StopReason::Stop,
            ),
            Message::user_text("and now?"),
            reply(model, vec![Content::text("Done.")], StopReason::Stop),
        ],
        tools: Vec::new(),
    }
}

/// Issue 35: the messages written straight from the typed conversation are byte for byte
/// what the `Value` tree pi built before printed, for every compat flag that shapes them.
#[test]
fn written_messages_match_the_value_tree_byte_for_byte() {
    let mut model = test_model("openai-completions");
    let base = Compat::resolve(&model);
    let mut variants = vec![base.clone()];
    let mut c = base.clone();
    c.requires_thinking_as_text = true;
    variants.push(c);
    let mut c = base.clone();
    c.requires_assistant_after_tool_result = true;
    c.requires_tool_result_name = true;
    variants.push(c);
    let mut c = base.clone();
    c.requires_reasoning_content_on_assistant_messages = true;
    c.supports_developer_role = !base.supports_developer_role;
    variants.push(c);
    for images in [true, false] {
        if !images {
            model.input = vec!["text".into()];
        }
        let context = rich_conversation(&model);
        for compat in &variants {
            let old = Value::Array(value_body::convert_messages_value(&model, &context, compat))
                .to_string();
            let mut new = Vec::new();
            write_messages(&mut new, &model, &context, compat);
            assert_eq!(String::from_utf8(new).unwrap(), old, "{compat:?}");
        }
    }
}
