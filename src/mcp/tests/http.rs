use super::*;
use crate::mcp::client::{Client, ClientOptions, RequestOptions};
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;

/// One request as the test server saw it.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// `(status, extra headers, content type, body)`.
type Answer = (u16, Vec<(&'static str, String)>, &'static str, Vec<u8>);

/// A tiny HTTP/1.1 server: one request per connection, answered by `handler`.
fn serve(
    handler: impl Fn(&Seen) -> Answer + Send + Sync + 'static,
) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let seen: Arc<Mutex<Vec<Seen>>> = Default::default();
    let log = Arc::clone(&seen);
    let handler = Arc::new(handler);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (log, handler) = (Arc::clone(&log), Arc::clone(&handler));
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let method = line.split(' ').next().unwrap_or("").to_string();
                let mut headers = Vec::new();
                loop {
                    let mut h = String::new();
                    reader.read_line(&mut h).unwrap();
                    let h = h.trim_end();
                    if h.is_empty() {
                        break;
                    }
                    let (k, v) = h.split_once(':').unwrap();
                    headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
                }
                let len: usize = headers
                    .iter()
                    .find(|(k, _)| k == "content-length")
                    .map_or(0, |(_, v)| v.parse().unwrap());
                let mut body = vec![0; len];
                std::io::Read::read_exact(&mut reader, &mut body).unwrap();
                let seen = Seen {
                    method,
                    headers,
                    body: serde_json::from_slice(&body).unwrap_or(Value::Null),
                };
                log.lock().unwrap().push(seen.clone());
                let (status, extra, ctype, body) = handler(&seen);
                let mut out = stream;
                let mut head = format!("HTTP/1.1 {status} X\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\nconnection: close\r\n", body.len());
                for (k, v) in extra {
                    head.push_str(&format!("{k}: {v}\r\n"));
                }
                head.push_str("\r\n");
                let _ = out.write_all(head.as_bytes());
                let _ = out.write_all(&body);
            });
        }
    });
    (url, seen)
}

fn json_answer(v: Value) -> Answer {
    (200, vec![], "application/json", v.to_string().into_bytes())
}

fn init(seen: &Seen) -> Answer {
    let mut a = json_answer(json!({"jsonrpc": "2.0", "id": seen.body["id"], "result": {
        "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
        "serverInfo": {"name": "t", "version": "1"}}}));
    a.1.push(("mcp-session-id", "sess-1".into()));
    a
}

fn connect(url: &str, auth: Option<Arc<dyn AuthProvider>>) -> Result<Client, McpError> {
    let options = ClientOptions {
        timeout: Duration::from_secs(10),
        roots: vec![],
        on_notification: Arc::new(|_, _| {}),
        on_close: Arc::new(|_| {}),
    };
    let url = url.to_string();
    Client::connect(options, None, move |sink| {
        start(
            HttpSpec {
                url,
                headers: vec![("X-Api".into(), "k".into())],
                auth,
                timeout: Duration::from_secs(10),
            },
            sink,
        )
    })
}

fn call(client: &Client, name: &str) -> Result<Value, McpError> {
    client.call_tool(
        name,
        json!({}),
        RequestOptions::new(Duration::from_secs(10), None),
    )
}

#[test]
fn json_and_sse_answers_with_the_session_and_version_headers() {
    let (url, seen) = serve(|s| match (s.method.as_str(), s.body["method"].as_str()) {
        ("POST", Some("initialize")) => init(s),
        ("POST", Some("tools/call")) if s.body["params"]["name"] == "sse" => {
            let id = &s.body["id"];
            let body = format!(
                "event: ping\ndata: ignored\n\n: comment\n\ndata: {}\n\ndata: {}\n\n",
                json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": id, "progress": 1}}),
                json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "streamed"}]}})
            );
            (200, vec![], "text/event-stream", body.into_bytes())
        }
        ("POST", Some("tools/call")) => {
            json_answer(json!([{"jsonrpc": "2.0", "id": s.body["id"], "result": {"content": []}}]))
        }
        ("POST", _) => (202, vec![], "text/plain", Vec::new()),
        ("GET", _) => (405, vec![], "text/plain", Vec::new()),
        _ => (200, vec![], "text/plain", Vec::new()),
    });
    let client = connect(&url, None).unwrap();
    assert_eq!(
        call(&client, "json").unwrap(),
        json!({"content": []}),
        "a batch of one"
    );
    let progressed = Mutex::new(0);
    let on_progress = |_: &Value| *progressed.lock().unwrap() += 1;
    let r = client
        .call_tool(
            "sse",
            json!({}),
            RequestOptions {
                on_progress: Some(&on_progress),
                ..RequestOptions::new(Duration::from_secs(10), None)
            },
        )
        .unwrap();
    assert_eq!(r["content"][0]["text"], "streamed");
    assert_eq!(*progressed.lock().unwrap(), 1);
    client.close();
    let seen = seen.lock().unwrap();
    let first = &seen[0];
    assert_eq!(
        first.header("accept"),
        Some("application/json, text/event-stream")
    );
    assert_eq!(first.header("x-api"), Some("k"));
    assert_eq!(first.header("mcp-session-id"), None);
    let call = seen
        .iter()
        .find(|s| s.body["method"] == "tools/call")
        .unwrap();
    assert_eq!(call.header("mcp-session-id"), Some("sess-1"));
    assert_eq!(call.header("mcp-protocol-version"), Some("2025-11-25"));
    let delete = seen
        .iter()
        .find(|s| s.method == "DELETE")
        .expect("the session is ended");
    assert_eq!(delete.header("mcp-session-id"), Some("sess-1"));
}

