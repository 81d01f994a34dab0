//! Mouse reports in the SGR encoding (`ESC [ < b ; x ; y M|m`), which terminals send once
//! mouse tracking is on (only the fullscreen mode turns it on; regular mode leaves the mouse to
//! the terminal). [`parse_sgr`] turns one framed sequence into a [`MouseEvent`] with 0-based
//! cells; the enable/disable sequences pi uses live here too.

/// Button presses, drags (1002) and SGR encoding (1006), plus focus reports (1004). Used under
/// multiplexers, which lag when every pointer movement is forwarded.
pub const ENABLE_BUTTON_MOTION: &str = "\x1b[?1000h\x1b[?1002h\x1b[?1004h\x1b[?1006h";
/// As [`ENABLE_BUTTON_MOTION`], plus motion without a button (1003), for hover.
pub const ENABLE_ALL_MOTION: &str = "\x1b[?1000h\x1b[?1002h\x1b[?1003h\x1b[?1004h\x1b[?1006h";
pub const DISABLE: &str = "\x1b[?1006l\x1b[?1004l\x1b[?1003l\x1b[?1002l\x1b[?1000l";
/// Focus reports (mode 1004).
pub const FOCUS_IN: &str = "\x1b[I";
pub const FOCUS_OUT: &str = "\x1b[O";

/// The enable sequence for the terminal we run in: button motion only under tmux, screen or
/// zellij, as pi does.
pub fn enable_sequence() -> &'static str {
    let term = std::env::var("TERM").unwrap_or_default().to_lowercase();
    let multiplexed = ["TMUX", "ZELLIJ", "STY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
        || term.starts_with("tmux")
        || term.starts_with("screen");
    if multiplexed {
        ENABLE_BUTTON_MOTION
    } else {
        ENABLE_ALL_MOTION
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MouseButton {
    Left,
    Middle,
    Right,
    /// Motion with no button held.
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MouseKind {
    Press(MouseButton),
    /// Motion, with the button held (or `None`).
    Drag(MouseButton),
    Release,
    /// One wheel notch: negative is up (towards older content).
    Wheel(i8),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MouseEvent {
    pub kind: MouseKind,
    /// 0-based column and row.
    pub x: usize,
    pub y: usize,
    pub shift: bool,
    pub alt: bool,
    pub ctrl: bool,
}

/// Parses one SGR mouse report; `None` for anything else.
pub fn parse_sgr(seq: &str) -> Option<MouseEvent> {
    let body = seq.strip_prefix("\x1b[<")?;
    let (body, release) = match body.as_bytes().last()? {
        b'M' => (&body[..body.len() - 1], false),
        b'm' => (&body[..body.len() - 1], true),
        _ => return None,
    };
    let mut parts = body.split(';').map(|p| p.parse::<usize>().ok());
    let (code, x, y) = (parts.next()??, parts.next()??, parts.next()??);
    if parts.next().is_some() {
        return None;
    }
    let button = match code & 3 {
        0 => MouseButton::Left,
        1 => MouseButton::Middle,
        2 => MouseButton::Right,
        _ => MouseButton::None,
    };
    let kind = if code & 64 != 0 {
        match code & 3 {
            0 => MouseKind::Wheel(-1),
            1 => MouseKind::Wheel(1),
            // Horizontal wheels: nothing scrolls sideways.
            _ => return None,
        }
    } else if release {
        MouseKind::Release
    } else if code & 32 != 0 {
        MouseKind::Drag(button)
    } else {
        MouseKind::Press(button)
    };
    Some(MouseEvent {
        kind,
        x: x.saturating_sub(1),
        y: y.saturating_sub(1),
        shift: code & 4 != 0,
        alt: code & 8 != 0,
        ctrl: code & 16 != 0,
    })
}

/// Whether `seq` is any mouse report (SGR or the old X10 form), to be swallowed.
pub fn is_mouse_sequence(seq: &str) -> bool {
    parse_sgr(seq).is_some()
        || seq.starts_with("\x1b[<")
        || (seq.len() == 6 && seq.starts_with("\x1b[M"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presses_drags_releases_and_wheels_are_decoded_with_zero_based_cells() {
        let press = parse_sgr("\x1b[<0;5;3M").unwrap();
        assert_eq!(press.kind, MouseKind::Press(MouseButton::Left));
        assert_eq!((press.x, press.y), (4, 2));
        assert_eq!(
            parse_sgr("\x1b[<32;6;3M").unwrap().kind,
            MouseKind::Drag(MouseButton::Left)
        );
        assert_eq!(parse_sgr("\x1b[<0;6;3m").unwrap().kind, MouseKind::Release);
        assert_eq!(
            parse_sgr("\x1b[<64;1;1M").unwrap().kind,
            MouseKind::Wheel(-1)
        );
        let down_alt = parse_sgr("\x1b[<73;1;1M").unwrap();
        assert_eq!(down_alt.kind, MouseKind::Wheel(1));
        assert!(down_alt.alt);
        assert_eq!(parse_sgr("\x1b[<66;1;1M"), None);
        assert_eq!(parse_sgr("\x1b[A"), None);
        assert_eq!(parse_sgr("\x1b[<0;1M"), None);
        assert!(is_mouse_sequence("\x1b[M !!"));
    }
}
