//! Blocking HTTP for providers: one POST with a JSON body and explicit connect/read timeouts.
//! Non-2xx answers become `HttpError` with a readable message built from the error body (the
//! `error.message` of a JSON body when there is one), plus what the server said about retrying
//! (`Retry-After`, `x-should-retry`). A 2xx body that turns out not to be a stream — nothing at
//! all, or a JSON/HTML document — fails its first read with a message saying what came back.
//! Every agent built here honours `HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY` (either case) and, for
//! `https://`, trusts what `tls` trusts.

use std::io::Read;
use std::time::Duration;

/// How long a stream may stay silent before we give up on it. Overridable (in milliseconds)
/// with `PI_STREAM_IDLE_TIMEOUT_MS`, which tests use to exercise stalls quickly.
pub fn idle_timeout() -> Duration {
    std::env::var("PI_STREAM_IDLE_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map(Duration::from_millis)
        .unwrap_or(Duration::from_secs(300))
}

const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, PartialEq, Default)]
pub struct HttpError {
    pub status: Option<u16>,
    pub message: String,
    /// The wait the server asked for (`retry-after-ms`, or `retry-after` in seconds or as an
    /// HTTP date).
    pub retry_after_ms: Option<u64>,
    /// The raw error body (at most 64 KiB; empty for transport errors).
    pub body: String,
    /// The server's `x-should-retry` verdict, when it gave one.
    pub should_retry: Option<bool>,
    /// AWS's `x-amzn-errortype` (`ThrottlingException:…`), when present.
    pub error_type: Option<String>,
    /// The request cannot succeed as sent (an invalid URL): retrying fails the same way.
    pub permanent: bool,
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// A streaming response body.
pub type Body = Box<dyn Read + Send + Sync + 'static>;

/// POSTs `body` as JSON and returns the response body reader on a 2xx status.
pub fn post_json(url: &str, headers: &[(String, String)], body: &str) -> Result<Body, HttpError> {
    post_json_with(url, headers, body, None)
}

/// [`post_json`] with a deadline for the server's answer (`retry.provider.timeoutMs`); without
/// one the stream idle timeout applies.
pub fn post_json_with(
    url: &str,
    headers: &[(String, String)],
    body: &str,
    response_timeout: Option<Duration>,
) -> Result<Body, HttpError> {
    let agent = agent_builder(url)
        .timeout_connect(CONNECT_TIMEOUT)
        .timeout_read(response_timeout.unwrap_or_else(idle_timeout))
        .timeout_write(Duration::from_secs(60))
        .build();
    let mut req = agent.post(url).set("content-type", "application/json");
    for (k, v) in headers {
        req = req.set(k, v);
    }
    match req.send_string(body) {
        Ok(resp) => Ok(Box::new(StreamBody {
            status: resp.status(),
            content_type: resp.header("content-type").unwrap_or("").to_string(),
            inner: Box::new(resp.into_reader()),
            seen_data: false,
        })),
        Err(ureq::Error::Status(code, resp)) => {
            let retry_after_ms = server_delay_ms(
                resp.header("retry-after-ms"),
                resp.header("retry-after"),
                crate::ai::types::now_ms(),
            );
            let should_retry = match resp.header("x-should-retry") {
                Some("true") => Some(true),
                Some("false") => Some(false),
                _ => None,
            };
            let error_type = resp.header("x-amzn-errortype").map(str::to_string);
            let mut text = String::new();
            let _ = resp.into_reader().take(64 * 1024).read_to_string(&mut text);
            Err(HttpError {
                status: Some(code),
                message: status_message(code, &text),
                retry_after_ms,
                body: text,
                should_retry,
                error_type,
                permanent: false,
            })
        }
        Err(ureq::Error::Transport(t)) => Err(transport_error(&t, url)),
    }
}

/// The wait a server asked for: `retry-after-ms` (milliseconds), else `retry-after` as seconds
/// or as an HTTP date (a date in the past means now). `None` when neither parses.
pub fn server_delay_ms(
    retry_after_ms: Option<&str>,
    retry_after: Option<&str>,
    now_ms: i64,
) -> Option<u64> {
    let finite = |v: f64| v.is_finite().then_some(v.max(0.0) as u64);
    if let Some(ms) = retry_after_ms.and_then(|v| v.trim().parse::<f64>().ok()) {
        return finite(ms);
    }
    let v = retry_after?.trim();
    match v.parse::<f64>() {
        Ok(secs) => finite(secs * 1000.0),
        Err(_) => {
            let at = crate::util::date::parse_http_date_ms(v)?;
            Some((at - now_ms).max(0) as u64)
        }
    }
}

/// The payload of the I/O error a [`StreamBody`] fails with; [`describe_io_error`] passes its
/// message on unchanged.
#[derive(Debug)]
struct NotAStream(String);

impl std::fmt::Display for NotAStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotAStream {}

/// How every "this 2xx answer is not a stream" message starts; such failures are final.
pub const NOT_A_STREAM_PREFIXES: [&str; 2] = ["Empty reply:", "Not an event stream:"];

/// A 2xx body that checks, on its first bytes, that it is the stream we asked for.
struct StreamBody {
    inner: Body,
    status: u16,
    content_type: String,
    /// A byte other than whitespace has arrived (and passed the check).
    seen_data: bool,
}

impl StreamBody {
    fn describe(&self) -> String {
        let ct = self.content_type.split(';').next().unwrap_or("").trim();
        match ct {
            "" => format!("{} with no content type", self.status),
            ct => format!("{} ({ct})", self.status),
        }
    }

