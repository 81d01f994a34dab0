//! Auto-retry: 429/5xx/529 and dropped streams are retried with backoff (20 ms base here, via
//! settings.json); client errors are not; exhausted retries end in exit 1. A server's own wait
//! (`Retry-After`, `retry-after-ms`, Google's `RetryInfo`) replaces the backoff (issue 35).

use serde_json::Value;

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

/// pi 1.6.0 (#12064, #12128): a gateway's mid-stream "Connection closed." and a bare socket
/// error code are transient too.
#[test]
fn connection_closed_and_socket_error_codes_are_retried() {
    let api = "anthropic-messages";
    for message in ["Connection closed.", "read ECONNRESET", "write EPIPE"] {
        let event = serde_json::json!({"type": "error", "error": {"type": "api_error", "message": message}});
        recovers_after(api, Reply::sse(format!("event: error\ndata: {event}\n\n")));
    }
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

/// The JSON-mode events of one `hello` prompt against `replies`, with the run's exit code.
fn json_events(api: &str, replies: Vec<Reply>) -> (Vec<Value>, MockServer) {
    let mock = MockServer::with_replies(replies);
    let out = PiCommand::for_mock(api, &mock)
        .args(["--mode", "json", "hello"])
        .run();
    out.assert_no_panic();
    (out.json_lines(), mock)
}

/// The events that tell the story of a retry, in order: the failed reply's end, `agent_end`
/// (with `willRetry`), `auto_retry_start`, the new run's start and its successful end.
fn retry_story(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| {
            let kind = e["type"].as_str()?;
            Some(match kind {
                "message_end" if e["message"]["role"] == "assistant" => {
                    format!("message_end:{}", e["message"]["stopReason"].as_str()?)
                }
                "agent_end" => format!("agent_end:willRetry={}", e["willRetry"]),
                "auto_retry_start" => format!(
                    "auto_retry_start:attempt={},delayMs={}",
                    e["attempt"], e["delayMs"]
                ),
                "auto_retry_end" => format!("auto_retry_end:success={}", e["success"]),
                "agent_start" => "agent_start".into(),
                _ => return None,
            })
        })
        .collect()
}

fn retry_start(events: &[Value]) -> &Value {
    events
        .iter()
        .find(|e| e["type"] == "auto_retry_start")
        .expect("an auto_retry_start event")
}

fn expected_story(delay_ms: u64) -> Vec<String> {
    [
        "agent_start".to_string(),
        "message_end:error".into(),
        "agent_end:willRetry=true".into(),
        format!("auto_retry_start:attempt=1,delayMs={delay_ms}"),
        "agent_start".into(),
        "message_end:stop".into(),
        "auto_retry_end:success=true".into(),
        "agent_end:willRetry=false".into(),
    ]
    .into()
}

#[test]
fn retry_after_in_seconds_sets_the_auto_retry_wait() {
    let api = "openai-completions";
    let (events, mock) = json_events(
        api,
        vec![
            Reply::api_error(api, 429, "Too many requests").header("Retry-After", "1"),
            Reply::text(api, "recovered answer"),
        ],
    );
    assert_eq!(retry_story(&events), expected_story(1000), "{events:#?}");
    let start = retry_start(&events);
    assert_eq!(start["maxAttempts"], 3);
    assert!(
        start["errorMessage"].as_str().unwrap().contains("429"),
        "{start}"
    );
    assert_eq!(mock.request_count(), 2);
}

#[test]
fn retry_after_ms_sets_the_auto_retry_wait() {
    let api = "anthropic-messages";
    let (events, mock) = json_events(
        api,
        vec![
            Reply::rate_limited(api, 700),
            Reply::text(api, "recovered answer"),
        ],
    );
    assert_eq!(retry_story(&events), expected_story(700), "{events:#?}");
    assert_eq!(mock.request_count(), 2);
}

/// `Sun, 06 Nov 1994 08:49:37 GMT` for a Unix time in seconds.
fn http_date(secs: i64) -> String {
    let (y, mo, d, h, mi, s) = pi::util::date::utc_fields(secs);
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][(secs / 86_400 % 7) as usize];
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ][mo as usize - 1];
    format!("{weekday}, {d:02} {month} {y} {h:02}:{mi:02}:{s:02} GMT")
}

