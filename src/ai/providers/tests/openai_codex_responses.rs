//! Tests of the Codex provider: its SSE dialect at every chunk boundary, the request pi sends,
//! URL resolution, the usage-limit message, and one request end to end against a local server.

use std::io::{BufRead, BufReader, Read, Write};

use super::*;
use crate::ai::providers::openai_compat::test_support::*;
use crate::ai::stream::StreamWriter;

fn fixture(name: &str) -> Vec<u8> {
    let p = format!(
        "{}/fixtures/openai-codex-responses/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn parse(r: Chunked, w: &mut StreamWriter) -> Result<(), crate::ai::ProviderError> {
    openai_responses::parse_stream_mapped(r, w, &map_event)
}

fn model() -> Model {
    let mut m = test_model("openai-codex-responses");
    m.provider = "openai-codex".into();
    m
}

/// A JWT-shaped token carrying `acct-1`.
fn token() -> String {
    let claims = json!({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-1"}});
    let payload = crate::util::encoding::base64url_encode(claims.to_string().as_bytes());
    format!("h.{payload}.s")
}

#[test]
fn response_done_ends_a_stream_with_reasoning_text_and_a_tool_call() {
    let r = run_all_chunkings(&fixture("tool_call.sse"), &model(), parse);
    assert_eq!(
        r.trace,
        [
            "start",
            "thinking_start 0",
            "thinking_delta 0 Check the file.",
            "thinking_delta 0 \n\n",
            "thinking_end 0 Check the file.",
            "text_start 1",
            "text_delta 1 Reading it ",
            "text_delta 1 now ✓",
            "text_end 1 Reading it now ✓",
            "toolcall_start 2",
            "toolcall_delta 2 {\"path\":",
            "toolcall_delta 2 \"a.txt\"}",
            "toolcall_end 2 call_r1|fc_01 read {\"path\":\"a.txt\"}",
            "done toolUse",
        ]
    );
    let m = r.message;
    assert_eq!(m.response_id.as_deref(), Some("resp_codex_01"));
    assert_eq!(
        (m.usage.input, m.usage.cache_read, m.usage.output),
        (150, 50, 30)
    );
    match &m.content[2] {
        Content::ToolCall(tc) => assert_eq!(tc.id, "call_r1|fc_01"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn backend_errors_become_pi_messages() {
    let r = run_once(&fixture("error.sse"), 7, &model(), parse);
    assert_eq!(
        r.message.error_message.as_deref(),
        Some("Codex error: Your input exceeds the context window of this model.")
    );
    let r = run_once(&fixture("failed.sse"), 7, &model(), parse);
    assert_eq!(
        r.message.error_message.as_deref(),
        Some("The model failed to answer.")
    );
    assert_eq!(r.message.stop_reason, StopReason::Error);
}

#[test]
fn request_like_pi() {
    let mut m = model();
    m.reasoning = true;
    let opts = StreamOptions {
        api_key: token(),
        session_id: Some("sess-1".into()),
        reasoning: Some(ThinkingLevel::High),
        headers: vec![("originator".into(), "someone-else".into())],
        ..Default::default()
    };
    let ctx = Context {
        system_prompt: Some("Be brief.".into()),
        messages: vec![Message::user_text("hi")],
        tools: vec![ToolSpec {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object"}),
        }],
    };
    let (url, headers, body) = build_request(&m, &ctx, &opts).unwrap();
    assert_eq!(url, "http://127.0.0.1:8765/v1/codex/responses");
    let h = |k: &str| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(k))
            .map(|(_, v)| v.clone())
    };
    assert_eq!(h("authorization"), Some(format!("Bearer {}", token())));
    assert_eq!(h("chatgpt-account-id").as_deref(), Some("acct-1"));
    assert_eq!(h("originator").as_deref(), Some("pi"));
    assert_eq!(h("openai-beta").as_deref(), Some("responses=experimental"));
    assert_eq!(h("accept").as_deref(), Some("text/event-stream"));
    assert_eq!(h("session_id").as_deref(), Some("sess-1"));
    assert_eq!(h("x-client-request-id").as_deref(), Some("sess-1"));
    assert!(h("user-agent").unwrap().starts_with("pi ("));
    let expected = json!({
        "model": "mock-model",
        "store": false,
        "stream": true,
        "instructions": "Be brief.",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
        "text": {"verbosity": "low"},
        "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "sess-1",
        "tool_choice": "auto",
        "parallel_tool_calls": true,
        "tools": [{"type": "function", "name": "read", "description": "Read a file",
                   "parameters": {"type": "object"}, "strict": null}],
        "reasoning": {"effort": "high", "summary": "auto"}
    });
    assert_eq!(body, expected);
    let plain = StreamOptions {
        api_key: "sk-not-a-jwt".into(),
        ..Default::default()
    };
    assert_eq!(
        build_request(&m, &Context::default(), &plain).unwrap_err(),
        "Failed to extract accountId from token"
    );
}

#[test]
fn urls_and_usage_limits() {
    assert_eq!(
        resolve_url(""),
        "https://chatgpt.com/backend-api/codex/responses"
    );
    assert_eq!(
        resolve_url("https://x/api/"),
        "https://x/api/codex/responses"
    );
    assert_eq!(resolve_url("https://x/codex"), "https://x/codex/responses");
    assert_eq!(
        resolve_url("https://x/codex/responses"),
        "https://x/codex/responses"
    );
    let body = r#"{"error":{"code":"usage_limit_reached","plan_type":"PLUS"}}"#;
    assert_eq!(
        friendly_error(Some(429), body).as_deref(),
        Some("You have hit your ChatGPT usage limit (plus plan).")
    );
    assert_eq!(
        friendly_error(Some(400), r#"{"error":{"code":"bad"}}"#),
        None
    );
}

#[test]
fn one_request_end_to_end() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/backend-api", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut head = Vec::new();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line.trim().is_empty() {
                break;
            }
            head.push(line.trim().to_string());
        }
        let len: usize = head
            .iter()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length:")
                    .map(|v| v.trim().parse().unwrap())
            })
            .unwrap();
        let mut body = vec![0; len];
        reader.read_exact(&mut body).unwrap();
        let sse = fixture("tool_call.sse");
        let mut out = stream;
        write!(
            out,
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n",
            sse.len()
        )
        .unwrap();
        out.write_all(&sse).unwrap();
        head
    });
    let mut m = model();
    m.base_url = base;
    let opts = StreamOptions {
        api_key: token(),
        ..Default::default()
    };
    let rx = crate::ai::providers::stream(&m, &Context::default(), &opts, Abort::new());
    let last = rx.iter().last().unwrap();
    assert!(matches!(last, AssistantEvent::Done { .. }), "{last:?}");
    let head = server.join().unwrap();
    assert_eq!(head[0], "POST /backend-api/codex/responses HTTP/1.1");
    assert!(head
        .iter()
        .any(|l| l.eq_ignore_ascii_case("chatgpt-account-id: acct-1")));
}

#[test]
fn hot_deltas_read_as_the_full_reading_does() {
    let hot = String::from_utf8(fixture("tool_call.sse")).unwrap();
    let cold = hot.replace("{\"type\":", "{\"type\":\"x\",\"type\":");
    let m = model();
    let (a, b) = (
        run_all_chunkings(hot.as_bytes(), &m, parse),
        run_all_chunkings(cold.as_bytes(), &m, parse),
    );
    assert_eq!(a.trace, b.trace);
    let mut message = b.message.clone();
    message.timestamp = a.message.timestamp;
    assert_eq!(message, a.message);
    assert!(a.trace.iter().any(|l| l.contains("_delta")));
}
