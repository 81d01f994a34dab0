//! The default key table: every `tui.*` and `app.*` action pi defines, with its default keys
//! and the description `/hotkeys` shows, and the old action names pi migrates.

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
        id: "tui.editor.historyPrevious",
        default_keys: &[],
        description: "Select previous prompt history entry",
    },
    Definition {
        id: "tui.editor.historyNext",
        default_keys: &[],
        description: "Select next prompt history entry",
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
        default_keys: &["pageUp", "ctrl+pageUp"],
        description: "Page up",
    },
    Definition {
        id: "tui.editor.pageDown",
        default_keys: &["pageDown", "ctrl+pageDown"],
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
        default_keys: &["shift+enter", "ctrl+j"],
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
    // Fullscreen mode: these shadow the editor's keys of the same name while it is on.
    Definition {
        id: "tui.altScreen.pageUp",
        default_keys: &["pageUp"],
        description: "Scroll the transcript up by one page",
    },
    Definition {
        id: "tui.altScreen.pageDown",
        default_keys: &["pageDown"],
        description: "Scroll the transcript down by one page",
    },
    Definition {
        id: "tui.altScreen.halfPageUp",
        default_keys: &[],
        description: "Scroll the transcript up by half a page",
    },
    Definition {
        id: "tui.altScreen.halfPageDown",
        default_keys: &[],
        description: "Scroll the transcript down by half a page",
    },
    Definition {
        id: "tui.altScreen.lineUp",
        default_keys: &[],
        description: "Scroll the transcript up by one line",
    },
    Definition {
        id: "tui.altScreen.lineDown",
        default_keys: &[],
        description: "Scroll the transcript down by one line",
    },
    Definition {
        id: "tui.altScreen.previousPrompt",
        default_keys: &["ctrl+shift+up", "ctrl+up"],
        description: "Jump to the previous marked message",
    },
    Definition {
        id: "tui.altScreen.nextPrompt",
        default_keys: &["ctrl+shift+down", "ctrl+down"],
        description: "Jump to the next marked message",
    },
    Definition {
        id: "tui.altScreen.search",
        default_keys: &["ctrl+shift+f"],
        description: "Search the rendered transcript",
    },
    Definition {
        id: "tui.altScreen.searchNext",
        default_keys: &["enter", "ctrl+g"],
        description: "Select the next search match",
    },
    Definition {
        id: "tui.altScreen.searchPrevious",
        default_keys: &["shift+enter", "ctrl+shift+g"],
        description: "Select the previous search match",
    },
    Definition {
        id: "tui.altScreen.searchClose",
        default_keys: &["escape"],
        description: "Close transcript search",
    },
    Definition {
        id: "tui.altScreen.top",
        default_keys: &["ctrl+home"],
        description: "Scroll to the beginning of the transcript",
    },
    Definition {
        id: "tui.altScreen.bottom",
        default_keys: &["ctrl+end"],
        description: "Scroll to the transcript end and follow new output",
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
        id: "app.message.copy",
        default_keys: &["ctrl+x"],
        description: "Copy the selection or the last assistant message",
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
        id: "app.thinking.save",
        default_keys: &["ctrl+s"],
        description: "Save current thinking level to settings",
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
