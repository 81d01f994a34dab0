//! JSONC (`resources::jsonc`, settings and `models.json`): blanking comments and trailing
//! commas keeps the text's length and every newline (so error positions point into the
//! original), plain JSON reads exactly as serde_json reads it, and an error's position lies
//! inside the text.
//!
//! Input: the text (invalid UTF-8 replaced).

use pi::resources::jsonc::{parse_jsonc, strip_jsonc};
use serde_json::Value;

pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let stripped = strip_jsonc(&text);
    assert_eq!(stripped.len(), text.len(), "blanking keeps the length");
    for (i, (a, b)) in text.bytes().zip(stripped.bytes()).enumerate() {
        if a == b'\n' || b == b'\n' {
            assert_eq!(a, b, "newlines stay where they are (byte {i})");
        }
        if a != b {
            assert_eq!(b, b' ', "only blanks are written (byte {i})");
        }
    }
    let parsed = parse_jsonc(&text);
    if let Ok(plain) = serde_json::from_str::<Value>(&text) {
        assert_eq!(parsed, Ok(plain), "plain JSON reads as serde_json reads it");
    }
    if let Err(e) = parsed {
        let lines = text.split('\n').count();
        assert!(e.line <= lines, "error line {} of {lines}", e.line);
        assert!(!e.message.is_empty());
    }
}
