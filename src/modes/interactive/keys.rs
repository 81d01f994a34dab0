//! The app's own keys, checked before the editor sees a key (pi's `app.*` actions, rebindable
//! in keybindings.json): interrupt, clear/exit, suspend, thinking and model cycling, the model
//! selector, tool and thinking expansion, the external editor, pasting an image, follow-ups and dequeuing; and
//! what happens to a submitted line (command, `!bash`, steer, or a new prompt).

use super::app::App;
use super::session_link::SESSION_GONE;
use super::turn::{message_text, working_message, RunState};
use crate::ai::{now_ms, Content, Extra, Message, UserContent, UserMessage};
use crate::harness::op::Idle;
use crate::tui::keybindings;
use crate::tui::terminal::Terminal;
use crate::tui::theme::Token;
use crate::tui::KeyEvent;

impl<T: Terminal> App<T> {
    /// Returns whether the key was an app action (and so not for the editor).
    pub(super) fn handle_app_key(&mut self, key: &KeyEvent) -> bool {
        let kb = keybindings::current();
        let is = |id: &str| kb.matches(key, id);
        if is("app.interrupt") {
            if self.view.editor.is_showing_autocomplete() {
                return false;
            }
            if self.jobs.abort_bash() {
                return true;
            }
            if self.turn.is_running() {
                self.abort_run();
                return true;
            }
            return self.escape_when_idle();
        }
        if is("app.clear") {
            if self.input.second_clear() {
                self.exit = true;
            } else {
                self.view.editor.set_text("");
            }
            return true;
        }
        if is("app.exit") {
            if self.view.editor.is_empty() {
                self.exit = true;
                return true;
            }
            return false;
        }
        if is("app.message.copy") {
            if !self.copy_fullscreen_selection() {
                if let Err(e) = self.copy_last_message() {
                    self.view.error(&e);
                }
            }
            return true;
        }
        if is("app.suspend") {
            if let Err(e) = self.tui.suspend() {
                self.view.error(&format!("Could not suspend: {e}"));
            }
            return true;
        }
        if is("app.thinking.cycle") {
            self.cycle_thinking();
            return true;
        }
        if is("app.model.cycleForward") || is("app.model.cycleBackward") {
            self.cycle_model(is("app.model.cycleForward"));
            return true;
        }
        if is("app.model.select") {
            self.open_model_selector("");
            return true;
        }
        if is("app.tools.expand") {
            self.view.tools_expanded = !self.view.tools_expanded;
            self.view.header.expanded = self.view.tools_expanded;
            for item in &mut self.view.chat {
                item.set_expanded(self.view.tools_expanded);
            }
            // pi 1.6.0 says what the key did, as Ctrl+T does for thinking blocks.
            let state = if self.view.tools_expanded {
                "expanded"
            } else {
                "collapsed"
            };
            self.view.status_note(&format!("Tool output: {state}"));
            return true;
        }
        if is("app.thinking.toggle") {
            self.view.hide_thinking = !self.view.hide_thinking;
            for item in &mut self.view.chat {
                item.set_hide_thinking(self.view.hide_thinking);
            }
            let state = if self.view.hide_thinking {
                "hidden"
            } else {
                "visible"
            };
            self.view.status_note(&format!("Thinking blocks: {state}"));
            return true;
        }
        if is("app.clipboard.pasteImage") {
            self.jobs.paste_clipboard_image(&self.env.clipboard);
            return true;
        }
        if is("app.editor.external") {
            super::external::edit_externally(&mut self.tui, &mut self.view);
            return true;
        }
        if is("app.message.followUp") {
            let text = self.view.editor.get_expanded_text();
            if text.trim().is_empty() {
                return true;
            }
            self.view.editor.set_text("");
            if self.turn.is_running() {
                self.queue_message(&text, false);
            } else {
                self.on_submit(&text);
            }
            return true;
        }
        if is("app.message.dequeue") {
            let queued = self.take_queued();
            if queued.is_empty() {
                self.view.status_note("No queued messages to restore");
            } else {
                let n = queued.len();
                self.restore_to_editor(queued);
                let s = if n > 1 { "s" } else { "" };
                self.view
                    .status_note(&format!("Restored {n} queued message{s} to editor"));
            }
            return true;
        }
        false
    }

