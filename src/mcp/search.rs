//! `tool_search`: finds tools that are not declared to the model yet (MCP tools with `deferred`
//! or `codemode` exposure) and declares the matches from the next model call on. Ranking is
//! pi's: BM25 over each tool's description and schema text, with the tool name and its server's
//! namespace (name, description, instructions) as extra fields; a tool matching more query
//! terms ranks first, and a query that is exactly a tool's name puts that tool on top.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::{json, Value};

use super::tools::Namespace;
use crate::agent::{Tool, ToolContext, ToolOutput};
use crate::ai::Abort;
use crate::util::sort;

pub const TOOL_SEARCH: &str = "tool_search";
const DEFAULT_LIMIT: usize = 8;
const NAME_WEIGHT: f64 = 3.0;
const NAMESPACE_WEIGHT: f64 = 0.5;
const K1: f64 = 1.2;
const B: f64 = 0.75;

const STOP_WORDS: [&str; 21] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "of", "on",
    "or", "that", "the", "this", "to", "with",
];

const DESCRIPTION: &str = "# Tool discovery\n\nSearches over deferred tool metadata with BM25 and exposes matching tools for the next model call.\n\nSome of the tools, such as tools of MCP servers, may not have been provided to you upfront, and you should use this tool (`tool_search`) to search for the required tools. For MCP tool discovery, always use `tool_search`.";

/// A tool `tool_search` may load.
#[derive(Clone)]
pub struct Candidate {
    pub name: String,
    pub description: String,
    pub parameters: Value,
    pub namespace: Option<Namespace>,
}

/// What `tool_search` searches and loads into.
pub trait SearchHost: Send + Sync {
    /// Searchable tools not declared yet, once servers still connecting have settled.
    fn candidates(&self, abort: &Abort) -> Vec<Candidate>;
    /// Declares these tools from the next model call on.
    fn load(&self, names: &[String]);
}

/// Naive singular form, so `issues` matches `issue`.
fn stem(term: &str) -> String {
    let n = term.len();
    if n > 4 && term.ends_with("ies") {
        return format!("{}y", &term[..n - 3]);
    }
    if n > 4
        && ["ches", "shes", "sses", "xes", "zes"]
            .iter()
            .any(|s| term.ends_with(s))
    {
        return term[..n - 2].to_string();
    }
    if n > 3 && term.ends_with('s') && !term.ends_with("ss") {
        return term[..n - 1].to_string();
    }
    term.to_string()
}

/// Words of `text`: identifiers split at case changes, lower-cased, stop words dropped, simple
/// plurals made singular.
pub fn tokenize(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut spaced = String::with_capacity(text.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        if i > 0 && c.is_ascii_uppercase() {
            let prev = chars[i - 1];
            let camel = prev.is_ascii_lowercase() || prev.is_ascii_digit();
            let acronym_end = prev.is_ascii_uppercase()
                && chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if camel || acronym_end {
                spaced.push(' ');
            }
        }
        spaced.push(c);
    }
    spaced
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !STOP_WORDS.contains(w))
        .map(|w| {
            if w.chars().all(|c| c.is_ascii_alphanumeric()) {
                stem(w)
            } else {
                w.to_string()
            }
        })
        .collect()
}

/// A local `$ref` (`#`, `#/$defs/Item`) inside `root`.
fn resolve_ref<'a>(reference: &str, root: &'a Value) -> Option<&'a Value> {
    if reference == "#" {
        return Some(root);
    }
    let mut at = root;
    for seg in reference.strip_prefix("#/")?.split('/') {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        at = match at {
            Value::Object(m) => m.get(&seg)?,
            Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(at)
}

/// Descriptions and property names of a schema, following local references once each.
fn schema_text(schema: &Value, root: &Value, parts: &mut Vec<String>, seen: &mut HashSet<usize>) {
    let Some(obj) = schema.as_object() else {
        return;
    };
    if let Some(target) = obj
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| resolve_ref(r, root))
    {
        if target.is_object() && seen.insert(target as *const Value as usize) {
            schema_text(target, root, parts, seen);
        }
    }
    if let Some(d) = obj.get("description").and_then(Value::as_str) {
        parts.push(d.to_string());
    }
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            parts.push(name.clone());
            schema_text(prop, root, parts, seen);
        }
    }
    if let Some(items) = obj.get("items") {
        schema_text(items, root, parts, seen);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(variants) = obj.get(key).and_then(Value::as_array) {
            for v in variants {
                schema_text(v, root, parts, seen);
            }
        }
    }
}

struct Indexed {
    name: String,
    name_terms: HashSet<String>,
    local_terms: Vec<String>,
    text_counts: HashMap<String, usize>,
    text_len: usize,
    namespace_terms: HashSet<String>,
}

fn index(c: &Candidate) -> Indexed {
    let mut parts = vec![c.description.clone()];
    let mut seen = HashSet::from([&c.parameters as *const Value as usize]);
    schema_text(&c.parameters, &c.parameters, &mut parts, &mut seen);
    let text = parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let mut text_counts = HashMap::new();
    for t in tokenize(&text) {
        *text_counts.entry(t).or_insert(0) += 1;
    }
    let namespace_text = c.namespace.as_ref().map_or(String::new(), |n| {
        [
            n.name.as_str(),
            n.description.as_deref().unwrap_or(""),
            n.instructions.as_deref().unwrap_or(""),
        ]
        .join(" ")
    });
    let local = c.name.rsplit("__").next().unwrap_or(&c.name);
    let mut local_terms = Vec::new();
    for t in tokenize(local) {
        if !local_terms.contains(&t) {
            local_terms.push(t);
        }
    }
    Indexed {
        name: c.name.clone(),
        name_terms: tokenize(&c.name).into_iter().collect(),
        local_terms,
        text_len: text_counts.values().sum(),
        text_counts,
        namespace_terms: tokenize(&namespace_text).into_iter().collect(),
    }
}

