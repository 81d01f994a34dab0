//! Blocking HTTP on ureq: provider POSTs with a JSON body, small requests for OAuth and token
//! endpoints, and quick probes of local servers. Every request goes through the proxy the
//! environment asks for (`proxy`), speaks TLS through our rustls connector (`tls`), and gives up
//! on a connection silent for the idle timeout.
//!
//! Non-2xx answers become `HttpError` with a readable message built from the error body (the
//! `error.message` of a JSON body when there is one), plus what the server said about retrying
//! (`Retry-After`, `x-should-retry`). A 2xx body that turns out not to be a stream — nothing at
//! all, or a JSON/HTML document — fails its first read with a message saying what came back.

use std::io::Read;
use std::time::Duration;

use super::error::ProviderError;

use ureq::http::{HeaderName, HeaderValue, Method, Request, Response, Uri};
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{
    time, ConnectProxyConnector, Connector, NextTimeout, SocksConnector, TcpConnector,
};

/// `httpIdleTimeoutMs` and `httpProxy` from settings.json, set once at start-up.
static IDLE_SETTING_MS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
static PROXY_SETTING: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Applies settings.json's `httpIdleTimeoutMs` (0: no limit) and `httpProxy` (used as
/// `HTTP_PROXY` and `HTTPS_PROXY` where those are not set, as pi 1.6.0 does) to every
/// request this process makes. Only the first call counts.
pub fn configure(idle_timeout_ms: Option<u64>, proxy: Option<String>) {
    if let Some(ms) = idle_timeout_ms {
        let _ = IDLE_SETTING_MS.set(ms);
    }
    if let Some(p) = proxy {
        let _ = PROXY_SETTING.set(p);
    }
}

/// The environment as the proxy choice reads it, with settings.json's `httpProxy` standing in
/// for an unset `HTTP_PROXY`/`HTTPS_PROXY`.
fn proxy_env(name: &str) -> Option<String> {
    std::env::var(name).ok().or_else(|| {
        matches!(name, "HTTP_PROXY" | "HTTPS_PROXY")
            .then(|| PROXY_SETTING.get().cloned())
            .flatten()
    })
}

/// "No limit": long enough never to fire, short enough to add to an `Instant`.
const NO_IDLE_LIMIT: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

