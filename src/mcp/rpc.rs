//! JSON-RPC 2.0 as MCP uses it: telling responses, requests and notifications apart, the
//! errors a request can end with (worded as pi words them), and the transport interface the
//! client talks through.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;

/// Largest message accepted from a server (a stdio line, a JSON body, an SSE event).
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// How a request (or a connection) failed.
#[derive(Debug, Clone, PartialEq)]
pub enum McpError {
    /// The server answered with a JSON-RPC error.
    Rpc {
        code: i64,
        message: String,
        data: Option<Value>,
    },
    Timeout(Duration),
    Aborted,
    /// The connection is gone; the text says why when known.
    Closed(Option<String>),
    /// A non-2xx HTTP answer (`message` already names the status).
    Http {
        status: u16,
        message: String,
    },
    /// 401 (or 403 `insufficient_scope`): the server wants credentials.
    AuthRequired {
        www_authenticate: Option<String>,
    },
    /// 404 on a session the server no longer knows: the request did not run.
    SessionExpired,
    /// The request did not reach the server, or its answer was cut (worth a retry).
    Network(String),
    /// Anything else: invalid answers, size limits.
    Other(String),
}

impl std::fmt::Display for McpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            McpError::Rpc { message, .. } => f.write_str(message),
            McpError::Timeout(t) => write!(f, "MCP request timed out after {}ms", t.as_millis()),
            McpError::Aborted => f.write_str("MCP request aborted"),
            McpError::Closed(None) => f.write_str("MCP connection closed"),
            McpError::Closed(Some(why)) => write!(f, "MCP connection closed: {why}"),
            McpError::Http { message, .. } => f.write_str(message),
            McpError::AuthRequired { .. } => f.write_str("MCP server requires authentication"),
            McpError::SessionExpired => f.write_str("MCP session expired"),
            McpError::Network(m) | McpError::Other(m) => f.write_str(m),
        }
    }
}

impl McpError {
    pub fn invalid(message: impl Into<String>) -> McpError {
        McpError::Rpc {
            code: INVALID_REQUEST,
            message: message.into(),
            data: None,
        }
    }

    /// Overloaded or restarting servers and network failures: worth another attempt.
    pub fn is_transient(&self) -> bool {
        match self {
            McpError::Http { status, .. } => {
                *status == 408 || *status == 429 || (*status >= 500 && *status != 501)
            }
            McpError::Network(_) => true,
            _ => false,
        }
    }
}

/// What a transport hands to the client.
#[derive(Debug)]
pub enum Incoming {
    /// A parsed JSON value from the server (not yet checked to be JSON-RPC).
    Message(Value),
    /// Sending request `id` failed before any answer (HTTP status, network error).
    Failed { id: Value, error: McpError },
    /// A message that could not be used (bad JSON, too large); `id` when it could be told.
    Garbage { id: Option<Value>, error: String },
    /// The connection ended (process exit, stream end); the text says why when known.
    Closed(Option<String>),
}

/// Where a transport delivers what arrives. Called from the transport's own threads.
pub type Sink = Arc<dyn Fn(Incoming) + Send + Sync>;

/// One way of reaching a server. `send` never blocks on the server: replies arrive through
/// the [`Sink`] the transport was created with.
pub trait Transport: Send + Sync {
    fn send(&self, message: Value) -> Result<(), McpError>;
    /// The version `initialize` agreed on (HTTP sends it as a header).
    fn set_protocol_version(&self, _version: &str) {}
    /// Sends `notifications/initialized` and returns once requests may follow it. HTTP waits
    /// until the server acknowledged it and its notification stream is open, so the server
    /// sees the protocol's order and a `list_changed` it sends right away is not lost.
    fn send_initialized(
        &self,
        message: Value,
        _timeout: Duration,
        _abort: Option<&crate::ai::Abort>,
    ) -> Result<(), McpError> {
        self.send(message)
    }
    /// Stops the transport; the child or the HTTP session ends. May take the kill grace time.
    fn close(&self);
    /// The last lines the server wrote to stderr (stdio only).
    fn stderr_tail(&self) -> Option<String> {
        None
    }
}

