//! Named actions and the keys bound to them: pi's defaults (the TUI's `tui.*` actions and
//! the coding agent's `app.*` actions), overridden per id from `keybindings.json` in the
//! agent dir. Components ask `keybindings::matches(event, "tui.select.up")` instead of
//! hard-coding keys.
//!
//! Loading never fails: a missing file means defaults, a malformed one is reported (with
//! its path) and ignored, old non-namespaced ids (`cursorUp`, `selectModel`) are migrated
//! the way pi migrates them, and keys claimed by several actions are reported as conflicts.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, OnceLock, RwLock};

use serde_json::{Map, Value};

use super::keys::{parse_key_id, KeyEvent};
use crate::util::sort;

#[path = "keybindings_defaults.rs"]
mod defaults;
pub use defaults::{Definition, APP_DEFINITIONS, LEGACY_IDS, TUI_DEFINITIONS};

/// Every known action: the TUI's, then the app's.
pub fn all_definitions() -> impl Iterator<Item = &'static Definition> {
    TUI_DEFINITIONS.iter().chain(APP_DEFINITIONS)
}

/// The definition of action `id`.
pub fn definition(id: &str) -> Option<&'static Definition> {
    all_definitions().find(|d| d.id == id)
}

/// Renames old ids to their namespaced form, as pi does at start-up. When both spellings
/// are present the namespaced one wins. Known ids come first in table order, then the
/// rest sorted; values (even odd ones) are kept untouched. Returns whether anything moved.
pub fn migrate_config(raw: &Map<String, Value>) -> (Map<String, Value>, bool) {
    let mut migrated = false;
    let mut renamed: Map<String, Value> = Map::new();
    for (key, value) in raw {
        let new_key = LEGACY_IDS
            .iter()
            .find(|(old, _)| old == key)
            .map_or(key.as_str(), |(_, new)| *new);
        if new_key != key {
            migrated = true;
            if raw.contains_key(new_key) {
                continue;
            }
        }
        renamed.insert(new_key.to_string(), value.clone());
    }
    let mut ordered = Map::new();
    for d in all_definitions() {
        if let Some(v) = renamed.remove(d.id) {
            ordered.insert(d.id.to_string(), v);
        }
    }
    let mut extras: Vec<(String, Value)> = renamed.into_iter().collect();
    sort::sort_by(&mut extras, |a, b| a.0.cmp(&b.0));
    ordered.extend(extras);
    (ordered, migrated)
}

/// Rewrites `path` with migrated ids if it uses old ones (pi's start-up migration).
/// Missing or malformed files are left alone.
pub fn migrate_file(path: &Path) -> std::io::Result<bool> {
    let Ok(text) = crate::util::files::read_limited_string(path, crate::util::files::Limit::CONFIG)
    else {
        return Ok(false);
    };
    let Ok(Value::Object(raw)) = serde_json::from_str::<Value>(&text) else {
        return Ok(false);
    };
    let (config, migrated) = migrate_config(&raw);
    if migrated {
        let mut out =
            serde_json::to_string_pretty(&Value::Object(config)).map_err(std::io::Error::other)?;
        out.push('\n');
        // Atomic, so a crash mid-write never leaves the user's bindings half written.
        crate::util::atomic::replace(
            path,
            out.as_bytes(),
            crate::util::atomic::Options::durable(),
        )?;
    }
    Ok(migrated)
}

/// Several actions the user bound to the same key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    pub key: String,
    pub ids: Vec<String>,
}

/// The result of reading `keybindings.json`.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    pub bindings: Keybindings,
    pub conflicts: Vec<Conflict>,
    /// Problems worth showing the user (malformed file, bad values, unknown key names).
    pub warnings: Vec<String>,
}

/// Reads `<agent_dir>/keybindings.json` (the agent dir is `$PI_CODING_AGENT_DIR` or
/// `~/.pi/agent`; see `resources::agent_dir`).
pub fn load(agent_dir: &Path) -> Loaded {
    load_file(&agent_dir.join("keybindings.json"))
}

