//! Tool-argument validation against each tool's JSON schema, before execution: light coercion
//! first (as TypeBox's `Value.Convert` does for models that send `"5"` for a number), then a
//! check of the schema subset tools use (type, properties, required, additionalProperties,
//! items, enum, anyOf). Failures become pi's `Validation failed for tool …` message, which the
//! model reads and corrects.

use serde_json::{Map, Value};

/// Returns the coerced arguments, or pi's error text.
pub fn validate_arguments(tool_name: &str, schema: &Value, args: &Value) -> Result<Value, String> {
    let coerced = coerce(schema, args.clone());
    let mut errors = Vec::new();
    check(schema, &coerced, "", &mut errors);
    if errors.is_empty() {
        return Ok(coerced);
    }
    let lines: Vec<String> = errors
        .iter()
        .map(|(path, msg)| format!("  - {path}: {msg}"))
        .collect();
    let received = serde_json::to_string_pretty(args).unwrap_or_default();
    Err(format!(
        "Validation failed for tool \"{tool_name}\":\n{}\n\nReceived arguments:\n{received}",
        lines.join("\n")
    ))
}

fn types_of(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn coerce(schema: &Value, value: Value) -> Value {
    let types = types_of(schema);
    let value = match value {
        Value::String(s) if types.contains(&"number") || types.contains(&"integer") => {
            match s.trim().parse::<f64>() {
                Ok(n) if !types.contains(&"string") => {
                    if types.contains(&"integer") && n.fract() == 0.0 && n.abs() < 9.0e15 {
                        Value::from(n as i64)
                    } else {
                        serde_json::Number::from_f64(n)
                            .map(Value::Number)
                            .unwrap_or(Value::String(s))
                    }
                }
                _ => Value::String(s),
            }
        }
        Value::String(s) if types.contains(&"boolean") && !types.contains(&"string") => {
            match s.as_str() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => Value::String(s),
            }
        }
        Value::Number(n) if types == ["string"] => Value::String(n.to_string()),
        Value::Bool(b) if types == ["string"] => Value::String(b.to_string()),
        Value::Number(n) if types.contains(&"integer") && !types.contains(&"number") => {
            match n.as_f64() {
                Some(f) if f.fract() == 0.0 && n.as_i64().is_none() && f.abs() < 9.0e15 => {
                    Value::from(f as i64)
                }
                _ => Value::Number(n),
            }
        }
        other => other,
    };
    match value {
        Value::Object(mut map) => {
            if let Some(Value::Object(props)) = schema.get("properties") {
                for (k, sub) in props {
                    if let Some(v) = map.remove(k) {
                        map.insert(k.clone(), coerce(sub, v));
                    }
                }
            }
            Value::Object(map)
        }
        Value::Array(items) => match schema.get("items") {
            Some(item_schema) => {
                Value::Array(items.into_iter().map(|v| coerce(item_schema, v)).collect())
            }
            None => Value::Array(items),
        },
        other => other,
    }
}

fn type_matches(t: &str, v: &Value) -> bool {
    match t {
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "null" => v.is_null(),
        _ => true,
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn check(schema: &Value, v: &Value, path: &str, errors: &mut Vec<(String, String)>) {
    let here = if path.is_empty() {
        "root".to_string()
    } else {
        path.to_string()
    };
    if let Some(Value::Array(options)) = schema.get("anyOf") {
        let ok = options.iter().any(|o| {
            let mut e = Vec::new();
            check(o, v, path, &mut e);
            e.is_empty()
        });
        if !ok {
            errors.push((here, "must match a schema in anyOf".into()));
        }
        return;
    }
    let types = types_of(schema);
    if !types.is_empty() && !types.iter().any(|t| type_matches(t, v)) {
        errors.push((here, format!("must be {}", types.join(","))));
        return;
    }
    if let Some(Value::Array(allowed)) = schema.get("enum") {
        if !allowed.contains(v) {
            errors.push((
                here.clone(),
                "must be equal to one of the allowed values".into(),
            ));
        }
    }
    match v {
        Value::Object(map) => check_object(schema, map, path, errors),
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check(item_schema, item, &join(path, &i.to_string()), errors);
                }
            }
            if let Some(min) = schema.get("minItems").and_then(Value::as_u64) {
                if (items.len() as u64) < min {
                    errors.push((here, format!("must NOT have fewer than {min} items")));
                }
            }
        }
        _ => {}
    }
}

fn check_object(
    schema: &Value,
    map: &Map<String, Value>,
    path: &str,
    errors: &mut Vec<(String, String)>,
) {
    if let Some(Value::Array(required)) = schema.get("required") {
        for r in required.iter().filter_map(Value::as_str) {
            if !map.contains_key(r) {
                errors.push((join(path, r), format!("must have required properties {r}")));
            }
        }
    }
    let props = schema.get("properties").and_then(Value::as_object);
    for (k, v) in map {
        match props.and_then(|p| p.get(k)) {
            Some(sub) => check(sub, v, &join(path, k), errors),
            None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                let here = if path.is_empty() {
                    "root".to_string()
                } else {
                    path.to_string()
                };
                errors.push((here, format!("must NOT have additional properties ({k})")));
            }
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "offset": {"type": "number"},
                "edits": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
                    "required": ["oldText", "newText"],
                    "additionalProperties": false
                }}
            },
            "required": ["path"]
        })
    }

    #[test]
    fn valid_arguments_pass_and_are_coerced() {
        let got =
            validate_arguments("read", &schema(), &json!({"path": "a", "offset": "12"})).unwrap();
        assert_eq!(got, json!({"path": "a", "offset": 12.0}));
    }

    #[test]
    fn errors_read_like_pi() {
        let err = validate_arguments(
            "edit",
            &schema(),
            &json!({"edits": [{"oldText": 1, "x": 2}]}),
        )
        .unwrap_err();
        assert!(
            err.starts_with("Validation failed for tool \"edit\":\n"),
            "{err}"
        );
        assert!(
            err.contains("  - path: must have required properties path"),
            "{err}"
        );
        assert!(
            err.contains("  - edits.0.newText: must have required properties newText"),
            "{err}"
        );
        assert!(
            err.contains("  - edits.0: must NOT have additional properties (x)"),
            "{err}"
        );
        assert!(
            err.contains("\n\nReceived arguments:\n{\n  \"edits\""),
            "{err}"
        );
    }

    #[test]
    fn wrong_type_is_reported() {
        let err = validate_arguments("read", &schema(), &json!({"path": ["x"]})).unwrap_err();
        assert!(err.contains("  - path: must be string"), "{err}");
        let err = validate_arguments("read", &schema(), &json!("str")).unwrap_err();
        assert!(err.contains("  - root: must be object"), "{err}");
    }
}
