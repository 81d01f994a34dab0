//! The MCP client over any [`Transport`]: `initialize` and `notifications/initialized` with
//! version negotiation, requests matched to replies by id, paged listings, `tools/call`,
//! resources, ping, progress notifications (which reset a request's timeout) and cancellation
//! (`notifications/cancelled` on timeout or abort). The client answers the server's `ping` and
//! `roots/list`. Every wait honours the abort flag and the request timeout.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver, RecvTimeoutError, Sender};
use serde_json::{json, Map, Value};

use super::rpc::{classify, Incoming, Kind, McpError, Sink, Transport, METHOD_NOT_FOUND};
use crate::ai::Abort;

pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";
pub const SUPPORTED_PROTOCOL_VERSIONS: [&str; 4] = [
    LATEST_PROTOCOL_VERSION,
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
];
const MAX_LIST_PAGES: usize = 1000;
/// How often a waiting request looks at the abort flag.
const POLL: Duration = Duration::from_millis(50);

/// What the server said about itself in `initialize`.
#[derive(Debug, Clone, Default)]
pub struct ServerInfo {
    pub protocol_version: String,
    pub capabilities: Map<String, Value>,
    pub name: String,
    pub instructions: Option<String>,
}

/// Called for server notifications other than progress: `(method, params)`.
pub type NotificationHandler = Arc<dyn Fn(&str, &Value) + Send + Sync>;
/// Called once when the connection ends by itself (not after [`Client::close`]).
pub type CloseHandler = Arc<dyn Fn(Option<String>) + Send + Sync>;

pub struct ClientOptions {
    pub timeout: Duration,
    /// `roots/list` answer: `[{uri, name}]`.
    pub roots: Vec<Value>,
    pub on_notification: NotificationHandler,
    pub on_close: CloseHandler,
}

enum Reply {
    Done(Result<Value, McpError>),
    Progress(Value),
}

struct Shared {
    pending: Mutex<HashMap<u64, Sender<Reply>>>,
    /// Progress token → request id (only requests that asked for progress).
    progress: Mutex<HashMap<u64, u64>>,
    closed: AtomicBool,
    transport: OnceLock<Arc<dyn Transport>>,
    roots: Vec<Value>,
    on_notification: NotificationHandler,
    on_close: CloseHandler,
}

/// Per-request options.
#[derive(Clone, Copy)]
pub struct RequestOptions<'a> {
    pub timeout: Duration,
    pub abort: Option<&'a Abort>,
    pub on_progress: Option<&'a (dyn Fn(&Value) + Sync)>,
}

impl<'a> RequestOptions<'a> {
    pub fn new(timeout: Duration, abort: Option<&'a Abort>) -> Self {
        RequestOptions {
            timeout,
            abort,
            on_progress: None,
        }
    }
}

pub struct Client {
    shared: Arc<Shared>,
    transport: Arc<dyn Transport>,
    next_id: AtomicU64,
    pub info: ServerInfo,
    timeout: Duration,
}

impl Shared {
    fn handle(self: &Arc<Self>, incoming: Incoming) {
        match incoming {
            Incoming::Message(v) => self.handle_message(v),
            Incoming::Failed { id, error } => self.finish(&id, Err(error)),
            Incoming::Garbage {
                id: Some(id),
                error,
            } => self.finish(&id, Err(McpError::Other(error))),
            Incoming::Garbage { id: None, .. } => {}
            Incoming::Closed(why) => {
                if !self.closed.swap(true, Ordering::SeqCst) {
                    self.fail_all(&why);
                    (self.on_close)(why);
                }
            }
        }
    }

    fn fail_all(&self, why: &Option<String>) {
        let pending: Vec<_> = lock(&self.pending).drain().collect();
        for (_, tx) in pending {
            let _ = tx.send(Reply::Done(Err(McpError::Closed(why.clone()))));
        }
    }

    fn finish(&self, id: &Value, result: Result<Value, McpError>) {
        let Some(id) = id.as_u64() else { return };
        if let Some(tx) = lock(&self.pending).remove(&id) {
            let _ = tx.send(Reply::Done(result));
        }
    }

