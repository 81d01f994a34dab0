//! Changing an `mcp.json` the way pi does: only the `mcpServers` entry in question changes;
//! every other key (and its order) stays, and the file keeps its indentation. The file is
//! replaced atomically and durably (`util::atomic`), and a symlinked `mcp.json` stays a link.

use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};

use super::config::{is_override, parse_document, Exposure};

/// Reads `path` (an empty document when missing), lets `edit` change it, and writes it back
/// when `edit` returns true.
fn edit_servers(
    path: &Path,
    edit: impl FnOnce(&mut Map<String, Value>) -> Result<bool, String>,
) -> Result<(), String> {
    let text =
        match crate::util::files::read_limited_string(path, crate::util::files::Limit::CONFIG) {
            Ok(t) => Some(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e.to_string()),
        };
    let mut doc = match &text {
        Some(t) => match parse_document(t).map_err(|e| {
            if e.starts_with("expected an object") {
                format!("{}: {e}", path.display())
            } else {
                e
            }
        })? {
            Value::Object(m) => m,
            _ => unreachable!("parse_document only returns objects"),
        },
        None => Map::new(),
    };
    if !edit(&mut doc)? {
        return Ok(());
    }
    let indent = text.as_deref().and_then(detect_indent).unwrap_or("  ");
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    Value::Object(doc)
        .serialize(&mut ser)
        .map_err(|e| e.to_string())?;
    out.push(b'\n');
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    }
    // mcp.json may hold credentials in headers: it is worth a durable write.
    crate::util::atomic::replace(path, &out, crate::util::atomic::Options::durable())
        .map_err(|e| e.to_string())
}

/// The whitespace before the first indented line's text.
fn detect_indent(text: &str) -> Option<&str> {
    text.lines().find_map(|line| {
        let trimmed = line.trim_start_matches([' ', '\t']);
        let indent = &line[..line.len() - trimmed.len()];
        (!indent.is_empty() && !trimmed.trim().is_empty()).then_some(indent)
    })
}

fn servers_mut(doc: &mut Map<String, Value>) -> &mut Map<String, Value> {
    doc.entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .expect("mcpServers was checked to be an object")
}

/// Adds a server, creating the file when missing. `Ok(true)` when an entry was replaced.
pub fn add_server(path: &Path, name: &str, config: Map<String, Value>) -> Result<bool, String> {
    let mut replaced = false;
    edit_servers(path, |doc| {
        let servers = servers_mut(doc);
        replaced = servers.contains_key(name);
        servers.insert(name.to_string(), Value::Object(config));
        Ok(true)
    })?;
    Ok(replaced)
}

/// Removes a server. `Ok(false)` when the file does not define it.
pub fn remove_server(path: &Path, name: &str) -> Result<bool, String> {
    if !path.exists() {
        return Ok(false);
    }
    let mut removed = false;
    edit_servers(path, |doc| {
        let Some(servers) = doc.get_mut("mcpServers").and_then(Value::as_object_mut) else {
            return Ok(false);
        };
        removed = servers.shift_remove(name).is_some();
        Ok(removed)
    })?;
    Ok(removed)
}

/// A change to one server's `enabled` or `exposure`.
#[derive(Debug, Clone, Default)]
pub struct Patch {
    pub enabled: Option<bool>,
    pub exposure: Option<Exposure>,
}

/// Changes a server's settings in the file that defines (or, with `as_override`, overrides)
/// it. Defaults are dropped from full entries but kept in overrides, which replace the user
/// entry's values.
pub fn update_server(
    path: &Path,
    name: &str,
    patch: &Patch,
    as_override: bool,
) -> Result<(), String> {
    edit_servers(path, |doc| {
        let servers = servers_mut(doc);
        if !servers.contains_key(name) && as_override {
            servers.insert(name.to_string(), Value::Object(Map::new()));
        }
        let Some(server) = servers.get_mut(name).and_then(Value::as_object_mut) else {
            return Err(format!(
                "{} does not define MCP server \"{name}\"",
                path.display()
            ));
        };
        let keep_defaults = is_override(server);
        if let Some(enabled) = patch.enabled {
            if enabled && !keep_defaults {
                server.shift_remove("enabled");
            } else {
                server.insert("enabled".into(), Value::Bool(enabled));
            }
        }
        if let Some(exposure) = patch.exposure {
            if exposure == Exposure::Codemode && !keep_defaults {
                server.shift_remove("exposure");
            } else {
                server.insert("exposure".into(), Value::String(exposure.as_str().into()));
            }
        }
        Ok(true)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn edits_keep_other_content_order_and_indent() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp.json");
        std::fs::write(
            &path,
            "\u{feff}{\n    \"zeta\": 1,\n    \"mcpServers\": {\n        \"b\": {\"url\": \"http://x\", \"custom\": [1, 2]}\n    },\n    \"alpha\": {\"k\": \"v\"}\n}\n",
        )
        .unwrap();
        let config = json!({"command": "npx", "args": ["-y", "x"]});
        let replaced = add_server(&path, "a", config.as_object().unwrap().clone()).unwrap();
        assert!(!replaced);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("{\n    \"zeta\": 1,\n    \"mcpServers\": {\n        \"b\""),
            "{text}"
        );
        assert!(text.ends_with("}\n"));
        let doc: Value = serde_json::from_str(&text).unwrap();
        let keys: Vec<_> = doc.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["zeta", "mcpServers", "alpha"]);
        let servers: Vec<_> = doc["mcpServers"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(servers, ["b", "a"]);
        assert_eq!(doc["mcpServers"]["b"]["custom"], json!([1, 2]));

        update_server(
            &path,
            "b",
            &Patch {
                enabled: Some(false),
                exposure: Some(Exposure::Direct),
            },
            false,
        )
        .unwrap();
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(doc["mcpServers"]["b"]["enabled"], json!(false));
        assert_eq!(doc["mcpServers"]["b"]["exposure"], json!("direct"));
        update_server(
            &path,
            "b",
            &Patch {
                enabled: Some(true),
                exposure: Some(Exposure::Codemode),
            },
            false,
        )
        .unwrap();
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert!(doc["mcpServers"]["b"].get("enabled").is_none());
        assert!(doc["mcpServers"]["b"].get("exposure").is_none());

        assert!(remove_server(&path, "b").unwrap());
        assert!(!remove_server(&path, "b").unwrap());
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(doc["alpha"], json!({"k": "v"}));
    }

    #[test]
    fn overrides_keep_defaults_and_missing_files_are_created() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".pi").join("mcp.json");
        assert!(!remove_server(&path, "x").unwrap());
        assert!(!path.exists(), "a remove never creates the file");
        update_server(
            &path,
            "g",
            &Patch {
                enabled: Some(true),
                exposure: None,
            },
            true,
        )
        .unwrap();
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(doc, json!({"mcpServers": {"g": {"enabled": true}}}));
        let err = update_server(&path, "nope", &Patch::default(), false).unwrap_err();
        assert!(err.contains("does not define MCP server \"nope\""), "{err}");
    }

    #[test]
    fn a_broken_file_is_not_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp.json");
        std::fs::write(&path, "{\"mcpServers\": [] }").unwrap();
        let err = add_server(&path, "a", Map::new()).unwrap_err();
        assert_eq!(
            err,
            format!(
                "{}: expected an object with an \"mcpServers\" object",
                path.display()
            )
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"mcpServers\": [] }"
        );
    }
}