#[test]
fn http_failures_read_like_pi() {
    let (url, _) = serve(
        |s| match (s.method.as_str(), s.body["params"]["name"].as_str()) {
            ("POST", _) if s.body["method"] == "initialize" => init(s),
            ("POST", Some("boom")) => (500, vec![], "text/plain", b"boom happened".to_vec()),
            ("POST", Some("accepted")) => (202, vec![], "application/json", Vec::new()),
            ("POST", Some("plain")) => (200, vec![], "text/plain", b"hi".to_vec()),
            ("POST", Some("auth")) => (
                401,
                vec![("www-authenticate", "Bearer".into())],
                "text/plain",
                Vec::new(),
            ),
            ("POST", Some("gone")) => (404, vec![], "text/plain", Vec::new()),
            ("POST", Some("huge")) => json_answer(
                json!({"jsonrpc": "2.0", "id": s.body["id"], "result": {"content": [{"type": "text", "text": "x".repeat(17 * 1024 * 1024)}]}}),
            ),
            ("POST", _) => (202, vec![], "text/plain", Vec::new()),
            _ => (405, vec![], "text/plain", Vec::new()),
        },
    );
    let client = connect(&url, None).unwrap();
    let e = call(&client, "boom").unwrap_err();
    assert_eq!(
        e.to_string(),
        "MCP HTTP request failed with status 500: boom happened"
    );
    assert!(e.is_transient());
    assert_eq!(
        call(&client, "accepted").unwrap_err().to_string(),
        "MCP server accepted request tools/call without a response"
    );
    assert_eq!(
        call(&client, "plain").unwrap_err().to_string(),
        "Unsupported MCP response content type: text/plain"
    );
    assert_eq!(
        call(&client, "auth").unwrap_err().to_string(),
        "MCP server requires authentication"
    );
    assert_eq!(call(&client, "gone").unwrap_err(), McpError::SessionExpired);
    assert_eq!(
        call(&client, "huge").unwrap_err().to_string(),
        "MCP JSON response exceeds 16777216 bytes"
    );
    client.close();

    let e = connect("http://127.0.0.1:9/mcp", None).err().unwrap();
    assert!(e.is_transient(), "{e}");
    assert!(
        e.to_string()
            .starts_with("Connection error: could not connect"),
        "{e}"
    );
}

struct Tokens(Mutex<Vec<String>>);

impl AuthProvider for Tokens {
    fn token(&self) -> Option<String> {
        self.0.lock().unwrap().first().cloned()
    }
    fn on_unauthorized(
        &self,
        challenge: Option<&str>,
        token: Option<&str>,
    ) -> Result<bool, McpError> {
        assert_eq!(challenge, Some("Bearer error=\"invalid_token\""));
        assert_eq!(token, Some("old"));
        self.0.lock().unwrap().remove(0);
        Ok(true)
    }
}

#[test]
fn an_auth_provider_renews_a_rejected_token_once() {
    let (url, log) = serve(|s| {
        if s.header("authorization") != Some("Bearer new") {
            return (
                401,
                vec![("www-authenticate", "Bearer error=\"invalid_token\"".into())],
                "text/plain",
                Vec::new(),
            );
        }
        match s.body["method"].as_str() {
            Some("initialize") => init(s),
            Some("tools/call") => json_answer(
                json!({"jsonrpc": "2.0", "id": s.body["id"], "result": {"content": []}}),
            ),
            _ => (202, vec![], "text/plain", Vec::new()),
        }
    });
    let tokens = Arc::new(Tokens(Mutex::new(vec!["old".into(), "new".into()])));
    let client = connect(&url, Some(tokens)).unwrap();
    call(&client, "t").unwrap();
    let seen = log.lock().unwrap();
    assert_eq!(seen[0].header("authorization"), Some("Bearer old"));
    assert_eq!(seen[1].header("authorization"), Some("Bearer new"));
    drop(seen);
    client.close();
    let seen = log.lock().unwrap();
    let delete = seen
        .iter()
        .find(|s| s.method == "DELETE")
        .expect("the session is ended");
    assert_eq!(
        delete.header("authorization"),
        Some("Bearer new"),
        "with the token"
    );
}

struct NoHooks;

impl crate::mcp::connection::Hooks for NoHooks {
    fn tools_changed(&self, _: &crate::mcp::connection::ServerConnection) {}
    fn state_changed(&self, _: &crate::mcp::connection::ServerConnection) {}
}

