//! Thinking-level and model changes (Shift+Tab, Ctrl+P / Shift+Ctrl+P, `/model`,
//! `/thinking`). Like pi 1.x they last for the session only; the selectors' Ctrl+S also saves
//! the choice as the start-up default (`defaultProvider`/`defaultModel`,
//! `defaultThinkingLevel`).
//!
//! Changes made while a run holds the session: The worker thread owns the session, so the
//! [`RunState`](super::turn::RunState) keeps what the footer shows and each change goes to
//! the task's [`Switches`](crate::harness::switches::Switches) (see `Turn::defer_model`):
//! the session file records it at once
//! and whatever the run starts next (a retry, a compaction's continuation) uses it, as in
//! pi, whose running loop keeps the model it started with.

use super::app::App;
use super::overlays::OverlayKind;
use super::selectors::thinking::{ThinkingOutcome, ThinkingSelector};
use crate::ai::{Model, ThinkingLevel};
use crate::harness::model_control::{
    cycle_candidates, next_in_cycle, next_thinking_level, SavedDefault,
};
use crate::resources::model_resolve::supported_thinking_levels;
use crate::tui::terminal::Terminal;
use crate::tui::theme;

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

    /// The model and thinking level in use (or chosen for what a running turn starts next).
    fn current_thinking(&self) -> Option<(Model, ThinkingLevel)> {
        match (&self.session, self.turn.run_state()) {
            (Some(s), _) => Some((s.agent().model.clone(), s.agent().thinking)),
            (None, Some(r)) => Some((r.model.clone(), r.thinking)),
            (None, None) => None,
        }
    }

    /// `/thinking [level]`: a level the model supports is set at once, none opens the
    /// selector.
    pub(super) fn thinking_command(&mut self, arg: &str) -> Result<(), String> {
        let Some((model, current)) = self.current_thinking() else {
            return Ok(());
        };
        let levels = if self.env.has_model {
            supported_thinking_levels(&model)
        } else {
            vec![ThinkingLevel::Off]
        };
        if arg.trim().is_empty() {
            let saved = match &self.session {
                Some(s) => s.settings.default_thinking_level(),
                None => self.turn.default_thinking(),
            };
            // pi's default level when settings name none.
            let default = saved
                .and_then(ThinkingLevel::parse)
                .unwrap_or(ThinkingLevel::Medium);
            let selector = ThinkingSelector::new(current, &levels, default, theme::current());
            self.show_dialog(selector, OverlayKind::Thinking);
            return Ok(());
        }
        let wanted = arg.trim().to_lowercase();
        match levels.iter().find(|l| l.as_str() == wanted) {
            Some(level) => {
                self.select_thinking(*level, false);
                Ok(())
            }
            None => Err(format!(
                "Unknown thinking level \"{arg}\". Available levels: {}.",
                levels
                    .iter()
                    .map(|l| l.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    pub(super) fn apply_thinking_outcome(&mut self, outcome: ThinkingOutcome) {
        match outcome {
            ThinkingOutcome::Selected(level) => self.select_thinking(level, false),
            ThinkingOutcome::SelectedAsDefault(level) => self.select_thinking(level, true),
            ThinkingOutcome::Cancelled => {}
        }
    }

    /// Sets the thinking level for the session; `save` (Ctrl+S) also makes the level as
    /// chosen (not clamped to the model, as pi saves it) the start-up default.
    fn select_thinking(&mut self, level: ThinkingLevel, save: bool) {
        match (self.session.as_mut(), self.turn.run_state()) {
            (Some(s), _) => {
                s.set_thinking_level(level);
                if save {
                    s.save_default(&SavedDefault::Thinking(level));
                }
            }
            (None, Some(_)) => {
                self.turn.defer_thinking(level);
                if save {
                    self.turn.defer_save(SavedDefault::Thinking(level));
                }
            }
            (None, None) => return,
        }
        let note = if save {
            format!("Default thinking level: {}", level.as_str())
        } else {
            format!("Thinking level: {}", level.as_str())
        };
        self.view.status_note(&note);
        self.report_write_errors();
        self.refresh_footer();
    }

    /// Switches to `model` for the session (for the next turn when a run holds it); `save`
    /// (Ctrl+S, or the first login choosing the provider's model) also makes it the
    /// start-up default.
    pub(super) fn change_model(&mut self, model: Model, save: bool) -> Result<(), String> {
        let credentials = (self.env.credentials)(&model)?;
        let default = SavedDefault::Model {
            provider: model.provider.clone(),
            id: model.id.clone(),
        };
        let note = if save {
            format!("Default model: {}/{}", model.provider, model.id)
        } else {
            format!("Model: {}", model.id)
        };
        match self.session.as_mut() {
            Some(s) => {
                s.set_model(model, credentials)?;
                if save {
                    s.save_default(&default);
                }
                self.env.has_model = true;
                self.refresh_footer();
            }
            None => {
                self.defer_model(model, None);
                if save {
                    self.turn.defer_save(default);
                }
            }
        }
        self.view.status_note(&note);
        Ok(())
    }
}
