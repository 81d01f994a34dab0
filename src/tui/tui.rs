//! [`Tui`], the manager: owns the terminal, the renderer and the overlay stack, routes input
//! to whoever has focus, and paces frames.
//!
//! The application owns its root component (transcript, editor, footer) and mutates it
//! freely between frames; it hands it in by `&mut` when a frame is due. Overlays are owned
//! here, boxed, and read back with [`Tui::overlay_mut`] or taken back whole when closed.
//!
//! A UI loop drives it like this (one thread, no async):
//!
//! ```ignore
//! let events = terminal.events();            // ProcessTerminal: input bytes + resizes
//! let mut tui = Tui::new(terminal);
//! tui.start()?;
//! loop {
//!     let timeout = tui.next_deadline().map(|d| d.saturating_duration_since(Instant::now()));
//!     crossbeam_channel::select! {
//!         recv(events) -> ev => match ev? {
//!             TerminalEvent::Input(bytes) => for input in parser.feed(&bytes) {
//!                 tui.handle_input(&input, app.focused_component());
//!             },
//!             TerminalEvent::Resize => tui.request_render(),
//!         },
//!         recv(agent_events) -> ev => { app.apply(ev?); tui.request_render(); }
//!         default(timeout.unwrap_or(IDLE)) => {}
//!     }
//!     tui.tick(Instant::now(), &mut app.root)?;  // renders at most every 16 ms
//! }
//! ```

use std::any::Any;
use std::io;
use std::time::{Duration, Instant};

use super::overlay::{self, OverlayOptions, Placed};
use super::renderer::{Renderer, SYNC_BEGIN, SYNC_END};
use super::terminal::{
    note_alt_screen, Terminal, AUTOWRAP_OFF, AUTOWRAP_ON, ENTER_ALT_SCREEN, EXIT_ALT_SCREEN,
};
use super::{Component, InputEvent, KeyKind, CURSOR_MARKER};
use crate::util::{reuse, sort};

/// Frames are at least this far apart (about 60 per second).
pub const MIN_RENDER_INTERVAL: Duration = Duration::from_millis(16);

/// A component that can be downcast, so the app can read results from its overlays.
pub trait AnyComponent: Component + Any {
    fn as_any_mut(&mut self) -> &mut dyn Any;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

impl<C: Component + Any> AnyComponent for C {
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OverlayId(u64);

/// Who receives keyboard input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// The app's focused component (usually the editor), passed to `handle_input`.
    Base,
    Overlay(OverlayId),
}

struct Overlay {
    id: OverlayId,
    component: Box<dyn AnyComponent>,
    options: OverlayOptions,
    /// Focus to return to when this overlay lets go.
    pre_focus: Focus,
    hidden: bool,
    /// Stacking order; higher draws on top.
    order: u64,
}

pub struct Tui<T: Terminal> {
    terminal: T,
    renderer: Renderer,
    overlays: Vec<Overlay>,
    focus: Focus,
    next_id: u64,
    order: u64,
    render_requested: bool,
    last_render: Option<Instant>,
    /// Address of the root drawn last, so a lent frame's change hint is trusted only for it.
    last_root: Option<usize>,
    /// First row drawn as a screen row in the previous frame.
    previous_screen_top: usize,
    /// On the alternate screen: the mouse-tracking sequence that was turned on ("" for none).
    alt_screen: Option<&'static str>,
    /// The rows on screen as composed for the last frame, refilled in place each frame.
    screen: Vec<String>,
}

impl<T: Terminal> Tui<T> {
    pub fn new(terminal: T) -> Self {
        Tui {
            terminal,
            renderer: Renderer::new(),
            overlays: Vec::new(),
            focus: Focus::Base,
            next_id: 0,
            order: 0,
            render_requested: true,
            last_render: None,
            last_root: None,
            previous_screen_top: 0,
            alt_screen: None,
            screen: Vec::new(),
        }
    }

    pub fn terminal(&self) -> &T {
        &self.terminal
    }

    pub fn terminal_mut(&mut self) -> &mut T {
        &mut self.terminal
    }

    pub fn renderer(&self) -> &Renderer {
        &self.renderer
    }

    pub fn renderer_mut(&mut self) -> &mut Renderer {
        &mut self.renderer
    }

    /// Enters raw mode and schedules the first frame.
    pub fn start(&mut self) -> io::Result<()> {
        self.terminal.start()?;
        self.terminal.hide_cursor();
        self.terminal.flush()?;
        self.request_render();
        Ok(())
    }

    /// Leaves the cursor below the content and restores the terminal.
    pub fn stop(&mut self) -> io::Result<()> {
        if self.alt_screen.is_some() {
            self.leave_alt_screen(&[])?;
        }
        let out = self.renderer.finish();
        self.terminal.write(&out);
        self.terminal.flush()?;
        self.terminal.stop()
    }

