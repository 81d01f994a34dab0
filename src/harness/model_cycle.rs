//! The models a mode can switch to and cycle through, as data: the `--models` scope
//! ([`ScopedModel`]), where a Ctrl+P cycle lands, the thinking level a switch starts from and
//! the one Shift+Tab moves to. `model_control` applies them to a session.

use crate::ai::{Model, ThinkingLevel};
use crate::resources::model_resolve::supported_thinking_levels;

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
    pub(super) fn entries(&self) -> Vec<(&'static str, String)> {
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
