//! [`ConfigSelector`] (`pi config`): package resources grouped by package and kind, each with
//! a `[x]`/`[ ]` box, as pi's "Resource Configuration" screen. Space or Enter flips the
//! highlighted resource (reported as [`ConfigOutcome::Toggled`] for the caller to save),
//! typing filters, Escape or Ctrl+C closes.

use std::collections::VecDeque;
use std::sync::Arc;

use super::common::{fit, scroll_window};
use crate::resources::packages::config::ConfigGroup;
use crate::resources::packages::{PackageResource, ResourceKind};
use crate::tui::components::input::Input;
use crate::tui::keybindings;
use crate::tui::text::visible_width;
use crate::tui::theme::{Theme, Token};
use crate::tui::{Component, InputEvent, KeyCode};

const MAX_VISIBLE: usize = 15;

#[derive(Debug, Clone, PartialEq)]
pub enum ConfigOutcome {
    /// Save this resource as switched on (`true`) or off.
    Toggled(PackageResource, bool),
    Closed,
}

/// One row: a package heading, a kind heading, or a resource.
enum Row {
    Group(usize),
    Kind(usize, usize),
    Item(usize, usize, usize),
}

pub struct ConfigSelector {
    theme: Arc<Theme>,
    groups: Vec<ConfigGroup>,
    rows: Vec<Row>,
    selected: usize,
    search: Input,
    error: Option<String>,
    outcomes: VecDeque<ConfigOutcome>,
}

fn kind_label(kind: ResourceKind) -> &'static str {
    match kind {
        ResourceKind::Extensions => "Extensions",
        ResourceKind::Skills => "Skills",
        ResourceKind::Prompts => "Prompts",
        ResourceKind::Themes => "Themes",
    }
}

impl ConfigSelector {
    pub fn new(groups: Vec<ConfigGroup>, theme: Arc<Theme>) -> ConfigSelector {
        let mut s = ConfigSelector {
            theme,
            groups,
            rows: Vec::new(),
            selected: 0,
            search: Input::new(),
            error: None,
            outcomes: VecDeque::new(),
        };
        s.refilter();
        s
    }

    /// The next toggle or close, in order.
    pub fn take_outcome(&mut self) -> Option<ConfigOutcome> {
        self.outcomes.pop_front()
    }

    /// A save that failed, shown under the list.
    pub fn set_error(&mut self, error: String) {
        self.error = Some(error);
    }

    /// Rows whose resource name, kind or package matches every word of the search; headings
    /// are kept for the resources shown.
    fn refilter(&mut self) {
        let query = self.search.value().to_lowercase();
        let words: Vec<&str> = query.split_whitespace().collect();
        self.rows.clear();
        for (g, group) in self.groups.iter().enumerate() {
            let mut group_rows = Vec::new();
            for (k, (kind, items)) in group.kinds.iter().enumerate() {
                let hits: Vec<usize> = (0..items.len())
                    .filter(|&i| {
                        let text = format!(
                            "{} {} {}",
                            items[i].display_name,
                            kind_label(*kind),
                            group.label
                        )
                        .to_lowercase();
                        words.iter().all(|w| text.contains(w))
                    })
                    .collect();
                if !hits.is_empty() {
                    group_rows.push(Row::Kind(g, k));
                    group_rows.extend(hits.into_iter().map(|i| Row::Item(g, k, i)));
                }
            }
            if !group_rows.is_empty() {
                self.rows.push(Row::Group(g));
                self.rows.extend(group_rows);
            }
        }
        self.selected = self.step_to_item(0, true).unwrap_or(0);
    }

    /// The first resource row at or after (`down`) / before `from`.
    fn step_to_item(&self, from: usize, down: bool) -> Option<usize> {
        let is_item = |i: &usize| matches!(self.rows.get(*i), Some(Row::Item(..)));
        if down {
            (from..self.rows.len()).find(is_item)
        } else {
            (0..=from.min(self.rows.len().saturating_sub(1)))
                .rev()
                .find(is_item)
        }
    }

    fn toggle(&mut self) {
        let Some(&Row::Item(g, k, i)) = self.rows.get(self.selected) else {
            return;
        };
        let item = &mut self.groups[g].kinds[k].1[i];
        item.enabled = !item.enabled;
        self.error = None;
        self.outcomes
            .push_back(ConfigOutcome::Toggled(item.resource.clone(), item.enabled));
    }

    fn item_count(&self) -> (usize, usize) {
        let position = self.rows[..self.selected.min(self.rows.len())]
            .iter()
            .filter(|r| matches!(r, Row::Item(..)))
            .count();
        let total = self
            .rows
            .iter()
            .filter(|r| matches!(r, Row::Item(..)))
            .count();
        (position + 1, total)
    }
}

