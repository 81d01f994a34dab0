//! The provider layer: its own retries (`retry.provider.*`, below the agent-level auto-retry)
//! and what it says when an answer cannot be a reply — a 2xx document or empty stream, an
//! invalid base URL — which no retry would change.

use crate::support::{models_json_for, MockServer, PiCommand, Reply};

const API: &str = "openai-completions";

fn run_with(mock: &MockServer, settings: &str, mode: &[&str]) -> crate::support::Output {
    PiCommand::for_mock(API, mock)
        .write_agent_file("settings.json", settings)
        .args(mode.iter().copied())
        .arg("hello")
        .run()
}

fn event_types(out: &crate::support::Output) -> Vec<String> {
    out.json_lines()
        .iter()
        .filter_map(|e| e["type"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn provider_retries_absorb_a_503_silently_with_auto_retry_off() {
    let mock = MockServer::with_replies([
        Reply::api_error(API, 503, "Service unavailable"),
        Reply::text(API, "after the outage"),
    ]);
    let settings = r#"{"retry":{"enabled":false,"provider":{"maxRetries":1}}}"#;
    let out = run_with(&mock, settings, &["--mode", "json"]);
    out.assert_code(0).assert_no_panic();
    assert_eq!(mock.request_count(), 2);
    let types = event_types(&out);
    assert!(
        !types.iter().any(|t| t.starts_with("auto_retry")),
        "the provider layer emits no events: {types:?}"
    );
    assert!(out.stdout.contains("after the outage"));
}

#[test]
fn without_provider_retries_a_503_ends_the_turn_when_auto_retry_is_off() {
    // pi 1.x: `retry.provider.maxRetries` defaults to 0.
    let mock = MockServer::with_replies([
        Reply::api_error(API, 503, "Service unavailable"),
        Reply::text(API, "must not be used"),
    ]);
    let out = run_with(&mock, r#"{"retry":{"enabled":false}}"#, &["-p"]);
    out.assert_code(1).assert_no_panic();
    assert_eq!(mock.request_count(), 1);
    assert!(out.stderr.contains("503"), "{}", out.stderr);
}

#[test]
fn a_server_wait_over_the_cap_fails_with_pis_message() {
    let mock = MockServer::with_replies([
        Reply::api_error(API, 429, "Slow down").header("retry-after", "120"),
        Reply::text(API, "must not be used"),
    ]);
    let settings = r#"{"retry":{"enabled":false,"provider":{"maxRetries":2}}}"#;
    let out = run_with(&mock, settings, &["-p"]);
    out.assert_code(1).assert_no_panic();
    assert_eq!(mock.request_count(), 1);
    assert!(
        out.stderr
            .contains("Server requested 120s retry delay (max: 60s). 429 Slow down"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_json_document_instead_of_a_stream_is_named_and_not_retried() {
    let body = r#"{"id":"chatcmpl-1","object":"chat.completion","choices":[]}"#;
    let mock = MockServer::with_replies([
        Reply::error(200, body),
        Reply::text(API, "must not be used"),
    ]);
    let out = run_with(&mock, r#"{"retry":{"baseDelayMs":1}}"#, &["--mode", "json"]);
    out.assert_no_panic();
    assert_eq!(mock.request_count(), 1, "a document is not retried");
    assert!(!event_types(&out).iter().any(|t| t == "auto_retry_start"));
    assert!(
        out.stdout.contains(
            "Not an event stream: the server answered 200 (application/json) with a document"
        ),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("chatcmpl-1"), "the start of the body");
}

#[test]
fn an_html_page_instead_of_a_stream_is_named() {
    let mock = MockServer::with_replies([Reply::error(200, "<html><body>Sign in</body></html>")
        .header("content-type", "text/html; charset=utf-8")]);
    let out = run_with(&mock, r#"{"retry":{"baseDelayMs":1}}"#, &["-p"]);
    out.assert_code(1).assert_no_panic();
    assert_eq!(mock.request_count(), 1);
    assert!(
        out.stderr.contains("200 (text/plain)") || out.stderr.contains("200 (text/html)"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("<html><body>Sign in"), "{}", out.stderr);
}

#[test]
fn an_empty_stream_says_so_and_is_not_retried() {
    // llama.cpp's answer to a prompt longer than its window: 200, then nothing.
    let mock = MockServer::with_replies([Reply::sse(""), Reply::text(API, "must not be used")]);
    let out = run_with(&mock, r#"{"retry":{"baseDelayMs":1}}"#, &["-p"]);
    out.assert_code(1).assert_no_panic();
    assert_eq!(mock.request_count(), 1);
    assert!(out.stderr.contains("Empty reply"), "{}", out.stderr);
    assert!(out.stderr.contains("context size"), "{}", out.stderr);
    assert!(!out.stderr.contains("Connection lost"), "{}", out.stderr);
}

#[test]
fn an_invalid_base_url_is_reported_once() {
    let models = models_json_for(API, 9).replace("http://127.0.0.1:9", "htp://127.0.0.1:9");
    let out = PiCommand::new()
        .write_agent_file("models.json", &models)
        .write_agent_file("settings.json", r#"{"retry":{"baseDelayMs":1}}"#)
        .args(["--model", "mock/mock-model", "--mode", "json", "hello"])
        .run();
    out.assert_no_panic();
    assert!(out.stdout.contains("Invalid URL"), "{}", out.stdout);
    assert!(out.stdout.contains("baseUrl"), "{}", out.stdout);
    assert!(!event_types(&out).iter().any(|t| t == "auto_retry_start"));
}

#[test]
fn a_broken_auth_json_is_named_once_and_left_alone() {
    let mock = MockServer::with_replies([Reply::text(API, "still answers")]);
    let broken = r#"{"anthropic": {"type": "api_key", "key": "sk-"#;
    let cmd = PiCommand::for_mock(API, &mock)
        .write_agent_file("auth.json", broken)
        .args(["-p", "hello"]);
    let out = cmd.run();
    out.assert_code(0).assert_no_panic();
    let auth = std::fs::read_to_string(cmd.agent_dir().join("auth.json")).unwrap();
    let warnings: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("auth.json"))
        .collect();
    assert_eq!(warnings.len(), 1, "{}", out.stderr);
    assert!(warnings[0].contains("is cut short"), "{}", warnings[0]);
    assert_eq!(auth, broken, "a read never writes");
}
