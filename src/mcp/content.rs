//! MCP results as model-ready pi content: text and images pass, resource links name
//! `read_mcp_resource`, binary resources go to output files, structured content stands in for
//! missing content, and text over 20 KB keeps its start and end around a
//! `…N chars truncated…` marker with the whole text saved to an output file. Also the names of
//! the resource tools, which that content mentions.

use serde_json::{json, Value};

use crate::agent::ToolOutput;
use crate::ai::{Content, ImageContent};
use crate::tools::truncate::format_size;

/// Text above this many bytes reaches the model with its middle cut out.
const MAX_TEXT_BYTES: usize = 20 * 1024;

pub const LIST_RESOURCES: &str = "list_mcp_resources";
pub const LIST_TEMPLATES: &str = "list_mcp_resource_templates";
pub const READ_RESOURCE: &str = "read_mcp_resource";
pub const RESOURCE_TOOLS: [&str; 3] = [LIST_RESOURCES, LIST_TEMPLATES, READ_RESOURCE];

/// A tool result for the model; `isError` results are error results (keeping their content
/// and the call result for scripts).
pub fn convert_result(
    server: &str,
    tool: &str,
    result: &Value,
    readable_resources: bool,
) -> Result<ToolOutput, String> {
    let blocks = result["content"].as_array().cloned().unwrap_or_default();
    let mut content = if blocks.is_empty() {
        match result.get("structuredContent") {
            Some(s) => vec![Content::text(pretty_json(s))],
            None => Vec::new(),
        }
    } else {
        to_model_content(server, &blocks, readable_resources)
    };
    let is_error = result["isError"].as_bool() == Some(true);
    if is_error && text_of(&content).is_empty() {
        content.push(Content::text(format!(
            "MCP tool {server}/{tool} returned an error"
        )));
    }
    let (content, full_output) = limit_content(content);
    let mut details = json!({"server": server, "tool": tool});
    if let Some(p) = full_output {
        details["fullOutputPath"] = json!(p);
    }
    // pi 1.6.0: programmatic callers (codemode scripts, `tool_result` hooks) get the whole call
    // result less `_meta`, never truncated, error results included.
    let mut script_result = result.clone();
    if let Some(m) = script_result.as_object_mut() {
        m.remove("_meta");
        if !m.contains_key("content") {
            m.insert("content".into(), json!([]));
        }
    }
    Ok(ToolOutput {
        content,
        details: Some(details),
        terminate: false,
        is_error,
        structured_content: Some(script_result),
    })
}

