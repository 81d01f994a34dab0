//! The extension wire protocol, versions 1 and 2 (documented in `docs/extensions.md`): the
//! shapes of the JSON lines pi and an extension exchange, the parsing of an extension's
//! registration, and the reading of an extension's output into messages (from any reader).
//! `connection.rs` owns the process and moves the lines, `host.rs` decides what they mean for
//! a session.

use std::io::BufRead;

use serde_json::{json, Map, Value};

use crate::agent::ExecutionMode;

/// The newest protocol version pi speaks (sent in `hello`); an extension may answer with any
/// version from 1 up to it.
pub const PROTOCOL_VERSION: u64 = 2;

/// Events whose answer pi waits for (within the event timeout): the extension may change
/// what happens next. Every other event is a notification and needs no answer.
pub const BLOCKING_EVENTS: &[&str] = &[
    "input",
    "before_agent_start",
    "context",
    "tool_call",
    "tool_result",
    "session_before_compact",
    "session_before_fork",
    "session_before_switch",
    "session_before_tree",
    "session_shutdown",
    "user_bash",
    "before_provider_request",
];

/// Events that became actionable in protocol 2 (pi 1.x): blocking only for extensions that
/// speak it, so a protocol-1 extension subscribed to `turn_end` is never asked to answer.
pub const BLOCKING_EVENTS_V2: &[&str] = &["turn_end", "agent_before_settle", "project_trust"];

/// Every event an extension may subscribe to.
pub const EVENTS: &[&str] = &[
    "session_start",
    "session_shutdown",
    "session_before_compact",
    "session_compact",
    "session_before_fork",
    "session_before_switch",
    "session_before_tree",
    "input",
    "before_agent_start",
    "agent_start",
    "agent_end",
    "turn_start",
    "turn_end",
    "message_start",
    "message_update",
    "message_end",
    "tool_execution_start",
    "tool_execution_update",
    "tool_execution_end",
    "tool_call",
    "tool_result",
    "context",
    "model_select",
    "thinking_level_select",
    "agent_before_settle",
    "agent_settled",
    "project_trust",
    "session_tree",
    "session_info_changed",
    "mcp_servers_change",
    "user_bash",
    "before_provider_request",
];

/// Whether pi waits for an extension speaking `protocol` to answer `event`.
pub fn is_blocking(event: &str, protocol: u64) -> bool {
    BLOCKING_EVENTS.contains(&event) || (protocol >= 2 && BLOCKING_EVENTS_V2.contains(&event))
}

/// A tool an extension provides.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRegistration {
    pub name: String,
    pub label: String,
    pub description: String,
    pub parameters: Value,
    pub execution_mode: ExecutionMode,
    /// One line for the system prompt's tool list (empty: not listed there).
    pub prompt_snippet: String,
    pub prompt_guidelines: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CommandRegistration {
    pub name: String,
    pub description: Option<String>,
    /// Whether the extension completes the command's arguments (`complete` requests).
    pub completions: bool,
}

/// A model provider an extension registered (pi's `registerProvider`): the same shape as a
/// `models.json` provider, plus whether the extension streams its replies itself.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderRegistration {
    pub name: String,
    /// `{baseUrl?, apiKey?, api?, headers?, authHeader?, models: [...]}`.
    pub config: Value,
    /// The extension implements the provider's API (`streamSimple`): replies come from it.
    pub stream: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlagType {
    Boolean,
    String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FlagRegistration {
    pub name: String,
    pub kind: FlagType,
    pub default: Option<Value>,
    pub description: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ShortcutRegistration {
    pub key: String,
    pub description: Option<String>,
}

/// What an extension answered to `hello`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Registration {
    /// The protocol version the extension speaks.
    pub protocol: u64,
    /// A display name (defaults to the file name).
    pub name: Option<String>,
    pub tools: Vec<ToolRegistration>,
    pub commands: Vec<CommandRegistration>,
    pub flags: Vec<FlagRegistration>,
    pub shortcuts: Vec<ShortcutRegistration>,
    pub events: Vec<String>,
    pub providers: Vec<ProviderRegistration>,
    /// Custom message types the extension draws (`registerMessageRenderer`).
    pub message_renderers: Vec<String>,
    /// MCP servers registered while the extension loaded (`registerMcpServer`): `(name,
    /// config)`; later registrations come as calls.
    pub mcp_servers: Vec<(String, Value)>,
}

fn str_field(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

fn required_name(v: &Value, what: &str, key: &str) -> Result<String, String> {
    match v.get(key).and_then(Value::as_str) {
        Some(n) if !n.trim().is_empty() && !n.contains(char::is_whitespace) => Ok(n.to_string()),
        _ => Err(format!("{what} without a valid \"{key}\": {v}")),
    }
}

fn list<'a>(msg: &'a Value, key: &str) -> Result<&'a [Value], String> {
    match msg.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(other) => Err(format!("\"{key}\" must be an array, got {other}")),
    }
}

