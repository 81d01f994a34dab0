//! JSON-RPC 2.0 over stdio for `--mode acp`: one message a line. A reader thread parses each
//! line into an [`Incoming`] message (a request, a notification, or the client's answer to one
//! of our requests, which goes straight to whoever waits for it); [`Wire`] is the one writer,
//! shared by the main loop and the session's threads, and sends our own requests to the client.
//!
//! Bad input never ends the agent: a line that is not JSON is answered with a parse error
//! (-32700), a message that is not a JSON-RPC request with an invalid request (-32600).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use serde_json::{json, Map, Value};

use crate::ai::Abort;
use crate::modes::rpc_out::Out;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// ACP's "authentication required".
pub const AUTH_REQUIRED: i64 = -32000;
/// ACP's "resource not found" (an unknown session).
pub const NOT_FOUND: i64 = -32002;

/// A JSON-RPC error: its code and a message that says what to fix.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
        }
    }
    pub fn invalid_params(message: impl Into<String>) -> RpcError {
        RpcError::new(INVALID_PARAMS, message)
    }
    pub fn internal(message: impl Into<String>) -> RpcError {
        RpcError::new(INTERNAL_ERROR, message)
    }
}

/// One message from the client that the main loop handles.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
}

/// What one line holds, parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum Parsed {
    Message(Incoming),
    /// The client's answer to one of our requests.
    Response {
        id: Value,
        result: Result<Value, RpcError>,
    },
    /// Not a message we can handle: the error to answer it with (`id` null when unknown).
    Invalid {
        id: Value,
        error: RpcError,
    },
    /// A blank line: ignored.
    Blank,
}

/// Parses one line. Pure.
pub fn parse_line(line: &str) -> Parsed {
    if line.trim().is_empty() {
        return Parsed::Blank;
    }
    let value: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => {
            return Parsed::Invalid {
                id: Value::Null,
                error: RpcError::new(PARSE_ERROR, format!("Parse error: {e}")),
            }
        }
    };
    let Value::Object(mut m) = value else {
        return Parsed::Invalid {
            id: Value::Null,
            error: RpcError::new(
                INVALID_REQUEST,
                "Invalid request: expected a JSON-RPC 2.0 object (batches are not supported)",
            ),
        };
    };
    let id = m.remove("id");
    match m.remove("method") {
        Some(Value::String(method)) => {
            let params = m.remove("params").unwrap_or(Value::Null);
            Parsed::Message(match id {
                Some(id) => Incoming::Request { id, method, params },
                None => Incoming::Notification { method, params },
            })
        }
        Some(_) => Parsed::Invalid {
            id: id.unwrap_or(Value::Null),
            error: RpcError::new(
                INVALID_REQUEST,
                "Invalid request: \"method\" must be a string",
            ),
        },
        None => match id {
            Some(id) if m.contains_key("result") || m.contains_key("error") => {
                let result = match m.remove("error") {
                    Some(e) => Err(RpcError::new(
                        e["code"].as_i64().unwrap_or(INTERNAL_ERROR),
                        e["message"].as_str().unwrap_or("error").to_string(),
                    )),
                    None => Ok(m.remove("result").unwrap_or(Value::Null)),
                };
                Parsed::Response { id, result }
            }
            id => Parsed::Invalid {
                id: id.unwrap_or(Value::Null),
                error: RpcError::new(INVALID_REQUEST, "Invalid request: no \"method\""),
            },
        },
    }
}

type Pending = Arc<Mutex<HashMap<u64, Sender<Result<Value, RpcError>>>>>;

/// The one writer to stdout, and our requests to the client.
#[derive(Clone)]
pub struct Wire {
    out: Out,
    pending: Pending,
    next_id: Arc<AtomicU64>,
}

impl Wire {
    pub(crate) fn new(out: Out) -> Wire {
        Wire {
            out,
            pending: Arc::default(),
            next_id: Arc::new(AtomicU64::new(0)),
        }
    }

    pub fn respond(&self, id: &Value, result: Result<Value, RpcError>) {
        let mut m = Map::new();
        m.insert("jsonrpc".into(), "2.0".into());
        m.insert("id".into(), id.clone());
        match result {
            Ok(v) => {
                m.insert("result".into(), v);
            }
            Err(e) => {
                m.insert(
                    "error".into(),
                    json!({"code": e.code, "message": e.message}),
                );
            }
        }
        self.out.line(&Value::Object(m));
    }

