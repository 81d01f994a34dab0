//! Output truncation shared by the tools: keep the head (read, grep, find, ls) or the tail
//! (bash) of a text within a line cap and a byte cap, whichever is hit first. The result
//! serializes like pi's `details.truncation` object.

use serde::Serialize;

pub const DEFAULT_MAX_LINES: usize = 2000;
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;
pub const GREP_MAX_LINE_LENGTH: usize = 500;

/// What was kept of a text and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Truncation {
    pub content: String,
    pub truncated: bool,
    /// `"lines"` or `"bytes"`; `None` (JSON `null`) when nothing was cut.
    pub truncated_by: Option<&'static str>,
    pub total_lines: usize,
    pub total_bytes: usize,
    pub output_lines: usize,
    pub output_bytes: usize,
    pub last_line_partial: bool,
    pub first_line_exceeds_limit: bool,
    pub max_lines: usize,
    pub max_bytes: usize,
}

impl Truncation {
    /// The result for a text that fits both limits.
    pub(crate) fn untouched(
        text: &str,
        total_lines: usize,
        max_lines: usize,
        max_bytes: usize,
    ) -> Self {
        Truncation {
            content: text.to_string(),
            truncated: false,
            truncated_by: None,
            total_lines,
            total_bytes: text.len(),
            output_lines: total_lines,
            output_bytes: text.len(),
            last_line_partial: false,
            first_line_exceeds_limit: false,
            max_lines,
            max_bytes,
        }
    }
}

/// How many lines pi 1.x counts in `text`: a final newline ends the last line rather than
/// starting an empty one, and an empty text has none.
pub fn count_lines(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    memchr::memchr_iter(b'\n', text.as_bytes()).count() + usize::from(!text.ends_with('\n'))
}

/// The lines pi 1.x counts (see `count_lines`).
fn counted_lines(text: &str) -> std::str::Split<'_, char> {
    text.strip_suffix('\n').unwrap_or(text).split('\n')
}

/// Human-readable size, 1024-based, one decimal for KB and MB (`512B`, `50.0KB`, `1.5MB`).
/// Halves round up, as JavaScript's `toFixed` does for these exactly representable values.
pub fn format_size(bytes: usize) -> String {
    const KB: u128 = 1024;
    const MB: u128 = 1024 * 1024;
    let b = bytes as u128;
    let (unit, div) = if b < KB {
        return format!("{bytes}B");
    } else if b < MB {
        ("KB", KB)
    } else {
        ("MB", MB)
    };
    let tenths = (b * 10 * 2 + div) / (2 * div);
    format!("{}.{}{unit}", tenths / 10, tenths % 10)
}

/// Keeps the first lines of `text` that fit `max_lines` and `max_bytes`. Never cuts a line in
/// half: if the first line alone is over the byte cap the content is empty and
/// `first_line_exceeds_limit` is set.
pub fn truncate_head(text: &str, max_lines: usize, max_bytes: usize) -> Truncation {
    let total_lines = count_lines(text);
    let total_bytes = text.len();
    if total_lines <= max_lines && total_bytes <= max_bytes {
        return Truncation::untouched(text, total_lines, max_lines, max_bytes);
    }
    let first_len = counted_lines(text).next().map_or(0, str::len);
    if first_len > max_bytes {
        return Truncation {
            content: String::new(),
            truncated: true,
            truncated_by: Some("bytes"),
            total_lines,
            total_bytes,
            output_lines: 0,
            output_bytes: 0,
            last_line_partial: false,
            first_line_exceeds_limit: true,
            max_lines,
            max_bytes,
        };
    }
    let mut kept = 0usize;
    let mut end = 0usize; // byte length of the kept prefix
    let mut by = "lines";
    for (i, line) in counted_lines(text).enumerate() {
        if i >= max_lines {
            break;
        }
        let cost = line.len() + usize::from(i > 0);
        if end + cost > max_bytes {
            by = "bytes";
            break;
        }
        end += cost;
        kept += 1;
    }
    if kept >= max_lines && end <= max_bytes {
        by = "lines";
    }
    let content = text[..end].to_string();
    Truncation {
        output_bytes: content.len(),
        content,
        truncated: true,
        truncated_by: Some(by),
        total_lines,
        total_bytes,
        output_lines: kept,
        last_line_partial: false,
        first_line_exceeds_limit: false,
        max_lines,
        max_bytes,
    }
}

/// Keeps the last lines of `text` that fit. If the very last line alone is over the byte cap,
/// its end is kept (cut on a UTF-8 boundary) and `last_line_partial` is set.
pub fn truncate_tail(text: &str, max_lines: usize, max_bytes: usize) -> Truncation {
    let total_lines = count_lines(text);
    let total_bytes = text.len();
    if total_lines <= max_lines && total_bytes <= max_bytes {
        return Truncation::untouched(text, total_lines, max_lines, max_bytes);
    }
    // A final newline ends the last line: the kept lines are those before it.
    let text = text.strip_suffix('\n').unwrap_or(text);
    let mut kept = 0usize;
    let mut start = text.len(); // byte offset where the kept suffix begins
    let mut used = 0usize;
    let mut by = "lines";
    let mut partial = false;
    for line in text.rsplit('\n') {
        if kept >= max_lines {
            break;
        }
        let cost = line.len() + usize::from(kept > 0);
        if used + cost > max_bytes {
            by = "bytes";
            if kept == 0 {
                let mut cut = line.len() - max_bytes;
                while !line.is_char_boundary(cut) {
                    cut += 1;
                }
                let line_start = text.len() - line.len();
                start = line_start + cut;
                used = line.len() - cut;
                kept = 1;
                partial = true;
            }
            break;
        }
        // `line` ends where the previous kept part began (minus its separating newline).
        start -= cost;
        used += cost;
        kept += 1;
    }
    if kept >= max_lines && used <= max_bytes {
        by = "lines";
    }
    let content = text[start..].to_string();
    Truncation {
        output_bytes: content.len(),
        content,
        truncated: true,
        truncated_by: Some(by),
        total_lines,
        total_bytes,
        output_lines: kept,
        last_line_partial: partial,
        first_line_exceeds_limit: false,
        max_lines,
        max_bytes,
    }
}

/// Cuts one line to `max_chars` (counted in UTF-16 units, as pi counts) and appends
/// `... [truncated]`; the flag says whether it was cut.
pub fn truncate_line(line: &str, max_chars: usize) -> (String, bool) {
    let mut units = 0usize;
    for (i, c) in line.char_indices() {
        units += c.len_utf16();
        if units > max_chars {
            return (format!("{}... [truncated]", &line[..i]), true);
        }
    }
    (line.to_string(), false)
}

#[cfg(test)]
#[path = "tests/truncate.rs"]
mod tests;
