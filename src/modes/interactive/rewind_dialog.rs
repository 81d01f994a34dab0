//! The question `/rewind` asks once a message is chosen: what to restore (`rewind.rs` acts on
//! the answer).

use super::ext_ui::ExtensionDialog;
use crate::extensions::ui::{Answer, Dialog};
use crate::harness::rewind::RewindScope;
use crate::tui::{Component, InputEvent};

const BOTH: &str = "Restore code and conversation";
const CONVERSATION: &str = "Restore conversation only";
const CODE: &str = "Restore code only";
const CANCEL: &str = "Cancel";

/// The question after a message was chosen.
pub struct RewindChoiceDialog {
    dialog: ExtensionDialog,
    entry_id: String,
}

impl RewindChoiceDialog {
    pub fn new(entry_id: String, text: &str, code: bool) -> Self {
        let mut options = Vec::new();
        if code {
            options.push(BOTH.to_string());
        }
        options.push(CONVERSATION.to_string());
        if code {
            options.push(CODE.to_string());
        }
        options.push(CANCEL.to_string());
        let first_line = text.lines().next().unwrap_or_default();
        let dialog = ExtensionDialog::new(&Dialog::Select {
            title: format!("Rewind to before \"{first_line}\"?"),
            options,
            timeout: None,
        });
        RewindChoiceDialog { dialog, entry_id }
    }

    /// The scope chosen (`None`: cancelled) and the message, once answered.
    pub fn take_outcome(&mut self) -> Option<(Option<RewindScope>, String)> {
        let scope = match self.dialog.take_outcome()? {
            Answer::Value(v) if v == BOTH => Some(RewindScope::Both),
            Answer::Value(v) if v == CONVERSATION => Some(RewindScope::Conversation),
            Answer::Value(v) if v == CODE => Some(RewindScope::Code),
            _ => None,
        };
        Some((scope, self.entry_id.clone()))
    }
}

impl Component for RewindChoiceDialog {
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
