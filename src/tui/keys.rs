//! Key events and key ids.
//!
//! A [`KeyEvent`] is what a component sees; a key id is how bindings name keys, using pi's
//! spelling: `"ctrl+a"`, `"shift+tab"`, `"alt+enter"`, `"escape"`, `"pageUp"`, `"ctrl+-"`.

/// Modifier keys held with a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Mods {
    pub shift: bool,
    pub alt: bool,
    pub ctrl: bool,
    pub super_key: bool,
}

impl Mods {
    pub const NONE: Mods = Mods {
        shift: false,
        alt: false,
        ctrl: false,
        super_key: false,
    };
    pub const SHIFT: Mods = Mods {
        shift: true,
        ..Mods::NONE
    };
    pub const ALT: Mods = Mods {
        alt: true,
        ..Mods::NONE
    };
    pub const CTRL: Mods = Mods {
        ctrl: true,
        ..Mods::NONE
    };

    /// Decodes the xterm/Kitty modifier parameter (`1 + bits`: shift 1, alt 2, ctrl 4,
    /// super 8). Caps Lock and Num Lock are ignored; Hyper and Meta, which no binding can
    /// name, make the key unrepresentable (`None`).
    pub fn from_param(param: u32) -> Option<Mods> {
        let bits = param.saturating_sub(1) & !(64 | 128);
        if bits & !(1 | 2 | 4 | 8) != 0 {
            return None;
        }
        Some(Mods {
            shift: bits & 1 != 0,
            alt: bits & 2 != 0,
            ctrl: bits & 4 != 0,
            super_key: bits & 8 != 0,
        })
    }

    pub fn is_empty(&self) -> bool {
        *self == Mods::NONE
    }

    /// The same modifiers plus `other`'s.
    pub fn with(self, other: Mods) -> Mods {
        Mods {
            shift: self.shift || other.shift,
            alt: self.alt || other.alt,
            ctrl: self.ctrl || other.ctrl,
            super_key: self.super_key || other.super_key,
        }
    }
}

static KITTY_ACTIVE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Records whether the Kitty keyboard protocol is on. Without it some legacy sequences are
/// ambiguous in pi's favour of the older meaning: `ESC b` is both Alt+b and Alt+Left, so
/// bindings on either match it.
pub fn set_kitty_protocol_active(active: bool) {
    KITTY_ACTIVE.store(active, std::sync::atomic::Ordering::Relaxed);
}

pub fn kitty_protocol_active() -> bool {
    KITTY_ACTIVE.load(std::sync::atomic::Ordering::Relaxed)
}

/// Which key was pressed. Printable keys carry the character they type, already shifted
/// (`Char('A')` for Shift+a); with Ctrl or Alt held they carry the unshifted base letter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyCode {
    Char(char),
    Enter,
    Tab,
    Backspace,
    Delete,
    Insert,
    Escape,
    Up,
    Down,
    Left,
    Right,
    Home,
    End,
    PageUp,
    PageDown,
    F(u8),
}

/// Press, auto-repeat or release (release and repeat only with the Kitty protocol).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum KeyKind {
    #[default]
    Press,
    Repeat,
    Release,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyEvent {
    pub code: KeyCode,
    pub mods: Mods,
    pub kind: KeyKind,
}

impl KeyEvent {
    pub fn new(code: KeyCode, mods: Mods) -> Self {
        KeyEvent {
            code,
            mods,
            kind: KeyKind::Press,
        }
    }

    pub fn plain(code: KeyCode) -> Self {
        Self::new(code, Mods::NONE)
    }

    /// The text this key types into an editor, if any (plain or shifted printable keys).
    pub fn text(&self) -> Option<char> {
        match self.code {
            KeyCode::Char(c) if !self.mods.ctrl && !self.mods.alt && !self.mods.super_key => {
                Some(c)
            }
            _ => None,
        }
    }

    /// Whether this event matches a key id such as `"ctrl+shift+p"`.
    pub fn matches(&self, id: &str) -> bool {
        if self.kind == KeyKind::Release {
            return false;
        }
        match parse_key_id(id) {
            Some(want) => key_equivalent(self, &want),
            None => false,
        }
    }
}

fn key_equivalent(got: &KeyEvent, want: &KeyEvent) -> bool {
    if legacy_alt_alias(got, want) {
        return true;
    }
    if got.mods.ctrl != want.mods.ctrl
        || got.mods.alt != want.mods.alt
        || got.mods.super_key != want.mods.super_key
    {
        return false;
    }
    match (got.code, want.code) {
        (KeyCode::Char(g), KeyCode::Char(w)) => {
            // "shift+a" and a typed 'A' are the same key; so are "ctrl+shift+p" and Ctrl+P
            // reported as shifted.
            if want.mods.shift {
                g.to_lowercase().eq(w.to_lowercase()) && (got.mods.shift || g.is_uppercase())
            } else {
                g == w && !got.mods.shift
                    || (g.to_ascii_lowercase() == w && got.mods.ctrl && !got.mods.shift)
            }
        }
        (g, w) => g == w && got.mods.shift == want.mods.shift,
    }
}

