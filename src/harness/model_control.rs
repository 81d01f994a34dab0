//! Model and thinking-level management shared by every mode: switching and cycling models
//! (the `--models` scope first, else every model with a key), thinking levels clamped to
//! what the model supports, queue modes and the auto-retry/auto-compaction toggles — each
//! recorded in the session and remembered in the global settings the way pi remembers them.

use serde_json::Value;

use super::session_hooks::ModelSource;
use super::AgentSession;
use crate::agent::QueueMode;
use crate::ai::{Model, ThinkingLevel};
use crate::resources::model_resolve::{clamp_thinking, supported_thinking_levels};

/// An API key and the extra headers for one model.
pub type Credentials = (String, Vec<(String, String)>);

/// A model in the `--models` / `enabledModels` scope, with the thinking level its pattern
/// asked for (`None` keeps the session's level when cycling to it).
#[derive(Debug, Clone, PartialEq)]
pub struct ScopedModel {
    pub model: Model,
    pub thinking: Option<ThinkingLevel>,
}

/// Where a cycle landed.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCycle {
    pub model: Model,
    pub thinking: ThinkingLevel,
    /// Whether the cycle went through the scoped models.
    pub scoped: bool,
}

fn same_model(a: &Model, b: &Model) -> bool {
    a.provider == b.provider && a.id == b.id
}

/// The level a model switch starts from (pi 1.x's rule): the scoped pattern's level, else the
/// saved `defaultThinkingLevel`, else the level in use (clamped later to the new model).
pub fn level_for_switch(
    explicit: Option<ThinkingLevel>,
    current_level: ThinkingLevel,
    default_level: Option<&str>,
) -> ThinkingLevel {
    if let Some(level) = explicit {
        return level;
    }
    // While selections are saved (interactive), the saved default is the last level chosen
    // for a reasoning model, as 0.73.1 kept it; 0.73.1 fell back to `medium` where 1.x keeps
    // the level in use.
    default_level
        .and_then(ThinkingLevel::parse)
        .unwrap_or(current_level)
}

/// The level Shift+Tab moves to from `current`; `None` for a model without reasoning.
pub fn next_thinking_level(model: &Model, current: ThinkingLevel) -> Option<ThinkingLevel> {
    if !model.reasoning {
        return None;
    }
    let levels = supported_thinking_levels(model);
    Some(
        levels
            .iter()
            .position(|l| *l == current)
            .map(|i| levels[(i + 1) % levels.len()])
            .unwrap_or(levels[0]),
    )
}

/// What Ctrl+P cycles through: the scoped models that have credentials when a scope is set,
/// else every available model.
pub fn cycle_candidates(
    scoped: &[ScopedModel],
    available: &[Model],
    has_credentials: &dyn Fn(&Model) -> bool,
) -> Vec<ScopedModel> {
    if scoped.is_empty() {
        available
            .iter()
            .map(|m| ScopedModel {
                model: m.clone(),
                thinking: None,
            })
            .collect()
    } else {
        scoped
            .iter()
            .filter(|s| has_credentials(&s.model))
            .cloned()
            .collect()
    }
}

/// The candidate after (or before) `current`, wrapping; `None` with fewer than two.
pub fn next_in_cycle<'a>(
    candidates: &'a [ScopedModel],
    current: &Model,
    forward: bool,
) -> Option<&'a ScopedModel> {
    let len = candidates.len();
    if len < 2 {
        return None;
    }
    let index = candidates
        .iter()
        .position(|c| same_model(&c.model, current))
        .unwrap_or(0);
    Some(
        &candidates[if forward {
            (index + 1) % len
        } else {
            (index + len - 1) % len
        }],
    )
}

/// A start-up default the user saves explicitly (pi 1.x's `persist: true`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SavedDefault {
    Model {
        provider: String,
        id: String,
    },
    /// The level as chosen, not clamped to the model (pi saves the requested level).
    Thinking(ThinkingLevel),
}

impl SavedDefault {
    fn entries(&self) -> Vec<(&'static str, String)> {
        match self {
            SavedDefault::Model { provider, id } => vec![
                ("defaultProvider", provider.clone()),
                ("defaultModel", id.clone()),
            ],
            SavedDefault::Thinking(level) => {
                vec![("defaultThinkingLevel", level.as_str().to_string())]
            }
        }
    }
}

impl AgentSession {
    fn note_settings_error(&mut self, result: Result<(), String>) {
        if let Err(e) = result {
            self.write_errors.push(e);
        }
    }

    fn level_for_switch(&self, explicit: Option<ThinkingLevel>) -> ThinkingLevel {
        level_for_switch(
            explicit,
            self.agent().thinking,
            self.settings.default_thinking_level(),
        )
    }