    fn fail(&self, message: String) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::InvalidData, NotAStream(message))
    }
}

impl Read for StreamBody {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if self.seen_data {
            return Ok(n);
        }
        if n == 0 {
            return Err(self.fail(format!(
                "Empty reply: the server answered {} and sent no data. The prompt is likely \
                 longer than the server's context size (llama.cpp answers this way).",
                self.describe()
            )));
        }
        let Some(&first) = buf[..n].iter().find(|b| !b.is_ascii_whitespace()) else {
            return Ok(n);
        };
        self.seen_data = true;
        let declared_stream =
            self.content_type.contains("event-stream") || self.content_type.contains("eventstream");
        if declared_stream || !matches!(first, b'{' | b'[' | b'<') {
            return Ok(n);
        }
        // A JSON or HTML document: show its start, which usually says what went wrong.
        let mut start = buf[..n].to_vec();
        let _ = (&mut self.inner).take(512).read_to_end(&mut start);
        let text = String::from_utf8_lossy(&start);
        let mut excerpt: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if excerpt.chars().count() > 300 {
            excerpt = excerpt.chars().take(300).collect::<String>() + "…";
        }
        Err(self.fail(format!(
            "Not an event stream: the server answered {} with a document instead of a \
             stream: {excerpt}",
            self.describe()
        )))
    }
}

/// The host part of an `http(s)://` URL, lower-cased, without port or brackets.
fn url_host(url: &str) -> String {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority
        .rsplit_once('@')
        .map(|(_, h)| h)
        .unwrap_or(authority);
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    host.to_ascii_lowercase()
}

/// Whether a request to `url` may go through the proxy from the environment: never for
/// loopback (local model servers), nor for hosts listed in `NO_PROXY` (`*`, exact names, or
/// domain suffixes such as `.corp` / `corp`).
#[cfg(test)]
fn use_proxy(url: &str) -> bool {
    let no_proxy = std::env::var("NO_PROXY")
        .or_else(|_| std::env::var("no_proxy"))
        .unwrap_or_default();
    use_proxy_with(url, &no_proxy)
}

fn use_proxy_with(url: &str, no_proxy: &str) -> bool {
    let host = url_host(url);
    if host == "localhost" || host.starts_with("127.") || host == "::1" {
        return false;
    }
    !no_proxy
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .any(|entry| {
            let entry = entry.trim_start_matches('.').to_ascii_lowercase();
            entry == "*" || host == entry || host.ends_with(&format!(".{entry}"))
        })
}

/// An agent builder for requests to `url`: the proxy the environment asks for (if any) and
/// our TLS configuration for `https://`. Callers add their timeouts.
pub fn agent_builder(url: &str) -> ureq::AgentBuilder {
    let mut b = ureq::AgentBuilder::new();
    if let Some(p) = proxy_for(url, &|k| std::env::var(k).ok()) {
        if let Ok(p) = ureq::Proxy::new(&p) {
            b = b.proxy(p);
        }
    }
    // Plain http:// (local model servers) never builds, or pays for, a TLS configuration.
    if url
        .get(..8)
        .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
    {
        b = b.tls_config(super::tls::client_config());
    }
    b
}