/// Legacy terminals send Alt+arrows as `ESC b`/`ESC f`/`ESC p`/`ESC n` (readline's word
/// motions), so without the Kitty protocol an Alt+letter also counts as that arrow.
fn legacy_alt_alias(got: &KeyEvent, want: &KeyEvent) -> bool {
    if kitty_protocol_active()
        || !got.mods.alt
        || got.mods.ctrl
        || got.mods.shift
        || got.mods.super_key
        || want.mods != Mods::ALT
    {
        return false;
    }
    matches!(
        (got.code, want.code),
        (KeyCode::Char('b'), KeyCode::Left)
            | (KeyCode::Char('f'), KeyCode::Right)
            | (KeyCode::Char('p'), KeyCode::Up)
            | (KeyCode::Char('n'), KeyCode::Down)
    )
}

/// Parses pi's key id spelling into the event it names (`None` for unknown names).
pub fn parse_key_id(id: &str) -> Option<KeyEvent> {
    let mut mods = Mods::NONE;
    let mut parts: Vec<&str> = id.split('+').collect();
    // "ctrl++" style ids: an empty last part after a '+' means the plus key.
    if id.ends_with("++") || id == "+" {
        parts.retain(|p| !p.is_empty());
        parts.push("+");
    }
    let key = parts.pop()?;
    for m in parts {
        match m.to_ascii_lowercase().as_str() {
            "ctrl" | "control" => mods.ctrl = true,
            "alt" | "meta" | "option" => mods.alt = true,
            "shift" => mods.shift = true,
            "super" | "cmd" | "win" => mods.super_key = true,
            _ => return None,
        }
    }
    let code = match key.to_ascii_lowercase().as_str() {
        "enter" | "return" => KeyCode::Enter,
        "tab" => KeyCode::Tab,
        "backspace" => KeyCode::Backspace,
        "delete" | "del" => KeyCode::Delete,
        "insert" => KeyCode::Insert,
        "escape" | "esc" => KeyCode::Escape,
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        "pageup" => KeyCode::PageUp,
        "pagedown" => KeyCode::PageDown,
        "space" => KeyCode::Char(' '),
        k if k.len() > 1 && k.starts_with('f') && k[1..].parse::<u8>().is_ok() => {
            KeyCode::F(k[1..].parse().ok()?)
        }
        _ => {
            let mut chars = key.chars();
            let c = chars.next()?;
            if chars.next().is_some() {
                return None;
            }
            KeyCode::Char(c.to_ascii_lowercase())
        }
    };
    Some(KeyEvent::new(code, mods))
}

/// Input as components receive it: a key, or a bracketed paste delivered whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputEvent {
    Key(KeyEvent),
    Paste(String),
}

impl InputEvent {
    pub fn key(&self) -> Option<&KeyEvent> {
        match self {
            InputEvent::Key(k) => Some(k),
            InputEvent::Paste(_) => None,
        }
    }

    /// Whether this is a key matching `id` (see [`KeyEvent::matches`]).
    pub fn is(&self, id: &str) -> bool {
        self.key().is_some_and(|k| k.matches(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctrl(c: char) -> KeyEvent {
        KeyEvent::new(
            KeyCode::Char(c),
            Mods {
                ctrl: true,
                ..Mods::NONE
            },
        )
    }

    #[test]
    fn key_ids_match_events() {
        assert!(ctrl('a').matches("ctrl+a"));
        assert!(!ctrl('a').matches("a"));
        assert!(KeyEvent::plain(KeyCode::Char('a')).matches("a"));
        assert!(KeyEvent::plain(KeyCode::Char('A')).matches("shift+a"));
        assert!(KeyEvent::new(
            KeyCode::Tab,
            Mods {
                shift: true,
                ..Mods::NONE
            }
        )
        .matches("shift+tab"));
        assert!(!KeyEvent::plain(KeyCode::Tab).matches("shift+tab"));
        assert!(KeyEvent::plain(KeyCode::PageUp).matches("pageUp"));
        assert!(ctrl('-').matches("ctrl+-"));
        assert!(KeyEvent::new(
            KeyCode::Enter,
            Mods {
                alt: true,
                ..Mods::NONE
            }
        )
        .matches("alt+enter"));
        assert!(KeyEvent::new(
            KeyCode::Char('p'),
            Mods {
                ctrl: true,
                shift: true,
                ..Mods::NONE
            }
        )
        .matches("ctrl+shift+p"));
        assert!(!ctrl('p').matches("ctrl+shift+p"));
        let mut released = ctrl('a');
        released.kind = KeyKind::Release;
        assert!(!released.matches("ctrl+a"));
        assert_eq!(parse_key_id("hyper+x"), None);
        assert_eq!(parse_key_id("f5"), Some(KeyEvent::plain(KeyCode::F(5))));
    }
}
