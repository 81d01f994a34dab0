//! Named actions and the keys bound to them: pi's defaults, overridable from
//! `keybindings.json`. Components ask `keybindings::matches(event, "tui.select.up")` instead
//! of hard-coding keys.

use std::sync::{Arc, OnceLock, RwLock};

use super::keys::KeyEvent;

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

/// Keys bound to each action id.
#[derive(Debug, Clone, Default)]
pub struct Keybindings {
    keys: std::collections::HashMap<String, Vec<String>>,
}

impl Keybindings {
    /// The defaults of `definitions`.
    pub fn from_definitions<'a>(definitions: impl IntoIterator<Item = &'a Definition>) -> Self {
        let mut keys = std::collections::HashMap::new();
        for d in definitions {
            keys.insert(
                d.id.to_string(),
                d.default_keys.iter().map(|k| k.to_string()).collect(),
            );
        }
        Keybindings { keys }
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
}

fn global() -> &'static RwLock<Arc<Keybindings>> {
    static GLOBAL: OnceLock<RwLock<Arc<Keybindings>>> = OnceLock::new();
    GLOBAL.get_or_init(|| RwLock::new(Arc::new(Keybindings::from_definitions(TUI_DEFINITIONS))))
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