impl Component for ConfigSelector {
    fn render(&mut self, width: usize) -> Vec<String> {
        let t = self.theme.clone();
        let title = t.bold("Resource Configuration");
        let hint = format!(
            "{}{}{}{}",
            t.fg(Token::Dim, "space"),
            t.fg(Token::Muted, " toggle"),
            t.fg(Token::Muted, " · "),
            t.fg(Token::Dim, "esc") + &t.fg(Token::Muted, " close")
        );
        let spacing = width
            .saturating_sub(visible_width(&title) + visible_width(&hint))
            .max(1);
        let mut lines = vec![
            format!("{title}{}{hint}", " ".repeat(spacing)),
            t.fg(Token::Muted, "Type to filter resources"),
            String::new(),
        ];
        lines.extend(self.search.render(width));
        lines.push(String::new());
        if self.rows.is_empty() {
            lines.push(t.fg(Token::Muted, "  No resources found"));
        }
        let (start, end) = scroll_window(self.selected, self.rows.len(), MAX_VISIBLE);
        for row in start..end {
            lines.push(match self.rows[row] {
                Row::Group(g) => {
                    format!("  {}", t.fg(Token::Accent, &t.bold(&self.groups[g].label)))
                }
                Row::Kind(g, k) => format!(
                    "    {}",
                    t.fg(Token::Muted, kind_label(self.groups[g].kinds[k].0))
                ),
                Row::Item(g, k, i) => {
                    let item = &self.groups[g].kinds[k].1[i];
                    let checkbox = if item.enabled {
                        t.fg(Token::Success, "[x]")
                    } else {
                        t.fg(Token::Dim, "[ ]")
                    };
                    let cursor = if row == self.selected { "> " } else { "  " };
                    let name = if row == self.selected {
                        t.bold(&item.display_name)
                    } else {
                        item.display_name.clone()
                    };
                    format!("{cursor}    {checkbox} {name}")
                }
            });
        }
        if start > 0 || end < self.rows.len() {
            let (n, total) = self.item_count();
            lines.push(t.fg(Token::Dim, &format!("  ({n}/{total})")));
        }
        if let Some(e) = &self.error {
            lines.push(t.fg(Token::Error, &format!("  {e}")));
        }
        fit(lines, width)
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let Some(key) = event.key() else {
            return false;
        };
        let is = |id: &str| keybindings::matches(key, id);
        if is("tui.select.up") {
            if let Some(i) = self.selected.checked_sub(1) {
                self.selected = self.step_to_item(i, false).unwrap_or(self.selected);
            }
        } else if is("tui.select.down") {
            self.selected = self
                .step_to_item(self.selected + 1, true)
                .unwrap_or(self.selected);
        } else if is("tui.select.pageUp") {
            let target = self.selected.saturating_sub(MAX_VISIBLE);
            self.selected = self.step_to_item(target, true).unwrap_or(self.selected);
        } else if is("tui.select.pageDown") {
            let target = (self.selected + MAX_VISIBLE).min(self.rows.len().saturating_sub(1));
            self.selected = self.step_to_item(target, false).unwrap_or(self.selected);
        } else if is("tui.select.cancel") || key.matches("ctrl+c") {
            self.outcomes.push_back(ConfigOutcome::Closed);
        } else if key.code == KeyCode::Char(' ') || is("tui.select.confirm") {
            self.toggle();
        } else {
            self.search.handle_input(event);
            self.refilter();
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::test_support::*;
    use super::*;
    use crate::resources::packages::config::ConfigItem;
    use crate::resources::packages::Scope;
    use std::path::PathBuf;

    fn item(name: &str, kind: ResourceKind, enabled: bool) -> ConfigItem {
        ConfigItem {
            display_name: name.into(),
            enabled,
            resource: PackageResource {
                kind,
                path: PathBuf::from(format!("/pkg/{name}")),
                enabled,
                source: "npm:demo".into(),
                scope: Scope::User,
                base_dir: PathBuf::from("/pkg"),
            },
        }
    }

    fn selector() -> ConfigSelector {
        let group = ConfigGroup {
            label: "npm:demo (user)".into(),
            scope: Scope::User,
            source: "npm:demo".into(),
            kinds: vec![
                (
                    ResourceKind::Extensions,
                    vec![item("guard.ts", ResourceKind::Extensions, true)],
                ),
                (
                    ResourceKind::Skills,
                    vec![
                        item("review", ResourceKind::Skills, true),
                        item("deploy", ResourceKind::Skills, false),
                    ],
                ),
            ],
        };
        ConfigSelector::new(vec![group], theme())
    }

    #[test]
    fn groups_kinds_and_boxes_with_the_cursor_on_resources() {
        let mut s = selector();
        let lines = screen(&mut s, 80);
        assert!(lines[0].starts_with("Resource Configuration"));
        assert!(lines[0].ends_with("space toggle · esc close"));
        assert!(
            lines.contains(&"  npm:demo (user)".to_string()),
            "{lines:?}"
        );
        assert!(lines.contains(&"    Extensions".to_string()));
        assert!(
            lines.contains(&">     [x] guard.ts".to_string()),
            "{lines:?}"
        );
        assert!(lines.contains(&"      [ ] deploy".to_string()));
        assert_fits(&mut s);
    }

    #[test]
    fn space_toggles_typing_filters_escape_closes() {
        let mut s = selector();
        s.handle_input(&key("down"));
        assert!(screen(&mut s, 80).contains(&">     [x] review".to_string()));
        s.handle_input(&key("space"));
        let Some(ConfigOutcome::Toggled(r, false)) = s.take_outcome() else {
            panic!("expected a toggle off");
        };
        assert_eq!(r.path, PathBuf::from("/pkg/review"));
        type_text(&mut s, "depl");
        let lines = screen(&mut s, 80);
        assert!(lines.contains(&">     [ ] deploy".to_string()), "{lines:?}");
        assert!(!lines.iter().any(|l| l.contains("guard.ts")));
        s.handle_input(&key("enter"));
        assert!(matches!(
            s.take_outcome(),
            Some(ConfigOutcome::Toggled(_, true))
        ));
        s.handle_input(&key("escape"));
        assert_eq!(s.take_outcome(), Some(ConfigOutcome::Closed));
    }
}