impl Registration {
    /// Parses a `register` message; any malformed entry refuses the whole registration so an
    /// author sees the mistake at once.
    pub fn parse(msg: &Value) -> Result<Registration, String> {
        if msg["type"] != "register" {
            return Err(format!("expected a \"register\" message, got: {msg}"));
        }
        let protocol = match msg.get("protocol").and_then(Value::as_u64) {
            Some(v @ 1..=PROTOCOL_VERSION) => v,
            Some(v) => {
                return Err(format!(
                    "speaks protocol {v}, but pi speaks protocols 1 to {PROTOCOL_VERSION}"
                ))
            }
            None => return Err("register message without \"protocol\"".into()),
        };
        if let Some(e) = msg.get("error").and_then(Value::as_str) {
            return Err(e.to_string());
        }
        let mut reg = Registration {
            protocol,
            name: str_field(msg, "name"),
            ..Default::default()
        };
        for t in list(msg, "tools")? {
            let name = required_name(t, "tool", "name")?;
            let parameters = match t.get("parameters") {
                None | Some(Value::Null) => json!({"type": "object", "properties": {}}),
                Some(p @ Value::Object(_)) => p.clone(),
                Some(p) => {
                    return Err(format!(
                        "tool {name}: \"parameters\" must be an object: {p}"
                    ))
                }
            };
            let execution_mode = match t.get("executionMode").and_then(Value::as_str) {
                None | Some("parallel") => ExecutionMode::Parallel,
                Some("sequential") => ExecutionMode::Sequential,
                Some(other) => {
                    return Err(format!("tool {name}: unknown executionMode \"{other}\""))
                }
            };
            reg.tools.push(ToolRegistration {
                label: str_field(t, "label").unwrap_or_else(|| name.clone()),
                description: str_field(t, "description").unwrap_or_default(),
                parameters,
                execution_mode,
                prompt_snippet: str_field(t, "promptSnippet").unwrap_or_default(),
                prompt_guidelines: list(t, "promptGuidelines")?
                    .iter()
                    .filter_map(|g| g.as_str().map(str::to_string))
                    .collect(),
                name,
            });
        }
        for c in list(msg, "commands")? {
            reg.commands.push(CommandRegistration {
                name: required_name(c, "command", "name")?
                    .trim_start_matches('/')
                    .into(),
                description: str_field(c, "description"),
                completions: c["completions"] == true,
            });
        }
        for f in list(msg, "flags")? {
            let name = required_name(f, "flag", "name")?
                .trim_start_matches('-')
                .to_string();
            let kind = match f.get("type").and_then(Value::as_str) {
                Some("boolean") => FlagType::Boolean,
                Some("string") => FlagType::String,
                other => {
                    return Err(format!(
                        "flag {name}: \"type\" must be \"boolean\" or \"string\", got {other:?}"
                    ))
                }
            };
            reg.flags.push(FlagRegistration {
                name,
                kind,
                default: f.get("default").filter(|d| !d.is_null()).cloned(),
                description: str_field(f, "description"),
            });
        }
        for s in list(msg, "shortcuts")? {
            reg.shortcuts.push(ShortcutRegistration {
                key: required_name(s, "shortcut", "key")?,
                description: str_field(s, "description"),
            });
        }
        for p in list(msg, "providers")? {
            let name = required_name(p, "provider", "name")?;
            reg.providers.push(ProviderRegistration {
                stream: p["stream"] == true,
                config: p.clone(),
                name,
            });
        }
        for r in list(msg, "messageRenderers")? {
            if let Some(t) = r.as_str() {
                reg.message_renderers.push(t.to_string());
            }
        }
        for m in list(msg, "mcpServers")? {
            let name = required_name(m, "MCP server", "name")?;
            reg.mcp_servers.push((name, m["config"].clone()));
        }
        for e in list(msg, "events")? {
            match e.as_str() {
                Some(name) if EVENTS.contains(&name) => reg.events.push(name.to_string()),
                // Unknown events are ignored so an extension written for a newer pi still runs.
                Some(_) => {}
                None => return Err(format!("\"events\" entries must be strings: {e}")),
            }
        }
        Ok(reg)
    }