    fn handle_message(self: &Arc<Self>, v: Value) {
        match classify(&v) {
            Kind::Response => {
                let result = match v.get("error") {
                    Some(e) => Err(McpError::Rpc {
                        code: e["code"].as_i64().unwrap_or(0),
                        message: e["message"].as_str().unwrap_or_default().to_string(),
                        data: e.get("data").cloned(),
                    }),
                    None => Ok(v["result"].clone()),
                };
                self.finish(&v["id"], result);
            }
            Kind::Request => self.answer(&v),
            Kind::Notification => {
                let method = v["method"].as_str().unwrap_or_default();
                let params = v.get("params").cloned().unwrap_or(Value::Null);
                if method == "notifications/progress" {
                    self.progress(params);
                } else if method != "notifications/cancelled" {
                    // Requests we answer are answered at once, so there is nothing to cancel.
                    (self.on_notification)(method, &params);
                }
            }
            Kind::Invalid => {
                // An invalid message carrying the id of a request we wait for ends it.
                if let Some(id) = v.get("id") {
                    self.finish(id, Err(McpError::invalid("Invalid JSON-RPC message")));
                }
            }
        }
    }

    fn progress(&self, params: Value) {
        let Some(token) = params.get("progressToken").and_then(Value::as_u64) else {
            return;
        };
        if !params.get("progress").is_some_and(Value::is_number) {
            return;
        }
        let Some(id) = lock(&self.progress).get(&token).copied() else {
            return;
        };
        if let Some(tx) = lock(&self.pending).get(&id) {
            let _ = tx.send(Reply::Progress(params));
        }
    }