    /// Ctrl+Z: hands the terminal back to the shell until resumed, then repaints fully.
    pub fn suspend(&mut self) -> io::Result<()> {
        let alt = self.alt_screen;
        if alt.is_some() {
            self.leave_alt_screen(&[])?;
        }
        let out = self.renderer.finish();
        self.terminal.write(&out);
        self.terminal.flush()?;
        self.terminal.suspend()?;
        if let Some(mouse) = alt {
            self.enter_alt_screen(mouse);
        }
        self.request_full_render();
        Ok(())
    }

    /// Switches to the alternate screen with autowrap off and `mouse` (tracking modes to turn
    /// on, or "") for an application-owned viewport; frames should then be exactly as tall as
    /// the terminal.
    pub fn enter_alt_screen(&mut self, mouse: &'static str) {
        self.terminal.write(&format!(
            "{ENTER_ALT_SCREEN}{AUTOWRAP_OFF}{mouse}\x1b[2J\x1b[H"
        ));
        self.terminal.hide_cursor();
        self.alt_screen = Some(mouse);
        note_alt_screen(true);
        self.renderer.reset();
        self.renderer.set_alt_screen(true);
        self.request_full_render();
    }

    /// Back to the normal screen, then `trailing` printed there (what the session showed, so
    /// it stays in the scrollback). Later frames start afresh below it.
    pub fn leave_alt_screen(&mut self, trailing: &[String]) -> io::Result<()> {
        let Some(mouse) = self.alt_screen.take() else {
            return Ok(());
        };
        let mut out = String::from(SYNC_BEGIN);
        if !mouse.is_empty() {
            out.push_str(super::mouse::DISABLE);
        }
        out.push_str(EXIT_ALT_SCREEN);
        // Autowrap stays off while the rows are printed, so a full-width row does not wrap.
        for line in trailing {
            out.push_str("\r\x1b[2K");
            out.push_str(&line.replace(CURSOR_MARKER, ""));
            out.push_str(crate::tui::LINE_RESET);
            out.push_str("\r\n");
        }
        out.push_str(AUTOWRAP_ON);
        out.push_str(SYNC_END);
        self.terminal.write(&out);
        self.terminal.flush()?;
        note_alt_screen(false);
        self.renderer.reset();
        self.renderer.set_alt_screen(false);
        self.request_full_render();
        Ok(())
    }

    pub fn on_alt_screen(&self) -> bool {
        self.alt_screen.is_some()
    }

    // ---- rendering ----

    /// Asks for a frame; requests before it is drawn coalesce into one.
    pub fn request_render(&mut self) {
        self.render_requested = true;
    }

    /// Asks for a frame that clears screen and scrollback and paints everything.
    pub fn request_full_render(&mut self) {
        self.renderer.invalidate();
        self.render_requested = true;
    }