    pub fn subscribes(&self, event: &str) -> bool {
        self.events.iter().any(|e| e == event)
    }
}

/// What pi tells an extension about the run it joins.
pub struct Hello<'a> {
    /// Its number on a shared process (the Node.js bridge).
    pub ext: Option<u64>,
    pub agent_dir: &'a str,
    pub project_trusted: bool,
    pub cwd: &'a str,
    pub mode: &'a str,
    pub has_ui: bool,
    pub extension_path: &'a str,
    pub session_file: Option<&'a str>,
    /// Unknown `--flags` from the command line (`true` for a bare flag).
    pub cli_flags: &'a [(String, Option<String>)],
}

pub fn hello(h: &Hello) -> Value {
    let flags: Map<String, Value> = h
        .cli_flags
        .iter()
        .map(|(n, v)| {
            let value = v.clone().map(Value::String).unwrap_or(Value::Bool(true));
            (n.clone(), value)
        })
        .collect();
    let mut v = json!({
        "type": "hello",
        "protocol": PROTOCOL_VERSION,
        "pi": crate::PI_VERSION,
        "cwd": h.cwd,
        "mode": h.mode,
        "hasUI": h.has_ui,
        "extensionPath": h.extension_path,
        "sessionFile": h.session_file,
        "flags": flags,
        "agentDir": h.agent_dir,
        "projectTrusted": h.project_trusted,
    });
    if let Some(ext) = h.ext {
        v["ext"] = ext.into();
    }
    v
}

/// An event for an extension speaking `protocol`.
pub fn event(id: u64, name: &str, data: Value, protocol: u64) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), "event".into());
    m.insert("id".into(), id.into());
    m.insert("event".into(), name.into());
    if is_blocking(name, protocol) {
        m.insert("wait".into(), true.into());
    }
    m.insert("data".into(), data);
    Value::Object(m)
}

/// The answer to one of the extension's calls.
pub fn reply(id: &Value, result: Result<Value, String>) -> Value {
    match result {
        Ok(v) => json!({"type": "reply", "id": id, "result": v}),
        Err(e) => json!({"type": "reply", "id": id, "error": e}),
    }
}

/// Reads an extension's output line by line, handing each protocol message (or why a line is
/// not one) to `on_message`, until it returns `false` (then `false` is returned) or the output
/// ends (`true`). Blank lines are skipped; a line may end in `\r\n`.
pub fn read_messages(
    mut reader: impl BufRead,
    mut on_message: impl FnMut(Result<Value, LineError>) -> bool,
) -> bool {
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return true,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&buf);
        let line = text.trim_end_matches(['\n', '\r']);
        if line.trim().is_empty() {
            continue;
        }
        if !on_message(parse_line(line)) {
            return false;
        }
    }
}

/// Why a line from an extension is not a protocol message (the extension is then disabled).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineError {
    /// Not JSON at all; the start of the line.
    NotJson(String),
    /// JSON without a `type` pi knows; the start of the message.
    UnknownMessage(String),
}

impl std::fmt::Display for LineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LineError::NotJson(shown) => write!(f, "wrote a line that is not JSON: {shown:?}"),
            LineError::UnknownMessage(shown) => write!(f, "wrote an unknown message: {shown}"),
        }
    }
}

