//! Tool-argument validation against each tool's JSON schema, before execution, as today's pi
//! does it (pi-schema, pi 1.5): the arguments are first coerced loosely — `null` in an optional
//! property dropped, numeric strings to numbers, `"true"`/`"1"` to `true`, numbers and booleans
//! to strings, a single value wrapped into a one-item array — then checked against the schema
//! subset tools use (type, properties, required, additionalProperties, patternProperties, items,
//! prefixItems, enum, const, anyOf, oneOf, allOf, not, if/then/else, local `$ref`, string,
//! number, array and object bounds). Failures become pi's `Validation failed for tool …`
//! message with one `  - path: message` line per problem (`- path: missing`,
//! `- limit: expected number, got string`), which the model reads and corrects.

use serde_json::{Map, Value};

use crate::util::json::js_number;

/// Returns the coerced arguments, or pi's error text.
pub fn validate_arguments(tool_name: &str, schema: &Value, args: &Value) -> Result<Value, String> {
    let v = Validator { root: schema };
    let coerced = v.coerce(args.clone());
    let mut errors = Vec::new();
    v.walk(schema, &coerced, "", &mut errors);
    if errors.is_empty() {
        return Ok(coerced);
    }
    let lines: Vec<String> = errors
        .iter()
        .map(|e| format!("  - {}: {}", display_path(&e.path), e.message))
        .collect();
    let received = serde_json::to_string_pretty(args).unwrap_or_default();
    Err(format!(
        "Validation failed for tool \"{tool_name}\":\n{}\n\nReceived arguments:\n{received}",
        lines.join("\n")
    ))
}

/// The type word pi's messages use for a value: `integer` for whole numbers, `number` for the
/// others, then `string`, `boolean`, `null`, `array`, `object`.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// One problem: where (a JSON pointer, `""` for the arguments themselves) and what.
struct Problem {
    path: String,
    message: String,
}

/// `""` → `root`, `/edits/0/oldText` → `edits.0.oldText`.
fn display_path(pointer: &str) -> String {
    if pointer.is_empty() {
        return "root".into();
    }
    pointer[1..]
        .split('/')
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect::<Vec<_>>()
        .join(".")
}

fn pointer(path: &str, key: &str) -> String {
    format!("{path}/{}", key.replace('~', "~0").replace('/', "~1"))
}

/// How deep `$ref` chains and nesting are followed; a schema deeper than this is not checked
/// further (a self-referencing schema cannot loop forever).
const MAX_DEPTH: usize = 64;

struct Validator<'a> {
    root: &'a Value,
}

fn types_of(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// JSON equality with numbers compared by value (`1` equals `1.0`).
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, p)| y.get(k).is_some_and(|q| json_eq(p, q)))
        }
        _ => a == b,
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
        _ => false,
    }
}

fn props(schema: &Value) -> Option<&Map<String, Value>> {
    schema.get("properties").and_then(Value::as_object)
}

fn item_schema_at(schema: &Value, i: usize) -> Option<&Value> {
    match (schema.get("items"), schema.get("prefixItems")) {
        (Some(Value::Array(tuple)), _) => tuple.get(i),
        (_, Some(Value::Array(prefix))) if i < prefix.len() => prefix.get(i),
        (items, _) => items.filter(|s| s.is_object()),
    }
}

/// The schema each `patternProperties` entry applies to `key`.
fn pattern_schemas<'s>(schema: &'s Value, key: &str) -> Vec<&'s Value> {
    let Some(Value::Object(patterns)) = schema.get("patternProperties") else {
        return Vec::new();
    };
    patterns
        .iter()
        .filter(|(p, _)| regex::Regex::new(p).is_ok_and(|re| re.is_match(key)))
        .map(|(_, s)| s)
        .collect()
}

