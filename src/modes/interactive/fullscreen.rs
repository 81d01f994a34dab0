//! pi 1.x's fullscreen mode (`tuiMode: "fullscreen"`, `--tui-mode fullscreen`, the default):
//! the chat runs on the alternate screen with the editor and footer docked at the bottom and
//! the transcript (start-up header included) in a window above them that pi scrolls itself —
//! page, half-page, line, prompt-to-prompt, top and bottom keys (`tui.altScreen.*`) and the
//! mouse wheel (Alt: five times as far). Scrolled up, a "↓ Jump to latest message" label sits
//! on the window's last row. The transcript can be searched (`fullscreen_search.rs`) and
//! selected with the mouse (drag, double click for a word, triple for a line); a finished
//! selection is copied at once (`fullscreenCopyOnSelect`) or by `app.message.copy`.
//!
//! [`Fullscreen`] is the state and the frame composition; the `App` methods at the bottom
//! route keys and mouse reports to it. On exit the normal screen gets the transcript
//! (`fullscreenExitOutput: "transcript"`) or nothing (`"resume-hint"`).

use std::time::{Duration, Instant};

use super::fullscreen_search::{SearchBox, Step};
use crate::resources::settings::Settings;
use crate::tui::keybindings;
use crate::tui::mouse::{MouseButton, MouseEvent, MouseKind};
use crate::tui::overlay::splice;
use crate::tui::scroll::ScrollView;
use crate::tui::search::highlight_row;
use crate::tui::selection::{self, Cell, Range};
use crate::tui::text::{truncate_to_width, visible_width};
use crate::tui::theme::{self, Token};
use crate::tui::InputEvent;

/// Alt+wheel moves this many times as far.
const ALT_WHEEL_MULTIPLIER: usize = 5;
/// `fullscreenWheelScrollLines: "auto"` speeds a fast spin up to this many lines per notch.
const AUTO_WHEEL_MAX: usize = 6;
/// Notches closer together than this count as one fast spin.
const WHEEL_SPIN: Duration = Duration::from_millis(40);
/// Clicks closer together than this (on the same cell) make a double or triple click.
const MULTI_CLICK: Duration = Duration::from_millis(500);
/// How long "Copied!" shows.
const FLASH: Duration = Duration::from_millis(1000);
/// How long the `"auto"` scrollbar stays after the transcript last scrolled.
const SCROLLBAR_LINGER: Duration = Duration::from_millis(1000);

/// `fullscreenScrollbar`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scrollbar {
    /// Shown for a moment while the transcript scrolls.
    Auto,
    Always,
    Hidden,
}

/// The interactive layout settings (`tuiMode` and the `fullscreen*` keys).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TuiOptions {
    pub fullscreen: bool,
    /// `fullscreenExitOutput` is `"transcript"` (the default) rather than `"resume-hint"`.
    pub exit_transcript: bool,
    pub copy_on_select: bool,
    /// `fullscreenWheelScrollLines`: `None` for `"auto"`.
    pub wheel_lines: Option<usize>,
    pub scrollbar: Scrollbar,
}

impl TuiOptions {
    /// The old scrollback layout (`tuiMode: "regular"`).
    pub fn regular() -> TuiOptions {
        TuiOptions {
            fullscreen: false,
            exit_transcript: true,
            copy_on_select: true,
            wheel_lines: None,
            scrollbar: Scrollbar::Auto,
        }
    }

    /// From the settings, with `--tui-mode` (already validated) winning over `tuiMode`.
    /// Values pi does not know fall back to its defaults.
    pub fn from_settings(settings: &Settings, flag: Option<&str>) -> TuiOptions {
        let mode = flag.or_else(|| settings.str(&["tuiMode"]));
        let wheel = settings
            .u64(&["fullscreenWheelScrollLines"])
            .filter(|n| (1..=100).contains(n))
            .map(|n| n as usize);
        TuiOptions {
            fullscreen: mode != Some("regular"),
            exit_transcript: settings.str(&["fullscreenExitOutput"]) != Some("resume-hint"),
            copy_on_select: settings.bool(&["fullscreenCopyOnSelect"]).unwrap_or(true),
            wheel_lines: wheel,
            scrollbar: match settings.str(&["fullscreenScrollbar"]) {
                Some("always") => Scrollbar::Always,
                Some("hidden") => Scrollbar::Hidden,
                _ => Scrollbar::Auto,
            },
        }
    }
}

