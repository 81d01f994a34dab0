//! TypeScript declarations of tools for scripts, written from their JSON schemas as pi 1.6.0's
//! `@earendil-works/pi-codemode/declarations` writes them: objects on one line with properties
//! sorted by name, or one property per line with `//` comments when a property has a
//! description or constraints the type cannot express (`// @integer @minimum 1`); `Array<T>`;
//! local `$ref`s resolved (recursive and remote ones are `unknown`); a type over the size limit
//! rendered again without the tags, and `unknown` if still too long.

use std::collections::HashSet;

use serde_json::Value;

use crate::agent::tool::Tool;

const INDENT: &str = "  ";
/// Largest rendered input type, in characters, before it becomes `unknown`.
const INPUT_SCHEMA_MAX_CHARS: usize = 16_000;
/// Local `$ref` expansions per rendered schema, so shared definitions cannot blow up the output.
const MAX_REF_EXPANSIONS: usize = 32;
const MAX_TAG_CHARS: usize = 80;
const TAG_KEYWORDS: [&str; 11] = [
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
];
const LOWER_BOUNDS: [&str; 4] = ["minimum", "exclusiveMinimum", "minLength", "minItems"];
const UPPER_BOUNDS: [&str; 4] = ["maximum", "exclusiveMaximum", "maxLength", "maxItems"];

/// The identifier a script uses for a tool: characters not valid in a JavaScript identifier
/// become `_` (a leading digit too), so `mcp__dev-radius__search` is `mcp__dev_radius__search`.
pub fn identifier(name: &str) -> String {
    let mut id = String::new();
    for c in name.chars() {
        let valid = c.is_ascii_alphabetic()
            || c == '_'
            || c == '$'
            || (!id.is_empty() && c.is_ascii_digit());
        id.push(if valid { c } else { '_' });
    }
    if id.is_empty() {
        id.push('_');
    }
    id
}

/// What a tool looks like to a script.
pub struct ToolDeclaration<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub input_schema: &'a Value,
    pub output_schema: &'a Value,
}

/// `name(args: T): Promise<R>;`, with the script's identifier for the name.
pub fn tool_signature(tool: &ToolDeclaration<'_>) -> String {
    format!(
        "{}(args: {}): Promise<{}>;",
        identifier(tool.name),
        schema_to_type(tool.input_schema, Some(INPUT_SCHEMA_MAX_CHARS)),
        schema_to_type(tool.output_schema, None)
    )
}

/// The description followed by the tool's declaration: `describeTool()`, `ALL_TOOLS`,
/// `searchTools()` entries and the `codemode` description's tool sections.
pub fn tool_sample(tool: &ToolDeclaration<'_>) -> String {
    format!(
        "{}\n\ncodemode tool declaration:\n```ts\ndeclare const tools: {{ {} }};\n```",
        tool.description.trim(),
        tool_signature(tool)
    )
}

/// A tool's name as scripts call it (`tools.<identifier>`).
pub fn script_identifier(name: &str) -> String {
    identifier(name)
}

/// A tool as scripts see it (pi 1.6.0's `toCodemodeDeclaration` and `renderToolSample`): its
/// description and prompt guidelines, then its TypeScript declaration, generated from its JSON
/// schemas; tools without an output schema resolve to a string.
pub fn declaration(tool: &dyn Tool) -> String {
    let mut text = tool.description().to_string();
    let guidelines: Vec<String> = tool
        .prompt_guidelines()
        .iter()
        .filter(|g| !g.trim().is_empty())
        .map(|g| format!("- {}", g.trim()))
        .collect();
    if !guidelines.is_empty() {
        text = format!("{}\n\n{}", text.trim(), guidelines.join("\n"));
    }
    let input = tool.parameters();
    let output = tool
        .output_schema()
        .unwrap_or_else(|| serde_json::json!({"type": "string"}));
    tool_sample(&ToolDeclaration {
        name: tool.name(),
        description: &text,
        input_schema: &input,
        output_schema: &output,
    })
}

/// A JSON schema as a TypeScript type expression (see the module comment).
pub fn schema_to_type(schema: &Value, max_chars: Option<usize>) -> String {
    let render = |tags: bool| {
        let mut cx = Context {
            root: schema,
            resolving: HashSet::new(),
            expansions: 0,
            tags,
        };
        to_type(schema, &mut cx)
    };
    let tagged = render(true);
    let Some(max) = max_chars else {
        return tagged;
    };
    if utf16_len(&tagged) <= max {
        return tagged;
    }
    let untagged = render(false);
    if utf16_len(&untagged) <= max {
        untagged
    } else {
        "unknown".into()
    }
}

