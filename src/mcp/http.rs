//! The Streamable HTTP transport, and the only MCP file that talks to the HTTP client. Each
//! message is a POST on its own thread; a request's answer is a JSON body (one message or a
//! batch) or an SSE stream, read until the answer arrives. The server's `Mcp-Session-Id` is
//! sent back on every request, `MCP-Protocol-Version` once negotiated, and `DELETE` ends the
//! session on close. `notifications/initialized` is acknowledged by the server (202) and the
//! GET stream that carries server-initiated messages is open (or refused: a 405 means the
//! server has none) before any request follows, so the server sees the protocol's order. A stream that ends or breaks before the answer it carries,
//! from a server that numbers its events, is resumed with a GET and `Last-Event-ID` (with
//! backoff, or the server's `retry:`), as pi does; so is the GET stream when it drops. Bodies
//! and events are limited to 16 MiB. Credentials come
//! from the configured headers and, when set, an [`AuthProvider`] (OAuth plugs in there).
//! Proxies and extra CA roots come from the providers' HTTP helpers.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender};
use serde_json::Value;

use super::rpc::{classify, Incoming, Kind, McpError, Sink, Transport, MAX_MESSAGE_BYTES};
use crate::ai::http::{self, header};
use crate::ai::sse::SseParser;
use crate::ai::Abort;

type Response = ureq::http::Response<ureq::Body>;

/// How long the server-to-client stream may stay silent before it is reopened.
const GET_STREAM_IDLE: Duration = Duration::from_secs(300);
/// How long requests wait for the notification stream to open after `initialized`.
const GET_STREAM_OPEN_WAIT: Duration = Duration::from_secs(2);
/// How often a wait looks at the abort flag.
const POLL: Duration = Duration::from_millis(50);
const MAX_ERROR_BODY_BYTES: u64 = 8 * 1024;
const ERROR_BODY_CHARS: usize = 500;
/// Attempts to resume a stream in a row (reset whenever one brings events).
const RECONNECT_RETRIES: u32 = 5;
const RECONNECT_INITIAL: Duration = Duration::from_secs(1);
const RECONNECT_MAX: Duration = Duration::from_secs(30);

/// Where a stream got to, for resuming it.
#[derive(Debug, Default)]
struct Cursor {
    last_event_id: Option<String>,
    retry_ms: Option<u64>,
    /// Events (or ids) arrived since the stream was (re)opened.
    received: bool,
}

/// Why reading a stream stopped before its end.
struct StreamFailure {
    message: String,
    /// A broken connection (worth resuming), not a protocol limit.
    retryable: bool,
}

/// The wait before resuming: the server's `retry:`, else doubling from 1 s up to 30 s.
fn reconnect_delay(attempt: u32, server_ms: Option<u64>) -> Duration {
    match server_ms {
        Some(ms) => Duration::from_millis(ms),
        None => (RECONNECT_INITIAL * 2u32.saturating_pow(attempt.min(10))).min(RECONNECT_MAX),
    }
}

/// Supplies and renews a bearer token (OAuth, or a provider login).
pub trait AuthProvider: Send + Sync {
    /// The token to send now, if any.
    fn token(&self) -> Option<String>;
    /// The token as it is, never renewed first (for ending the session on close).
    fn current_token(&self) -> Option<String> {
        self.token()
    }
    /// The server rejected `token` (401, or 403 `insufficient_scope`). `Ok(true)` retries the
    /// request once with a new [`AuthProvider::token`]; `Err` ends it with that error.
    fn on_unauthorized(
        &self,
        www_authenticate: Option<&str>,
        token: Option<&str>,
    ) -> Result<bool, McpError>;
}

pub struct HttpSpec {
    pub url: String,
    /// Resolved header values.
    pub headers: Vec<(String, String)>,
    pub auth: Option<Arc<dyn AuthProvider>>,
    /// The server's request timeout; reads give up a little after it.
    pub timeout: Duration,
}

struct State {
    session_id: Option<String>,
    protocol_version: Option<String>,
}

struct Inner {
    spec: HttpSpec,
    agent: ureq::Agent,
    /// For the long-lived server-to-client stream.
    get_agent: ureq::Agent,
    state: Mutex<State>,
    closed: AtomicBool,
    sink: Sink,
}

