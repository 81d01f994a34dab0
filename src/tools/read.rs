//! `read`: a slice of a text file (from `offset`, at most `limit` lines) cut to 2000 lines or
//! 50 KB with pi's continuation notices, or an image (sniffed by magic bytes) as an image
//! block. Text is streamed, so a huge file costs one pass and only the shown lines in memory.
//! Binary files are refused rather than dumped as mojibake.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use serde_json::{json, Value};

use super::path::{node_error, num_arg, resolve_read_path, str_arg};
use super::truncate::{format_size, Truncation, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES};
use crate::agent::tool::{Tool, ToolContext, ToolOutput};
use crate::ai::image::sniff_image;
use crate::ai::{Content, ImageContent};
use crate::util::encoding::base64_encode;

pub struct ReadTool;

const DESCRIPTION: &str =
    "Read a file. Text files and images (jpg, png, gif, webp) are supported; \
images come back as attachments. Text output stops at 2000 lines or 50KB, whichever comes first; \
use offset and limit to page through larger files, continuing with offset until you have read \
all you need.";

const GUIDELINES: &[&str] = &["Use read to look at files rather than cat or sed."];

/// Largest base64 image we attach; pi shrinks bigger ones, we do not resize.
const MAX_IMAGE_BASE64: usize = 4_718_592; // 4.5 MB
const SNIFF_BYTES: usize = 8192;

impl Tool for ReadTool {
    /// What a codemode script's call resolves to (pi 1.6.0's output schema).
    fn output_schema(&self) -> Option<Value> {
        Some(super::codemode::schemas::read_output())
    }
    fn name(&self) -> &str {
        "read"
    }
    fn description(&self) -> &str {
        DESCRIPTION
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File to read, relative to the working directory or absolute"},
                "offset": {"type": "number", "description": "First line to return (1-based)"},
                "limit": {"type": "number", "description": "Most lines to return"}
            },
            "required": ["path"]
        })
    }
    fn prompt_snippet(&self) -> &str {
        "Read file contents"
    }
    fn prompt_guidelines(&self) -> &[&str] {
        GUIDELINES
    }
    fn execute(
        &self,
        _call_id: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, String> {
        self.read(args, ctx).map(with_structured_content)
    }
}

