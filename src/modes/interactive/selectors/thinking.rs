//! [`ThinkingSelector`] (`/thinking`): the thinking levels a model supports, each with pi's
//! description of its budget, the current one marked ✓ and preselected, the saved default
//! marked, filtered as the user types; Enter sets the level for the session, Ctrl+S also saves
//! it as `defaultThinkingLevel` (pi 1.x).

use std::sync::Arc;

use super::common::{border, fit, key_display_text, select_or_save_hint};
use crate::ai::types::ThinkingLevel;
use crate::tui::components::input::Input;
use crate::tui::components::select_list::{SelectItem, SelectList, SelectResult};
use crate::tui::fuzzy::fuzzy_filter;
use crate::tui::keybindings;
use crate::tui::theme::{Theme, Token};
use crate::tui::{Component, InputEvent};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThinkingOutcome {
    /// For this session.
    Selected(ThinkingLevel),
    /// Ctrl+S: for this session and saved as `defaultThinkingLevel`.
    SelectedAsDefault(ThinkingLevel),
    Cancelled,
}

/// pi's one-line description of a level.
pub fn level_description(level: ThinkingLevel) -> &'static str {
    match level {
        ThinkingLevel::Off => "No reasoning",
        ThinkingLevel::Minimal => "Very brief reasoning (~1k tokens)",
        ThinkingLevel::Low => "Light reasoning (~2k tokens)",
        ThinkingLevel::Medium => "Moderate reasoning (~8k tokens)",
        ThinkingLevel::High => "Deep reasoning (~16k tokens)",
        ThinkingLevel::Xhigh => "Extra-high reasoning (~32k tokens)",
        ThinkingLevel::Max => "Maximum reasoning",
    }
}

/// A [`SelectList`] of levels with descriptions (shared with the `/settings` submenu).
pub fn level_list(levels: &[ThinkingLevel], current: &str, theme: Arc<Theme>) -> SelectList {
    let items: Vec<SelectItem> = levels
        .iter()
        .map(|l| SelectItem::new(l.as_str()).description(level_description(*l)))
        .collect();
    let mut list =
        SelectList::new(items, levels.len().clamp(1, 10), theme).with_primary_column(12, 32);
    if let Some(i) = levels.iter().position(|l| l.as_str() == current) {
        list.set_selected_index(i);
    }
    list
}

pub struct ThinkingSelector {
    theme: Arc<Theme>,
    /// The levels the model supports, with the current and saved-default marks.
    items: Vec<SelectItem>,
    current: ThinkingLevel,
    search: Input,
    list: SelectList,
    outcome: Option<ThinkingOutcome>,
}

impl ThinkingSelector {
    /// `available`: `model_resolve::supported_thinking_levels(model)`; `default`: the saved
    /// `defaultThinkingLevel` (pi's `medium` when none), marked `· default`.
    pub fn new(
        current: ThinkingLevel,
        available: &[ThinkingLevel],
        default: ThinkingLevel,
        theme: Arc<Theme>,
    ) -> Self {
        let items: Vec<SelectItem> = available
            .iter()
            .map(|l| {
                let mark = if *l == current { "✓ " } else { "  " };
                let description = if *l == default {
                    format!("{} · default", level_description(*l))
                } else {
                    level_description(*l).to_string()
                };
                SelectItem::new(l.as_str())
                    .label(format!("{mark}{}", l.as_str()))
                    .description(description)
            })
            .collect();
        let list = build_list(items.clone(), current.as_str(), theme.clone());
        ThinkingSelector {
            theme,
            items,
            current,
            search: Input::new(),
            list,
            outcome: None,
        }
    }

    pub fn take_outcome(&mut self) -> Option<ThinkingOutcome> {
        self.outcome.take()
    }

    fn refilter(&mut self) {
        let selected = self
            .list
            .selected_item()
            .map(|i| i.value.clone())
            .unwrap_or_else(|| self.current.as_str().to_string());
        let keyed: Vec<(String, SelectItem)> = self
            .items
            .iter()
            .map(|i| {
                let key = format!("{} {}", i.value, i.description.as_deref().unwrap_or(""));
                (key, i.clone())
            })
            .collect();
        let kept = fuzzy_filter(keyed, self.search.value(), |(k, _)| k.as_str())
            .into_iter()
            .map(|(_, i)| i)
            .collect();
        self.list = build_list(kept, &selected, self.theme.clone());
    }

