//! Decoding one complete terminal input sequence (as framed by
//! [`StdinBuffer`](super::stdin_buffer::StdinBuffer)) into what it means: a key, a terminal
//! reply, or something we do not use.
//!
//! Covers the encodings terminals actually send: plain UTF-8 text and control bytes, legacy
//! xterm/VT sequences (`CSI A`, `SS3 H`, `CSI 3~`, `CSI 1;5C`), rxvt's `CSI a`/`CSI 2$`/
//! `CSI 2^` forms, the Linux console's `CSI [A`, Kitty's CSI-u with alternate keys and event
//! types, and xterm's modifyOtherKeys (`CSI 27;mod;code~`). Which of two meanings an
//! ambiguous legacy byte gets (`ESC CR`, `LF`) depends on whether the Kitty protocol is on.

use std::sync::OnceLock;

use super::keys::{InputEvent, KeyCode, KeyEvent, KeyKind, Mods};

/// What the terminal sent: input for components, or a reply to one of our queries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParsedInput {
    Event(InputEvent),
    /// Reply to the Kitty keyboard query `CSI ? u`: the terminal supports the protocol
    /// (the flags currently enabled are given).
    KittyFlags(u32),
    /// Reply to `CSI 16 t`: the size of one cell in pixels.
    CellSize {
        height: u32,
        width: u32,
    },
    /// Reply to `OSC 11 ; ?`: the terminal's background colour.
    BackgroundColor {
        r: u8,
        g: u8,
        b: u8,
    },
    /// A complete sequence we do not interpret (mouse, focus, cursor reports, garbage).
    Other(String),
}

const ESC: u8 = 0x1b;

/// Decodes one complete sequence. Never fails: what is not understood comes back as
/// [`ParsedInput::Other`].
pub fn decode(seq: &[u8], kitty_active: bool) -> ParsedInput {
    let decoded = match seq {
        [] => None,
        [ESC] => Some(key(KeyCode::Escape, Mods::NONE)),
        // A sequence introducer on its own (flushed after a timeout) was typed as Alt+key.
        [ESC, c @ (b'[' | b']' | b'P' | b'_')] => decode_alt(&[*c], kitty_active),
        [ESC, b'[', rest @ ..] => return decode_csi(seq, rest),
        [ESC, b']', ..] => return decode_osc(seq),
        [ESC, b'P' | b'_', ..] => None,
        [ESC, b'O', c] => decode_ss3(*c),
        [ESC, rest @ ..] => decode_alt(rest, kitty_active),
        _ => decode_plain(seq, kitty_active),
    };
    match decoded {
        Some(event) => ParsedInput::Event(InputEvent::Key(event)),
        None => other(seq),
    }
}

fn other(seq: &[u8]) -> ParsedInput {
    ParsedInput::Other(String::from_utf8_lossy(seq).into_owned())
}

fn key(code: KeyCode, mods: Mods) -> KeyEvent {
    KeyEvent::new(code, mods)
}

fn ctrl_char(c: char) -> KeyEvent {
    key(KeyCode::Char(c), Mods::CTRL)
}

/// Windows Terminal (locally, not over SSH) sends 0x08 for Ctrl+Backspace.
fn windows_terminal() -> bool {
    static WT: OnceLock<bool> = OnceLock::new();
    *WT.get_or_init(|| {
        let set = |k: &str| std::env::var_os(k).is_some();
        set("WT_SESSION") && !set("SSH_CONNECTION") && !set("SSH_CLIENT") && !set("SSH_TTY")
    })
}