    /// When the loop should wake next: the next allowed frame if one is wanted, or a
    /// terminal timer (the Kitty fallback).
    pub fn next_deadline(&self) -> Option<Instant> {
        let frame = self.render_requested.then(|| {
            self.last_render
                .map_or_else(Instant::now, |t| t + MIN_RENDER_INTERVAL)
        });
        match (frame, self.terminal.next_timer()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Runs terminal timers and draws a frame if one is wanted and allowed at `now`.
    /// Returns whether a frame was drawn.
    pub fn tick(&mut self, now: Instant, root: &mut dyn Component) -> io::Result<bool> {
        self.terminal.tick(now);
        self.render_if_due(now, root)
    }

    /// Draws a frame if one was requested and the last was at least
    /// [`MIN_RENDER_INTERVAL`] ago.
    pub fn render_if_due(&mut self, now: Instant, root: &mut dyn Component) -> io::Result<bool> {
        let due = self
            .last_render
            .is_none_or(|t| now.saturating_duration_since(t) >= MIN_RENDER_INTERVAL);
        if !self.render_requested || !due {
            return Ok(false);
        }
        self.last_render = Some(now);
        self.render(root)?;
        Ok(true)
    }

    /// Draws a frame now: the root, then visible overlays on top.
    ///
    /// Only the rows on screen are copied to draw overlays and find the cursor; a root that
    /// keeps its lines ([`Component::render_borrowed`], e.g. a [`Container`]) lends the rest
    /// and says where it changed, so a long transcript is neither copied nor compared.
    ///
    /// [`Container`]: super::Container
    pub fn render(&mut self, root: &mut dyn Component) -> io::Result<()> {
        self.render_requested = false;
        let (cols, rows) = self.terminal.size();
        let focus = self.effective_focus(cols, rows);
        let root_id = (root as *const dyn Component).cast::<()>() as usize;
        let same_root = self.last_root == Some(root_id);
        self.last_root = Some(root_id);
        let owned: Vec<String>;
        let (lines, root_unchanged): (&[String], usize) = match root.render_borrowed(cols) {
            Some((lines, since)) if same_root => (lines, since),
            Some((lines, _)) => (lines, 0),
            None => {
                owned = root.render(cols);
                (&owned, 0)
            }
        };
        let top = lines.len().saturating_sub(rows);
        let screen = &mut self.screen;
        reuse::assign(screen, &lines[top..]);
        if focus != Focus::Base {
            strip_markers(screen);
        }
        let mut visible: Vec<&mut Overlay> = self
            .overlays
            .iter_mut()
            .filter(|o| !o.hidden && o.options.is_visible(cols, rows))
            .collect();
        // Every frame: overlays are usually stacked in the order they were shown already.
        if !visible.is_sorted_by_key(|o| o.order) {
            sort::sort_by_key(&mut visible, |o| o.order);
        }
        let placed: Vec<Placed> = visible
            .into_iter()
            .map(|o| {
                let focused = focus == Focus::Overlay(o.id);
                let component = &mut o.component;
                overlay::place(
                    &o.options,
                    |width| {
                        let mut lines = component.render(width);
                        if !focused {
                            strip_markers(&mut lines);
                        }
                        lines
                    },
                    cols,
                    rows,
                )
            })
            .collect();
        overlay::composite(screen, &placed, cols, rows);
        let overlays_active = !self.overlays.is_empty();
        // Rows drawn as screen rows last time (overlays, stripped markers) may differ from
        // the root's own lines even where the root did not change.
        let unchanged = root_unchanged.min(top).min(self.previous_screen_top);
        self.previous_screen_top = top;
        self.renderer.render_parts(
            &mut self.terminal,
            &lines[..top],
            screen,
            unchanged,
            overlays_active,
        )
    }

    // ---- input ----

    /// Who input goes to now.
    pub fn focus(&self) -> Focus {
        self.focus
    }

    /// Delivers `event` to the focused overlay, or to `base` when no overlay has focus, and
    /// asks for a frame. Key releases reach only components that want them. Returns the
    /// target that got the event (or would have, for a filtered release).
    pub fn handle_input(&mut self, event: &InputEvent, base: &mut dyn Component) -> Focus {
        let (cols, rows) = self.terminal.size();
        let focus = self.effective_focus(cols, rows);
        self.focus = focus;
        let target: &mut dyn Component = match focus {
            Focus::Base => base,
            Focus::Overlay(id) => match self.overlays.iter_mut().find(|o| o.id == id) {
                Some(o) => o.component.as_mut(),
                None => base,
            },
        };
        let release = matches!(event, InputEvent::Key(k) if k.kind == KeyKind::Release);
        if release && !target.wants_key_release() {
            return focus;
        }
        target.handle_input(event);
        self.request_render();
        focus
    }

    // ---- overlays ----

    /// Shows `component` over the frame; it takes focus unless `non_capturing` (or not
    /// visible at this size).
    pub fn show_overlay(
        &mut self,
        component: impl Component + 'static,
        options: OverlayOptions,
    ) -> OverlayId {
        self.next_id += 1;
        self.order += 1;
        let id = OverlayId(self.next_id);
        let (cols, rows) = self.terminal.size();
        let takes_focus = !options.non_capturing && options.is_visible(cols, rows);
        self.overlays.push(Overlay {
            id,
            component: Box::new(component),
            options,
            pre_focus: self.focus,
            hidden: false,
            order: self.order,
        });
        if takes_focus {
            self.focus = Focus::Overlay(id);
        }
        self.request_render();
        id
    }

    /// Removes an overlay for good and returns its component (downcast with
    /// `into_any().downcast::<C>()`). Focus goes back where it was before the overlay took
    /// it, or to the topmost overlay still showing.
    pub fn close_overlay(&mut self, id: OverlayId) -> Option<Box<dyn AnyComponent>> {
        let index = self.overlays.iter().position(|o| o.id == id)?;
        let closed = self.overlays.remove(index);
        // Whoever would have returned focus to the closed overlay returns it further back.
        for o in &mut self.overlays {
            if o.pre_focus == Focus::Overlay(id) {
                o.pre_focus = closed.pre_focus;
            }
        }
        if self.focus == Focus::Overlay(id) {
            self.focus = self.fallback_focus(closed.pre_focus, None);
        }
        self.request_render();
        Some(closed.component)
    }

    /// Closes the most recently shown overlay.
    pub fn pop_overlay(&mut self) -> Option<Box<dyn AnyComponent>> {
        let id = self.overlays.last()?.id;
        self.close_overlay(id)
    }

    /// Hides an overlay for now (it keeps its state) or shows it again, on top and focused.
    pub fn set_overlay_hidden(&mut self, id: OverlayId, hidden: bool) {
        let (cols, rows) = self.terminal.size();
        let Some(o) = self.overlays.iter_mut().find(|o| o.id == id) else {
            return;
        };
        if o.hidden == hidden {
            return;
        }
        o.hidden = hidden;
        if hidden {
            let pre = o.pre_focus;
            if self.focus == Focus::Overlay(id) {
                self.focus = self.fallback_focus(pre, Some(id));
            }
        } else if !o.options.non_capturing && o.options.is_visible(cols, rows) {
            self.order += 1;
            o.order = self.order;
            self.focus = Focus::Overlay(id);
        }
        self.request_render();
    }

    /// Gives an overlay focus and brings it to the front.
    pub fn focus_overlay(&mut self, id: OverlayId) {
        let (cols, rows) = self.terminal.size();
        self.order += 1;
        let order = self.order;
        let Some(o) = self.overlays.iter_mut().find(|o| o.id == id) else {
            return;
        };
        if o.hidden || !o.options.is_visible(cols, rows) {
            return;
        }
        o.order = order;
        self.focus = Focus::Overlay(id);
        self.request_render();
    }

    /// Lets go of focus held by an overlay, back to the one it came from.
    pub fn unfocus_overlay(&mut self, id: OverlayId) {
        if self.focus != Focus::Overlay(id) {
            return;
        }
        let pre = self
            .overlays
            .iter()
            .find(|o| o.id == id)
            .map_or(Focus::Base, |o| o.pre_focus);
        self.focus = self.fallback_focus(pre, Some(id));
        self.request_render();
    }

    pub fn is_overlay_focused(&self, id: OverlayId) -> bool {
        self.focus == Focus::Overlay(id)
    }

    pub fn is_overlay_hidden(&self, id: OverlayId) -> Option<bool> {
        self.overlays.iter().find(|o| o.id == id).map(|o| o.hidden)
    }

    /// Whether any overlay is showing.
    pub fn has_overlay(&self) -> bool {
        let (cols, rows) = self.terminal.size();
        self.overlays
            .iter()
            .any(|o| !o.hidden && o.options.is_visible(cols, rows))
    }

    /// The overlay's component, if it is a `C`.
    pub fn overlay_mut<C: Component + 'static>(&mut self, id: OverlayId) -> Option<&mut C> {
        let o = self.overlays.iter_mut().find(|o| o.id == id)?;
        o.component.as_any_mut().downcast_mut::<C>()
    }

    /// Drops cached output everywhere (theme change): overlays here, the root by the app.
    pub fn invalidate_overlays(&mut self) {
        for o in &mut self.overlays {
            o.component.invalidate();
        }
        self.request_render();
    }

    fn showing(&self, id: OverlayId, cols: usize, rows: usize) -> bool {
        self.overlays
            .iter()
            .any(|o| o.id == id && !o.hidden && o.options.is_visible(cols, rows))
    }

    /// The topmost showing capturing overlay other than `except`.
    fn topmost(&self, except: Option<OverlayId>, cols: usize, rows: usize) -> Option<OverlayId> {
        self.overlays
            .iter()
            .filter(|o| Some(o.id) != except && !o.options.non_capturing)
            .filter(|o| !o.hidden && o.options.is_visible(cols, rows))
            .max_by_key(|o| o.order)
            .map(|o| o.id)
    }

    /// Where focus goes when its holder lets go: the topmost showing overlay, else
    /// `preferred` if it can still take focus, else the base.
    fn fallback_focus(&self, preferred: Focus, except: Option<OverlayId>) -> Focus {
        let (cols, rows) = self.terminal.size();
        if let Some(top) = self.topmost(except, cols, rows) {
            return Focus::Overlay(top);
        }
        match preferred {
            Focus::Overlay(id) if Some(id) != except && self.showing(id, cols, rows) => preferred,
            Focus::Overlay(_) | Focus::Base => Focus::Base,
        }
    }

    /// The current focus, moved on if its overlay stopped showing (hidden, or not visible
    /// at this terminal size).
    fn effective_focus(&self, cols: usize, rows: usize) -> Focus {
        match self.focus {
            Focus::Overlay(id) if !self.showing(id, cols, rows) => {
                let pre = self
                    .overlays
                    .iter()
                    .find(|o| o.id == id)
                    .map_or(Focus::Base, |o| o.pre_focus);
                self.fallback_focus(pre, Some(id))
            }
            focus => focus,
        }
    }
}

fn strip_markers(lines: &mut [String]) {
    for line in lines {
        if line.contains(CURSOR_MARKER) {
            *line = line.replace(CURSOR_MARKER, "");
        }
    }
}

#[cfg(test)]
mod screen_tests;
#[cfg(test)]
mod tests;