fn normalize_name(name: &str) -> String {
    name.trim()
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '$' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The best `limit` candidates for `query`, best first.
pub fn rank(query: &str, candidates: &[Candidate], limit: usize) -> Vec<String> {
    let mut query_terms: Vec<String> = Vec::new();
    for t in tokenize(query) {
        if !query_terms.contains(&t) {
            query_terms.push(t);
        }
    }
    if query_terms.is_empty() || candidates.is_empty() || limit == 0 {
        return Vec::new();
    }
    let docs: Vec<Indexed> = candidates.iter().map(index).collect();
    let n = docs.len() as f64;
    let total: usize = docs.iter().map(|d| d.text_len).sum();
    let average = if total == 0 { 1.0 } else { total as f64 / n };
    let idf: Vec<f64> = query_terms
        .iter()
        .map(|t| {
            let freq = docs
                .iter()
                .filter(|d| {
                    d.name_terms.contains(t)
                        || d.text_counts.contains_key(t)
                        || d.namespace_terms.contains(t)
                })
                .count() as f64;
            crate::util::math::ln(1.0 + (n - freq + 0.5) / (freq + 0.5))
        })
        .collect();
    let full_name_bonus: f64 = idf.iter().sum();
    let exact = normalize_name(query);
    let mut matches: Vec<(bool, usize, f64, &str)> = Vec::new();
    for d in &docs {
        let norm = K1 * (1.0 - B + B * d.text_len as f64 / average);
        let mut score = 0.0;
        let mut covered = 0;
        for (t, idf) in query_terms.iter().zip(&idf) {
            let count = *d.text_counts.get(t).unwrap_or(&0) as f64;
            let weight = if d.name_terms.contains(t) {
                NAME_WEIGHT
            } else {
                0.0
            } + if d.namespace_terms.contains(t) {
                NAMESPACE_WEIGHT
            } else {
                0.0
            } + count * (K1 + 1.0) / (count + norm);
            if weight > 0.0 {
                covered += 1;
            }
            score += idf * weight;
        }
        if score == 0.0 {
            continue;
        }
        if !d.local_terms.is_empty() && d.local_terms.iter().all(|t| query_terms.contains(t)) {
            score += full_name_bonus;
        }
        let normalized = normalize_name(&d.name);
        let is_exact = normalized == exact || normalized.ends_with(&format!("__{exact}"));
        matches.push((is_exact, covered, score, &d.name));
    }
    sort::sort_by(&mut matches, |a, b| {
        b.0.cmp(&a.0)
            .then(b.1.cmp(&a.1))
            .then(b.2.partial_cmp(&a.2).unwrap_or(std::cmp::Ordering::Equal))
    });
    matches
        .into_iter()
        .take(limit)
        .map(|m| m.3.to_string())
        .collect()
}

pub struct ToolSearch {
    host: Arc<dyn SearchHost>,
}

impl ToolSearch {
    pub fn new(host: Arc<dyn SearchHost>) -> ToolSearch {
        ToolSearch { host }
    }
}

impl Tool for ToolSearch {
    fn name(&self) -> &str {
        TOOL_SEARCH
    }
    fn description(&self) -> &str {
        DESCRIPTION
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Search query for deferred tools."},
                "limit": {"type": "number", "description": format!("Maximum number of tools to return. Defaults to {DEFAULT_LIMIT}.")}
            },
            "required": ["query"]
        })
    }
    fn prompt_snippet(&self) -> &str {
        "Search for tools that are not loaded yet and load the matches"
    }

    fn execute(
        &self,
        _call_id: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, String> {
        let query = args["query"].as_str().unwrap_or_default();
        if query.trim().is_empty() {
            return Err("query must not be empty".into());
        }
        let limit = match args.get("limit") {
            None | Some(Value::Null) => DEFAULT_LIMIT,
            Some(v) => match v.as_f64() {
                Some(l) if l > 0.0 && l.fract() == 0.0 => l as usize,
                _ => return Err("limit must be a positive integer".into()),
            },
        };
        let candidates = self.host.candidates(&ctx.abort);
        let names = rank(query, &candidates, limit);
        if !names.is_empty() {
            self.host.load(&names);
        }
        let text = if names.is_empty() {
            "No matching tools found.".to_string()
        } else {
            let lines: Vec<String> = names
                .iter()
                .map(|n| {
                    let d = candidates
                        .iter()
                        .find(|c| &c.name == n)
                        .map_or("", |c| c.description.as_str());
                    format!("- {n}: {}", d.trim().lines().next().unwrap_or(""))
                })
                .collect();
            format!(
                "Loaded {} tool{}. They are available from your next call:\n{}",
                names.len(),
                if names.len() == 1 { "" } else { "s" },
                lines.join("\n")
            )
        };
        Ok(ToolOutput::text(text).with_details(json!({ "loaded": names })))
    }
}

#[cfg(test)]
#[path = "tests/search.rs"]
mod tests;