/// How long a stream may stay silent before we give up on it: settings.json's
/// `httpIdleTimeoutMs` (default 300 s; 0 or `"disabled"` for none). `PI_STREAM_IDLE_TIMEOUT_MS`
/// overrides it (tests use it to exercise stalls quickly).
pub fn idle_timeout() -> Duration {
    let ms = std::env::var("PI_STREAM_IDLE_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .or_else(|| IDLE_SETTING_MS.get().copied());
    match ms {
        Some(0) => NO_IDLE_LIMIT,
        Some(ms) => Duration::from_millis(ms),
        None => Duration::from_secs(300),
    }
}

const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
const WRITE_TIMEOUT: Duration = Duration::from_secs(60);
/// Per-connection read buffer: response headers larger than this are refused.
const BUFFER_SIZE: usize = 32 * 1024;

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

impl HttpError {
    /// The typed error a model request of `provider` failed with.
    pub fn into_provider_error(self, provider: &str) -> ProviderError {
        ProviderError::from_status(
            self.status,
            self.message,
            &self.body,
            self.retry_after_ms,
            self.permanent,
            provider,
        )
    }
}

/// A failure reading a streamed answer: the connection (retrying may help), or a 2xx answer
/// that is no stream (final, as its words say).
pub fn read_error(e: &std::io::Error) -> ProviderError {
    let message = describe_io_error(e);
    if NOT_A_STREAM_PREFIXES.iter().any(|p| message.starts_with(p)) {
        return message.into();
    }
    ProviderError::Transport {
        message,
        permanent: false,
    }
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// A streaming response body.
pub type Body = Box<dyn Read + Send + Sync + 'static>;

/// The deadlines of one request; the idle timeout applies to every read besides.
#[derive(Debug, Clone, Copy)]
struct Deadlines {
    connect: Duration,
    /// The longest silence of the server while we wait to read.
    idle: Duration,
    /// Until the response headers have arrived.
    response: Option<Duration>,
    /// For the whole exchange, body included.
    total: Option<Duration>,
}

/// An agent for requests to `url`: its proxy, our TLS, these deadlines, and every status
/// returned as a response (we word errors ourselves).
fn agent(url: &str, deadlines: Deadlines) -> ureq::Agent {
    let proxy = super::proxy::proxy_for(url, &proxy_env).and_then(|p| ureq::Proxy::new(&p).ok());
    let config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(proxy)
        .timeout_connect(Some(deadlines.connect))
        .timeout_per_read(Some(deadlines.idle))
        .timeout_per_write(Some(WRITE_TIMEOUT))
        .timeout_recv_response(deadlines.response)
        .timeout_global(deadlines.total)
        // ureq zero-fills 128 KiB each way per connection (twice under TLS), ~60 pages a
        // round trip; response headers must fit the input buffer, so it bounds them too.
        .input_buffer_size(BUFFER_SIZE)
        .max_response_header_size(BUFFER_SIZE)
        .output_buffer_size(BUFFER_SIZE / 2)
        .build();
    let connector =
        ().chain(SocksConnector::default())
            .chain(ConnectProxyConnector::default())
            .chain(TcpConnector::default())
            .chain(super::tls::TlsConnector::default());
    ureq::Agent::with_parts(config, connector, SameThreadResolver::default())
}

/// Resolves host names on the calling thread, as ureq 2 did. ureq's resolver spawns a thread
/// per lookup when the exchange has an overall deadline (local-server probes and token requests
/// have one), and a thread costs a malloc arena; an IP address needs no lookup at all.
#[derive(Debug, Default)]
struct SameThreadResolver(DefaultResolver);

impl Resolver for SameThreadResolver {
    fn resolve(
        &self,
        uri: &Uri,
        config: &ureq::config::Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let untimed = NextTimeout {
            after: time::Duration::NotHappening,
            ..timeout
        };
        self.0.resolve(uri, config, untimed)
    }
}

/// How every invalid-URL error starts, so a caller can add what the URL came from.
const INVALID_URL: &str = "Invalid URL";

/// A model request's invalid URL came from the provider's `baseUrl`: say where to fix it.
fn with_base_url_hint(mut e: HttpError) -> HttpError {
    if e.message.starts_with(INVALID_URL) {
        e.message.push_str(" Check the provider's baseUrl.");
    }
    e
}

/// `url` as a URI we can request, or why not (it came from configuration somebody typed).
fn parse_url(url: &str) -> Result<Uri, HttpError> {
    let invalid = |why: String| HttpError {
        message: format!("{INVALID_URL} \"{url}\": {why}."),
        permanent: true,
        ..Default::default()
    };
    let uri: Uri = url.parse().map_err(|e| invalid(format!("{e}")))?;
    match uri.scheme_str() {
        Some("http" | "https") => {}
        Some(other) => return Err(invalid(format!("unknown scheme \"{other}\""))),
        None => return Err(invalid("no http:// or https:// scheme".into())),
    }
    if uri.host().is_none_or(str::is_empty) {
        return Err(invalid("no host".into()));
    }
    Ok(uri)
}

/// A request with `headers` (a later duplicate replaces an earlier one, whatever its case).
fn build<B>(
    method: &str,
    uri: Uri,
    headers: &[(&str, &str)],
    body: B,
) -> Result<Request<B>, HttpError> {
    // The head is built once for every body type.
    build_head(method, uri, headers).map(|head| head.map(|()| body))
}

fn build_head(method: &str, uri: Uri, headers: &[(&str, &str)]) -> Result<Request<()>, HttpError> {
    let method = Method::from_bytes(method.as_bytes()).map_err(|e| HttpError {
        message: format!("Invalid request method {method:?}: {e}"),
        permanent: true,
        ..Default::default()
    })?;
    let mut req = Request::new(());
    *req.method_mut() = method;
    *req.uri_mut() = uri;
    for (k, v) in headers {
        let bad = |e: &dyn std::fmt::Display| HttpError {
            message: format!("Invalid request header {k:?}: {e}"),
            permanent: true,
            ..Default::default()
        };
        let name = HeaderName::from_bytes(k.as_bytes()).map_err(|e| bad(&e))?;
        let value = HeaderValue::from_bytes(v.as_bytes()).map_err(|e| bad(&e))?;
        req.headers_mut().insert(name, value);
    }
    Ok(req)
}

/// An agent for a long-lived client of `url` (MCP's Streamable HTTP), as the other requests
/// here get theirs: reads give up after `idle` of silence, the exchange after `total`.
pub fn client_agent(url: &str, idle: Duration, total: Option<Duration>) -> ureq::Agent {
    let deadlines = Deadlines {
        connect: CONNECT_TIMEOUT,
        idle,
        response: None,
        total,
    };
    agent(url, deadlines)
}

/// A request to `url` with `headers` (a later one of the same name replaces an earlier one);
/// an invalid URL or header is a final error.
pub fn new_request<B>(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: B,
) -> Result<Request<B>, HttpError> {
    build(method, parse_url(url)?, headers, body)
}

/// What to tell the user when a request to `url` got no HTTP answer.
pub fn network_error_message(e: ureq::Error, url: &str) -> String {
    transport_error(e, url).message
}

/// The first value of a response header, when it is text.
pub fn header<'a>(resp: &'a Response<ureq::Body>, name: &str) -> Option<&'a str> {
    resp.headers().get(name).and_then(|v| v.to_str().ok())
}

