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

/// An action id, its default keys and a description for `/hotkeys`.
pub struct Definition {
    pub id: &'static str,
    pub default_keys: &'static [&'static str],
    pub description: &'static str,
}

/// The TUI library's own actions (the app adds its own on top).
pub const TUI_DEFINITIONS: &[Definition] = &[
    Definition {
        id: "tui.editor.cursorUp",
        default_keys: &["up"],
        description: "Move cursor up",
    },
    Definition {
        id: "tui.editor.cursorDown",
        default_keys: &["down"],
        description: "Move cursor down",
    },
    Definition {
        id: "tui.editor.cursorLeft",
        default_keys: &["left", "ctrl+b"],
        description: "Move cursor left",
    },
    Definition {
        id: "tui.editor.cursorRight",
        default_keys: &["right", "ctrl+f"],
        description: "Move cursor right",
    },
    Definition {
        id: "tui.editor.cursorWordLeft",
        default_keys: &["alt+left", "ctrl+left", "alt+b"],
        description: "Move cursor word left",
    },
    Definition {
        id: "tui.editor.cursorWordRight",
        default_keys: &["alt+right", "ctrl+right", "alt+f"],
        description: "Move cursor word right",
    },
    Definition {
        id: "tui.editor.cursorLineStart",
        default_keys: &["home", "ctrl+a"],
        description: "Move to line start",
    },
    Definition {
        id: "tui.editor.cursorLineEnd",
        default_keys: &["end", "ctrl+e"],
        description: "Move to line end",
    },
    Definition {
        id: "tui.editor.jumpForward",
        default_keys: &["ctrl+]"],
        description: "Jump forward to character",
    },
    Definition {
        id: "tui.editor.jumpBackward",
        default_keys: &["ctrl+alt+]"],
        description: "Jump backward to character",
    },
    Definition {
        id: "tui.editor.pageUp",
        default_keys: &["pageUp"],
        description: "Page up",
    },
    Definition {
        id: "tui.editor.pageDown",
        default_keys: &["pageDown"],
        description: "Page down",
    },
    Definition {
        id: "tui.editor.deleteCharBackward",
        default_keys: &["backspace"],
        description: "Delete character backward",
    },
    Definition {
        id: "tui.editor.deleteCharForward",
        default_keys: &["delete", "ctrl+d"],
        description: "Delete character forward",
    },
    Definition {
        id: "tui.editor.deleteWordBackward",
        default_keys: &["ctrl+w", "alt+backspace"],
        description: "Delete word backward",
    },
    Definition {
        id: "tui.editor.deleteWordForward",
        default_keys: &["alt+d", "alt+delete"],
        description: "Delete word forward",
    },
    Definition {
        id: "tui.editor.deleteToLineStart",
        default_keys: &["ctrl+u"],
        description: "Delete to line start",
    },
    Definition {
        id: "tui.editor.deleteToLineEnd",
        default_keys: &["ctrl+k"],
        description: "Delete to line end",
    },
    Definition {
        id: "tui.editor.yank",
        default_keys: &["ctrl+y"],
        description: "Yank",
    },
    Definition {
        id: "tui.editor.yankPop",
        default_keys: &["alt+y"],
        description: "Yank pop",
    },
    Definition {
        id: "tui.editor.undo",
        default_keys: &["ctrl+-"],
        description: "Undo",
    },
    Definition {
        id: "tui.input.newLine",
        default_keys: &["shift+enter"],
        description: "Insert newline",
    },
    Definition {
        id: "tui.input.submit",
        default_keys: &["enter"],
        description: "Submit input",
    },
    Definition {
        id: "tui.input.tab",
        default_keys: &["tab"],
        description: "Tab / autocomplete",
    },
    Definition {
        id: "tui.input.copy",
        default_keys: &["ctrl+c"],
        description: "Copy selection",
    },
    Definition {
        id: "tui.select.up",
        default_keys: &["up"],
        description: "Move selection up",
    },
    Definition {
        id: "tui.select.down",
        default_keys: &["down"],
        description: "Move selection down",
    },
    Definition {
        id: "tui.select.pageUp",
        default_keys: &["pageUp"],
        description: "Selection page up",
    },
    Definition {
        id: "tui.select.pageDown",
        default_keys: &["pageDown"],
        description: "Selection page down",
    },
    Definition {
        id: "tui.select.confirm",
        default_keys: &["enter"],
        description: "Confirm selection",
    },
    Definition {
        id: "tui.select.cancel",
        default_keys: &["escape", "ctrl+c"],
        description: "Cancel selection",
    },
];

/// No Ctrl+Z job control on Windows.
const SUSPEND_KEYS: &[&str] = if cfg!(windows) { &[] } else { &["ctrl+z"] };
/// Ctrl+V is the terminal's own paste on Windows.
const PASTE_IMAGE_KEYS: &[&str] = if cfg!(windows) {
    &["alt+v"]
} else {
    &["ctrl+v"]
};