/// A single character or control byte typed without ESC.
fn decode_plain(seq: &[u8], kitty_active: bool) -> Option<KeyEvent> {
    if let [b] = seq {
        let b = *b;
        return match b {
            b'\r' => Some(key(KeyCode::Enter, Mods::NONE)),
            // Ghostty maps Shift+Enter to a bare LF when the Kitty protocol is on.
            b'\n' if kitty_active => Some(key(KeyCode::Enter, Mods::SHIFT)),
            // In raw mode Enter sends CR; a bare LF is Ctrl+J (the editor's other newline).
            b'\n' => Some(ctrl_char('j')),
            b'\t' => Some(key(KeyCode::Tab, Mods::NONE)),
            0x7f => Some(key(KeyCode::Backspace, Mods::NONE)),
            0x08 if windows_terminal() => Some(key(KeyCode::Backspace, Mods::CTRL)),
            0x08 => Some(key(KeyCode::Backspace, Mods::NONE)),
            0x00 => Some(ctrl_char(' ')),
            0x01..=0x1a => Some(ctrl_char((b'a' + b - 1) as char)),
            0x1c => Some(ctrl_char('\\')),
            0x1d => Some(ctrl_char(']')),
            0x1e => Some(ctrl_char('^')),
            0x1f => Some(ctrl_char('-')),
            0x20..=0x7e => Some(key(KeyCode::Char(b as char), Mods::NONE)),
            // A lone high byte that is not UTF-8: an old terminal's 8-bit Meta.
            0x80..=0xff if (0xa0..=0xfe).contains(&b) || (0x81..=0x9a).contains(&b) => {
                decode_alt(&[b - 0x80], kitty_active)
            }
            _ => None,
        };
    }
    let text = std::str::from_utf8(seq).ok()?;
    let mut chars = text.chars();
    let c = chars.next()?;
    if chars.next().is_some() {
        return None;
    }
    Some(key(KeyCode::Char(c), Mods::NONE))
}

/// `ESC` followed by one character: Alt+that key.
fn decode_alt(rest: &[u8], kitty_active: bool) -> Option<KeyEvent> {
    if let [b] = rest {
        let b = *b;
        let alt_ctrl = Mods::ALT.with(Mods::CTRL);
        return match b {
            b'\r' if kitty_active => Some(key(KeyCode::Enter, Mods::SHIFT)),
            b'\r' => Some(key(KeyCode::Enter, Mods::ALT)),
            0x7f | 0x08 => Some(key(KeyCode::Backspace, Mods::ALT)),
            ESC => Some(key(KeyCode::Escape, Mods::ALT)),
            b'\t' => Some(key(KeyCode::Tab, Mods::ALT)),
            0x00 => Some(key(KeyCode::Char(' '), alt_ctrl)),
            0x01..=0x1a => Some(key(KeyCode::Char((b'a' + b - 1) as char), alt_ctrl)),
            0x1c => Some(key(KeyCode::Char('\\'), alt_ctrl)),
            0x1d => Some(key(KeyCode::Char(']'), alt_ctrl)),
            0x1f => Some(key(KeyCode::Char('-'), alt_ctrl)),
            b'B' if !kitty_active => Some(key(KeyCode::Left, Mods::ALT)),
            b'F' if !kitty_active => Some(key(KeyCode::Right, Mods::ALT)),
            b'A'..=b'Z' => Some(key(
                KeyCode::Char(b.to_ascii_lowercase() as char),
                Mods::ALT.with(Mods::SHIFT),
            )),
            0x20..=0x7e => Some(key(KeyCode::Char(b as char), Mods::ALT)),
            _ => None,
        };
    }
    let c = std::str::from_utf8(rest).ok()?.chars().next()?;
    Some(key(KeyCode::Char(c), Mods::ALT))
}

