//! [`ModelSelector`] (`/model`, Ctrl+L): the models that have credentials, the current one
//! first and marked ✓, filtered fuzzily as the user types; Tab switches between all models
//! and the scoped set (`--models` / `/scoped-models`) when there is one.

use std::sync::Arc;

use super::common::{
    border, fit, key_hint, position_line, scroll_window, select_or_save_hint, step_wrapping,
};
use crate::ai::types::Model;
use crate::tui::components::input::Input;
use crate::tui::fuzzy::fuzzy_filter;
use crate::tui::keybindings;
use crate::tui::theme::{Theme, Token};
use crate::tui::{Component, InputEvent};
use crate::util::collate::locale_compare;
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
        let default = self.default.clone();
        // pi 1.6.0: the display name is searched too, and the saved default answers "default".
        let keys: Vec<(usize, String)> = self
            .active()
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let mut key = model_search_text(m);
                if same(m, &default) {
                    key.push_str(" default");
                }
                (i, key)
            })
            .collect();
        let mut filtered: Vec<usize> = fuzzy_filter(keys, &query, |(_, k)| k.as_str())
            .into_iter()
            .map(|(i, _)| i)
            .collect();
        if is_default_search(&query) {
            if let Some(d) = (0..self.active().len()).find(|i| same(&self.active()[*i], &default)) {
                filtered.retain(|i| *i != d);
                filtered.insert(0, d);
            }
        }
        self.filtered = filtered;
        // A query highlights its best match, the top row.
        self.selected = if query.is_empty() {
            self.selected.min(self.filtered.len().saturating_sub(1))
        } else {
            0
        };
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
            // pi 1.6.0: `→ ✓ id (Name) [provider] · default`.
            let cursor = if row == self.selected {
                t.fg(Token::Accent, "→ ")
            } else {
                "  ".to_string()
            };
            let current = if same(model, &self.current) {
                t.fg(Token::Accent, "✓ ")
            } else {
                "  ".to_string()
            };
            let id = if row == self.selected {
                t.fg(Token::Accent, &model.id)
            } else {
                model.id.clone()
            };
            let name = distinct_model_name(&model.id, &model.name)
                .map(|n| t.fg(Token::Muted, &format!(" ({n})")))
                .unwrap_or_default();
            let badge = t.fg(Token::Muted, &format!("[{}]", model.provider));
            let default = if same(model, &self.default) {
                t.fg(Token::Muted, " · default")
            } else {
                String::new()
            };
            lines.push(format!("{cursor}{current}{id}{name} {badge}{default}"));
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

/// What `/model`'s search matches, as pi 1.6.0 builds it: the provider-prefixed forms before
/// the bare id, then the display name.
fn model_search_text(m: &Model) -> String {
    let (p, id) = (&m.provider, &m.id);
    let name = if m.name.is_empty() {
        String::new()
    } else {
        format!(" {}", m.name)
    };
    format!("{p} {p}/{id} {p} {id}{name}")
}

/// "default" or a prefix of it asks for the saved default model first.
fn is_default_search(query: &str) -> bool {
    let q = query.trim().to_lowercase();
    !q.is_empty() && "default".starts_with(&q)
}

fn label_words(s: &str) -> Vec<String> {
    s.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// The display name when it says something the id does not (pi 1.6.0's rule): every word of
/// the name must appear as a word of the id, or (longer than one character) inside the id's
/// words run together, for the name to be left out.
pub(crate) fn distinct_model_name<'a>(id: &str, name: &'a str) -> Option<&'a str> {
    let name = name.trim();
    if name.is_empty() {
        return None;
    }
    let id_words = label_words(id);
    let compact: String = id_words.concat();
    let covered = |w: &String| {
        id_words.contains(w) || (w.chars().count() > 1 && compact.contains(w.as_str()))
    };
    if label_words(name).iter().all(covered) {
        None
    } else {
        Some(name)
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
        assert_eq!(lines[6], "→ ✓ gemini-2.5-pro [google]");
        assert_eq!(lines[7], "    claude-sonnet-4 [anthropic]");
        assert_eq!(lines[9], "    gpt-4o [openai]");
        assert_eq!(lines[11], "  Model Name: Gemini 2.5 Pro");
        assert_fits(&mut s);
    }

    #[test]
    fn filters_navigates_and_selects() {
        let mut s = ModelSelector::new(models(), None, vec![], theme());
        type_text(&mut s, "haiku");
        let lines = screen(&mut s, 80);
        assert_eq!(lines[6], "→   claude-haiku [anthropic]");
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
        assert_eq!(lines[7], "→   gpt-4o [openai]");
        assert_eq!(lines[8], "");
        s.handle_input(&key("tab"));
        let lines = screen(&mut s, 80);
        assert_eq!(lines[8], "    claude-haiku [anthropic]");
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
        assert!(lines.contains(&"→   m15 (M) [p]".to_string()), "{lines:?}");
    }

    /// pi 1.6.0: a display name the id does not already say is shown and searched.
    #[test]
    fn display_names_are_shown_when_distinct_and_searched() {
        assert_eq!(
            distinct_model_name("mock-model", "Mock two"),
            Some("Mock two")
        );
        assert_eq!(
            distinct_model_name("claude-sonnet-4", "Claude Sonnet 4"),
            None
        );
        assert_eq!(
            distinct_model_name("mistral-small-2603", "Mistral Small 4"),
            Some("Mistral Small 4")
        );
        assert_eq!(distinct_model_name("gpt-4o", ""), None);
        let mut available = models();
        available.push(model("mock", "mock-model", "Mock two"));
        let current = model("mock", "mock-model", "Mock two");
        let mut s = ModelSelector::new(available, Some(&current), vec![], theme());
        assert_eq!(screen(&mut s, 80)[6], "→ ✓ mock-model (Mock two) [mock]");
        type_text(&mut s, "Mock two");
        let lines = screen(&mut s, 80);
        assert_eq!(lines[6], "→ ✓ mock-model (Mock two) [mock]", "{lines:?}");
        // A query highlights the top match even after the cursor moved.
        let mut s = ModelSelector::new(models(), None, vec![], theme());
        s.handle_input(&key("down"));
        s.handle_input(&key("down"));
        type_text(&mut s, "gemini");
        assert_eq!(screen(&mut s, 80)[6], "→   gemini-2.5-pro [google]");
    }

    #[test]
    fn default_search_lists_the_saved_default_first() {
        let mut s =
            ModelSelector::new(models(), None, vec![], theme()).with_default("openai", "gpt-4o");
        type_text(&mut s, "def");
        let lines = screen(&mut s, 80);
        assert_eq!(lines[6], "→   gpt-4o [openai] · default", "{lines:?}");
    }
}