/// Reads one keybindings file over the defaults. Never fails.
pub fn load_file(path: &Path) -> Loaded {
    let mut loaded = Loaded {
        bindings: Keybindings::defaults(),
        ..Loaded::default()
    };
    let text =
        match crate::util::files::read_limited_string(path, crate::util::files::Limit::CONFIG) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return loaded,
            Err(e) => {
                loaded
                    .warnings
                    .push(format!("Could not read {}: {e}", path.display()));
                return loaded;
            }
        };
    let raw = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => map,
        Ok(_) => {
            loaded.warnings.push(format!(
                "Ignoring {}: expected a JSON object of action ids to keys",
                path.display()
            ));
            return loaded;
        }
        Err(e) => {
            loaded
                .warnings
                .push(format!("Ignoring malformed {}: {e}", path.display()));
            return loaded;
        }
    };
    let (config, _) = migrate_config(&raw);
    let mut user = Vec::new();
    for (id, value) in &config {
        let keys = match value {
            Value::String(k) => vec![k.clone()],
            Value::Array(items) if items.iter().all(Value::is_string) => items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            _ => {
                loaded.warnings.push(format!(
                    "{}: \"{id}\" must be a key or a list of keys",
                    path.display()
                ));
                continue;
            }
        };
        for k in &keys {
            if parse_key_id(k).is_none() {
                loaded.warnings.push(format!(
                    "{}: unknown key \"{k}\" for \"{id}\"",
                    path.display()
                ));
            }
        }
        user.push((id.clone(), keys));
    }
    let (bindings, conflicts) = Keybindings::with_user(&user);
    loaded.bindings = bindings;
    loaded.conflicts = conflicts;
    loaded
}

fn dedup(keys: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for k in keys {
        if !out.contains(&k) {
            out.push(k);
        }
    }
    out
}

/// Keys bound to each action id.
#[derive(Debug, Clone, Default)]
pub struct Keybindings {
    keys: HashMap<String, Vec<String>>,
}

impl Keybindings {
    /// The defaults of `definitions`.
    pub fn from_definitions<'a>(definitions: impl IntoIterator<Item = &'a Definition>) -> Self {
        let keys = definitions
            .into_iter()
            .map(|d| {
                let keys = dedup(d.default_keys.iter().map(|k| k.to_string()));
                (d.id.to_string(), keys)
            })
            .collect();
        Keybindings { keys }
    }

    /// pi's defaults for every known action.
    pub fn defaults() -> Self {
        Self::from_definitions(all_definitions())
    }

    /// The defaults with the user's bindings replacing them per id (ids pi does not know
    /// are kept too, for extensions). Keys the user gave to several known actions are
    /// returned as conflicts, in the order first claimed.
    pub fn with_user(user: &[(String, Vec<String>)]) -> (Self, Vec<Conflict>) {
        let mut bindings = Self::defaults();
        let mut claims: Vec<Conflict> = Vec::new();
        for (id, keys) in user {
            let keys = dedup(keys.iter().cloned());
            if definition(id).is_some() {
                for k in &keys {
                    match claims.iter_mut().find(|c| &c.key == k) {
                        Some(c) => c.ids.push(id.clone()),
                        None => claims.push(Conflict {
                            key: k.clone(),
                            ids: vec![id.clone()],
                        }),
                    }
                }
            }
            bindings.set(id, keys);
        }
        claims.retain(|c| c.ids.len() > 1);
        (bindings, claims)
    }

    /// Replaces the keys of one action.
    pub fn set(&mut self, id: &str, keys: Vec<String>) {
        self.keys.insert(id.to_string(), keys);
    }

    pub fn keys(&self, id: &str) -> &[String] {
        self.keys.get(id).map(Vec::as_slice).unwrap_or(&[])
    }

    pub fn matches(&self, event: &KeyEvent, id: &str) -> bool {
        self.keys(id).iter().any(|k| event.matches(k))
    }

    /// The keys of `id` as pi shows them in hints: `"ctrl+a/home"` style, empty if unbound.
    pub fn key_text(&self, id: &str) -> String {
        self.keys(id).join("/")
    }
}

/// One row of `/hotkeys`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hotkey {
    pub id: &'static str,
    pub keys: Vec<String>,
    pub description: &'static str,
}

/// Every known action with its current keys, in table order (for `/hotkeys`).
pub fn hotkeys(bindings: &Keybindings) -> Vec<Hotkey> {
    all_definitions()
        .map(|d| Hotkey {
            id: d.id,
            keys: bindings.keys(d.id).to_vec(),
            description: d.description,
        })
        .collect()
}

