//! Which tools a session starts with, as pi 1.x chooses them. The default set is `read, bash,
//! edit, write`, or the `defaultTools` setting (global, then project; a list of only
//! `+name`/`-name` entries edits the inherited one). `--tools` either replaces it with names and
//! `*` patterns (then also choosing extension tools) or, when made only of `+name`/`-name`,
//! edits it; `--no-tools` starts with nothing, `--no-builtin-tools` with extension tools only;
//! `--exclude-tools` removes names and patterns after everything else. Unknown names are
//! ignored, as in pi.

use std::sync::Arc;

use serde_json::Value;

use crate::agent::Tool;
use crate::mcp::search::Candidate;
use crate::resources::settings::Settings;
use crate::tools::codemode::loadout::Mode;
use crate::tools::codemode::tool::{CodemodeTool, CODEMODE_TOOL_NAME};
use crate::tools::{
    bash::{BashTool, SessionEnv},
    edit::EditTool,
    find::FindTool,
    grep::GrepTool,
    ls::LsTool,
    read::ReadTool,
    write::WriteTool,
};

/// Every built-in tool name, in pi's registry order.
pub const BUILTIN_TOOLS: [&str; 7] = ["read", "bash", "edit", "write", "grep", "find", "ls"];
pub const DEFAULT_TOOLS: [&str; 4] = ["read", "bash", "edit", "write"];

type Tools = Vec<Arc<dyn Tool>>;

/// The flags that decide the tool set.
#[derive(Debug, Clone, Default)]
pub struct ToolChoice {
    /// `--tools`: names and patterns, or only `+name`/`-name` entries.
    pub allow: Option<Vec<String>>,
    pub no_tools: bool,
    pub no_builtin_tools: bool,
}

/// A built-in tool by name, configured from settings; `bash` gives the model's commands the
/// session variables in `env` (which the session keeps current).
pub fn builtin(name: &str, settings: &Settings, env: &SessionEnv) -> Option<Arc<dyn Tool>> {
    Some(match name {
        "read" => Arc::new(ReadTool),
        "write" => Arc::new(WriteTool),
        "edit" => Arc::new(EditTool),
        "bash" => Arc::new(BashTool {
            shell: shell_path(settings),
            command_prefix: settings.str(&["shellCommandPrefix"]).map(str::to_string),
            session_env: Some(env.clone()),
        }),
        "grep" => Arc::new(GrepTool),
        "find" => Arc::new(FindTool),
        "ls" => Arc::new(LsTool),
        CODEMODE_TOOL_NAME => Arc::new(CodemodeTool {
            ranker: Some(Arc::new(rank_tools)),
            store: Some(env.codemode_store().clone()),
            mode: Mode::from_setting(settings.str(&["codemode", "mode"])),
            inline_budget: settings.u64(&["codemode", "inlineBudget"]),
            models: Some(env.models().clone()),
        }),
        _ => return None,
    })
}

/// The `shellPath` setting, a leading `~` expanded to the home folder (as pi 1.x does).
fn shell_path(settings: &Settings) -> Option<String> {
    settings.str(&["shellPath"]).map(|p| {
        crate::resources::expand_tilde(p)
            .to_string_lossy()
            .into_owned()
    })
}

/// `searchTools()` in codemode scripts ranks as `tool_search` does (pi's BM25).
fn rank_tools(query: &str, tools: &[Arc<dyn Tool>], limit: usize) -> Vec<String> {
    let candidates: Vec<Candidate> = tools
        .iter()
        .map(|t| Candidate {
            name: t.name().to_string(),
            description: t.description().to_string(),
            parameters: t.parameters(),
            namespace: t.namespace().map(|n| crate::mcp::tools::Namespace {
                name: n.name,
                description: n.description,
                instructions: n.instructions,
            }),
        })
        .collect();
    crate::mcp::search::rank(query, &candidates, limit)
}

/// Every built-in tool, configured from settings, in registry order, then `codemode` (an
/// opt-in tool: `defaultTools: ["+codemode"]` or `--tools +codemode`).
pub fn all_builtins(settings: &Settings, env: &SessionEnv) -> Tools {
    BUILTIN_TOOLS
        .iter()
        .chain([&CODEMODE_TOOL_NAME])
        .filter_map(|n| builtin(n, settings, env))
        .collect()
}

fn is_modifier(entry: &str) -> bool {
    entry.starts_with('+') || entry.starts_with('-')
}

/// What is wrong with a `--tools` list, worded as pi words it: plain names and `+`/`-` entries
/// cannot be mixed, and `+`/`-` entries take exact names.
pub fn tool_list_error(entries: &[String]) -> Option<String> {
    let modifiers: Vec<&String> = entries.iter().filter(|e| is_modifier(e)).collect();
    if modifiers.is_empty() {
        return None;
    }
    if modifiers.len() < entries.len() {
        return Some("tool names cannot be mixed with +name or -name entries".into());
    }
    modifiers
        .iter()
        .find(|e| e.contains('*'))
        .map(|p| format!("+name and -name entries take exact tool names, not patterns: {p}"))
}

/// Applies the `+name`/`-name` entries of `entries` to `base`, in order.
pub fn apply_modifiers(mut base: Vec<String>, entries: &[String]) -> Vec<String> {
    for entry in entries {
        if let Some(name) = entry.strip_prefix('+') {
            if !name.is_empty() && !base.iter().any(|b| b == name) {
                base.push(name.to_string());
            }
        } else if let Some(name) = entry.strip_prefix('-') {
            base.retain(|b| b != name);
        }
    }
    base
}

