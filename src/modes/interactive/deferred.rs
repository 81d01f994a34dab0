//! Thinking-level and model changes (Shift+Tab, Ctrl+P / Shift+Ctrl+P, the model selector)
//! made while a run holds the session. The worker thread owns the session, so the
//! [`RunState`](super::turn::RunState) keeps what the footer shows and each change goes to
//! the task's [`Switches`](crate::harness::switches::Switches) (see `Turn::defer_model`):
//! the session file records it at once
//! and whatever the run starts next (a retry, a compaction's continuation) uses it, as in
//! pi, whose running loop keeps the model it started with.

use super::app::App;
use crate::ai::{Model, ThinkingLevel};
use crate::harness::model_control::{cycle_candidates, next_in_cycle, next_thinking_level};
use crate::tui::terminal::Terminal;

impl<T: Terminal> App<T> {
    /// Shift+Tab.
    pub(super) fn cycle_thinking(&mut self) {
        let next = match (self.session.as_mut(), self.turn.run_state()) {
            (Some(s), _) => s.cycle_thinking_level(),
            (None, Some(r)) => {
                let next = next_thinking_level(&r.model, r.thinking);
                if let Some(level) = next {
                    self.turn.defer_thinking(level);
                }
                next
            }
            (None, None) => return,
        };
        match next {
            None => self
                .view
                .status_note("Current model does not support thinking"),
            Some(level) => self
                .view
                .status_note(&format!("Thinking level: {}", level.as_str())),
        }
        self.report_write_errors();
        self.refresh_footer();
    }

    /// Ctrl+P / Shift+Ctrl+P.
    pub(super) fn cycle_model(&mut self, forward: bool) {
        let available = (self.env.available_models)();
        let scoped_note = |scoped: bool| {
            if scoped {
                "Only one model in scope"
            } else {
                "Only one model available"
            }
        };
        let credentials = &self.env.credentials;
        let landed = match (self.session.as_mut(), self.turn.run_state()) {
            (Some(s), _) => match s.cycle_model(forward, &available, &|m| credentials(m)) {
                Ok(None) => Err(scoped_note(!s.scoped_models.is_empty()).to_string()),
                Ok(Some(c)) => Ok((c.model, c.thinking)),
                Err(e) => {
                    self.view.error(&e);
                    self.report_write_errors();
                    return;
                }
            },
            (None, Some(r)) => {
                let candidates =
                    cycle_candidates(&r.scoped, &available, &|m| credentials(m).is_ok());
                match next_in_cycle(&candidates, &r.model, forward) {
                    None => Err(scoped_note(!r.scoped.is_empty()).to_string()),
                    Some(next) => {
                        let next = next.clone();
                        self.defer_model(next.model, next.thinking);
                        let r = self.turn.run_state().expect("run state kept");
                        Ok((r.model.clone(), r.thinking))
                    }
                }
            }
            (None, None) => return,
        };
        match landed {
            Err(note) => self.view.status_note(&note),
            Ok((model, thinking)) => {
                self.env.has_model = true;
                let thinking = if model.reasoning {
                    format!(" (thinking: {})", thinking.as_str())
                } else {
                    String::new()
                };
                let name = if model.name.is_empty() {
                    &model.id
                } else {
                    &model.name
                };
                self.view
                    .status_note(&format!("Switched to {name}{thinking}"));
            }
        }
        self.report_write_errors();
        self.refresh_footer();
    }

    /// Chooses `model` while a run holds the session (`level`: the thinking level a scope
    /// pattern named).
    pub(super) fn defer_model(&mut self, model: Model, level: Option<ThinkingLevel>) {
        if !self.turn.can_defer() {
            return;
        }
        let credentials = match (self.env.credentials)(&model) {
            Ok(c) => c,
            Err(e) => {
                self.view.error(&e);
                return;
            }
        };
        self.turn.defer_model(model, credentials, level);
        self.refresh_footer();
    }
}
