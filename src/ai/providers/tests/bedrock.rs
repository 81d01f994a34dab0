//! Tests of the Bedrock provider: event streams built with the frame encoder (text, reasoning,
//! tool-use fragments, usage, exceptions, corruption) at every chunking, request bodies, and
//! whole calls against a one-shot local server with signed and bearer auth.

use super::eventstream::{encode, encode_event};
use super::*;
use crate::ai::providers::anthropic::test_support::*;
use serde_json::json;
use std::collections::HashMap;

const BASE: &str = "https://bedrock-runtime.us-east-1.amazonaws.com";

fn model(id: &str) -> Model {
    let mut m = test_model(id, "bedrock-converse-stream", "amazon-bedrock", BASE);
    m.name = id.into();
    m
}

fn claude() -> Model {
    model("us.anthropic.claude-sonnet-4-20250514-v1:0")
}

fn frames(events: &[(&str, Value)]) -> Vec<u8> {
    events
        .iter()
        .flat_map(|(t, v)| encode_event(t, &v.to_string()))
        .collect()
}

fn text_stream() -> Vec<u8> {
    frames(&[
        ("messageStart", json!({"role": "assistant"})),
        (
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"text": "Hello, "}}),
        ),
        (
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"text": "wörld ✓"}}),
        ),
        ("contentBlockStop", json!({"contentBlockIndex": 0})),
        ("messageStop", json!({"stopReason": "end_turn"})),
        (
            "metadata",
            json!({"usage": {"inputTokens": 20, "outputTokens": 5,
            "cacheReadInputTokens": 10, "cacheWriteInputTokens": 2, "totalTokens": 37},
            "metrics": {"latencyMs": 120}}),
        ),
    ])
}

fn thinking_stream() -> Vec<u8> {
    frames(&[
        ("messageStart", json!({"role": "assistant"})),
        (
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "Let me think"}}}),
        ),
        (
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": " about it."}}}),
        ),
        (
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "c2ln"}}}),
        ),
        (
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "LTE="}}}),
        ),
        ("contentBlockStop", json!({"contentBlockIndex": 0})),
        (
            "contentBlockDelta",
            json!({"contentBlockIndex": 1, "delta": {"text": "42."}}),
        ),
        ("contentBlockStop", json!({"contentBlockIndex": 1})),
        ("messageStop", json!({"stopReason": "max_tokens"})),
        (
            "metadata",
            json!({"usage": {"inputTokens": 40, "outputTokens": 28}}),
        ),
    ])
}

fn tool_stream() -> Vec<u8> {
    frames(&[
        ("messageStart", json!({"role": "assistant"})),
        (
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"text": "Reading."}}),
        ),
        ("contentBlockStop", json!({"contentBlockIndex": 0})),
        (
            "contentBlockStart",
            json!({"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "tooluse_1", "name": "read"}}}),
        ),
        (
            "contentBlockDelta",
            json!({"contentBlockIndex": 1, "delta": {"toolUse": {"input": "{\"path\": \"src/"}}}),
        ),
        (
            "contentBlockDelta",
            json!({"contentBlockIndex": 1, "delta": {"toolUse": {"input": "main.rs\", \"limit\""}}}),
        ),
        (
            "contentBlockDelta",
            json!({"contentBlockIndex": 1, "delta": {"toolUse": {"input": ": 20}"}}}),
        ),
        ("contentBlockStop", json!({"contentBlockIndex": 1})),
        ("messageStop", json!({"stopReason": "tool_use"})),
        (
            "metadata",
            json!({"usage": {"inputTokens": 7, "outputTokens": 9, "totalTokens": 16}}),
        ),
    ])
}

fn run(bytes: &[u8], sizes: &[usize]) -> Vec<AssistantEvent> {
    run_parser(bytes, sizes, &claude(), |r, w| parse_stream(r, w))
}

#[test]
fn text_and_usage() {
    let events = run(&text_stream(), &[usize::MAX]);
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
    let u = final_message(&events).usage;
    assert_eq!(
        (
            u.input,
            u.output,
            u.cache_read,
            u.cache_write,
            u.total_tokens
        ),
        (20, 5, 10, 2, 37)
    );
    let want = (20.0 * 3.0 + 5.0 * 15.0 + 10.0 * 0.3 + 2.0 * 3.75) / 1e6;
    assert!((u.cost.total - want).abs() < 1e-12);
}