#[test]
fn retry_after_as_an_http_date_sets_the_auto_retry_wait() {
    let api = "openai-responses";
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let (events, mock) = json_events(
        api,
        vec![
            Reply::api_error(api, 503, "Service unavailable")
                .header("Retry-After", &http_date(now + 4)),
            Reply::text(api, "recovered answer"),
        ],
    );
    let delay = retry_start(&events)["delayMs"].as_u64().unwrap();
    // The date is whole seconds ahead of a clock that has moved on since; not the 20 ms
    // backoff, and never more than the date is away.
    assert!((100..=4000).contains(&delay), "delayMs {delay}");
    assert_eq!(retry_story(&events), expected_story(delay), "{events:#?}");
    assert_eq!(mock.request_count(), 2);
}

#[test]
fn googles_retry_info_sets_the_auto_retry_wait() {
    let api = "google-generative-ai";
    let body = serde_json::json!({"error": {
        "code": 429,
        "message": "Resource has been exhausted (e.g. check quota).",
        "status": "RESOURCE_EXHAUSTED",
        "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1.2s"}]
    }});
    let (events, mock) = json_events(
        api,
        vec![
            Reply::error(429, &body.to_string()),
            Reply::text(api, "recovered answer"),
        ],
    );
    assert_eq!(retry_story(&events), expected_story(1200), "{events:#?}");
    assert_eq!(mock.request_count(), 2);
}

#[test]
fn a_server_wait_over_the_cap_is_not_retried_and_says_why() {
    let api = "openai-completions";
    let mock = MockServer::with_replies([
        Reply::api_error(api, 429, "Slow down").header("Retry-After", "120"),
        Reply::text(api, "must not be used"),
    ]);
    let out = PiCommand::for_mock(api, &mock).args(["-p", "hello"]).run();
    out.assert_code(1).assert_no_panic();
    assert_eq!(
        mock.request_count(),
        1,
        "pi gives up rather than wait 120 s"
    );
    assert!(
        out.stderr
            .contains("Server requested 120s retry delay (max: 60s). 429"),
        "{}",
        out.stderr
    );
}

/// The interactive countdown shows the server's wait, and Escape ends it: no second request.
#[test]
fn the_countdown_shows_the_servers_wait_and_escape_cancels_it() {
    use crate::support::pty::PtyChild;
    use std::time::Duration;
    let api = "openai-completions";
    let mock = MockServer::with_replies([
        Reply::api_error(api, 429, "Too many requests").header("Retry-After", "50"),
        Reply::text(api, "must not be used"),
    ]);
    let pi = PiCommand::for_mock(api, &mock);
    let mut child = PtyChild::spawn(pi.command(), 120, 30);
    child.wait_for("mock-model", Duration::from_secs(10));
    child.send("hello");
    child.send("\r");
    child.wait_for("Retrying (1/3) in ", Duration::from_secs(10));
    let screen = child.screen();
    let secs: u64 = screen
        .split("Retrying (1/3) in ")
        .nth(1)
        .and_then(|rest| rest.split('s').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no countdown: {screen}"));
    assert!((40..=50).contains(&secs), "counts down from 50 s: {screen}");
    child.send("\x1b");
    child.wait_for("Retry cancelled", Duration::from_secs(5));
    assert_eq!(mock.request_count(), 1, "the retry was cancelled");
    child.send("\x04");
    let status = child.wait_exit(Duration::from_secs(10));
    assert!(status.success(), "{status:?}");
}

#[test]
fn refused_credentials_are_not_retried_whatever_their_words() {
    // The words look transient (pi's patterns would retry them); the status says a retry
    // cannot help, and the typed error decides.
    let api = "anthropic-messages";
    let mock = MockServer::with_replies([
        Reply::api_error(api, 401, "invalid x-api-key; please retry your request"),
        Reply::text(api, "must not be used"),
    ]);
    let out = PiCommand::for_mock(api, &mock).args(["-p", "hello"]).run();
    out.assert_code(1).assert_no_panic();
    assert!(
        out.stderr
            .contains("401 invalid x-api-key; please retry your request"),
        "the text users see is unchanged: {}",
        out.stderr
    );
    assert_eq!(mock.request_count(), 1);
}