/// The coding agent's actions (pi-coding-agent's table), after the TUI's own.
pub const APP_DEFINITIONS: &[Definition] = &[
    Definition {
        id: "app.interrupt",
        default_keys: &["escape"],
        description: "Cancel or abort",
    },
    Definition {
        id: "app.clear",
        default_keys: &["ctrl+c"],
        description: "Clear editor",
    },
    Definition {
        id: "app.exit",
        default_keys: &["ctrl+d"],
        description: "Exit when editor is empty",
    },
    Definition {
        id: "app.suspend",
        default_keys: SUSPEND_KEYS,
        description: "Suspend to background",
    },
    Definition {
        id: "app.thinking.cycle",
        default_keys: &["shift+tab"],
        description: "Cycle thinking level",
    },
    Definition {
        id: "app.model.cycleForward",
        default_keys: &["ctrl+p"],
        description: "Cycle to next model",
    },
    Definition {
        id: "app.model.cycleBackward",
        default_keys: &["shift+ctrl+p"],
        description: "Cycle to previous model",
    },
    Definition {
        id: "app.model.select",
        default_keys: &["ctrl+l"],
        description: "Open model selector",
    },
    Definition {
        id: "app.tools.expand",
        default_keys: &["ctrl+o"],
        description: "Toggle tool output",
    },
    Definition {
        id: "app.thinking.toggle",
        default_keys: &["ctrl+t"],
        description: "Toggle thinking blocks",
    },
    Definition {
        id: "app.session.toggleNamedFilter",
        default_keys: &["ctrl+n"],
        description: "Toggle named session filter",
    },
    Definition {
        id: "app.editor.external",
        default_keys: &["ctrl+g"],
        description: "Open external editor",
    },
    Definition {
        id: "app.message.followUp",
        default_keys: &["alt+enter"],
        description: "Queue follow-up message",
    },
    Definition {
        id: "app.message.dequeue",
        default_keys: &["alt+up"],
        description: "Restore queued messages",
    },
    Definition {
        id: "app.clipboard.pasteImage",
        default_keys: PASTE_IMAGE_KEYS,
        description: "Paste image from clipboard",
    },
    Definition {
        id: "app.session.new",
        default_keys: &[],
        description: "Start a new session",
    },
    Definition {
        id: "app.session.tree",
        default_keys: &[],
        description: "Open session tree",
    },
    Definition {
        id: "app.session.fork",
        default_keys: &[],
        description: "Fork current session",
    },
    Definition {
        id: "app.session.resume",
        default_keys: &[],
        description: "Resume a session",
    },
    Definition {
        id: "app.tree.foldOrUp",
        default_keys: &["ctrl+left", "alt+left"],
        description: "Fold tree branch or move up",
    },
    Definition {
        id: "app.tree.unfoldOrDown",
        default_keys: &["ctrl+right", "alt+right"],
        description: "Unfold tree branch or move down",
    },
    Definition {
        id: "app.tree.editLabel",
        default_keys: &["shift+l"],
        description: "Edit tree label",
    },
    Definition {
        id: "app.tree.toggleLabelTimestamp",
        default_keys: &["shift+t"],
        description: "Toggle tree label timestamps",
    },
    Definition {
        id: "app.session.togglePath",
        default_keys: &["ctrl+p"],
        description: "Toggle session path display",
    },
    Definition {
        id: "app.session.toggleSort",
        default_keys: &["ctrl+s"],
        description: "Toggle session sort mode",
    },
    Definition {
        id: "app.session.rename",
        default_keys: &["ctrl+r"],
        description: "Rename session",
    },
    Definition {
        id: "app.session.delete",
        default_keys: &["ctrl+d"],
        description: "Delete session",
    },
    Definition {
        id: "app.session.deleteNoninvasive",
        default_keys: &["ctrl+backspace"],
        description: "Delete session when query is empty",
    },
    Definition {
        id: "app.models.save",
        default_keys: &["ctrl+s"],
        description: "Save model selection",
    },
    Definition {
        id: "app.models.enableAll",
        default_keys: &["ctrl+a"],
        description: "Enable all models",
    },
    Definition {
        id: "app.models.clearAll",
        default_keys: &["ctrl+x"],
        description: "Clear all models",
    },
    Definition {
        id: "app.models.toggleProvider",
        default_keys: &["ctrl+p"],
        description: "Toggle all models for provider",
    },
    Definition {
        id: "app.models.reorderUp",
        default_keys: &["alt+up"],
        description: "Move model up in order",
    },
    Definition {
        id: "app.models.reorderDown",
        default_keys: &["alt+down"],
        description: "Move model down in order",
    },
    Definition {
        id: "app.tree.filter.default",
        default_keys: &["ctrl+d"],
        description: "Tree filter: default view",
    },
    Definition {
        id: "app.tree.filter.noTools",
        default_keys: &["ctrl+t"],
        description: "Tree filter: hide tool results",
    },
    Definition {
        id: "app.tree.filter.userOnly",
        default_keys: &["ctrl+u"],
        description: "Tree filter: user messages only",
    },
    Definition {
        id: "app.tree.filter.labeledOnly",
        default_keys: &["ctrl+l"],
        description: "Tree filter: labeled entries only",
    },
    Definition {
        id: "app.tree.filter.all",
        default_keys: &["ctrl+a"],
        description: "Tree filter: show all entries",
    },
    Definition {
        id: "app.tree.filter.cycleForward",
        default_keys: &["ctrl+o"],
        description: "Tree filter: cycle forward",
    },
    Definition {
        id: "app.tree.filter.cycleBackward",
        default_keys: &["shift+ctrl+o"],
        description: "Tree filter: cycle backward",
    },
];

