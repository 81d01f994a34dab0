//! Text helpers every drawn part of the chat shares: cleaning untrusted text before it is
//! styled, pi's key hints, and reading a string argument of a tool call. A leaf: it knows
//! nothing of the transcript's items.

use serde_json::Value;

use crate::tui::theme::{Theme, Token};

/// Untrusted text made safe to style: escape sequences, control and invisible characters
/// removed.
pub fn safe(text: &str) -> String {
    crate::util::terminal_text::clean(text)
}

/// pi's key hint: the key in `dim`, the description in `muted`.
pub fn key_hint(theme: &Theme, action: &str, description: &str) -> String {
    let keys = crate::tui::keybindings::current().key_text(action);
    format!(
        "{} {}",
        theme.fg(Token::Dim, &keys),
        theme.fg(Token::Muted, description)
    )
}

/// A JSON value's string, or `None` when it is something else.
pub fn arg_str<'a>(args: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| args.get(*k).and_then(Value::as_str))
}