/// The mouse selection being made or shown.
#[derive(Default)]
struct Pointer {
    anchor: Option<Cell>,
    focus: Option<Cell>,
    /// The button is down.
    pressed: bool,
    /// The press moved (a drag, not a click).
    dragged: bool,
    /// The last press: when, where, and how many clicks it made.
    last_click: Option<(Instant, Cell, u8)>,
    /// The content row of a single click just released (no drag), for the app to act on.
    clicked: Option<usize>,
}

impl Pointer {
    fn range(&self) -> Option<Range> {
        Range::between(self.anchor?, self.focus?)
    }

    fn clear(&mut self) {
        self.anchor = None;
        self.focus = None;
        self.pressed = false;
        self.dragged = false;
    }
}

/// The fullscreen mode's state: the transcript window, search, selection and the last frame.
pub struct Fullscreen {
    pub options: TuiOptions,
    height: usize,
    scroll: ScrollView,
    search: Option<SearchBox>,
    pointer: Pointer,
    flash: Option<(String, Instant)>,
    /// The last wheel notch: when, which way, and how many lines it moved.
    wheel: Option<(Instant, i8, usize)>,
    /// When the user last scrolled the transcript, for the `"auto"` scrollbar.
    scrolled: Option<Instant>,
    /// The composed screen, exactly `height` rows.
    screen: Vec<String>,
    /// Where the "Jump to latest message" label was drawn: row, first and last column.
    jump_label: Option<(usize, usize, usize)>,
}

impl Fullscreen {
    pub fn new(options: TuiOptions) -> Fullscreen {
        Fullscreen {
            options,
            height: 24,
            scroll: ScrollView::default(),
            search: None,
            pointer: Pointer::default(),
            flash: None,
            wheel: None,
            scrolled: None,
            screen: Vec::new(),
            jump_label: None,
        }
    }

    /// The terminal's height (frames are exactly this tall).
    pub fn set_height(&mut self, rows: usize) {
        self.height = rows.max(1);
    }

    pub fn scroll(&self) -> &ScrollView {
        &self.scroll
    }

    pub fn search_open(&self) -> bool {
        self.search.is_some()
    }

