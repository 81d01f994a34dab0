//! Streamed tool-call arguments (`ai::partial_json`): parsing never fails, agrees with
//! serde_json on complete JSON, and every prefix of a JSON object reads as an object (what the
//! UI and the tool-argument checks are shown while the arguments stream in).
//!
//! Input: the text (invalid UTF-8 replaced).

use pi::ai::partial_json::parse_partial_json;
use serde_json::Value;

/// Prefixes checked per input, evenly spread (all of them for short texts).
const PREFIXES: usize = 48;

pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let got = parse_partial_json(&text);
    if let Ok(exact) = serde_json::from_str::<Value>(text.trim()) {
        assert_eq!(got, exact, "complete JSON reads as serde_json reads it");
    }
    if text.trim().is_empty() {
        assert_eq!(got, Value::Object(Default::default()));
    }
    if !got_object_start(&text)
        || !serde_json::from_str::<Value>(&text).is_ok_and(|v| v.is_object())
    {
        return;
    }
    let bounds: Vec<usize> = (0..=text.len())
        .filter(|&i| text.is_char_boundary(i))
        .collect();
    let step = (bounds.len() / PREFIXES).max(1);
    for &end in bounds.iter().step_by(step) {
        let prefix = &text[..end];
        let v = parse_partial_json(prefix);
        assert!(v.is_object(), "prefix {prefix:?} of an object read as {v}");
    }
}

fn got_object_start(text: &str) -> bool {
    text.trim_start().starts_with('{')
}
