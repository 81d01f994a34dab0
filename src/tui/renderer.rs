//! The differential renderer: turns each new frame (a `Vec<String>`, one per row) into the
//! fewest bytes that bring the screen from the previous frame to this one.
//!
//! Rows are tracked in *content* coordinates: row 0 is the first line ever painted, and
//! `viewport_top` is the content row shown on the terminal's top line. Only rows at or below
//! it can be reached with relative cursor moves, so a change above it, a width change (the
//! terminal re-wraps everything) or a height change (except on Termux, whose soft keyboard
//! resizes constantly) clears screen and scrollback and paints everything again. Otherwise
//! the renderer moves to the first changed row, rewrites only the changed range with
//! `ESC[2K`, lets `\r\n` scroll when the frame grows past the bottom, and erases rows that
//! the frame no longer has.
//!
//! Every write is one synchronized-output block (`ESC[?2026h … ESC[?2026l`), every written
//! row ends with [`LINE_RESET`], and the hardware cursor ends at the [`CURSOR_MARKER`] found
//! in the visible rows. A row wider than the terminal is a component bug: debug builds panic
//! naming it; release builds cut it and keep one report for the app to log. Rows carrying
//! an image (Kitty or iTerm2) are written as they are, exempt from both.
//!
//! Kitty images stay on screen until deleted, so the renderer remembers which image ids
//! each row placed: before rewriting a range of rows it deletes the images on them (and
//! extends the range down to the last image row, which may have moved), and before a full
//! repaint it deletes every image of the previous frame.
//!
//! [`Renderer::render_parts`] lets the caller pass the rows above the screen borrowed and
//! say how many leading rows are known unchanged, so a frame of a long transcript costs
//! what changed, not its length.
//!
//! The renderer runs on whichever thread owns the terminal (the UI loop); it never blocks.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;

use super::components::terminal_image::{is_image_line, kitty_delete};
use super::terminal::{Terminal, HIDE_CURSOR, SHOW_CURSOR};
use super::text::{slice_by_column, visible_width};
use super::{CURSOR_MARKER, LINE_RESET};
use crate::util::reuse;

pub const SYNC_BEGIN: &str = "\x1b[?2026h";
pub const SYNC_END: &str = "\x1b[?2026l";
/// Clear screen, home, clear scrollback.
pub const CLEAR_ALL: &str = "\x1b[2J\x1b[H\x1b[3J";
/// Clear screen and home, leaving the scrollback alone.
pub const CLEAR_SCREEN: &str = "\x1b[2J\x1b[H";
pub const CLEAR_LINE: &str = "\x1b[2K";
/// Erase from the cursor to the end of the screen.
pub const CLEAR_BELOW: &str = "\x1b[J";

/// Where the hardware cursor goes, in content rows and columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CursorPos {
    pub row: usize,
    pub col: usize,
}

/// Diffs frames and writes them. Owns no terminal; [`Renderer::render`] borrows one.
#[derive(Debug)]
pub struct Renderer {
    previous: Vec<String>,
    previous_width: usize,
    previous_height: usize,
    /// Content row the terminal cursor is on.
    hardware_cursor_row: usize,
    /// Content row shown on the terminal's first line.
    viewport_top: usize,
    /// Rows painted since the last clear (the terminal's working area).
    max_lines_rendered: usize,
    /// Screen height used while composing the current frame.
    height: usize,
    cursor_visible: Option<bool>,
    cursor_at: Option<CursorPos>,
    show_hardware_cursor: bool,
    clear_on_shrink: bool,
    force_clear: bool,
    termux: bool,
    full_redraws: usize,
    overflow_report: Option<String>,
    overflow_reported: bool,
    /// Kitty image ids placed on each row of the previous frame.
    images: BTreeMap<usize, Vec<u32>>,
    /// Drawing on the alternate screen (full repaints never clear the scrollback).
    alt_screen: bool,
    /// The last frame's output buffer, kept so the next frame writes into its allocation.
    spare: String,
}

impl Default for Renderer {
    fn default() -> Self {
        Self::new()
    }
}

impl Renderer {
    pub fn new() -> Self {
        Renderer {
            previous: Vec::new(),
            previous_width: 0,
            previous_height: 0,
            hardware_cursor_row: 0,
            viewport_top: 0,
            max_lines_rendered: 0,
            height: 0,
            cursor_visible: None,
            cursor_at: None,
            show_hardware_cursor: false,
            clear_on_shrink: false,
            force_clear: false,
            termux: std::env::var_os("TERMUX_VERSION").is_some_and(|v| !v.is_empty()),
            full_redraws: 0,
            overflow_report: None,
            overflow_reported: false,
            images: BTreeMap::new(),
            alt_screen: false,
            spare: String::new(),
        }
    }

