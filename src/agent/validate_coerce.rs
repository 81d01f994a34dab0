//! The coercion half of tool-argument validation, as pi-schema does it before checking:
//! `null` in an optional property dropped, then each value converted towards its schema
//! (TypeBox's `Value.Convert`: numeric strings to numbers, `"true"`/`"1"` to `true`, numbers
//! and booleans to strings, `const`/`enum` literals, a single value wrapped into a list), then
//! a last primitive coercion of whatever still has the wrong type.

use serde_json::Value;

use super::{
    item_schema_at, json_eq, pattern_schemas, props, type_matches, types_of, Validator, MAX_DEPTH,
};
use crate::util::js::is_js_space;
use crate::util::json::js_number;

fn number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() <= 9_007_199_254_740_991.0 {
        Value::from(v as i64)
    } else {
        serde_json::Number::from_f64(v)
            .map(Value::Number)
            .unwrap_or(Value::Null)
    }
}

/// JavaScript's `Number(string)`: surrounding whitespace ignored, empty is 0, `0x`/`0o`/`0b`
/// prefixes, decimal literals with an exponent; anything else is NaN (`None`).
fn js_string_to_number(s: &str) -> Option<f64> {
    let t = s.trim_matches(is_js_space);
    if t.is_empty() {
        return Some(0.0);
    }
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if t.len() > 2 && t.is_char_boundary(2) && t[..2].eq_ignore_ascii_case(prefix) {
            let digits = &t[2..];
            if digits.starts_with('+') {
                return None;
            }
            return u128::from_str_radix(digits, radix).ok().map(|n| n as f64);
        }
    }
    match t.trim_start_matches(['+', '-']) {
        "Infinity" => {
            return Some(if t.starts_with('-') {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            })
        }
        body if body.is_empty()
            || !body
                .bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-')) =>
        {
            return None
        }
        _ => {}
    }
    t.parse::<f64>().ok()
}

/// pi-schema's number conversion of a value (`None`: not convertible).
fn try_number(v: &Value) -> Option<f64> {
    match v {
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        Value::Number(n) => n.as_f64(),
        Value::Null => Some(0.0),
        Value::String(s) => {
            if let Some(n) = js_string_to_number(s).filter(|n| n.is_finite()) {
                return Some(n);
            }
            match s.to_lowercase().as_str() {
                "false" => Some(0.0),
                "true" => Some(1.0),
                _ => big_int_of_string(s),
            }
        }
        _ => None,
    }
}

/// A BigInt literal such as `12n`, within JavaScript's safe integer range.
fn big_int_of_string(s: &str) -> Option<f64> {
    let int = s.strip_suffix('n')?;
    let digits = int.strip_prefix('-').unwrap_or(int);
    let canonical = digits == "0" || (!digits.starts_with('0') && !digits.is_empty());
    if !canonical || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: f64 = int.parse().ok()?;
    (n.abs() <= 9_007_199_254_740_991.0).then_some(n)
}

fn try_boolean(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => match n.as_f64() {
            Some(0.0) => Some(false),
            Some(1.0) => Some(true),
            _ => None,
        },
        Value::Null => Some(false),
        Value::String(s) => match s.to_lowercase().as_str() {
            "false" | "0" => Some(false),
            "true" | "1" => Some(true),
            _ => None,
        },
        _ => None,
    }
}

