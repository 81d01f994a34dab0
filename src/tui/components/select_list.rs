//! [`SelectList`]: a filterable list with a scroll window, an `(n/m)` position line,
//! descriptions in an aligned second column and a `→` on the selected row; `tui.select.*`
//! keys move (wrapping around), confirm and cancel. The app polls [`SelectList::take_result`].

use std::sync::Arc;

use crate::tui::keybindings;
use crate::tui::text::{truncate_to_width, visible_width};
use crate::tui::theme::{Theme, Token};
use crate::tui::{Component, InputEvent, KeyCode};
use crate::util::sort;

const DEFAULT_PRIMARY_COLUMN: usize = 32;
const PRIMARY_GAP: usize = 2;
const MIN_DESCRIPTION: usize = 10;

/// One choice: `value` is what the app gets back, `label` what is shown (defaults to the
/// value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectItem {
    pub value: String,
    pub label: Option<String>,
    pub description: Option<String>,
}

impl SelectItem {
    pub fn new(value: impl Into<String>) -> SelectItem {
        SelectItem {
            value: value.into(),
            label: None,
            description: None,
        }
    }

    pub fn label(mut self, label: impl Into<String>) -> SelectItem {
        self.label = Some(label.into());
        self
    }

    pub fn description(mut self, description: impl Into<String>) -> SelectItem {
        self.description = Some(description.into());
        self
    }

    fn display(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.value)
    }
}

/// How the user left the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SelectResult {
    Selected(SelectItem),
    Cancelled,
}

pub struct SelectList {
    items: Vec<SelectItem>,
    /// Indexes into `items` that pass the filter, best match first.
    visible: Vec<usize>,
    selected: usize,
    max_visible: usize,
    theme: Arc<Theme>,
    filter: String,
    type_to_filter: bool,
    empty_message: String,
    primary_column: (usize, usize),
    result: Option<SelectResult>,
}

impl SelectList {
    pub fn new(items: Vec<SelectItem>, max_visible: usize, theme: Arc<Theme>) -> SelectList {
        let visible = (0..items.len()).collect();
        SelectList {
            items,
            visible,
            selected: 0,
            max_visible: max_visible.max(1),
            theme,
            filter: String::new(),
            type_to_filter: false,
            empty_message: "No matching commands".into(),
            primary_column: (DEFAULT_PRIMARY_COLUMN, DEFAULT_PRIMARY_COLUMN),
            result: None,
        }
    }

    /// Typed characters edit the filter (Backspace deletes) instead of being ignored.
    pub fn with_type_to_filter(mut self, on: bool) -> SelectList {
        self.type_to_filter = on;
        self
    }

    pub fn with_empty_message(mut self, message: impl Into<String>) -> SelectList {
        self.empty_message = message.into();
        self
    }

    /// Bounds of the first column's width (default 32 both).
    pub fn with_primary_column(mut self, min: usize, max: usize) -> SelectList {
        self.primary_column = (min.min(max).max(1), max.max(min).max(1));
        self
    }

