//! How `codemode` presents the other declared tools (pi 1.6.0's `prepareLoadout`, the
//! `codemode.mode` and `codemode.inlineBudget` settings):
//! - `on` (default): declared tools stay declared, each description ending with how a script
//!   calls it and what the call resolves to; the `codemode` description lists no tools (every
//!   declared tool is direct, and deferred tools are never listed).
//! - `only`: the declared tools are left out of the request and listed in the `codemode`
//!   description instead, grouped by namespace, within the inline budget (estimated tokens):
//!   each round every group places its cheapest remaining tool, a group whose next tool does not
//!   fit drops out, so every namespace shows before any is complete.

use std::sync::Arc;

use serde_json::Value;

use super::typescript::{declaration, resolve_ref, schema_to_type, script_identifier};
use crate::agent::tool::{Tool, ToolNamespace};
use crate::ai::ToolSpec;

pub const CODEMODE_TOOL_NAME: &str = "codemode";
/// `codemode.inlineBudget`'s default, in estimated tokens.
pub const DEFAULT_INLINE_BUDGET: u64 = 3000;
const CHARS_PER_TOKEN: usize = 4;
/// The model-facing tool of `tool_search`, which scripts do not call.
const TOOL_SEARCH: &str = "tool_search";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    On,
    Only,
}

impl Mode {
    /// The setting's value: `only`, anything else is `on`.
    pub fn from_setting(value: Option<&str>) -> Mode {
        if value == Some("only") {
            Mode::Only
        } else {
            Mode::On
        }
    }
}

/// Rewrites the request's declarations: `specs` are those of `tools`, in order; `base` is the
/// `codemode` description without tool sections.
pub fn prepare(
    specs: &mut Vec<ToolSpec>,
    tools: &[Arc<dyn Tool>],
    mode: Mode,
    budget: u64,
    base: &str,
) {
    let callable: Vec<&Arc<dyn Tool>> = tools
        .iter()
        .filter(|t| t.name() != CODEMODE_TOOL_NAME && t.name() != TOOL_SEARCH)
        .collect();
    match mode {
        Mode::On => {
            for spec in specs.iter_mut() {
                if let Some(t) = callable.iter().find(|t| t.name() == spec.name) {
                    spec.description = describe_script_call(t.as_ref());
                }
            }
        }
        Mode::Only => {
            let description = description_with(base, &callable, budget);
            specs.retain(|s| !callable.iter().any(|t| t.name() == s.name));
            if let Some(spec) = specs.iter_mut().find(|s| s.name == CODEMODE_TOOL_NAME) {
                spec.description = description;
            }
        }
    }
}

/// A declared tool's description, then how scripts call it.
fn describe_script_call(tool: &dyn Tool) -> String {
    let output = tool
        .output_schema()
        .unwrap_or_else(|| serde_json::json!({"type": "string"}));
    format!(
        "{}\n\nCodemode: `tools.{}(args)` resolves to {}.",
        tool.description().trim(),
        script_identifier(tool.name()),
        describe_output(tool.name(), &output)
    )
}

/// What a call resolves to, in one line: `a string`, the field names of an object (or of each
/// object of a union), the type when it fits on one line, else a pointer to `describeTool()`.
fn describe_output(name: &str, schema: &Value) -> String {
    let rendered = schema_to_type(schema, None);
    if rendered == "string" {
        return "a string".into();
    }
    if let Some(fields) =
        describe_fields(schema, schema, 1).or_else(|| describe_union_fields(schema, schema))
    {
        return format!("`{fields}`");
    }
    if !rendered.contains('\n') {
        return format!("`{rendered}`");
    }
    format!(
        "a value; `await describeTool({})` shows its type",
        crate::util::json::to_js_string(name)
    )
}

fn follow_ref<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    let mut current = schema;
    for _ in 0..32 {
        match current
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| resolve_ref(r, root))
        {
            Some(target) if !std::ptr::eq(target, current) => current = target,
            _ => break,
        }
    }
    current
}

/// `{ output, exit_code, full_output_path? }`, with the fields of object fields `depth` levels
/// down and `const` values shown.
fn describe_fields(schema: &Value, root: &Value, depth: usize) -> Option<String> {
    let resolved = follow_ref(schema, root);
    if resolved.get("type").and_then(Value::as_str) != Some("object") {
        return None;
    }
    let properties = resolved.get("properties")?.as_object()?;
    let required: Vec<&str> = resolved
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let fields: Vec<String> = properties
        .iter()
        .map(|(name, field)| {
            let nested = match follow_ref(field, root).get("const") {
                Some(c) => Some(crate::util::json::to_js_string(c)),
                None if depth > 0 => describe_fields(field, root, depth - 1),
                None => None,
            };
            let optional = if required.contains(&name.as_str()) {
                ""
            } else {
                "?"
            };
            match nested {
                Some(n) => format!("{name}{optional}: {n}"),
                None => format!("{name}{optional}"),
            }
        })
        .collect();
    Some(format!("{{ {} }}", fields.join(", ")))
}