fn utf16_len(s: &str) -> usize {
    s.encode_utf16().count()
}

struct Context<'a> {
    root: &'a Value,
    resolving: HashSet<String>,
    expansions: usize,
    tags: bool,
}

/// `JSON.stringify` of a value, as a type literal.
fn js_json(v: &Value) -> String {
    crate::util::json::to_js_string(v)
}

fn union(types: Vec<String>) -> String {
    let mut unique: Vec<String> = Vec::new();
    for t in types {
        if !unique.contains(&t) {
            unique.push(t);
        }
    }
    if unique.iter().any(|t| t == "unknown") {
        return "unknown".into();
    }
    if unique.is_empty() {
        "never".into()
    } else {
        unique.join(" | ")
    }
}

/// The subschema a local `$ref` (`#`, `#/$defs/Item`) names in `root`.
pub fn resolve_ref<'a>(reference: &str, root: &'a Value) -> Option<&'a Value> {
    if reference != "#" && !reference.starts_with("#/") {
        return None;
    }
    let mut current = root;
    for segment in reference.get(2..).unwrap_or("").split('/') {
        if segment.is_empty() {
            continue;
        }
        let decoded = percent_decode(segment)?;
        let key = decoded.replace("~1", "/").replace("~0", "~");
        current = current.as_object()?.get(&key)?;
    }
    (current.is_object() || current.is_boolean()).then_some(current)
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn to_type(schema: &Value, cx: &mut Context<'_>) -> String {
    let obj = match schema {
        Value::Bool(true) => return "unknown".into(),
        Value::Bool(false) => return "never".into(),
        Value::Object(o) => o,
        _ => return "unknown".into(),
    };
    if let Some(reference) = obj.get("$ref").and_then(Value::as_str) {
        if cx.resolving.contains(reference) || cx.expansions >= MAX_REF_EXPANSIONS {
            return "unknown".into();
        }
        let Some(target) = resolve_ref(reference, cx.root) else {
            return "unknown".into();
        };
        cx.expansions += 1;
        cx.resolving.insert(reference.to_string());
        let t = to_type(target, cx);
        cx.resolving.remove(reference);
        return t;
    }
    if let Some(c) = obj.get("const") {
        return js_json(c);
    }
    if let Some(values) = obj.get("enum").and_then(Value::as_array) {
        return union(values.iter().map(js_json).collect());
    }
    let variants = obj
        .get("anyOf")
        .and_then(Value::as_array)
        .or_else(|| obj.get("oneOf").and_then(Value::as_array));
    if let Some(variants) = variants {
        return union(variants.iter().map(|v| to_type(v, cx)).collect());
    }
    if let Some(parts) = obj.get("allOf").and_then(Value::as_array) {
        let parts: Vec<String> = parts
            .iter()
            .map(|p| to_type(p, cx))
            .filter(|p| p != "unknown")
            .collect();
        if parts.is_empty() {
            return "unknown".into();
        }
        return parts
            .iter()
            .map(|p| {
                if p.contains(" | ") {
                    format!("({p})")
                } else {
                    p.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" & ");
    }
    match obj.get("type") {
        Some(Value::Array(types)) => {
            let types = types.clone();
            union(
                types
                    .iter()
                    .map(|t| {
                        let mut one = obj.clone();
                        one.insert("type".into(), t.clone());
                        to_type(&Value::Object(one), cx)
                    })
                    .collect(),
            )
        }
        Some(Value::String(t)) => match t.as_str() {
            "string" => "string".into(),
            "number" | "integer" => "number".into(),
            "boolean" => "boolean".into(),
            "null" => "null".into(),
            "array" => array_type(obj, cx),
            "object" => object_type(obj, cx),
            _ => "unknown".into(),
        },
        None => {
            if ["properties", "additionalProperties", "required"]
                .iter()
                .any(|k| obj.contains_key(*k))
            {
                object_type(obj, cx)
            } else if obj.contains_key("items") || obj.contains_key("prefixItems") {
                array_type(obj, cx)
            } else {
                "unknown".into()
            }
        }
        Some(_) => "unknown".into(),
    }
}

fn array_type(obj: &serde_json::Map<String, Value>, cx: &mut Context<'_>) -> String {
    match obj.get("items") {
        Some(items) if !items.is_array() => return format!("Array<{}>", to_type(items, cx)),
        _ => {}
    }
    let tuple = obj
        .get("prefixItems")
        .and_then(Value::as_array)
        .or_else(|| obj.get("items").and_then(Value::as_array));
    match tuple {
        Some(items) if !items.is_empty() => format!(
            "[{}]",
            items
                .iter()
                .map(|i| to_type(i, cx))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => "unknown[]".into(),
    }
}

fn property_key(name: &str) -> String {
    let mut chars = name.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if valid {
        name.to_string()
    } else {
        js_json(&Value::String(name.to_string()))
    }
}

fn is_line_terminator(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{2028}' | '\u{2029}')
}

/// A number as JavaScript prints it.
fn js_number(v: &Value) -> String {
    crate::util::json::to_js_string(v)
}

/// Constraints of a property its TypeScript type cannot express, as JSDoc-style tags.
fn constraint_tags(property: &Value) -> String {
    let Some(prop) = property.as_object() else {
        return String::new();
    };
    let variants = prop
        .get("anyOf")
        .and_then(Value::as_array)
        .or_else(|| prop.get("oneOf").and_then(Value::as_array));
    let non_null: Vec<&Value> = variants
        .map(|v| {
            v.iter()
                .filter(|x| x.get("type") != Some(&Value::String("null".into())))
                .collect()
        })
        .unwrap_or_default();
    let mut branches: Vec<serde_json::Map<String, Value>> = vec![prop.clone()];
    if let [branch] = non_null.as_slice() {
        if let Some(b) = branch.as_object() {
            branches.push(b.clone());
        }
    }
    // Draft-04's boolean `exclusiveMinimum`/`exclusiveMaximum`.
    for s in &mut branches {
        for (bound, exclusive) in [
            ("minimum", "exclusiveMinimum"),
            ("maximum", "exclusiveMaximum"),
        ] {
            if s.get(exclusive) == Some(&Value::Bool(true)) {
                let v = s.remove(bound).unwrap_or(Value::Null);
                s.insert(exclusive.into(), v);
            }
        }
    }
    let mut tags = Vec::new();
    let is_integer = |t: Option<&Value>| match t {
        Some(Value::String(s)) => s == "integer",
        Some(Value::Array(a)) => a.iter().any(|x| x == "integer"),
        _ => false,
    };
    if branches.iter().any(|s| is_integer(s.get("type"))) {
        tags.push("@integer".to_string());
    }
    for keyword in TAG_KEYWORDS {
        let values: Vec<Option<&Value>> = branches.iter().map(|s| s.get(keyword)).collect();
        let lower = LOWER_BOUNDS.contains(&keyword);
        if lower || UPPER_BOUNDS.contains(&keyword) {
            let numbers: Vec<&Value> = values
                .into_iter()
                .flatten()
                .filter(|v| v.is_number())
                .collect();
            let pick = numbers.into_iter().reduce(|a, b| {
                let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
                if (lower && y > x) || (!lower && y < x) {
                    b
                } else {
                    a
                }
            });
            if let Some(v) = pick {
                tags.push(format!("@{keyword} {}", js_number(v)));
            }
            continue;
        }
        let mut seen: Vec<&Value> = Vec::new();
        for v in values.into_iter().flatten() {
            if seen.contains(&v) {
                continue;
            }
            seen.push(v);
            match v {
                Value::Number(_) => tags.push(format!("@{keyword} {}", js_number(v))),
                Value::String(s) => tags.push(format!("@{keyword} {s}")),
                _ => {}
            }
        }
    }
    if branches
        .iter()
        .any(|s| s.get("uniqueItems") == Some(&Value::Bool(true)))
    {
        tags.push("@uniqueItems".into());
    }
    if let Some(d) = prop.get("default").filter(|d| !d.is_null()) {
        tags.push(format!("@default {}", js_json(d)));
    }
    if prop.get("deprecated") == Some(&Value::Bool(true)) {
        tags.push("@deprecated".into());
    }
    tags.into_iter()
        .filter(|t| utf16_len(t) <= MAX_TAG_CHARS)
        .map(|t| {
            t.chars()
                .map(|c| {
                    if is_line_terminator(c) {
                        format!("\\u{:04x}", c as u32)
                    } else {
                        c.to_string()
                    }
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn object_type(obj: &serde_json::Map<String, Value>, cx: &mut Context<'_>) -> String {
    let empty = serde_json::Map::new();
    let properties = obj
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = obj
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut names: Vec<&String> = properties.keys().collect();
    // JavaScript's default sort: by UTF-16 code units.
    crate::util::sort::sort_by(&mut names, |a, b| a.encode_utf16().cmp(b.encode_utf16()));
    let mut members: Vec<String> = names
        .iter()
        .map(|name| {
            let optional = if required.contains(&name.as_str()) {
                ""
            } else {
                "?"
            };
            format!(
                "{}{optional}: {};",
                property_key(name),
                to_type(&properties[name.as_str()], cx)
            )
        })
        .collect();
    match obj.get("additionalProperties") {
        Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) => members.push("[key: string]: unknown;".into()),
        Some(additional) => members.push(format!("[key: string]: {};", to_type(additional, cx))),
        None if names.is_empty() => members.push("[key: string]: unknown;".into()),
        None => {}
    }
    if members.is_empty() {
        return "{}".into();
    }
    let comments: Vec<Vec<String>> = names
        .iter()
        .map(|name| {
            let property = &properties[name.as_str()];
            let mut lines: Vec<String> = property
                .get("description")
                .and_then(Value::as_str)
                .map(str::trim)
                .unwrap_or("")
                .split(is_line_terminator)
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect();
            if cx.tags {
                let tags = constraint_tags(property);
                if !tags.is_empty() {
                    lines.push(tags);
                }
            }
            lines
        })
        .collect();
    if comments.iter().all(Vec::is_empty) {
        return format!("{{ {} }}", members.join(" "));
    }
    let mut lines = vec!["{".to_string()];
    for (i, comment) in comments.iter().enumerate() {
        for line in comment {
            lines.push(format!("{INDENT}// {line}"));
        }
        lines.push(format!(
            "{INDENT}{}",
            members[i].replace('\n', &format!("\n{INDENT}"))
        ));
    }
    for member in &members[names.len()..] {
        lines.push(format!("{INDENT}{member}"));
    }
    lines.push("}".into());
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn objects_render_on_one_line_sorted_or_with_comments() {
        let s = json!({"type": "object", "properties": {
            "word": {"type": "string"},
            "limit": {"type": "number"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "mode": {"enum": ["a", "b"]}
        }, "required": ["word"]});
        assert_eq!(
            schema_to_type(&s, None),
            "{ limit?: number; mode?: \"a\" | \"b\"; tags?: Array<string>; word: string; }"
        );
        let s = json!({"type": "object", "properties": {
            "path": {"type": "string", "description": "File path"},
            "limit": {"type": "integer", "minimum": 1, "default": 20},
            "x": {}
        }, "required": ["path"]});
        assert_eq!(
            schema_to_type(&s, None),
            "{\n  // @integer @minimum 1 @default 20\n  limit?: number;\n  // File path\n  path: string;\n  x?: unknown;\n}"
        );
        assert_eq!(
            schema_to_type(&json!({"type": "object"}), None),
            "{ [key: string]: unknown; }"
        );
    }

    #[test]
    fn refs_resolve_locally_and_recursion_is_unknown() {
        let s = json!({"type": "object", "properties": {"node": {"$ref": "#/$defs/Node"}},
            "required": ["node"],
            "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}}});
        assert_eq!(schema_to_type(&s, None), "{ node: { next?: unknown; }; }");
    }

    #[test]
    fn identifiers_replace_invalid_characters() {
        assert_eq!(
            identifier("mcp__dev-radius__search"),
            "mcp__dev_radius__search"
        );
        assert_eq!(identifier("9lives"), "_lives");
        assert_eq!(identifier(""), "_");
    }

    #[test]
    fn a_sample_is_the_description_and_the_declaration() {
        let input = json!({"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]});
        let output = json!({"type": "string"});
        let sample = tool_sample(&ToolDeclaration {
            name: "mcp__dev__stats",
            description: "Count letters.",
            input_schema: &input,
            output_schema: &output,
        });
        assert_eq!(
            sample,
            "Count letters.\n\ncodemode tool declaration:\n```ts\ndeclare const tools: { mcp__dev__stats(args: { word: string; }): Promise<string>; };\n```"
        );
    }
}
