//! Reading RPC commands: stdin split into records at `\n` only (a trailing `\r` dropped, so
//! U+2028/U+2029 inside strings never split a command), and a record parsed into a command or
//! into the error response pi gives for it. Pure apart from the reader it is handed; the
//! server decides what each command does.

use std::io::BufRead;

use serde_json::{json, Map, Value};

/// Reads records from `reader` until it ends (or fails), handing each to `on_record` (invalid
/// UTF-8 replaced) until that returns `false`.
pub fn read_records(mut reader: impl BufRead, mut on_record: impl FnMut(String) -> bool) {
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
        }
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
        if !on_record(String::from_utf8_lossy(&buf).into_owned()) {
            return;
        }
    }
}

/// A command record, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    /// Echoed in the response when present.
    pub id: Option<Value>,
    /// The `type`.
    pub kind: String,
    /// The whole command.
    pub value: Value,
}

/// Parses a record into a command, or the error response pi answers it with: a `parse`
/// error for what is not JSON (empty records too), `Unknown command: …` for a command whose
/// `type` is missing or not a string (without a `command` field when it is missing, as pi).
pub fn parse_command(record: &str) -> Result<Command, Value> {
    let value: Value = serde_json::from_str(record).map_err(|e| {
        json!({"type": "response", "command": "parse", "success": false,
            "error": format!("Failed to parse command: {e}")})
    })?;
    let id = value.get("id").cloned();
    match value.get("type") {
        Some(Value::String(kind)) => Ok(Command {
            id,
            kind: kind.clone(),
            value,
        }),
        other => {
            let mut m = Map::new();
            if let Some(id) = id {
                m.insert("id".into(), id);
            }
            m.insert("type".into(), "response".into());
            if let Some(v) = other {
                m.insert("command".into(), v.clone());
            }
            m.insert("success".into(), false.into());
            let shown = other.map_or("undefined".to_string(), |v| match v {
                Value::Null => "null".to_string(),
                v => v.to_string(),
            });
            m.insert("error".into(), format!("Unknown command: {shown}").into());
            Err(Value::Object(m))
        }
    }
}

/// The `type` of a record (empty if it has none or does not parse): what decides, before a
/// command is handled, whether it waits for the session.
pub fn command_kind(record: &str) -> String {
    parse_command(record).map(|c| c.kind).unwrap_or_default()
}

/// An `extension_ui_response` record, parsed: it goes straight to the dialog waiting for it.
pub fn ui_response(record: &str) -> Option<Value> {
    if !record.contains("extension_ui_response") {
        return None;
    }
    serde_json::from_str::<Value>(record)
        .ok()
        .filter(|v| v["type"] == "extension_ui_response")
}
