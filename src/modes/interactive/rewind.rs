//! `/rewind` (ours; pi has none): the user messages of the branch (the `/fork` list, titled
//! for rewinding), then what restoring the files would change — shown in the chat, with the
//! files changed since the last turn marked — and a choice: code and conversation,
//! conversation only, code only, or cancel. Files are restored first (the present state is kept
//! as a checkpoint, so a rewind can be undone); the conversation goes back as `/tree` does.

use super::app::App;
use super::chat::ChatItem;
use super::ext_state::GatedOp;
use super::overlays::OverlayKind;
use super::rewind_dialog::RewindChoiceDialog;
use super::selectors::tree::BranchSummary;
use super::selectors::user_message::UserMessageSelector;
use crate::harness::checkpoint::Preview;
use crate::harness::rewind::RewindScope;
use crate::tui::terminal::Terminal;
use crate::tui::theme::{self, Token};

/// The preview as chat lines: a summary, then each path with its change.
fn preview_text(p: &Preview) -> String {
    let f = &p.files;
    if f.is_empty() {
        return "Files: no changes to restore".into();
    }
    let mut out = format!(
        "Files that will change: {} modified, {} restored, {} deleted",
        f.modified.len(),
        f.removed.len(),
        f.added.len()
    );
    let mark = |path: &str| {
        if p.changed_since_last_turn.iter().any(|c| c == path) {
            "  (changed since the last turn)"
        } else {
            ""
        }
    };
    for (sign, list) in [("M", &f.modified), ("+", &f.removed), ("-", &f.added)] {
        for path in list.iter().take(40) {
            out.push_str(&format!("\n  {sign} {path}{}", mark(path)));
        }
        if list.len() > 40 {
            out.push_str(&format!("\n  {sign} … and {} more", list.len() - 40));
        }
    }
    for [from, to] in &f.renamed {
        out.push_str(&format!("\n  renamed back: {to} → {from}"));
    }
    if !p.not_captured.is_empty() {
        out.push_str(&format!(
            "\n  not captured (left as they are): {}",
            p.not_captured.join(", ")
        ));
    }
    out
}

impl<T: Terminal> App<T> {
    pub(super) fn open_rewind_selector(&mut self) -> Result<(), String> {
        let points = self.idle_session(|s| s.rewind_points())?;
        let messages: Vec<(String, String)> = points
            .into_iter()
            .map(|p| {
                let mark = if p.has_checkpoint {
                    ""
                } else {
                    " (conversation only)"
                };
                (p.entry_id, format!("{}{mark}", p.text))
            })
            .collect();
        if messages.is_empty() {
            self.view.status_note("No messages to rewind to");
            return Ok(());
        }
        let selector = UserMessageSelector::new(messages, theme::current()).with_title(
            "Rewind",
            "Select a user message to go back to before it: its files, its conversation, or both",
        );
        self.show_dialog(selector, OverlayKind::Rewind);
        Ok(())
    }

    /// A message was chosen: shows what the files would do, then asks what to restore.
    pub(super) fn rewind_chosen(&mut self, entry_id: String) -> Result<(), String> {
        let id = entry_id.clone();
        let (error, point, preview) = self.idle_session(move |s| {
            let error = s.take_checkpoint_error();
            let point = s.rewind_points().into_iter().find(|p| p.entry_id == id);
            let preview = s.rewind_preview(&id);
            (error, point, preview)
        })?;
        if let Some(e) = error {
            self.view.warning(&e);
        }
        let point = point.ok_or_else(|| format!("Entry {entry_id} not found"))?;
        let code = match preview {
            Ok(p) => {
                let token = if p.changed_since_last_turn.is_empty() {
                    Token::Muted
                } else {
                    Token::Warning
                };
                self.view.push(ChatItem::note(token, &preview_text(&p)));
                true
            }
            Err(e) => {
                self.view.push(ChatItem::note(Token::Muted, &e));
                false
            }
        };
        let dialog = RewindChoiceDialog::new(entry_id, &point.text, code);
        self.show_dialog(dialog, OverlayKind::RewindChoice);
        Ok(())
    }

    pub(super) fn apply_rewind(
        &mut self,
        scope: Option<RewindScope>,
        entry_id: String,
    ) -> Result<(), String> {
        let Some(scope) = scope else {
            return Ok(());
        };
        if scope.code() {
            let id = entry_id.clone();
            let outcome = self.idle_session(move |s| s.rewind(&id, RewindScope::Code))??;
            if !outcome.failed.is_empty() {
                self.view.error(&format!(
                    "Some files could not be restored:\n{}",
                    outcome.failed.join("\n")
                ));
            }
            let n = outcome.preview.map_or(0, |p| p.files.paths().count());
            self.view
                .status_note(&format!("Restored the files ({n} changed)"));
        }
        if scope.conversation() {
            self.gated(GatedOp::Tree {
                entry_id,
                summary: BranchSummary::None,
            })?;
        }
        Ok(())
    }
}
