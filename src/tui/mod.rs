//! A small terminal UI library: components render themselves to styled lines, and a
//! renderer diffs each frame against the last and writes only what changed, wrapped in
//! synchronized output so the screen never flickers.
//!
//! It knows nothing about LLMs or agents (those live in `modes/`). The pieces:
//! `text` measures and cuts styled text by columns; `keys` turns terminal bytes into key
//! events and `keybindings` maps them to named actions; `theme` holds pi's named colours and
//! `components` the widgets (Markdown, Text, Box, Loader, Image, SelectList, SettingsList).

pub mod components;
pub mod keybindings;
pub mod keys;
pub mod text;
pub mod theme;

pub use keys::{InputEvent, KeyCode, KeyEvent, KeyKind, Mods};

/// Zero-width marker a focused component emits where the hardware cursor belongs (an APC
/// sequence terminals ignore). The renderer strips it and moves the real cursor there, so
/// IME candidate windows appear at the right place.
pub const CURSOR_MARKER: &str = "\x1b_pi:c\x07";

/// What a line ends with on screen: an SGR reset and a closed OSC 8 link, so no style or
/// hyperlink bleeds into the next line.
pub const LINE_RESET: &str = "\x1b[0m\x1b]8;;\x07";

/// Anything that can draw itself.
///
/// `render` returns one string per screen row, each at most `width` columns wide (measured
/// with [`text::visible_width`]); the renderer treats a wider line as a bug. Components
/// may cache their output and should recompute after [`Component::invalidate`].
pub trait Component {
    fn render(&mut self, width: usize) -> Vec<String>;

    /// Handles input while focused; returns whether it was consumed.
    fn handle_input(&mut self, _event: &InputEvent) -> bool {
        false
    }

    /// Whether key-release events (Kitty protocol) should be delivered.
    fn wants_key_release(&self) -> bool {
        false
    }

    /// Drops cached output (theme change, resize).
    fn invalidate(&mut self) {}
}
