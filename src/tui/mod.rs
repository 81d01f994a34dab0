//! A small terminal UI library: components render themselves to styled lines, and a
//! renderer diffs each frame against the last and writes only what changed, wrapped in
//! synchronized output so the screen never flickers.
//!
//! It knows nothing about LLMs or agents (those live in `modes/`). This file only declares
//! and re-exports. The pieces: `component` is what every widget implements; `text` measures
//! and cuts styled text by columns; `stdin_buffer` (framing) and `key_decode` turn raw
//! terminal bytes into the `keys` events, and `keybindings` maps those to named actions
//! (loaded from `keybindings.json`); `terminal` owns the tty (raw mode, input thread,
//! protocols); `renderer` diffs frames into bytes; `overlay` positions and composites
//! overlays; `tui` ties them together with focus and render throttling; `theme` holds pi's
//! named colours. `components` holds the widgets (Editor, Input, Markdown, Text,
//! Box, Loader, Image, SelectList, SettingsList), built on `kill_ring`, `undo`,
//! `autocomplete` and `fuzzy`. For a UI that owns its viewport (alternate screen): `mouse`
//! (SGR reports), `scroll` (the window over the content), `search` (find in rendered lines)
//! and `selection` (mouse selection, its text and highlight).

pub mod autocomplete;
pub mod component;
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

pub use component::{next_revision, Component, CURSOR_MARKER, LINE_RESET};
pub use container::{Container, StaticLines};
pub use keys::{InputEvent, KeyCode, KeyEvent, KeyKind, Mods};
pub use overlay::{Anchor, Extent, Margin, OverlayOptions};
pub use renderer::Renderer;
pub use terminal::{ProcessTerminal, Terminal, TerminalEvent};
pub use tui::{AnyComponent, Focus, OverlayId, Tui, MIN_RENDER_INTERVAL};