impl<'a> Validator<'a> {
    /// The target of a local `$ref` (`#`, `#/$defs/x`, `#/definitions/x`, any JSON pointer).
    fn resolve(&self, r: &str) -> Option<&'a Value> {
        let fragment = r.strip_prefix('#')?;
        if fragment.is_empty() {
            return Some(self.root);
        }
        self.root.pointer(fragment)
    }

    // ---- checking --------------------------------------------------------------------------

    fn ok(&self, node: &Value, v: &Value, depth: usize) -> bool {
        let mut errors = Vec::new();
        self.walk_at(node, v, "", &mut errors, depth);
        errors.is_empty()
    }

    fn walk(&self, node: &Value, v: &Value, path: &str, out: &mut Vec<Problem>) {
        self.walk_at(node, v, path, out, 0);
    }

    /// Every problem of `v` against `node`, in pi-schema's order: a type mismatch alone, then
    /// enum/const, string/number bounds, object and array contents, combinators, `$ref`.
    fn walk_at(&self, node: &Value, v: &Value, path: &str, out: &mut Vec<Problem>, depth: usize) {
        let push = |out: &mut Vec<Problem>, at: &str, message: String| {
            out.push(Problem {
                path: at.to_string(),
                message,
            })
        };
        match node {
            Value::Bool(true) => return,
            Value::Bool(false) => return push(out, path, "no value is allowed here".into()),
            Value::Object(_) if depth <= MAX_DEPTH => {}
            _ => return,
        }
        let types = types_of(node);
        if node.get("type").is_some() && !types.iter().any(|t| type_matches(t, v)) {
            let message = format!("expected {}, got {}", types.join(" or "), type_name(v));
            return push(out, path, message);
        }
        if let Some(Value::Array(allowed)) = node.get("enum") {
            if !allowed.iter().any(|a| json_eq(a, v)) {
                push(
                    out,
                    path,
                    format!("expected one of {}", list_values(allowed)),
                );
            }
        }
        if let Some(c) = node.get("const") {
            if !json_eq(c, v) {
                push(out, path, format!("expected {c}"));
            }
        }
        match v {
            Value::String(s) => self.walk_string(node, s, path, out),
            Value::Number(n) => walk_number(node, n.as_f64().unwrap_or(0.0), path, out),
            Value::Object(map) => self.walk_object(node, map, path, out, depth),
            Value::Array(items) => self.walk_array(node, items, path, out, depth),
            _ => {}
        }
        if let Some(Value::Array(members)) = node.get("allOf") {
            for m in members {
                self.walk_at(m, v, path, out, depth + 1);
            }
        }
        for (key, exactly_one) in [("anyOf", false), ("oneOf", true)] {
            if let Some(Value::Array(branches)) = node.get(key) {
                self.walk_union(branches, v, path, out, exactly_one, depth);
            }
        }
        if let Some(not) = node.get("not") {
            if self.ok(not, v, depth + 1) {
                push(out, path, "must not match the schema in not".into());
            }
        }
        if let Some(cond) = node.get("if") {
            let branch = if self.ok(cond, v, depth + 1) {
                node.get("then")
            } else {
                node.get("else")
            };
            if let Some(b) = branch {
                self.walk_at(b, v, path, out, depth + 1);
            }
        }
        if let Some(Value::String(r)) = node.get("$ref") {
            match self.resolve(r) {
                Some(target) => self.walk_at(target, v, path, out, depth + 1),
                None => push(out, path, format!("unresolved reference {r}")),
            }
        }
    }

    fn walk_string(&self, node: &Value, s: &str, path: &str, out: &mut Vec<Problem>) {
        let n = s.chars().count() as f64;
        let mut push = |message: String| {
            out.push(Problem {
                path: path.to_string(),
                message,
            })
        };
        if let Some(min) = node.get("minLength").and_then(Value::as_f64) {
            if n < min {
                push(format!("expected at least {} characters", js_number(min)));
            }
        }
        if let Some(max) = node.get("maxLength").and_then(Value::as_f64) {
            if n > max {
                push(format!("expected at most {} characters", js_number(max)));
            }
        }
        if let Some(Value::String(p)) = node.get("pattern") {
            if regex::Regex::new(p).is_ok_and(|re| !re.is_match(s)) {
                push(format!("expected to match {p}"));
            }
        }
    }

    fn walk_object(
        &self,
        node: &Value,
        map: &Map<String, Value>,
        path: &str,
        out: &mut Vec<Problem>,
        depth: usize,
    ) {
        let properties = props(node);
        if let Some(Value::Array(required)) = node.get("required") {
            for k in required.iter().filter_map(Value::as_str) {
                if !map.contains_key(k) {
                    out.push(Problem {
                        path: pointer(path, k),
                        message: "missing".into(),
                    });
                }
            }
        }
        if let Some(properties) = properties {
            for (k, s) in properties {
                if let Some(v) = map.get(k) {
                    self.walk_at(s, v, &pointer(path, k), out, depth + 1);
                }
            }
        }
        let additional = node.get("additionalProperties");
        for (k, v) in map {
            let mut matched = properties.is_some_and(|p| p.contains_key(k));
            for s in pattern_schemas(node, k) {
                matched = true;
                self.walk_at(s, v, &pointer(path, k), out, depth + 1);
            }
            match additional {
                Some(Value::Bool(false)) if !matched => out.push(Problem {
                    path: pointer(path, k),
                    message: "unknown field".into(),
                }),
                Some(s) if !matched => self.walk_at(s, v, &pointer(path, k), out, depth + 1),
                _ => {}
            }
        }
        let count = map.len() as f64;
        if let Some(min) = node.get("minProperties").and_then(Value::as_f64) {
            if count < min {
                out.push(Problem {
                    path: path.to_string(),
                    message: format!("expected at least {} properties", js_number(min)),
                });
            }
        }
        if let Some(max) = node.get("maxProperties").and_then(Value::as_f64) {
            if count > max {
                out.push(Problem {
                    path: path.to_string(),
                    message: format!("expected at most {} properties", js_number(max)),
                });
            }
        }
    }

    fn walk_array(
        &self,
        node: &Value,
        items: &[Value],
        path: &str,
        out: &mut Vec<Problem>,
        depth: usize,
    ) {
        let (prefix, rest): (&[Value], Option<&Value>) =
            match (node.get("items"), node.get("prefixItems")) {
                (Some(Value::Array(t)), _) => (t, node.get("additionalItems")),
                (items, Some(Value::Array(p))) => (p, items),
                (items, _) => (&[], items),
            };
        for (i, item) in items.iter().enumerate() {
            if let Some(s) = prefix.get(i).or(rest) {
                self.walk_at(s, item, &format!("{path}/{i}"), out, depth + 1);
            }
        }
        let len = items.len() as f64;
        let mut push = |message: String| {
            out.push(Problem {
                path: path.to_string(),
                message,
            })
        };
        if let Some(min) = node.get("minItems").and_then(Value::as_f64) {
            if len < min {
                push(format!("expected at least {} items", js_number(min)));
            }
        }
        if let Some(max) = node.get("maxItems").and_then(Value::as_f64) {
            if len > max {
                push(format!("expected at most {} items", js_number(max)));
            }
        }
        if node.get("uniqueItems") == Some(&Value::Bool(true)) {
            let dup = (0..items.len())
                .any(|i| (i + 1..items.len()).any(|j| json_eq(&items[i], &items[j])));
            if dup {
                push("expected unique items".into());
            }
        }
        if let Some(contains) = node.get("contains") {
            let n = items
                .iter()
                .filter(|item| self.ok(contains, item, depth + 1))
                .count();
            if n == 0 {
                push("expected at least 1 matching item".into());
            }
        }
    }

    /// No branch (or, for `oneOf`, not exactly one) accepts the value: the problems of the
    /// branch that fits best — the one declaring most of the object's keys, then the one whose
    /// first problem sits deepest.
    fn walk_union(
        &self,
        branches: &[Value],
        v: &Value,
        path: &str,
        out: &mut Vec<Problem>,
        exactly_one: bool,
        depth: usize,
    ) {
        let matches = branches.iter().filter(|b| self.ok(b, v, depth + 1)).count();
        if matches == 1 || (!exactly_one && matches > 0) {
            return;
        }
        if matches > 1 {
            out.push(Problem {
                path: path.to_string(),
                message: "matches more than one alternative".into(),
            });
            return;
        }
        if let (Some((key, tags)), Value::Object(map)) = (self.tag_of(branches), v) {
            match tags
                .iter()
                .position(|t| map.get(&key).is_some_and(|x| json_eq(x, t)))
            {
                Some(i) => self.walk_at(&branches[i], v, path, out, depth + 1),
                None => out.push(Problem {
                    path: pointer(path, &key),
                    message: format!("expected one of {}", list_values(&tags)),
                }),
            }
            return;
        }
        let mut best: Option<(Vec<Problem>, usize)> = None;
        for b in branches {
            let mut errors = Vec::new();
            self.walk_at(b, v, path, &mut errors, depth + 1);
            if errors.is_empty() {
                continue;
            }
            let target = match b.get("$ref").and_then(Value::as_str) {
                Some(r) => self.resolve(r).unwrap_or(b),
                None => b,
            };
            let declared = match (v, props(target)) {
                (Value::Object(map), Some(p)) => map.keys().filter(|k| p.contains_key(*k)).count(),
                _ => 0,
            };
            let better = match &best {
                None => true,
                Some((e, d)) => {
                    declared > *d || (declared == *d && errors[0].path.len() > e[0].path.len())
                }
            };
            if better {
                best = Some((errors, declared));
            }
        }
        match best {
            Some((errors, _)) => out.extend(errors),
            None => out.push(Problem {
                path: path.to_string(),
                message: "matches no alternative".into(),
            }),
        }
    }
}

