//! [`ModelSelector`] (`/model`, Ctrl+L): the models that have credentials, the current one
//! first and marked ✓, filtered fuzzily as the user types; Tab switches between all models
//! and the scoped set (`--models` / `/scoped-models`) when there is one.

use std::sync::Arc;

use super::common::{
    border, fit, key_hint, position_line, scroll_window, select_or_save_hint, step_wrapping,
};
use crate::ai::types::Model;
use crate::resources::model_resolve::locale_compare;
use crate::tui::components::input::Input;
use crate::tui::fuzzy::fuzzy_filter;
use crate::tui::keybindings;
use crate::tui::theme::{Theme, Token};
use crate::tui::{Component, InputEvent};
use crate::util::sort;

const MAX_VISIBLE: usize = 10;

#[derive(Debug, Clone, PartialEq)]
pub enum ModelOutcome {
    /// The app switches to it for this session.
    Selected(Box<Model>),
    /// Ctrl+S: switches to it and saves it as the default (`defaultProvider`/`defaultModel`).
    SelectedAsDefault(Box<Model>),
    Cancelled,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    All,
    Scoped,
}

pub struct ModelSelector {
    theme: Arc<Theme>,
    current: Option<(String, String)>,
    /// The saved `defaultProvider`/`defaultModel`, marked `· default`.
    default: Option<(String, String)>,
    all: Vec<Model>,
    scoped: Vec<Model>,
    scope: Scope,
    /// Indexes into the active list (all or scoped) passing the search.
    filtered: Vec<usize>,
    selected: usize,
    search: Input,
    error: Option<String>,
    outcome: Option<ModelOutcome>,
}

fn same(model: &Model, current: &Option<(String, String)>) -> bool {
    current
        .as_ref()
        .is_some_and(|(p, id)| *p == model.provider && *id == model.id)
}

impl ModelSelector {
    /// `available`: models with credentials; `current`: the session's model; `scoped`: the
    /// Ctrl+P set (empty when none), shown first when given.
    pub fn new(
        available: Vec<Model>,
        current: Option<&Model>,
        scoped: Vec<Model>,
        theme: Arc<Theme>,
    ) -> ModelSelector {
        let current = current.map(|m| (m.provider.clone(), m.id.clone()));
        let mut all = available;
        // Current first, then by provider (stable within a provider).
        sort::sort_by(&mut all, |a, b| {
            same(b, &current)
                .cmp(&same(a, &current))
                .then_with(|| locale_compare(&a.provider, &b.provider))
        });
        let scope = if scoped.is_empty() {
            Scope::All
        } else {
            Scope::Scoped
        };
        let mut selector = ModelSelector {
            theme,
            current,
            default: None,
            all,
            scoped,
            scope,
            filtered: Vec::new(),
            selected: 0,
            search: Input::new(),
            error: None,
            outcome: None,
        };
        selector.refilter();
        selector.select_current();
        selector
    }

    /// Pre-fills the search (`/model <query>`).
    pub fn with_search(mut self, query: &str) -> ModelSelector {
        self.search.set_value(query);
        self.refilter();
        self
    }

    /// Marks the saved default model and lists it right after the current one.
    pub fn with_default(mut self, provider: &str, id: &str) -> ModelSelector {
        let default = Some((provider.to_string(), id.to_string()));
        let current = self.current.clone();
        sort::sort_by_key(&mut self.all, |m| (!same(m, &current), !same(m, &default)));
        self.default = default;
        self.refilter();
        self.select_current();
        self
    }

    /// A models.json problem to show in red instead of the model name.
    pub fn with_error(mut self, error: impl Into<String>) -> ModelSelector {
        self.error = Some(error.into());
        self
    }

    pub fn take_outcome(&mut self) -> Option<ModelOutcome> {
        self.outcome.take()
    }

    fn active(&self) -> &[Model] {
        match self.scope {
            Scope::All => &self.all,
            Scope::Scoped => &self.scoped,
        }
    }

    fn select_current(&mut self) {
        if let Some(i) = self
            .filtered
            .iter()
            .position(|i| same(&self.active()[*i], &self.current))
        {
            self.selected = i;
        }
    }

