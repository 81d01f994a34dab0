//! [`ScopedModelsSelector`] (`/scoped-models`): turn models on and off for Ctrl+P cycling.
//! Like pi, changes apply to the session at once (each one is reported as
//! [`ScopedModelsOutcome::Changed`]) and reach `settings.json` only on Ctrl+S
//! ([`ScopedModelsOutcome::Saved`]); Escape closes.
//!
//! The enabled set is `None` while every model is enabled (no filter), else the enabled
//! `provider/id`s in cycling order — the patterns pi stores in `enabledModels`.

use std::collections::VecDeque;
use std::sync::Arc;

use super::common::{border, fit, key_text, position_line, scroll_window, step_wrapping};
use crate::ai::types::Model;
use crate::tui::components::input::Input;
use crate::tui::components::text::Text;
use crate::tui::fuzzy::fuzzy_filter;
use crate::tui::keybindings;
use crate::tui::theme::{Theme, Token};
use crate::tui::{Component, InputEvent};

const MAX_VISIBLE: usize = 8;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScopedModelsOutcome {
    /// Apply to the session now (`None`: no scope). The selector stays open.
    Changed(Option<Vec<String>>),
    /// Persist as `enabledModels` (`None`: remove the setting). The selector stays open.
    Saved(Option<Vec<String>>),
    /// Closed; the app removes the overlay.
    Cancelled,
}

pub struct ScopedModelsSelector {
    theme: Arc<Theme>,
    models: Vec<Model>,
    all_ids: Vec<String>,
    enabled: Option<Vec<String>>,
    /// Full ids in display order passing the search.
    filtered: Vec<String>,
    selected: usize,
    search: Input,
    dirty: bool,
    outcomes: VecDeque<ScopedModelsOutcome>,
}

fn full_id(m: &Model) -> String {
    format!("{}/{}", m.provider, m.id)
}

impl ScopedModelsSelector {
    /// `all_models`: the models with credentials; `enabled`: the current scope as full ids
    /// (`None`: all enabled).
    pub fn new(all_models: Vec<Model>, enabled: Option<Vec<String>>, theme: Arc<Theme>) -> Self {
        let all_ids = all_models.iter().map(full_id).collect();
        let mut s = ScopedModelsSelector {
            theme,
            models: all_models,
            all_ids,
            enabled,
            filtered: Vec::new(),
            selected: 0,
            search: Input::new(),
            dirty: false,
            outcomes: VecDeque::new(),
        };
        s.refresh();
        s
    }

    /// The next change, save or close, in order.
    pub fn take_outcome(&mut self) -> Option<ScopedModelsOutcome> {
        self.outcomes.pop_front()
    }

    fn model(&self, id: &str) -> Option<&Model> {
        self.models.iter().find(|m| full_id(m) == id)
    }

    fn is_enabled(&self, id: &str) -> bool {
        self.enabled
            .as_ref()
            .is_none_or(|e| e.iter().any(|x| x == id))
    }

    fn refresh(&mut self) {
        let ordered: Vec<String> = match &self.enabled {
            None => self.all_ids.clone(),
            Some(e) => e
                .iter()
                .cloned()
                .chain(self.all_ids.iter().filter(|id| !e.contains(id)).cloned())
                .filter(|id| self.all_ids.contains(id))
                .collect(),
        };
        let keyed: Vec<(String, String)> = ordered
            .into_iter()
            .map(|id| {
                // pi 1.6.0: the display name is searched too.
                let key = self
                    .model(&id)
                    .map(|m| {
                        let (p, mid) = (&m.provider, &m.id);
                        format!("{mid} {p} {p}/{mid} {p} {mid} {}", m.name)
                    })
                    .unwrap_or_default();
                (id, key)
            })
            .collect();
        self.filtered = fuzzy_filter(keyed, self.search.value(), |(_, k)| k.as_str())
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        self.selected = self.selected.min(self.filtered.len().saturating_sub(1));
    }