#[test]
fn reasoning_with_signature_then_text() {
    let events = run(&thinking_stream(), &[usize::MAX]);
    assert_eq!(
        summary(&events),
        [
            "start",
            "thinking_start 0",
            "thinking_delta 0 Let me think",
            "thinking_delta 0  about it.",
            "thinking_end 0 Let me think about it.",
            "text_start 1",
            "text_delta 1 42.",
            "text_end 1 42.",
            "done length",
        ]
    );
    let m = final_message(&events);
    let Content::Thinking(t) = &m.content[0] else {
        panic!("thinking expected")
    };
    assert_eq!(t.thinking_signature.as_deref(), Some("c2lnLTE="));
    assert_eq!(m.usage.total_tokens, 68);
}

#[test]
fn tool_use_input_arrives_in_fragments() {
    let events = run(&tool_stream(), &[usize::MAX]);
    assert_eq!(
        summary(&events),
        [
            "start",
            "text_start 0",
            "text_delta 0 Reading.",
            "text_end 0 Reading.",
            "toolcall_start 1",
            "toolcall_delta 1 {\"path\": \"src/",
            "toolcall_delta 1 main.rs\", \"limit\"",
            "toolcall_delta 1 : 20}",
            "toolcall_end 1 tooluse_1 read {\"path\":\"src/main.rs\",\"limit\":20}",
            "done toolUse",
        ]
    );
}

#[test]
fn every_chunking_gives_the_same_events() {
    for stream in [text_stream(), thinking_stream(), tool_stream()] {
        let whole = summary(&run(&stream, &[usize::MAX]));
        for sizes in CHUNKINGS {
            assert_eq!(summary(&run(&stream, sizes)), whole, "sizes {sizes:?}");
        }
    }
}

#[test]
fn corrupted_checksum_ends_with_one_clear_error() {
    let mut bytes = text_stream();
    // Inside the second frame's payload: its message CRC no longer matches.
    let first = encode_event("messageStart", &json!({"role": "assistant"}).to_string()).len();
    bytes[first + 40] ^= 0x20;
    for sizes in CHUNKINGS {
        let events = run(&bytes, sizes);
        assert_eq!(
            summary(&events),
            [
                "start",
                "error error Malformed Bedrock event stream: message checksum mismatch"
            ],
            "sizes {sizes:?}"
        );
    }
}

#[test]
fn in_stream_exceptions_are_prefixed_like_pi() {
    let mut bytes = frames(&[("messageStart", json!({"role": "assistant"}))]);
    bytes.extend(encode(
        &[
            (":message-type", "exception"),
            (":exception-type", "throttlingException"),
            (":content-type", "application/json"),
        ],
        br#"{"message":"Too many requests, please wait before trying again."}"#,
    ));
    let events = run(&bytes, &[usize::MAX]);
    assert_eq!(
        summary(&events).last().unwrap(),
        "error error Throttling error: Too many requests, please wait before trying again."
    );
    let mut bytes = frames(&[("messageStart", json!({"role": "assistant"}))]);
    bytes.extend(encode(
        &[
            (":message-type", "exception"),
            (":exception-type", "validationException"),
        ],
        br#"{"message":"Input is too long for requested model."}"#,
    ));
    let m = final_message(&run(&bytes, &[3]));
    assert_eq!(
        m.error_message.as_deref(),
        Some("Validation error: Input is too long for requested model.")
    );
}

#[test]
fn cut_streams_and_odd_stops_are_errors() {
    let full = text_stream();
    let cut = &full[..full.len() - 30];
    let last = summary(&run(cut, &[usize::MAX])).pop().unwrap();
    assert!(last.starts_with("error error Connection lost"), "{last}");
    let no_stop = frames(&[("messageStart", json!({"role": "assistant"}))]);
    let last = summary(&run(&no_stop, &[usize::MAX])).pop().unwrap();
    assert!(last.contains("no messageStop"), "{last}");
    let filtered = frames(&[
        ("messageStart", json!({"role": "assistant"})),
        ("messageStop", json!({"stopReason": "content_filtered"})),
    ]);
    let last = summary(&run(&filtered, &[usize::MAX])).pop().unwrap();
    assert_eq!(
        last,
        "error error The model stopped without an answer (stopReason: content_filtered)"
    );
}

#[test]
fn cut_anywhere_never_panics_and_always_terminates() {
    let full = tool_stream();
    for cut in 0..full.len() {
        let events = run(&full[..cut], &[5]);
        assert!(events.last().unwrap().is_terminal(), "cut {cut}");
        assert_eq!(events.iter().filter(|e| e.is_terminal()).count(), 1);
    }
}

