//! The script text: an optional `// @options: {...}` first line (`max_output_tokens`,
//! `timeout_ms`), then JavaScript. Errors are worded as pi 1.x words them.

use serde_json::Value;

pub const OPTIONS_PREFIX: &str = "// @options:";
const FIELDS_TEXT: &str = "`max_output_tokens` and `timeout_ms`";
const MAX_TIMEOUT_MS: u64 = 2_147_483_647;
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// The options line's settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SourceOptions {
    pub max_output_tokens: Option<u64>,
    pub timeout_ms: Option<u64>,
}

/// Splits `input` into the script and its options.
pub fn parse_source(input: &str) -> Result<(String, SourceOptions), String> {
    if input.trim().is_empty() {
        return Err("Expected JavaScript source text (non-empty). Provide JS only, optionally with a first line `// @options: {\"max_output_tokens\": 1000}`.".into());
    }
    if let Some(n) = input
        .split('\n')
        .enumerate()
        .skip(1)
        .find(|(_, line)| line.trim_start().starts_with(OPTIONS_PREFIX))
        .map(|(i, _)| i + 1)
    {
        return Err(format!(
            "The {OPTIONS_PREFIX} line must be the first line of the input; found one on line {n}"
        ));
    }
    let first = input.split('\n').next().unwrap_or("");
    let first = first.strip_suffix('\r').unwrap_or(first).trim_start();
    let Some(directive) = first.strip_prefix(OPTIONS_PREFIX) else {
        return Ok((input.to_string(), SourceOptions::default()));
    };
    let code = input.find('\n').map_or("", |i| &input[i..]);
    if code.trim().is_empty() {
        return Err(
            "The @options line must be followed by JavaScript source on subsequent lines".into(),
        );
    }
    Ok((code.to_string(), parse_options(directive.trim())?))
}

fn parse_options(directive: &str) -> Result<SourceOptions, String> {
    let not_object =
        || format!("@options must be a JSON object with supported fields {FIELDS_TEXT}");
    if directive.is_empty() {
        return Err(not_object());
    }
    let value: Value = serde_json::from_str(directive).map_err(|e| {
        format!("@options must be valid JSON with supported fields {FIELDS_TEXT}: {e}")
    })?;
    let Value::Object(fields) = value else {
        return Err(not_object());
    };
    let mut options = SourceOptions::default();
    for (key, v) in &fields {
        let as_int = v
            .as_f64()
            .filter(|n| *n >= 0.0 && n.fract() == 0.0 && *n <= MAX_SAFE_INTEGER)
            .map(|n| n as u64);
        match key.as_str() {
            "max_output_tokens" => {
                options.max_output_tokens = Some(as_int.ok_or(
                    "@options field `max_output_tokens` must be a non-negative safe integer",
                )?)
            }
            "timeout_ms" => {
                options.timeout_ms = Some(as_int.filter(|n| *n > 0 && *n <= MAX_TIMEOUT_MS).ok_or(
                    format!(
                    "@options field `timeout_ms` must be a positive integer up to {MAX_TIMEOUT_MS}"
                ),
                )?)
            }
            other => {
                return Err(format!(
                    "@options only supports {FIELDS_TEXT}; got `{other}`"
                ))
            }
        }
    }
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_line_is_read_and_checked() {
        let (code, o) =
            parse_source("// @options: {\"max_output_tokens\": 5, \"timeout_ms\": 9}\nreturn 1")
                .unwrap();
        assert_eq!(code, "\nreturn 1");
        assert_eq!(o.max_output_tokens, Some(5));
        assert_eq!(o.timeout_ms, Some(9));
        assert_eq!(
            parse_source("return 1").unwrap().1,
            SourceOptions::default()
        );
        assert!(parse_source("x\n// @options: {}")
            .unwrap_err()
            .contains("line 2"));
        assert!(parse_source("// @options: {\"nope\": 1}\nx")
            .unwrap_err()
            .contains("got `nope`"));
        assert!(parse_source("// @options: {\"timeout_ms\": 0}\nx").is_err());
        assert!(parse_source("  ").is_err());
    }
}
