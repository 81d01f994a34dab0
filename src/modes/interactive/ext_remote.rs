//! What extensions draw themselves in the terminal: custom views (`ctx.ui.custom`), an editor
//! in place of pi's (`ui.setEditorComponent`: every key goes to it; the keys it leaves to pi —
//! interrupt, exit, model switches — come back as `ui.editorKey`, and what it submits as
//! `ui.editorSubmit`), and footer and header lines.

use crate::extensions::ui::{Answer, Notice};
use crate::extensions::ModeRequest;
use crate::tui::terminal::Terminal;
use crate::tui::InputEvent;

use super::app::App;
use super::ext_component::RemoteComponent;
use super::ext_state::GatedOp;
use super::selectors::tree::BranchSummary;

impl<T: Terminal> App<T> {
    /// Notices about what extensions draw (the rest are handled in `extensions.rs`).
    pub(super) fn apply_component_notice(&mut self, notice: Notice) {
        match notice {
            Notice::ComponentLines { handle, lines } => {
                if let Some(dialog) = self.open_custom_dialog(&handle) {
                    dialog.set_custom_lines(&handle, lines);
                } else if let Some(editor) = self
                    .view
                    .extension
                    .editor
                    .as_mut()
                    .filter(|e| e.handle.same(&handle))
                {
                    editor.set_lines(lines);
                }
            }
            Notice::CustomDone(handle) if self.open_custom_dialog(&handle).is_some() => {
                self.answer_open_dialog(Answer::Cancelled);
            }
            Notice::Footer(lines) => self.view.extension.footer = lines,
            Notice::Header(lines) => self.view.extension.header = lines,
            Notice::EditorComponent(editor) => {
                self.view.extension.editor =
                    editor.map(|(handle, lines)| RemoteComponent::new(handle, lines));
            }
            Notice::EditorSubmit(text) => self.on_submit(&text),
            Notice::EditorKey(data) => {
                let parsed = crate::tui::key_decode::decode(data.as_bytes(), false);
                if let crate::tui::stdin_buffer::ParsedInput::Event(InputEvent::Key(key)) = parsed {
                    if !self.handle_app_key(&key) {
                        self.run_extension_shortcut(&key);
                    }
                }
            }
            Notice::PasteToEditor(text) => {
                let current = self.view.editor.get_text();
                self.view.editor.set_text(&format!("{current}{text}"));
                self.apply_editor_style();
            }
            // Working indicators and tool expansion are pi's own to draw.
            _ => {}
        }
        self.tui.request_render();
    }

    /// Session switches, reloads and quitting that extension commands asked for, once the
    /// session is back (the command is over).
    pub(super) fn perform_mode_requests(&mut self) {
        if self.turn.is_running() {
            return;
        }
        let Some(host) = self.ext.host.clone() else {
            return;
        };
        for request in host.take_mode_requests() {
            let done = match request {
                ModeRequest::NewSession => self.gated(GatedOp::New),
                ModeRequest::Fork {
                    entry_id,
                    at: false,
                } => self.gated(GatedOp::Fork(entry_id)),
                ModeRequest::Fork { at: true, .. } => self.gated(GatedOp::Clone),
                ModeRequest::SwitchSession(path) => self.resume_checked(path.into()),
                ModeRequest::NavigateTree {
                    target_id,
                    summarize,
                } => self.gated(GatedOp::Tree {
                    entry_id: target_id,
                    summary: if summarize {
                        BranchSummary::Summarize
                    } else {
                        BranchSummary::None
                    },
                }),
                ModeRequest::Reload => {
                    self.reload();
                    Ok(())
                }
                ModeRequest::Shutdown => {
                    self.exit = true;
                    Ok(())
                }
            };
            if let Err(e) = done {
                self.view.error(&e);
            }
        }
    }

    /// Tells the extensions the terminal's width and the theme's colours, so what they draw
    /// fits and matches.
    pub(super) fn share_terminal_with_extensions(&mut self) {
        let Some(host) = self.session(|s| s.extension_host().cloned()).flatten() else {
            return;
        };
        if host.is_empty() {
            return;
        }
        let theme = crate::tui::theme::current();
        let mut fg = serde_json::Map::new();
        let mut bg = serde_json::Map::new();
        for token in crate::tui::theme::Token::ALL {
            fg.insert(token.name().into(), theme.fg_code(*token).into());
            bg.insert(token.name().into(), theme.bg_code(*token).into());
        }
        host.share_theme(
            serde_json::json!({"type": "theme", "name": theme.name(), "fg": fg,
            "bg": bg, "fgReset": theme.fg_reset(), "bgReset": theme.bg_reset()}),
        );
        let columns = self.tui.terminal().size().0;
        host.share_columns(columns.min(u16::MAX as usize) as u16);
    }

    /// Sends a key to an extension's editor, if one replaces pi's; true when it took it.
    pub(super) fn extension_editor_input(&mut self, event: &InputEvent) -> bool {
        let Some(editor) = self.view.extension.editor.as_mut() else {
            return false;
        };
        crate::tui::Component::handle_input(editor, event);
        true
    }
}