    fn changed(&mut self) {
        self.dirty = true;
        self.refresh();
        self.outcomes
            .push_back(ScopedModelsOutcome::Changed(self.enabled.clone()));
    }

    /// Enables `targets` (all when `None`); back to "no filter" once everything is on.
    fn enable(&mut self, targets: Option<Vec<String>>) {
        let Some(enabled) = &self.enabled else {
            return;
        };
        let mut next = enabled.clone();
        for id in targets.unwrap_or_else(|| self.all_ids.clone()) {
            if !next.contains(&id) {
                next.push(id);
            }
        }
        self.enabled = (next.len() != self.all_ids.len()).then_some(next);
    }

    /// Disables `targets` (everything when `None`).
    fn clear(&mut self, targets: Option<Vec<String>>) {
        self.enabled = Some(match (&self.enabled, targets) {
            (None, Some(t)) => self
                .all_ids
                .iter()
                .filter(|id| !t.contains(id))
                .cloned()
                .collect(),
            (None, None) | (Some(_), None) => Vec::new(),
            (Some(e), Some(t)) => e.iter().filter(|id| !t.contains(id)).cloned().collect(),
        });
    }

    fn toggle(&mut self, id: &str) {
        self.enabled = Some(match self.enabled.take() {
            None => vec![id.to_string()],
            Some(mut e) => {
                if let Some(i) = e.iter().position(|x| x == id) {
                    e.remove(i);
                } else {
                    e.push(id.to_string());
                }
                e
            }
        });
    }

    fn reorder(&mut self, delta: isize) {
        let Some(id) = self.filtered.get(self.selected).cloned() else {
            return;
        };
        let Some(enabled) = &mut self.enabled else {
            return;
        };
        let Some(at) = enabled.iter().position(|x| *x == id) else {
            return;
        };
        let to = at as isize + delta;
        if to < 0 || to as usize >= enabled.len() {
            return;
        }
        enabled.swap(at, to as usize);
        self.selected = (self.selected as isize + delta).max(0) as usize;
        self.changed();
    }

    fn footer(&self) -> String {
        let t = &self.theme;
        let count = match &self.enabled {
            None => "all enabled".to_string(),
            Some(e) => format!("{}/{} enabled", e.len(), self.all_ids.len()),
        };
        let parts = [
            format!("{} toggle", key_text("tui.select.confirm")),
            format!("{} all", key_text("app.models.enableAll")),
            format!("{} clear", key_text("app.models.clearAll")),
            format!("{} provider", key_text("app.models.toggleProvider")),
            format!(
                "{}/{} reorder",
                key_text("app.models.reorderUp"),
                key_text("app.models.reorderDown")
            ),
            format!("{} save", key_text("app.models.save")),
            count,
        ];
        let text = format!("  {}", parts.join(" · "));
        if self.dirty {
            t.fg(Token::Dim, &format!("{text} ")) + &t.fg(Token::Warning, "(unsaved)")
        } else {
            t.fg(Token::Dim, &text)
        }
    }

    fn rows(&self) -> Vec<String> {
        let t = &self.theme;
        if self.filtered.is_empty() {
            return vec![t.fg(Token::Muted, "  No matching models")];
        }
        let (start, end) = scroll_window(self.selected, self.filtered.len(), MAX_VISIBLE);
        let mut lines = Vec::new();
        for i in start..end {
            let id = &self.filtered[i];
            let Some(model) = self.model(id) else {
                continue;
            };
            let selected = i == self.selected;
            let prefix = if selected {
                t.fg(Token::Accent, "→ ")
            } else {
                "  ".into()
            };
            let id_text = if selected {
                t.fg(Token::Accent, &model.id)
            } else {
                model.id.clone()
            };
            // pi 1.6.0: `→ ✓ id (Name) [provider]`, the mark on every enabled model.
            let status = if self.is_enabled(id) {
                t.fg(Token::Accent, "✓ ")
            } else {
                "  ".to_string()
            };
            let name = super::model::distinct_model_name(&model.id, &model.name)
                .map(|n| t.fg(Token::Muted, &format!(" ({n})")))
                .unwrap_or_default();
            let badge = t.fg(Token::Muted, &format!(" [{}]", model.provider));
            lines.push(format!("{prefix}{status}{id_text}{name}{badge}"));
        }
        if start > 0 || end < self.filtered.len() {
            lines.push(position_line(t, self.selected, self.filtered.len()));
        }
        if let Some(model) = self
            .filtered
            .get(self.selected)
            .and_then(|id| self.model(id))
        {
            lines.push(String::new());
            lines.push(t.fg(Token::Muted, &format!("  Model Name: {}", model.name)));
        }
        lines
    }
}