    /// Whether frames go to the alternate screen.
    pub fn set_alt_screen(&mut self, on: bool) {
        self.alt_screen = on;
    }

    /// Forgets everything painted (the screen was switched), keeping the settings.
    pub fn reset(&mut self) {
        *self = Renderer {
            show_hardware_cursor: self.show_hardware_cursor,
            clear_on_shrink: self.clear_on_shrink,
            termux: self.termux,
            full_redraws: self.full_redraws,
            ..Renderer::new()
        };
    }

    /// Show the hardware cursor at the marker (for IME), or keep it hidden there.
    pub fn set_show_hardware_cursor(&mut self, show: bool) {
        self.show_hardware_cursor = show;
    }

    /// Repaint everything when the frame gets shorter than what was painted, so no blank
    /// working area is left below it.
    pub fn set_clear_on_shrink(&mut self, clear: bool) {
        self.clear_on_shrink = clear;
    }

    /// Treat the terminal as Termux (height changes never clear the screen).
    pub fn set_termux(&mut self, termux: bool) {
        self.termux = termux;
    }

    /// How many times the whole frame was painted (first paint included).
    pub fn full_redraws(&self) -> usize {
        self.full_redraws
    }

    /// The frame as last written (markers stripped, without line resets).
    pub fn previous_lines(&self) -> &[String] {
        &self.previous
    }

    /// The content row shown on the terminal's top line.
    pub fn viewport_top(&self) -> usize {
        self.viewport_top
    }

    /// The first too-wide row seen in a release build, once, for the app to log.
    pub fn take_overflow_report(&mut self) -> Option<String> {
        self.overflow_report.take()
    }

    /// Forget the screen: the next frame clears screen and scrollback and paints it all.
    pub fn invalidate(&mut self) {
        self.force_clear = true;
    }

    /// Finds the cursor marker in the visible rows, strips it, diffs `lines` against the
    /// previous frame and writes the update as one flushed block.
    /// The lines are borrowed (the marker is stripped from them in place), so a caller that
    /// keeps its frame buffer can pass `&mut frame` and refill it next time.
    pub fn render(
        &mut self,
        term: &mut dyn Terminal,
        mut lines: impl AsMut<[String]>,
        overlays_active: bool,
    ) -> io::Result<()> {
        let lines = lines.as_mut();
        let (width, height) = term.size();
        let cursor = extract_cursor(lines, height);
        let frame = Frame {
            above: &[],
            screen: lines,
        };
        let out = self.frame_parts(frame, 0, cursor, width, height, overlays_active);
        self.write_out(term, out)
    }

    /// Like [`Renderer::render`] for a frame given in two parts: `above`, the rows scrolled
    /// above the screen, borrowed as they are, and `screen`, the rows from there down (the
    /// visible ones, where the cursor marker is looked for). The caller promises that the
    /// first `unchanged_before` rows equal the previous frame's, so a long transcript is
    /// neither copied nor compared where it did not change.
    pub fn render_parts(
        &mut self,
        term: &mut dyn Terminal,
        above: &[String],
        screen: &mut [String],
        unchanged_before: usize,
        overlays_active: bool,
    ) -> io::Result<()> {
        let (width, height) = term.size();
        let cursor = extract_cursor(screen, height).map(|c| CursorPos {
            row: c.row + above.len(),
            col: c.col,
        });
        let frame = Frame { above, screen };
        let out = self.frame_parts(
            frame,
            unchanged_before,
            cursor,
            width,
            height,
            overlays_active,
        );
        self.write_out(term, out)
    }

    /// Writes a frame's bytes and keeps the buffer for the next frame.
    fn write_out(&mut self, term: &mut dyn Terminal, out: String) -> io::Result<()> {
        let result = if out.is_empty() {
            Ok(())
        } else {
            term.write(&out);
            term.flush()
        };
        self.spare = out;
        result
    }

    /// An empty output buffer (the previous frame's allocation) opened with [`SYNC_BEGIN`].
    fn begin(&mut self) -> String {
        let mut out = std::mem::take(&mut self.spare);
        out.clear();
        out.push_str(SYNC_BEGIN);
        out
    }

