//! Pieces every selector shares: the full-width border rule, key hints in pi's
//! `key description` style, pi's small question dialog, the scroll window and the `(n/m)`
//! line, and the final pass that keeps every rendered line within the width.

use crate::tui::keybindings;
use crate::tui::text::{truncate_to_width, visible_width};
use crate::tui::theme::{Theme, Token};

/// A horizontal rule across the whole width in `token`'s colour.
pub fn border(theme: &Theme, token: Token, width: usize) -> String {
    theme.fg(token, &"─".repeat(width.max(1)))
}

/// The keys bound to `action`, as pi prints them in hints (`ctrl+a/home`).
pub fn key_text(action: &str) -> String {
    keybindings::current().key_text(action)
}

/// The keys bound to `action` with each part capitalised (`Enter`, `Ctrl+S`), as pi's
/// selectors print them in their bottom hint line.
pub fn key_display_text(action: &str) -> String {
    let capitalised = |part: &str| {
        let mut chars = part.chars();
        chars.next().map_or_else(String::new, |c| {
            c.to_uppercase().chain(chars).collect::<String>()
        })
    };
    key_text(action)
        .split('/')
        .map(|k| k.split('+').map(capitalised).collect::<Vec<_>>().join("+"))
        .collect::<Vec<_>>()
        .join("/")
}

/// The `Enter to select · Ctrl+S to set as default · Escape to cancel` line of the model and
/// thinking selectors (`save`: the action that saves the default).
pub fn select_or_save_hint(theme: &Theme, save: &str) -> String {
    theme.fg(
        Token::Dim,
        &format!(
            "  {} to select · {} to set as default · {} to cancel",
            key_display_text("tui.select.confirm"),
            key_display_text(save),
            key_display_text("tui.select.cancel")
        ),
    )
}

/// `keys description`, the keys dim and the description muted.
pub fn key_hint(theme: &Theme, action: &str, description: &str) -> String {
    format!(
        "{}{}",
        theme.fg(Token::Dim, &key_text(action)),
        theme.fg(Token::Muted, &format!(" {description}"))
    )
}

/// pi's small question dialog (its extension selector, also used for the start-up trust
/// question and the branch-summary choice): a rule, the title in bold accent, the options with
/// `→` on the selected one, the navigate/confirm/cancel hint and a rule, blank rows between.
pub fn choice_dialog(
    theme: &Theme,
    title: &str,
    options: &[String],
    selected: usize,
    confirm: &str,
    width: usize,
) -> Vec<String> {
    use crate::tui::components::text::Text;
    use crate::tui::Component;
    let text = |s: String| Text::new(s, 1, 0).render(width);
    let mut lines = vec![border(theme, Token::Border, width), String::new()];
    lines.extend(text(theme.fg(Token::Accent, &theme.bold(title))));
    lines.push(String::new());
    for (i, option) in options.iter().enumerate() {
        lines.extend(text(if i == selected {
            theme.fg(Token::Accent, "→ ") + &theme.fg(Token::Accent, option)
        } else {
            format!("  {}", theme.fg(Token::Text, option))
        }));
    }
    lines.push(String::new());
    lines.extend(text(format!(
        "{}{}  {}  {}",
        theme.fg(Token::Dim, "↑↓"),
        theme.fg(Token::Muted, " navigate"),
        key_hint(theme, "tui.select.confirm", confirm),
        key_hint(theme, "tui.select.cancel", "cancel"),
    )));
    lines.push(String::new());
    lines.push(border(theme, Token::Border, width));
    fit(lines, width)
}

/// The first and one-past-last index of a window of `max_visible` rows kept around `selected`.
pub fn scroll_window(selected: usize, len: usize, max_visible: usize) -> (usize, usize) {
    let start = selected
        .saturating_sub(max_visible / 2)
        .min(len.saturating_sub(max_visible));
    (start, (start + max_visible).min(len))
}

/// The muted `  (n/m)` line shown when a list does not fit.
pub fn position_line(theme: &Theme, selected: usize, len: usize) -> String {
    theme.fg(Token::Muted, &format!("  ({}/{len})", selected + 1))
}

/// Cuts every line that is wider than `width` (styles are kept, no ellipsis).
pub fn fit(lines: Vec<String>, width: usize) -> Vec<String> {
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

/// Collapses control characters (newlines, tabs, escapes) to spaces and trims, so a message
/// or name fits on one row.
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .trim()
        .to_string()
}

/// Moves `selected` one step up or down through `len` rows, wrapping at both ends.
pub fn step_wrapping(selected: usize, len: usize, down: bool) -> usize {
    if len == 0 {
        0
    } else if down {
        (selected + 1) % len
    } else if selected == 0 {
        len - 1
    } else {
        selected - 1
    }
}

#[cfg(test)]
pub mod test_support {
    //! Helpers for driving selectors in tests.

    use std::sync::Arc;

    use crate::tui::keys::parse_key_id;
    use crate::tui::text::{strip_ansi, visible_width};
    use crate::tui::theme::{ColorMode, Theme};
    use crate::tui::{Component, InputEvent, KeyCode, KeyEvent};

    pub fn theme() -> Arc<Theme> {
        Arc::new(Theme::builtin("dark", ColorMode::TrueColor).expect("dark theme"))
    }

    /// An event for a key id such as `"ctrl+s"` or `"enter"`.
    pub fn key(id: &str) -> InputEvent {
        InputEvent::Key(parse_key_id(id).unwrap_or_else(|| panic!("bad key id {id}")))
    }

    pub fn type_text(c: &mut dyn Component, text: &str) {
        for ch in text.chars() {
            c.handle_input(&InputEvent::Key(KeyEvent::plain(KeyCode::Char(ch))));
        }
    }

    /// The rendered lines with styles removed.
    pub fn screen(c: &mut dyn Component, width: usize) -> Vec<String> {
        c.render(width)
            .iter()
            .map(|l| strip_ansi(l).trim_end().to_string())
            .collect()
    }

    /// Asserts every line fits for widths 20..=200.
    pub fn assert_fits(c: &mut dyn Component) {
        for width in 20..=200 {
            for line in c.render(width) {
                assert!(
                    visible_width(&line) <= width,
                    "width {width}: {:?}",
                    strip_ansi(&line)
                );
            }
        }
    }
}
