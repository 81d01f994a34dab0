//! Components an extension draws itself (`ctx.ui.custom()`, a custom editor): the screen shows
//! the lines the extension last sent, and every key goes back to it as the raw terminal
//! sequence pi-tui components expect (`matchesKey(data, "up")`).

use crate::extensions::ui::ComponentHandle;
use crate::tui::keys::{KeyCode, KeyEvent, KeyKind, Mods};
use crate::tui::text::{truncate_to_width, visible_width};
use crate::tui::{Component, InputEvent};

/// The raw input sequence for a key: the legacy xterm encoding where one exists, else the
/// Kitty keyboard protocol's `CSI code;mods u`.
pub fn encode_key(key: &KeyEvent) -> String {
    let m = key.mods;
    let param = 1
        + u32::from(m.shift)
        + 2 * u32::from(m.alt)
        + 4 * u32::from(m.ctrl)
        + 8 * u32::from(m.super_key);
    let csi_u = |code: u32| format!("\x1b[{code};{param}u");
    let with_mods = |plain: &str, final_byte: char| {
        if param == 1 {
            plain.to_string()
        } else {
            format!("\x1b[1;{param}{final_byte}")
        }
    };
    let tilde = |n: u32| {
        if param == 1 {
            format!("\x1b[{n}~")
        } else {
            format!("\x1b[{n};{param}~")
        }
    };
    match key.code {
        KeyCode::Char(c) => {
            let only_shift = Mods { shift: false, ..m } == Mods::NONE;
            if only_shift {
                return c.to_string();
            }
            if m == Mods::CTRL && c.is_ascii_alphabetic() {
                return ((c.to_ascii_lowercase() as u8 - b'a' + 1) as char).to_string();
            }
            if m == Mods::ALT {
                return format!("\x1b{c}");
            }
            csi_u(c.to_ascii_lowercase() as u32)
        }
        KeyCode::Enter if param == 1 => "\r".into(),
        KeyCode::Enter if m == Mods::ALT => "\x1b\r".into(),
        KeyCode::Enter => csi_u(13),
        KeyCode::Tab if param == 1 => "\t".into(),
        KeyCode::Tab if m == Mods::SHIFT => "\x1b[Z".into(),
        KeyCode::Tab => csi_u(9),
        KeyCode::Backspace if param == 1 => "\x7f".into(),
        KeyCode::Backspace if m == Mods::ALT => "\x1b\x7f".into(),
        KeyCode::Backspace => csi_u(127),
        KeyCode::Escape if param == 1 => "\x1b".into(),
        KeyCode::Escape => csi_u(27),
        KeyCode::Up => with_mods("\x1b[A", 'A'),
        KeyCode::Down => with_mods("\x1b[B", 'B'),
        KeyCode::Right => with_mods("\x1b[C", 'C'),
        KeyCode::Left => with_mods("\x1b[D", 'D'),
        KeyCode::Home => with_mods("\x1b[H", 'H'),
        KeyCode::End => with_mods("\x1b[F", 'F'),
        KeyCode::Insert => tilde(2),
        KeyCode::Delete => tilde(3),
        KeyCode::PageUp => tilde(5),
        KeyCode::PageDown => tilde(6),
        KeyCode::F(n @ 1..=4) => with_mods(&format!("\x1bO{}", (b'P' + n - 1) as char), {
            (b'P' + n - 1) as char
        }),
        KeyCode::F(n) => {
            let code = match n {
                5 => 15,
                6 => 17,
                7 => 18,
                8 => 19,
                9 => 20,
                10 => 21,
                11 => 23,
                _ => 24,
            };
            tilde(code)
        }
    }
}

/// The sequence an input event sends to an extension component (a paste stays bracketed).
pub fn encode_input(event: &InputEvent) -> Option<String> {
    match event {
        InputEvent::Key(k) if k.kind == KeyKind::Release => None,
        InputEvent::Key(k) => Some(encode_key(k)),
        InputEvent::Paste(text) => Some(format!("\x1b[200~{text}\x1b[201~")),
    }
}

/// A line an extension drew, with its colours (SGR sequences) kept and everything else that
/// could move the cursor or hide text removed.
pub fn keep_colours(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find("\x1b[") {
        let after = &rest[start + 2..];
        let end = after
            .char_indices()
            .find(|(_, c)| ('\u{40}'..='\u{7e}').contains(c))
            .map(|(i, _)| i);
        let sgr = end.filter(|&i| {
            after.as_bytes()[i] == b'm'
                && after[..i]
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b == b';' || b == b':')
        });
        out.push_str(&crate::util::terminal_text::clean(&rest[..start]));
        match sgr {
            Some(i) => {
                out.push_str(&rest[start..start + 2 + i + 1]);
                rest = &after[i + 1..];
            }
            None => {
                // Not a colour: dropped whole (or the rest, if it never ends).
                rest = end.map_or("", |i| &after[i + 1..]);
            }
        }
    }
    out.push_str(&crate::util::terminal_text::clean(rest));
    out
}

/// An extension's component on screen: its last lines, fitted to the width; keys go to it.
pub struct RemoteComponent {
    pub handle: ComponentHandle,
    lines: Vec<String>,
}

impl RemoteComponent {
    pub fn new(handle: ComponentHandle, lines: Vec<String>) -> RemoteComponent {
        RemoteComponent { handle, lines }
    }

    pub fn set_lines(&mut self, lines: Vec<String>) {
        self.lines = lines;
    }
}

impl Component for RemoteComponent {
    fn render(&mut self, width: usize) -> Vec<String> {
        self.lines
            .iter()
            .map(|l| {
                let clean = keep_colours(l);
                if visible_width(&clean) > width {
                    truncate_to_width(&clean, width, "", false)
                } else {
                    clean
                }
            })
            .collect()
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        if let Some(data) = encode_input(event) {
            self.handle.input(&data);
        }
        true
    }

    fn invalidate(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_encode_as_terminals_send_them() {
        let k = |code, mods| encode_key(&KeyEvent::new(code, mods));
        assert_eq!(k(KeyCode::Char('a'), Mods::NONE), "a");
        assert_eq!(k(KeyCode::Char('A'), Mods::SHIFT), "A");
        assert_eq!(k(KeyCode::Char('c'), Mods::CTRL), "\x03");
        assert_eq!(k(KeyCode::Char('x'), Mods::ALT), "\x1bx");
        assert_eq!(k(KeyCode::Enter, Mods::NONE), "\r");
        assert_eq!(k(KeyCode::Escape, Mods::NONE), "\x1b");
        assert_eq!(k(KeyCode::Up, Mods::NONE), "\x1b[A");
        assert_eq!(k(KeyCode::Up, Mods::SHIFT), "\x1b[1;2A");
        assert_eq!(k(KeyCode::Tab, Mods::SHIFT), "\x1b[Z");
        assert_eq!(k(KeyCode::Delete, Mods::NONE), "\x1b[3~");
        assert_eq!(k(KeyCode::Enter, Mods::SHIFT), "\x1b[13;2u");
        assert_eq!(k(KeyCode::F(1), Mods::NONE), "\x1bOP");
        assert_eq!(
            encode_input(&InputEvent::Paste("hi".into())).unwrap(),
            "\x1b[200~hi\x1b[201~"
        );
    }

    #[test]
    fn drawn_lines_keep_colours_only() {
        assert_eq!(keep_colours("\x1b[31mred\x1b[0m"), "\x1b[31mred\x1b[0m");
        assert_eq!(keep_colours("a\x1b[2Jb\x1b]0;title\x07c"), "abc");
        assert_eq!(keep_colours("x\x1b[1;2"), "x");
    }
}