    fn apply_model(
        &mut self,
        model: Model,
        credentials: Credentials,
        level: ThinkingLevel,
        source: ModelSource,
    ) -> Result<Option<ThinkingLevel>, String> {
        let previous = self.agent().model.clone();
        let agent = self.agent_mut();
        agent.options.api_key = credentials.0;
        agent.options.headers = credentials.1;
        agent.model = model.clone();
        self.session
            .append_model_change(&model.provider, &model.id)
            .map_err(|e| e.to_string())?;
        self.emit_model_select(&previous, source);
        Ok(self.set_thinking_level(level))
    }

    /// Switches to `model` (whose credentials the caller resolved). Returns the new thinking
    /// level when the switch changed it (clamped to what the model supports).
    pub fn set_model(
        &mut self,
        model: Model,
        credentials: Credentials,
    ) -> Result<Option<ThinkingLevel>, String> {
        let level = self.level_for_switch(None);
        self.apply_model(model, credentials, level, ModelSource::Set)
    }

    /// The next (or previous) model: through the scoped models that have credentials when a
    /// scope is set, else through `available`. `None` when there is nothing to cycle to.
    pub fn cycle_model(
        &mut self,
        forward: bool,
        available: &[Model],
        credentials: &dyn Fn(&Model) -> Result<Credentials, String>,
    ) -> Result<Option<ModelCycle>, String> {
        let candidates =
            cycle_candidates(&self.scoped_models, available, &|m| credentials(m).is_ok());
        let Some(next) = next_in_cycle(&candidates, &self.agent().model, forward) else {
            return Ok(None);
        };
        let creds = credentials(&next.model)?;
        let level = self.level_for_switch(next.thinking);
        self.apply_model(next.model.clone(), creds, level, ModelSource::Cycle)?;
        Ok(Some(ModelCycle {
            model: next.model.clone(),
            thinking: self.agent().thinking,
            scoped: !self.scoped_models.is_empty(),
        }))
    }

    /// Sets the thinking level, clamped to the model, for this session only (pi 1.x saves it
    /// only on an explicit request, see [`AgentSession::save_default`]). When it changes, the
    /// change is recorded in the session; returns the new level then.
    pub fn set_thinking_level(&mut self, level: ThinkingLevel) -> Option<ThinkingLevel> {
        let model = self.agent().model.clone();
        let level = clamp_thinking(&model, level);
        let previous = self.agent().thinking;
        if previous == level {
            return None;
        }
        self.agent_mut().thinking = level;
        self.emit_thinking_select(level, previous);
        if let Err(e) = self.session.append_thinking_level_change(level.as_str()) {
            self.write_errors.push(e.to_string());
        }
        Some(level)
    }

    /// Writes a start-up default (`defaultProvider`/`defaultModel`, `defaultThinkingLevel`)
    /// to the global settings: the selectors' Ctrl+S. A failure joins the write errors.
    pub fn save_default(&mut self, default: &SavedDefault) {
        for (key, value) in default.entries() {
            let saved = self.settings.set_global(key, value.into());
            self.note_settings_error(saved);
        }
    }

    /// The next level the model supports; `None` for a model without reasoning.
    pub fn cycle_thinking_level(&mut self) -> Option<ThinkingLevel> {
        let next = next_thinking_level(&self.agent().model, self.agent().thinking)?;
        self.set_thinking_level(next);
        Some(next)
    }

    /// How queued steering (`steering == true`) or follow-up messages are delivered.
    pub fn set_queue_mode(&mut self, steering: bool, mode: QueueMode) {
        let agent = self.agent();
        let (queue, key) = if steering {
            (&agent.steering, "steeringMode")
        } else {
            (&agent.follow_up, "followUpMode")
        };
        queue.set_mode(mode);
        let name = match mode {
            QueueMode::All => "all",
            QueueMode::OneAtATime => "one-at-a-time",
        };
        let saved = self.settings.set_global(key, name.into());
        self.note_settings_error(saved);
    }

    pub fn set_auto_retry(&mut self, enabled: bool) {
        self.retry.enabled = enabled;
        let saved = self
            .settings
            .set_global_nested("retry", "enabled", Value::Bool(enabled));
        self.note_settings_error(saved);
    }

    pub fn set_auto_compaction(&mut self, enabled: bool) {
        self.compaction.enabled = enabled;
        let saved = self
            .settings
            .set_global_nested("compaction", "enabled", Value::Bool(enabled));
        self.note_settings_error(saved);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pi 1.x: a switch keeps the level in use unless a scope pattern or a saved default
    /// names one (0.73.1 fell back to `medium` after a model without reasoning).
    #[test]
    fn a_switch_takes_the_pattern_then_the_saved_default_then_the_current_level() {
        use ThinkingLevel::*;
        assert_eq!(level_for_switch(Some(High), Off, Some("low")), High);
        assert_eq!(level_for_switch(None, Off, Some("low")), Low);
        assert_eq!(level_for_switch(None, Off, None), Off);
        assert_eq!(level_for_switch(None, Minimal, Some("bogus")), Minimal);
    }
}