    /// Bytes that leave the cursor on a fresh line below the content and show it, for
    /// stopping or suspending. The next frame starts over with a full paint.
    pub fn finish(&mut self) -> String {
        let mut out = String::new();
        if !self.previous.is_empty() {
            self.height = self.previous_height.max(1);
            let last = self.previous.len() - 1;
            self.move_to(&mut out, last);
            out.push_str("\r\n");
        }
        out.push_str(SHOW_CURSOR);
        self.cursor_visible = Some(true);
        self.force_clear = true;
        out
    }

    /// Computes the bytes for one frame whose cursor marker is already extracted.
    pub fn frame(
        &mut self,
        lines: Vec<String>,
        cursor: Option<CursorPos>,
        width: usize,
        height: usize,
        overlays_active: bool,
    ) -> String {
        let frame = Frame {
            above: &[],
            screen: &lines,
        };
        self.frame_parts(frame, 0, cursor, width, height, overlays_active)
    }

    fn frame_parts(
        &mut self,
        lines: Frame<'_>,
        unchanged_before: usize,
        cursor: Option<CursorPos>,
        width: usize,
        height: usize,
        overlays_active: bool,
    ) -> String {
        let height = height.max(1);
        let width_changed = self.previous_width != 0 && self.previous_width != width;
        let height_changed = self.previous_height != 0 && self.previous_height != height;
        if height_changed {
            // Terminals keep the bottom row anchored when the window height changes.
            let bottom = self.viewport_top + self.previous_height;
            self.viewport_top = bottom.saturating_sub(height);
        }
        self.height = height;

        let first_paint = self.previous.is_empty() && self.previous_width == 0;
        if first_paint && !self.force_clear {
            return self.full(lines, cursor, width, false);
        }
        if self.force_clear
            || width_changed
            || (height_changed && !self.termux)
            || (self.clear_on_shrink && lines.len() < self.max_lines_rendered && !overlays_active)
        {
            return self.full(lines, cursor, width, true);
        }

        let prev_len = self.previous.len();
        let new_len = lines.len();
        let changed = changed_rows(&self.previous, &lines, unchanged_before);
        let (first, mut last) = match changed {
            _ if new_len > prev_len => (changed.map_or(prev_len, |(first, _)| first), new_len - 1),
            Some(range) => range,
            None if new_len < prev_len => {
                // Only rows at the end went away: erase them (and their images).
                if new_len.saturating_sub(1) < self.viewport_top {
                    return self.full(lines, cursor, width, true);
                }
                let mut out = self.begin();
                self.delete_images(&mut out, new_len, prev_len - 1);
                self.erase_from(&mut out, new_len);
                self.store_rows(&lines, new_len, new_len);
                return self.commit(out, new_len, cursor, width);
            }
            None => {
                let mut out = self.begin();
                self.place_cursor(&mut out, cursor, new_len);
                self.previous_width = width;
                self.previous_height = height;
                return end_sync(out);
            }
        };
        if first < self.viewport_top {
            return self.full(lines, cursor, width, true);
        }
        // An image below a change may have moved: rewrite down to the last one, deleting
        // every image in the rewritten rows first (terminals keep images until told).
        if let Some((&row, _)) = self.images.range(first..).next_back() {
            last = last.max(row);
        }

        let mut out = self.begin();
        self.delete_images(&mut out, first, last);
        let last = last.min(new_len.saturating_sub(1));
        if new_len > prev_len && first == prev_len && first > 0 {
            // Appending: step down from the last row so the newline scrolls if needed.
            self.move_to(&mut out, first - 1);
            self.newline(&mut out);
        } else {
            self.move_to(&mut out, first);
        }
        out.push('\r');
        for i in first..=last {
            if i > first {
                self.newline(&mut out);
            }
            out.push_str(CLEAR_LINE);
            self.push_row(&mut out, lines.line(i), i, width);
        }
        if prev_len > new_len {
            self.erase_from(&mut out, new_len);
        }
        self.store_rows(&lines, first, last + 1);
        self.commit(out, new_len, cursor, width)
    }

    /// Erases content rows from `row` down. Those rows were painted, so they are on screen.
    fn erase_from(&mut self, out: &mut String, row: usize) {
        self.move_to(out, row);
        out.push('\r');
        out.push_str(CLEAR_BELOW);
    }

