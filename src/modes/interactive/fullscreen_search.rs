//! The transcript search box of the fullscreen mode (`tui.altScreen.search`): a three-row box
//! in the top-right corner with the query, "n/m" or "No matches", and the previous/next keys
//! in its bottom border, as pi draws it. It also keeps which match is selected and how the next
//! search should move the selection ([`Step`]).

use crate::tui::components::input::Input;
use crate::tui::keybindings;
use crate::tui::search::{Match, SearchIndex};
use crate::tui::text::{truncate_to_width, visible_width};
use crate::tui::{Component, InputEvent};

/// How the selected match moves when the results are next computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// The query changed: the first match at or below the anchor row.
    Query,
    Next,
    Previous,
    /// Keep the selected match.
    Retain,
}

pub(super) struct SearchBox {
    input: Input,
    pub(super) index: SearchIndex,
    pub(super) matches: Vec<Match>,
    pub(super) selected: Option<usize>,
    pub(super) step: Step,
    /// The content row new queries search from (where the view or the last match was).
    pub(super) anchor_row: usize,
}

impl SearchBox {
    pub(super) fn new(anchor_row: usize) -> SearchBox {
        SearchBox {
            input: Input::new(),
            index: SearchIndex::default(),
            matches: Vec::new(),
            selected: None,
            step: Step::Query,
            anchor_row,
        }
    }

    /// Types into the query; a changed query searches again from the selected match.
    pub(super) fn handle_input(&mut self, event: &InputEvent) {
        let before = self.input.value().to_string();
        self.input.handle_input(event);
        // Enter and Escape belong to the search keys, not to the input.
        let _ = self.input.take_submitted();
        let _ = self.input.take_cancelled();
        if self.input.value() != before {
            if let Some(m) = self.selected.and_then(|i| self.matches.get(i)) {
                self.anchor_row = m.first_row();
            }
            self.step = Step::Query;
        }
    }

    /// Computes the matches in `content` and moves the selection per [`Step`]. Returns the
    /// selected match when it should be scrolled into view.
    pub(super) fn refresh(&mut self, content: &[String]) -> Option<&Match> {
        let query = self.input.value().to_string();
        if query.trim().is_empty() {
            self.matches.clear();
            self.selected = None;
            self.step = Step::Retain;
            return None;
        }
        let (found, changed) = self.index.search(content, &query);
        if changed {
            self.matches = found.to_vec();
        }
        let step = std::mem::replace(&mut self.step, Step::Retain);
        if !changed && step == Step::Retain {
            return None;
        }
        let count = self.matches.len();
        self.selected = if count == 0 {
            None
        } else {
            Some(match (step, self.selected) {
                (Step::Query, _) => self
                    .matches
                    .iter()
                    .position(|m| m.first_row() >= self.anchor_row)
                    .unwrap_or(0),
                (Step::Next, Some(i)) => (i.min(count - 1) + 1) % count,
                (Step::Next, None) => 0,
                (Step::Previous, Some(i)) => (i.min(count - 1) + count - 1) % count,
                (Step::Previous, None) => count - 1,
                (Step::Retain, i) => i.unwrap_or(0).min(count - 1),
            })
        };
        if step == Step::Retain {
            return None;
        }
        self.selected.map(|i| &self.matches[i])
    }

    /// The box, `width` columns wide (three rows).
    pub(super) fn render(&mut self, width: usize) -> Vec<String> {
        let inner = width.saturating_sub(2);
        let query = self.input.value().to_string();
        let result = if query.is_empty() {
            String::new()
        } else {
            match self.selected {
                _ if self.matches.is_empty() => "No matches".to_string(),
                Some(i) => format!("{}/{}", i + 1, self.matches.len()),
                None => format!("0/{}", self.matches.len()),
            }
        };
        let result = truncate_to_width(&result, inner.saturating_sub(3), "", false);
        let result = if result.is_empty() {
            String::new()
        } else {
            format!("\x1b[2m {result} \x1b[22m")
        };
        let input_width = inner.saturating_sub(visible_width(&result));
        // Our input draws a "> " prompt; pi's search shows a single space.
        let rendered = self.input.render(input_width + 1).remove(0);
        let mut line = rendered.get(1..).unwrap_or("").to_string();
        if query.is_empty() {
            let hint = "\x1b[2mFind in transcript\x1b[22m";
            line = truncate_to_width(
                &format!(" {}{hint}", crate::tui::CURSOR_MARKER),
                input_width,
                "",
                false,
            );
        }
        let line = truncate_to_width(&line, input_width, "", true);
        let key = |id: &str| {
            let bindings = keybindings::current();
            bindings
                .keys(id)
                .first()
                .map(|k| keybindings::display_keys(k))
                .unwrap_or_else(|| "Unbound".into())
        };
        let mut controls = format!(
            "↑ {} · ↓ {}",
            key("tui.altScreen.searchPrevious"),
            key("tui.altScreen.searchNext")
        );
        if visible_width(&controls) + 3 > inner {
            controls = "↑ ↓".into();
        }
        let bottom = if visible_width(&controls) + 3 <= inner {
            let left = inner - visible_width(&controls) - 3;
            format!("└{} {controls} ─┘", "─".repeat(left))
        } else {
            format!("└{}┘", "─".repeat(inner))
        };
        vec![
            format!("┌{}┐", "─".repeat(inner)),
            format!("│{line}{result}│"),
            bottom,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::text::strip_ansi;
    use crate::tui::KeyEvent;

    fn lines(rows: &[&str]) -> Vec<String> {
        rows.iter().map(|s| s.to_string()).collect()
    }

    fn type_query(b: &mut SearchBox, text: &str) {
        for c in text.chars() {
            b.handle_input(&InputEvent::Key(KeyEvent::plain(
                crate::tui::KeyCode::Char(c),
            )));
        }
    }

    #[test]
    fn the_query_selects_from_the_anchor_and_steps_wrap_around() {
        let content = lines(&["apple", "banana apple", "cherry", "apple pie"]);
        let mut b = SearchBox::new(2);
        type_query(&mut b, "apple");
        assert_eq!(b.refresh(&content).map(|m| m.first_row()), Some(3));
        assert_eq!(b.selected, Some(2));
        assert!(
            b.refresh(&content).is_none(),
            "nothing moves without a step"
        );
        b.step = Step::Next;
        assert_eq!(b.refresh(&content).map(|m| m.first_row()), Some(0));
        b.step = Step::Previous;
        assert_eq!(b.refresh(&content).map(|m| m.first_row()), Some(3));
        let row = strip_ansi(&b.render(40)[1]);
        assert!(row.contains("apple") && row.contains("3/3"), "{row}");
        type_query(&mut b, "x");
        b.refresh(&content);
        assert!(strip_ansi(&b.render(40)[1]).contains("No matches"));
    }

    #[test]
    fn the_box_shows_the_placeholder_and_the_navigation_keys() {
        let mut b = SearchBox::new(0);
        let rows: Vec<String> = b.render(40).iter().map(|l| strip_ansi(l)).collect();
        assert_eq!(rows.len(), 3);
        assert!(rows[1].contains("Find in transcript"), "{rows:?}");
        assert!(rows[2].contains("↑ Shift+Enter · ↓ Enter"), "{rows:?}");
        for row in &rows {
            assert_eq!(visible_width(row), 40, "{row:?}");
        }
    }
}
