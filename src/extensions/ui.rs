//! The UI an extension may ask for: blocking dialogs (select, confirm, input, editor) and
//! fire-and-forget notices (notify, status line, widgets, title, editor text). Dialogs end
//! with an answer, or with their default when they time out, the run is aborted, or the mode
//! has no UI.

use std::time::Duration;

use crate::ai::Abort;

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
}

impl Dialog {
    pub fn timeout(&self) -> Option<Duration> {
        match self {
            Dialog::Select { timeout, .. }
            | Dialog::Confirm { timeout, .. }
            | Dialog::Input { timeout, .. } => *timeout,
            Dialog::Editor { .. } => None,
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