pub struct HttpTransport {
    inner: Arc<Inner>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

pub fn start(spec: HttpSpec, sink: Sink) -> Result<Arc<dyn Transport>, McpError> {
    let agent = http::client_agent(&spec.url, spec.timeout + Duration::from_secs(5), None);
    let get_agent = http::client_agent(&spec.url, GET_STREAM_IDLE, None);
    Ok(Arc::new(HttpTransport {
        inner: Arc::new(Inner {
            spec,
            agent,
            get_agent,
            state: Mutex::new(State {
                session_id: None,
                protocol_version: None,
            }),
            closed: AtomicBool::new(false),
            sink,
        }),
    }))
}

fn content_type(resp: &Response) -> String {
    header(resp, "content-type")
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

fn needs_authorization(status: u16, resp: &Response) -> bool {
    status == 401
        || (status == 403
            && header(resp, "www-authenticate")
                .is_some_and(|h| h.to_ascii_lowercase().contains("insufficient_scope")))
}

impl Inner {
    fn request(
        &self,
        method: &str,
        accept: &str,
        body: Option<&str>,
        extra: &[(&str, String)],
    ) -> Result<Response, McpError> {
        let mut retried = false;
        loop {
            let token = self.spec.auth.as_ref().and_then(|a| a.token());
            let agent = if method == "GET" {
                &self.get_agent
            } else {
                &self.agent
            };
            let (session_id, protocol_version) = {
                let state = lock(&self.state);
                (state.session_id.clone(), state.protocol_version.clone())
            };
            let bearer = token.as_ref().map(|t| format!("Bearer {t}"));
            let mut headers: Vec<(&str, &str)> = vec![("accept", accept)];
            headers.extend(
                self.spec
                    .headers
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str())),
            );
            headers.extend(extra.iter().map(|(k, v)| (*k, v.as_str())));
            headers.extend(session_id.as_deref().map(|id| ("mcp-session-id", id)));
            headers.extend(
                protocol_version
                    .as_deref()
                    .map(|v| ("mcp-protocol-version", v)),
            );
            headers.extend(bearer.as_deref().map(|b| ("authorization", b)));
            let url = &self.spec.url;
            let sent = match body {
                Some(b) => {
                    headers.push(("content-type", "application/json"));
                    http::new_request(method, url, &headers, b).map(|r| agent.run(r))
                }
                None => http::new_request(method, url, &headers, ()).map(|r| agent.run(r)),
            };
            let resp = match sent {
                Ok(Ok(r)) => r,
                Ok(Err(e)) => return Err(McpError::Network(http::network_error_message(e, url))),
                Err(e) => return Err(McpError::Network(e.message)),
            };
            let status = resp.status().as_u16();
            if let Some(auth) = &self.spec.auth {
                if !retried && needs_authorization(status, &resp) {
                    retried = true;
                    let challenge = header(&resp, "www-authenticate").map(str::to_string);
                    if auth.on_unauthorized(challenge.as_deref(), token.as_deref())? {
                        continue;
                    }
                }
            }
            if let Some(id) = header(&resp, "mcp-session-id").filter(|s| !s.is_empty()) {
                lock(&self.state).session_id = Some(id.to_string());
            }
            if (200..300).contains(&status) {
                return Ok(resp);
            }
            return Err(self.status_error(status, resp));
        }
    }

    fn status_error(&self, status: u16, resp: Response) -> McpError {
        let challenge = header(&resp, "www-authenticate").map(str::to_string);
        let mut body = String::new();
        let _ = resp
            .into_body()
            .into_reader()
            .take(MAX_ERROR_BODY_BYTES)
            .read_to_string(&mut body);
        if status == 401 {
            return McpError::AuthRequired {
                www_authenticate: challenge,
            };
        }
        if status == 404 && lock(&self.state).session_id.is_some() {
            return McpError::SessionExpired;
        }
        let text = body.trim();
        let snippet = if text.chars().count() > ERROR_BODY_CHARS {
            let cut: String = text.chars().take(ERROR_BODY_CHARS - 3).collect();
            format!("{cut}...")
        } else {
            text.to_string()
        };
        let message = if snippet.is_empty() {
            format!("MCP HTTP request failed with status {status}")
        } else {
            format!("MCP HTTP request failed with status {status}: {snippet}")
        };
        McpError::Http { status, message }
    }