    fn selected_level(&self) -> Option<ThinkingLevel> {
        self.list
            .selected_item()
            .and_then(|i| ThinkingLevel::parse(&i.value))
    }
}

fn build_list(items: Vec<SelectItem>, selected: &str, theme: Arc<Theme>) -> SelectList {
    let position = items.iter().position(|i| i.value == selected);
    let mut list = SelectList::new(items.clone(), items.len().max(1), theme)
        .with_primary_column(12, 32)
        .with_empty_message("No matching levels");
    if let Some(i) = position {
        list.set_selected_index(i);
    }
    list
}

impl Component for ThinkingSelector {
    fn render(&mut self, width: usize) -> Vec<String> {
        let t = &self.theme;
        let mut lines = vec![border(t, Token::Border, width), String::new()];
        lines.push("Thinking Level".into());
        lines.push(String::new());
        lines.push(format!(
            "{} cycles thinking levels in-session",
            key_display_text("app.thinking.cycle")
        ));
        lines.push(String::new());
        lines.extend(self.search.render(width));
        lines.push(String::new());
        lines.extend(self.list.render(width));
        lines.push(String::new());
        lines.push(select_or_save_hint(t, "app.thinking.save"));
        lines.push(border(t, Token::Border, width));
        fit(lines, width)
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let key = event.key();
        let is = |id: &str| key.is_some_and(|k| keybindings::matches(k, id));
        if is("app.thinking.save") {
            if let Some(level) = self.selected_level() {
                self.outcome = Some(ThinkingOutcome::SelectedAsDefault(level));
            }
            return true;
        }
        let navigation = ["tui.select.up", "tui.select.down", "tui.select.confirm"];
        if navigation.iter().any(|id| is(id)) || is("tui.select.cancel") {
            self.list.handle_input(event);
            match self.list.take_result() {
                Some(SelectResult::Selected(item)) => {
                    if let Some(level) = ThinkingLevel::parse(&item.value) {
                        self.outcome = Some(ThinkingOutcome::Selected(level));
                    }
                }
                Some(SelectResult::Cancelled) => self.outcome = Some(ThinkingOutcome::Cancelled),
                None => {}
            }
            return true;
        }
        self.search.handle_input(event);
        self.refilter();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::test_support::*;
    use super::*;

    #[test]
    fn marks_current_and_default_filters_and_saves() {
        let levels = [ThinkingLevel::Off, ThinkingLevel::Low, ThinkingLevel::High];
        let mut s =
            ThinkingSelector::new(ThinkingLevel::Low, &levels, ThinkingLevel::High, theme());
        let lines = screen(&mut s, 70);
        assert_eq!(lines[2], "Thinking Level");
        assert_eq!(lines[4], "Shift+Tab cycles thinking levels in-session");
        assert_eq!(lines[8], "    off       No reasoning");
        assert_eq!(lines[9], "→ ✓ low       Light reasoning (~2k tokens)");
        assert_eq!(
            lines[10],
            "    high      Deep reasoning (~16k tokens) · default"
        );
        assert_eq!(
            lines[12],
            "  Enter to select · Ctrl+S to set as default · Escape/Ctrl+C to cancel"
        );
        assert_fits(&mut s);
        s.handle_input(&key("down"));
        s.handle_input(&key("enter"));
        assert_eq!(
            s.take_outcome(),
            Some(ThinkingOutcome::Selected(ThinkingLevel::High))
        );
        type_text(&mut s, "off");
        let lines = screen(&mut s, 70);
        assert_eq!(lines[8], "→   off       No reasoning");
        s.handle_input(&key("ctrl+s"));
        assert_eq!(
            s.take_outcome(),
            Some(ThinkingOutcome::SelectedAsDefault(ThinkingLevel::Off))
        );
        s.handle_input(&key("escape"));
        assert_eq!(s.take_outcome(), Some(ThinkingOutcome::Cancelled));
    }
}
