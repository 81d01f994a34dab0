//! Auto-retry: 429/5xx/529 and dropped streams are retried with backoff (20 ms base here, via
//! settings.json); client errors are not; exhausted retries end in exit 1.

use crate::support::{MockServer, PiCommand, Reply};

fn recovers_after(api: &str, first: Reply) {
    let mock = MockServer::with_replies([first, Reply::text(api, "recovered answer")]);
    let out = PiCommand::for_mock(api, &mock).args(["-p", "hello"]).run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "recovered answer\n");
    assert_eq!(mock.request_count(), 2);
}

#[test]
fn rate_limit_429_is_retried() {
    let api = "openai-completions";
    recovers_after(api, Reply::rate_limited(api, 10));
}

#[test]
fn server_error_500_is_retried() {
    let api = "openai-responses";
    recovers_after(api, Reply::api_error(api, 500, "Internal server error"));
}

#[test]
fn anthropic_overloaded_529_is_retried() {
    recovers_after("anthropic-messages", Reply::overloaded());
}

#[test]
fn google_503_is_retried() {
    let api = "google-generative-ai";
    recovers_after(api, Reply::api_error(api, 503, "The model is overloaded."));
}

#[test]
fn stream_cut_midway_is_retried() {
    let api = "anthropic-messages";
    recovers_after(
        api,
        Reply::text(api, "this answer is cut short").cut_after(4),
    );
}

#[test]
fn chunked_stream_cut_midway_is_retried() {
    let api = "openai-completions";
    recovers_after(
        api,
        Reply::text(api, "this answer is cut short")
            .chunked()
            .cut_after(3),
    );
}

#[test]
fn client_error_400_is_not_retried() {
    let api = "openai-completions";
    let mock = MockServer::with_replies([
        Reply::api_error(api, 400, "mock failure 400"),
        Reply::text(api, "must not be used"),
    ]);
    let out = PiCommand::for_mock(api, &mock).args(["-p", "hello"]).run();
    out.assert_code(1).assert_no_panic();
    assert_eq!(out.stdout, "");
    assert!(out.stderr.contains("400"), "stderr: {}", out.stderr);
    assert!(
        out.stderr.contains("mock failure 400"),
        "stderr: {}",
        out.stderr
    );
    assert_eq!(mock.request_count(), 1);
}

#[test]
fn exhausted_retries_fail() {
    let api = "anthropic-messages";
    let mock =
        MockServer::with_replies((0..4).map(|_| Reply::api_error(api, 503, "Service unavailable")));
    let out = PiCommand::for_mock(api, &mock).args(["-p", "hello"]).run();
    out.assert_code(1).assert_no_panic();
    assert_eq!(out.stdout, "");
    assert!(out.stderr.contains("503"), "stderr: {}", out.stderr);
    // one attempt plus maxRetries (3)
    assert_eq!(mock.request_count(), 4);
}