    /// Escape with nothing running: leaves bash mode (clearing the `!` line); on an empty
    /// editor a second press opens the tree or the fork selector (`doubleEscapeAction`).
    fn escape_when_idle(&mut self) -> bool {
        let text = self.view.editor.get_text();
        if text.trim_start().starts_with('!') {
            self.view.editor.set_text("");
            self.apply_editor_style();
            return true;
        }
        if !text.trim().is_empty() {
            return false;
        }
        let action = self
            .session(|s| s.settings.str(&["doubleEscapeAction"]).map(str::to_string))
            .flatten()
            .unwrap_or_else(|| "tree".into());
        if action == "none" {
            return false;
        }
        if self.input.second_escape() {
            let opened = match action.as_str() {
                "fork" => self.open_fork_selector(),
                "rewind" => self.open_rewind_selector(),
                _ => self.open_tree_selector(None),
            };
            if let Err(e) = opened {
                self.view.error(&e);
            }
        }
        true
    }

    /// Escape during a run: stop it and give queued messages back to the editor.
    fn abort_run(&mut self) {
        let queued = self.take_queued();
        if !queued.is_empty() {
            self.restore_to_editor(queued);
        }
        self.link.abort();
    }

    /// Empties both queues (of the run, or of the idle agent) and the display.
    fn take_queued(&mut self) -> Vec<String> {
        let (steering, follow_up) = self.link.queues();
        self.view.steering.clear();
        self.view.follow_up.clear();
        steering
            .clear()
            .into_iter()
            .chain(follow_up.clear())
            .map(|m| message_text(&m))
            .collect()
    }

    /// A line the editor submitted.
    pub(super) fn on_submit(&mut self, text: &str) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        self.view.editor.add_to_history(text);
        if let Some(rest) = text.strip_prefix('/') {
            let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            if self.run_command(name, args.trim()) {
                return;
            }
        }
        if let Some(rest) = text.strip_prefix('!') {
            let (excluded, command) = match rest.strip_prefix('!') {
                Some(c) => (true, c.trim()),
                None => (false, rest.trim()),
            };
            if !command.is_empty() {
                self.run_bash(command, excluded);
                return;
            }
        }
        if self.turn.is_running() {
            if !self.run_extension_command_now(text) {
                self.queue_message(text, true);
            }
            return;
        }
        self.start_prompt(text);
    }

    fn user_message(&self, text: &str) -> Message {
        Message::User(UserMessage {
            content: UserContent::Blocks(vec![Content::text(
                self.env.resources.expand_input(text),
            )]),
            timestamp: now_ms(),
            extra: Extra::new(),
        })
    }

    /// Queues a steering message (delivered after the current tool calls) or a follow-up
    /// (delivered when the agent would stop).
    fn queue_message(&mut self, text: &str, steer: bool) {
        let message = self.user_message(text);
        self.turn.queue(&mut self.view, message, text, steer);
    }

    fn start_prompt(&mut self, text: &str) {
        if !self.env.has_model && !self.is_extension_command(text) {
            self.view.error(
                "No model selected. Use /login or set an API key, then /model to choose one.",
            );
            return;
        }
        if self.jobs.bash_running() {
            self.view
                .warning("A bash command is running. Press Esc to cancel it first.");
            self.view.editor.set_text(text);
            return;
        }
        self.submit_prompt(text);
    }

    /// Starts `work` on the session's thread and shows the working indicator; its events
    /// and its end come back on the link.
    pub(super) fn run_task(&mut self, work: impl FnOnce(Idle<'_>) + Send + 'static) {
        let Some(run_state) = self.session(|s| RunState::of(s)) else {
            return;
        };
        if !self.link.start(work) {
            self.view.error(SESSION_GONE);
            return;
        }
        let (steering, follow_up) = self.link.queues();
        self.turn
            .begin((steering.clone(), follow_up.clone()), run_state);
        self.show_loader(Token::Accent, working_message());
    }

    fn run_bash(&mut self, command: &str, excluded: bool) {
        let cwd = self
            .session(|s| s.agent().cwd.clone())
            .unwrap_or_else(|| self.env.cwd.clone());
        let host = self.ext.host.clone();
        self.jobs
            .start_bash(&mut self.view, command, excluded, cwd, host);
    }

    /// Output or the end of a `!` command; a result is recorded once the session is free.
    pub(super) fn on_bash_update(&mut self, update: Option<crate::harness::user_bash::BashUpdate>) {
        if !self.jobs.bash_running() {
            return;
        }
        if self.jobs.on_bash_update(&mut self.view, update) {
            self.flush_pending_bash();
            self.report_write_errors();
        }
        self.tui.request_render();
    }
}
