//! Checks of the mock server itself, using ureq the way the binary does: streams arrive
//! incrementally, requests are recorded, chunked request bodies are read, faults look right.

use std::io::{BufRead, BufReader, Read};
use std::time::{Duration, Instant};

use crate::support::{route, sse_events, sse_text, MockServer, Reply, APIS};

/// A response with its status, as the tests below read it.
struct Answer(ureq::http::Response<ureq::Body>);

impl Answer {
    fn status(&self) -> u16 {
        self.0.status().as_u16()
    }
    fn header(&self, name: &str) -> Option<&str> {
        self.0.headers().get(name).and_then(|v| v.to_str().ok())
    }
    fn into_reader(self) -> impl Read {
        self.0.into_body().into_reader()
    }
    fn into_string(self) -> std::io::Result<String> {
        let mut text = String::new();
        self.into_reader().read_to_string(&mut text)?;
        Ok(text)
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .build()
        .into()
}

// ureq's own error type is large; boxing it would only obscure the matches below.
#[allow(clippy::result_large_err)]
fn post(url: &str, body: &str) -> Result<Answer, ureq::Error> {
    agent()
        .post(url)
        .header("content-type", "application/json")
        .header("authorization", "Bearer k")
        .send(body)
        .map(Answer)
}

#[test]
fn routes_by_suffix() {
    assert_eq!(route("/v1/messages"), Some("anthropic-messages"));
    assert_eq!(route("/v1/chat/completions"), Some("openai-completions"));
    assert_eq!(route("/v1/responses"), Some("openai-responses"));
    assert_eq!(
        route("/v1beta/models/m:streamGenerateContent?alt=sse"),
        Some("google-generative-ai")
    );
    assert_eq!(route("/v1/models"), None);
}

#[test]
fn streams_are_read_incrementally() {
    let api = "openai-completions";
    let mock = MockServer::with_replies([
        Reply::text(api, "first part, then a pause").stall_after(2, 1500)
    ]);
    let started = Instant::now();
    let resp = post(
        &format!("{}/v1/chat/completions", mock.url()),
        r#"{"messages":[]}"#,
    )
    .unwrap();
    assert_eq!(resp.header("content-type"), Some("text/event-stream"));
    let mut lines = BufReader::new(resp.into_reader()).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(first.starts_with("data: {"), "{first}");
    assert!(
        started.elapsed() < Duration::from_millis(1000),
        "first event arrived before the stall ended"
    );
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    assert_eq!(rest.last().map(String::as_str), Some(""));
    assert!(rest.iter().any(|l| l == "data: [DONE]"));
    assert!(started.elapsed() >= Duration::from_millis(1400));
}

#[test]
fn records_requests_and_answers_500_when_queue_is_empty() {
    let mock = MockServer::start();
    let resp = post(
        &format!("{}/v1/messages", mock.url()),
        r#"{"messages":[{"role":"user","content":"hi"}]}"#,
    )
    .unwrap();
    assert_eq!(resp.status(), 500);
    assert_eq!(resp.into_string().unwrap(), "mock: no scripted reply");
    let req = mock.single_request();
    assert_eq!(req.method, "POST");
    assert_eq!(req.path, "/v1/messages");
    assert_eq!(req.header("Authorization"), Some("Bearer k"));
    assert_eq!(req.last_user_text().as_deref(), Some("hi"));
}

#[test]
fn reads_chunked_request_bodies() {
    let mock = MockServer::with_replies([Reply::text("openai-responses", "ok")]);
    let body = br#"{"input":[{"role":"user","content":[{"type":"input_text","text":"chunky"}]}]}"#;
    // ureq sends a reader body with Transfer-Encoding: chunked
    let resp = agent()
        .post(format!("{}/v1/responses", mock.url()))
        .send(ureq::SendBody::from_reader(&mut &body[..]))
        .map(Answer)
        .unwrap();
    let _ = resp.into_string().unwrap();
    let req = mock.single_request();
    assert_eq!(req.header("transfer-encoding"), Some("chunked"));
    assert_eq!(req.last_user_text().as_deref(), Some("chunky"));
}

#[test]
fn error_replies_carry_status_headers_and_body() {
    let mock = MockServer::with_replies([
        Reply::rate_limited("openai-completions", 25),
        Reply::overloaded(),
    ]);
    let resp = post(&format!("{}/v1/chat/completions", mock.url()), "{}").unwrap();
    assert_eq!(resp.status(), 429);
    assert_eq!(resp.header("retry-after-ms"), Some("25"));
    let v: serde_json::Value = serde_json::from_str(&resp.into_string().unwrap()).unwrap();
    assert_eq!(v["error"]["message"], "Rate limit exceeded");
    let resp = post(&format!("{}/v1/messages", mock.url()), "{}").unwrap();
    assert_eq!(resp.status(), 529);
    let v: serde_json::Value = serde_json::from_str(&resp.into_string().unwrap()).unwrap();
    assert_eq!(v["error"]["type"], "overloaded_error");
}

#[test]
fn cut_streams_end_early() {
    let api = "anthropic-messages";
    let full = sse_text(api, "a fairly long answer that will be cut");
    let mock =
        MockServer::with_replies([
            Reply::text(api, "a fairly long answer that will be cut").cut_after(3)
        ]);
    let resp = post(&format!("{}/v1/messages", mock.url()), "{}").unwrap();
    let mut got = Vec::new();
    let _ = resp.into_reader().read_to_end(&mut got);
    let got = String::from_utf8_lossy(&got);
    assert!(got.len() < full.len());
    assert!(full.starts_with(got.as_ref()));
    assert!(!got.contains("message_stop"));
}

#[test]
fn chunked_cut_streams_are_an_error_for_the_client() {
    let api = "openai-completions";
    let mock = MockServer::with_replies([Reply::text(api, "cut me please, in the middle")
        .chunked()
        .cut_after(2)]);
    let resp = post(&format!("{}/v1/chat/completions", mock.url()), "{}").unwrap();
    let mut got = Vec::new();
    assert!(
        resp.into_reader().read_to_end(&mut got).is_err(),
        "truncated chunked body must not look complete"
    );
}

#[test]
fn complete_chunked_streams_read_fully() {
    let api = "google-generative-ai";
    let mock = MockServer::with_replies([Reply::text(api, "chunked but whole").chunked()]);
    let resp = post(
        &format!(
            "{}/v1beta/models/m:streamGenerateContent?alt=sse",
            mock.url()
        ),
        "{}",
    )
    .unwrap();
    assert_eq!(
        resp.into_string().unwrap(),
        sse_text(api, "chunked but whole")
    );
}

#[test]
fn sse_builders_end_with_the_terminal_event() {
    for api in APIS {
        let ev = sse_events(api, "some text for the builder");
        let last = ev.last().unwrap();
        let ok = match api {
            "anthropic-messages" => last.starts_with("event: message_stop"),
            "openai-completions" => last == "data: [DONE]\n\n",
            "openai-responses" => last.starts_with("event: response.completed"),
            _ => last.contains("\"finishReason\":\"STOP\"") && last.contains("usageMetadata"),
        };
        assert!(ok, "{api}: {last}");
        // every data line is valid JSON (except the [DONE] sentinel)
        for e in &ev {
            for line in e.lines().filter_map(|l| l.strip_prefix("data: ")) {
                if line != "[DONE]" {
                    serde_json::from_str::<serde_json::Value>(line)
                        .unwrap_or_else(|e| panic!("{api}: {e}: {line}"));
                }
            }
        }
    }
}

#[test]
fn fixtures_load_without_comment_lines() {
    for api in APIS {
        for case in ["text", "thinking", "tool_call", "malformed"] {
            let r = Reply::fixture(&format!("sse/{api}/{case}.sse"));
            assert!(r.len() > 2, "{api}/{case}");
        }
    }
    let text = crate::support::read_fixture("sse/openai-completions/text.sse");
    assert!(text.starts_with("data: {"));
}
