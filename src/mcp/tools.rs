//! MCP tools as pi tools: names (`mcp__<server>__<tool>`, sanitised, hashed when too long or
//! ambiguous), declarations (input schema, description), calls (progress shown as partial
//! results) and results made model-ready: text and images pass, resource links name
//! `read_mcp_resource`, binary resources go to output files, structured content stands in for
//! missing content, and text over 20 KB keeps its start and end around a
//! `…N chars truncated…` marker with the whole text saved to an output file.

use std::sync::Arc;

use serde_json::{json, Value};

use super::config::Exposure;
use super::connection::ServerConnection;
use crate::agent::{Tool, ToolContext, ToolOutput};
use crate::ai::{Content, ImageContent};
use crate::tools::truncate::format_size;

const MAX_TOOL_NAME_LENGTH: usize = 64;
/// Text above this many bytes reaches the model with its middle cut out.
const MAX_TEXT_BYTES: usize = 20 * 1024;

/// `mcp__<server>__<tool>` with everything but letters, digits and `_` replaced by `_`; when it
/// is too long or `taken`, its start plus `_` and 8 hex digits of SHA-256(`server\0tool`).
pub fn tool_name(server: &str, tool: &str, taken: &dyn Fn(&str) -> bool) -> String {
    let name: String = format!("mcp__{server}__{tool}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.len() <= MAX_TOOL_NAME_LENGTH && !taken(&name) {
        return name;
    }
    let digest = ring::digest::digest(
        &ring::digest::SHA256,
        format!("{server}\0{tool}").as_bytes(),
    );
    let hash = crate::util::encoding::hex(&digest.as_ref()[..4]);
    let keep = name.len().min(MAX_TOOL_NAME_LENGTH - hash.len() - 1);
    format!("{}_{hash}", &name[..keep])
}

/// The input schema as a tool declaration: an object schema with `properties`.
pub fn normalize_schema(schema: &Value) -> Value {
    let mut s = schema.as_object().cloned().unwrap_or_default();
    s.entry("type").or_insert_with(|| json!("object"));
    s.entry("properties").or_insert_with(|| json!({}));
    Value::Object(s)
}

/// What `tool_search` reads about a tool's server.
#[derive(Debug, Clone, Default)]
pub struct Namespace {
    pub name: String,
    pub description: Option<String>,
    pub instructions: Option<String>,
}

/// One server tool, callable by the model.
pub struct McpTool {
    pub name: String,
    pub server: String,
    /// The server's own name for it.
    pub tool: String,
    description: String,
    parameters: Value,
    pub exposure: Exposure,
    pub namespace: Namespace,
    /// The server's behaviour hints (`readOnlyHint`, `destructiveHint`, `idempotentHint`,
    /// `openWorldHint`), for permission extensions.
    pub annotations: Value,
    conn: Arc<ServerConnection>,
}

impl McpTool {
    pub fn new(
        name: String,
        conn: &Arc<ServerConnection>,
        tool: &Value,
        exposure: Exposure,
        namespace: Namespace,
    ) -> McpTool {
        let tool_name = tool["name"].as_str().unwrap_or_default().to_string();
        let title = tool["title"]
            .as_str()
            .or_else(|| tool["annotations"]["title"].as_str());
        let description = match tool["description"].as_str().map(str::trim) {
            Some(d) if !d.is_empty() => d.to_string(),
            _ => title
                .map(str::to_string)
                .unwrap_or_else(|| format!("MCP tool {tool_name} from server {}", conn.name)),
        };
        let mut annotations = serde_json::Map::new();
        for hint in [
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        ] {
            if let Some(b) = tool["annotations"][hint].as_bool() {
                annotations.insert(hint.into(), Value::Bool(b));
            }
        }
        McpTool {
            name,
            server: conn.name.clone(),
            tool: tool_name,
            description,
            parameters: normalize_schema(&tool["inputSchema"]),
            exposure,
            namespace,
            annotations: Value::Object(annotations),
            conn: Arc::clone(conn),
        }
    }

    /// What extensions' `getAllTools` reports of it.
    pub fn info(&self) -> Value {
        let mut info = json!({
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
        });
        if self.annotations.as_object().is_some_and(|a| !a.is_empty()) {
            info["annotations"] = self.annotations.clone();
        }
        info
    }
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn parameters(&self) -> Value {
        self.parameters.clone()
    }
    fn prompt_snippet(&self) -> &str {
        ""
    }

    fn execute(
        &self,
        _call_id: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, String> {
        let details = json!({"server": self.server, "tool": self.tool});
        let on_progress = |p: &Value| {
            let text = match p.get("message").and_then(Value::as_str) {
                Some(m) => m.to_string(),
                None => {
                    let total = p.get("total").map(|t| format!("/{t}")).unwrap_or_default();
                    format!("Progress {}{total}", p["progress"])
                }
            };
            (ctx.on_update)(ToolOutput::text(text).with_details(details.clone()));
        };
        let args = if args.is_object() { args } else { json!({}) };
        let result = self
            .conn
            .call_tool(&self.tool, args, &ctx.abort, &on_progress)?;
        let readable = self.conn.has_resources() && self.conn.config.exposure() != Exposure::Hidden;
        convert_result(&self.server, &self.tool, &result, readable)
    }
}

/// A tool result for the model. `isError` results become errors (with their text).
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
    if is_error {
        return Err(text_of(&content));
    }
    let mut details = json!({"server": server, "tool": tool});
    if let Some(p) = full_output {
        details["fullOutputPath"] = json!(p);
    }
    Ok(ToolOutput {
        content,
        details: Some(details),
        terminate: false,
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
                format!(
                    ". Read it with {} (server \"{server}\")",
                    super::resources::READ_RESOURCE
                )
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

#[cfg(test)]
#[path = "tests/tools.rs"]
mod tests;
