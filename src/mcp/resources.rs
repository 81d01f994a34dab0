//! MCP resources through the tools Codex and OpenCode use, so models trained on them work
//! unchanged: `list_mcp_resources`, `list_mcp_resource_templates` and `read_mcp_resource`. They
//! take a `server` argument and reach every connected server with resources. Listings are
//! JSON (`{server?, resources: [{server, …}], nextCursor?}`): one page of one server, or every
//! page of every server. MCP App resources (`ui://`, `profile=mcp-app`) and icons are left out.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::client::RequestOptions;
use super::connection::ServerConnection;
use super::content::{limit_content, resource_to_content, text_of};
pub use super::content::{LIST_RESOURCES, LIST_TEMPLATES, READ_RESOURCE, RESOURCE_TOOLS};
use super::rpc::{McpError, METHOD_NOT_FOUND};
use crate::agent::{Tool, ToolContext, ToolOutput};
use crate::ai::{Abort, Content};
use crate::util::sort;

/// The servers the tools reach, once the servers still connecting have settled.
pub type ServersFn = Arc<dyn Fn(&Abort) -> Vec<Arc<ServerConnection>> + Send + Sync>;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Resources,
    Templates,
    Read,
}

pub struct ResourceTool {
    kind: Kind,
    servers: ServersFn,
}

/// The three tools.
pub fn resource_tools(servers: ServersFn) -> Vec<Arc<dyn Tool>> {
    [Kind::Resources, Kind::Templates, Kind::Read]
        .into_iter()
        .map(|kind| {
            Arc::new(ResourceTool {
                kind,
                servers: Arc::clone(&servers),
            }) as Arc<dyn Tool>
        })
        .collect()
}

fn string_arg(params: &Value, key: &str) -> Result<Option<String>, String> {
    match params.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.trim().to_string()).filter(|s| !s.is_empty())),
        Some(_) => Err(format!("{key} must be a string")),
    }
}

/// MCP App user interfaces, which only hosts that render them can use.
fn is_app_resource(item: &Value) -> bool {
    let uri = item["uri"]
        .as_str()
        .or(item["uriTemplate"].as_str())
        .unwrap_or("");
    let mime = item["mimeType"].as_str().unwrap_or("").to_ascii_lowercase();
    let app_profile = mime.split(';').skip(1).any(|p| {
        p.split_once('=')
            .is_some_and(|(k, v)| k.trim() == "profile" && v.trim().trim_matches('"') == "mcp-app")
    });
    uri.starts_with("ui://") || app_profile
}

