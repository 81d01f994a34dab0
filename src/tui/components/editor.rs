//! The prompt editor: multi-line text with word-wrap, Emacs-style motions and kills, a kill
//! ring, undo, submission history, collapsed large pastes, and an autocomplete popup.
//!
//! Keys go through the named actions of [`crate::tui::keybindings`], so users
//! can rebind them. `handle_input` returns whether the editor used the key; keys it does
//! not use (Escape without a popup, Ctrl+C, Ctrl+P …) are left to the app. A submission
//! (Enter) is collected with [`Editor::take_submitted`]. Rendering lives in
//! `editor_render.rs`, wrapping maths in `editor_layout.rs`.
//!
//! Columns are byte offsets into a line and always sit on a grapheme boundary; the cursor
//! moves by graphemes (a paste marker counts as one), and vertical motion keeps the
//! display column, so wide characters and emoji never split.

use super::editor_layout::{find_visual_line, marker_ranges, segments, visual_lines, VisualLine};
use crate::tui::autocomplete::{AutocompleteItem, AutocompleteProvider};
use crate::tui::keybindings;
use crate::tui::keys::{InputEvent, KeyEvent, KeyKind};
use crate::tui::kill_ring::KillRing;
use crate::tui::undo::UndoStack;
use crate::tui::Component;

#[path = "editor_render.rs"]
mod render;

/// Colours a piece of text (wraps it in escape codes).
pub type Style = Box<dyn Fn(&str) -> String + Send>;

/// A paste with more lines or characters than this is collapsed into a marker.
const PASTE_MAX_LINES: usize = 10;
const PASTE_MAX_CHARS: usize = 1000;
const HISTORY_LIMIT: usize = 100;

#[derive(Debug, Clone, PartialEq, Eq)]
struct State {
    lines: Vec<String>,
    line: usize,
    col: usize,
}