    /// Posts one message and delivers what comes back. Runs on its own thread.
    fn post(self: &Arc<Self>, message: Value) {
        let id = (classify(&message) == Kind::Request).then(|| message["id"].clone());
        let method = message["method"].as_str().unwrap_or_default().to_string();
        let body = message.to_string();
        let resp = match self.request(
            "POST",
            "application/json, text/event-stream",
            Some(&body),
            &[],
        ) {
            Ok(r) => r,
            Err(error) => {
                if let Some(id) = id {
                    (self.sink)(Incoming::Failed { id, error });
                }
                return;
            }
        };
        let Some(id) = id else {
            // A notification or a reply to the server: nothing comes back.
            let _ = std::io::copy(
                &mut resp.into_body().into_reader().take(MAX_ERROR_BODY_BYTES),
                &mut std::io::sink(),
            );
            return;
        };
        let status = resp.status().as_u16();
        let fail = |error: McpError| {
            (self.sink)(Incoming::Failed {
                id: id.clone(),
                error,
            })
        };
        if status == 202 || status == 204 {
            return fail(McpError::Http {
                status,
                message: format!("MCP server accepted request {method} without a response"),
            });
        }
        match content_type(&resp).as_str() {
            "application/json" => match read_limited(resp) {
                Ok(text) => match serde_json::from_str::<Value>(&text) {
                    Ok(Value::Array(items)) => {
                        for item in items {
                            (self.sink)(Incoming::Message(item));
                        }
                    }
                    Ok(v) => (self.sink)(Incoming::Message(v)),
                    Err(e) => fail(McpError::Other(format!(
                        "Invalid JSON from MCP server: {e}"
                    ))),
                },
                Err(e) => fail(e),
            },
            "text/event-stream" => {
                if let Err(reason) = self.consume_response_stream(resp, &id) {
                    fail(McpError::Network(format!(
                        "MCP response stream failed: {reason}"
                    )));
                }
            }
            other => fail(McpError::Http {
                status,
                message: format!(
                    "Unsupported MCP response content type: {}",
                    if other.is_empty() { "missing" } else { other }
                ),
            }),
        }
    }

    /// Reads the SSE stream answering request `id`, resuming it with `Last-Event-ID` when it
    /// ends or breaks first and the server numbered its events. `Err` with the reason when the
    /// answer never came (the transport closing is not an error).
    fn consume_response_stream(&self, first: Response, id: &Value) -> Result<(), String> {
        let mut cursor = Cursor::default();
        let mut stream: Option<Box<dyn Read + Send>> =
            Some(Box::new(first.into_body().into_reader()));
        let mut failure: Option<StreamFailure> = None;
        let mut attempt = 0;
        loop {
            if let Some(reader) = stream.take() {
                match self.read_sse(reader, Some(id), &mut cursor) {
                    Ok(true) => return Ok(()),
                    Ok(false) => failure = None,
                    Err(f) => failure = Some(f),
                }
            }
            if self.closed.load(Ordering::SeqCst) {
                return Ok(());
            }
            if failure.as_ref().is_some_and(|f| !f.retryable)
                || cursor.last_event_id.is_none()
                || attempt >= RECONNECT_RETRIES
            {
                break;
            }
            if cursor.received {
                attempt = 0;
            }
            cursor.received = false;
            if !self.sleep(reconnect_delay(attempt, cursor.retry_ms)) {
                return Ok(());
            }
            attempt += 1;
            match self.open_sse_stream(cursor.last_event_id.as_deref()) {
                Ok(Some(resp)) => stream = Some(Box::new(resp.into_body().into_reader())),
                // The server cannot resume: nothing more comes.
                Ok(None) => break,
                Err(e) => {
                    let retryable = e.is_transient();
                    failure = Some(StreamFailure {
                        message: e.to_string(),
                        retryable,
                    });
                    if !retryable {
                        break;
                    }
                }
            }
        }
        Err(failure.map_or_else(
            || "stream ended without a response".to_string(),
            |f| f.message,
        ))
    }

