//! An ACP prompt (a list of content blocks) as pi's user input: text and embedded resources
//! become the text (a resource as a `<file>` block, as `@file` arguments are), images stay
//! images, resource links name their file. And the client's `mcpServers` as `mcp.json`
//! entries. Pure.

use serde_json::{json, Map, Value};

use crate::ai::{Content, ImageContent};

use super::wire::RpcError;

/// The text and images of a prompt.
pub fn prompt_input(blocks: &Value) -> Result<(String, Vec<Content>), RpcError> {
    let Some(list) = blocks.as_array() else {
        return Err(RpcError::invalid_params(
            "\"prompt\" must be a list of content blocks",
        ));
    };
    let mut text = String::new();
    let mut images = Vec::new();
    let mut files = String::new();
    for b in list {
        match b["type"].as_str() {
            Some("text") => text.push_str(b["text"].as_str().unwrap_or("")),
            Some("image") => match (b["data"].as_str(), b["mimeType"].as_str()) {
                (Some(data), Some(mime)) => images.push(Content::Image(ImageContent {
                    data: data.into(),
                    mime_type: mime.into(),
                })),
                _ => {
                    return Err(RpcError::invalid_params(
                        "an image block needs \"data\" (base64) and \"mimeType\"",
                    ))
                }
            },
            Some("resource") => {
                let r = &b["resource"];
                let uri = r["uri"].as_str().unwrap_or("");
                let path = uri.strip_prefix("file://").unwrap_or(uri);
                if let Some(t) = r["text"].as_str() {
                    files.push_str(&format!("<file name=\"{path}\">\n{t}\n</file>\n"));
                }
            }
            Some("resource_link") => {
                let uri = b["uri"].as_str().unwrap_or("");
                text.push_str(uri.strip_prefix("file://").unwrap_or(uri));
            }
            Some("audio") => {
                return Err(RpcError::invalid_params(
                    "audio prompts are not supported (initialize says so)",
                ))
            }
            other => {
                return Err(RpcError::invalid_params(format!(
                    "unknown content block type {}",
                    other.map_or("(missing)".to_string(), |t| format!("\"{t}\""))
                )))
            }
        }
    }
    Ok((files + &text, images))
}

fn pairs(list: &Value) -> Map<String, Value> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| Some((p["name"].as_str()?.to_string(), p["value"].clone())))
        .collect()
}

/// The client's `mcpServers` as `mcp.json` server entries (name, entry).
pub fn mcp_servers(list: &Value) -> Result<Vec<(String, Value)>, RpcError> {
    let Some(list) = list.as_array() else {
        return Ok(Vec::new());
    };
    list.iter()
        .map(|s| {
            let name = s["name"]
                .as_str()
                .ok_or_else(|| RpcError::invalid_params("each MCP server needs a \"name\""))?;
            let entry = match s["type"].as_str() {
                Some(kind @ ("http" | "sse")) => json!({
                    "type": if kind == "sse" { "sse" } else { "http" },
                    "url": s["url"], "headers": pairs(&s["headers"])}),
                _ => json!({"command": s["command"], "args": s["args"].as_array().cloned().unwrap_or_default(),
                    "env": pairs(&s["env"])}),
            };
            Ok((name.to_string(), entry))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_blocks_become_text_and_images() {
        let (text, images) = prompt_input(&json!([
            {"type": "text", "text": "explain "},
            {"type": "resource_link", "uri": "file:///p/a.rs", "name": "a.rs"},
            {"type": "resource", "resource": {"uri": "file:///p/b.rs", "text": "fn b() {}"}},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"}
        ]))
        .unwrap();
        assert_eq!(
            text,
            "<file name=\"/p/b.rs\">\nfn b() {}\n</file>\nexplain /p/a.rs"
        );
        assert_eq!(images.len(), 1);
        assert_eq!(
            prompt_input(&json!({"x": 1})).unwrap_err().code,
            super::super::wire::INVALID_PARAMS
        );
        assert!(prompt_input(&json!([{"type": "video"}])).is_err());
    }

    #[test]
    fn client_mcp_servers_become_mcp_json_entries() {
        let servers = mcp_servers(&json!([
            {"name": "fs", "command": "/bin/srv", "args": ["-x"], "env": [{"name": "A", "value": "1"}]},
            {"type": "http", "name": "web", "url": "http://127.0.0.1:9/mcp", "headers": []}
        ]))
        .unwrap();
        assert_eq!(
            servers[0],
            (
                "fs".into(),
                json!({"command": "/bin/srv", "args": ["-x"], "env": {"A": "1"}})
            )
        );
        assert_eq!(
            servers[1],
            (
                "web".into(),
                json!({"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {}})
            )
        );
    }
}