    fn refilter(&mut self) {
        let query = self.search.value().to_string();
        let keys: Vec<(usize, String)> = self
            .active()
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let (p, id) = (&m.provider, &m.id);
                (i, format!("{id} {p} {p}/{id} {p} {id}"))
            })
            .collect();
        self.filtered = fuzzy_filter(keys, &query, |(_, k)| k.as_str())
            .into_iter()
            .map(|(i, _)| i)
            .collect();
        self.selected = self.selected.min(self.filtered.len().saturating_sub(1));
    }

    fn selected_model(&self) -> Option<&Model> {
        self.filtered.get(self.selected).map(|i| &self.active()[*i])
    }

    fn header(&self) -> Vec<String> {
        let t = &self.theme;
        if self.scoped.is_empty() {
            return vec![t.fg(
                Token::Warning,
                "Only showing models from configured providers. Use /login to add providers.",
            )];
        }
        let pick = |on: bool, s: &str| t.fg(if on { Token::Accent } else { Token::Muted }, s);
        vec![
            format!(
                "{}{}{}{}",
                t.fg(Token::Muted, "Scope: "),
                pick(self.scope == Scope::All, "all"),
                t.fg(Token::Muted, " | "),
                pick(self.scope == Scope::Scoped, "scoped"),
            ),
            key_hint(t, "tui.input.tab", "scope") + &t.fg(Token::Muted, " (all/scoped)"),
        ]
    }

    fn rows(&self) -> Vec<String> {
        let t = &self.theme;
        let mut lines = Vec::new();
        let (start, end) = scroll_window(self.selected, self.filtered.len(), MAX_VISIBLE);
        for row in start..end {
            let model = &self.active()[self.filtered[row]];
            let badge = t.fg(Token::Muted, &format!("[{}]", model.provider));
            let mut check = if same(model, &self.current) {
                t.fg(Token::Success, " ✓")
            } else {
                String::new()
            };
            if same(model, &self.default) {
                check.push_str(&t.fg(Token::Muted, " · default"));
            }
            lines.push(if row == self.selected {
                format!(
                    "{}{} {badge}{check}",
                    t.fg(Token::Accent, "→ "),
                    t.fg(Token::Accent, &model.id)
                )
            } else {
                format!("  {} {badge}{check}", model.id)
            });
        }
        if start > 0 || end < self.filtered.len() {
            lines.push(position_line(t, self.selected, self.filtered.len()));
        }
        if let Some(error) = &self.error {
            lines.extend(error.lines().map(|l| t.fg(Token::Error, l)));
        } else if let Some(model) = self.selected_model() {
            lines.push(String::new());
            lines.push(t.fg(Token::Muted, &format!("  Model Name: {}", model.name)));
        } else {
            lines.push(t.fg(Token::Muted, "  No matching models"));
        }
        lines
    }
}