    /// Keeps items matching `filter` (fuzzy, on the label), best first; selects the first.
    pub fn set_filter(&mut self, filter: &str) {
        self.filter = filter.to_string();
        let mut scored: Vec<(i64, usize)> = self
            .items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| fuzzy_score(filter, item.display()).map(|s| (s, i)))
            .collect();
        sort::sort_by_key(&mut scored, |(score, i)| (-score, *i));
        self.visible = scored.into_iter().map(|(_, i)| i).collect();
        self.selected = 0;
    }

    pub fn filter(&self) -> &str {
        &self.filter
    }

    pub fn set_selected_index(&mut self, index: usize) {
        self.selected = index.min(self.visible.len().saturating_sub(1));
    }

    pub fn selected_index(&self) -> usize {
        self.selected
    }

    pub fn selected_item(&self) -> Option<&SelectItem> {
        self.visible.get(self.selected).map(|i| &self.items[*i])
    }

    /// The confirm/cancel outcome, once.
    pub fn take_result(&mut self) -> Option<SelectResult> {
        self.result.take()
    }

    fn primary_width(&self) -> usize {
        let widest = self
            .visible
            .iter()
            .map(|i| visible_width(self.items[*i].display()) + PRIMARY_GAP)
            .max()
            .unwrap_or(0);
        widest.clamp(self.primary_column.0, self.primary_column.1)
    }

    fn row(&self, item: &SelectItem, selected: bool, width: usize, primary: usize) -> String {
        let prefix = if selected { "→ " } else { "  " };
        let accent = |s: &str| self.theme.fg(Token::Accent, s);
        let description = item
            .description
            .as_deref()
            .map(|d| {
                d.split(['\r', '\n'])
                    .filter(|p| !p.is_empty())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .map(|d| d.trim().to_string())
            .filter(|d| !d.is_empty());
        if let (Some(desc), true) = (description, width > 40) {
            let column = primary.min(width - 2 - 4).max(1);
            let value = truncate_to_width(
                item.display(),
                column.saturating_sub(PRIMARY_GAP).max(1),
                "",
                false,
            );
            let spacing = " ".repeat(column.saturating_sub(visible_width(&value)).max(1));
            let desc_start = 2 + visible_width(&value) + spacing.len();
            let remaining = width.saturating_sub(desc_start + 2);
            if remaining > MIN_DESCRIPTION {
                let desc = truncate_to_width(&desc, remaining, "", false);
                return if selected {
                    accent(&format!("{prefix}{value}{spacing}{desc}"))
                } else {
                    format!(
                        "{prefix}{value}{}",
                        self.theme.fg(Token::Muted, &format!("{spacing}{desc}"))
                    )
                };
            }
        }
        let value = truncate_to_width(item.display(), width.saturating_sub(4).max(1), "", false);
        if selected {
            accent(&format!("{prefix}{value}"))
        } else {
            format!("{prefix}{value}")
        }
    }
}

/// A subsequence match scored for contiguous runs and word starts; `None` if some query
/// character is missing. Case-insensitive. (The shared fuzzy module may replace this.)
fn fuzzy_score(query: &str, text: &str) -> Option<i64> {
    let text: Vec<char> = text.chars().flat_map(char::to_lowercase).collect();
    let mut score = 0i64;
    let mut pos = 0usize;
    let mut last: Option<usize> = None;
    for q in query
        .chars()
        .flat_map(char::to_lowercase)
        .filter(|c| !c.is_whitespace())
    {
        let found = pos + text[pos..].iter().position(|c| *c == q)?;
        score += 1;
        if last.is_some_and(|l| l + 1 == found) {
            score += 5;
        }
        if found == 0 || !text[found - 1].is_alphanumeric() {
            score += 3;
        }
        score -= (found - pos).min(10) as i64 / 2;
        last = Some(found);
        pos = found + 1;
    }
    Some(score)
}

impl Component for SelectList {
    fn render(&mut self, width: usize) -> Vec<String> {
        if self.visible.is_empty() {
            let line = self
                .theme
                .fg(Token::Muted, &format!("  {}", self.empty_message));
            return vec![truncate_to_width(&line, width, "", false)];
        }
        let n = self.visible.len();
        let start = self
            .selected
            .saturating_sub(self.max_visible / 2)
            .min(n.saturating_sub(self.max_visible));
        let end = (start + self.max_visible).min(n);
        let primary = self.primary_width();
        let mut lines: Vec<String> = (start..end)
            .map(|i| {
                self.row(
                    &self.items[self.visible[i]],
                    i == self.selected,
                    width,
                    primary,
                )
            })
            .collect();
        if start > 0 || end < n {
            let info = format!("  ({}/{n})", self.selected + 1);
            let info = truncate_to_width(&info, width.saturating_sub(2).max(1), "", false);
            lines.push(self.theme.fg(Token::Muted, &info));
        }
        lines
            .into_iter()
            .map(|l| {
                if visible_width(&l) > width {
                    truncate_to_width(&l, width, "", false)
                } else {
                    l
                }
            })
            .collect()
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let InputEvent::Key(key) = event else {
            return false;
        };
        let n = self.visible.len();
        let page = self.max_visible;
        if keybindings::matches(key, "tui.select.up") {
            self.selected = if self.selected == 0 {
                n.saturating_sub(1)
            } else {
                self.selected - 1
            };
        } else if keybindings::matches(key, "tui.select.down") {
            self.selected = if self.selected + 1 >= n {
                0
            } else {
                self.selected + 1
            };
        } else if keybindings::matches(key, "tui.select.pageUp") {
            self.selected = self.selected.saturating_sub(page);
        } else if keybindings::matches(key, "tui.select.pageDown") {
            self.selected = (self.selected + page).min(n.saturating_sub(1));
        } else if keybindings::matches(key, "tui.select.confirm") {
            if let Some(item) = self.selected_item() {
                self.result = Some(SelectResult::Selected(item.clone()));
            }
        } else if keybindings::matches(key, "tui.select.cancel") {
            self.result = Some(SelectResult::Cancelled);
        } else if self.type_to_filter && key.code == KeyCode::Backspace {
            let mut f = self.filter.clone();
            f.pop();
            self.set_filter(&f);
        } else if let Some(c) = key.text().filter(|_| self.type_to_filter) {
            let f = format!("{}{c}", self.filter);
            self.set_filter(&f);
        } else {
            return false;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::text::strip_ansi;
    use crate::tui::theme::ColorMode;
    use crate::tui::KeyEvent;

    fn list(n: usize, max_visible: usize) -> SelectList {
        let items = (1..=n)
            .map(|i| SelectItem::new(format!("item{i}")).description(format!("desc {i}")))
            .collect();
        SelectList::new(
            items,
            max_visible,
            Arc::new(Theme::builtin("dark", ColorMode::TrueColor).unwrap()),
        )
    }

    fn key(code: KeyCode) -> InputEvent {
        InputEvent::Key(KeyEvent::plain(code))
    }

    fn plain(l: &mut SelectList, width: usize) -> Vec<String> {
        l.render(width).iter().map(|s| strip_ansi(s)).collect()
    }

    #[test]
    fn renders_columns_and_scroll_indicator() {
        let mut l = list(10, 3);
        let lines = plain(&mut l, 60);
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0], format!("→ item1{}desc 1", " ".repeat(32 - 5)));
        assert_eq!(lines[1], format!("  item2{}desc 2", " ".repeat(32 - 5)));
        assert_eq!(lines[3], "  (1/10)");
        let raw = l.render(60);
        let accent = Theme::builtin("dark", ColorMode::TrueColor).unwrap();
        assert!(raw[0].starts_with(&accent.fg_code(Token::Accent).to_string()));
        // Narrow: descriptions are dropped.
        assert_eq!(plain(&mut l, 20)[0], "→ item1");
        for w in 1..80 {
            for line in l.render(w) {
                assert!(visible_width(&line) <= w, "{w}: {line:?}");
            }
        }
    }

    #[test]
    fn navigation_wraps_and_scrolls() {
        let mut l = list(10, 3);
        assert!(l.handle_input(&key(KeyCode::Up)));
        assert_eq!(l.selected_item().unwrap().value, "item10");
        assert_eq!(plain(&mut l, 60)[2].split_whitespace().next(), Some("→"));
        assert_eq!(plain(&mut l, 60)[3], "  (10/10)");
        l.handle_input(&key(KeyCode::Down));
        assert_eq!(l.selected_index(), 0);
        for _ in 0..5 {
            l.handle_input(&key(KeyCode::Down));
        }
        let lines = plain(&mut l, 60);
        assert!(
            lines[0].starts_with("  item5") && lines[1].starts_with("→ item6"),
            "{lines:?}"
        );
        l.handle_input(&key(KeyCode::Enter));
        assert_eq!(
            l.take_result(),
            Some(SelectResult::Selected(
                SelectItem::new("item6").description("desc 6")
            ))
        );
        assert_eq!(l.take_result(), None);
        l.handle_input(&key(KeyCode::Escape));
        assert_eq!(l.take_result(), Some(SelectResult::Cancelled));
    }

    #[test]
    fn fuzzy_filtering() {
        let items = ["model", "settings", "session", "resume", "share"]
            .into_iter()
            .map(SelectItem::new)
            .collect();
        let theme = Arc::new(Theme::builtin("dark", ColorMode::NoColor).unwrap());
        let mut l = SelectList::new(items, 5, theme).with_type_to_filter(true);
        l.set_filter("se");
        let values: Vec<String> = l
            .visible
            .iter()
            .map(|i| l.items[*i].value.clone())
            .collect();
        assert_eq!(values, ["settings", "session", "share", "resume"]);
        l.handle_input(&key(KeyCode::Char('s')));
        assert_eq!(l.filter(), "ses");
        assert_eq!(l.selected_item().unwrap().value, "session");
        l.set_filter("zzz");
        assert_eq!(plain(&mut l, 40), ["  No matching commands"]);
        l.handle_input(&key(KeyCode::Backspace));
        assert_eq!(l.filter(), "zz");
        assert!(fuzzy_score("", "x").is_some());
    }
}
