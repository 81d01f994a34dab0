//! [`AuthMethodPicker`]: the first step of `/login`, where pi asks whether to use a
//! subscription (OAuth) or an API key before listing the providers of that kind.

use std::sync::Arc;

use super::common::{border, fit, key_hint};
use super::login::AuthKind;
use crate::tui::keybindings;
use crate::tui::theme::{Theme, Token};
use crate::tui::{Component, InputEvent};

/// The two choices, in pi's order and words.
const CHOICES: [(&str, AuthKind); 2] = [
    ("Use a subscription", AuthKind::OAuth),
    ("Use an API key", AuthKind::ApiKey),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMethodOutcome {
    Selected(AuthKind),
    Cancelled,
}

pub struct AuthMethodPicker {
    theme: Arc<Theme>,
    selected: usize,
    outcome: Option<AuthMethodOutcome>,
}

impl AuthMethodPicker {
    pub fn new(theme: Arc<Theme>) -> Self {
        AuthMethodPicker {
            theme,
            selected: 0,
            outcome: None,
        }
    }

    pub fn take_outcome(&mut self) -> Option<AuthMethodOutcome> {
        self.outcome.take()
    }
}

impl Component for AuthMethodPicker {
    fn render(&mut self, width: usize) -> Vec<String> {
        let t = self.theme.clone();
        let mut lines = vec![border(&t, Token::Border, width), String::new()];
        lines.push(format!(
            " {}",
            t.fg(Token::Accent, &t.bold("Select authentication method:"))
        ));
        lines.push(String::new());
        for (i, (label, _)) in CHOICES.iter().enumerate() {
            lines.push(if i == self.selected {
                format!(" {}", t.fg(Token::Accent, &format!("→ {label}")))
            } else {
                format!("   {}", t.fg(Token::Text, label))
            });
        }
        lines.push(String::new());
        lines.push(format!(
            " {} {}  {}  {}",
            t.fg(Token::Dim, "↑↓"),
            t.fg(Token::Muted, "navigate"),
            key_hint(&t, "tui.select.confirm", "select"),
            key_hint(&t, "tui.select.cancel", "cancel")
        ));
        lines.push(border(&t, Token::Border, width));
        fit(lines, width)
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let is = |id: &str| event.key().is_some_and(|k| keybindings::matches(k, id));
        if is("tui.select.up") {
            self.selected = self.selected.saturating_sub(1);
        } else if is("tui.select.down") {
            self.selected = (self.selected + 1).min(CHOICES.len() - 1);
        } else if is("tui.select.confirm") {
            self.outcome = Some(AuthMethodOutcome::Selected(CHOICES[self.selected].1));
        } else if is("tui.select.cancel") {
            self.outcome = Some(AuthMethodOutcome::Cancelled);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::test_support::{assert_fits, key, screen, theme};
    use super::*;

    #[test]
    fn offers_a_subscription_first_then_an_api_key() {
        let mut p = AuthMethodPicker::new(theme());
        let text = screen(&mut p, 60).join("\n");
        assert!(text.contains("Select authentication method:"), "{text}");
        assert!(text.contains("→ Use a subscription"), "{text}");
        p.handle_input(&key("down"));
        p.handle_input(&key("enter"));
        assert_eq!(
            p.take_outcome(),
            Some(AuthMethodOutcome::Selected(AuthKind::ApiKey))
        );
        p.handle_input(&key("escape"));
        assert_eq!(p.take_outcome(), Some(AuthMethodOutcome::Cancelled));
        assert_fits(&mut p);
    }
}
