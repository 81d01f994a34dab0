//! Thinking-level and model changes (Shift+Tab, Ctrl+P / Shift+Ctrl+P, `/model`,
//! `/thinking`). Like pi 1.x they last for the session only; the selectors' Ctrl+S also saves
//! the choice as the start-up default (`defaultProvider`/`defaultModel`,
//! `defaultThinkingLevel`).
//!
//! Changes made while a run holds the session: the [`RunState`](super::turn::RunState) keeps
//! what the footer shows and each change goes to the session actor as an
//! [`Op::ModelSwitch`](crate::harness::op::Op::ModelSwitch) (see `Turn::defer_model`): the
//! session file records it at the run's next event and whatever the run starts next (a
//! retry, a compaction's continuation) uses it, as in pi, whose running loop keeps the model
//! it started with.

use super::app::App;
use super::overlays::OverlayKind;
use super::selectors::thinking::{ThinkingOutcome, ThinkingSelector};
use super::session_link::SESSION_GONE;
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
        let next = match self.turn.run_state() {
            None => match self.session(|s| s.cycle_thinking_level()) {
                Some(next) => next,
                None => return,
            },
            Some(r) => {
                let next = next_thinking_level(&r.model, r.thinking);
                if let Some(level) = next {
                    let switch = self.turn.defer_thinking(level);
                    self.link.switch_all(switch);
                }
                next
            }
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
        let landed = match self.turn.run_state() {
            None => {
                // The credentials of every candidate, looked up here (they live with the UI).
                let creds: Vec<_> = available
                    .iter()
                    .map(|m| (m.clone(), credentials(m)))
                    .collect();
                let cycled = self.session(move |s| {
                    let lookup = |m: &Model| {
                        creds
                            .iter()
                            .find(|(c, _)| c.provider == m.provider && c.id == m.id)
                            .map(|(_, r)| r.clone())
                            .unwrap_or_else(|| {
                                Err(format!("No API key for {}/{}", m.provider, m.id))
                            })
                    };
                    match s.cycle_model(forward, &available, &lookup) {
                        Ok(None) => Ok(Err(scoped_note(!s.scoped_models.is_empty()).to_string())),
                        Ok(Some(c)) => Ok(Ok((c.model, c.thinking))),
                        Err(e) => Err(e),
                    }
                });
                match cycled {
                    None => return,
                    Some(Ok(landed)) => landed,
                    Some(Err(e)) => {
                        self.view.error(&e);
                        self.report_write_errors();
                        return;
                    }
                }
            }
            Some(r) => {
                let candidates =
                    cycle_candidates(&r.scoped, &available, &|m| credentials(m).is_ok());
                match next_in_cycle(&candidates, &r.model, forward) {
                    None => Err(scoped_note(!r.scoped.is_empty()).to_string()),
                    Some(next) => {
                        let next = next.clone();
                        self.defer_model(next.model, next.thinking);
                        match self.turn.run_state() {
                            Some(r) => Ok((r.model.clone(), r.thinking)),
                            None => return,
                        }
                    }
                }
            }
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
        let switches = self.turn.defer_model(model, credentials, level);
        self.link.switch_all(switches);
        self.refresh_footer();
    }

    /// The model and thinking level in use (or chosen for what a running turn starts next).
    fn current_thinking(&self) -> Option<(Model, ThinkingLevel)> {
        match self.turn.run_state() {
            Some(r) => Some((r.model.clone(), r.thinking)),
            None => self.session(|s| (s.agent().model.clone(), s.agent().thinking)),
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
            let saved = match self.turn.run_state() {
                Some(_) => self.turn.default_thinking().map(str::to_string),
                None => self
                    .session(|s| s.settings.default_thinking_level().map(str::to_string))
                    .flatten(),
            };
            // pi's default level when settings name none.
            let default = saved
                .and_then(|l| ThinkingLevel::parse(&l))
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
        if self.turn.is_running() {
            let thinking = self.turn.defer_thinking(level);
            self.link.switch_all(thinking);
            if save {
                let saved = self.turn.defer_save(SavedDefault::Thinking(level));
                self.link.switch_all(saved);
            }
        } else {
            let done = self.session(move |s| {
                s.set_thinking_level(level);
                if save {
                    s.save_default(&SavedDefault::Thinking(level));
                }
            });
            if done.is_none() {
                return;
            }
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
        if self.turn.is_running() {
            self.defer_model(model, None);
            if save {
                let saved = self.turn.defer_save(default);
                self.link.switch_all(saved);
            }
        } else {
            self.session(move |s| {
                s.set_model(model, credentials)?;
                if save {
                    s.save_default(&default);
                }
                Ok::<_, String>(())
            })
            .ok_or(SESSION_GONE)??;
            self.env.has_model = true;
            self.refresh_footer();
        }
        self.view.status_note(&note);
        Ok(())
    }
}