/// `JSON.stringify(value, null, 2)`.
pub fn pretty_json(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

pub fn text_of(content: &[Content]) -> String {
    content
        .iter()
        .filter_map(|c| match c {
            Content::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Model-facing content of a server's content blocks.
pub fn to_model_content(server: &str, blocks: &[Value], readable_resources: bool) -> Vec<Content> {
    blocks
        .iter()
        .map(|b| block_to_content(server, b, readable_resources))
        .collect()
}

fn image(data: &Value, mime: &Value) -> Content {
    Content::Image(ImageContent {
        data: data.as_str().unwrap_or_default().to_string(),
        mime_type: mime.as_str().unwrap_or_default().to_string(),
    })
}

fn block_to_content(server: &str, block: &Value, readable: bool) -> Content {
    let str_of = |v: &Value| v.as_str().unwrap_or_default().to_string();
    match block["type"].as_str().unwrap_or_default() {
        "text" => Content::text(str_of(&block["text"])),
        "image" => image(&block["data"], &block["mimeType"]),
        "audio" => Content::text(format!("[audio {} omitted]", str_of(&block["mimeType"]))),
        "resource_link" => {
            let mut details = Vec::new();
            if let Some(m) = block["mimeType"].as_str().filter(|m| !m.is_empty()) {
                details.push(m.to_string());
            }
            if let Some(size) = block["size"].as_u64() {
                details.push(format_size(size as usize));
            }
            let details = if details.is_empty() {
                String::new()
            } else {
                format!(" ({})", details.join(", "))
            };
            let title = block["title"]
                .as_str()
                .or(block["name"].as_str())
                .unwrap_or_default();
            let description = match block["description"].as_str() {
                Some(d) if !d.is_empty() => format!(": {d}"),
                _ => String::new(),
            };
            let read = if readable {
                format!(". Read it with {} (server \"{server}\")", READ_RESOURCE)
            } else {
                String::new()
            };
            Content::text(format!(
                "[Resource {} \"{title}\"{details}{description}{read}]",
                str_of(&block["uri"])
            ))
        }
        "resource" => resource_to_content(&block["resource"]),
        other => Content::text(format!("[unsupported MCP content {other}]")),
    }
}

/// Embedded resource contents: text, images, text-like blobs as text, other blobs saved.
pub fn resource_to_content(resource: &Value) -> Content {
    let uri = resource["uri"].as_str().unwrap_or_default();
    let mime = resource["mimeType"].as_str();
    if let Some(text) = resource["text"].as_str() {
        return Content::text(text);
    }
    let Some(blob) = resource["blob"].as_str() else {
        return Content::text(format!(
            "[binary resource {uri} ({}) omitted]",
            mime.unwrap_or("unknown type")
        ));
    };
    if mime.is_some_and(|m| m.starts_with("image/")) {
        return image(&resource["blob"], &resource["mimeType"]);
    }
    let data = crate::util::encoding::base64_decode(blob).unwrap_or_default();
    if mime.is_some_and(is_text_mime) {
        return Content::text(String::from_utf8_lossy(&data).into_owned());
    }
    let kind = format!(
        "{}, {}",
        mime.unwrap_or("unknown type"),
        format_size(data.len())
    );
    match crate::util::output_file::write_output_file("pi-mcp", &extension_of(uri), &data) {
        Ok(path) => Content::text(format!(
            "[Binary resource {uri} ({kind}) saved to {}]",
            path.display()
        )),
        Err(e) => Content::text(format!(
            "[Binary resource {uri} ({kind}) could not be saved: {e}]"
        )),
    }
}

/// Blobs of these types are shown as text.
fn is_text_mime(mime: &str) -> bool {
    let t = mime
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    t.starts_with("text/") || t == "application/json" || t.ends_with("+json") || t.ends_with("+xml")
}

/// The extension a URI's path ends in (`.png`), else `.bin`.
fn extension_of(uri: &str) -> String {
    let path = super::url::Url::parse(uri).map_or_else(|| uri.to_string(), |u| u.path);
    let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    if !ext.is_empty()
        && ext.len() <= 8
        && ext.chars().all(|c| c.is_ascii_alphanumeric())
        && !path.ends_with('/')
    {
        format!(".{ext}")
    } else {
        ".bin".into()
    }
}

/// Keeps text within [`MAX_TEXT_BYTES`]: the texts joined, their middle cut out, the whole
/// saved to an output file (whose path is returned). Images stay.
pub fn limit_content(content: Vec<Content>) -> (Vec<Content>, Option<String>) {
    let combined = text_of(&content);
    if combined.len() <= MAX_TEXT_BYTES {
        return (content, None);
    }
    let half = MAX_TEXT_BYTES / 2;
    let mut head_end = half;
    while !combined.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = combined.len() - (MAX_TEXT_BYTES - half);
    while !combined.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let removed = combined[head_end..tail_start].chars().count();
    let lines = combined.split('\n').count() - usize::from(combined.ends_with('\n'));
    let (where_, path) =
        match crate::util::output_file::write_output_file("pi-mcp", ".txt", combined.as_bytes()) {
            Ok(p) => {
                let p = p.display().to_string();
                (
                    format!("\n\n[Full output: {p} (read it with offset/limit)]"),
                    Some(p),
                )
            }
            Err(e) => (format!("\n\n[Could not save the full output: {e}]"), None),
        };
    let text = format!(
        "Warning: truncated output (original token count: {})\nTotal output lines: {lines}\n\n{}…{removed} chars truncated…{}{where_}",
        combined.len().div_ceil(4),
        &combined[..head_end],
        &combined[tail_start..],
    );
    let mut out = vec![Content::text(text)];
    out.extend(
        content
            .into_iter()
            .filter(|c| matches!(c, Content::Image(_))),
    );
    (out, path)
}
