//! MCP tools as pi tools: names (`mcp__<server>__<tool>`, sanitised, hashed when too long or
//! ambiguous), declarations (input schema, description) and calls (progress shown as partial
//! results). `content` makes their results model-ready.

use std::sync::Arc;

use serde_json::{json, Value};

use super::config::Exposure;
use super::connection::ServerConnection;
use super::content::convert_result;
use crate::agent::{Tool, ToolContext, ToolOutput};

const MAX_TOOL_NAME_LENGTH: usize = 64;

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
    /// The server's `outputSchema` for the tool, if it declared one.
    output_schema: Option<Value>,
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
            output_schema: tool.get("outputSchema").filter(|s| s.is_object()).cloned(),
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
    /// Scripts get the call result (pi 1.6.0's `createMcpResultSchema`).
    fn output_schema(&self) -> Option<Value> {
        Some(crate::tools::codemode::schemas::mcp_result(
            self.output_schema.as_ref(),
        ))
    }
    fn namespace(&self) -> Option<crate::agent::ToolNamespace> {
        Some(crate::agent::ToolNamespace {
            name: self.namespace.name.clone(),
            aliases: vec![self.server.clone()],
            description: self.namespace.description.clone(),
            instructions: self.namespace.instructions.clone(),
        })
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

#[cfg(test)]
#[path = "tests/tools.rs"]
mod tests;