/// Capitalizes each part of a key text for display: `"ctrl+a/home"` → `"Ctrl+A/Home"`.
pub fn display_keys(text: &str) -> String {
    text.split('/')
        .map(|alt| {
            alt.split('+')
                .map(|part| {
                    let mut chars = part.chars();
                    match chars.next() {
                        Some(c) => c.to_uppercase().chain(chars).collect(),
                        None => String::new(),
                    }
                })
                .collect::<Vec<_>>()
                .join("+")
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The `/hotkeys` tables as pi prints them (Markdown), with the current keys.
pub fn hotkeys_markdown(b: &Keybindings) -> String {
    let k = |id: &str| format!("`{}`", display_keys(&b.key_text(id)));
    let row = |keys: String, action: &str| format!("| {keys} | {action} |\n");
    let head = "| Key | Action |\n|-----|--------|\n";
    let mut out = String::from("**Navigation**\n");
    out += head;
    let arrows = [
        "tui.editor.cursorUp",
        "tui.editor.cursorDown",
        "tui.editor.cursorLeft",
        "tui.editor.cursorRight",
    ]
    .iter()
    .map(|id| k(id))
    .collect::<Vec<_>>()
    .join(" / ");
    out += &row(arrows, "Move cursor / browse history (Up when empty)");
    let pair = |a: &str, b: &str| format!("{} / {}", k(a), k(b));
    out += &row(
        pair("tui.editor.cursorWordLeft", "tui.editor.cursorWordRight"),
        "Move by word",
    );
    out += &row(k("tui.editor.cursorLineStart"), "Start of line");
    out += &row(k("tui.editor.cursorLineEnd"), "End of line");
    out += &row(k("tui.editor.jumpForward"), "Jump forward to character");
    out += &row(k("tui.editor.jumpBackward"), "Jump backward to character");
    out += &row(
        pair("tui.editor.pageUp", "tui.editor.pageDown"),
        "Scroll by page",
    );
    out += "\n**Editing**\n";
    out += head;
    let new_line = if cfg!(windows) {
        "New line (Ctrl+Enter on Windows Terminal)"
    } else {
        "New line"
    };
    for (id, action) in [
        ("tui.input.submit", "Send message"),
        ("tui.input.newLine", new_line),
        ("tui.editor.deleteWordBackward", "Delete word backwards"),
        ("tui.editor.deleteWordForward", "Delete word forwards"),
        ("tui.editor.deleteToLineStart", "Delete to start of line"),
        ("tui.editor.deleteToLineEnd", "Delete to end of line"),
        ("tui.editor.yank", "Paste the most-recently-deleted text"),
        (
            "tui.editor.yankPop",
            "Cycle through the deleted text after pasting",
        ),
        ("tui.editor.undo", "Undo"),
    ] {
        out += &row(k(id), action);
    }
    out += "\n**Other**\n";
    out += head;
    for (id, action) in [
        ("tui.input.tab", "Path completion / accept autocomplete"),
        ("app.interrupt", "Cancel autocomplete / abort streaming"),
        ("app.clear", "Clear editor (first) / exit (second)"),
        ("app.exit", "Exit (when editor is empty)"),
        ("app.suspend", "Suspend to background"),
        ("app.thinking.cycle", "Cycle thinking level"),
    ] {
        out += &row(k(id), action);
    }
    out += &row(
        pair("app.model.cycleForward", "app.model.cycleBackward"),
        "Cycle models",
    );
    for (id, action) in [
        ("app.model.select", "Open model selector"),
        ("app.tools.expand", "Toggle tool output expansion"),
        ("app.thinking.toggle", "Toggle thinking block visibility"),
        ("app.editor.external", "Edit message in external editor"),
        (
            "app.message.copy",
            "Copy selection or last assistant message",
        ),
        ("app.message.followUp", "Queue follow-up message"),
        ("app.message.dequeue", "Restore queued messages"),
        ("app.clipboard.pasteImage", "Paste image from clipboard"),
    ] {
        out += &row(k(id), action);
    }
    out += &row("`/`".into(), "Slash commands");
    out += &row("`!`".into(), "Run bash command");
    out += &row("`!!`".into(), "Run bash command (excluded from context)");
    out
}

fn global() -> &'static RwLock<Arc<Keybindings>> {
    static GLOBAL: OnceLock<RwLock<Arc<Keybindings>>> = OnceLock::new();
    GLOBAL.get_or_init(|| RwLock::new(Arc::new(Keybindings::defaults())))
}

/// The process-wide bindings components consult.
pub fn current() -> Arc<Keybindings> {
    global()
        .read()
        .map(|g| Arc::clone(&g))
        .unwrap_or_else(|e| Arc::clone(&e.into_inner()))
}

/// Installs new process-wide bindings (start-up, `/reload`).
pub fn install(bindings: Keybindings) {
    let mut guard = global().write().unwrap_or_else(|e| e.into_inner());
    *guard = Arc::new(bindings);
}

/// Whether `event` triggers action `id` under the current bindings.
pub fn matches(event: &KeyEvent, id: &str) -> bool {
    current().matches(event, id)
}

#[cfg(test)]
#[path = "keybindings_tests.rs"]
mod tests;