    /// Paints every row, after deleting images and clearing screen and scrollback when
    /// `clear`.
    fn full(
        &mut self,
        lines: Frame<'_>,
        cursor: Option<CursorPos>,
        width: usize,
        clear: bool,
    ) -> String {
        self.full_redraws += 1;
        self.force_clear = false;
        let mut out = self.begin();
        if clear {
            for ids in self.images.values() {
                for &id in ids {
                    out.push_str(&kitty_delete(id));
                }
            }
            // On the alternate screen ED 3 would erase the normal screen's scrollback (the
            // user's shell history): clear the screen only.
            out.push_str(if self.alt_screen {
                CLEAR_SCREEN
            } else {
                CLEAR_ALL
            });
            self.max_lines_rendered = 0;
        } else {
            // The first paint starts on the line the cursor is on, at its left edge.
            out.push('\r');
        }
        self.viewport_top = 0;
        self.hardware_cursor_row = 0;
        for i in 0..lines.len() {
            if i > 0 {
                self.newline(&mut out);
            }
            self.push_row(&mut out, lines.line(i), i, width);
        }
        self.cursor_at = None;
        let len = lines.len();
        let end = reuse::overwrite_at(&mut self.previous, 0, lines.above);
        let end = reuse::overwrite_at(&mut self.previous, end, lines.screen);
        self.previous.truncate(end);
        self.images.clear();
        for (row, line) in self.previous.iter().enumerate() {
            let ids = kitty_image_ids(line);
            if !ids.is_empty() {
                self.images.insert(row, ids);
            }
        }
        self.commit(out, len, cursor, width)
    }

    /// Makes rows `[from, to)` of the stored previous frame equal to `lines` and drops the
    /// rows past its end, keeping the image index in step.
    fn store_rows(&mut self, lines: &Frame<'_>, from: usize, to: usize) {
        let new_len = lines.len();
        self.previous.truncate(new_len);
        let _ = self.images.split_off(&new_len);
        for i in from..to.min(new_len) {
            let line = lines.line(i);
            match self.previous.get_mut(i) {
                Some(old) => {
                    old.clear();
                    old.push_str(line);
                }
                None => self.previous.push(line.to_owned()),
            }
            let ids = kitty_image_ids(line);
            if ids.is_empty() {
                self.images.remove(&i);
            } else {
                self.images.insert(i, ids);
            }
        }
    }

    /// Deletes the Kitty images on previous rows `first..=last`.
    fn delete_images(&self, out: &mut String, first: usize, last: usize) {
        if first > last {
            return;
        }
        for ids in self.images.range(first..=last).map(|(_, ids)| ids) {
            for &id in ids {
                out.push_str(&kitty_delete(id));
            }
        }
    }

    /// Records the frame as painted and positions the cursor; returns the wrapped bytes.
    fn commit(
        &mut self,
        mut out: String,
        len: usize,
        cursor: Option<CursorPos>,
        width: usize,
    ) -> String {
        self.cursor_at = None;
        self.place_cursor(&mut out, cursor, len);
        self.max_lines_rendered = self.max_lines_rendered.max(len);
        self.previous_width = width;
        self.previous_height = self.height;
        end_sync(out)
    }

    fn place_cursor(&mut self, out: &mut String, cursor: Option<CursorPos>, len: usize) {
        let target = cursor.filter(|_| len > 0).map(|c| CursorPos {
            row: c.row.min(len - 1).max(self.viewport_top),
            col: c.col,
        });
        let visible = target.is_some() && self.show_hardware_cursor;
        if let Some(pos) = target {
            if self.cursor_at != Some(pos) || self.hardware_cursor_row != pos.row {
                self.move_to(out, pos.row);
                let _ = write!(out, "\x1b[{}G", pos.col + 1);
                self.cursor_at = Some(pos);
            }
        }
        if self.cursor_visible != Some(visible) {
            out.push_str(if visible { SHOW_CURSOR } else { HIDE_CURSOR });
            self.cursor_visible = Some(visible);
        }
    }

    /// Moves the terminal cursor to content row `target` (on screen), scrolling with
    /// newlines when it lies below the bottom.
    fn move_to(&mut self, out: &mut String, target: usize) {
        let bottom = self.viewport_top + self.height - 1;
        let current = self.hardware_cursor_row.clamp(self.viewport_top, bottom);
        if target > bottom {
            push_move(out, bottom as isize - current as isize);
            self.hardware_cursor_row = bottom;
            while self.hardware_cursor_row < target {
                self.newline(out);
            }
        } else {
            push_move(out, target as isize - current as isize);
            self.hardware_cursor_row = target;
        }
        if target != current {
            self.cursor_at = None;
        }
    }