/// The proxy for `url` as undici's `EnvHttpProxyAgent` picks it: `https://` URLs use
/// `HTTPS_PROXY`, falling back to `HTTP_PROXY`; `http://` URLs use `HTTP_PROXY`. Lower-case
/// names count too (upper case first), then `ALL_PROXY`; empty values are unset; `NO_PROXY` and
/// loopback opt out.
pub fn proxy_for(url: &str, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let var = |upper: &str| {
        env(upper)
            .or_else(|| env(&upper.to_ascii_lowercase()))
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    if !use_proxy_with(url, &var("NO_PROXY").unwrap_or_default()) {
        return None;
    }
    let specific = if url
        .get(..8)
        .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
    {
        var("HTTPS_PROXY").or_else(|| var("HTTP_PROXY"))
    } else {
        var("HTTP_PROXY")
    };
    // ALL_PROXY is not undici's, but earlier builds honoured it (through ureq): keep it last.
    specific.or_else(|| var("ALL_PROXY"))
}

/// A plain request with a small body and a readable answer (OAuth token endpoints): the status
/// and body text of any HTTP answer, or `Err` for a transport failure.
pub fn request(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Result<(u16, String), String> {
    let agent = agent_builder(url)
        .timeout_connect(CONNECT_TIMEOUT)
        .timeout(Duration::from_secs(30))
        .build();
    let mut req = agent.request(method, url);
    for (k, v) in headers {
        req = req.set(k, v);
    }
    let result = match body {
        Some(b) => req.send_string(b),
        None => req.call(),
    };
    let resp = match result {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(ureq::Error::Transport(t)) => return Err(transport_error(&t, url).message),
    };
    let status = resp.status();
    let mut text = String::new();
    resp.into_reader()
        .take(1 << 20)
        .read_to_string(&mut text)
        .map_err(|e| describe_io_error(&e))?;
    Ok((status, text))
}

/// A quick GET of a small JSON document (model listings of local servers), with short
/// timeouts because it only probes. `None` on any failure.
pub fn get_json(url: &str, timeout: Duration) -> Option<serde_json::Value> {
    let agent = agent_builder(url)
        .timeout_connect(timeout)
        .timeout(timeout * 4)
        .build();
    let resp = agent.get(url).call().ok()?;
    let mut text = String::new();
    resp.into_reader()
        .take(1 << 20)
        .read_to_string(&mut text)
        .ok()?;
    serde_json::from_str(&text).ok()
}

/// `"<status> <message>"` the way the official SDKs word a failed request.
pub fn status_message(code: u16, body: &str) -> String {
    let body = body.trim();
    if body.is_empty() {
        return format!("{code} status code (no body)");
    }
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(body) {
        let err = v.get("error").unwrap_or(&v);
        let msg = err
            .get("message")
            .and_then(|m| m.as_str())
            .or_else(|| err.as_str())
            .or_else(|| v.get("message").and_then(|m| m.as_str()));
        if let Some(m) = msg {
            return format!("{code} {m}");
        }
    }
    format!("{code} {body}")
}

fn transport_error(t: &ureq::Transport, url: &str) -> HttpError {
    use ureq::ErrorKind as K;
    let detail = t
        .message()
        .map(|m| m.to_string())
        .unwrap_or_else(|| t.to_string());
    let (message, permanent) = match t.kind() {
        K::InvalidUrl | K::UnknownScheme => (
            format!("Invalid URL \"{url}\": {detail}. Check the provider's baseUrl."),
            true,
        ),
        K::InvalidProxyUrl => (format!("Invalid proxy URL: {detail}"), true),
        K::ConnectionFailed => (
            format!("Connection error: could not connect ({detail})"),
            false,
        ),
        K::Dns => (
            format!("Connection error: could not resolve host ({detail})"),
            false,
        ),
        K::Io => (format!("Network error: {detail}"), false),
        _ => (format!("Connection error: {t}"), false),
    };
    HttpError {
        message,
        permanent,
        ..Default::default()
    }
}

/// A readable message for an I/O error while reading a response body.
pub fn describe_io_error(e: &std::io::Error) -> String {
    if let Some(not_a_stream) = e.get_ref().and_then(|r| r.downcast_ref::<NotAStream>()) {
        return not_a_stream.0.clone();
    }
    match e.kind() {
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => format!(
            "Stream timed out: no data from the server for {} s (set PI_STREAM_IDLE_TIMEOUT_MS to change)",
            idle_timeout().as_secs_f64()
        ),
        std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::ConnectionReset => {
            format!("Connection lost: other side closed ({e})")
        }
        _ => format!("Network error: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_never_uses_the_proxy() {
        assert_eq!(url_host("http://user:pw@[::1]:8080/v1"), "::1");
        assert_eq!(url_host("https://API.example.com/v1?x"), "api.example.com");
        assert!(!use_proxy("http://127.0.0.1:11434/v1"));
        assert!(!use_proxy("http://localhost:8080/v1"));
    }

    #[test]
    fn proxy_choice_follows_scheme_case_and_no_proxy() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let e = env(&[
            ("https_proxy", "http://p:3128"),
            ("HTTP_PROXY", "http://h:80"),
        ]);
        assert_eq!(
            proxy_for("https://api.x.com/v1", &e).as_deref(),
            Some("http://p:3128")
        );
        assert_eq!(
            proxy_for("http://api.x.com/v1", &e).as_deref(),
            Some("http://h:80")
        );
        assert_eq!(proxy_for("http://127.0.0.1:9/v1", &e), None);
        let e = env(&[("HTTP_PROXY", "http://h:80"), ("no_proxy", ".corp, other")]);
        assert_eq!(
            proxy_for("https://api.x.com/v1", &e).as_deref(),
            Some("http://h:80")
        );
        assert_eq!(proxy_for("https://llm.corp/v1", &e), None);
        assert_eq!(proxy_for("https://other:8443/v1", &e), None);
        let e = env(&[("HTTPS_PROXY", " ")]);
        assert_eq!(proxy_for("https://api.x.com", &e), None);
        let e = env(&[("all_proxy", "socks5://s:1080")]);
        assert_eq!(
            proxy_for("https://api.x.com", &e).as_deref(),
            Some("socks5://s:1080")
        );
    }

    fn body(content_type: &str, bytes: &'static [u8]) -> StreamBody {
        StreamBody {
            inner: Box::new(bytes),
            status: 200,
            content_type: content_type.into(),
            seen_data: false,
        }
    }

    fn read_all(mut b: StreamBody) -> Result<String, String> {
        let mut out = String::new();
        b.read_to_string(&mut out)
            .map(|_| out)
            .map_err(|e| describe_io_error(&e))
    }

    #[test]
    fn a_2xx_body_that_is_no_stream_says_what_it_is() {
        let stream = "data: {}\n\n";
        assert_eq!(
            read_all(body("text/event-stream", stream.as_bytes())).as_deref(),
            Ok(stream)
        );
        // Streams with a wrong or missing content type still pass.
        assert!(read_all(body("application/json", b"\n\ndata: {}\n\n")).is_ok());
        assert!(read_all(body("", b": keep-alive\n\n")).is_ok());
        let err = read_all(body(
            "application/json; charset=utf-8",
            b" {\"error\":\n \"no\"}",
        ));
        assert_eq!(
            err.unwrap_err(),
            "Not an event stream: the server answered 200 (application/json) with a document \
             instead of a stream: {\"error\": \"no\"}"
        );
        let err = read_all(body("", b"<html>x</html>")).unwrap_err();
        assert!(err.contains("200 with no content type"), "{err}");
        for empty in [&b""[..], b"\n\n"] {
            let err = read_all(body("text/event-stream", empty)).unwrap_err();
            assert!(err.starts_with("Empty reply: the server answered 200 (text/event-stream)"));
        }
        // Bedrock's binary frames are never mistaken for a document.
        assert!(read_all(body("application/vnd.amazon.eventstream", b"{\0\0")).is_ok());
    }

    #[test]
    fn server_delays_in_every_spelling() {
        assert_eq!(server_delay_ms(Some("1500"), Some("9"), 0), Some(1500));
        assert_eq!(server_delay_ms(None, Some("2.5"), 0), Some(2500));
        let now = 784_111_777_000 - 30_000;
        assert_eq!(
            server_delay_ms(None, Some("Sun, 06 Nov 1994 08:49:37 GMT"), now),
            Some(30_000)
        );
        assert_eq!(
            server_delay_ms(None, Some("Sun, 06 Nov 1994 08:49:37 GMT"), now + 60_000),
            Some(0)
        );
        assert_eq!(server_delay_ms(None, Some("later, maybe"), 0), None);
        assert_eq!(server_delay_ms(None, None, 0), None);
    }

    #[test]
    fn invalid_urls_are_final() {
        for url in ["htp://x/v1/chat", "http//x", "localhost:8080/v1"] {
            let e = post_json(url, &[], "{}").err().expect("must fail");
            assert!(e.permanent, "{url}: {e:?}");
            assert!(e.message.starts_with("Invalid URL"), "{url}: {}", e.message);
        }
    }

    #[test]
    fn status_messages_read_like_the_sdks() {
        assert_eq!(
            status_message(400, r#"{"error":{"message":"mock failure 400"}}"#),
            "400 mock failure 400"
        );
        assert_eq!(status_message(500, ""), "500 status code (no body)");
        assert_eq!(
            status_message(502, "<html>bad gateway</html>"),
            "502 <html>bad gateway</html>"
        );
        assert_eq!(
            status_message(
                529,
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            ),
            "529 Overloaded"
        );
    }
}