fn describe_union_fields(schema: &Value, root: &Value) -> Option<String> {
    let resolved = follow_ref(schema, root);
    let variants = resolved
        .get("anyOf")
        .or_else(|| resolved.get("oneOf"))?
        .as_array()?;
    if variants.is_empty() {
        return None;
    }
    let described: Option<Vec<String>> = variants
        .iter()
        .map(|v| describe_fields(v, root, 0))
        .collect();
    described.map(|d| d.join(" | "))
}

struct Entry {
    name: String,
    section: String,
    cost: usize,
}

/// The `codemode` description listing `listed`, within `budget` estimated tokens.
fn description_with(base: &str, listed: &[&Arc<dyn Tool>], budget: u64) -> String {
    if listed.is_empty() {
        return base.to_string();
    }
    let mut groups: Vec<(Option<ToolNamespace>, Vec<Entry>)> = vec![(None, Vec::new())];
    for tool in listed {
        let namespace = tool.namespace();
        let key = namespace.as_ref().map(|n| n.name.clone());
        let section = tool_section(tool.as_ref());
        let entry = Entry {
            name: tool.name().to_string(),
            cost: section.encode_utf16().count().div_ceil(CHARS_PER_TOKEN),
            section,
        };
        match groups
            .iter_mut()
            .find(|(n, _)| n.as_ref().map(|n| &n.name) == key.as_ref())
        {
            Some((_, entries)) => entries.push(entry),
            None => groups.push((namespace, vec![entry])),
        }
    }
    // Tools without a namespace first, then namespaces by name.
    let (plain, mut named): (Vec<_>, Vec<_>) = groups.into_iter().partition(|(n, _)| n.is_none());
    crate::util::sort::sort_by(&mut named, |a, b| {
        let (x, y) = (a.0.as_ref().map(|n| &n.name), b.0.as_ref().map(|n| &n.name));
        x.cmp(&y)
    });
    let ordered: Vec<_> = plain.into_iter().chain(named).collect();
    let shown = select_catalog(&ordered, budget as usize);
    let mut sections = vec!["Nested tools:".to_string()];
    for (namespace, entries) in &ordered {
        let visible: Vec<&Entry> = entries.iter().filter(|e| shown.contains(&e.name)).collect();
        if let Some(ns) = namespace {
            let listing = if visible.len() == entries.len() {
                ""
            } else if visible.is_empty() {
                " (tools not listed)"
            } else {
                " (some tools not listed)"
            };
            let description = ns
                .description
                .as_deref()
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(|d| format!("\n{d}"))
                .unwrap_or_default();
            sections.push(format!("## {}{listing}{description}", ns.name));
        }
        sections.extend(visible.iter().map(|e| e.section.clone()));
    }
    format!("{base}\n\n{}", sections.join("\n\n"))
}

/// `### \`id\`` (with the raw name when it differs), then the tool's sample.
fn tool_section(tool: &dyn Tool) -> String {
    let id = script_identifier(tool.name());
    let heading = if id == tool.name() {
        format!("### `{id}`")
    } else {
        format!("### `{id}` (`{}`)", tool.name())
    };
    format!("{heading}\n{}", declaration(tool).trim())
}

fn select_catalog(groups: &[(Option<ToolNamespace>, Vec<Entry>)], budget: usize) -> Vec<String> {
    let mut queues: Vec<Vec<&Entry>> = groups
        .iter()
        .map(|(_, entries)| {
            let mut q: Vec<&Entry> = entries.iter().collect();
            crate::util::sort::sort_by_key(&mut q, |e| e.cost);
            q
        })
        .filter(|q| !q.is_empty())
        .collect();
    let mut shown = Vec::new();
    let mut remaining = budget;
    while !queues.is_empty() {
        queues.retain_mut(|queue| {
            let next = queue[0];
            if next.cost > remaining {
                return false;
            }
            remaining -= next.cost;
            shown.push(next.name.clone());
            queue.remove(0);
            !queue.is_empty()
        });
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn outputs_are_described_in_one_line() {
        assert_eq!(describe_output("x", &json!({"type": "string"})), "a string");
        assert_eq!(
            describe_output("bash", &super::super::schemas::bash_output()),
            "`{ output, truncated, full_output_path?, exit_code, wall_time_seconds }`"
        );
        assert_eq!(
            describe_output("read", &super::super::schemas::read_output()),
            "`string | { data: string; mimeType: string; note: string; type: \"image\"; }`"
        );
        assert_eq!(
            describe_output("m", &super::super::schemas::mcp_result(None)),
            "`{ content, structuredContent?, isError? }`"
        );
    }
}
