//! [`InputState`]: what stands between the terminal's bytes and the app's keys — the
//! [`StdinBuffer`] that parses them (holding a lone Escape back until it can tell it from a
//! sequence) and when the keys that act on a second press (Ctrl+C, Escape) were last pressed.

use std::time::{Duration, Instant};

use crate::tui::stdin_buffer::{ParsedInput, StdinBuffer, ESCAPE_TIMEOUT};

/// A second Ctrl+C within this time exits; a second Escape on an empty editor opens the
/// tree (pi's `doubleEscapeAction`).
const DOUBLE_PRESS: Duration = Duration::from_millis(500);

pub(super) struct InputState {
    parser: StdinBuffer,
    /// Since when input is held back (a lone Escape, an unfinished sequence).
    pending_since: Option<Instant>,
    /// When `app.clear` (Ctrl+C) was last pressed.
    clear: Option<Instant>,
    /// When Escape was last pressed on an empty editor.
    escape: Option<Instant>,
}

impl InputState {
    pub fn new() -> InputState {
        InputState {
            parser: StdinBuffer::new(),
            pending_since: None,
            clear: None,
            escape: None,
        }
    }

    /// Parses what the terminal sent; an unfinished tail waits for more or for its timeout.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<ParsedInput> {
        let parsed = self.parser.feed(bytes);
        self.pending_since = self.parser.has_pending().then(Instant::now);
        parsed
    }

    /// Whether input is held back until the parser can tell a lone Escape from a sequence.
    pub fn pending(&self) -> bool {
        self.pending_since.is_some()
    }

    /// When what is held back must be let through.
    pub fn deadline(&self) -> Option<Instant> {
        self.pending_since.map(|since| since + ESCAPE_TIMEOUT)
    }

    /// What was held back, once its time is up at `now`.
    pub fn flush_due(&mut self, now: Instant) -> Option<Vec<ParsedInput>> {
        if self.deadline().is_some_and(|due| now >= due) {
            self.pending_since = None;
            Some(self.parser.flush_timeout())
        } else {
            None
        }
    }

    /// The terminal answered the Kitty keyboard query: its key reports are parsed from now on.
    pub fn set_kitty_active(&mut self) {
        self.parser.set_kitty_active(true);
    }

    /// Ctrl+C pressed: true when it is the second within [`DOUBLE_PRESS`].
    pub fn second_clear(&mut self) -> bool {
        second_press(&mut self.clear, Instant::now())
    }

    /// Escape pressed on an empty editor: true when it is the second within [`DOUBLE_PRESS`].
    pub fn second_escape(&mut self) -> bool {
        second_press(&mut self.escape, Instant::now())
    }
}

/// Records a press at `now`; true when it is the second within [`DOUBLE_PRESS`] (and then
/// starts over, so a third press counts as a first).
fn second_press(last: &mut Option<Instant>, now: Instant) -> bool {
    if last.is_some_and(|t| now.duration_since(t) < DOUBLE_PRESS) {
        *last = None;
        true
    } else {
        *last = Some(now);
        false
    }
}
