//! [`ThinkingSelector`]: the thinking levels a model supports, each with pi's description of
//! its budget, the current one preselected.

use std::sync::Arc;

use super::common::{border, fit};
use crate::ai::types::ThinkingLevel;
use crate::tui::components::select_list::{SelectItem, SelectList, SelectResult};
use crate::tui::theme::{Theme, Token};
use crate::tui::{Component, InputEvent};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThinkingOutcome {
    Selected(ThinkingLevel),
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
    list: SelectList,
    outcome: Option<ThinkingOutcome>,
}

impl ThinkingSelector {
    /// `available`: `model_resolve::supported_thinking_levels(model)`.
    pub fn new(current: ThinkingLevel, available: &[ThinkingLevel], theme: Arc<Theme>) -> Self {
        ThinkingSelector {
            list: level_list(available, current.as_str(), theme.clone()),
            theme,
            outcome: None,
        }
    }

    pub fn take_outcome(&mut self) -> Option<ThinkingOutcome> {
        self.outcome.take()
    }
}

impl Component for ThinkingSelector {
    fn render(&mut self, width: usize) -> Vec<String> {
        let mut lines = vec![border(&self.theme, Token::Border, width)];
        lines.extend(self.list.render(width));
        lines.push(border(&self.theme, Token::Border, width));
        fit(lines, width)
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let consumed = self.list.handle_input(event);
        match self.list.take_result() {
            Some(SelectResult::Selected(item)) => {
                if let Some(level) = ThinkingLevel::parse(&item.value) {
                    self.outcome = Some(ThinkingOutcome::Selected(level));
                }
            }
            Some(SelectResult::Cancelled) => self.outcome = Some(ThinkingOutcome::Cancelled),
            None => {}
        }
        consumed
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::test_support::*;
    use super::*;

    #[test]
    fn preselects_current_and_selects() {
        let levels = [ThinkingLevel::Off, ThinkingLevel::Low, ThinkingLevel::High];
        let mut s = ThinkingSelector::new(ThinkingLevel::Low, &levels, theme());
        let lines = screen(&mut s, 60);
        assert_eq!(lines.len(), 5);
        assert_eq!(lines[1], "  off         No reasoning");
        assert_eq!(lines[2], "→ low         Light reasoning (~2k tokens)");
        assert_fits(&mut s);
        s.handle_input(&key("down"));
        s.handle_input(&key("enter"));
        assert_eq!(
            s.take_outcome(),
            Some(ThinkingOutcome::Selected(ThinkingLevel::High))
        );
        s.handle_input(&key("escape"));
        assert_eq!(s.take_outcome(), Some(ThinkingOutcome::Cancelled));
    }
}
