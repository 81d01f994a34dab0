//! A terminal for tests: implements [`Terminal`], keeps every flushed write as one frame of
//! bytes, and feeds all output into a `vt100` screen model so tests can assert on the
//! visible text, the cursor and the scrollback as a user would see them.

use std::io;
use std::time::Instant;

use super::terminal::Terminal;

/// A fixed-size screen in memory. Writes reach the screen model at once; `flush` closes the
/// current frame.
pub struct VirtualTerminal {
    parser: vt100::Parser,
    cols: usize,
    rows: usize,
    pending: String,
    frames: Vec<String>,
    kitty_active: bool,
    kitty_replied: bool,
    started: bool,
    suspends: usize,
}

impl VirtualTerminal {
    pub fn new(cols: usize, rows: usize) -> Self {
        VirtualTerminal {
            parser: vt100::Parser::new(to_u16(rows), to_u16(cols), 10_000),
            cols,
            rows,
            pending: String::new(),
            frames: Vec::new(),
            kitty_active: false,
            kitty_replied: false,
            started: false,
            suspends: 0,
        }
    }

    /// Changes the window size, as a user dragging the window would.
    pub fn resize(&mut self, cols: usize, rows: usize) {
        self.cols = cols;
        self.rows = rows;
        self.parser
            .screen_mut()
            .set_size(to_u16(rows), to_u16(cols));
    }

    /// The visible rows, trailing spaces trimmed.
    pub fn screen_lines(&self) -> Vec<String> {
        self.parser
            .screen()
            .rows(0, to_u16(self.cols))
            .map(|row| row.trim_end().to_string())
            .collect()
    }

    /// The visible rows with trailing empty rows dropped.
    pub fn screen_text(&self) -> Vec<String> {
        let mut lines = self.screen_lines();
        while lines.last().is_some_and(String::is_empty) {
            lines.pop();
        }
        lines
    }

    /// Rows that scrolled off the top, oldest first.
    pub fn scrollback_lines(&mut self) -> Vec<String> {
        let screen = self.parser.screen_mut();
        screen.set_scrollback(usize::MAX);
        let len = screen.scrollback();
        let mut lines = Vec::with_capacity(len);
        for offset in (1..=len).rev() {
            screen.set_scrollback(offset);
            let first = screen.rows(0, to_u16(self.cols)).next().unwrap_or_default();
            lines.push(first.trim_end().to_string());
        }
        screen.set_scrollback(0);
        lines
    }

    /// Scrollback followed by the screen, trailing empty rows dropped.
    pub fn all_lines(&mut self) -> Vec<String> {
        let mut lines = self.scrollback_lines();
        lines.extend(self.screen_lines());
        while lines.last().is_some_and(String::is_empty) {
            lines.pop();
        }
        lines
    }

    /// `(row, col)` of the cursor on screen.
    pub fn cursor(&self) -> (usize, usize) {
        let (row, col) = self.parser.screen().cursor_position();
        (usize::from(row), usize::from(col))
    }

    /// Screen cells drawn in reverse video (an editor's fake cursor), as `(row, col)`.
    pub fn inverse_cells(&self) -> Vec<(usize, usize)> {
        let screen = self.parser.screen();
        let mut cells = Vec::new();
        for row in 0..self.rows {
            for col in 0..self.cols {
                let cell = screen.cell(to_u16(row), to_u16(col));
                if cell.is_some_and(|c| c.inverse() && !c.is_wide_continuation()) {
                    cells.push((row, col));
                }
            }
        }
        cells
    }

    /// Whether the alternate screen is shown.
    pub fn alternate_screen(&self) -> bool {
        self.parser.screen().alternate_screen()
    }

    /// Whether the application asked for mouse reports.
    pub fn mouse_tracking(&self) -> bool {
        self.parser.screen().mouse_protocol_mode() != vt100::MouseProtocolMode::None
    }

    pub fn cursor_visible(&self) -> bool {
        !self.parser.screen().hide_cursor()
    }

    pub fn bracketed_paste(&self) -> bool {
        self.parser.screen().bracketed_paste()
    }

    /// Every flushed write so far, one string per flush.
    pub fn frames(&self) -> &[String] {
        &self.frames
    }

    /// The flushed writes since the last call.
    pub fn take_frames(&mut self) -> Vec<String> {
        std::mem::take(&mut self.frames)
    }

    /// How many times [`Terminal::suspend`] ran.
    pub fn suspends(&self) -> usize {
        self.suspends
    }

    /// Whether `start` has run without a `stop` since.
    pub fn started(&self) -> bool {
        self.started
    }

    /// Tests play the terminal answering the Kitty query before or after `start`.
    pub fn set_kitty_reply(&mut self, replies: bool) {
        self.kitty_replied = replies;
    }
}

fn to_u16(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

impl Terminal for VirtualTerminal {
    fn write(&mut self, data: &str) {
        self.parser.process(data.as_bytes());
        self.pending.push_str(data);
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            self.frames.push(std::mem::take(&mut self.pending));
        }
        Ok(())
    }

    fn size(&self) -> (usize, usize) {
        (self.cols, self.rows)
    }

    fn kitty_protocol_active(&self) -> bool {
        self.kitty_active
    }

    fn kitty_reply_seen(&mut self) {
        self.kitty_active = true;
    }

    fn next_timer(&self) -> Option<Instant> {
        None
    }

    fn start(&mut self) -> io::Result<()> {
        self.started = true;
        self.write(super::terminal::BRACKETED_PASTE_ON);
        if self.kitty_replied {
            self.kitty_active = true;
        }
        self.flush()
    }

    fn stop(&mut self) -> io::Result<()> {
        self.started = false;
        self.kitty_active = false;
        self.write(super::terminal::BRACKETED_PASTE_OFF);
        self.flush()
    }

    fn suspend(&mut self) -> io::Result<()> {
        self.suspends += 1;
        self.stop()?;
        self.start()
    }
}