impl Default for State {
    fn default() -> Self {
        State {
            lines: vec![String::new()],
            line: 0,
            col: 0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LastAction {
    TypeWord,
    Kill,
    Yank,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Jump {
    Forward,
    Backward,
}

struct Popup {
    items: Vec<AutocompleteItem>,
    selected: usize,
    prefix: String,
    forced: bool,
}

pub struct Editor {
    state: State,
    focused: bool,
    padding_x: usize,
    /// Width text was last laid out at (for vertical motion between renders).
    layout_width: usize,
    scroll_offset: usize,
    terminal_rows: usize,
    border: Style,
    selected_style: Style,
    description_style: Style,
    provider: Option<Box<dyn AutocompleteProvider + Send>>,
    popup: Option<Popup>,
    popup_max_visible: usize,
    pastes: Vec<(u32, String)>,
    paste_counter: u32,
    history: Vec<String>,
    history_index: Option<usize>,
    kill_ring: KillRing,
    last_action: Option<LastAction>,
    jump: Option<Jump>,
    /// Display column vertical motion tries to keep.
    preferred_col: Option<usize>,
    undo: UndoStack<State>,
    submitted: Option<String>,
    disable_submit: bool,
}

impl Default for Editor {
    fn default() -> Self {
        Self::new()
    }
}

impl Editor {
    pub fn new() -> Self {
        Editor {
            state: State::default(),
            focused: true,
            padding_x: 0,
            layout_width: 80,
            scroll_offset: 0,
            terminal_rows: 24,
            border: Box::new(|s| s.to_string()),
            selected_style: Box::new(|s| format!("\x1b[36m{s}\x1b[39m")),
            description_style: Box::new(|s| format!("\x1b[2m{s}\x1b[22m")),
            provider: None,
            popup: None,
            popup_max_visible: 5,
            pastes: Vec::new(),
            paste_counter: 0,
            history: Vec::new(),
            history_index: None,
            kill_ring: KillRing::new(),
            last_action: None,
            jump: None,
            preferred_col: None,
            undo: UndoStack::new(),
            submitted: None,
            disable_submit: false,
        }
    }

    // ----- configuration -------------------------------------------------------------

    /// Colour of the border lines (the app colours it by thinking level).
    pub fn set_border_color(&mut self, style: Style) {
        self.border = style;
    }

    /// Styles of the autocomplete popup's selected row and descriptions.
    pub fn set_popup_styles(&mut self, selected: Style, description: Style) {
        self.selected_style = selected;
        self.description_style = description;
    }

    pub fn set_autocomplete_provider(&mut self, provider: Box<dyn AutocompleteProvider + Send>) {
        self.popup = None;
        self.provider = Some(provider);
    }

    /// Rows shown by the popup (3–20).
    pub fn set_autocomplete_max_visible(&mut self, n: usize) {
        self.popup_max_visible = n.clamp(3, 20);
    }

    /// Whether to emit the cursor marker (only the focused component should).
    pub fn set_focused(&mut self, focused: bool) {
        self.focused = focused;
    }

    /// Terminal height: the editor shows at most 30% of it (at least 5 rows) and pages by
    /// that much.
    pub fn set_terminal_rows(&mut self, rows: usize) {
        self.terminal_rows = rows;
    }

    pub fn set_padding_x(&mut self, padding: usize) {
        self.padding_x = padding;
    }

    /// While set, Enter does nothing (e.g. while a command runs).
    pub fn set_disable_submit(&mut self, disable: bool) {
        self.disable_submit = disable;
    }

    // ----- content -------------------------------------------------------------------

    /// The text as shown (paste markers not expanded).
    pub fn get_text(&self) -> String {
        self.state.lines.join("\n")
    }

    /// The text with paste markers replaced by what was pasted.
    pub fn get_expanded_text(&self) -> String {
        self.expand_markers(&self.get_text())
    }

    pub fn lines(&self) -> &[String] {
        &self.state.lines
    }

    /// Cursor as (line, byte column).
    pub fn cursor(&self) -> (usize, usize) {
        (self.state.line, self.state.col)
    }

    pub fn is_empty(&self) -> bool {
        self.state.lines.len() == 1 && self.state.lines[0].is_empty()
    }

    /// Replaces the text (undoable); the cursor goes to the end.
    pub fn set_text(&mut self, text: &str) {
        self.popup = None;
        self.last_action = None;
        self.history_index = None;
        let normalized = normalize(text);
        if self.get_text() != normalized {
            self.push_undo();
        }
        self.set_text_internal(&normalized);
    }

    /// Inserts text at the cursor as one undoable step.
    pub fn insert_text_at_cursor(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.popup = None;
        self.push_undo();
        self.last_action = None;
        self.history_index = None;
        self.insert_raw(&normalize(text));
    }

    /// The last submitted message, once.
    pub fn take_submitted(&mut self) -> Option<String> {
        self.submitted.take()
    }

    /// Remembers a submission for Up/Down browsing (newest first, no repeats).
    pub fn add_to_history(&mut self, text: &str) {
        let trimmed = text.trim();
        if trimmed.is_empty() || self.history.first().is_some_and(|h| h == trimmed) {
            return;
        }
        self.history.insert(0, trimmed.to_string());
        self.history.truncate(HISTORY_LIMIT);
    }

    pub fn is_showing_autocomplete(&self) -> bool {
        self.popup.is_some()
    }

    pub fn cancel_autocomplete(&mut self) {
        self.popup = None;
    }

    // ----- helpers -------------------------------------------------------------------

    fn marker_ids(&self) -> Vec<u32> {
        self.pastes.iter().map(|(id, _)| *id).collect()
    }

    fn line(&self) -> &str {
        &self.state.lines[self.state.line]
    }

    fn set_col(&mut self, col: usize) {
        self.state.col = col;
        self.preferred_col = None;
    }

    fn push_undo(&mut self) {
        self.undo.push(&self.state);
    }

    fn set_text_internal(&mut self, text: &str) {
        self.state.lines = text.split('\n').map(str::to_string).collect();
        self.state.line = self.state.lines.len() - 1;
        let len = self.line().len();
        self.set_col(len);
        self.scroll_offset = 0;
    }

    fn expand_markers(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (id, content) in &self.pastes {
            for (s, e) in marker_ranges(&out, &[*id]).into_iter().rev() {
                out.replace_range(s..e, content);
            }
        }
        out
    }

    /// Byte length of the grapheme (or marker) before / after the cursor.
    fn grapheme_before(&self) -> usize {
        let ids = self.marker_ids();
        segments(self.line(), &ids)
            .iter()
            .rev()
            .find(|s| s.end <= self.state.col)
            .map_or(0, |s| self.state.col - s.start)
    }

    fn grapheme_after(&self) -> usize {
        let ids = self.marker_ids();
        segments(self.line(), &ids)
            .iter()
            .find(|s| s.start >= self.state.col)
            .map_or(0, |s| s.end - self.state.col)
    }

    fn insert_raw(&mut self, text: &str) {
        let State { lines, line, col } = &mut self.state;
        let after = lines[*line].split_off(*col);
        let mut parts = text.split('\n');
        lines[*line].push_str(parts.next().unwrap_or(""));
        let mut new_col = lines[*line].len();
        for part in parts {
            *line += 1;
            lines.insert(*line, part.to_string());
            new_col = part.len();
        }
        lines[*line].push_str(&after);
        self.set_col(new_col);
    }

    fn visual(&self) -> (Vec<VisualLine>, usize) {
        let vls = visual_lines(&self.state.lines, self.layout_width, &self.marker_ids());
        let cur = find_visual_line(&vls, self.state.line, self.state.col);
        (vls, cur)
    }

    fn max_visible_lines(&self) -> usize {
        (self.terminal_rows * 3 / 10).max(5)
    }
}

/// Line endings to `\n`, tabs to four spaces (as pi stores editor text).
fn normalize(text: &str) -> String {
    text.replace("\r\n", "\n")
        .replace('\r', "\n")
        .replace('\t', "    ")
}

impl Component for Editor {
    fn render(&mut self, width: usize) -> Vec<String> {
        self.render_lines(width)
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        match event {
            InputEvent::Paste(text) => {
                self.handle_paste(text);
                true
            }
            InputEvent::Key(key) if key.kind == KeyKind::Release => false,
            InputEvent::Key(key) => self.handle_key(key),
        }
    }
}

#[path = "editor_edit.rs"]
mod edit;

#[cfg(test)]
#[path = "editor_tests.rs"]
mod tests;

impl Editor {
    fn handle_key(&mut self, k: &KeyEvent) -> bool {
        let kb = keybindings::current();
        let is = |id: &str| kb.matches(k, id);
        if let Some(dir) = self.jump.take() {
            if is("tui.editor.jumpForward") || is("tui.editor.jumpBackward") {
                return true;
            }
            if let Some(c) = k.text() {
                self.jump_to_char(c, dir);
                return true;
            }
        }
        if is("tui.input.copy") {
            return false;
        }
        if is("tui.editor.undo") {
            self.undo_once();
            return true;
        }
        let mut submit_after_completion = false;
        if self.popup.is_some() {
            if is("tui.select.cancel") {
                self.popup = None;
                return true;
            }
            if is("tui.select.up") || is("tui.select.down") {
                if let Some(p) = self.popup.as_mut() {
                    let n = p.items.len();
                    p.selected = if is("tui.select.up") {
                        (p.selected + n - 1) % n
                    } else {
                        (p.selected + 1) % n
                    };
                }
                return true;
            }
            if is("tui.input.tab") {
                self.accept_completion();
                return true;
            }
            if is("tui.select.confirm") {
                let slash = self
                    .popup
                    .as_ref()
                    .is_some_and(|p| p.prefix.starts_with('/'));
                self.accept_completion();
                if !slash {
                    return true;
                }
                submit_after_completion = true;
            }
        }
        if !submit_after_completion {
            if is("tui.input.tab") {
                self.tab_completion();
                return true;
            }
            if let Some(handled) = self.handle_edit_key(k) {
                return handled;
            }
        }
        if is("tui.input.submit") || submit_after_completion {
            if self.disable_submit {
                return true;
            }
            if self.state.col > 0 && self.line()[..self.state.col].ends_with('\\') {
                self.delete_char_backward();
                self.new_line();
                return true;
            }
            self.submit();
            return true;
        }
        self.handle_motion_key(k)
    }

    fn handle_motion_key(&mut self, k: &KeyEvent) -> bool {
        let kb = keybindings::current();
        let is = |id: &str| kb.matches(k, id);
        // The dedicated history keys (unbound by default) work wherever the cursor is.
        if is("tui.editor.historyPrevious") {
            self.navigate_history(-1);
        } else if is("tui.editor.historyNext") {
            self.navigate_history(1);
        } else if is("tui.editor.cursorUp") {
            let (_, cur) = self.visual();
            if self.is_empty() || (self.history_index.is_some() && cur == 0) {
                self.navigate_history(-1);
            } else if cur == 0 {
                self.last_action = None;
                self.set_col(0);
            } else {
                self.move_vertical(-1);
            }
        } else if is("tui.editor.cursorDown") {
            let (vls, cur) = self.visual();
            let last = cur + 1 >= vls.len();
            if self.history_index.is_some() && last {
                self.navigate_history(1);
            } else if last {
                self.last_action = None;
                let len = self.line().len();
                self.set_col(len);
            } else {
                self.move_vertical(1);
            }
        } else if is("tui.editor.cursorRight") {
            self.move_right();
        } else if is("tui.editor.cursorLeft") {
            self.move_left();
        } else if is("tui.editor.pageUp") {
            self.move_vertical(-(self.max_visible_lines() as isize));
        } else if is("tui.editor.pageDown") {
            self.move_vertical(self.max_visible_lines() as isize);
        } else if is("tui.editor.jumpForward") {
            self.jump = Some(Jump::Forward);
        } else if is("tui.editor.jumpBackward") {
            self.jump = Some(Jump::Backward);
        } else if let Some(c) = k.text() {
            self.insert_char(c);
        } else {
            return false;
        }
        true
    }

    fn accept_completion(&mut self) {
        let Some(popup) = self.popup.take() else {
            return;
        };
        let (Some(provider), Some(item)) =
            (self.provider.as_ref(), popup.items.get(popup.selected))
        else {
            return;
        };
        let done = provider.apply(
            &self.state.lines,
            self.state.line,
            self.state.col,
            item,
            &popup.prefix,
        );
        self.undo.push(&self.state);
        self.last_action = None;
        self.state.lines = done.lines;
        self.state.line = done.cursor_line.min(self.state.lines.len() - 1);
        let col = done.cursor_col.min(self.line().len());
        self.set_col(col);
    }

    /// Asks the provider for suggestions at the cursor and shows (or hides) the popup.
    /// An explicit Tab with a single candidate completes it directly.
    fn request_autocomplete(&mut self, force: bool, explicit_tab: bool) {
        let Some(provider) = self.provider.as_ref() else {
            return;
        };
        let (lines, line, col) = (&self.state.lines, self.state.line, self.state.col);
        if force && !provider.should_trigger_file_completion(lines, line, col) {
            return;
        }
        let Some(s) = provider
            .suggestions(lines, line, col, force)
            .filter(|s| !s.items.is_empty())
        else {
            self.popup = None;
            return;
        };
        if force && explicit_tab && s.items.len() == 1 {
            self.popup = Some(Popup {
                items: s.items,
                selected: 0,
                prefix: s.prefix,
                forced: true,
            });
            self.accept_completion();
            return;
        }
        let best = s
            .items
            .iter()
            .position(|i| i.value == s.prefix)
            .or_else(|| s.items.iter().position(|i| i.value.starts_with(&s.prefix)))
            .filter(|_| !s.prefix.is_empty())
            .unwrap_or(0);
        self.popup = Some(Popup {
            items: s.items,
            selected: best,
            prefix: s.prefix,
            forced: force,
        });
    }

    fn tab_completion(&mut self) {
        let before = &self.line()[..self.state.col];
        if self.in_slash_context(before) && !before.trim_start().contains(' ') {
            self.request_autocomplete(false, true);
        } else {
            self.request_autocomplete(true, true);
        }
    }

    fn in_slash_context(&self, before: &str) -> bool {
        self.state.line == 0 && before.trim_start().starts_with('/')
    }

    /// After an edit: refresh an open popup, or open one where pi would.
    fn refresh_autocomplete(&mut self, typed: Option<char>) {
        if let Some(p) = &self.popup {
            let forced = p.forced;
            self.request_autocomplete(forced, false);
            return;
        }
        let before = self.line()[..self.state.col].to_string();
        let at_token = |t: &str| {
            let start = t.rfind(char::is_whitespace).map_or(0, |i| i + 1);
            t[start..].starts_with(['@', '#'])
        };
        let trigger = match typed {
            Some('/') => self.state.line == 0 && matches!(before.trim(), "" | "/"),
            Some('@' | '#') => {
                let prev = before[..before.len() - 1].chars().last();
                !matches!(prev, Some(c) if c != ' ' && c != '\t')
            }
            Some(c) if !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')) => false,
            _ => self.in_slash_context(&before) || at_token(&before),
        };
        if trigger {
            self.request_autocomplete(false, false);
        }
    }
}
