//! Output truncation shared by the tools (minimal stand-in; the full module lands separately).

pub const DEFAULT_MAX_LINES: usize = 2000;
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;

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

/// Keeps the last `max_lines` lines / `max_bytes` bytes; a single oversized last line is cut
/// from its end on a char boundary.
pub fn truncate_tail(text: &str, max_lines: usize, max_bytes: usize) -> Truncation {
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
    let mut kept: Vec<String> = Vec::new();
    let mut bytes = 0;
    let mut by = "lines";
    for line in lines.iter().rev() {
        if kept.len() >= max_lines {
            break;
        }
        let add = line.len() + usize::from(!kept.is_empty());
        if bytes + add > max_bytes {
            by = "bytes";
            if kept.is_empty() {
                let mut start = line.len() - max_bytes;
                while !line.is_char_boundary(start) {
                    start += 1;
                }
                kept.push(line[start..].to_string());
                t.last_line_partial = true;
            }
            break;
        }
        kept.push(line.to_string());
        bytes += add;
    }
    kept.reverse();
    t.content = kept.join("\n");
    t.truncated = true;
    t.truncated_by = Some(by);
    t.output_lines = kept.len();
    t.output_bytes = t.content.len();
    t
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