fn string_entries(v: &Value) -> Option<Vec<String>> {
    Some(
        v.as_array()?
            .iter()
            .filter_map(|e| e.as_str().map(str::to_string))
            .collect(),
    )
}

/// The `defaultTools` setting resolved: the project list replaces the global one unless it is
/// made only of `+name`/`-name` entries, which then apply on top; plain names form the set
/// (pi's defaults when there are none) and the `+`/`-` entries edit it in order. `None` when
/// neither file sets it.
pub fn default_tools(settings: &Settings) -> Option<Vec<String>> {
    let global = settings.global_map().get("defaultTools");
    let project = settings.project_map().get("defaultTools");
    let entries = match (global, project) {
        (None, None) => return None,
        (Some(g), None) => string_entries(g).unwrap_or_default(),
        (g, Some(p)) => {
            let p = string_entries(p).unwrap_or_default();
            match g.and_then(string_entries) {
                Some(mut g) if p.iter().all(|e| is_modifier(e)) => {
                    g.extend(p);
                    g
                }
                _ => p,
            }
        }
    };
    let plain: Vec<String> = entries
        .iter()
        .filter(|e| !is_modifier(e))
        .cloned()
        .collect();
    let base = if plain.is_empty() && !entries.is_empty() {
        DEFAULT_TOOLS.iter().map(|s| s.to_string()).collect()
    } else {
        plain
    };
    Some(apply_modifiers(base, &entries))
}

/// Tool names and `*` patterns (`*` matches any run of characters).
#[derive(Debug, Clone)]
struct NameMatcher(Vec<String>);

impl NameMatcher {
    fn matches(&self, name: &str) -> bool {
        self.0.iter().any(|entry| wildcard_match(entry, name))
    }
}

fn wildcard_match(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// The tool selection of one session, before the tools themselves are known.
#[derive(Debug, Clone)]
pub struct ToolPlan {
    /// Names active at start, in order (unknown names are skipped later).
    initial: Vec<String>,
    /// `--tools` (or `--no-tools`): only matching tools are registered, and each is active.
    allowed: Option<NameMatcher>,
    /// `--exclude-tools`: matching tools are neither registered nor active.
    excluded: Option<NameMatcher>,
}

impl ToolPlan {
    pub fn new(choice: &ToolChoice, exclude: Option<&[String]>, settings: &Settings) -> ToolPlan {
        let defaults = if choice.no_tools || choice.no_builtin_tools {
            Vec::new()
        } else {
            default_tools(settings)
                .unwrap_or_else(|| DEFAULT_TOOLS.iter().map(|s| s.to_string()).collect())
        };
        let modifiers = choice
            .allow
            .as_ref()
            .filter(|list| list.iter().any(|e| is_modifier(e)));
        let (initial, allowed) = match (modifiers, &choice.allow) {
            (Some(m), _) => {
                let selected = apply_modifiers(defaults, m);
                let allowed = choice.no_tools.then(|| selected.clone());
                (selected, allowed)
            }
            (None, Some(list)) => (list.clone(), Some(list.clone())),
            (None, None) if choice.no_tools => (Vec::new(), Some(Vec::new())),
            (None, None) => (defaults, None),
        };
        ToolPlan {
            initial,
            allowed: allowed.map(NameMatcher),
            excluded: exclude.map(|e| NameMatcher(e.to_vec())),
        }
    }

    fn registered(&self, name: &str) -> bool {
        !self.excluded.as_ref().is_some_and(|m| m.matches(name))
            && self.allowed.as_ref().is_none_or(|m| m.matches(name))
    }

    /// The active tools and the registry (what `setActiveTools` may choose from), from every
    /// built-in and the extension tools; an extension tool replaces a built-in of its name.
    pub fn assemble(&self, builtins: Tools, extension: Tools) -> (Tools, Tools) {
        let mut registry: Tools = builtins
            .into_iter()
            .filter(|t| self.registered(t.name()))
            .collect();
        let mut extension_names = Vec::new();
        for t in extension.into_iter().filter(|t| self.registered(t.name())) {
            extension_names.push(t.name().to_string());
            match registry.iter().position(|b| b.name() == t.name()) {
                Some(i) => registry[i] = t,
                None => registry.push(t),
            }
        }
        let mut names: Vec<String> = self
            .initial
            .iter()
            .filter(|n| self.registered(n))
            .cloned()
            .collect();
        match &self.allowed {
            Some(allowed) => names.extend(
                registry
                    .iter()
                    .map(|t| t.name().to_string())
                    .filter(|n| allowed.matches(n)),
            ),
            None => names.extend(extension_names),
        }
        let mut seen = std::collections::HashSet::new();
        let active = names
            .iter()
            .filter(|n| seen.insert(n.as_str()))
            .filter_map(|n| registry.iter().find(|t| t.name() == n).cloned())
            .collect();
        (active, registry)
    }
}

/// The active built-in tools for `choice` (no extensions, nothing excluded).
pub fn select(choice: &ToolChoice, settings: &Settings, env: &SessionEnv) -> Tools {
    ToolPlan::new(choice, None, settings)
        .assemble(all_builtins(settings, env), Vec::new())
        .0
}

#[cfg(test)]
#[path = "tools_tests.rs"]
mod tests;
