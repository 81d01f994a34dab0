//! [`SettingsList`]: pi's `/settings` menu — label/value rows; Enter or Space cycles to the
//! next value (Left/Right step back and forth) or opens the item's submenu; an optional
//! type-to-search filter; the selected item's description and a key hint underneath.
//! Changes and cancel are queued as [`SettingsEvent`]s for the app to take.

use std::sync::Arc;

use super::select_list::{SelectList, SelectResult};
use crate::tui::keybindings;
use crate::tui::text::{truncate_to_width, visible_width, wrap_text_with_ansi};
use crate::tui::theme::{Theme, Token};
use crate::tui::{Component, InputEvent, KeyCode};

/// A component shown in place of the list until it reports a result.
pub trait Submenu: Component {
    /// `Some(Some(value))` when a value was chosen, `Some(None)` when cancelled.
    fn take_result(&mut self) -> Option<Option<String>>;
}

impl Submenu for SelectList {
    fn take_result(&mut self) -> Option<Option<String>> {
        SelectList::take_result(self).map(|r| match r {
            SelectResult::Selected(item) => Some(item.value),
            SelectResult::Cancelled => None,
        })
    }
}

/// Builds a submenu from the item's current value.
pub type SubmenuFactory = Box<dyn Fn(&str) -> Box<dyn Submenu>>;

pub struct SettingItem {
    pub id: String,
    pub label: String,
    pub description: Option<String>,
    pub current_value: String,
    /// Values Enter/Space cycles through (empty: not cyclable).
    pub values: Vec<String>,
    pub submenu: Option<SubmenuFactory>,
}

impl SettingItem {
    pub fn new(id: &str, label: &str, current: &str, values: &[&str]) -> SettingItem {
        SettingItem {
            id: id.into(),
            label: label.into(),
            description: None,
            current_value: current.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
            submenu: None,
        }
    }

    pub fn description(mut self, d: &str) -> SettingItem {
        self.description = Some(d.into());
        self
    }

