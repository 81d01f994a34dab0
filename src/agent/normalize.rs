//! Every shape any pi version wrote of a message, brought to the one shape the typed
//! messages (`message`) read. pi itself never validates what it loads, so old session files
//! carry usage without `totalTokens` (before late 2025) or without `cost`, tool results with
//! `output` instead of `content`, messages without `timestamp`, stop reasons since retired
//! ("safety") or added later ("deferred"), `error` where `errorMessage` is now. Each is filled with the value pi's code ends up using
//! (0, "", false, an empty list), so no message of a known role is ever dropped. The field
//! rules here (`string`, `unsigned`, …) are shared with the session's entry shaping.

use serde_json::{Map, Value};

/// Shapes a message of a known role in place; other roles are left alone.
pub fn message(m: &mut Value) {
    let Some(o) = m.as_object_mut() else { return };
    let role = o
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let known = matches!(
        role.as_str(),
        "user"
            | "assistant"
            | "toolResult"
            | "bashExecution"
            | "custom"
            | "hookMessage"
            | "branchSummary"
            | "compactionSummary"
    );
    if !known {
        return;
    }
    integer(o, "timestamp");
    match role.as_str() {
        "user" => user_content(o, "content"),
        "assistant" => assistant(o),
        "toolResult" => {
            string(o, "toolCallId");
            string(o, "toolName");
            // Before tool results carried images (pi, November 2025): `output: string`.
            if !o.contains_key("content") {
                if let Some(Value::String(s)) = o.get("output") {
                    let block = text_block(s.clone());
                    o.insert("content".into(), Value::Array(vec![block]));
                }
            }
            block_list(o, "content");
            boolean(o, "isError");
        }
        "bashExecution" => {
            string(o, "command");
            string(o, "output");
            match o.get("exitCode") {
                None | Some(Value::Null) => {}
                Some(n) if n.is_number() => integer(o, "exitCode"),
                Some(_) => {
                    o.shift_remove("exitCode");
                }
            }
            boolean(o, "cancelled");
            boolean(o, "truncated");
            optional_string(o, "fullOutputPath");
            optional_bool(o, "excludeFromContext");
        }
        "custom" | "hookMessage" => {
            string(o, "customType");
            user_content(o, "content");
            boolean(o, "display");
        }
        "branchSummary" => {
            string(o, "summary");
            string(o, "fromId");
        }
        "compactionSummary" => {
            string(o, "summary");
            unsigned(o, "tokensBefore");
        }
        _ => {}
    }
}

fn assistant(o: &mut Map<String, Value>) {
    match o.get("content") {
        Some(Value::String(s)) => {
            let block = text_block(s.clone());
            o.insert("content".into(), Value::Array(vec![block]));
        }
        Some(Value::Array(_)) => {}
        _ => {
            o.insert("content".into(), Value::Array(Vec::new()));
        }
    }
    block_list(o, "content");
    string(o, "api");
    string(o, "provider");
    string(o, "model");
    match o.get_mut("usage") {
        Some(u @ Value::Object(_)) => usage(u),
        _ => {
            let mut u = Value::Object(Map::new());
            usage(&mut u);
            o.insert("usage".into(), u);
        }
    }
    let stop = match o.get("stopReason").and_then(Value::as_str) {
        Some(s @ ("stop" | "length" | "toolUse" | "error" | "aborted")) => s.to_string(),
        // Missing: a message from before stop reasons were recorded, which ended normally.
        None => "stop".into(),
        // "safety" (retired), "deferred" and "pending" (1.x): not a normal end.
        Some(_) => "error".into(),
    };
    o.insert("stopReason".into(), stop.into());
    // Before September 2025 the error text was `error`.
    if !o.contains_key("errorMessage") {
        if let Some(Value::String(e)) = o.get("error") {
            let e = e.clone();
            o.insert("errorMessage".into(), e.into());
        }
    }
    optional_string(o, "errorMessage");
    optional_string(o, "responseModel");
    optional_string(o, "responseId");
}

fn usage(u: &mut Value) {
    let Some(o) = u.as_object_mut() else { return };
    for k in ["input", "output", "cacheRead", "cacheWrite", "totalTokens"] {
        unsigned(o, k);
    }
    if !o.get("cost").is_some_and(Value::is_object) {
        o.insert("cost".into(), Value::Object(Map::new()));
    }
    if let Some(Value::Object(c)) = o.get_mut("cost") {
        for k in ["input", "output", "cacheRead", "cacheWrite", "total"] {
            float(c, k);
        }
    }
}

pub(crate) fn text_block(text: String) -> Value {
    let mut b = Map::new();
    b.insert("type".into(), "text".into());
    b.insert("text".into(), text.into());
    Value::Object(b)
}

