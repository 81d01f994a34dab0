//! What every widget is: the [`Component`] trait (draw at a width, take input, say when its
//! output may have changed), the revision stamps it uses, and the two escape sequences a
//! rendered line may carry for the renderer (the cursor marker, the line reset).

use super::keys::InputEvent;

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
/// with [`visible_width`](super::text::visible_width)); the renderer treats a wider line as a
/// bug. Components may cache their output and should recompute after
/// [`Component::invalidate`].
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
    /// new, taken from [`next_revision`] so it is unique across components. A
    /// [`Container`](super::Container) skips rendering children whose stamp did not move. `None` (the default) means
    /// "unknown": the component is rendered every frame.
    fn revision(&self) -> Option<u64> {
        None
    }

    /// For components that keep their rendered lines (like [`Container`](super::Container)):
    /// the lines at `width`, borrowed, and the first row that may differ from what the
    /// previous call returned (rows before it are unchanged). Lets [`Tui`](super::Tui) draw a
    /// long transcript without copying or comparing all of it. `None` (the default): use `render`.
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
