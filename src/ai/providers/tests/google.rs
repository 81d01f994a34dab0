//! Tests of the google provider: fixtures at every chunk boundary, request bodies, errors.

use super::*;
use crate::ai::providers::anthropic::test_support::*;

const BASE: &str = "https://generativelanguage.googleapis.com/v1beta";

fn model() -> Model {
    test_model("gemini-2.5-flash", "google-generative-ai", "google", BASE)
}

fn run(name: &str, sizes: &[usize]) -> Vec<AssistantEvent> {
    let m = model();
    run_parser(&fixture("google", name), sizes, &m, |r, w| {
        parse_stream_with(r, w, &m.cost)
    })
}

/// Generated ids (`name_<ms>_<n>`) differ per run; mask them.
fn mask(s: &str) -> String {
    s.split(' ')
        .map(|tok| {
            let gen = tok.split('_').collect::<Vec<_>>();
            let generated = gen.len() >= 3
                && gen[gen.len() - 2..]
                    .iter()
                    .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
            if generated {
                format!("{}_<gen>", gen[..gen.len() - 2].join("_"))
            } else {
                tok.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn masked(events: &[AssistantEvent]) -> Vec<String> {
    summary(events).iter().map(|s| mask(s)).collect()
}

#[test]
fn parses_plain_text_and_usage() {
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
    assert_eq!(m.response_id.as_deref(), Some("resp-fixture-1"));
    let u = m.usage;
    assert_eq!(
        (
            u.input,
            u.output,
            u.cache_read,
            u.cache_write,
            u.total_tokens
        ),
        (20, 5, 10, 0, 35)
    );
    assert!((u.cost.total - (20.0 * 3.0 + 5.0 * 15.0 + 10.0 * 0.3) / 1e6).abs() < 1e-12);
}

#[test]
fn parses_thought_parts_and_signatures() {
    let events = run("thinking.sse", &[usize::MAX]);
    assert_eq!(
        summary(&events),
        [
            "start",
            "thinking_start 0",
            "thinking_delta 0 Let me think",
            "thinking_delta 0  about it.",
            "thinking_end 0 Let me think about it.",
            "text_start 1",
            "text_delta 1 The answer",
            "text_delta 1  is 42.",
            "text_end 1 The answer is 42.",
            "done length",
        ]
    );
    let m = final_message(&events);
    let Content::Thinking(t) = &m.content[0] else {
        panic!("thinking expected")
    };
    assert_eq!(t.thinking_signature.as_deref(), Some("c2lnbmF0dXJlLTE="));
    let Content::Text(x) = &m.content[1] else {
        panic!("text expected")
    };
    assert_eq!(x.text_signature.as_deref(), Some("dGV4dC1zaWc="));
    assert_eq!(
        (m.usage.input, m.usage.output, m.usage.total_tokens),
        (40, 28, 68)
    );
}

#[test]
fn parses_function_calls_and_generates_missing_ids() {
    let events = run("tool_call.sse", &[usize::MAX]);
    assert_eq!(
        masked(&events),
        [
            "start",
            "text_start 0",
            "text_delta 0 Reading it.",
            "text_end 0 Reading it.",
            "toolcall_start 1",
            "toolcall_delta 1 {\"path\":\"src/main.rs\",\"limit\":20}",
            "toolcall_end 1 read_<gen> read {\"path\":\"src/main.rs\",\"limit\":20}",
            "toolcall_start 2",
            "toolcall_delta 2 {\"command\":\"ls\"}",
            "toolcall_end 2 call-explicit bash {\"command\":\"ls\"}",
            "done toolUse",
        ]
    );
    let m = final_message(&events);
    let calls: Vec<&ToolCall> = m.tool_calls().collect();
    assert!(calls[0].id.starts_with("read_"));
    assert_eq!(
        calls[0].thought_signature.as_deref(),
        Some("bW9ja2xsbS10aG91Z2h0LXNpZ25hdHVyZQ==")
    );
    assert_eq!(calls[1].thought_signature, None);
    assert_eq!(m.stop_reason, StopReason::ToolUse);
}

#[test]
fn duplicate_wire_ids_are_replaced() {
    let sse = "data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"a\",\"args\":{},\"id\":\"x\"}},{\"functionCall\":{\"name\":\"b\",\"id\":\"x\"}}]},\"finishReason\":\"STOP\"}]}\n\n";
    let m = model();
    let events = run_parser(sse.as_bytes(), &[usize::MAX], &m, |r, w| parse_stream(r, w));
    let msg = final_message(&events);
    let ids: Vec<&str> = msg.tool_calls().map(|t| t.id.as_str()).collect();
    assert_eq!(ids[0], "x");
    assert!(ids[1].starts_with("b_"), "{ids:?}");
    assert_eq!(msg.tool_calls().nth(1).unwrap().arguments, json!({}));
}

#[test]
fn in_stream_error_chunk_fails_readably() {
    let events = run("error.sse", &[usize::MAX]);
    assert_eq!(
        summary(&events),
        [
            "start",
            "text_start 0",
            "text_delta 0 Partial",
            "error error 503 The model is overloaded. Please try again later.",
        ]
    );
}

#[test]
fn stream_without_finish_reason_is_an_error() {
    let events = run("truncated.sse", &[usize::MAX]);
    let last = summary(&events).pop().unwrap();
    assert!(
        last.starts_with("error error Connection lost: stream ended"),
        "{last}"
    );
    assert_eq!(final_message(&events).text(), "Half a sen");
}

#[test]
fn malformed_chunk_is_a_clear_error() {
    let events = run("malformed.sse", &[usize::MAX]);
    let last = summary(&events).pop().unwrap();
    assert!(
        last.starts_with("error error Could not parse Google SSE chunk"),
        "{last}"
    );
    assert_eq!(final_message(&events).text(), "fine");
}

#[test]
fn safety_finish_is_an_error() {
    let sse =
        "data: {\"candidates\":[{\"content\":{\"parts\":[]},\"finishReason\":\"SAFETY\"}]}\r\n\r\n";
    let m = model();
    let events = run_parser(sse.as_bytes(), &[usize::MAX], &m, |r, w| parse_stream(r, w));
    assert_eq!(
        summary(&events).pop().unwrap(),
        "error error The model stopped without an answer (finishReason: SAFETY)"
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
            assert_eq!(masked(&got), masked(&whole), "{name} at {sizes:?}");
            let strip = |m: AssistantMessage| {
                let mut m = untimed(m);
                for c in &mut m.content {
                    if let Content::ToolCall(t) = c {
                        t.id = mask(&t.id);
                    }
                }
                m
            };
            assert_eq!(
                strip(final_message(&got)),
                strip(final_message(&whole)),
                "{name} at {sizes:?}"
            );
        }
    }
}

fn conversation(m: &Model) -> Context {
    let foreign = AssistantMessage {
        content: vec![
            Content::Thinking(ThinkingContent {
                thinking: "foreign thoughts".into(),
                thinking_signature: Some("sig".into()),
                redacted: false,
            }),
            Content::ToolCall(ToolCall {
                id: "toolu_1".into(),
                name: "read".into(),
                arguments: json!({"path": "a.txt"}),
                thought_signature: None,
            }),
        ],
        stop_reason: StopReason::ToolUse,
        ..AssistantMessage::empty(&test_model(
            "claude-sonnet-4-5",
            "anthropic-messages",
            "anthropic",
            "",
        ))
    };
    let same = AssistantMessage {
        content: vec![
            Content::Thinking(ThinkingContent {
                thinking: "my thoughts".into(),
                thinking_signature: Some("c2lnbmF0dXJlLTE=".into()),
                redacted: false,
            }),
            Content::Text(TextContent {
                text: "Two calls.".into(),
                text_signature: Some("not base64!".into()),
            }),
            Content::ToolCall(ToolCall {
                id: "bash_1_1".into(),
                name: "bash".into(),
                arguments: json!({"command": "ls"}),
                thought_signature: Some("dGV4dC1zaWc=".into()),
            }),
            Content::ToolCall(ToolCall {
                id: "read_1_2".into(),
                name: "read".into(),
                arguments: json!({"path": "img.png"}),
                thought_signature: None,
            }),
        ],
        stop_reason: StopReason::ToolUse,
        ..AssistantMessage::empty(m)
    };
    Context {
        system_prompt: Some("You are pi.".into()),
        messages: vec![
            Message::user_text("read a.txt"),
            Message::Assistant(foreign),
            tool_result("toolu_1", "read", vec![Content::text("A")], false),
            Message::user_text("now list and look"),
            Message::Assistant(same),
            tool_result("bash_1_1", "bash", vec![Content::text("boom")], true),
            tool_result(
                "read_1_2",
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
fn build_request_replays_function_calls_and_responses() {
    let m = model();
    let opts = StreamOptions {
        api_key: "AIza-key".into(),
        reasoning: Some(ThinkingLevel::Medium),
        headers: vec![("x-extra".into(), "1".into())],
        ..Default::default()
    };
    let (url, headers, body) = build_request(&m, &conversation(&m), &opts);
    assert_eq!(
        url,
        format!("{BASE}/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
    );
    assert_eq!(
        headers,
        pairs(&[("x-goog-api-key", "AIza-key"), ("x-extra", "1")])
    );
    let expected = json!({
        "contents": [
            {"role": "user", "parts": [{"text": "read a.txt"}]},
            {"role": "model", "parts": [
                {"functionCall": {"name": "read", "args": {"path": "a.txt"}}},
            ]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "read", "response": {"output": "A"}}},
            ]},
            {"role": "user", "parts": [{"text": "now list and look"}]},
            {"role": "model", "parts": [
                {"thought": true, "text": "my thoughts", "thoughtSignature": "c2lnbmF0dXJlLTE="},
                {"text": "Two calls."},
                {"functionCall": {"name": "bash", "args": {"command": "ls"}}, "thoughtSignature": "dGV4dC1zaWc="},
                {"functionCall": {"name": "read", "args": {"path": "img.png"}}},
            ]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "bash", "response": {"error": "boom"}}},
                {"functionResponse": {"name": "read", "response": {"output": "(see attached image)"}}},
            ]},
            {"role": "user", "parts": [
                {"text": "Tool result image:"},
                {"inlineData": {"mimeType": "image/png", "data": "iVBOR"}},
            ]},
        ],
        "systemInstruction": {"parts": [{"text": "You are pi."}]},
        "tools": [{"functionDeclarations": [
            {"name": "read", "description": "Read a file", "parametersJsonSchema": read_tool().parameters},
            {"name": "bash", "description": "Run a command", "parametersJsonSchema": bash_tool().parameters},
        ]}],
        "generationConfig": {
            "maxOutputTokens": 32000,
            "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 8192},
        },
    });
    assert_eq!(body, expected);
}

#[test]
fn gemini3_nests_tool_images_and_uses_thinking_levels() {
    let mut m = model();
    m.id = "gemini-3.1-pro-preview".into();
    let opts = StreamOptions {
        api_key: "k".into(),
        reasoning: Some(ThinkingLevel::High),
        ..Default::default()
    };
    let (url, _, body) = build_request(&m, &conversation(&m), &opts);
    assert!(url.ends_with("/models/gemini-3.1-pro-preview:streamGenerateContent?alt=sse"));
    assert_eq!(
        body["generationConfig"]["thinkingConfig"],
        json!({"includeThoughts": true, "thinkingLevel": "HIGH"})
    );
    let contents = body["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 6);
    assert_eq!(
        contents[5]["parts"][1]["functionResponse"]["parts"],
        json!([{"inlineData": {"mimeType": "image/png", "data": "iVBOR"}}])
    );
    // Thinking off: Gemini 3 Pro cannot disable thinking, 2.5 uses a zero budget.
    let off = StreamOptions {
        reasoning: None,
        temperature: Some(0.2),
        ..opts
    };
    let (_, _, body) = build_request(&m, &Context::default(), &off);
    assert_eq!(
        body["generationConfig"],
        json!({"temperature": 0.2, "maxOutputTokens": 32000, "thinkingConfig": {"thinkingLevel": "LOW"}})
    );
    let (_, _, body) = build_request(&model(), &Context::default(), &off);
    assert_eq!(
        body["generationConfig"]["thinkingConfig"],
        json!({"thinkingBudget": 0})
    );
}

#[test]
fn claude_behind_google_gets_explicit_ids() {
    let mut m = model();
    m.id = "claude-sonnet-4-5".into();
    let (_, _, body) = build_request(&m, &conversation(&m), &StreamOptions::default());
    let contents = body["contents"].as_array().unwrap();
    assert_eq!(
        contents[1]["parts"][0]["functionCall"]["id"],
        json!("toolu_1")
    );
    assert_eq!(
        contents[2]["parts"][0]["functionResponse"]["id"],
        json!("toolu_1")
    );
}

#[test]
fn stream_posts_to_stream_generate_content() {
    let (base, server) = serve_once("200 OK", "", fixture("google", "thinking.sse"));
    let mut m = model();
    m.base_url = format!("{base}/v1beta");
    let ctx = Context {
        messages: vec![Message::user_text("hi")],
        ..Default::default()
    };
    let opts = StreamOptions {
        api_key: "AIza-test".into(),
        ..Default::default()
    };
    let events: Vec<AssistantEvent> = stream(&m, &ctx, &opts, Abort::new()).iter().collect();
    assert_eq!(summary(&events).pop().unwrap(), "done length");
    let req = server.join().unwrap();
    assert!(
        req.starts_with("POST /v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse "),
        "{req}"
    );
    assert!(req
        .to_ascii_lowercase()
        .contains("x-goog-api-key: aiza-test"));
}

#[test]
fn cut_anywhere_never_panics_and_always_terminates() {
    let m = model();
    for name in ["thinking.sse", "tool_call.sse"] {
        let bytes = fixture("google", name);
        // An event needs its closing blank line (SSE spec), so any cut short of the end is
        // an incomplete stream — except just before a final `\n`, since a lone `\r`
        // already ends a line.
        let complete = bytes.len() - usize::from(bytes.ends_with(b"\r\n"));
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
fn model_name_patterns() {
    assert!(is_gemini3("gemini-3-pro-preview", "-pro"));
    assert!(is_gemini3("gemini-3.1-flash-lite", "-flash"));
    assert!(!is_gemini3("gemini-2.5-pro", "-pro"));
    assert!(is_gemma4("gemma-4-27b"));
    assert!(supports_multimodal_function_response("gemini-3-flash"));
    assert!(!supports_multimodal_function_response("gemini-2.5-flash"));
    assert!(is_valid_signature("dGV4dC1zaWc="));
    assert!(!is_valid_signature("not base64!"));
}

#[test]
fn hot_chunks_read_as_the_full_reading_does() {
    let chunks = [
        r#"{"candidates":[{"content":{"parts":[{"text":"why\u00e9","thought":true,"thoughtSignature":"s1"}],"role":"model"},"index":0}],"responseId":"r1"}"#,
        r#"{"candidates":[{"content":{"parts":[{"text":" so","thought":true}]}}],"usageMetadata":null}"#,
        r#"{"candidates":[{"content":{"parts":[{"text":"Hi \"x\"\n","thoughtSignature":""}]}}],"usageMetadata":{"promptTokenCount":3}}"#,
        r#"{"candidates":[{"content":{"parts":[{"text":"!","thought":false}]}}],"usageMetadata":{"promptTokenCount":30,"candidatesTokenCount":5,"thoughtsTokenCount":2,"cachedContentTokenCount":10,"totalTokenCount":37}}"#,
        r#"{"candidates":[{"content":{"parts":[{"text":""}]},"finishReason":"STOP"}]}"#,
    ];
    let hot: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    let cold = hot.replace("{\"candidates\":", "{\"candidates\":null,\"candidates\":");
    assert_eq!(hot_lines::<GoogleChunk>(&hot), chunks.len() - 1);
    assert_eq!(hot_lines::<GoogleChunk>(&cold), 0);
    let m = model();
    assert_same_reading(hot.as_bytes(), cold.as_bytes(), &m, |r, w| {
        parse_stream_with(r, w, &m.cost)
    });
    let events = run_parser(hot.as_bytes(), &[usize::MAX], &m, |r, w| {
        parse_stream_with(r, w, &m.cost)
    });
    let message = final_message(&events);
    assert_eq!(message.usage.input, 20);
    assert!(summary(&events).contains(&"thinking_end 0 why\u{e9} so".to_string()));
    // (Not tool_call.sse: its generated call ids differ per run.)
    for name in ["text.sse", "thinking.sse"] {
        let hot = String::from_utf8(fixture("google", name)).unwrap();
        let cold = hot.replace("{\"candidates\":", "{\"candidates\":null,\"candidates\":");
        assert_same_reading(hot.as_bytes(), cold.as_bytes(), &m, |r, w| {
            parse_stream_with(r, w, &m.cost)
        });
    }
}