/// User-style content: a string, or a list of blocks; anything else becomes `""`.
pub(crate) fn user_content(o: &mut Map<String, Value>, key: &str) {
    match o.get(key) {
        Some(Value::String(_)) => {}
        Some(Value::Array(_)) => block_list(o, key),
        _ => {
            o.insert(key.into(), "".into());
        }
    }
}

/// A list of content blocks: each known block gets its fields; a block of a type we do not
/// know (or not an object) is left out of what we read — the file keeps it.
pub(crate) fn block_list(o: &mut Map<String, Value>, key: &str) {
    let Some(Value::Array(blocks)) = o.get_mut(key) else {
        o.insert(key.into(), Value::Array(Vec::new()));
        return;
    };
    blocks.retain_mut(|b| {
        let Some(bo) = b.as_object_mut() else {
            return false;
        };
        match bo.get("type").and_then(Value::as_str) {
            Some("text") => {
                string(bo, "text");
                optional_string(bo, "textSignature");
            }
            Some("thinking") => {
                string(bo, "thinking");
                optional_string(bo, "thinkingSignature");
                optional_bool(bo, "redacted");
            }
            Some("image") => {
                string(bo, "data");
                string(bo, "mimeType");
            }
            Some("toolCall") => {
                string(bo, "id");
                string(bo, "name");
                if !bo.get("arguments").is_some_and(Value::is_object) {
                    bo.insert("arguments".into(), Value::Object(Map::new()));
                }
                optional_string(bo, "thoughtSignature");
            }
            _ => return false,
        }
        true
    });
}

pub(crate) fn string(o: &mut Map<String, Value>, key: &str) {
    if !o.get(key).is_some_and(Value::is_string) {
        o.insert(key.into(), "".into());
    }
}

pub(crate) fn optional_string(o: &mut Map<String, Value>, key: &str) {
    if o.get(key).is_some_and(|v| !v.is_string()) {
        o.shift_remove(key);
    }
}

pub(crate) fn boolean(o: &mut Map<String, Value>, key: &str) {
    if !o.get(key).is_some_and(Value::is_boolean) {
        o.insert(key.into(), false.into());
    }
}

pub(crate) fn optional_bool(o: &mut Map<String, Value>, key: &str) {
    if o.get(key).is_some_and(|v| !v.is_boolean()) {
        o.shift_remove(key);
    }
}

/// A count: a whole number ≥ 0 (a fraction is cut, anything else is 0).
pub(crate) fn unsigned(o: &mut Map<String, Value>, key: &str) {
    if o.get(key).is_some_and(|n| n.as_u64().is_some()) {
        return;
    }
    let n = o
        .get(key)
        .and_then(Value::as_f64)
        .filter(|f| f.is_finite() && *f > 0.0)
        .map_or(0, |f| f.min(u64::MAX as f64) as u64);
    o.insert(key.into(), n.into());
}

/// A millisecond time or exit code: a whole number (a fraction is cut, anything else is 0).
pub(crate) fn integer(o: &mut Map<String, Value>, key: &str) {
    if o.get(key).is_some_and(|n| n.as_i64().is_some()) {
        return;
    }
    let n = o
        .get(key)
        .and_then(Value::as_f64)
        .filter(|f| f.is_finite())
        .map_or(0, |f| f.clamp(i64::MIN as f64, i64::MAX as f64) as i64);
    o.insert(key.into(), n.into());
}

pub(crate) fn float(o: &mut Map<String, Value>, key: &str) {
    if !o.get(key).is_some_and(Value::is_number) {
        o.insert(key.into(), 0.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_old_assistant_message_gets_pis_defaults() {
        let mut m = json!({"role": "assistant", "content": "hi", "api": "a", "provider": "p",
            "model": "m", "usage": {"input": 1, "output": 2.7, "cacheRead": -1, "cacheWrite": 0},
            "stopReason": "safety", "error": "boom"});
        message(&mut m);
        assert_eq!(m["content"], json!([{"type": "text", "text": "hi"}]));
        assert_eq!(
            m["usage"],
            json!({"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}})
        );
        assert_eq!(m["stopReason"], "error");
        assert_eq!(m["errorMessage"], "boom");
        assert_eq!(m["timestamp"], 0);
    }

    #[test]
    fn an_old_tool_result_with_output_gets_content() {
        let mut m = json!({"role": "toolResult", "toolCallId": "c", "toolName": "bash",
            "output": "done", "isError": false});
        message(&mut m);
        assert_eq!(m["content"], json!([{"type": "text", "text": "done"}]));
    }

    #[test]
    fn unknown_blocks_and_roles_are_left_out_or_alone() {
        let mut m = json!({"role": "user", "content": [{"type": "audio"}, 5, {"type": "text"}]});
        message(&mut m);
        assert_eq!(m["content"], json!([{"type": "text", "text": ""}]));
        let system = json!({"role": "system", "content": "", "sections": {}});
        let mut s = system.clone();
        message(&mut s);
        assert_eq!(s, system);
    }
}