impl Component for ModelSelector {
    fn render(&mut self, width: usize) -> Vec<String> {
        let mut lines = vec![border(&self.theme, Token::Border, width), String::new()];
        lines.extend(self.header());
        lines.push(String::new());
        lines.extend(self.search.render(width));
        lines.push(String::new());
        lines.extend(self.rows());
        lines.push(String::new());
        lines.push(select_or_save_hint(&self.theme, "app.models.save"));
        lines.push(border(&self.theme, Token::Border, width));
        fit(lines, width)
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let key = event.key();
        let is = |id: &str| key.is_some_and(|k| keybindings::matches(k, id));
        let n = self.filtered.len();
        if is("tui.input.tab") {
            if !self.scoped.is_empty() {
                self.scope = match self.scope {
                    Scope::All => Scope::Scoped,
                    Scope::Scoped => Scope::All,
                };
                self.selected = 0;
                self.refilter();
                self.select_current();
            }
        } else if is("tui.select.up") || is("tui.select.down") {
            self.selected = step_wrapping(self.selected, n, is("tui.select.down"));
        } else if is("tui.select.confirm") {
            if let Some(model) = self.selected_model() {
                self.outcome = Some(ModelOutcome::Selected(Box::new(model.clone())));
            }
        } else if is("app.models.save") {
            if let Some(model) = self.selected_model() {
                self.outcome = Some(ModelOutcome::SelectedAsDefault(Box::new(model.clone())));
            }
        } else if is("tui.select.cancel") {
            self.outcome = Some(ModelOutcome::Cancelled);
        } else {
            self.search.handle_input(event);
            self.refilter();
        }
        true
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::common::test_support::*;
    use super::*;
    use crate::ai::types::ModelCost;

    pub fn model(provider: &str, id: &str, name: &str) -> Model {
        Model {
            id: id.into(),
            name: name.into(),
            api: "openai-completions".into(),
            provider: provider.into(),
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

    fn models() -> Vec<Model> {
        vec![
            model("openai", "gpt-4o", "GPT-4o"),
            model("anthropic", "claude-sonnet-4", "Claude Sonnet 4"),
            model("anthropic", "claude-haiku", "Claude Haiku"),
            model("google", "gemini-2.5-pro", "Gemini 2.5 Pro"),
        ]
    }

    #[test]
    fn lists_current_first_and_marks_it() {
        let current = model("google", "gemini-2.5-pro", "Gemini 2.5 Pro");
        let mut s = ModelSelector::new(models(), Some(&current), vec![], theme());
        let lines = screen(&mut s, 80);
        assert!(lines[2].starts_with("Only showing models"), "{lines:?}");
        assert_eq!(lines[4], ">");
        assert_eq!(lines[6], "→ gemini-2.5-pro [google] ✓");
        assert_eq!(lines[7], "  claude-sonnet-4 [anthropic]");
        assert_eq!(lines[9], "  gpt-4o [openai]");
        assert_eq!(lines[11], "  Model Name: Gemini 2.5 Pro");
        assert_fits(&mut s);
    }

    #[test]
    fn filters_navigates_and_selects() {
        let mut s = ModelSelector::new(models(), None, vec![], theme());
        type_text(&mut s, "haiku");
        let lines = screen(&mut s, 80);
        assert_eq!(lines[6], "→ claude-haiku [anthropic]");
        assert_eq!(lines[7], "");
        s.handle_input(&key("backspace"));
        type_text(&mut s, "zzzz");
        assert!(screen(&mut s, 80).contains(&"  No matching models".to_string()));
        s.handle_input(&key("enter"));
        assert_eq!(s.take_outcome(), None);
        let mut s = ModelSelector::new(models(), None, vec![], theme());
        s.handle_input(&key("up"));
        s.handle_input(&key("enter"));
        match s.take_outcome() {
            Some(ModelOutcome::Selected(m)) => assert_eq!(m.id, "gpt-4o"),
            other => panic!("{other:?}"),
        }
        s.handle_input(&key("escape"));
        assert_eq!(s.take_outcome(), Some(ModelOutcome::Cancelled));
    }

    #[test]
    fn scoped_set_first_and_tab_toggles_scope() {
        let scoped = vec![model("openai", "gpt-4o", "GPT-4o")];
        let mut s = ModelSelector::new(models(), None, scoped, theme());
        let lines = screen(&mut s, 80);
        assert_eq!(lines[2], "Scope: all | scoped");
        assert_eq!(lines[3], "tab scope (all/scoped)");
        assert_eq!(lines[7], "→ gpt-4o [openai]");
        assert_eq!(lines[8], "");
        s.handle_input(&key("tab"));
        let lines = screen(&mut s, 80);
        assert_eq!(lines[8], "  claude-haiku [anthropic]");
        assert_fits(&mut s);
    }

    #[test]
    fn scrolls_with_position_line() {
        let many: Vec<Model> = (0..30)
            .map(|i| model("p", &format!("m{i:02}"), "M"))
            .collect();
        let mut s = ModelSelector::new(many, None, vec![], theme());
        for _ in 0..15 {
            s.handle_input(&key("down"));
        }
        let lines = screen(&mut s, 60);
        assert!(lines.contains(&"  (16/30)".to_string()), "{lines:?}");
        assert!(lines.contains(&"→ m15 [p]".to_string()));
    }
}