    fn answer(&self, request: &Value) {
        let Some(transport) = self.transport.get() else {
            return;
        };
        let id = request["id"].clone();
        let reply = match request["method"].as_str().unwrap_or_default() {
            "ping" => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
            "roots/list" => json!({"jsonrpc": "2.0", "id": id, "result": {"roots": self.roots}}),
            other => json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": METHOD_NOT_FOUND, "message": format!("Method not found: {other}")}}),
        };
        let _ = transport.send(reply);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Client {
    /// Starts a transport with `make` (given the sink it must deliver to) and runs the
    /// `initialize` handshake. The transport is closed again when the handshake fails.
    pub fn connect(
        options: ClientOptions,
        abort: Option<&Abort>,
        make: impl FnOnce(Sink) -> Result<Arc<dyn Transport>, McpError>,
    ) -> Result<Client, McpError> {
        let shared = Arc::new(Shared {
            pending: Mutex::new(HashMap::new()),
            progress: Mutex::new(HashMap::new()),
            closed: AtomicBool::new(false),
            transport: OnceLock::new(),
            roots: options.roots,
            on_notification: options.on_notification,
            on_close: options.on_close,
        });
        let for_sink = Arc::clone(&shared);
        let sink: Sink = Arc::new(move |incoming| for_sink.handle(incoming));
        let transport = make(sink)?;
        let _ = shared.transport.set(Arc::clone(&transport));
        let mut client = Client {
            shared,
            transport,
            next_id: AtomicU64::new(1),
            info: ServerInfo::default(),
            timeout: options.timeout,
        };
        match client.initialize(abort) {
            Ok(info) => {
                client.info = info;
                Ok(client)
            }
            Err(e) => {
                client.close();
                Err(e)
            }
        }
    }

    fn initialize(&self, abort: Option<&Abort>) -> Result<ServerInfo, McpError> {
        let mut capabilities = Map::new();
        if !self.shared.roots.is_empty() {
            capabilities.insert("roots".into(), json!({}));
        }
        let params = json!({
            "protocolVersion": LATEST_PROTOCOL_VERSION,
            "capabilities": capabilities,
            "clientInfo": {"name": "pi", "version": crate::VERSION},
        });
        let result = self.request_inner(
            "initialize",
            Some(params),
            RequestOptions::new(self.timeout, abort),
            false,
        )?;
        let info = parse_initialize(&result)?;
        if !SUPPORTED_PROTOCOL_VERSIONS.contains(&info.protocol_version.as_str()) {
            return Err(McpError::Other(format!(
                "MCP server selected unsupported protocol version {}",
                info.protocol_version
            )));
        }
        self.transport.set_protocol_version(&info.protocol_version);
        self.transport.send_initialized(
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            self.timeout,
            abort,
        )?;
        Ok(info)
    }

    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::SeqCst)
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    pub fn stderr_tail(&self) -> Option<String> {
        self.transport.stderr_tail()
    }

    /// Fails what is pending and stops the transport (for stdio: the kill sequence).
    pub fn close(&self) {
        self.shared.closed.store(true, Ordering::SeqCst);
        self.shared.fail_all(&None);
        self.transport.close();
    }

    pub fn notify(&self, method: &str, params: Option<Value>) -> Result<(), McpError> {
        let mut msg = json!({"jsonrpc": "2.0", "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        self.transport.send(msg)
    }

    pub fn request(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Value, McpError> {
        self.request_inner(method, params, options, true)
    }

    fn request_inner(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
        cancellable: bool,
    ) -> Result<Value, McpError> {
        if self.is_closed() {
            return Err(McpError::Closed(None));
        }
        if options.abort.is_some_and(Abort::is_aborted) {
            return Err(McpError::Aborted);
        }
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let mut params = params;
        if options.on_progress.is_some() {
            let p = params.get_or_insert_with(|| json!({}));
            if let Some(obj) = p.as_object_mut() {
                let meta = obj.entry("_meta").or_insert_with(|| json!({}));
                if !meta.is_object() {
                    *meta = json!({});
                }
                meta["progressToken"] = json!(id);
            }
            lock(&self.shared.progress).insert(id, id);
        }
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        let (tx, rx) = unbounded();
        lock(&self.shared.pending).insert(id, tx);
        let result = match self.transport.send(msg) {
            Ok(()) => self.wait(id, &rx, options, cancellable),
            Err(e) => Err(e),
        };
        lock(&self.shared.pending).remove(&id);
        lock(&self.shared.progress).remove(&id);
        result
    }

    fn wait(
        &self,
        id: u64,
        rx: &Receiver<Reply>,
        options: RequestOptions,
        cancellable: bool,
    ) -> Result<Value, McpError> {
        let mut deadline = Instant::now() + options.timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left.min(POLL)) {
                Ok(Reply::Done(result)) => return result,
                Ok(Reply::Progress(p)) => {
                    deadline = Instant::now() + options.timeout;
                    if let Some(f) = options.on_progress {
                        f(&p);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => return Err(McpError::Closed(None)),
                Err(RecvTimeoutError::Timeout) => {
                    if options.abort.is_some_and(Abort::is_aborted) {
                        self.cancel(id, cancellable, "Aborted");
                        return Err(McpError::Aborted);
                    }
                    if Instant::now() >= deadline {
                        self.cancel(id, cancellable, "Request timed out");
                        return Err(McpError::Timeout(options.timeout));
                    }
                }
            }
        }
    }

    fn cancel(&self, id: u64, cancellable: bool, reason: &str) {
        lock(&self.shared.pending).remove(&id);
        if cancellable && !self.is_closed() {
            let _ = self.notify(
                "notifications/cancelled",
                Some(json!({"requestId": id, "reason": reason})),
            );
        }
    }

    pub fn ping(&self, abort: Option<&Abort>) -> Result<(), McpError> {
        self.request("ping", None, RequestOptions::new(self.timeout, abort))
            .map(|_| ())
    }

    /// One page of a listing: `(items, next cursor)`.
    pub fn list_page(
        &self,
        method: &str,
        key: &str,
        cursor: Option<&str>,
        options: RequestOptions,
    ) -> Result<(Vec<Value>, Option<String>), McpError> {
        let params = cursor.map(|c| json!({ "cursor": c }));
        let value = self.request(method, params, options)?;
        parse_page(method, key, &value)
    }

    /// Every page of a listing, refusing repeated cursors and endless paging.
    pub fn list_all(
        &self,
        method: &str,
        key: &str,
        options: RequestOptions,
    ) -> Result<Vec<Value>, McpError> {
        let mut items = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_LIST_PAGES {
            let (page, next) = self.list_page(method, key, cursor.as_deref(), options)?;
            items.extend(page);
            match next {
                None => return Ok(items),
                Some(c) if !seen.insert(c.clone()) => {
                    return Err(McpError::Other(format!(
                        "MCP {method} returned duplicate cursor: {c}"
                    )))
                }
                Some(c) => cursor = Some(c),
            }
        }
        Err(McpError::Other(format!(
            "MCP {method} exceeded {MAX_LIST_PAGES} pages"
        )))
    }

    pub fn list_tools(&self, abort: Option<&Abort>) -> Result<Vec<Value>, McpError> {
        self.list_all(
            "tools/list",
            "tools",
            RequestOptions::new(self.timeout, abort),
        )
    }

    pub fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        options: RequestOptions,
    ) -> Result<Value, McpError> {
        let result = self.request(
            "tools/call",
            Some(json!({"name": name, "arguments": arguments})),
            options,
        )?;
        match result.get("content") {
            None => {
                let mut r = result;
                if let Some(o) = r.as_object_mut() {
                    o.insert("content".into(), json!([]));
                    return Ok(r);
                }
                Err(McpError::invalid("Invalid MCP tools/call result"))
            }
            Some(Value::Array(_)) if result.is_object() => Ok(result),
            Some(_) => Err(McpError::invalid("Invalid MCP tools/call result")),
        }
    }

    pub fn read_resource(&self, uri: &str, options: RequestOptions) -> Result<Value, McpError> {
        let v = self.request("resources/read", Some(json!({ "uri": uri })), options)?;
        let ok = v
            .get("contents")
            .and_then(Value::as_array)
            .is_some_and(|c| {
                c.iter().all(|c| {
                    c.get("uri").is_some_and(Value::is_string)
                        && (c.get("text").is_some_and(Value::is_string)
                            || c.get("blob").is_some_and(Value::is_string))
                })
            });
        if !v.get("contents").is_some_and(Value::is_array) {
            return Err(McpError::invalid("Invalid MCP resources/read result"));
        }
        if !ok {
            return Err(McpError::invalid(
                "Invalid contents in MCP resources/read result",
            ));
        }
        Ok(v)
    }

    pub fn has_capability(&self, name: &str) -> bool {
        self.info
            .capabilities
            .get(name)
            .is_some_and(|v| !v.is_null())
    }
}

fn parse_initialize(v: &Value) -> Result<ServerInfo, McpError> {
    let invalid = || McpError::invalid("Invalid MCP initialize result");
    let version = v["protocolVersion"].as_str().ok_or_else(invalid)?;
    let capabilities = v["capabilities"].as_object().ok_or_else(invalid)?;
    let name = v["serverInfo"]["name"].as_str().ok_or_else(invalid)?;
    if !v["serverInfo"]["version"].is_string() {
        return Err(invalid());
    }
    let instructions = match v.get("instructions") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(invalid()),
    };
    Ok(ServerInfo {
        protocol_version: version.to_string(),
        capabilities: capabilities.clone(),
        name: name.to_string(),
        instructions,
    })
}

/// Checks a listing page as pi does: objects of the right shape, an optional string cursor.
fn parse_page(
    method: &str,
    key: &str,
    value: &Value,
) -> Result<(Vec<Value>, Option<String>), McpError> {
    let items = value
        .get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| McpError::invalid(format!("Invalid MCP {method} result")))?;
    let valid = |item: &Value| match key {
        "tools" => item["name"].is_string() && item["inputSchema"].is_object(),
        "resources" => {
            item["uri"].is_string() && (item.get("name").is_none() || item["name"].is_string())
        }
        "resourceTemplates" => {
            item["uriTemplate"].is_string()
                && (item.get("name").is_none() || item["name"].is_string())
        }
        _ => item.is_object(),
    };
    if !items.iter().all(|i| i.is_object() && valid(i)) {
        return Err(McpError::invalid(format!(
            "Invalid entry in MCP {method} result"
        )));
    }
    let cursor = match value.get("nextCursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.is_empty() => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(McpError::invalid(format!("Invalid MCP {method} cursor"))),
    };
    let mut items = items.clone();
    // Resources and templates without a name are named by their URI.
    let uri_key = match key {
        "resources" => Some("uri"),
        "resourceTemplates" => Some("uriTemplate"),
        _ => None,
    };
    if let Some(uri_key) = uri_key {
        for item in &mut items {
            if item.get("name").is_none() {
                item["name"] = item[uri_key].clone();
            }
        }
    }
    Ok((items, cursor))
}

#[cfg(test)]
#[path = "tests/client.rs"]
mod tests;
