//! Terminal input (`tui::stdin_buffer` framing + `tui::key_decode`): the events are the same
//! however the reads split the bytes (a split is only ever resolved by more bytes or by the
//! Escape timeout, which here comes once, at the end), and plain text reads as one key per
//! character.
//!
//! Input: two bytes of chunking seed, a flags byte (bit 0: the Kitty protocol is on), then
//! the bytes the terminal sent.

use pi::tui::stdin_buffer::{ParsedInput, StdinBuffer};
use pi::tui::{InputEvent, KeyCode, Mods};

use super::input::{chunkings, describe, Input};

pub fn run(data: &[u8]) {
    let mut input = Input::new(data);
    let seed = u64::from(input.u16());
    let kitty = input.bool();
    let bytes = input.rest();

    let read = |chunks: &[std::ops::Range<usize>]| {
        let mut buffer = StdinBuffer::new();
        buffer.set_kitty_active(kitty);
        let mut events = Vec::new();
        for r in chunks {
            events.extend(buffer.feed(&bytes[r.clone()]));
        }
        events.extend(buffer.flush_timeout());
        assert!(!buffer.has_pending(), "the timeout resolves everything");
        events
    };
    let whole = read(&[0..bytes.len()]);
    for chunks in chunkings(seed, bytes.len()) {
        assert_eq!(read(&chunks), whole, "{}", describe(&chunks));
    }

    if let Ok(text) = std::str::from_utf8(bytes) {
        if !kitty && text.chars().all(|c| !c.is_control()) {
            let keys: Vec<ParsedInput> = text
                .chars()
                .map(|c| {
                    let key = pi::tui::KeyEvent::new(KeyCode::Char(c), Mods::NONE);
                    ParsedInput::Event(InputEvent::Key(key))
                })
                .collect();
            assert_eq!(whole, keys, "plain text is one key per character");
        }
    }
}
