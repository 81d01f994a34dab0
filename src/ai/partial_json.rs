//! Lenient parsing of tool-call arguments that are still streaming in. `parse_partial_json`
//! never fails: it closes open strings and containers, drops a trailing incomplete member, and
//! escapes raw control characters, falling back to `{}` when nothing sensible remains.

use serde_json::{Map, Value};

const MAX_ATTEMPTS: usize = 64;

pub fn parse_partial_json(s: &str) -> Value {
    let trimmed = s.trim();
    if trimmed.is_empty() {
        return Value::Object(Map::new());
    }
    if let Ok(v) = serde_json::from_str(trimmed) {
        return v;
    }
    let (repaired, cuts) = repair(trimmed);
    let mut end = repaired.len();
    let mut cut_iter = cuts.iter().rev();
    for _ in 0..MAX_ATTEMPTS {
        if let Some(v) = try_close(&repaired[..end]) {
            return v;
        }
        match cut_iter.find(|c| c.0 < end) {
            Some(&(pos, keep)) => end = if keep { pos + 1 } else { pos },
            None => break,
        }
    }
    Value::Object(Map::new())
}

/// Escapes raw control characters inside strings and records the structural cut points
/// (`,` and `:` are cut before, `{` and `[` after) outside strings.
fn repair(s: &str) -> (String, Vec<(usize, bool)>) {
    let mut out = String::with_capacity(s.len() + 8);
    let mut cuts = Vec::new();
    let mut in_str = false;
    let mut escaped = false;
    for ch in s.chars() {
        if in_str {
            if escaped {
                escaped = false;
                // Invalid escapes such as `\p` become a literal backslash.
                if !matches!(ch, '"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't' | 'u') {
                    out.push('\\');
                }
                out.push(ch);
            } else if ch == '\\' {
                escaped = true;
                out.push(ch);
            } else if ch == '"' {
                in_str = false;
                out.push(ch);
            } else if (ch as u32) < 0x20 {
                out.push_str(&format!("\\u{:04x}", ch as u32));
            } else {
                out.push(ch);
            }
            continue;
        }
        match ch {
            '"' => in_str = true,
            ',' | ':' => cuts.push((out.len(), false)),
            '{' | '[' => cuts.push((out.len(), true)),
            _ => {}
        }
        out.push(ch);
    }
    (out, cuts)
}

/// Closes whatever is open at the end of `s` and parses it.
fn try_close(s: &str) -> Option<Value> {
    let mut stack = Vec::new();
    let mut in_str = false;
    let mut escaped = false;
    for ch in s.chars() {
        if in_str {
            if escaped {
                escaped = false;
            } else if ch == '\\' {
                escaped = true;
            } else if ch == '"' {
                in_str = false;
            }
            continue;
        }
        match ch {
            '"' => in_str = true,
            '{' => stack.push('}'),
            '[' => stack.push(']'),
            '}' | ']' => {
                stack.pop();
            }
            _ => {}
        }
    }
    let mut text = s.to_string();
    if in_str {
        if escaped {
            text.pop();
        }
        // A half-written \uXXXX escape cannot be closed; drop it.
        if let Some(p) = text.rfind("\\u") {
            let tail = &text[p + 2..];
            if tail.len() < 4 && tail.chars().all(|c| c.is_ascii_hexdigit()) {
                text.truncate(p);
            }
        }
        text.push('"');
    }
    let body = text.trim_end();
    let body = body.strip_suffix(',').unwrap_or(body);
    let mut text = body.to_string();
    while let Some(c) = stack.pop() {
        text.push(c);
    }
    serde_json::from_str(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn complete_and_empty() {
        assert_eq!(parse_partial_json(""), json!({}));
        assert_eq!(parse_partial_json("  "), json!({}));
        assert_eq!(parse_partial_json(r#"{"a":1}"#), json!({"a": 1}));
    }

    #[test]
    fn every_prefix_parses_to_something_sensible() {
        let full = r#"{"path": "src/ma\"in.rs", "edits": [{"oldText": "a\nb", "newText": "ü"}], "n": 12.5, "ok": true}"#;
        let mut last_keys = 0;
        for (i, _) in full.char_indices() {
            let v = parse_partial_json(&full[..i]);
            let obj = v.as_object().expect("object");
            assert!(
                obj.len() + 1 >= last_keys,
                "keys never vanish: {}",
                &full[..i]
            );
            last_keys = obj.len();
        }
        assert_eq!(parse_partial_json(full)["edits"][0]["newText"], json!("ü"));
    }

    #[test]
    fn open_string_is_kept() {
        assert_eq!(
            parse_partial_json(r#"{"command": "ls -l"#),
            json!({"command": "ls -l"})
        );
        assert_eq!(
            parse_partial_json(r#"{"command": "a\"#),
            json!({"command": "a"})
        );
        assert_eq!(parse_partial_json(r#"{"c": "x\u00"#), json!({"c": "x"}));
    }

    #[test]
    fn incomplete_member_is_dropped() {
        assert_eq!(parse_partial_json(r#"{"a": "x", "b"#), json!({"a": "x"}));
        assert_eq!(parse_partial_json(r#"{"a": "x", "b":"#), json!({"a": "x"}));
        assert_eq!(parse_partial_json(r#"{"a": tr"#), json!({}));
    }

    #[test]
    fn raw_control_chars_and_bad_escapes_are_repaired() {
        assert_eq!(
            parse_partial_json("{\"a\": \"x\ny\"}"),
            json!({"a": "x\ny"})
        );
        assert_eq!(parse_partial_json(r#"{"a": "\p"}"#), json!({"a": "\\p"}));
    }

    #[test]
    fn garbage_never_panics() {
        for s in [
            "}}}",
            "[[[",
            "\"",
            "\\",
            "{\"a\":\"\\",
            "nul",
            "{,}",
            "[1,,2",
        ] {
            let _ = parse_partial_json(s);
        }
    }
}