    /// `\r\n`: next row, scrolling the screen when the cursor is on the bottom row.
    fn newline(&mut self, out: &mut String) {
        out.push_str("\r\n");
        self.hardware_cursor_row += 1;
        if self.hardware_cursor_row >= self.viewport_top + self.height {
            self.viewport_top = self.hardware_cursor_row + 1 - self.height;
        }
        self.cursor_at = None;
    }

    /// Writes one row followed by [`LINE_RESET`]. Image rows go out untouched: their
    /// escape payload is not text, so neither the width check nor the reset applies.
    fn push_row(&mut self, out: &mut String, line: &str, index: usize, width: usize) {
        if is_image_line(line) {
            out.push_str(line);
            return;
        }
        let line_width = visible_width(line);
        if line_width <= width {
            out.push_str(line);
        } else {
            self.report_overflow(out, line, line_width, index, width);
        }
        out.push_str(LINE_RESET);
    }

    fn report_overflow(
        &mut self,
        out: &mut String,
        line: &str,
        line_width: usize,
        index: usize,
        width: usize,
    ) {
        let message = format!(
            "rendered line {index} is {line_width} columns wide, wider than the terminal \
             ({width}); components must truncate with text::truncate_to_width: {line:?}"
        );
        if cfg!(debug_assertions) {
            panic!("{message}");
        }
        if !self.overflow_reported {
            self.overflow_reported = true;
            self.overflow_report = Some(message);
        }
        out.push_str(&slice_by_column(line, 0, width, true));
    }
}

fn push_move(out: &mut String, rows: isize) {
    match rows {
        n if n > 0 => {
            let _ = write!(out, "\x1b[{n}B");
        }
        n if n < 0 => {
            let _ = write!(out, "\x1b[{}A", -n);
        }
        _ => {}
    }
}

/// Closes a buffer from [`Renderer::begin`] with [`SYNC_END`], or empties it when nothing
/// was written after [`SYNC_BEGIN`] (no frame to send).
fn end_sync(mut out: String) -> String {
    if out.len() == SYNC_BEGIN.len() {
        out.clear();
    } else {
        out.push_str(SYNC_END);
    }
    out
}

/// A frame in two parts: rows above the screen, borrowed from the app's component, and the
/// rest (the screen, with the cursor marker stripped and overlays drawn in).
struct Frame<'a> {
    above: &'a [String],
    screen: &'a [String],
}

impl Frame<'_> {
    fn len(&self) -> usize {
        self.above.len() + self.screen.len()
    }

    fn line(&self, row: usize) -> &str {
        match self.above.get(row) {
            Some(line) => line,
            None => &self.screen[row - self.above.len()],
        }
    }
}

/// First and last index where the frames differ over the rows both have, looking only from
/// `from` on (the rows before it are known to be equal).
fn changed_rows(old: &[String], new: &Frame<'_>, from: usize) -> Option<(usize, usize)> {
    let common = old.len().min(new.len());
    let differs = |i: usize| old[i] != new.line(i);
    let first = (from.min(common)..common).find(|&i| differs(i))?;
    let last = (first..common).rev().find(|&i| differs(i))?;
    Some((first, last))
}

/// The Kitty image ids placed by a row (`ESC_G…i=<id>…;`), in order.
fn kitty_image_ids(line: &str) -> Vec<u32> {
    let mut ids = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("\x1b_G") {
        rest = &rest[at + 3..];
        let params = rest.split(';').next().unwrap_or("");
        let id = params
            .split(',')
            .find_map(|p| p.strip_prefix("i="))
            .and_then(|v| v.parse::<u32>().ok())
            .filter(|&id| id > 0);
        if let Some(id) = id {
            ids.push(id);
        }
    }
    ids
}

/// Finds [`CURSOR_MARKER`] in the bottom `height` rows (the ones on screen), removes it and
/// returns where it was, measuring the column with [`visible_width`].
pub fn extract_cursor(lines: &mut [String], height: usize) -> Option<CursorPos> {
    let top = lines.len().saturating_sub(height);
    for row in (top..lines.len()).rev() {
        if let Some(at) = lines[row].find(CURSOR_MARKER) {
            let col = visible_width(&lines[row][..at]);
            lines[row].replace_range(at..at + CURSOR_MARKER.len(), "");
            return Some(CursorPos { row, col });
        }
    }
    None
}

#[cfg(test)]
mod tests;
