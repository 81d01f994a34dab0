//! Placeholder for the shared truncation helpers (the real module is written elsewhere and
//! replaces this one at merge; only its API is relied upon here).

pub const DEFAULT_MAX_LINES: usize = 2000;
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;
pub const GREP_MAX_LINE_LENGTH: usize = 500;

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Truncation {
    pub content: String,
    pub truncated: bool,
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

pub fn truncate_head(text: &str, max_lines: usize, max_bytes: usize) -> Truncation {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut t = Truncation {
        content: text.to_string(),
        truncated: false,
        truncated_by: None,
        total_lines: lines.len(),
        total_bytes: text.len(),
        output_lines: lines.len(),
        output_bytes: text.len(),
        last_line_partial: false,
        first_line_exceeds_limit: false,
        max_lines,
        max_bytes,
    };
    if lines.len() <= max_lines && text.len() <= max_bytes {
        return t;
    }
    t.truncated = true;
    if lines[0].len() > max_bytes {
        t.content.clear();
        t.truncated_by = Some("bytes");
        t.output_lines = 0;
        t.output_bytes = 0;
        t.first_line_exceeds_limit = true;
        return t;
    }
    let mut used = 0;
    let mut n = 0;
    let mut by = "lines";
    for (i, line) in lines.iter().enumerate().take(max_lines) {
        let add = line.len() + usize::from(i > 0);
        if used + add > max_bytes {
            by = "bytes";
            break;
        }
        used += add;
        n += 1;
    }
    if n >= max_lines && used <= max_bytes {
        by = "lines";
    }
    t.content = lines[..n].join("\n");
    t.truncated_by = Some(by);
    t.output_lines = n;
    t.output_bytes = t.content.len();
    t
}

pub fn truncate_line(line: &str, max_chars: usize) -> (String, bool) {
    match line.char_indices().nth(max_chars) {
        None => (line.to_string(), false),
        Some((cut, _)) => (format!("{}... [truncated]", &line[..cut]), true),
    }
}

pub fn format_size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes}B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1}KB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1}MB", bytes as f64 / (1024.0 * 1024.0))
    }
}
