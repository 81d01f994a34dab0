//! TypeScript types written from JSON schemas, for the declarations scripts see of each tool
//! (`describeTool`, `ALL_TOOLS`).

use serde_json::Value;

/// The TypeScript type of `schema`, indented for nesting `depth`.
pub fn schema_type(schema: &Value, depth: usize) -> String {
    if depth > 8 {
        return "unknown".into();
    }
    if let Some(c) = schema.get("const") {
        return c.to_string();
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join(" | ");
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(variants) = schema.get(key).and_then(Value::as_array) {
            return variants
                .iter()
                .map(|v| schema_type(v, depth + 1))
                .collect::<Vec<_>>()
                .join(" | ");
        }
    }
    match schema.get("type") {
        Some(Value::Array(types)) => types
            .iter()
            .map(|t| schema_type(&serde_json::json!({"type": t}), depth + 1))
            .collect::<Vec<_>>()
            .join(" | "),
        Some(Value::String(t)) => match t.as_str() {
            "string" => "string".into(),
            "number" | "integer" => "number".into(),
            "boolean" => "boolean".into(),
            "null" => "null".into(),
            "array" => {
                let item = schema
                    .get("items")
                    .map_or("unknown".into(), |i| schema_type(i, depth + 1));
                if item.contains(' ') {
                    format!("Array<{item}>")
                } else {
                    format!("{item}[]")
                }
            }
            "object" => object_type(schema, depth),
            _ => "unknown".into(),
        },
        _ if schema.get("properties").is_some() => object_type(schema, depth),
        _ => "unknown".into(),
    }
}

fn object_type(schema: &Value, depth: usize) -> String {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return "Record<string, unknown>".into();
    };
    if props.is_empty() {
        return "{}".into();
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let indent = "  ".repeat(depth + 1);
    let mut out = String::from("{\n");
    for (name, prop) in props {
        if let Some(d) = prop.get("description").and_then(Value::as_str) {
            out.push_str(&format!(
                "{indent}/** {} */\n",
                d.replace("*/", "*\\/").replace('\n', " ")
            ));
        }
        let key = if name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
            && !name.starts_with(|c: char| c.is_ascii_digit())
        {
            name.clone()
        } else {
            Value::String(name.clone()).to_string()
        };
        let optional = if required.contains(&name.as_str()) {
            ""
        } else {
            "?"
        };
        out.push_str(&format!(
            "{indent}{key}{optional}: {};\n",
            schema_type(prop, depth + 1)
        ));
    }
    out.push_str(&"  ".repeat(depth));
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn objects_arrays_and_unions_become_typescript() {
        let s = json!({"type": "object", "properties": {
            "path": {"type": "string", "description": "File"},
            "limit": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "mode": {"enum": ["a", "b"]}
        }, "required": ["path"]});
        assert_eq!(
            schema_type(&s, 0),
            "{\n  /** File */\n  path: string;\n  limit?: number;\n  tags?: string[];\n  mode?: \"a\" | \"b\";\n}"
        );
    }
}