    pub fn submenu(mut self, factory: SubmenuFactory) -> SettingItem {
        self.submenu = Some(factory);
        self
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingsEvent {
    Changed { id: String, value: String },
    Cancelled,
}

pub struct SettingsList {
    items: Vec<SettingItem>,
    visible: Vec<usize>,
    selected: usize,
    max_visible: usize,
    theme: Arc<Theme>,
    search: Option<String>,
    submenu: Option<(usize, Box<dyn Submenu>)>,
    events: Vec<SettingsEvent>,
}

impl SettingsList {
    pub fn new(items: Vec<SettingItem>, max_visible: usize, theme: Arc<Theme>) -> SettingsList {
        SettingsList {
            visible: (0..items.len()).collect(),
            items,
            selected: 0,
            max_visible: max_visible.max(1),
            theme,
            search: None,
            submenu: None,
            events: Vec::new(),
        }
    }

    /// Typing filters the rows by label.
    pub fn with_search(mut self) -> SettingsList {
        self.search = Some(String::new());
        self
    }

    pub fn update_value(&mut self, id: &str, value: &str) {
        if let Some(item) = self.items.iter_mut().find(|i| i.id == id) {
            item.current_value = value.to_string();
        }
    }

    pub fn value(&self, id: &str) -> Option<&str> {
        self.items
            .iter()
            .find(|i| i.id == id)
            .map(|i| i.current_value.as_str())
    }

    /// Changes and cancels since the last call, in order.
    pub fn take_events(&mut self) -> Vec<SettingsEvent> {
        std::mem::take(&mut self.events)
    }

    fn apply_filter(&mut self) {
        let query = self.search.clone().unwrap_or_default().to_lowercase();
        self.visible = (0..self.items.len())
            .filter(|i| is_subsequence(&query, &self.items[*i].label.to_lowercase()))
            .collect();
        self.selected = 0;
    }

    fn set_value(&mut self, index: usize, value: String) {
        let item = &mut self.items[index];
        item.current_value = value.clone();
        self.events.push(SettingsEvent::Changed {
            id: item.id.clone(),
            value,
        });
    }

    /// Opens the submenu or steps through the values by `step` (±1).
    fn activate(&mut self, step: isize, open_submenu: bool) {
        let Some(&index) = self.visible.get(self.selected) else {
            return;
        };
        let item = &self.items[index];
        if let (Some(factory), true) = (&item.submenu, open_submenu) {
            self.submenu = Some((index, factory(&item.current_value)));
        } else if !item.values.is_empty() {
            let n = item.values.len() as isize;
            let at = item.values.iter().position(|v| *v == item.current_value);
            let next = match at {
                Some(i) => (i as isize + step).rem_euclid(n),
                None if step > 0 => 0,
                None => n - 1,
            };
            let value = item.values[next as usize].clone();
            self.set_value(index, value);
        }
    }

    fn hint(&self, text: &str, width: usize) -> String {
        truncate_to_width(&self.theme.fg(Token::Dim, text), width, "", false)
    }
}

fn is_subsequence(query: &str, text: &str) -> bool {
    let mut chars = text.chars();
    query.chars().all(|q| chars.any(|c| c == q))
}

impl Component for SettingsList {
    fn render(&mut self, width: usize) -> Vec<String> {
        if let Some((_, sub)) = &mut self.submenu {
            return sub.render(width);
        }
        let mut lines = Vec::new();
        if let Some(query) = &self.search {
            lines.push(truncate_to_width(&format!("> {query}"), width, "", false));
            lines.push(String::new());
        }
        let hint = if self.search.is_some() {
            "  Type to search · Enter/Space to change · Esc to cancel"
        } else {
            "  Enter/Space to change · Esc to cancel"
        };
        if self.visible.is_empty() {
            let msg = if self.items.is_empty() {
                "  No settings available"
            } else {
                "  No matching settings"
            };
            lines.push(self.hint(msg, width));
            lines.extend([String::new(), self.hint(hint, width)]);
            return lines;
        }
        let n = self.visible.len();
        let start = self
            .selected
            .saturating_sub(self.max_visible / 2)
            .min(n.saturating_sub(self.max_visible));
        let end = (start + self.max_visible).min(n);
        let label_width = self
            .items
            .iter()
            .map(|i| visible_width(&i.label))
            .max()
            .unwrap_or(0)
            .min(30);
        for i in start..end {
            let item = &self.items[self.visible[i]];
            let selected = i == self.selected;
            let prefix = if selected {
                self.theme.fg(Token::Accent, "→ ")
            } else {
                "  ".into()
            };
            let label = truncate_to_width(&item.label, label_width, "", true);
            let label = if selected {
                self.theme.fg(Token::Accent, &label)
            } else {
                label
            };
            let value_width = width.saturating_sub(2 + label_width + 2 + 2).max(1);
            let value = truncate_to_width(&item.current_value, value_width, "", false);
            let value = self.theme.fg(
                if selected {
                    Token::Accent
                } else {
                    Token::Muted
                },
                &value,
            );
            lines.push(truncate_to_width(
                &format!("{prefix}{label}  {value}"),
                width,
                "",
                false,
            ));
        }
        if start > 0 || end < n {
            let info = format!("  ({}/{n})", self.selected + 1);
            lines.push(self.hint(&info, width.saturating_sub(2).max(1)));
        }
        let selected = &self.items[self.visible[self.selected]];
        if let Some(desc) = &selected.description {
            lines.push(String::new());
            for l in wrap_text_with_ansi(desc, width.saturating_sub(4).max(1)) {
                lines.push(truncate_to_width(
                    &self.theme.fg(Token::Dim, &format!("  {l}")),
                    width,
                    "",
                    false,
                ));
            }
        }
        lines.extend([String::new(), self.hint(hint, width)]);
        lines
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        if let Some((index, sub)) = &mut self.submenu {
            sub.handle_input(event);
            if let Some(result) = sub.take_result() {
                let index = *index;
                self.submenu = None;
                if let Some(value) = result {
                    self.set_value(index, value);
                }
            }
            return true;
        }
        let InputEvent::Key(key) = event else {
            return false;
        };
        let n = self.visible.len();
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
        } else if keybindings::matches(key, "tui.select.confirm") || key.text() == Some(' ') {
            self.activate(1, true);
        } else if key.code == KeyCode::Right && key.mods == Default::default() {
            self.activate(1, false);
        } else if key.code == KeyCode::Left && key.mods == Default::default() {
            self.activate(-1, false);
        } else if keybindings::matches(key, "tui.select.cancel") {
            self.events.push(SettingsEvent::Cancelled);
        } else if let Some(query) = &mut self.search {
            if key.code == KeyCode::Backspace {
                query.pop();
            } else if let Some(c) = key.text() {
                query.push(c);
            } else {
                return false;
            }
            self.apply_filter();
        } else {
            return false;
        }
        true
    }

    fn invalidate(&mut self) {
        if let Some((_, sub)) = &mut self.submenu {
            sub.invalidate();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::components::select_list::SelectItem;
    use crate::tui::text::strip_ansi;
    use crate::tui::theme::ColorMode;
    use crate::tui::KeyEvent;

    fn theme() -> Arc<Theme> {
        Arc::new(Theme::builtin("dark", ColorMode::NoColor).unwrap())
    }

    fn key(code: KeyCode) -> InputEvent {
        InputEvent::Key(KeyEvent::plain(code))
    }

    fn settings() -> SettingsList {
        let t = theme();
        let items = vec![
            SettingItem::new("thinking", "Thinking level", "off", &["off", "low", "high"])
                .description("How hard the model thinks"),
            SettingItem::new("theme", "Theme", "dark", &[]).submenu(Box::new(move |current| {
                let items = vec![SelectItem::new("dark"), SelectItem::new("light")];
                let mut list = SelectList::new(items, 5, t.clone());
                list.set_selected_index(usize::from(current == "light"));
                Box::new(list) as Box<dyn Submenu>
            })),
        ];
        SettingsList::new(items, 5, theme())
    }

    #[test]
    fn renders_rows_description_and_hint() {
        let mut s = settings();
        let lines: Vec<String> = s.render(50).iter().map(|l| strip_ansi(l)).collect();
        assert_eq!(
            lines,
            [
                "→ Thinking level  off",
                "  Theme           dark",
                "",
                "  How hard the model thinks",
                "",
                "  Enter/Space to change · Esc to cancel",
            ]
        );
        for w in 1..60 {
            for l in s.render(w) {
                assert!(visible_width(&l) <= w, "{w}: {l:?}");
            }
        }
    }

    #[test]
    fn cycling_submenu_search_and_cancel() {
        let mut s = settings();
        s.handle_input(&key(KeyCode::Enter));
        s.handle_input(&key(KeyCode::Char(' ')));
        s.handle_input(&key(KeyCode::Left));
        assert_eq!(s.value("thinking"), Some("low"));
        let changed = |v: &str| SettingsEvent::Changed {
            id: "thinking".into(),
            value: v.into(),
        };
        assert_eq!(
            s.take_events(),
            [changed("low"), changed("high"), changed("low")]
        );
        // Submenu: opens on Enter, takes over rendering and input, reports back.
        s.handle_input(&key(KeyCode::Down));
        s.handle_input(&key(KeyCode::Enter));
        assert_eq!(strip_ansi(&s.render(30)[0]), "→ dark");
        s.handle_input(&key(KeyCode::Down));
        s.handle_input(&key(KeyCode::Enter));
        assert_eq!(
            s.take_events(),
            [SettingsEvent::Changed {
                id: "theme".into(),
                value: "light".into()
            }]
        );
        assert!(strip_ansi(&s.render(30)[1]).starts_with("→ Theme"));
        s.handle_input(&key(KeyCode::Escape));
        assert_eq!(s.take_events(), [SettingsEvent::Cancelled]);

        let mut s = settings().with_search();
        s.handle_input(&key(KeyCode::Char('t')));
        s.handle_input(&key(KeyCode::Char('h')));
        s.handle_input(&key(KeyCode::Char('m')));
        let lines: Vec<String> = s.render(40).iter().map(|l| strip_ansi(l)).collect();
        assert_eq!(lines[0], "> thm");
        assert!(lines[2].starts_with("→ Theme"), "{lines:?}");
        s.handle_input(&key(KeyCode::Char('z')));
        assert!(strip_ansi(&s.render(40)[2]).contains("No matching settings"));
    }
}