impl Validator<'_> {
    /// A property every branch pins to a different `const` (a discriminated union): its name
    /// and each branch's value.
    fn tag_of(&self, branches: &[Value]) -> Option<(String, Vec<Value>)> {
        let resolved: Vec<&Value> = branches
            .iter()
            .map(|b| match b.get("$ref").and_then(Value::as_str) {
                Some(r) => self.resolve(r).unwrap_or(b),
                None => b,
            })
            .collect();
        let first = props(resolved.first()?)?;
        first.keys().find_map(|key| {
            let tags: Vec<Value> = resolved
                .iter()
                .map(|s| props(s)?.get(key)?.get("const").cloned())
                .collect::<Option<_>>()?;
            let primitive = tags.iter().all(|t| !t.is_object() && !t.is_array());
            let unique = (0..tags.len()).all(|i| (i + 1..tags.len()).all(|j| tags[i] != tags[j]));
            (primitive && unique).then(|| (key.clone(), tags))
        })
    }
}

fn walk_number(node: &Value, n: f64, path: &str, out: &mut Vec<Problem>) {
    let bound = |k: &str| node.get(k).and_then(Value::as_f64);
    let mut push = |message: String| {
        out.push(Problem {
            path: path.to_string(),
            message,
        })
    };
    if let Some(b) = bound("minimum").filter(|&b| n < b) {
        push(format!("expected >= {}", js_number(b)));
    }
    if let Some(b) = bound("maximum").filter(|&b| n > b) {
        push(format!("expected <= {}", js_number(b)));
    }
    if let Some(b) = bound("exclusiveMinimum").filter(|&b| n <= b) {
        push(format!("expected > {}", js_number(b)));
    }
    if let Some(b) = bound("exclusiveMaximum").filter(|&b| n >= b) {
        push(format!("expected < {}", js_number(b)));
    }
    if let Some(m) = bound("multipleOf").filter(|&m| m > 0.0) {
        let q = n / m;
        if (q - q.round()).abs() > 1e-9 {
            push(format!("expected a multiple of {}", js_number(m)));
        }
    }
}

/// `["a","b"]`, or the first 20 and `... and N more]`.
fn list_values(values: &[Value]) -> String {
    const LISTED: usize = 20;
    let json = |v: &[Value]| serde_json::to_string(v).unwrap_or_default();
    if values.len() <= LISTED {
        return json(values);
    }
    let head = json(&values[..LISTED]);
    format!(
        "{}, ... and {} more]",
        &head[..head.len() - 1],
        values.len() - LISTED
    )
}

#[path = "validate_coerce.rs"]
mod coerce;

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
