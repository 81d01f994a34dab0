//! Model and thinking-level management shared by every mode: switching and cycling models
//! (the `--models` scope first, else every model with a key), thinking levels clamped to
//! what the model supports, queue modes and the auto-retry/auto-compaction toggles — each
//! recorded in the session and remembered in the global settings the way pi remembers them.
//! Which model or level comes next, as data, is `model_cycle`'s.

use serde_json::Value;

use super::session_hooks::ModelSource;
use super::AgentSession;
use crate::agent::QueueMode;
use crate::ai::{Model, ThinkingLevel};
use crate::resources::model_resolve::clamp_thinking;

pub use super::model_cycle::{
    cycle_candidates, level_for_switch, next_in_cycle, next_thinking_level, Credentials,
    ModelCycle, SavedDefault, ScopedModel,
};

impl AgentSession {
    fn note_settings_error(
        &mut self,
        result: Result<(), crate::resources::settings::SettingsError>,
    ) {
        if let Err(e) = result {
            self.write_errors.push(e.to_string());
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
        if let SavedDefault::Model { provider, id } = default {
            self.add_saved_default_to_scope(provider, id);
        }
    }

    /// pi 1.6.0: a default model saved from a non-empty scope joins it, so it stays in the
    /// Ctrl+P cycle, and (when `enabledModels` names the scope) as `provider/id` in the file.
    fn add_saved_default_to_scope(&mut self, provider: &str, id: &str) {
        if self.scoped_models.is_empty()
            || self
                .scoped_models
                .iter()
                .any(|s| s.model.provider == provider && s.model.id == id)
        {
            return;
        }
        let model = self.agent().model.clone();
        if model.provider == provider && model.id == id {
            self.scoped_models.push(ScopedModel {
                model,
                thinking: None,
            });
        }
        let mut patterns = self.settings.string_list("enabledModels");
        let reference = format!("{provider}/{id}");
        if patterns.is_empty() || patterns.iter().any(|p| p.eq_ignore_ascii_case(&reference)) {
            return;
        }
        patterns.push(reference);
        let saved = self.settings.set_global("enabledModels", patterns.into());
        self.note_settings_error(saved);
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

#[cfg(test)]
mod scope_tests {
    use super::*;
    use crate::agent::Agent;
    use crate::ai::{Abort, ModelCost};
    use crate::resources::settings::{RetrySettings, Settings};

    fn model(id: &str) -> Model {
        Model {
            id: id.into(),
            name: id.into(),
            api: "scripted".into(),
            provider: "p".into(),
            base_url: String::new(),
            reasoning: false,
            input: vec!["text".into()],
            cost: ModelCost::default(),
            context_window: 1000,
            max_tokens: 100,
            thinking_level_map: None,
            headers: None,
            compat: None,
        }
    }

    #[test]
    fn a_default_saved_from_a_non_empty_scope_joins_it() {
        let mut s = AgentSession::new(
            Agent::new(model("b"), String::new(), Default::default()),
            RetrySettings::default(),
            Abort::new(),
        );
        s.settings = Settings::in_memory(
            serde_json::json!({"enabledModels": ["p/a"]})
                .as_object()
                .unwrap()
                .clone(),
        );
        s.scoped_models = vec![ScopedModel {
            model: model("a"),
            thinking: None,
        }];
        let save = SavedDefault::Model {
            provider: "p".into(),
            id: "b".into(),
        };
        s.save_default(&save);
        assert_eq!(s.settings.string_list("enabledModels"), ["p/a", "p/b"]);
        let ids: Vec<&str> = s
            .scoped_models
            .iter()
            .map(|m| m.model.id.as_str())
            .collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(s.settings.default_model(), Some("b"));
        // Saving it again adds nothing.
        s.save_default(&save);
        assert_eq!(s.settings.string_list("enabledModels"), ["p/a", "p/b"]);

        // Without a scope nothing is added.
        s.scoped_models.clear();
        s.settings = Settings::in_memory(serde_json::Map::new());
        s.save_default(&save);
        assert!(s.settings.string_list("enabledModels").is_empty());
    }
}