/// `ESC O x`: application-mode cursor keys, F1–F4, keypad Enter, rxvt Ctrl+arrows.
fn decode_ss3(c: u8) -> Option<KeyEvent> {
    let plain = |code| Some(key(code, Mods::NONE));
    match c {
        b'A' => plain(KeyCode::Up),
        b'B' => plain(KeyCode::Down),
        b'C' => plain(KeyCode::Right),
        b'D' => plain(KeyCode::Left),
        b'H' => plain(KeyCode::Home),
        b'F' => plain(KeyCode::End),
        b'M' => plain(KeyCode::Enter),
        b'P' => plain(KeyCode::F(1)),
        b'Q' => plain(KeyCode::F(2)),
        b'R' => plain(KeyCode::F(3)),
        b'S' => plain(KeyCode::F(4)),
        b'a' => Some(key(KeyCode::Up, Mods::CTRL)),
        b'b' => Some(key(KeyCode::Down, Mods::CTRL)),
        b'c' => Some(key(KeyCode::Right, Mods::CTRL)),
        b'd' => Some(key(KeyCode::Left, Mods::CTRL)),
        _ => None,
    }
}

/// Parses `mod[:event]` (either part may be missing) into modifiers and event kind.
fn parse_mods(param: Option<&str>) -> Option<(Mods, KeyKind)> {
    let Some(param) = param else {
        return Some((Mods::NONE, KeyKind::Press));
    };
    let mut parts = param.split(':');
    let m = parts.next().unwrap_or("");
    let m: u32 = if m.is_empty() { 1 } else { m.parse().ok()? };
    let kind = match parts.next().map(str::parse::<u32>) {
        Some(Ok(2)) => KeyKind::Repeat,
        Some(Ok(3)) => KeyKind::Release,
        _ => KeyKind::Press,
    };
    Some((Mods::from_param(m)?, kind))
}

fn with_kind(mut event: KeyEvent, kind: KeyKind) -> KeyEvent {
    event.kind = kind;
    event
}

fn decode_csi(seq: &[u8], rest: &[u8]) -> ParsedInput {
    let event = match decode_csi_inner(rest) {
        Ok(Some(event)) => event,
        Ok(None) => return other(seq),
        Err(reply) => return reply,
    };
    ParsedInput::Event(InputEvent::Key(event))
}