#[test]
fn connections_retry_transient_failures_and_forgotten_sessions() {
    use std::sync::atomic::AtomicUsize;
    let inits = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&inits);
    let (url, seen) = serve(move |s| match s.body["method"].as_str() {
        Some("initialize") => match counter.fetch_add(1, Ordering::SeqCst) {
            0 => (503, vec![], "text/plain", b"restarting".to_vec()),
            n => {
                let mut a = init(s);
                a.1[0].1 = format!("sess-{n}");
                a
            }
        },
        Some("tools/call") if s.header("mcp-session-id") == Some("sess-1") => {
            (404, vec![], "text/plain", Vec::new())
        }
        Some("tools/call") => json_answer(
            json!({"jsonrpc": "2.0", "id": s.body["id"], "result": {"content": [{"type": "text", "text": "ok"}]}}),
        ),
        Some("tools/list") => {
            json_answer(json!({"jsonrpc": "2.0", "id": s.body["id"], "result": {"tools": []}}))
        }
        Some("notifications/initialized") => (202, vec![], "text/plain", Vec::new()),
        _ => (405, vec![], "text/plain", Vec::new()),
    });
    let config = crate::mcp::config::validate("h", &json!({"url": url})).unwrap();
    let conn = crate::mcp::connection::ServerConnection::new(
        "h",
        config,
        Path::new("/"),
        None,
        None,
        Arc::new(NoHooks),
    );
    conn.start();
    assert!(conn.wait_settled(None));
    assert_eq!(
        conn.state(),
        crate::mcp::connection::ConnState::Connected,
        "{:?}",
        conn.status().error
    );
    let abort = crate::ai::Abort::new();
    let r = conn.call_tool("t", json!({}), &abort, &|_| {}).unwrap();
    assert_eq!(r["content"][0]["text"], "ok");
    assert_eq!(
        inits.load(Ordering::SeqCst),
        3,
        "one 503, the first session, a new session"
    );
    let sessions: Vec<Option<String>> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|s| s.body["method"] == "tools/call")
        .map(|s| s.header("mcp-session-id").map(str::to_string))
        .collect();
    assert_eq!(sessions, [Some("sess-1".into()), Some("sess-2".into())]);
    conn.close();
}

#[test]
fn a_cut_answer_stream_resumes_with_last_event_id() {
    // The answer stream ends after a numbered progress event; the answer comes on the GET
    // that resumes after it. The server-to-client GET stream (no Last-Event-ID) is refused.
    let call_id = Arc::new(Mutex::new(Value::Null));
    let remembered = Arc::clone(&call_id);
    let (url, seen) = serve(
        move |s| match (s.method.as_str(), s.body["method"].as_str()) {
            ("POST", Some("initialize")) => init(s),
            ("POST", Some("tools/call")) => {
                let id = &s.body["id"];
                *remembered.lock().unwrap() = id.clone();
                let body = format!(
                    "retry: 10\nid: ev-1\ndata: {}\n\n",
                    json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": id, "progress": 1}}),
                );
                (200, vec![], "text/event-stream", body.into_bytes())
            }
            ("POST", _) => (202, vec![], "text/plain", Vec::new()),
            ("GET", _) if s.header("last-event-id") == Some("ev-1") => {
                let body = format!(
                    "id: ev-2\ndata: {}\n\n",
                    json!({"jsonrpc": "2.0", "id": *remembered.lock().unwrap(), "result": {"content": [{"type": "text", "text": "resumed"}]}})
                );
                (200, vec![], "text/event-stream", body.into_bytes())
            }
            ("GET", _) => (405, vec![], "text/plain", Vec::new()),
            _ => (200, vec![], "text/plain", Vec::new()),
        },
    );
    let client = connect(&url, None).unwrap();
    let r = call(&client, "slow").unwrap();
    assert_eq!(r["content"][0]["text"], "resumed");
    client.close();
    let seen = seen.lock().unwrap();
    let resume = seen
        .iter()
        .find(|s| s.method == "GET" && s.header("last-event-id").is_some())
        .expect("a resuming GET");
    assert_eq!(resume.header("accept"), Some("text/event-stream"));
    assert_eq!(resume.header("mcp-session-id"), Some("sess-1"));
}

#[test]
fn a_cut_stream_without_event_ids_fails_the_request() {
    let (url, seen) = serve(|s| match (s.method.as_str(), s.body["method"].as_str()) {
        ("POST", Some("initialize")) => init(s),
        ("POST", Some("tools/call")) => {
            (200, vec![], "text/event-stream", b": nothing\n\n".to_vec())
        }
        ("POST", _) => (202, vec![], "text/plain", Vec::new()),
        _ => (405, vec![], "text/plain", Vec::new()),
    });
    let client = connect(&url, None).unwrap();
    assert_eq!(
        call(&client, "x").unwrap_err().to_string(),
        "MCP response stream failed: stream ended without a response"
    );
    client.close();
    assert!(!seen
        .lock()
        .unwrap()
        .iter()
        .any(|s| s.header("last-event-id").is_some()));
}