/// pi 1.6.0's `structuredContent` of a read: the text, or for an image
/// `{type: "image", data, mimeType, note}` with the text that goes with it.
fn with_structured_content(mut out: ToolOutput) -> ToolOutput {
    let text = out
        .content
        .iter()
        .find_map(|c| match c {
            Content::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .unwrap_or_default();
    let image = out.content.iter().find_map(|c| match c {
        Content::Image(i) => Some(i),
        _ => None,
    });
    out.structured_content = Some(match image {
        Some(i) => {
            serde_json::json!({"type": "image", "data": i.data, "mimeType": i.mime_type, "note": text})
        }
        None => Value::String(text),
    });
    out
}

impl ReadTool {
    fn read(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, String> {
        let path = str_arg("read", &args, "path")?;
        let offset = num_arg("read", &args, "offset")?;
        let limit = num_arg("read", &args, "limit")?;
        if ctx.abort.is_aborted() {
            return Err("Operation aborted".into());
        }
        let abs = resolve_read_path(path, &ctx.cwd);
        super::path::access(&abs, libc::R_OK).map_err(|e| node_error(&e, "access", &abs))?;
        super::path::refuse_special_file(&abs, path, "read")?;
        // In an editor that offers its buffers, a text file is read as the editor has it.
        if let Some(editor) = super::editor_files::current().filter(|_| !is_image_path(&abs)) {
            if let Some(text) = editor.read(&abs) {
                let text = text.map_err(|e| format!("Cannot read {path}: {e}"))?;
                return read_text(
                    Vec::new(),
                    std::io::Cursor::new(text),
                    path,
                    offset,
                    limit,
                    ctx,
                );
            }
        }
        let mut file = File::open(&abs).map_err(|e| node_error(&e, "open", &abs))?;
        let mut head = Vec::with_capacity(SNIFF_BYTES);
        (&mut file)
            .take(SNIFF_BYTES as u64)
            .read_to_end(&mut head)
            .map_err(|e| read_error(&e, &abs))?;
        if let Some(mime) = sniff_image(&head) {
            return read_image(file, head, mime, &abs);
        }
        if looks_binary(&head) {
            return Err(format!(
                "Cannot read {path}: it looks like a binary file (not UTF-8 text or a supported image). \
                 Use bash to inspect it instead, e.g. `file {path}` or `xxd {path} | head`."
            ));
        }
        read_text(head, file, path, offset, limit, ctx)
    }
}

/// A path whose name says it is an image (read from the disk, never through an editor).
fn is_image_path(path: &Path) -> bool {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    matches!(
        ext.as_str(),
        "png" | "jpg" | "jpeg" | "gif" | "webp" | "bmp"
    )
}

/// Node words a failed `read` on a directory without the path.
fn read_error(e: &std::io::Error, abs: &Path) -> String {
    if e.raw_os_error() == Some(libc::EISDIR) {
        "EISDIR: illegal operation on a directory, read".to_string()
    } else {
        node_error(e, "read", abs)
    }
}

/// NUL bytes or invalid UTF-8 in the sniffed prefix (a character cut by the prefix's end is fine).
fn looks_binary(head: &[u8]) -> bool {
    if head.contains(&0) {
        return true;
    }
    match std::str::from_utf8(head) {
        Ok(_) => false,
        Err(e) => e.error_len().is_some(),
    }
}

fn read_image(
    mut file: File,
    mut data: Vec<u8>,
    mime: &str,
    abs: &Path,
) -> Result<ToolOutput, String> {
    file.read_to_end(&mut data)
        .map_err(|e| read_error(&e, abs))?;
    let b64 = base64_encode(&data);
    if b64.len() > MAX_IMAGE_BASE64 {
        return Ok(ToolOutput::text(format!(
            "Read image file [{mime}]\n[Image omitted: could not be resized below the inline image size limit.]"
        )));
    }
    Ok(ToolOutput {
        content: vec![
            Content::text(format!("Read image file [{mime}]")),
            Content::Image(ImageContent {
                data: b64,
                mime_type: mime.to_string(),
            }),
        ],
        details: None,
        terminate: false,
        is_error: false,
        structured_content: None,
    })
}

/// Formats a JSON number the way JavaScript prints it in a template string.
fn js_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e21 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// Head truncation of the selected lines, computed while streaming.
struct Scan {
    start: usize,
    /// Exclusive end of the selection (line index), `usize::MAX` for "to the end".
    end: usize,
    max_lines: usize,
    max_bytes: usize,
    line: usize,
    /// Bytes of the current line seen so far (stored in `cur` only while it may be kept).
    cur_len: usize,
    cur: Vec<u8>,
    kept: Vec<String>,
    kept_bytes: usize,
    collecting: bool,
    by: &'static str,
    sel_lines: usize,
    sel_bytes: usize,
    first_len: usize,
    /// The last selected line was empty (a final newline ends a line, it does not count one).
    last_empty: bool,
}

impl Scan {
    fn in_selection(&self) -> bool {
        self.line >= self.start && self.line < self.end
    }
    fn feed(&mut self, part: &[u8]) {
        if self.in_selection() {
            self.cur_len += part.len();
            if self.collecting && self.cur.len() <= self.max_bytes {
                self.cur.extend_from_slice(part);
            }
        }
    }
    fn end_line(&mut self) {
        if self.in_selection() {
            let i = self.sel_lines;
            let text = String::from_utf8_lossy(&self.cur);
            // Decoded length for kept lines (invalid bytes become U+FFFD, as pi decodes).
            let len = if self.cur.len() == self.cur_len {
                text.len()
            } else {
                self.cur_len
            };
            if i == 0 {
                self.first_len = len;
            }
            self.sel_lines += 1;
            self.sel_bytes += len + usize::from(i > 0);
            self.last_empty = len == 0;
            if self.collecting {
                let cost = len + usize::from(i > 0);
                if i >= self.max_lines {
                    self.collecting = false;
                } else if self.kept_bytes + cost > self.max_bytes {
                    self.collecting = false;
                    self.by = "bytes";
                } else {
                    self.kept.push(text.into_owned());
                    self.kept_bytes += cost;
                }
            }
        }
        self.cur.clear();
        self.cur_len = 0;
        self.line += 1;
    }
    fn truncation(self) -> Truncation {
        let (ml, mb) = (self.max_lines, self.max_bytes);
        // Lines as pi 1.x counts them: none for an empty selection, and an empty last line
        // is only the end of the one before.
        let counted = if self.sel_bytes == 0 {
            0
        } else {
            self.sel_lines - usize::from(self.last_empty)
        };
        if counted <= ml && self.sel_bytes <= mb {
            let mut content = self.kept.join("\n");
            if self.kept.len() < self.sel_lines {
                // Only the final empty line can be left out here (one past the line cap).
                content.push('\n');
            }
            return Truncation::untouched(&content, counted, ml, mb);
        }
        let mut t = Truncation {
            content: String::new(),
            truncated: true,
            truncated_by: Some("bytes"),
            total_lines: counted,
            total_bytes: self.sel_bytes,
            output_lines: 0,
            output_bytes: 0,
            last_line_partial: false,
            first_line_exceeds_limit: false,
            max_lines: ml,
            max_bytes: mb,
        };
        if self.first_len > mb {
            t.first_line_exceeds_limit = true;
            return t;
        }
        let by = if self.kept.len() >= ml && self.kept_bytes <= mb {
            "lines"
        } else {
            self.by
        };
        t.truncated_by = Some(by);
        t.output_lines = self.kept.len();
        t.content = self.kept.join("\n");
        t.output_bytes = t.content.len();
        t
    }
}

fn read_text(
    head: Vec<u8>,
    mut file: impl Read,
    path: &str,
    offset: Option<f64>,
    limit: Option<f64>,
    ctx: &ToolContext,
) -> Result<ToolOutput, String> {
    // pi treats a missing or zero offset as the first line.
    let start = match offset {
        Some(o) if o >= 1.0 => (o - 1.0) as usize,
        _ => 0,
    };
    let limit = limit.map(|l| if l > 0.0 { l as usize } else { 0 });
    let mut scan = Scan {
        start,
        end: limit.map_or(usize::MAX, |l| start.saturating_add(l)),
        max_lines: DEFAULT_MAX_LINES,
        max_bytes: DEFAULT_MAX_BYTES,
        line: 0,
        cur_len: 0,
        cur: Vec::new(),
        kept: Vec::new(),
        kept_bytes: 0,
        collecting: true,
        by: "lines",
        sel_lines: 0,
        sel_bytes: 0,
        first_len: 0,
        last_empty: false,
    };
    let mut buf = head;
    let mut chunk = vec![0u8; 256 * 1024];
    loop {
        let mut rest = &buf[..];
        while let Some(i) = rest.iter().position(|&b| b == b'\n') {
            scan.feed(&rest[..i]);
            scan.end_line();
            rest = &rest[i + 1..];
        }
        scan.feed(rest);
        if ctx.abort.is_aborted() {
            return Err("Operation aborted".into());
        }
        let n = file.read(&mut chunk).map_err(|e| format!("{path}: {e}"))?;
        if n == 0 {
            break;
        }
        buf.clear();
        buf.extend_from_slice(&chunk[..n]);
    }
    scan.end_line(); // the last line (empty when the file ends with a newline)
    let total = scan.line;
    if start >= total {
        return Err(format!(
            "Offset {} is beyond end of file ({total} lines total)",
            js_number(offset.unwrap_or(0.0))
        ));
    }
    let first_len = scan.first_len;
    let t = scan.truncation();
    let first = start + 1;
    let max = format_size(DEFAULT_MAX_BYTES);
    let text = if t.first_line_exceeds_limit {
        format!(
            "[Line {first} is {}, exceeds {max} limit. Use bash: sed -n '{first}p' {path} | head -c {DEFAULT_MAX_BYTES}]",
            format_size(first_len)
        )
    } else if t.truncated {
        let last = first + t.output_lines - 1;
        let range = format!("Showing lines {first}-{last} of {total}");
        if t.truncated_by == Some("lines") {
            format!(
                "{}\n\n[{range}. Use offset={} to continue.]",
                t.content,
                last + 1
            )
        } else {
            format!(
                "{}\n\n[{range} ({max} limit). Use offset={} to continue.]",
                t.content,
                last + 1
            )
        }
    } else if let Some(l) = limit.filter(|&l| start.saturating_add(l) < total) {
        let shown_end = start + l;
        format!(
            "{}\n\n[{} more lines in file. Use offset={} to continue.]",
            t.content,
            total - shown_end,
            shown_end + 1
        )
    } else {
        t.content.clone()
    };
    let mut out = ToolOutput::text(text);
    if t.truncated {
        out.details = Some(json!({ "truncation": t }));
    }
    Ok(out)
}

#[cfg(test)]
#[path = "tests/read.rs"]
pub(crate) mod tests;