/// `Err` carries a terminal reply, `Ok(None)` anything unknown.
fn decode_csi_inner(rest: &[u8]) -> Result<Option<KeyEvent>, ParsedInput> {
    let Ok(body) = std::str::from_utf8(rest) else {
        return Ok(None);
    };
    let Some(last) = body.chars().last() else {
        return Ok(None);
    };
    let params = &body[..body.len() - last.len_utf8()];
    // The Linux console's function keys: ESC [ [ A … ESC [ [ E.
    if let Some(linux) = params.strip_prefix('[') {
        return Ok(match (linux, last) {
            ("", 'A'..='E') => Some(key(KeyCode::F(last as u8 - b'A' + 1), Mods::NONE)),
            ("5", '~') => Some(key(KeyCode::PageUp, Mods::NONE)),
            ("6", '~') => Some(key(KeyCode::PageDown, Mods::NONE)),
            _ => None,
        });
    }
    if let Some(private) = params.strip_prefix('?') {
        if last == 'u' {
            if let Ok(flags) = private.parse() {
                return Err(ParsedInput::KittyFlags(flags));
            }
        }
        return Ok(None);
    }
    if params.starts_with(['<', '>', '=']) {
        return Ok(None);
    }
    let groups: Vec<&str> = params.split(';').collect();
    let first_num = |g: &str| -> Option<u32> { g.split(':').next()?.parse().ok() };
    match last {
        'u' => Ok(decode_kitty(&groups)),
        '~' => {
            if groups.len() == 3 && groups[0] == "27" {
                let (Ok(m), Ok(code)) = (groups[1].parse::<u32>(), groups[2].parse::<u32>()) else {
                    return Ok(None);
                };
                let Some(mods) = Mods::from_param(m) else {
                    return Ok(None);
                };
                return Ok(codepoint_key(code, None, None, mods, KeyKind::Press));
            }
            let Some(n) = first_num(groups[0]) else {
                return Ok(None);
            };
            let code = match n {
                1 | 7 => KeyCode::Home,
                2 => KeyCode::Insert,
                3 => KeyCode::Delete,
                4 | 8 => KeyCode::End,
                5 => KeyCode::PageUp,
                6 => KeyCode::PageDown,
                11..=15 => KeyCode::F((n - 10) as u8),
                17..=21 => KeyCode::F((n - 11) as u8),
                23 | 24 => KeyCode::F((n - 12) as u8),
                _ => return Ok(None),
            };
            Ok(modified(code, groups.get(1).copied()))
        }
        '$' | '^' => {
            let code = match params {
                "2" => KeyCode::Insert,
                "3" => KeyCode::Delete,
                "5" => KeyCode::PageUp,
                "6" => KeyCode::PageDown,
                "7" => KeyCode::Home,
                "8" => KeyCode::End,
                _ => return Ok(None),
            };
            let mods = if last == '$' { Mods::SHIFT } else { Mods::CTRL };
            Ok(Some(key(code, mods)))
        }
        'a' | 'b' | 'c' | 'd' if params.is_empty() => {
            let code = [KeyCode::Up, KeyCode::Down, KeyCode::Right, KeyCode::Left]
                [(last as u8 - b'a') as usize];
            Ok(Some(key(code, Mods::SHIFT)))
        }
        'Z' => {
            let extra = parse_mods(groups.get(1).copied()).map(|(m, _)| m);
            Ok(extra.map(|m| key(KeyCode::Tab, m.with(Mods::SHIFT))))
        }
        't' => {
            if groups.len() == 3 && groups[0] == "6" {
                if let (Ok(height), Ok(width)) = (groups[1].parse(), groups[2].parse()) {
                    return Err(ParsedInput::CellSize { height, width });
                }
            }
            Ok(None)
        }
        'A' | 'B' | 'C' | 'D' | 'H' | 'F' | 'P' | 'Q' | 'S' => {
            if !(params.is_empty() || groups[0] == "1" || groups[0].starts_with("1:")) {
                return Ok(None);
            }
            let code = match last {
                'A' => KeyCode::Up,
                'B' => KeyCode::Down,
                'C' => KeyCode::Right,
                'D' => KeyCode::Left,
                'H' => KeyCode::Home,
                'F' => KeyCode::End,
                'P' => KeyCode::F(1),
                'Q' => KeyCode::F(2),
                _ => KeyCode::F(4),
            };
            Ok(modified(code, groups.get(1).copied()))
        }
        _ => Ok(None),
    }
}

fn modified(code: KeyCode, mods_param: Option<&str>) -> Option<KeyEvent> {
    let (mods, kind) = parse_mods(mods_param)?;
    Some(with_kind(key(code, mods), kind))
}

/// Kitty's `CSI code[:shifted[:base]] [; mods[:event]] [; text] u`.
fn decode_kitty(groups: &[&str]) -> Option<KeyEvent> {
    let mut codes = groups.first()?.split(':');
    let code: u32 = codes.next()?.parse().ok()?;
    let shifted = codes.next().and_then(|s| s.parse().ok());
    let base = codes.next().and_then(|s| s.parse().ok());
    let (mods, kind) = parse_mods(groups.get(1).copied().filter(|g| !g.is_empty()))?;
    codepoint_key(code, shifted, base, mods, kind)
}