fn no_env(_: &str) -> Option<String> {
    None
}

fn conversation() -> Context {
    let assistant = AssistantMessage {
        content: vec![
            Content::Thinking(ThinkingContent {
                thinking: "hmm".into(),
                thinking_signature: Some("sig".into()),
                redacted: false,
            }),
            Content::text("Looking."),
            Content::ToolCall(ToolCall {
                id: "call|1".into(),
                name: "read".into(),
                arguments: json!({"path": "a"}),
                thought_signature: None,
            }),
            Content::ToolCall(ToolCall {
                id: "call_2".into(),
                name: "bash".into(),
                arguments: json!({"command": "ls"}),
                thought_signature: None,
            }),
        ],
        stop_reason: StopReason::ToolUse,
        ..AssistantMessage::empty(&claude())
    };
    Context {
        system_prompt: Some("Be brief.".into()),
        messages: vec![
            Message::User(UserMessage {
                content: UserContent::Blocks(vec![
                    Content::text("Look"),
                    Content::Image(ImageContent {
                        data: "aGVsbG8=".into(),
                        mime_type: "image/png".into(),
                    }),
                ]),
                timestamp: 0,
                extra: Extra::new(),
            }),
            Message::Assistant(assistant),
            tool_result("call|1", "read", vec![Content::text("file a")], false),
            tool_result("call_2", "bash", vec![Content::text("boom")], true),
        ],
        tools: vec![read_tool()],
    }
}

#[test]
fn request_body_for_claude_with_budget_thinking() {
    let m = claude();
    let opts = StreamOptions {
        reasoning: Some(ThinkingLevel::Medium),
        ..Default::default()
    };
    let body = request::build_body(&m, &conversation(), &opts, &no_env).unwrap();
    assert_eq!(
        body,
        json!({
            "messages": [
                {"role": "user", "content": [
                    {"text": "Look"},
                    {"image": {"format": "png", "source": {"bytes": "aGVsbG8="}}},
                ]},
                {"role": "assistant", "content": [
                    {"reasoningContent": {"reasoningText": {"text": "hmm", "signature": "sig"}}},
                    {"text": "Looking."},
                    {"toolUse": {"toolUseId": "call|1", "name": "read", "input": {"path": "a"}}},
                    {"toolUse": {"toolUseId": "call_2", "name": "bash", "input": {"command": "ls"}}},
                ]},
                {"role": "user", "content": [
                    {"toolResult": {"toolUseId": "call|1", "content": [{"text": "file a"}], "status": "success"}},
                    {"toolResult": {"toolUseId": "call_2", "content": [{"text": "boom"}], "status": "error"}},
                    {"cachePoint": {"type": "default"}},
                ]},
            ],
            "system": [{"text": "Be brief."}, {"cachePoint": {"type": "default"}}],
            "inferenceConfig": {"maxTokens": 32000 + 8192},
            "toolConfig": {"tools": [{"toolSpec": {
                "name": "read",
                "description": "Read a file",
                "inputSchema": {"json": read_tool().parameters},
            }}]},
            "additionalModelRequestFields": {
                "thinking": {"type": "enabled", "budget_tokens": 8192, "display": "summarized"},
                "anthropic_beta": ["interleaved-thinking-2025-05-14"],
            },
        })
    );
}

#[test]
fn foreign_tool_ids_are_normalized_and_adaptive_models_get_effort() {
    let mut ctx = conversation();
    if let Message::Assistant(a) = &mut ctx.messages[1] {
        a.provider = "openai".into();
        a.model = "gpt-5".into();
    }
    let m = model("us.anthropic.claude-opus-4-6-v1");
    let opts = StreamOptions {
        reasoning: Some(ThinkingLevel::Low),
        max_tokens: Some(1000),
        temperature: Some(0.5),
        ..Default::default()
    };
    let env = |k: &str| (k == "PI_CACHE_RETENTION").then(|| "long".to_string());
    let body = request::build_body(&m, &ctx, &opts, &env).unwrap();
    // Thinking from another model is dropped (pi 1.6.0).
    assert_eq!(
        body["messages"][1]["content"][0],
        json!({"text": "Looking."})
    );
    assert_eq!(
        body["messages"][1]["content"][1]["toolUse"]["toolUseId"],
        "call_1"
    );
    assert_eq!(
        body["messages"][2]["content"][0]["toolResult"]["toolUseId"],
        "call_1"
    );
    assert_eq!(
        body["system"][1],
        json!({"cachePoint": {"type": "default", "ttl": "1h"}})
    );
    assert_eq!(
        body["inferenceConfig"],
        json!({"maxTokens": 1000, "temperature": 0.5})
    );
    assert_eq!(
        body["additionalModelRequestFields"],
        json!({"thinking": {"type": "adaptive", "display": "summarized"}, "output_config": {"effort": "low"}})
    );
}