/// POSTs `body` as JSON and returns the response body reader on a 2xx status.
pub fn post_json(url: &str, headers: &[(String, String)], body: &str) -> Result<Body, HttpError> {
    post_json_with(url, headers, body, None)
}

/// [`post_json`] with a deadline for the server's answer (`retry.provider.timeoutMs`); the
/// idle timeout bounds every wait regardless.
pub fn post_json_with(
    url: &str,
    headers: &[(String, String)],
    body: &str,
    response_timeout: Option<Duration>,
) -> Result<Body, HttpError> {
    let resp = send_post(url, headers, body, response_timeout)?;
    Ok(Box::new(StreamBody {
        status: resp.status().as_u16(),
        content_type: header(&resp, "content-type").unwrap_or("").to_string(),
        inner: Box::new(resp.into_body().into_reader()),
        seen_data: false,
    }))
}

/// POSTs `body` as JSON to an API that answers with one JSON document (images, classifiers):
/// the answer's text on a 2xx status.
pub fn post_json_document(
    url: &str,
    headers: &[(String, String)],
    body: &str,
) -> Result<String, HttpError> {
    let resp = send_post(url, headers, body, None)?;
    let mut text = String::new();
    resp.into_body()
        .into_reader()
        .read_to_string(&mut text)
        .map_err(|e| HttpError {
            message: describe_io_error(&e),
            ..Default::default()
        })?;
    Ok(text)
}

