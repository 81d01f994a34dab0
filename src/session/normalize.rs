//! Every shape any pi version wrote of an entry or header line, brought to the one shape the
//! typed entries read (the messages inside are shaped by `agent::normalize`). pi itself never
//! validates what it loads (a field that is missing is `undefined`, which its arithmetic
//! treats as nothing), so old files carry shapes the current types do not; each field is
//! filled with the value pi's code ends up using (0, "", false, an empty list), and lines that
//! cannot be used at all are named by `unusable`.
//!
//! This only shapes what we *read*: the file keeps its lines as they are, and a line copied
//! into another session is copied byte for byte (see `store`).

use serde_json::Value;

use crate::agent::normalize::{
    boolean, optional_bool, optional_string, string, unsigned, user_content,
};
// Message shaping moved to `agent::normalize`; re-exported for callers of the old path.
pub use crate::agent::normalize::message;

/// What decides whether a line of a known type can be used; the lazy loader's scan collects
/// the same facts without parsing the line whole.
#[derive(Debug, Clone, Copy)]
pub struct Usable {
    /// `message` is an object.
    pub message_is_object: bool,
    /// `thinkingLevel` is a string.
    pub thinking_level_is_str: bool,
    /// `name` is absent, `null` or a string.
    pub name_is_str_or_absent: bool,
}

impl Default for Usable {
    /// What a line without any of the fields says.
    fn default() -> Self {
        Usable {
            message_is_object: false,
            thinking_level_is_str: false,
            name_is_str_or_absent: true,
        }
    }
}

/// Why a line of a known type still cannot be used (the caller reports it with the line
/// number and keeps the line in the file).
pub fn unusable(kind: &str, facts: Usable) -> Option<String> {
    match kind {
        "message" if !facts.message_is_object => {
            Some("a message entry without a message object".into())
        }
        "thinking_level_change" if !facts.thinking_level_is_str => {
            Some("a thinking level change without a level".into())
        }
        "session_info" if !facts.name_is_str_or_absent => {
            Some("a session name that is not text".into())
        }
        _ => None,
    }
}

/// Why `entry` cannot be used, as [`unusable`] says, for a parsed line.
pub fn unusable_entry(entry: &Value) -> Option<String> {
    let kind = entry.get("type").and_then(Value::as_str)?;
    let facts = Usable {
        message_is_object: entry.get("message").is_some_and(Value::is_object),
        thinking_level_is_str: entry.get("thinkingLevel").is_some_and(Value::is_string),
        name_is_str_or_absent: entry
            .get("name")
            .is_none_or(|n| n.is_string() || n.is_null()),
    };
    unusable(kind, facts)
}

/// Shapes a line of a known entry type in place. Lines [`unusable_entry`] rejects are left
/// as they are.
pub fn entry(v: &mut Value) {
    if unusable_entry(v).is_some() {
        return;
    }
    let Some(kind) = v.get("type").and_then(Value::as_str).map(str::to_string) else {
        return;
    };
    let Some(o) = v.as_object_mut() else { return };
    string(o, "id");
    if !o.get("parentId").is_some_and(Value::is_string) {
        o.insert("parentId".into(), Value::Null);
    }
    string(o, "timestamp");
    // A `message` entry's message is shaped by `AgentMessage::from_value` as it is read.
    match kind.as_str() {
        "model_change" => {
            string(o, "provider");
            string(o, "modelId");
        }
        "compaction" => {
            string(o, "summary");
            optional_string(o, "firstKeptEntryId");
            unsigned(o, "tokensBefore");
            optional_bool(o, "fromHook");
        }
        "branch_summary" => {
            if !o.get("fromId").is_some_and(Value::is_string) {
                o.insert("fromId".into(), "root".into());
            }
            string(o, "summary");
            optional_bool(o, "fromHook");
        }
        "custom" => string(o, "customType"),
        "custom_message" => {
            string(o, "customType");
            user_content(o, "content");
            boolean(o, "display");
        }
        "label" => {
            string(o, "targetId");
            optional_string(o, "label");
        }
        "session_info" => optional_string(o, "name"),
        _ => {}
    }
}

/// Shapes a header line: `version` must be a whole number (else it is left out of the typed
/// header; the file's version is then inferred from its entries), `id` a string.
pub fn header(v: &Value) -> Value {
    let mut h = v.clone();
    if let Some(o) = h.as_object_mut() {
        if o.get("version").is_none_or(|n| n.as_u64().is_none()) {
            o.shift_remove("version");
        }
        string(o, "timestamp");
        string(o, "cwd");
        optional_string(o, "parentSession");
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unusable_entries_are_named_and_left_untouched() {
        let mut e = json!({"type": "message", "id": "a", "message": "text"});
        let before = e.clone();
        assert!(unusable_entry(&e).is_some());
        entry(&mut e);
        assert_eq!(e, before);
        assert!(
            unusable_entry(&json!({"type": "thinking_level_change", "thinkingLevel": 7})).is_some()
        );
        assert!(unusable_entry(&json!({"type": "label"})).is_none());
    }
}
