//! Raw stdin bytes → input events, robust to reads that split sequences anywhere.
//!
//! The input thread owns one [`StdinBuffer`]: it calls [`StdinBuffer::feed`] with every
//! read and, when a read times out while [`StdinBuffer::has_pending`] is true, calls
//! [`StdinBuffer::flush_timeout`] — that is how a lone Escape key (which looks like the
//! start of a sequence) is told apart from a sequence still arriving:
//!
//! ```no_run
//! # use pi::tui::stdin_buffer::{StdinBuffer, ESCAPE_TIMEOUT};
//! let mut parser = StdinBuffer::new();
//! # let (bytes, timed_out) = (Vec::<u8>::new(), false);
//! // after each read (or after ESCAPE_TIMEOUT with nothing read):
//! let events = if timed_out { parser.flush_timeout() } else { parser.feed(&bytes) };
//! ```
//!
//! Framing follows the terminal grammar: CSI ends at a byte in 0x40–0x7E, OSC at BEL or
//! ST, DCS and APC at ST, SS3 after one byte, `ESC x` is Alt+x. A bracketed paste
//! (`CSI 200~ … CSI 201~`) becomes one [`InputEvent::Paste`] however many reads it spans.
//! `ESC ESC [` (WezTerm) is Escape followed by a sequence. What each framed sequence means
//! is decided in [`key_decode`](super::key_decode).

use std::time::Duration;

pub use super::key_decode::ParsedInput;
use super::key_decode::{decode, unmodified_kitty_printable};
use super::keys::{set_kitty_protocol_active, InputEvent};

const ESC: u8 = 0x1b;
const PASTE_START: &[u8] = b"\x1b[200~";
const PASTE_END: &[u8] = b"\x1b[201~";
/// An unterminated CSI longer than this is garbage, not a sequence still arriving.
const MAX_CSI: usize = 256;
/// Same for OSC/DCS/APC strings (terminal replies are short).
const MAX_STRING: usize = 1 << 20;

/// How long the input loop waits after a lone ESC (or another prefix) before calling
/// [`StdinBuffer::flush_timeout`].
pub const ESCAPE_TIMEOUT: Duration = Duration::from_millis(50);

impl ParsedInput {
    pub fn event(&self) -> Option<&InputEvent> {
        match self {
            ParsedInput::Event(e) => Some(e),
            _ => None,
        }
    }
}

/// Incremental parser from stdin bytes to [`ParsedInput`].
#[derive(Debug, Default)]
pub struct StdinBuffer {
    buf: Vec<u8>,
    /// Inside a bracketed paste: the content so far.
    paste: Option<Vec<u8>>,
    /// Codepoint of the last unmodified Kitty printable; a raw copy right after is dropped.
    pending_kitty_printable: Option<char>,
    kitty_active: bool,
}

enum Frame {
    Incomplete,
    Complete(usize),
}

impl StdinBuffer {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the Kitty keyboard protocol is on. It changes how `ESC CR` and a bare LF
    /// are read (Shift+Enter rather than Alt+Enter / Enter). Set automatically when the
    /// terminal answers the Kitty query; the terminal layer may also set it.
    pub fn set_kitty_active(&mut self, active: bool) {
        self.kitty_active = active;
        set_kitty_protocol_active(active);
    }

    pub fn kitty_active(&self) -> bool {
        self.kitty_active
    }

    /// Feeds one read; returns everything that became complete.
    pub fn feed(&mut self, data: &[u8]) -> Vec<ParsedInput> {
        let mut out = Vec::new();
        self.buf.extend_from_slice(data);
        self.drain(&mut out);
        out
    }

    /// Whether bytes are waiting that only more input or a timeout can resolve (a lone
    /// ESC, half a UTF-8 character, an unfinished sequence). A paste in progress does not
    /// count: it waits for its end marker however long that takes.
    pub fn has_pending(&self) -> bool {
        self.paste.is_none() && !self.buf.is_empty()
    }

    /// Called when [`ESCAPE_TIMEOUT`] passed with no input: what is pending is taken as
    /// typed (a lone ESC is the Escape key, `ESC [` is Alt+[).
    pub fn flush_timeout(&mut self) -> Vec<ParsedInput> {
        if self.paste.is_some() || self.buf.is_empty() {
            return Vec::new();
        }
        let pending = std::mem::take(&mut self.buf);
        self.pending_kitty_printable = None;
        let decoded = match pending.as_slice() {
            [ESC] | [ESC, _] => vec![decode(&pending, self.kitty_active)],
            [ESC, ..] => vec![ParsedInput::Other(
                String::from_utf8_lossy(&pending).into_owned(),
            )],
            // Half a UTF-8 character: each byte may be an 8-bit Meta key.
            bytes => bytes
                .iter()
                .map(|b| decode(&[*b], self.kitty_active))
                .collect(),
        };
        decoded
            .into_iter()
            .filter(|p| !matches!(p, ParsedInput::Other(s) if s.is_empty()))
            .collect()
    }

    /// Drops everything buffered (e.g. when the terminal stops).
    pub fn clear(&mut self) {
        self.buf.clear();
        self.paste = None;
        self.pending_kitty_printable = None;
    }