    pub fn notify(&self, method: &str, params: Value) {
        self.out
            .line(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request to the client and waits for its answer; `None` when `abort` fires,
    /// `timeout` passes or the client is gone (stdin closed) first.
    pub fn request(
        &self,
        method: &str,
        params: Value,
        abort: &Abort,
        timeout: Option<Duration>,
    ) -> Option<Result<Value, RpcError>> {
        self.request_with_grace(method, params, abort, timeout, Duration::ZERO)
    }

    /// As [`Wire::request`], but when `abort` fires the answer is still awaited for `grace`
    /// (for a request whose answer names something to clean up, as a terminal's id).
    pub fn request_with_grace(
        &self,
        method: &str,
        params: Value,
        abort: &Abort,
        timeout: Option<Duration>,
        grace: Duration,
    ) -> Option<Result<Value, RpcError>> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.lock().insert(id, tx);
        self.out
            .line(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let aborted = abort.signal();
        let expired = timeout.map_or_else(crossbeam_channel::never, crossbeam_channel::after);
        let answer = crossbeam_channel::select! {
            recv(rx) -> r => r.ok(),
            recv(aborted) -> _ => rx.recv_timeout(grace).ok(),
            recv(expired) -> _ => None,
        };
        self.lock().remove(&id);
        answer
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Sender<Result<Value, RpcError>>>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Hands the client's answer to the request waiting for it.
    fn resolve(&self, id: &Value, result: Result<Value, RpcError>) {
        if let Some(tx) = id.as_u64().and_then(|id| self.lock().remove(&id)) {
            let _ = tx.send(result);
        }
    }

    /// At stdin EOF: every request still waiting learns the client is gone.
    fn drop_pending(&self) {
        self.lock().clear();
    }
}

/// Reads stdin on its own thread: answers to our requests go straight to their waiter (the
/// main loop may itself be waiting on one), bad lines are answered here, messages go to the
/// main loop. The channel disconnects at EOF. Detached on purpose: it ends with stdin or the
/// process.
pub fn spawn_reader(wire: Wire) -> Receiver<Incoming> {
    let (tx, rx) = crossbeam_channel::unbounded();
    let _ = std::thread::Builder::new()
        .name("pi-acp-stdin".into())
        .spawn(move || {
            crate::modes::rpc::input::read_records(std::io::stdin().lock(), |line| {
                match parse_line(&line) {
                    Parsed::Message(m) => return tx.send(m).is_ok(),
                    Parsed::Response { id, result } => wire.resolve(&id, result),
                    Parsed::Invalid { id, error } => wire.respond(&id, Err(error)),
                    Parsed::Blank => {}
                }
                true
            });
            wire.drop_pending();
        });
    rx
}

/// How long the main loop waits between looks at its other inputs; far below the abort bound.
pub const TICK: Duration = Duration::from_millis(50);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse_into_requests_notifications_answers_and_errors() {
        assert_eq!(
            parse_line(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"a":1}}"#),
            Parsed::Message(Incoming::Request {
                id: json!(1),
                method: "initialize".into(),
                params: json!({"a": 1})
            })
        );
        assert!(matches!(
            parse_line(r#"{"jsonrpc":"2.0","method":"session/cancel"}"#),
            Parsed::Message(Incoming::Notification { ref method, params: Value::Null }) if method == "session/cancel"
        ));
        assert_eq!(
            parse_line(r#"{"jsonrpc":"2.0","id":3,"result":{"outcome":1}}"#),
            Parsed::Response {
                id: json!(3),
                result: Ok(json!({"outcome": 1}))
            }
        );
        match parse_line("{not json") {
            Parsed::Invalid { id, error } => {
                assert_eq!((id, error.code), (Value::Null, PARSE_ERROR))
            }
            other => panic!("{other:?}"),
        }
        match parse_line(r#"{"jsonrpc":"2.0","id":7,"method":5}"#) {
            Parsed::Invalid { id, error } => {
                assert_eq!((id, error.code), (json!(7), INVALID_REQUEST))
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(parse_line("[1]"), Parsed::Invalid { .. }));
        assert_eq!(parse_line("  "), Parsed::Blank);
    }
}
