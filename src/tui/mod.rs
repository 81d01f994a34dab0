//! A small terminal UI library: components render themselves to styled lines, and a
//! renderer diffs each frame against the last and writes only what changed, wrapped in
//! synchronized output so the screen never flickers.
//!
//! It knows nothing about LLMs or agents (those live in `modes/`). The pieces:
//! `text` measures and cuts styled text by columns; `stdin_buffer` (framing) and
//! `key_decode` turn raw terminal bytes into the `keys` events, and `keybindings` maps those
//! to named actions (loaded from `keybindings.json`); `terminal` owns the tty (raw mode,
//! input thread, protocols); `renderer` diffs frames into bytes; `overlay` positions and
//! composites overlays; `tui` ties them together with focus and render throttling; `theme`
//! holds pi's named colours. `components` holds the widgets (Editor, Input, Markdown, Text,
//! Box, Loader, Image, SelectList, SettingsList), built on `kill_ring`, `undo`,
//! `autocomplete` and `fuzzy`. For a UI that owns its viewport (alternate screen): `mouse`
//! (SGR reports), `scroll` (the window over the content), `search` (find in rendered lines)
//! and `selection` (mouse selection, its text and highlight).

pub mod autocomplete;
pub mod components;
pub mod container;
pub mod fuzzy;
pub mod key_decode;
pub mod keybindings;
pub mod keys;
pub mod kill_ring;
pub mod mouse;
pub mod oklab;
pub mod overlay;
pub mod renderer;
pub mod scroll;
pub mod search;
pub mod selection;
pub mod stdin_buffer;
pub mod terminal;
pub mod text;
pub mod theme;
// The manager keeps the file name the design gives it.
#[allow(clippy::module_inception)]
pub mod tui;
pub mod undo;
#[cfg(test)]
pub mod virtual_terminal;

pub use container::{Container, StaticLines};
pub use keys::{InputEvent, KeyCode, KeyEvent, KeyKind, Mods};
pub use overlay::{Anchor, Extent, Margin, OverlayOptions};
pub use renderer::Renderer;
pub use terminal::{ProcessTerminal, Terminal, TerminalEvent};
pub use tui::{AnyComponent, Focus, OverlayId, Tui, MIN_RENDER_INTERVAL};

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

    /// A stamp that changes whenever `render` at an unchanged width might return something
    /// new, taken from [`next_revision`] so it is unique across components. A [`Container`]
    /// skips rendering children whose stamp did not move. `None` (the default) means
    /// "unknown": the component is rendered every frame.
    fn revision(&self) -> Option<u64> {
        None
    }

    /// For components that keep their rendered lines (like [`Container`]): the lines at
    /// `width`, borrowed, and the first row that may differ from what the previous call
    /// returned (rows before it are unchanged). Lets [`Tui`] draw a long transcript without
    /// copying or comparing all of it. `None` (the default): use `render`.
    fn render_borrowed(&mut self, _width: usize) -> Option<(&[String], usize)> {
        None
    }
}

/// A fresh, process-wide unique stamp for [`Component::revision`].
pub fn next_revision() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
