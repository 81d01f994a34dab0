//! [`UserMessageSelector`] (`/fork`): the user messages of the active branch, oldest first,
//! two rows each (the text, then `Message n of m`); the newest is preselected.

use std::sync::Arc;

use super::common::{border, fit, one_line, position_line, scroll_window, step_wrapping};
use crate::tui::keybindings;
use crate::tui::text::truncate_to_width;
use crate::tui::theme::{Theme, Token};
use crate::tui::{Component, InputEvent};

const MAX_VISIBLE: usize = 10;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserMessageOutcome {
    /// The entry id to fork from.
    Selected(String),
    Cancelled,
}

pub struct UserMessageSelector {
    theme: Arc<Theme>,
    /// `(entry_id, text)`, oldest first.
    messages: Vec<(String, String)>,
    selected: usize,
    outcome: Option<UserMessageOutcome>,
    /// The heading and the line under it (`/fork`'s unless changed).
    title: (&'static str, &'static str),
}

impl UserMessageSelector {
    /// `messages`: `session::ops::user_messages_for_fork` (entry id, text), oldest first.
    /// An empty list cancels at once (the app usually says "No messages to fork from").
    pub fn new(messages: Vec<(String, String)>, theme: Arc<Theme>) -> Self {
        let outcome = messages.is_empty().then_some(UserMessageOutcome::Cancelled);
        UserMessageSelector {
            theme,
            selected: messages.len().saturating_sub(1),
            messages,
            outcome,
            title: (
                "Fork from Message",
                "Select a user message to copy the active path up to that point into a new session",
            ),
        }
    }

    /// The same list under another heading (`/rewind`).
    pub fn with_title(mut self, title: &'static str, subtitle: &'static str) -> Self {
        self.title = (title, subtitle);
        self
    }

    pub fn take_outcome(&mut self) -> Option<UserMessageOutcome> {
        self.outcome.take()
    }
}

impl Component for UserMessageSelector {
    fn render(&mut self, width: usize) -> Vec<String> {
        let t = &self.theme;
        let mut lines = vec![
            String::new(),
            format!(" {}", t.bold(self.title.0)),
            t.fg(Token::Muted, &format!(" {}", self.title.1)),
            String::new(),
            border(t, Token::Border, width),
            String::new(),
        ];
        if self.messages.is_empty() {
            lines.push(t.fg(Token::Muted, "  No user messages found"));
        }
        let n = self.messages.len();
        let (start, end) = scroll_window(self.selected, n, MAX_VISIBLE);
        for i in start..end {
            let text = truncate_to_width(
                &one_line(&self.messages[i].1),
                width.saturating_sub(2),
                "...",
                false,
            );
            lines.push(if i == self.selected {
                format!("{}{}", t.fg(Token::Accent, "› "), t.bold(&text))
            } else {
                format!("  {text}")
            });
            lines.push(t.fg(Token::Muted, &format!("  Message {} of {n}", i + 1)));
            lines.push(String::new());
        }
        if start > 0 || end < n {
            lines.push(position_line(t, self.selected, n));
        }
        lines.push(String::new());
        lines.push(border(t, Token::Border, width));
        fit(lines, width)
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let Some(key) = event.key() else {
            return false;
        };
        let is = |id: &str| keybindings::matches(key, id);
        if is("tui.select.up") || is("tui.select.down") {
            self.selected =
                step_wrapping(self.selected, self.messages.len(), is("tui.select.down"));
        } else if is("tui.select.confirm") {
            if let Some((id, _)) = self.messages.get(self.selected) {
                self.outcome = Some(UserMessageOutcome::Selected(id.clone()));
            }
        } else if is("tui.select.cancel") {
            self.outcome = Some(UserMessageOutcome::Cancelled);
        } else {
            return false;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::test_support::*;
    use super::*;

    fn messages(n: usize) -> Vec<(String, String)> {
        (1..=n)
            .map(|i| (format!("e{i}"), format!("question\nnumber {i}")))
            .collect()
    }

    #[test]
    fn newest_preselected_and_navigation_wraps() {
        let mut s = UserMessageSelector::new(messages(3), theme());
        let lines = screen(&mut s, 60);
        assert_eq!(lines[1], " Fork from Message");
        assert_eq!(lines[6], "  question number 1");
        assert_eq!(lines[7], "  Message 1 of 3");
        assert_eq!(lines[12], "› question number 3");
        assert_fits(&mut s);
        s.handle_input(&key("down"));
        s.handle_input(&key("enter"));
        assert_eq!(
            s.take_outcome(),
            Some(UserMessageOutcome::Selected("e1".into()))
        );
        s.handle_input(&key("up"));
        s.handle_input(&key("up"));
        s.handle_input(&key("enter"));
        assert_eq!(
            s.take_outcome(),
            Some(UserMessageOutcome::Selected("e2".into()))
        );
        s.handle_input(&key("escape"));
        assert_eq!(s.take_outcome(), Some(UserMessageOutcome::Cancelled));
    }

    #[test]
    fn scrolls_long_histories_and_cancels_when_empty() {
        let mut s = UserMessageSelector::new(messages(25), theme());
        let lines = screen(&mut s, 60);
        assert!(lines.contains(&"  (25/25)".to_string()));
        assert!(lines.contains(&"› question number 25".to_string()));
        assert_fits(&mut s);
        let mut empty = UserMessageSelector::new(vec![], theme());
        assert_eq!(empty.take_outcome(), Some(UserMessageOutcome::Cancelled));
        assert!(screen(&mut empty, 40).contains(&"  No user messages found".to_string()));
    }
}