fn is_id(v: &Value) -> bool {
    v.is_string() || v.as_f64().is_some_and(f64::is_finite)
}

fn is_v2(v: &Value) -> bool {
    v.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
}

/// Which of the three message kinds a value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Response,
    Request,
    Notification,
    Invalid,
}

pub fn classify(v: &Value) -> Kind {
    if !v.is_object() || !is_v2(v) {
        return Kind::Invalid;
    }
    let id = v.get("id");
    let method = v.get("method").is_some_and(Value::is_string);
    if id.is_some_and(is_id) {
        if method {
            return Kind::Request;
        }
        let result = v.get("result").is_some();
        let error = v.get("error");
        return match (result, error) {
            (true, None) => Kind::Response,
            (false, Some(e))
                if e.get("code").is_some_and(Value::is_number)
                    && e.get("message").is_some_and(Value::is_string) =>
            {
                Kind::Response
            }
            _ => Kind::Invalid,
        };
    }
    if id.is_none() && method {
        return Kind::Notification;
    }
    Kind::Invalid
}

/// The id at the start of a message too large to parse, read from its first bytes: servers
/// write `{"jsonrpc":"2.0","id":7,"result":…`, so the id usually comes before the payload.
pub fn id_from_head(head: &[u8]) -> Option<Value> {
    let text = String::from_utf8_lossy(&head[..head.len().min(512)]);
    let at = text.find("\"id\"")?;
    let rest = text[at + 4..].trim_start().strip_prefix(':')?.trim_start();
    if let Some(s) = rest.strip_prefix('"') {
        let end = s.find('"')?;
        return Some(Value::String(s[..end].to_string()));
    }
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse::<u64>().ok().map(Value::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kinds() {
        assert_eq!(
            classify(&json!({"jsonrpc":"2.0","id":1,"result":{}})),
            Kind::Response
        );
        assert_eq!(
            classify(&json!({"jsonrpc":"2.0","id":"a","error":{"code":-1,"message":"m"}})),
            Kind::Response
        );
        assert_eq!(
            classify(&json!({"jsonrpc":"2.0","id":1,"error":{"code":"x"}})),
            Kind::Invalid
        );
        assert_eq!(
            classify(&json!({"jsonrpc":"2.0","id":1,"method":"ping"})),
            Kind::Request
        );
        assert_eq!(
            classify(&json!({"jsonrpc":"2.0","method":"notifications/x"})),
            Kind::Notification
        );
        assert_eq!(
            classify(&json!({"jsonrpc":"1.0","id":1,"result":{}})),
            Kind::Invalid
        );
        assert_eq!(classify(&json!([1])), Kind::Invalid);
        assert_eq!(
            classify(&json!({"jsonrpc":"2.0","id":null,"result":{}})),
            Kind::Invalid
        );
    }

    #[test]
    fn ids_from_the_head_of_oversized_messages() {
        assert_eq!(
            id_from_head(br#"{"jsonrpc":"2.0","id":17,"result":{"content":"#),
            Some(json!(17))
        );
        assert_eq!(
            id_from_head(br#"{"id" : "abc","jsonrpc":"2.0"#),
            Some(json!("abc"))
        );
        assert_eq!(id_from_head(br#"{"result":"xxxxxxxx"#), None);
    }

    #[test]
    fn messages_read_like_pi() {
        assert_eq!(
            McpError::Timeout(Duration::from_secs(60)).to_string(),
            "MCP request timed out after 60000ms"
        );
        assert_eq!(McpError::Closed(None).to_string(), "MCP connection closed");
        assert!(McpError::Http {
            status: 503,
            message: String::new()
        }
        .is_transient());
        assert!(!McpError::Http {
            status: 501,
            message: String::new()
        }
        .is_transient());
        assert!(McpError::Http {
            status: 429,
            message: String::new()
        }
        .is_transient());
    }
}