impl Component for ScopedModelsSelector {
    fn render(&mut self, width: usize) -> Vec<String> {
        let t = &self.theme;
        let mut lines = vec![
            border(t, Token::Border, width),
            String::new(),
            t.fg(Token::Accent, &t.bold("Model Configuration")),
            t.fg(
                Token::Muted,
                &format!(
                    "Session-only. {} to save to settings.",
                    key_text("app.models.save")
                ),
            ),
            String::new(),
        ];
        lines.extend(self.search.render(width));
        lines.push(String::new());
        lines.extend(self.rows());
        lines.push(String::new());
        // The hint line wraps, as pi's does, so the count at its end stays readable.
        lines.extend(Text::new(self.footer(), 0, 0).render(width));
        lines.push(border(t, Token::Border, width));
        fit(lines, width)
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let key = event.key();
        let is = |id: &str| key.is_some_and(|k| keybindings::matches(k, id));
        let searching = !self.search.value().is_empty();
        let current = self.filtered.get(self.selected).cloned();
        if is("tui.select.up") || is("tui.select.down") {
            self.selected =
                step_wrapping(self.selected, self.filtered.len(), is("tui.select.down"));
        } else if is("app.models.reorderUp") || is("app.models.reorderDown") {
            self.reorder(if is("app.models.reorderUp") { -1 } else { 1 });
        } else if is("tui.select.confirm") {
            if let Some(id) = current {
                self.toggle(&id);
                self.changed();
            }
        } else if is("app.models.enableAll") {
            self.enable(searching.then(|| self.filtered.clone()));
            self.changed();
        } else if is("app.models.clearAll") {
            self.clear(searching.then(|| self.filtered.clone()));
            self.changed();
        } else if is("app.models.toggleProvider") {
            if let Some(provider) = current
                .and_then(|id| self.model(&id))
                .map(|m| m.provider.clone())
            {
                let ids: Vec<String> = self
                    .models
                    .iter()
                    .filter(|m| m.provider == provider)
                    .map(full_id)
                    .collect();
                if ids.iter().all(|id| self.is_enabled(id)) {
                    self.clear(Some(ids));
                } else {
                    self.enable(Some(ids));
                }
                self.changed();
            }
        } else if is("app.models.save") {
            let all = self
                .enabled
                .as_ref()
                .is_none_or(|e| e.len() == self.all_ids.len());
            let patterns = if all { None } else { self.enabled.clone() };
            self.outcomes
                .push_back(ScopedModelsOutcome::Saved(patterns));
            self.dirty = false;
        } else if key.is_some_and(|k| k.matches("ctrl+c")) && searching {
            self.search.set_value("");
            self.refresh();
        } else if is("tui.select.cancel") {
            self.outcomes.push_back(ScopedModelsOutcome::Cancelled);
        } else {
            let before = self.search.value().to_string();
            self.search.handle_input(event);
            // pi 1.6.0: a changed query highlights its top match; cursor keys move nothing.
            if self.search.value() != before && !self.search.value().is_empty() {
                self.selected = 0;
            }
            self.refresh();
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::test_support::*;
    use super::super::model::tests::model;
    use super::*;

    fn models() -> Vec<Model> {
        vec![
            model("anthropic", "claude-sonnet-4", "Claude Sonnet 4"),
            model("anthropic", "claude-haiku", "Claude Haiku"),
            model("openai", "gpt-4o", "GPT-4o"),
        ]
    }

    fn drain(s: &mut ScopedModelsSelector) -> Vec<ScopedModelsOutcome> {
        std::iter::from_fn(|| s.take_outcome()).collect()
    }

    #[test]
    fn toggling_starts_from_one_model_and_saves_patterns() {
        let mut s = ScopedModelsSelector::new(models(), None, theme());
        let lines = screen(&mut s, 150);
        assert_eq!(lines[2], "Model Configuration");
        assert_eq!(lines[3], "Session-only. ctrl+s to save to settings.");
        assert_eq!(lines[7], "→ ✓ claude-sonnet-4 [anthropic]");
        assert!(
            lines[13].ends_with("ctrl+s save · all enabled"),
            "{lines:?}"
        );
        // At 100 columns the hint wraps, as pi's does, instead of losing the count.
        let lines = screen(&mut s, 100);
        assert!(lines[13].ends_with("ctrl+s save"), "{lines:?}");
        assert_eq!(lines[14], "· all enabled");
        s.handle_input(&key("down"));
        s.handle_input(&key("enter"));
        let only = Some(vec!["anthropic/claude-haiku".to_string()]);
        assert_eq!(drain(&mut s), [ScopedModelsOutcome::Changed(only.clone())]);
        let lines = screen(&mut s, 150);
        // Enabled models move to the top.
        assert_eq!(lines[7], "  ✓ claude-haiku [anthropic]");
        assert_eq!(lines[8], "→   claude-sonnet-4 [anthropic]");
        assert!(
            lines[13].ends_with("1/3 enabled (unsaved)"),
            "{}",
            lines[13]
        );
        s.handle_input(&key("ctrl+s"));
        assert_eq!(drain(&mut s), [ScopedModelsOutcome::Saved(only)]);
        assert!(screen(&mut s, 150)[13].ends_with("1/3 enabled"));
        assert_fits(&mut s);
    }

    #[test]
    fn provider_toggle_enable_all_clear_and_reorder() {
        let enabled = Some(vec!["openai/gpt-4o".to_string()]);
        let mut s = ScopedModelsSelector::new(models(), enabled, theme());
        // Rows: gpt-4o (enabled, first), sonnet, haiku. Ctrl+P on sonnet enables all of
        // anthropic, which is everything: back to no filter.
        s.handle_input(&key("down"));
        s.handle_input(&key("ctrl+p"));
        let ids = |v: &[&str]| Some(v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(drain(&mut s), [ScopedModelsOutcome::Changed(None)]);
        s.handle_input(&key("ctrl+p"));
        assert_eq!(
            drain(&mut s),
            [ScopedModelsOutcome::Changed(ids(&["openai/gpt-4o"]))]
        );
        s.handle_input(&key("ctrl+x"));
        assert_eq!(drain(&mut s), [ScopedModelsOutcome::Changed(Some(vec![]))]);
        type_text(&mut s, "haiku");
        s.handle_input(&key("ctrl+a"));
        assert_eq!(
            drain(&mut s),
            [ScopedModelsOutcome::Changed(ids(&[
                "anthropic/claude-haiku"
            ]))]
        );
        s.handle_input(&key("ctrl+c"));
        assert_eq!(s.search.value(), "");
        s.handle_input(&key("down"));
        s.handle_input(&key("enter"));
        drain(&mut s);
        // haiku, sonnet enabled; sonnet selected at row 1 → move it up.
        s.handle_input(&key("alt+up"));
        assert_eq!(
            drain(&mut s),
            [ScopedModelsOutcome::Changed(ids(&[
                "anthropic/claude-sonnet-4",
                "anthropic/claude-haiku"
            ]))]
        );
        s.handle_input(&key("escape"));
        assert_eq!(drain(&mut s), [ScopedModelsOutcome::Cancelled]);
        assert_fits(&mut s);
    }
}