/// Sends a JSON POST; a 2xx response comes back to be read, anything else is an `HttpError`
/// with the server's message and retry hints.
fn send_post(
    url: &str,
    headers: &[(String, String)],
    body: &str,
    response_timeout: Option<Duration>,
) -> Result<Response<ureq::Body>, HttpError> {
    let uri = parse_url(url).map_err(with_base_url_hint)?;
    let mut all = vec![("content-type", "application/json")];
    all.extend(headers.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let req = build("POST", uri, &all, body)?;
    let deadlines = Deadlines {
        connect: CONNECT_TIMEOUT,
        idle: idle_timeout(),
        response: response_timeout,
        total: None,
    };
    let resp = agent(url, deadlines)
        .run(req)
        .map_err(|e| with_base_url_hint(transport_error(e, url)))?;
    let status = resp.status().as_u16();
    if (200..300).contains(&status) {
        return Ok(resp);
    }
    let header_delay_ms = server_delay_ms(
        header(&resp, "retry-after-ms"),
        header(&resp, "retry-after"),
        crate::ai::types::now_ms(),
    );
    let should_retry = match header(&resp, "x-should-retry") {
        Some("true") => Some(true),
        Some("false") => Some(false),
        _ => None,
    };
    let error_type = header(&resp, "x-amzn-errortype").map(str::to_string);
    let mut text = String::new();
    let _ = resp
        .into_body()
        .into_reader()
        .take(64 * 1024)
        .read_to_string(&mut text);
    let retry_after_ms = header_delay_ms.or_else(|| retry_info_delay_ms(&text));
    Err(HttpError {
        status: Some(status),
        message: status_message(status, &text),
        retry_after_ms,
        body: text,
        should_retry,
        error_type,
        permanent: false,
    })
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

/// The wait in a Google API error's `google.rpc.RetryInfo` detail (`"retryDelay": "37s"`),
/// which Gemini and Vertex send with a 429 instead of a `Retry-After` header. The error may
/// come alone or as the first item of an array.
pub fn retry_info_delay_ms(body: &str) -> Option<u64> {
    let doc: serde_json::Value = serde_json::from_str(body).ok()?;
    let error = match &doc {
        serde_json::Value::Array(items) => items.first()?.get("error")?,
        other => other.get("error")?,
    };
    error
        .get("details")?
        .as_array()?
        .iter()
        .filter(|d| {
            d.get("@type")
                .and_then(|t| t.as_str())
                .is_some_and(|t| t.ends_with("google.rpc.RetryInfo"))
        })
        .find_map(|d| {
            let secs = d.get("retryDelay")?.as_str()?.trim().strip_suffix('s')?;
            let secs: f64 = secs.parse().ok()?;
            (secs.is_finite() && secs >= 0.0).then(|| (secs * 1000.0).round() as u64)
        })
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

/// A plain request with a small body and a readable answer (OAuth and token endpoints): the
/// status and body text of any HTTP answer, or `Err` when the server could not be reached.
pub fn request(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Result<(u16, String), String> {
    let uri = parse_url(url).map_err(|e| e.message)?;
    let deadlines = Deadlines {
        connect: CONNECT_TIMEOUT,
        idle: idle_timeout(),
        response: None,
        total: Some(Duration::from_secs(30)),
    };
    let agent = agent(url, deadlines);
    let result = match body {
        Some(b) => agent.run(build(method, uri, headers, b).map_err(|e| e.message)?),
        None => agent.run(build(method, uri, headers, ()).map_err(|e| e.message)?),
    };
    let resp = result.map_err(|e| transport_error(e, url).message)?;
    let status = resp.status().as_u16();
    let mut text = String::new();
    resp.into_body()
        .into_reader()
        .take(1 << 20)
        .read_to_string(&mut text)
        .map_err(|e| describe_io_error(&e))?;
    Ok((status, text))
}

/// A quick GET (or, with a body, POST) of a small JSON document — the model listings and
/// property pages of local servers — with a short connect timeout because it only probes, and a
/// longer `total` because a server that answers the connection may be slow to answer.
/// `None` on any failure.
pub fn probe_json(
    url: &str,
    body: Option<&str>,
    connect: Duration,
    total: Duration,
) -> Option<serde_json::Value> {
    let uri = parse_url(url).ok()?;
    let deadlines = Deadlines {
        connect,
        idle: idle_timeout(),
        response: None,
        total: Some(total),
    };
    let agent = agent(url, deadlines);
    let resp = match body {
        Some(b) => agent.run(build("POST", uri, &[("content-type", "application/json")], b).ok()?),
        None => agent.run(build("GET", uri, &[], ()).ok()?),
    }
    .ok()?;
    if !resp.status().is_success() {
        return None;
    }
    let mut text = String::new();
    resp.into_body()
        .into_reader()
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

fn stream_timed_out() -> String {
    format!(
        "Stream timed out: no data from the server for {} s (set httpIdleTimeoutMs in settings.json to change)",
        idle_timeout().as_secs_f64()
    )
}

/// The error for a request that got no HTTP answer, worded the way pi's clients word it (the
/// agent-level retry reads these words).
fn transport_error(e: ureq::Error, url: &str) -> HttpError {
    use ureq::{Error as E, Timeout as T};
    let host = url
        .parse::<Uri>()
        .ok()
        .and_then(|u| u.host().map(str::to_string))
        .unwrap_or_default();
    let (message, permanent) = match e {
        E::Timeout(T::PerRead) => (stream_timed_out(), false),
        E::Timeout(T::RecvResponse) => (
            "Request timed out: no answer from the server in time (retry.provider.timeoutMs)"
                .to_string(),
            false,
        ),
        E::Timeout(T::Connect | T::Resolve) => (
            format!("Connection error: timed out connecting to {host}"),
            false,
        ),
        E::Timeout(t) => (format!("Request timed out ({t})"), false),
        E::HostNotFound => (
            format!("Connection error: could not resolve host ({host})"),
            false,
        ),
        E::ConnectionFailed => (
            format!("Connection error: could not connect to {host}"),
            false,
        ),
        E::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => (
            format!("Connection error: could not connect to {host} ({io})"),
            false,
        ),
        E::Io(io) => (describe_io_error(&io), false),
        E::InvalidProxyUrl => ("Invalid proxy URL in the environment".to_string(), true),
        E::BadUri(why) => (format!("{INVALID_URL} \"{url}\": {why}."), true),
        E::Http(err) => (format!("Invalid request: {err}"), true),
        E::ConnectProxyFailed(why) => (
            format!("Connection error: the proxy would not connect ({why})"),
            false,
        ),
        E::Tls(why) => (format!("Connection error: TLS: {why}"), false),
        other => (format!("Connection error: {other}"), false),
    };
    HttpError {
        message,
        permanent,
        ..Default::default()
    }
}

/// A readable message for an I/O error while reading a response body.
pub fn describe_io_error(e: &std::io::Error) -> String {
    if let Some(inner) = e.get_ref() {
        if let Some(not_a_stream) = inner.downcast_ref::<NotAStream>() {
            return not_a_stream.0.clone();
        }
        if let Some(ureq::Error::Timeout(_)) = inner.downcast_ref::<ureq::Error>() {
            return stream_timed_out();
        }
        if let Some(tls) = inner.downcast_ref::<rustls::Error>() {
            return format!("Connection error: TLS: {tls}");
        }
    }
    match e.kind() {
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => stream_timed_out(),
        std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::ConnectionReset => {
            format!("Connection lost: other side closed ({e})")
        }
        _ => format!("Network error: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let google = r#"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[
            {"@type":"type.googleapis.com/google.rpc.QuotaFailure"},
            {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37.5s"}]}}"#;
        assert_eq!(retry_info_delay_ms(google), Some(37_500));
        assert_eq!(retry_info_delay_ms(&format!("[{google}]")), Some(37_500));
        assert_eq!(retry_info_delay_ms(r#"{"error":{"details":[]}}"#), None);
        assert_eq!(retry_info_delay_ms("not json"), None);
    }

    #[test]
    fn headers_replace_earlier_ones_and_bad_ones_are_final() {
        let uri: Uri = "http://x/v1".parse().unwrap();
        let req = build(
            "POST",
            uri.clone(),
            &[
                ("content-type", "a"),
                ("Content-Type", "b"),
                ("x-title", "pi ✓"),
            ],
            (),
        )
        .unwrap();
        let all: Vec<_> = req.headers().get_all("content-type").iter().collect();
        assert_eq!(all, ["b"]);
        assert_eq!(req.headers()["x-title"].as_bytes(), "pi ✓".as_bytes());
        let err = build("POST", uri, &[("authorization", "Bearer a\nb")], ()).unwrap_err();
        assert!(
            err.permanent && err.message.contains("\"authorization\""),
            "{err:?}"
        );
        assert!(!err.message.contains("Bearer"), "no secret in the message");
    }

    #[test]
    fn invalid_urls_are_final() {
        for url in ["htp://x/v1/chat", "http//x", "localhost:8080/v1"] {
            let e = post_json(url, &[], "{}").err().expect("must fail");
            assert!(e.permanent, "{url}: {e:?}");
            assert!(e.message.starts_with("Invalid URL"), "{url}: {}", e.message);
            assert!(
                e.message.ends_with("Check the provider's baseUrl."),
                "{}",
                e.message
            );
        }
        // Other requests (MCP servers, OAuth endpoints) do not blame a provider's baseUrl.
        let e = request("GET", "htp://x/token", &[], None).unwrap_err();
        assert!(
            e.starts_with("Invalid URL") && !e.contains("baseUrl"),
            "{e}"
        );
        let e = new_request("POST", "http//x", &[], ()).expect_err("must fail");
        assert!(!e.message.contains("baseUrl"), "{}", e.message);
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
