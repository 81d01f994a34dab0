//! What calls resolve to in scripts, as JSON schemas (pi 1.6.0's output schemas): `bash`'s
//! structured result, `read`'s text or image block, and an MCP tool's `CallToolResult` with the
//! tool's own output schema as its `structuredContent`.

use serde_json::{json, Map, Value};

/// `tools.bash()`: output up to 1 MiB, the rest in `full_output_path`.
pub fn bash_output() -> Value {
    json!({"type": "object", "properties": {
        "output": {"type": "string", "description": "Combined stdout and stderr, possibly truncated"},
        "truncated": {"type": "boolean"},
        "full_output_path": {"type": "string", "description": "Full output, when truncated"},
        "exit_code": {"type": "number"},
        "wall_time_seconds": {"type": "number"}
    }, "required": ["output", "truncated", "exit_code", "wall_time_seconds"]})
}

/// `tools.read()`: the text, or an image block with its note.
pub fn read_output() -> Value {
    json!({"anyOf": [
        {"type": "string"},
        {"type": "object", "properties": {
            "type": {"type": "string", "const": "image"},
            "data": {"type": "string"},
            "mimeType": {"type": "string"},
            "note": {"type": "string"}
        }, "required": ["type", "data", "mimeType", "note"]}
    ]})
}

/// MCP content blocks as one compact type with the fields of text and image blocks.
fn content_block() -> Value {
    json!({"type": "object", "properties": {
        "type": {"enum": ["text", "image", "audio", "resource_link", "resource"]},
        "text": {"type": "string"},
        "data": {"type": "string"},
        "mimeType": {"type": "string"}
    }, "required": ["type"], "additionalProperties": true})
}

/// Keywords whose values are data, so a `$ref` key in them is not a reference.
const DATA_KEYWORDS: [&str; 4] = ["const", "enum", "default", "examples"];
/// Keywords whose values map names to schemas.
const MAP_KEYWORDS: [&str; 6] = [
    "properties",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
    "$defs",
    "definitions",
];

/// `schema` moved below `pointer`: its local `$ref`s rewritten to point there.
fn relocate(schema: &Value, pointer: &str) -> Value {
    match schema {
        Value::Array(items) => Value::Array(items.iter().map(|i| relocate(i, pointer)).collect()),
        Value::Object(obj) => {
            let mut out = Map::new();
            for (key, value) in obj {
                let moved = match value {
                    Value::String(r) if key == "$ref" && (r == "#" || r.starts_with("#/")) => {
                        Value::String(format!("{pointer}{}", &r[1..]))
                    }
                    _ if DATA_KEYWORDS.contains(&key.as_str()) => value.clone(),
                    Value::Object(map) if MAP_KEYWORDS.contains(&key.as_str()) => Value::Object(
                        map.iter()
                            .map(|(k, v)| (k.clone(), relocate(v, pointer)))
                            .collect(),
                    ),
                    _ => relocate(value, pointer),
                };
                out.insert(key.clone(), moved);
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// An MCP tool's call result, its own `outputSchema` (if any) as `structuredContent`.
pub fn mcp_result(structured: Option<&Value>) -> Value {
    let structured = structured
        .filter(|s| s.is_object())
        .map_or(json!({}), |s| relocate(s, "#/properties/structuredContent"));
    json!({"type": "object", "properties": {
        "content": {"type": "array", "items": content_block()},
        "structuredContent": structured,
        "isError": {"type": "boolean"}
    }, "required": ["content"], "additionalProperties": true})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::codemode::typescript::schema_to_type;

    #[test]
    fn an_mcp_result_declares_its_structured_content() {
        let own = json!({"type": "object", "properties": {"n": {"$ref": "#/$defs/N"}},
            "required": ["n"], "$defs": {"N": {"type": "number"}}});
        assert_eq!(
            schema_to_type(&mcp_result(Some(&own)), None),
            "{ content: Array<{ data?: string; mimeType?: string; text?: string; type: \"text\" | \"image\" | \"audio\" | \"resource_link\" | \"resource\"; [key: string]: unknown; }>; isError?: boolean; structuredContent?: { n: number; }; [key: string]: unknown; }"
        );
    }
}
