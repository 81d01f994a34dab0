//! JSONC (JSON with `//` and `/* */` comments and trailing commas) read by turning it into plain
//! JSON of the same byte length: comments and trailing commas become spaces, newlines stay, so
//! serde_json's line and column point into the original file.

use serde_json::Value;

/// A JSONC parse failure, positioned in the original text (1-based line and byte column).
#[derive(Debug, Clone, PartialEq)]
pub struct JsoncError {
    pub message: String,
    pub line: usize,
    pub column: usize,
}

impl std::fmt::Display for JsoncError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} at line {} column {}",
            self.message, self.line, self.column
        )
    }
}

/// Blanks comments and trailing commas with spaces, keeping every newline and string literal.
pub fn strip_jsonc(input: &str) -> String {
    let no_comments = blank_comments(input.as_bytes());
    let bytes = blank_trailing_commas(no_comments);
    // Only ASCII bytes were replaced, and only whole comments (which may hold multi-byte
    // characters) were blanked byte by byte, so the result is still UTF-8.
    String::from_utf8(bytes).unwrap_or_default()
}

fn blank_comments(b: &[u8]) -> Vec<u8> {
    let mut out = b.to_vec();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => i = skip_string(b, i),
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    if b[i] != b'\r' {
                        out[i] = b' ';
                    }
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let start = i;
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                let end = (i + 2).min(b.len());
                for c in &mut out[start..end] {
                    if *c != b'\n' && *c != b'\r' {
                        *c = b' ';
                    }
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    out
}

fn blank_trailing_commas(mut b: Vec<u8>) -> Vec<u8> {
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => i = skip_string(&b, i),
            b',' => {
                let mut j = i + 1;
                while j < b.len() && b[j].is_ascii_whitespace() {
                    j += 1;
                }
                if matches!(b.get(j), Some(b'}') | Some(b']')) {
                    b[i] = b' ';
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    b
}

/// Index just past the string literal starting at `start` (a `"`), or the end of input.
fn skip_string(b: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// Parses JSONC text into a JSON value.
pub fn parse_jsonc(input: &str) -> Result<Value, JsoncError> {
    let json = strip_jsonc(input);
    serde_json::from_str(&json).map_err(|e| {
        let full = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let message = full.strip_suffix(&suffix).unwrap_or(&full).to_string();
        JsoncError {
            message,
            line: e.line(),
            column: e.column(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strips_line_and_block_comments_keeping_strings() {
        let src = "{\n  // a comment\n  \"a\": \"http://x//y\", /* block\n spans */ \"b\": 1\n}";
        let out = strip_jsonc(src);
        assert_eq!(out.len(), src.len());
        assert_eq!(out.lines().count(), src.lines().count());
        assert_eq!(
            parse_jsonc(src).unwrap(),
            json!({"a": "http://x//y", "b": 1})
        );
    }

    #[test]
    fn strips_trailing_commas_but_not_inside_strings() {
        let src = r#"{"a": [1, 2, ], "s": ",}", "o": {"x": 1,
        },}"#;
        assert_eq!(
            parse_jsonc(src).unwrap(),
            json!({"a": [1, 2], "s": ",}", "o": {"x": 1}})
        );
    }

    #[test]
    fn trailing_comma_before_comment_then_brace() {
        let src = "{\"a\": 1, // last\n}";
        assert_eq!(parse_jsonc(src).unwrap(), json!({"a": 1}));
    }

    #[test]
    fn escaped_quotes_in_strings() {
        let src = r#"{"a": "q\"// not a comment", "b": "\\"}"#;
        assert_eq!(
            parse_jsonc(src).unwrap(),
            json!({"a": "q\"// not a comment", "b": "\\"})
        );
    }

    #[test]
    fn error_positions_point_into_original_text() {
        let src = "{\n  // comment here\n  \"a\": 1\n  \"b\": 2\n}";
        let err = parse_jsonc(src).unwrap_err();
        assert_eq!((err.line, err.column), (4, 3));
        assert_eq!(err.to_string(), "expected `,` or `}` at line 4 column 3");
    }

    #[test]
    fn non_ascii_in_comments_is_kept_valid() {
        let src = "{ /* héllo ✓ */ \"a\": \"é\" }";
        assert_eq!(parse_jsonc(src).unwrap(), json!({"a": "é"}));
    }
}