#[test]
fn non_claude_models_get_no_thinking_fields_or_cache_points() {
    let m = model("amazon.nova-pro-v1:0");
    let opts = StreamOptions {
        reasoning: Some(ThinkingLevel::High),
        ..Default::default()
    };
    let body = request::build_body(&m, &conversation(), &opts, &no_env).unwrap();
    assert!(body.get("additionalModelRequestFields").is_none());
    assert_eq!(body["system"], json!([{"text": "Be brief."}]));
    // Reasoning from a same-model turn replays without a signature for non-Claude models.
    let mut ctx = conversation();
    if let Message::Assistant(a) = &mut ctx.messages[1] {
        a.model = m.id.clone();
    }
    let body = request::build_body(&m, &ctx, &opts, &no_env).unwrap();
    assert_eq!(
        body["messages"][1]["content"][0],
        json!({"reasoningContent": {"reasoningText": {"text": "hmm"}}})
    );
}

fn shared(pairs: &[(&str, &str)]) -> SharedEnv {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Arc::new(move |k: &str| map.get(k).cloned())
}

fn user_only() -> Context {
    Context {
        system_prompt: None,
        messages: vec![Message::user_text("hi")],
        tools: vec![],
    }
}

#[test]
fn signed_call_against_a_local_server() {
    let (base, server) = serve_once("200 OK", "", text_stream());
    let mut m = model("anthropic.claude-3-5-haiku-20241022-v1:0");
    m.base_url = base.clone();
    let env = shared(&[
        ("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"),
        ("AWS_SECRET_ACCESS_KEY", "secret"),
        ("AWS_SESSION_TOKEN", "session"),
        ("AWS_REGION", "eu-west-3"),
    ]);
    let rx = stream_with_env(
        &m,
        &user_only(),
        &StreamOptions::default(),
        Abort::new(),
        env,
    );
    let events: Vec<_> = rx.iter().collect();
    assert_eq!(summary(&events).last().unwrap(), "done stop");
    let req = server.join().unwrap();
    let (head, body) = req.split_once("\r\n\r\n").unwrap();
    assert!(
        head.starts_with(
            "POST /model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream HTTP/1.1"
        ),
        "{head}"
    );
    let header = |name: &str| {
        head.lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
            })
            .unwrap_or_default()
    };
    assert_eq!(header("x-amz-security-token"), "session");
    let date = header("x-amz-date");
    let auth = header("authorization");
    assert!(
        auth.starts_with(&format!(
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/{}/eu-west-3/bedrock/aws4_request, SignedHeaders=accept;content-type;host;x-amz-date;x-amz-security-token, Signature=",
            &date[..8]
        )),
        "{auth}"
    );
    // The signature covers exactly the bytes that were sent.
    let url = format!("{base}/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream");
    let resigned = sigv4::sign(
        "POST",
        &url,
        &[
            ("content-type".into(), header("content-type")),
            ("accept".into(), header("accept")),
        ],
        body.as_bytes(),
        &sigv4::Credentials {
            access_key_id: "AKIDEXAMPLE".into(),
            secret_access_key: "secret".into(),
            session_token: Some("session".into()),
        },
        &sigv4::Scope {
            region: "eu-west-3",
            service: "bedrock",
            amz_date: &date,
        },
    );
    assert_eq!(resigned.last().unwrap().1, auth);
    let sent: Value = serde_json::from_str(body).unwrap();
    assert_eq!(
        sent["messages"],
        json!([{"role": "user", "content": [{"text": "hi"}, {"cachePoint": {"type": "default"}}]}])
    );
}

