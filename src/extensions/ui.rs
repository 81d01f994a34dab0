//! The UI an extension may ask for: blocking dialogs (select, confirm, input, editor, a
//! component of its own) and fire-and-forget notices (notify, status line, widgets, title,
//! editor text, footer and header, a custom editor, working message). Dialogs end with an
//! answer, or with their default when they time out, the run is aborted, or the mode has no
//! UI. An extension's own components are drawn by the extension (it sends their lines); the
//! UI sends keys back through their [`ComponentHandle`].

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::extension::Extension;
use crate::ai::Abort;

/// A component an extension draws: the UI shows its lines and sends it keys.
#[derive(Clone)]
pub struct ComponentHandle {
    pub ext: Arc<Extension>,
    pub id: u64,
}

impl ComponentHandle {
    /// Sends a key (a raw terminal input sequence, as pi-tui components expect).
    pub fn input(&self, data: &str) {
        self.ext
            .process
            .send(json!({"type": "component_input", "component": self.id, "data": data}));
    }

    /// Tells the extension the UI closed the component (a custom view resolves with nothing).
    pub fn close(&self) {
        self.ext
            .process
            .send(json!({"type": "component_close", "component": self.id}));
    }

    pub fn same(&self, other: &ComponentHandle) -> bool {
        Arc::ptr_eq(&self.ext, &other.ext) && self.id == other.id
    }
}

impl std::fmt::Debug for ComponentHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ComponentHandle({}#{})", self.ext.source.name(), self.id)
    }
}

impl PartialEq for ComponentHandle {
    fn eq(&self, other: &Self) -> bool {
        self.same(other)
    }
}

/// A question that blocks the extension until the user answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Dialog {
    Select {
        title: String,
        options: Vec<String>,
        timeout: Option<Duration>,
    },
    Confirm {
        title: String,
        message: String,
        timeout: Option<Duration>,
    },
    Input {
        title: String,
        placeholder: Option<String>,
        timeout: Option<Duration>,
    },
    /// A multi-line editor; no timeout (as in pi).
    Editor {
        title: String,
        prefill: Option<String>,
    },
    /// The extension's own component (`ctx.ui.custom`), shown until the extension says it is
    /// done (`Notice::CustomDone`) or the user's abort; in place of the editor, or as an
    /// overlay `width` columns wide.
    Custom {
        handle: ComponentHandle,
        lines: Vec<String>,
        overlay: bool,
        width: Option<usize>,
    },
}

impl Dialog {
    pub fn timeout(&self) -> Option<Duration> {
        match self {
            Dialog::Select { timeout, .. }
            | Dialog::Confirm { timeout, .. }
            | Dialog::Input { timeout, .. } => *timeout,
            Dialog::Editor { .. } | Dialog::Custom { .. } => None,
        }
    }
}

/// How a dialog ended. A timed-out, aborted or dismissed dialog is `Cancelled`; the caller
/// applies the dialog's default (no value, or `false` for confirm).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    Value(String),
    Confirmed(bool),
    Cancelled,
}

/// Where a widget goes relative to the editor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WidgetPlacement {
    AboveEditor,
    BelowEditor,
}

impl WidgetPlacement {
    pub fn as_str(self) -> &'static str {
        match self {
            WidgetPlacement::AboveEditor => "aboveEditor",
            WidgetPlacement::BelowEditor => "belowEditor",
        }
    }
}

/// UI updates that need no answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// `kind` is `info`, `warning` or `error`.
    Notify {
        message: String,
        kind: Option<String>,
    },
    /// `text: None` clears the status entry.
    Status {
        key: String,
        text: Option<String>,
    },
    /// `lines: None` removes the widget.
    Widget {
        key: String,
        lines: Option<Vec<String>>,
        placement: Option<WidgetPlacement>,
    },
    Title(String),
    EditorText(String),
    /// Text inserted into the editor at the cursor.
    PasteToEditor(String),
    /// New lines of a component the extension draws (custom view or custom editor).
    ComponentLines {
        handle: ComponentHandle,
        lines: Vec<String>,
    },
    /// The extension finished its custom view.
    CustomDone(ComponentHandle),
    /// The footer's lines (`None`: pi's own footer again).
    Footer(Option<Vec<String>>),
    /// Lines in place of the startup header (`None`: pi's own header again).
    Header(Option<Vec<String>>),
    /// The extension's editor replaces pi's (`None`: pi's editor again).
    EditorComponent(Option<(ComponentHandle, Vec<String>)>),
    /// The extension's editor submitted text, as if typed into pi's.
    EditorSubmit(String),
    /// A key the extension's editor leaves to pi (interrupt, exit, model switches, …).
    EditorKey(String),
    /// The message shown while the agent works (`None`: pi's default).
    WorkingMessage(Option<String>),
    WorkingVisible(bool),
    HiddenThinkingLabel(Option<String>),
    ToolsExpanded(bool),
}

/// A mode's way of showing extension UI. Implementations are shared across threads: the
/// extension host calls them from its own threads.
pub trait ExtensionUi: Send + Sync {
    /// Shows a dialog and blocks until it ends (answered, timed out, or `abort` raised).
    fn dialog(&self, dialog: Dialog, abort: &Abort) -> Answer;

    fn notice(&self, notice: Notice);

    /// Whether a user can answer at all (pi's `ctx.hasUI`).
    fn has_ui(&self) -> bool {
        true
    }
}

/// Print and JSON modes: nobody to ask, so every dialog takes its default at once.
pub struct NoUi;

impl ExtensionUi for NoUi {
    fn dialog(&self, _dialog: Dialog, _abort: &Abort) -> Answer {
        Answer::Cancelled
    }

    fn notice(&self, _notice: Notice) {}

    fn has_ui(&self) -> bool {
        false
    }
}

/// Stands in while a mode with a UI (RPC, interactive) is still starting: notices sent
/// meanwhile (a status set on `session_start`) are kept and handed to the real UI when it is
/// installed, and any that race with the switch are forwarded; dialogs cannot wait that long
/// and take their default.
#[derive(Default)]
pub struct DeferredUi {
    state: std::sync::Mutex<Deferred>,
}

#[derive(Default)]
struct Deferred {
    kept: Vec<Notice>,
    target: Option<std::sync::Arc<dyn ExtensionUi>>,
}

impl DeferredUi {
    /// Hands the kept notices to `ui`, in order, and forwards later ones to it.
    pub fn activate(&self, ui: std::sync::Arc<dyn ExtensionUi>) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        for notice in state.kept.drain(..) {
            ui.notice(notice);
        }
        state.target = Some(ui);
    }
}

impl ExtensionUi for DeferredUi {
    fn dialog(&self, _dialog: Dialog, _abort: &Abort) -> Answer {
        Answer::Cancelled
    }

    fn notice(&self, notice: Notice) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match &state.target {
            Some(ui) => ui.notice(notice),
            None => state.kept.push(notice),
        }
    }
}