    /// When the next frame is due for a timed change (the flash or the scrollbar going away).
    pub fn next_deadline(&self) -> Option<Instant> {
        let flash = self.flash.as_ref().map(|(_, at)| *at + FLASH);
        let bar = self
            .scrolled
            .filter(|_| self.options.scrollbar == Scrollbar::Auto)
            .map(|at| at + SCROLLBAR_LINGER);
        match (flash, bar) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Shows `message` in the top-right corner for a moment.
    pub fn flash(&mut self, message: &str) {
        self.flash = Some((message.to_string(), Instant::now()));
    }

    /// The screen for `content` (header and transcript) above `dock` (everything under the
    /// transcript), `width` columns wide and exactly as tall as the terminal.
    pub fn compose(&mut self, content: &[String], dock: &[String], width: usize) -> &[String] {
        let dock = &dock[dock.len().saturating_sub(self.height)..];
        let window = self.height - dock.len();
        self.scroll.layout(content.len(), window);
        if let Some(search) = &mut self.search {
            if let Some(found) = search.refresh(content) {
                let (first, last) = (found.first_row(), found.last_row());
                let top = self.scroll.top();
                if first < top || last >= top + window {
                    self.scroll.scroll_to(first.saturating_sub(window / 3));
                }
            }
        }
        if self
            .flash
            .as_ref()
            .is_some_and(|(_, at)| at.elapsed() >= FLASH)
        {
            self.flash = None;
        }
        let top = self.scroll.top();
        let mut screen: Vec<String> = (0..window)
            .map(|y| content.get(top + y).cloned().unwrap_or_default())
            .collect();
        self.highlight_matches(&mut screen, top);
        if let Some(range) = self.pointer.range() {
            for (y, line) in screen.iter_mut().enumerate() {
                if let Some((from, to)) = range.columns(top + y, width) {
                    *line = selection::highlight(line, from, to);
                }
            }
        }
        self.jump_label = None;
        if !self.scroll.is_following() && window > 0 {
            self.draw_jump_label(&mut screen, width);
        }
        self.draw_scrollbar(&mut screen, content.len(), width);
        if let Some(search) = &mut self.search {
            let box_width = (width * 2 / 5).max(32).min(width.saturating_sub(2));
            let col = width.saturating_sub(box_width + 1);
            for (i, row) in search.render(box_width).into_iter().enumerate() {
                if let Some(line) = screen.get_mut(1 + i) {
                    *line = splice(line, &row, col, box_width, width);
                }
            }
        }
        if let Some((message, _)) = &self.flash {
            let text = truncate_to_width(&format!(" {message} "), width, "", false);
            let w = visible_width(&text);
            if let Some(line) = screen.first_mut() {
                *line = splice(line, &format!("\x1b[7m{text}\x1b[27m"), width - w, w, width);
            }
        }
        screen.extend(dock.iter().cloned());
        self.screen = screen;
        &self.screen
    }

    /// pi's scrollbar in the window's last column: a `┃` thumb sized by the share of the
    /// content shown, on a `│` track.
    fn draw_scrollbar(&mut self, screen: &mut [String], content: usize, width: usize) {
        let top = self.scroll.top();
        let track = screen.len();
        let visible = match self.options.scrollbar {
            Scrollbar::Hidden => false,
            Scrollbar::Always => true,
            Scrollbar::Auto => {
                content > track
                    && self
                        .scrolled
                        .is_some_and(|at| at.elapsed() < SCROLLBAR_LINGER)
            }
        };
        if !visible || track == 0 || width == 0 {
            return;
        }
        let content = content.max(track);
        let thumb = ((track * track + content / 2) / content).clamp(2.min(track), track);
        let max_top = content - track;
        let thumb_top = (top * (track - thumb) + max_top / 2)
            .checked_div(max_top)
            .unwrap_or(0);
        let theme = theme::current();
        for (y, line) in screen.iter_mut().enumerate() {
            let cell = if (thumb_top..thumb_top + thumb).contains(&y) {
                theme.fg(Token::ScrollbarThumb, "┃")
            } else {
                theme.fg(Token::ScrollbarTrack, "│")
            };
            *line = splice(line, &cell, width - 1, 1, width);
        }
    }

    fn highlight_matches(&self, screen: &mut [String], top: usize) {
        let Some(search) = &self.search else { return };
        let theme = theme::current();
        let matched =
            |s: &str| theme.bg(Token::SearchMatchBg, &theme.fg(Token::SearchMatchText, s));
        let plain = |s: &str| theme.underline(&matched(s));
        let current = |s: &str| theme.bold(&theme.inverse(&matched(s)));
        let bottom = top + screen.len();
        for (i, m) in search.matches.iter().enumerate() {
            if m.last_row() < top || m.first_row() >= bottom {
                continue;
            }
            let style: &dyn Fn(&str) -> String = if search.selected == Some(i) {
                &current
            } else {
                &plain
            };
            for seg in &m.segments {
                if (top..bottom).contains(&seg.row) {
                    let line = &mut screen[seg.row - top];
                    *line = highlight_row(line, seg.start_col, seg.end_col, style);
                }
            }
        }
    }

    fn draw_jump_label(&mut self, screen: &mut [String], width: usize) {
        let key = keybindings::display_keys(
            keybindings::current()
                .keys("tui.altScreen.bottom")
                .first()
                .map_or("", String::as_str),
        );
        let label = if key.is_empty() {
            " ↓ Jump to latest message ".to_string()
        } else {
            format!(" ↓ Jump to latest message · {key} ")
        };
        let label = truncate_to_width(&label, width, "", false);
        let w = visible_width(&label);
        let col = (width - w) / 2;
        let row = screen.len() - 1;
        let theme = theme::current();
        let styled = theme.bg(Token::SelectedBg, &theme.fg(Token::Text, &label));
        screen[row] = splice(&screen[row], &styled, col, w, width);
        self.jump_label = Some((row, col, col + w));
    }

    /// Handles a transcript key; `prompts` gives the rows user messages start on (asked only
    /// for the prompt jumps). Returns whether the key was taken.
    pub fn handle_key(
        &mut self,
        event: &InputEvent,
        list_has_focus: bool,
        prompts: impl FnOnce() -> Vec<usize>,
    ) -> bool {
        let before = self.scroll.top();
        let taken = self.key(event, list_has_focus, prompts);
        self.note_scroll(before);
        taken
    }

    /// Records a scroll the user made (it shows the `"auto"` scrollbar for a moment).
    fn note_scroll(&mut self, before: usize) {
        if self.scroll.top() != before {
            self.scrolled = Some(Instant::now());
        }
    }

    fn key(
        &mut self,
        event: &InputEvent,
        list_has_focus: bool,
        prompts: impl FnOnce() -> Vec<usize>,
    ) -> bool {
        let kb = keybindings::current();
        let is = |id: &str| event.key().is_some_and(|k| kb.matches(k, id));
        if is("tui.altScreen.search") {
            self.toggle_search();
            return true;
        }
        if let Some(search) = &mut self.search {
            if is("tui.altScreen.searchNext") {
                search.step = Step::Next;
                return true;
            }
            if is("tui.altScreen.searchPrevious") {
                search.step = Step::Previous;
                return true;
            }
            if is("tui.altScreen.searchClose") {
                self.search = None;
                return true;
            }
        }
        // A focused list (autocomplete, a selector) keeps its own paging keys.
        if !list_has_focus {
            let page = self.scroll.page();
            let half = self.scroll.half_page();
            let moves = [
                ("tui.altScreen.pageUp", -page),
                ("tui.altScreen.pageDown", page),
                ("tui.altScreen.halfPageUp", -half),
                ("tui.altScreen.halfPageDown", half),
                ("tui.altScreen.lineUp", -1),
                ("tui.altScreen.lineDown", 1),
            ];
            if let Some((_, delta)) = moves.iter().find(|(id, _)| is(id)) {
                self.scroll.scroll_by(*delta);
                return true;
            }
            if is("tui.altScreen.top") {
                self.scroll.to_start();
                return true;
            }
            if is("tui.altScreen.bottom") {
                self.scroll.to_end();
                return true;
            }
            let up = is("tui.altScreen.previousPrompt");
            if up || is("tui.altScreen.nextPrompt") {
                self.jump_to_prompt(&prompts(), up);
                return true;
            }
        }
        match &mut self.search {
            Some(search) => {
                search.handle_input(event);
                true
            }
            None => false,
        }
    }

    fn toggle_search(&mut self) {
        self.search = match self.search {
            Some(_) => None,
            None => Some(SearchBox::new(self.scroll.top())),
        };
    }

    fn jump_to_prompt(&mut self, prompts: &[usize], up: bool) {
        let top = self.scroll.top();
        let target = if up {
            prompts.iter().rev().find(|&&r| r < top)
        } else {
            prompts.iter().find(|&&r| r > top)
        };
        if let Some(&row) = target {
            self.scroll.scroll_to(row);
        }
    }

    /// Handles a mouse report. Returns text to copy when a selection was just finished and
    /// copy-on-select is on.
    pub fn handle_mouse(&mut self, event: MouseEvent, content: &[String]) -> Option<String> {
        let window = self.scroll.height();
        match event.kind {
            MouseKind::Wheel(direction) => {
                let lines = self.wheel_lines(direction, event.alt);
                let before = self.scroll.top();
                self.scroll.scroll_by(direction as isize * lines as isize);
                self.note_scroll(before);
                None
            }
            MouseKind::Press(MouseButton::Left) => {
                if let Some((row, from, to)) = self.jump_label {
                    if event.y == row && (from..to).contains(&event.x) {
                        self.scroll.to_end();
                        self.pointer.clear();
                        return None;
                    }
                }
                let Some(row) = (event.y < window).then(|| self.scroll.row_at(event.y)) else {
                    // The dock: the selection goes away.
                    self.pointer.clear();
                    return None;
                };
                let row = row.unwrap_or(content.len().saturating_sub(1));
                self.press(Cell { row, col: event.x }, content);
                None
            }
            MouseKind::Drag(MouseButton::Left) if self.pointer.pressed => {
                let y = event.y.min(window.saturating_sub(1));
                if event.y >= window {
                    self.scroll.scroll_by(1);
                } else if event.y == 0 {
                    self.scroll.scroll_by(-1);
                }
                let row = self.scroll.top() + y;
                self.pointer.focus = Some(Cell { row, col: event.x });
                self.pointer.dragged = true;
                self.pointer.last_click = None;
                None
            }
            MouseKind::Release if self.pointer.pressed => {
                self.pointer.pressed = false;
                let single = matches!(self.pointer.last_click, Some((_, _, 1)));
                if !self.pointer.dragged && single {
                    self.pointer.clicked = self.pointer.anchor.map(|cell| cell.row);
                }
                let range = self.pointer.range()?;
                self.options
                    .copy_on_select
                    .then(|| range.text(content))
                    .filter(|t| !t.is_empty())
            }
            _ => None,
        }
    }

    /// The content row of the single click released last, once.
    pub fn take_click(&mut self) -> Option<usize> {
        self.pointer.clicked.take()
    }

    fn press(&mut self, cell: Cell, content: &[String]) {
        let now = Instant::now();
        let clicks = match self.pointer.last_click {
            Some((at, last, n)) if now.duration_since(at) < MULTI_CLICK && last == cell => {
                n % 3 + 1
            }
            _ => 1,
        };
        self.pointer.last_click = Some((now, cell, clicks));
        let line = content.get(cell.row).map(String::as_str).unwrap_or("");
        let span = match clicks {
            2 => selection::word_at(line, cell.col),
            3 => selection::line_extent(line),
            _ => None,
        };
        let (anchor, focus) = match span {
            Some((from, to)) => (
                Cell {
                    row: cell.row,
                    col: from,
                },
                Cell {
                    row: cell.row,
                    col: to - 1,
                },
            ),
            None => (cell, cell),
        };
        self.pointer.anchor = Some(anchor);
        self.pointer.focus = Some(focus);
        self.pointer.pressed = true;
        self.pointer.dragged = false;
    }

    /// Lines one wheel notch moves: the setting, or for "auto" 1 that grows with a fast
    /// spin up to [`AUTO_WHEEL_MAX`].
    fn wheel_lines(&mut self, direction: i8, alt: bool) -> usize {
        let now = Instant::now();
        let lines = match self.options.wheel_lines {
            Some(n) => n,
            None => match self.wheel {
                Some((at, dir, n)) if dir == direction && now.duration_since(at) < WHEEL_SPIN => {
                    (n + 1).min(AUTO_WHEEL_MAX)
                }
                _ => 1,
            },
        };
        self.wheel = Some((now, direction, lines));
        if alt {
            lines * ALT_WHEEL_MULTIPLIER
        } else {
            lines
        }
    }

    /// The selected text, if a selection is shown.
    pub fn selection_text(&self, content: &[String]) -> Option<String> {
        self.pointer
            .range()
            .map(|r| r.text(content))
            .filter(|t| !t.is_empty())
    }
}