/// A listed item without `_meta` and icons, tagged with its server first.
fn listed(server: &str, item: &Value) -> Value {
    let mut out = Map::new();
    out.insert("server".into(), json!(server));
    if let Some(m) = item.as_object() {
        for (k, v) in m {
            if k != "_meta" && k != "icons" && k != "server" {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(out)
}

fn find<'a>(
    servers: &'a [Arc<ServerConnection>],
    name: &str,
) -> Result<&'a Arc<ServerConnection>, String> {
    servers.iter().find(|s| s.name == name).ok_or_else(|| {
        let available: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        if available.is_empty() {
            format!("MCP server \"{name}\" has no resources")
        } else {
            format!(
                "MCP server \"{name}\" has no resources. Servers with resources: {}",
                available.join(", ")
            )
        }
    })
}

impl ResourceTool {
    fn method_and_key(&self) -> (&'static str, &'static str) {
        match self.kind {
            Kind::Templates => ("resources/templates/list", "resourceTemplates"),
            _ => ("resources/list", "resources"),
        }
    }

    /// One page, treating a server without templates as having none.
    fn page(
        &self,
        server: &ServerConnection,
        cursor: Option<&str>,
        abort: &Abort,
    ) -> Result<(Vec<Value>, Option<String>), String> {
        let (method, key) = self.method_and_key();
        let timeout = server.timeout();
        server.with_client(abort, true, |c| {
            match c.list_page(
                method,
                key,
                cursor,
                RequestOptions::new(timeout, Some(abort)),
            ) {
                Err(McpError::Rpc { code, .. })
                    if code == METHOD_NOT_FOUND && self.kind == Kind::Templates =>
                {
                    Ok((Vec::new(), None))
                }
                other => other,
            }
        })
    }

    fn all(&self, server: &ServerConnection, abort: &Abort) -> Result<Vec<Value>, String> {
        let (method, key) = self.method_and_key();
        let timeout = server.timeout();
        server.with_client(abort, true, |c| {
            match c.list_all(method, key, RequestOptions::new(timeout, Some(abort))) {
                Err(McpError::Rpc { code, .. })
                    if code == METHOD_NOT_FOUND && self.kind == Kind::Templates =>
                {
                    Ok(Vec::new())
                }
                other => other,
            }
        })
    }

    fn list(&self, params: &Value, abort: &Abort) -> Result<(Value, Option<String>), String> {
        let (_, key) = self.method_and_key();
        let server_name = string_arg(params, "server")?;
        let cursor = string_arg(params, "cursor")?;
        let servers = (self.servers)(abort);
        if let Some(name) = &server_name {
            let server = find(&servers, name)?;
            let (items, next) = self.page(server, cursor.as_deref(), abort)?;
            let items: Vec<Value> = items
                .iter()
                .filter(|i| !is_app_resource(i))
                .map(|i| listed(name, i))
                .collect();
            let mut payload = json!({"server": name, key: items});
            if let Some(n) = next {
                payload["nextCursor"] = json!(n);
            }
            return Ok((payload, server_name));
        }
        if cursor.is_some() {
            return Err("cursor can only be used when a server is specified".into());
        }
        let mut sorted = servers;
        sort::sort_by(&mut sorted, |a, b| a.name.cmp(&b.name));
        // Every server at once, as pi lists them: one slow server does not add to the others.
        let results: Vec<Result<Vec<Value>, String>> = std::thread::scope(|scope| {
            let handles: Vec<_> = sorted
                .iter()
                .map(|s| scope.spawn(|| self.all(s, abort)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err("listing failed".into())))
                .collect()
        });
        let mut items = Vec::new();
        let mut errors = Vec::new();
        for (server, result) in sorted.iter().zip(results) {
            match result {
                Ok(list) => items.extend(
                    list.iter()
                        .filter(|i| !is_app_resource(i))
                        .map(|i| listed(&server.name, i)),
                ),
                Err(e) => errors.push(json!({"server": server.name, "error": e})),
            }
        }
        let mut payload = json!({ key: items });
        if !errors.is_empty() {
            payload["errors"] = json!(errors);
        }
        Ok((payload, None))
    }

    fn read(&self, params: &Value, abort: &Abort) -> Result<ToolOutput, String> {
        let server_name = string_arg(params, "server")?.ok_or("server must be provided")?;
        let uri = string_arg(params, "uri")?.ok_or("uri must be provided")?;
        let servers = (self.servers)(abort);
        let server = find(&servers, &server_name)?;
        let timeout = server.timeout();
        let result = server.with_client(abort, true, |c| {
            c.read_resource(&uri, RequestOptions::new(timeout, Some(abort)))
        })?;
        let contents = result["contents"].as_array().cloned().unwrap_or_default();
        let mut content = Vec::new();
        for c in &contents {
            if contents.len() > 1 {
                // Several contents (a directory, say) are labelled with their URIs.
                content.push(Content::text(format!(
                    "{}:",
                    c["uri"].as_str().unwrap_or_default()
                )));
            }
            content.push(resource_to_content(c));
        }
        if content.is_empty() {
            content.push(Content::text(format!("Resource {uri} is empty.")));
        }
        let (content, full) = limit_content(content);
        let mut details = json!({"server": server.name, "tool": READ_RESOURCE});
        if let Some(p) = full {
            details["fullOutputPath"] = json!(p);
        }
        Ok(ToolOutput {
            content,
            details: Some(details),
            terminate: false,
            is_error: false,
            structured_content: None,
        })
    }
}

fn json_result(tool: &str, server: Option<String>, payload: &Value) -> ToolOutput {
    let (content, full) = limit_content(vec![Content::text(payload.to_string())]);
    let mut details = json!({"server": server.unwrap_or_default(), "tool": tool});
    if let Some(p) = full {
        details["fullOutputPath"] = json!(p);
    }
    ToolOutput {
        content,
        details: Some(details),
        terminate: false,
        is_error: false,
        structured_content: None,
    }
}

const SERVER_FILTER: &str = "MCP server name. Omit to list every server with resources.";
const CURSOR: &str =
    "Opaque cursor from a previous call with the same server; omit for the first page.";

impl Tool for ResourceTool {
    fn name(&self) -> &str {
        match self.kind {
            Kind::Resources => LIST_RESOURCES,
            Kind::Templates => LIST_TEMPLATES,
            Kind::Read => READ_RESOURCE,
        }
    }

    fn description(&self) -> &str {
        match self.kind {
            Kind::Resources => "Lists resources provided by MCP servers. Resources allow servers to share data that provides context to language models, such as files, database schemas, or application-specific information. Prefer resources over web search when possible.",
            Kind::Templates => "Lists resource templates provided by MCP servers. Parameterized resource templates allow servers to share data that takes parameters and provides context to language models, such as files, database schemas, or application-specific information. Prefer resource templates over web search when possible.",
            Kind::Read => "Read a specific resource from an MCP server given the server name and resource URI.",
        }
    }

    fn parameters(&self) -> Value {
        match self.kind {
            Kind::Read => json!({
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": "MCP server name exactly as configured. Must match the 'server' field returned by list_mcp_resources."},
                    "uri": {"type": "string", "description": "Resource URI to read. Must be one of the URIs returned by list_mcp_resources."}
                },
                "required": ["server", "uri"],
                "additionalProperties": false
            }),
            _ => json!({
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": SERVER_FILTER},
                    "cursor": {"type": "string", "description": CURSOR}
                },
                "additionalProperties": false
            }),
        }
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
        if self.kind == Kind::Read {
            return self.read(&args, &ctx.abort);
        }
        let (payload, server) = self.list(&args, &ctx.abort)?;
        let out = json_result(self.name(), server, &payload);
        debug_assert!(!text_of(&out.content).is_empty());
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn app_resources_are_recognised() {
        assert!(is_app_resource(&json!({"uri": "ui://widget"})));
        assert!(is_app_resource(
            &json!({"uri": "x://a", "mimeType": "text/html; profile=\"mcp-app\""})
        ));
        assert!(is_app_resource(
            &json!({"uriTemplate": "x://{a}", "mimeType": "text/html;PROFILE=mcp-app"})
        ));
        assert!(!is_app_resource(
            &json!({"uri": "file:///a", "mimeType": "text/html"})
        ));
    }

    #[test]
    fn listed_items_drop_meta_and_icons_and_name_their_server_first() {
        let item = json!({"uri": "u", "name": "n", "_meta": {}, "icons": [], "size": 3});
        let out = listed("s", &item);
        assert_eq!(
            out.to_string(),
            r#"{"server":"s","uri":"u","name":"n","size":3}"#
        );
    }

    #[test]
    fn string_arguments() {
        assert_eq!(
            string_arg(&json!({"server": "  a "}), "server")
                .unwrap()
                .as_deref(),
            Some("a")
        );
        assert_eq!(string_arg(&json!({"server": " "}), "server").unwrap(), None);
        assert_eq!(
            string_arg(&json!({"server": 1}), "server").unwrap_err(),
            "server must be a string"
        );
    }
}
