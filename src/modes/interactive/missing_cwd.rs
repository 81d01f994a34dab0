//! pi 1.5.2's Continue / Fork / Cancel question when the chat switches to a session whose
//! recorded folder is gone (`/resume`, `/import`, an extension's `switchSession`):
//! [`MissingCwdDialog`]
//! (the start-up question's list in the editor's place); `dialogs.rs` acts on the answer.
//! Start-up asks the same before the chat exists (`standalone::ask_missing_cwd`).

use std::path::{Path, PathBuf};

use super::ext_ui::ExtensionDialog;
use super::standalone::{missing_cwd_title, MissingCwdChoice};
use crate::extensions::ui::{Answer, Dialog};
use crate::session::SessionWriter;
use crate::tui::{Component, InputEvent};

/// What the question is about: a session to switch to, or a file `/import` was given (its
/// argument as typed, for the status line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MissingCwdTarget {
    Resume(PathBuf),
    Import { path: PathBuf, typed: String },
}

impl MissingCwdTarget {
    pub fn path(&self) -> &Path {
        match self {
            MissingCwdTarget::Resume(path) | MissingCwdTarget::Import { path, .. } => path,
        }
    }
}

/// The question about one session file.
pub struct MissingCwdDialog {
    dialog: ExtensionDialog,
    target: MissingCwdTarget,
}

impl MissingCwdDialog {
    pub fn new(target: MissingCwdTarget, stored: &str, cwd: &str) -> MissingCwdDialog {
        let dialog = ExtensionDialog::new(&Dialog::Select {
            title: missing_cwd_title(stored, cwd),
            options: vec!["Continue".into(), "Fork".into(), "Cancel".into()],
            timeout: None,
        });
        MissingCwdDialog { dialog, target }
    }

    /// The answer and the session it is about, once given.
    pub fn take_outcome(&mut self) -> Option<(MissingCwdChoice, MissingCwdTarget)> {
        let choice = match self.dialog.take_outcome()? {
            Answer::Value(v) if v == "Continue" => MissingCwdChoice::Continue,
            Answer::Value(v) if v == "Fork" => MissingCwdChoice::Fork,
            _ => MissingCwdChoice::Cancel,
        };
        Some((choice, self.target.clone()))
    }
}

impl Component for MissingCwdDialog {
    fn render(&mut self, width: usize) -> Vec<String> {
        self.dialog.render(width)
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        self.dialog.handle_input(event)
    }

    fn invalidate(&mut self) {
        self.dialog.invalidate();
    }
}

/// The recorded folder of the session in `path`, when it no longer exists.
pub(super) fn missing_folder(path: &Path) -> Option<String> {
    let writer = SessionWriter::open(path).ok()?.0;
    let stored = writer.header().cwd.clone();
    (!stored.is_empty() && !Path::new(&stored).exists()).then_some(stored)
}