/// The key a Kitty / modifyOtherKeys codepoint names, including Kitty's private-use
/// functional keys (keypad, F13+).
fn codepoint_key(
    code: u32,
    shifted: Option<u32>,
    base: Option<u32>,
    mods: Mods,
    kind: KeyKind,
) -> Option<KeyEvent> {
    let special = match code {
        27 => Some(KeyCode::Escape),
        13 | 57414 => Some(KeyCode::Enter),
        9 => Some(KeyCode::Tab),
        127 | 8 => Some(KeyCode::Backspace),
        57417 => Some(KeyCode::Left),
        57418 => Some(KeyCode::Right),
        57419 => Some(KeyCode::Up),
        57420 => Some(KeyCode::Down),
        57421 => Some(KeyCode::PageUp),
        57422 => Some(KeyCode::PageDown),
        57423 => Some(KeyCode::Home),
        57424 => Some(KeyCode::End),
        57425 => Some(KeyCode::Insert),
        57426 => Some(KeyCode::Delete),
        57376..=57398 => Some(KeyCode::F((code - 57376 + 13) as u8)),
        _ => None,
    };
    if let Some(code) = special {
        return Some(with_kind(key(code, mods), kind));
    }
    let code = match code {
        57399..=57408 => code - 57399 + u32::from(b'0'),
        57409 => u32::from(b'.'),
        57410 => u32::from(b'/'),
        57411 => u32::from(b'*'),
        57412 => u32::from(b'-'),
        57413 => u32::from(b'+'),
        57415 => u32::from(b'='),
        57416 => u32::from(b','),
        // Other private-use codes: modifier keys, lock keys, media keys.
        0xE000..=0xF8FF | 0..=31 => return None,
        c => c,
    };
    let mut c = char::from_u32(code)?;
    if c.is_ascii_uppercase() {
        c = c.to_ascii_lowercase();
    }
    if mods.ctrl || mods.alt || mods.super_key {
        // With a non-Latin layout, bindings name the key at the same place on a US layout.
        if !c.is_ascii() {
            if let Some(b) = base.and_then(char::from_u32).filter(char::is_ascii) {
                c = b.to_ascii_lowercase();
            }
        }
    } else if mods.shift {
        c = match shifted.and_then(char::from_u32) {
            Some(s) => s,
            None => {
                let mut up = c.to_uppercase();
                match (up.next(), up.next()) {
                    (Some(u), None) => u,
                    _ => c,
                }
            }
        };
    }
    Some(with_kind(key(KeyCode::Char(c), mods), kind))
}

/// OSC replies: only the background colour (`OSC 11 ; rgb:RRRR/GGGG/BBBB`) is used.
fn decode_osc(seq: &[u8]) -> ParsedInput {
    let body = &seq[2..];
    let body = body
        .strip_suffix(b"\x07")
        .or_else(|| body.strip_suffix(b"\x1b\\"))
        .unwrap_or(body);
    let Ok(body) = std::str::from_utf8(body) else {
        return other(seq);
    };
    if let Some(spec) = body.strip_prefix("11;") {
        if let Some((r, g, b)) = parse_rgb(spec) {
            return ParsedInput::BackgroundColor { r, g, b };
        }
    }
    other(seq)
}

/// `rgb:R/G/B` with 1–4 hex digits per channel, scaled to 8 bits.
fn parse_rgb(spec: &str) -> Option<(u8, u8, u8)> {
    let rest = spec.strip_prefix("rgb:")?;
    let mut channels = rest.split('/').map(|h| {
        if h.is_empty() || h.len() > 4 {
            return None;
        }
        let v = u32::from_str_radix(h, 16).ok()?;
        let max = (1u32 << (4 * h.len())) - 1;
        Some(((v * 255 + max / 2) / max) as u8)
    });
    let r = channels.next()??;
    let g = channels.next()??;
    let b = channels.next()??;
    if channels.next().is_some() {
        return None;
    }
    Some((r, g, b))
}

/// The codepoint of an unmodified Kitty printable key (`CSI 97u`, also with alternate
/// keys): some terminals send the raw character right after it, which must be dropped.
pub fn unmodified_kitty_printable(seq: &[u8]) -> Option<char> {
    let body = seq.strip_prefix(b"\x1b[")?.strip_suffix(b"u")?;
    let body = std::str::from_utf8(body).ok()?;
    if body.contains(';') {
        return None;
    }
    let mut parts = body.split(':');
    let code: u32 = parts.next()?.parse().ok()?;
    if parts.count() > 2 || code < 32 {
        return None;
    }
    char::from_u32(code)
}