/// A protocol line from the extension, or why it is not one.
pub fn parse_line(line: &str) -> Result<Value, LineError> {
    let Ok(v) = serde_json::from_str::<Value>(line) else {
        return Err(LineError::NotJson(line.chars().take(120).collect()));
    };
    match v.get("type").and_then(Value::as_str) {
        Some(
            "reply" | "tool_update" | "stream_event" | "register" | "call" | "cancel" | "error",
        ) => Ok(v),
        _ => Err(LineError::UnknownMessage(
            v.to_string().chars().take(120).collect(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_protocol_lines_are_accepted() {
        assert!(parse_line(r#"{"type":"stream_event","id":1}"#).is_ok());
        assert_eq!(
            parse_line("hello").unwrap_err().to_string(),
            "wrote a line that is not JSON: \"hello\""
        );
        assert_eq!(
            parse_line(r#"{"type":"bogus"}"#).unwrap_err().to_string(),
            r#"wrote an unknown message: {"type":"bogus"}"#
        );
    }

    #[test]
    fn a_full_registration_parses() {
        let reg = Registration::parse(&json!({
            "type": "register", "protocol": 1, "name": "demo",
            "tools": [{"name": "greet", "description": "Greets", "executionMode": "sequential",
                "parameters": {"type": "object", "properties": {"name": {"type": "string"}}}}],
            "commands": [{"name": "/hello", "description": "Say hello"}],
            "flags": [{"name": "--plan", "type": "boolean", "default": false}],
            "shortcuts": [{"key": "ctrl+shift+p"}],
            "events": ["tool_call", "not_an_event", "turn_start"],
        }))
        .unwrap();
        assert_eq!(reg.name.as_deref(), Some("demo"));
        assert_eq!(reg.tools[0].label, "greet");
        assert_eq!(reg.tools[0].execution_mode, ExecutionMode::Sequential);
        assert_eq!(reg.commands[0].name, "hello");
        assert_eq!(reg.flags[0].name, "plan");
        assert_eq!(reg.flags[0].kind, FlagType::Boolean);
        assert_eq!(reg.events, ["tool_call", "turn_start"]);
        assert_eq!(reg.shortcuts[0].key, "ctrl+shift+p");
    }

    #[test]
    fn bad_registrations_say_what_is_wrong() {
        let err = |v: Value| Registration::parse(&v).unwrap_err();
        assert!(err(json!({"type": "register"})).contains("protocol"));
        assert!(err(json!({"type": "register", "protocol": 3})).contains("protocol 3"));
        assert_eq!(
            err(
                json!({"type": "register", "protocol": 2, "error": "Failed to load extension: boom"})
            ),
            "Failed to load extension: boom"
        );
        assert!(err(json!({"type": "hello"})).contains("register"));
        assert!(
            err(json!({"type": "register", "protocol": 1, "tools": [{"label": "x"}]}))
                .contains("tool without")
        );
        assert!(err(json!({"type": "register", "protocol": 1, "tools": {}}))
            .contains("must be an array"));
        assert!(err(
            json!({"type": "register", "protocol": 1, "flags": [{"name": "x", "type": "int"}]})
        )
        .contains("boolean"));
    }

    #[test]
    fn blocking_events_ask_for_an_answer() {
        assert_eq!(event(3, "tool_call", json!({}), 1)["wait"], true);
        assert!(event(4, "turn_start", json!({}), 2).get("wait").is_none());
        // turn_end became actionable in protocol 2 only.
        assert!(event(5, "turn_end", json!({}), 1).get("wait").is_none());
        assert_eq!(event(6, "turn_end", json!({}), 2)["wait"], true);
        let h = hello(&Hello {
            ext: Some(4),
            agent_dir: "/a",
            project_trusted: true,
            cwd: "/p",
            mode: "print",
            has_ui: false,
            extension_path: "/e",
            session_file: None,
            cli_flags: &[("plan".into(), None), ("name".into(), Some("x".into()))],
        });
        assert_eq!(h["flags"], json!({"plan": true, "name": "x"}));
        assert_eq!(h["protocol"], 2);
        assert_eq!(h["ext"], 4);
        assert_eq!(h["projectTrusted"], true);
    }
}