#[test]
fn bearer_call_with_http_error_body() {
    let (base, server) = serve_once(
        "400 Bad Request",
        "x-amzn-errortype: ValidationException\r\n",
        br#"{"message":"The provided model identifier is invalid."}"#.to_vec(),
    );
    let env = shared(&[
        ("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key"),
        ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", &base),
    ]);
    let rx = stream_with_env(
        &claude(),
        &user_only(),
        &StreamOptions::default(),
        Abort::new(),
        env,
    );
    let events: Vec<_> = rx.iter().collect();
    assert_eq!(
        summary(&events),
        ["error error 400 The provided model identifier is invalid."]
    );
    let req = server.join().unwrap();
    assert!(
        req.starts_with(
            "POST /model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream "
        ),
        "{req}"
    );
    assert!(
        req.to_ascii_lowercase()
            .contains("authorization: bearer bedrock-api-key\r\n"),
        "{req}"
    );
}

#[test]
fn missing_credentials_fail_before_any_request() {
    let env = shared(&[("HOME", "/nonexistent")]);
    let rx = stream_with_env(
        &claude(),
        &user_only(),
        &StreamOptions::default(),
        Abort::new(),
        env,
    );
    let events: Vec<_> = rx.iter().collect();
    assert_eq!(
        summary(&events),
        [format!("error error {}", credentials::MISSING_CREDENTIALS)]
    );
}

#[test]
fn hot_block_deltas_read_as_the_full_reading_does() {
    let events = [
        ("messageStart", r#"{"role":"assistant"}"#),
        (
            "contentBlockDelta",
            r#"{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"why\u00e9"}}}"#,
        ),
        (
            "contentBlockDelta",
            r#"{"contentBlockIndex":0,"delta":{"reasoningContent":{"signature":"c2"}}}"#,
        ),
        (
            "contentBlockDelta",
            r#"{"contentBlockIndex":0,"delta":{"reasoningContent":null}}"#,
        ),
        ("contentBlockStop", r#"{"contentBlockIndex":0}"#),
        (
            "contentBlockDelta",
            r#"{"contentBlockIndex":1,"delta":{"text":"a \"b\"\n","p":"xyz"}}"#,
        ),
        (
            "contentBlockDelta",
            r#"{"contentBlockIndex":1,"delta":{"text":null,"toolUse":{"input":"x"}}}"#,
        ),
        ("contentBlockStop", r#"{"contentBlockIndex":1}"#),
        (
            "contentBlockStart",
            r#"{"contentBlockIndex":2,"start":{"toolUse":{"toolUseId":"t1","name":"read"}}}"#,
        ),
        (
            "contentBlockDelta",
            r#"{"contentBlockIndex":2,"delta":{"toolUse":{"input":"{\"path\":"}}}"#,
        ),
        (
            "contentBlockDelta",
            r#"{"contentBlockIndex":2,"delta":{"toolUse":null}}"#,
        ),
        (
            "contentBlockDelta",
            r#"{"contentBlockIndex":2,"delta":{"toolUse":{"input":"\"a\"}"}}}"#,
        ),
        ("contentBlockStop", r#"{"contentBlockIndex":2}"#),
        ("messageStop", r#"{"stopReason":"tool_use"}"#),
    ];
    let stream = |cold: bool| -> Vec<u8> {
        events
            .iter()
            .flat_map(|(t, payload)| {
                // A duplicate `contentBlockIndex` (the last one counts) refuses the hot shape.
                let payload = match cold {
                    true => payload.replacen(
                        "{\"contentBlockIndex\":",
                        "{\"contentBlockIndex\":9,\"contentBlockIndex\":",
                        1,
                    ),
                    false => payload.to_string(),
                };
                encode_event(t, &payload)
            })
            .collect()
    };
    let hot_shapes = events
        .iter()
        .filter(|(t, p)| {
            *t == "contentBlockDelta" && serde_json::from_str::<BedrockBlockDelta>(p).is_ok()
        })
        .count();
    assert_eq!(hot_shapes, 8);
    assert!(serde_json::from_str::<BedrockBlockDelta>(
        r#"{"contentBlockIndex":9,"contentBlockIndex":0}"#
    )
    .is_err());
    let (hot, cold) = (stream(false), stream(true));
    for sizes in [&[usize::MAX][..], &[1, 7]] {
        let (a, b) = (run(&hot, sizes), run(&cold, sizes));
        assert_eq!(summary(&a), summary(&b));
        assert_eq!(untimed(final_message(&a)), untimed(final_message(&b)));
        let trace = summary(&a);
        assert!(
            trace.contains(&"thinking_delta 0 why\u{e9}".to_string()),
            "{trace:?}"
        );
        assert!(
            trace.contains(&"toolcall_end 2 t1 read {\"path\":\"a\"}".to_string()),
            "{trace:?}"
        );
    }
}