    fn drain(&mut self, out: &mut Vec<ParsedInput>) {
        let mut pos = 0;
        loop {
            if let Some(paste) = self.paste.as_mut() {
                let searched_from = paste.len().saturating_sub(PASTE_END.len() - 1);
                paste.extend_from_slice(&self.buf[pos..]);
                pos = self.buf.len();
                let Some(end) = find(&paste[searched_from..], PASTE_END).map(|i| i + searched_from)
                else {
                    break;
                };
                let rest = paste.split_off(end);
                let content = String::from_utf8_lossy(paste).into_owned();
                self.paste = None;
                self.pending_kitty_printable = None;
                out.push(ParsedInput::Event(InputEvent::Paste(content)));
                self.buf = rest[PASTE_END.len()..].to_vec();
                pos = 0;
                continue;
            }
            if pos >= self.buf.len() {
                break;
            }
            let len = match frame(&self.buf[pos..]) {
                Frame::Complete(n) => n,
                Frame::Incomplete => break,
            };
            let seq = self.buf[pos..pos + len].to_vec();
            pos += len;
            if seq == PASTE_START {
                self.paste = Some(Vec::new());
                self.pending_kitty_printable = None;
                continue;
            }
            self.emit(&seq, out);
        }
        self.buf.drain(..pos);
    }

    fn emit(&mut self, seq: &[u8], out: &mut Vec<ParsedInput>) {
        if let Some(expected) = self.pending_kitty_printable.take() {
            let raw = std::str::from_utf8(seq).ok().and_then(|s| {
                let mut chars = s.chars();
                chars.next().filter(|_| chars.next().is_none())
            });
            if raw == Some(expected) && seq[0] != ESC {
                return;
            }
        }
        self.pending_kitty_printable = unmodified_kitty_printable(seq);
        let parsed = decode(seq, self.kitty_active);
        if matches!(parsed, ParsedInput::KittyFlags(_)) {
            self.set_kitty_active(true);
        }
        out.push(parsed);
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Length of the sequence at the start of `b` (non-empty), if complete.
fn frame(b: &[u8]) -> Frame {
    if b[0] != ESC {
        return utf8_frame(b);
    }
    let Some(&second) = b.get(1) else {
        return Frame::Incomplete;
    };
    match second {
        // Two ESCs: the first is a key of its own (also WezTerm's `ESC ESC [`).
        ESC => Frame::Complete(1),
        b'[' => csi_frame(b),
        b']' | b'P' | b'_' => string_frame(b),
        b'O' => match b.get(2) {
            None => Frame::Incomplete,
            Some(c) if (0x20..0x7f).contains(c) => Frame::Complete(3),
            Some(_) => Frame::Complete(2),
        },
        _ => match utf8_frame(&b[1..]) {
            Frame::Complete(n) if b[1] < 0x80 || n > 1 => Frame::Complete(1 + n),
            // ESC then a byte that is not UTF-8: leave it for the next round.
            Frame::Complete(_) => Frame::Complete(1),
            Frame::Incomplete => Frame::Incomplete,
        },
    }
}

/// One UTF-8 character, or one invalid byte.
fn utf8_frame(b: &[u8]) -> Frame {
    let need = match b[0] {
        0x00..=0x7f => return Frame::Complete(1),
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return Frame::Complete(1),
    };
    let avail = b.len().min(need);
    if b[1..avail].iter().any(|c| !(0x80..=0xbf).contains(c)) {
        return Frame::Complete(1);
    }
    if avail < need {
        return Frame::Incomplete;
    }
    if std::str::from_utf8(&b[..need]).is_ok() {
        Frame::Complete(need)
    } else {
        Frame::Complete(1)
    }
}

fn csi_frame(b: &[u8]) -> Frame {
    match b.get(2) {
        None => return Frame::Incomplete,
        // The Linux console's `ESC [ [ A` and `ESC [ [ 5 ~`.
        Some(b'[') => {
            return match b.get(3) {
                None => Frame::Incomplete,
                Some(c) if c.is_ascii_digit() => match b.get(4) {
                    None => Frame::Incomplete,
                    Some(b'~') => Frame::Complete(5),
                    Some(_) => Frame::Complete(4),
                },
                Some(c) if (0x20..0x7f).contains(c) => Frame::Complete(4),
                Some(_) => Frame::Complete(3),
            }
        }
        // X10 mouse: ESC [ M and three raw bytes.
        Some(b'M') => {
            return if b.len() >= 6 {
                Frame::Complete(6)
            } else {
                Frame::Incomplete
            }
        }
        Some(_) => {}
    }
    // Only the first MAX_CSI + 1 bytes decide, so the framing never depends on how the
    // bytes were split into reads.
    for (i, &c) in b.iter().enumerate().take(MAX_CSI + 1).skip(2) {
        match c {
            0x40..=0x7e => return Frame::Complete(i + 1),
            // rxvt's Shift+Insert etc. end in '$' (normally an intermediate byte).
            b'$' if i > 2 && b[2..i].iter().all(u8::is_ascii_digit) => {
                return Frame::Complete(i + 1)
            }
            0x20..=0x3f => {}
            // A control byte or ESC cannot be inside a CSI: the sequence was cut short.
            _ => return Frame::Complete(i),
        }
    }
    if b.len() > MAX_CSI {
        Frame::Complete(MAX_CSI + 1)
    } else {
        Frame::Incomplete
    }
}

/// OSC, DCS, APC: end at BEL or ST (`ESC \`).
fn string_frame(b: &[u8]) -> Frame {
    let mut i = 2;
    // As for CSI: only the first MAX_STRING + 1 bytes decide.
    while i < b.len().min(MAX_STRING + 1) {
        match b[i] {
            0x07 => return Frame::Complete(i + 1),
            ESC => match b.get(i + 1) {
                None => return Frame::Incomplete,
                Some(b'\\') => return Frame::Complete(i + 2),
                // A new sequence started: the string was cut short.
                Some(_) => return Frame::Complete(i),
            },
            _ => i += 1,
        }
    }
    if b.len() > MAX_STRING {
        Frame::Complete(MAX_STRING + 1)
    } else {
        Frame::Incomplete
    }
}

#[cfg(test)]
#[path = "stdin_buffer_tests.rs"]
mod tests;