/// Every known action: the TUI's, then the app's.
pub fn all_definitions() -> impl Iterator<Item = &'static Definition> {
    TUI_DEFINITIONS.iter().chain(APP_DEFINITIONS)
}

/// The definition of action `id`.
pub fn definition(id: &str) -> Option<&'static Definition> {
    all_definitions().find(|d| d.id == id)
}

/// Old (pre-namespace) action names and what pi renamed them to.
pub const LEGACY_IDS: &[(&str, &str)] = &[
    ("cursorUp", "tui.editor.cursorUp"),
    ("cursorDown", "tui.editor.cursorDown"),
    ("cursorLeft", "tui.editor.cursorLeft"),
    ("cursorRight", "tui.editor.cursorRight"),
    ("cursorWordLeft", "tui.editor.cursorWordLeft"),
    ("cursorWordRight", "tui.editor.cursorWordRight"),
    ("cursorLineStart", "tui.editor.cursorLineStart"),
    ("cursorLineEnd", "tui.editor.cursorLineEnd"),
    ("jumpForward", "tui.editor.jumpForward"),
    ("jumpBackward", "tui.editor.jumpBackward"),
    ("pageUp", "tui.editor.pageUp"),
    ("pageDown", "tui.editor.pageDown"),
    ("deleteCharBackward", "tui.editor.deleteCharBackward"),
    ("deleteCharForward", "tui.editor.deleteCharForward"),
    ("deleteWordBackward", "tui.editor.deleteWordBackward"),
    ("deleteWordForward", "tui.editor.deleteWordForward"),
    ("deleteToLineStart", "tui.editor.deleteToLineStart"),
    ("deleteToLineEnd", "tui.editor.deleteToLineEnd"),
    ("yank", "tui.editor.yank"),
    ("yankPop", "tui.editor.yankPop"),
    ("undo", "tui.editor.undo"),
    ("newLine", "tui.input.newLine"),
    ("submit", "tui.input.submit"),
    ("tab", "tui.input.tab"),
    ("copy", "tui.input.copy"),
    ("selectUp", "tui.select.up"),
    ("selectDown", "tui.select.down"),
    ("selectPageUp", "tui.select.pageUp"),
    ("selectPageDown", "tui.select.pageDown"),
    ("selectConfirm", "tui.select.confirm"),
    ("selectCancel", "tui.select.cancel"),
    ("interrupt", "app.interrupt"),
    ("clear", "app.clear"),
    ("exit", "app.exit"),
    ("suspend", "app.suspend"),
    ("cycleThinkingLevel", "app.thinking.cycle"),
    ("cycleModelForward", "app.model.cycleForward"),
    ("cycleModelBackward", "app.model.cycleBackward"),
    ("selectModel", "app.model.select"),
    ("expandTools", "app.tools.expand"),
    ("toggleThinking", "app.thinking.toggle"),
    ("toggleSessionNamedFilter", "app.session.toggleNamedFilter"),
    ("externalEditor", "app.editor.external"),
    ("followUp", "app.message.followUp"),
    ("dequeue", "app.message.dequeue"),
    ("pasteImage", "app.clipboard.pasteImage"),
    ("newSession", "app.session.new"),
    ("tree", "app.session.tree"),
    ("fork", "app.session.fork"),
    ("resume", "app.session.resume"),
    ("treeFoldOrUp", "app.tree.foldOrUp"),
    ("treeUnfoldOrDown", "app.tree.unfoldOrDown"),
    ("treeEditLabel", "app.tree.editLabel"),
    ("treeToggleLabelTimestamp", "app.tree.toggleLabelTimestamp"),
    ("toggleSessionPath", "app.session.togglePath"),
    ("toggleSessionSort", "app.session.toggleSort"),
    ("renameSession", "app.session.rename"),
    ("deleteSession", "app.session.delete"),
    ("deleteSessionNoninvasive", "app.session.deleteNoninvasive"),
];

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
    extras.sort_by(|a, b| a.0.cmp(&b.0));
    ordered.extend(extras);
    (ordered, migrated)
}

/// Rewrites `path` with migrated ids if it uses old ones (pi's start-up migration).
/// Missing or malformed files are left alone.
pub fn migrate_file(path: &Path) -> std::io::Result<bool> {
    let Ok(text) = std::fs::read_to_string(path) else {
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
        std::fs::write(path, out)?;
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
    let text = match std::fs::read_to_string(path) {
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