fn try_string(v: &Value) -> Option<String> {
    match v {
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => n.as_f64().map(js_number),
        Value::Null => Some("null".into()),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

fn try_null(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => {
            let l = s.to_lowercase();
            l == "undefined" || l == "null" || s.is_empty() || s == "0"
        }
        _ => false,
    }
}

/// A value converted towards a literal (`const`/`enum` member), kept only when it then equals it.
fn convert_literal(literal: &Value, v: &Value) -> Option<Value> {
    let converted = match literal {
        Value::String(_) => try_string(v).map(Value::String),
        Value::Number(_) => try_number(v).map(number),
        Value::Bool(_) => try_boolean(v).map(Value::Bool),
        _ => None,
    }?;
    json_eq(&converted, literal).then_some(converted)
}

/// pi-schema's last-resort coercion of a primitive towards one type (`None`: unchanged).
fn coerce_primitive(v: &Value, t: &str) -> Option<Value> {
    match (t, v) {
        ("number" | "integer", Value::Null) => Some(Value::from(0)),
        ("number" | "integer", Value::String(s)) if !s.trim_matches(is_js_space).is_empty() => {
            let n = js_string_to_number(s)?;
            let fits = if t == "number" {
                n.is_finite()
            } else {
                n.is_finite() && n.fract() == 0.0
            };
            fits.then(|| number(n))
        }
        ("number" | "integer", Value::Bool(b)) => Some(Value::from(u8::from(*b))),
        ("boolean", Value::Null) => Some(Value::Bool(false)),
        ("boolean", Value::String(s)) if s == "true" => Some(Value::Bool(true)),
        ("boolean", Value::String(s)) if s == "false" => Some(Value::Bool(false)),
        ("boolean", Value::Number(n)) => match n.as_f64() {
            Some(1.0) => Some(Value::Bool(true)),
            Some(0.0) => Some(Value::Bool(false)),
            _ => None,
        },
        ("string", Value::Null) => Some(Value::String(String::new())),
        ("string", Value::Number(_) | Value::Bool(_)) => try_string(v).map(Value::String),
        ("null", Value::String(s)) if s.is_empty() => Some(Value::Null),
        ("null", Value::Bool(false)) => Some(Value::Null),
        ("null", Value::Number(n)) if n.as_f64() == Some(0.0) => Some(Value::Null),
        _ => None,
    }
}

impl Validator<'_> {
    pub(super) fn coerce(&self, value: Value) -> Value {
        let value = self.drop_optional_nulls(value, self.root, 0);
        let value = self.convert(self.root, value, 0);
        self.coerce_types(value, self.root, 0)
    }

    /// A `null` in a property that is neither required nor nullable is as good as absent.
    fn drop_optional_nulls(&self, value: Value, schema: &Value, depth: usize) -> Value {
        if depth > MAX_DEPTH || !schema.is_object() {
            return value;
        }
        match value {
            Value::Array(items) => Value::Array(
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, item)| match item_schema_at(schema, i) {
                        Some(s) => self.drop_optional_nulls(item, s, depth + 1),
                        None => item,
                    })
                    .collect(),
            ),
            Value::Object(map) => {
                let required: Vec<&str> = schema
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let properties = props(schema);
                let out = map
                    .into_iter()
                    .filter_map(|(key, v)| {
                        let Some(property) = properties.and_then(|p| p.get(&key)) else {
                            return Some((key, v));
                        };
                        let is_ref = property.get("$ref").is_some_and(Value::is_string);
                        let droppable = v.is_null()
                            && !required.contains(&key.as_str())
                            && !is_ref
                            && property.is_object()
                            && !self.ok(property, &Value::Null, depth + 1);
                        if droppable {
                            return None;
                        }
                        let v = self.drop_optional_nulls(v, property, depth + 1);
                        Some((key, v))
                    })
                    .collect();
                Value::Object(out)
            }
            other => other,
        }
    }

    /// pi-schema's first pass (TypeBox's `Value.Convert`): each value is converted towards the
    /// schema's declared type, `const` or `enum`; non-arrays are wrapped for array schemas.
    fn convert(&self, node: &Value, value: Value, depth: usize) -> Value {
        if depth > MAX_DEPTH || !node.is_object() {
            return value;
        }
        if let Some(Value::String(r)) = node.get("$ref") {
            return match self.resolve(r) {
                Some(target) => self.convert(target, value, depth + 1),
                None => value,
            };
        }
        if let Some(literal) = node.get("const") {
            return convert_literal(literal, &value).unwrap_or(value);
        }
        if let Some(Value::Array(members)) = node.get("enum") {
            if members.iter().any(|m| json_eq(m, &value)) {
                return value;
            }
            for m in members {
                if let Some(c) = convert_literal(m, &value) {
                    if self.ok(node, &c, depth) {
                        return c;
                    }
                }
            }
            return value;
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = node.get(key) {
                if branches.iter().any(|b| self.ok(b, &value, depth + 1)) {
                    return self.convert_members(node, value, depth);
                }
                for b in branches {
                    let c = self.convert(b, value.clone(), depth + 1);
                    let c = self.convert_members(node, c, depth);
                    if self.ok(node, &c, depth) {
                        return c;
                    }
                }
                return self.convert_members(node, value, depth);
            }
        }
        if let Some(Value::Array(members)) = node.get("allOf") {
            let mut next = value;
            for m in members {
                next = self.convert(m, next, depth + 1);
            }
            return self.convert_members(node, next, depth);
        }
        match node.get("type") {
            Some(Value::String(t)) => match t.as_str() {
                "string" => try_string(&value).map(Value::String).unwrap_or(value),
                "number" => try_number(&value).map(number).unwrap_or(value),
                "integer" => try_number(&value)
                    .map(|n| number(n.trunc()))
                    .unwrap_or(value),
                "boolean" => try_boolean(&value).map(Value::Bool).unwrap_or(value),
                "null" if try_null(&value) => Value::Null,
                "array" => self.convert_array(node, value, depth),
                "object" => self.convert_object(node, value, depth),
                _ => value,
            },
            None if node.get("properties").is_some() || node.get("patternProperties").is_some() => {
                self.convert_object(node, value, depth)
            }
            None if node.get("items").is_some() || node.get("prefixItems").is_some() => {
                self.convert_array(node, value, depth)
            }
            _ => value,
        }
    }

    fn convert_members(&self, node: &Value, value: Value, depth: usize) -> Value {
        if node.get("properties").is_some()
            || node.get("patternProperties").is_some()
            || node.get("additionalProperties").is_some()
        {
            self.convert_object(node, value, depth)
        } else {
            value
        }
    }

    fn convert_array(&self, node: &Value, value: Value, depth: usize) -> Value {
        let tuple = match (node.get("items"), node.get("prefixItems")) {
            (Some(Value::Array(t)), _) | (_, Some(Value::Array(t))) => Some(t),
            _ => None,
        };
        match value {
            Value::Array(items) => Value::Array(
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, item)| {
                        let schema = match tuple {
                            Some(t) => t
                                .get(i)
                                .or_else(|| node.get("items").filter(|s| s.is_object())),
                            None => node.get("items"),
                        };
                        match schema {
                            Some(s) => self.convert(s, item, depth + 1),
                            None => item,
                        }
                    })
                    .collect(),
            ),
            // A single value where a list is expected becomes a list of one.
            single if tuple.is_none() => match node.get("items") {
                Some(item) if item.is_object() => {
                    Value::Array(vec![self.convert(item, single, depth + 1)])
                }
                _ => Value::Array(vec![single]),
            },
            other => other,
        }
    }

    fn convert_object(&self, node: &Value, value: Value, depth: usize) -> Value {
        let Value::Object(map) = value else {
            return value;
        };
        let properties = props(node);
        let additional = node.get("additionalProperties").filter(|s| s.is_object());
        let out = map
            .into_iter()
            .map(|(key, mut v)| {
                let mut matched = false;
                if let Some(s) = properties.and_then(|p| p.get(&key)) {
                    matched = true;
                    v = self.convert(s, v, depth + 1);
                }
                for s in pattern_schemas(node, &key) {
                    matched = true;
                    v = self.convert(s, v, depth + 1);
                }
                if let (false, Some(s)) = (matched, additional) {
                    v = self.convert(s, v, depth + 1);
                }
                (key, v)
            })
            .collect();
        Value::Object(out)
    }

    /// pi-schema's second pass: a value still not of the declared type is coerced primitively
    /// (`null` → `0`/`false`/`""`, booleans → numbers, numbers and booleans → strings).
    fn coerce_types(&self, value: Value, schema: &Value, depth: usize) -> Value {
        if depth > MAX_DEPTH || !schema.is_object() {
            return value;
        }
        let mut next = value;
        if let Some(Value::Array(members)) = schema.get("allOf") {
            for m in members {
                next = self.coerce_types(next, m, depth + 1);
            }
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = schema.get(key) {
                if !branches.iter().any(|b| self.ok(b, &next, depth + 1)) {
                    for b in branches {
                        let c = self.coerce_types(next.clone(), b, depth + 1);
                        if self.ok(b, &c, depth + 1) {
                            next = c;
                            break;
                        }
                    }
                }
            }
        }
        let types = types_of(schema);
        let member_matches = types.len() > 1 && types.iter().any(|t| type_matches(t, &next));
        if !member_matches {
            for t in &types {
                if let Some(c) = coerce_primitive(&next, t) {
                    next = c;
                    break;
                }
            }
        }
        if types.contains(&"object") {
            if let Value::Object(map) = next {
                let properties = props(schema);
                let additional = schema.get("additionalProperties").filter(|s| s.is_object());
                next = Value::Object(
                    map.into_iter()
                        .map(|(key, mut v)| {
                            let mut matched = false;
                            if let Some(s) = properties.and_then(|p| p.get(&key)) {
                                matched = true;
                                v = self.coerce_types(v, s, depth + 1);
                            }
                            for s in pattern_schemas(schema, &key) {
                                matched = true;
                                v = self.coerce_types(v, s, depth + 1);
                            }
                            if let (false, Some(s)) = (matched, additional) {
                                v = self.coerce_types(v, s, depth + 1);
                            }
                            (key, v)
                        })
                        .collect(),
                );
            }
        }
        if types.contains(&"array") {
            if let Value::Array(items) = next {
                next = Value::Array(
                    items
                        .into_iter()
                        .enumerate()
                        .map(|(i, item)| match item_schema_at(schema, i) {
                            Some(s) => self.coerce_types(item, s, depth + 1),
                            None => item,
                        })
                        .collect(),
                );
            }
        }
        next
    }
}