    /// A GET event stream (resuming after `last_event_id` when given). `Ok(None)` when the
    /// server answers 405: it offers none.
    fn open_sse_stream(&self, last_event_id: Option<&str>) -> Result<Option<Response>, McpError> {
        let extra: Vec<(&str, String)> = last_event_id
            .map(|id| ("last-event-id", id.to_string()))
            .into_iter()
            .collect();
        match self.request("GET", "text/event-stream", None, &extra) {
            Ok(resp) if resp.status() == 405 => Ok(None),
            Ok(resp) if content_type(&resp) == "text/event-stream" => Ok(Some(resp)),
            Ok(resp) => Err(McpError::Http {
                status: resp.status().as_u16(),
                message: format!(
                    "Unsupported MCP GET response content type: {}",
                    match content_type(&resp).as_str() {
                        "" => "missing".to_string(),
                        other => other.to_string(),
                    }
                ),
            }),
            Err(McpError::Http { status: 405, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Waits `d` unless the transport closes first (then `false`).
    fn sleep(&self, d: Duration) -> bool {
        let until = std::time::Instant::now() + d;
        while std::time::Instant::now() < until {
            if self.closed.load(Ordering::SeqCst) {
                return false;
            }
            std::thread::sleep(
                Duration::from_millis(50)
                    .min(until.saturating_duration_since(std::time::Instant::now())),
            );
        }
        !self.closed.load(Ordering::SeqCst)
    }

    /// Delivers the messages of an SSE stream; with `until`, stops once the reply to that id
    /// arrived (`Ok(true)`). `Ok(false)` when the stream ended first. `cursor` follows the
    /// event ids and the server's `retry:`.
    fn read_sse(
        &self,
        mut reader: impl Read,
        until: Option<&Value>,
        cursor: &mut Cursor,
    ) -> Result<bool, StreamFailure> {
        let mut parser = SseParser::new();
        let mut buf = vec![0u8; 16 * 1024];
        // Bytes read since the last complete event: an endless event is cut off.
        let mut pending = 0usize;
        loop {
            if self.closed.load(Ordering::SeqCst) {
                return Ok(false);
            }
            let n = match reader.read(&mut buf) {
                Ok(0) => return Ok(false),
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(StreamFailure {
                        message: crate::ai::http::describe_io_error(&e),
                        retryable: true,
                    })
                }
            };
            pending += n;
            let events = parser.push(&buf[..n]);
            if !events.is_empty() {
                pending = 0;
                cursor.received = true;
            }
            if let Some(last) = parser.last_event_id() {
                if cursor.last_event_id.as_deref() != Some(last) {
                    cursor.last_event_id = Some(last.to_string());
                    cursor.received = true;
                }
            }
            cursor.retry_ms = parser.retry_ms().or(cursor.retry_ms);
            if pending > MAX_MESSAGE_BYTES {
                return Err(StreamFailure {
                    message: format!("MCP SSE event exceeds {MAX_MESSAGE_BYTES} bytes"),
                    retryable: false,
                });
            }
            let mut answered = false;
            for ev in events {
                if !(ev.event.is_empty() || ev.event == "message") || ev.data.trim().is_empty() {
                    continue;
                }
                match serde_json::from_str::<Value>(&ev.data) {
                    Ok(v) => {
                        answered |= until.is_some_and(|id| {
                            classify(&v) == Kind::Response && v.get("id") == Some(id)
                        });
                        (self.sink)(Incoming::Message(v));
                    }
                    Err(e) => (self.sink)(Incoming::Garbage {
                        id: None,
                        error: format!("Invalid JSON from MCP server: {e}"),
                    }),
                }
            }
            if answered {
                return Ok(true);
            }
        }
    }

    /// POSTs `notifications/initialized` and waits for the server's acknowledgement (202, or
    /// any 2xx); then opens the notification stream, reporting on `opened` once the server
    /// answered the GET (or refused it), before anything is read from it.
    fn initialized(self: &Arc<Self>, message: &Value, opened: Sender<()>) -> Result<(), McpError> {
        let resp = self.request(
            "POST",
            "application/json, text/event-stream",
            Some(&message.to_string()),
            &[],
        )?;
        let _ = std::io::copy(
            &mut resp.into_body().into_reader().take(MAX_ERROR_BODY_BYTES),
            &mut std::io::sink(),
        );
        self.open_get_stream(opened);
        Ok(())
    }

    /// The server-to-client stream: reopened (resuming after its last event id) when it
    /// drops, with backoff, a few times in a row. `opened` hears once when the first GET is
    /// answered (with a stream or not).
    fn open_get_stream(self: &Arc<Self>, opened: Sender<()>) {
        let inner = Arc::clone(self);
        // Detached: it ends when the server closes the stream for good, or on its next read
        // after the transport closed.
        let _ = std::thread::Builder::new()
            .name("pi-mcp-http-get".into())
            .spawn(move || {
                let mut cursor = Cursor::default();
                let mut attempt = 0u32;
                let mut opened = Some(opened);
                while !inner.closed.load(Ordering::SeqCst) {
                    let stream = inner.open_sse_stream(cursor.last_event_id.as_deref());
                    if let Some(tx) = opened.take() {
                        let _ = tx.send(());
                    }
                    match stream {
                        Ok(None) => return,
                        Ok(Some(resp)) => {
                            let opened = std::time::Instant::now();
                            let reader = resp.into_body().into_reader();
                            let result = inner.read_sse(reader, None, &mut cursor);
                            if result.as_ref().is_err_and(|f| !f.retryable) {
                                return;
                            }
                            // A stream that stayed up a while counts as healthy, idle or not.
                            if cursor.received || opened.elapsed() > RECONNECT_MAX {
                                attempt = 0;
                            }
                        }
                        Err(e) if e.is_transient() => {}
                        Err(_) => return,
                    }
                    cursor.received = false;
                    if attempt >= RECONNECT_RETRIES
                        || !inner.sleep(reconnect_delay(attempt, cursor.retry_ms))
                    {
                        return;
                    }
                    attempt += 1;
                }
            });
    }
}

/// A JSON body up to the size limit.
fn read_limited(resp: Response) -> Result<String, McpError> {
    let mut body = Vec::new();
    resp.into_body()
        .into_reader()
        .take(MAX_MESSAGE_BYTES as u64 + 1)
        .read_to_end(&mut body)
        .map_err(|e| McpError::Network(crate::ai::http::describe_io_error(&e)))?;
    if body.len() > MAX_MESSAGE_BYTES {
        return Err(McpError::Other(format!(
            "MCP JSON response exceeds {MAX_MESSAGE_BYTES} bytes"
        )));
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

impl HttpTransport {
    /// The next value from `rx`, polling the abort flag and the close; `Timeout(timeout)`
    /// at `deadline`.
    fn wait_for<T>(
        &self,
        rx: &Receiver<T>,
        deadline: Instant,
        abort: Option<&Abort>,
        timeout: Duration,
    ) -> Result<T, McpError> {
        loop {
            if abort.is_some_and(Abort::is_aborted) {
                return Err(McpError::Aborted);
            }
            if self.inner.closed.load(Ordering::SeqCst) {
                return Err(McpError::Closed(None));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(McpError::Timeout(timeout));
            }
            match rx.recv_timeout(left.min(POLL)) {
                Ok(v) => return Ok(v),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Err(McpError::Closed(None)),
            }
        }
    }
}

impl Transport for HttpTransport {
    fn send(&self, message: Value) -> Result<(), McpError> {
        if self.inner.closed.load(Ordering::SeqCst) {
            return Err(McpError::Closed(None));
        }
        let inner = Arc::clone(&self.inner);
        // One thread per message: a slow answer never holds up another request, and a caller
        // that stops waiting (timeout, abort) leaves the thread to finish on its own.
        std::thread::Builder::new()
            .name("pi-mcp-http".into())
            .spawn(move || inner.post(message))
            .map(|_| ())
            .map_err(|e| McpError::Other(format!("could not start a thread: {e}")))
    }

    fn send_initialized(
        &self,
        message: Value,
        timeout: Duration,
        abort: Option<&Abort>,
    ) -> Result<(), McpError> {
        if self.inner.closed.load(Ordering::SeqCst) {
            return Err(McpError::Closed(None));
        }
        let inner = Arc::clone(&self.inner);
        let (acked_tx, acked) = bounded(1);
        let (opened_tx, opened) = bounded(1);
        // On its own thread so that abort and close are heard while the server takes its time.
        std::thread::Builder::new()
            .name("pi-mcp-http".into())
            .spawn(move || {
                let _ = acked_tx.send(inner.initialized(&message, opened_tx));
            })
            .map_err(|e| McpError::Other(format!("could not start a thread: {e}")))?;
        let deadline = Instant::now() + timeout;
        self.wait_for(&acked, deadline, abort, timeout)??;
        // The stream is only where the server's own messages go; a server slow to open it
        // gets a moment, not the whole timeout, before requests go ahead.
        let stream_deadline = deadline.min(Instant::now() + GET_STREAM_OPEN_WAIT);
        match self.wait_for(&opened, stream_deadline, abort, timeout) {
            Err(McpError::Timeout(_)) => Ok(()),
            other => other,
        }
    }

    fn set_protocol_version(&self, version: &str) {
        lock(&self.inner.state).protocol_version = Some(version.to_string());
    }

    fn close(&self) {
        if self.inner.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        let session = lock(&self.inner.state).session_id.clone();
        if session.is_some() {
            // Ends the session on the server; a server that does not answer within a second
            // is left to expire it.
            let url = &self.inner.spec.url;
            let agent =
                http::client_agent(url, Duration::from_secs(1), Some(Duration::from_secs(1)));
            let mut headers: Vec<(&str, &str)> = self
                .inner
                .spec
                .headers
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            headers.extend(session.as_deref().map(|id| ("mcp-session-id", id)));
            let bearer = self
                .inner
                .spec
                .auth
                .as_ref()
                .and_then(|a| a.current_token())
                .map(|t| format!("Bearer {t}"));
            headers.extend(bearer.as_deref().map(|b| ("authorization", b)));
            if let Ok(req) = http::new_request("DELETE", url, &headers, ()) {
                let _ = agent.run(req);
            }
        }
    }
}

#[cfg(test)]
#[path = "tests/http.rs"]
mod tests;
