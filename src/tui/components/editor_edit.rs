//! The editor's editing operations: inserting, deleting, killing and yanking, word and
//! vertical motion, jumps, history, undo, pastes and submission.

use super::{Editor, Jump, LastAction, State, HISTORY_LIMIT, PASTE_MAX_CHARS, PASTE_MAX_LINES};
use crate::tui::components::editor_layout::{
    col_at, column_of, find_visual_line, is_punctuation, is_whitespace, segments, visual_lines,
    Segment,
};
use crate::tui::keybindings;
use crate::tui::keys::{KeyCode, KeyEvent};

impl Editor {
    /// Deletion, kill-ring, newline and word-motion keys. `None` when `k` is none of them.
    pub(super) fn handle_edit_key(&mut self, k: &KeyEvent) -> Option<bool> {
        let kb = keybindings::current();
        let is = |id: &str| kb.matches(k, id);
        if is("tui.editor.deleteToLineEnd") {
            self.kill_to_line_end();
        } else if is("tui.editor.deleteToLineStart") {
            self.kill_to_line_start();
        } else if is("tui.editor.deleteWordBackward") {
            self.kill_word_backward();
        } else if is("tui.editor.deleteWordForward") {
            self.kill_word_forward();
        } else if is("tui.editor.deleteCharBackward") || k.matches("shift+backspace") {
            self.delete_char_backward();
            self.refresh_autocomplete(None);
        } else if is("tui.editor.deleteCharForward") || k.matches("shift+delete") {
            self.delete_char_forward();
            self.refresh_autocomplete(None);
        } else if is("tui.editor.yank") {
            self.yank();
        } else if is("tui.editor.yankPop") {
            self.yank_pop();
        } else if is("tui.editor.cursorLineStart") {
            self.last_action = None;
            self.set_col(0);
        } else if is("tui.editor.cursorLineEnd") {
            self.last_action = None;
            let len = self.line().len();
            self.set_col(len);
        } else if is("tui.editor.cursorWordLeft") {
            self.last_action = None;
            let col = self.word_left();
            self.set_col(col);
        } else if is("tui.editor.cursorWordRight") {
            self.last_action = None;
            let col = self.word_right();
            self.set_col(col);
        } else if is("tui.input.newLine")
            || k.matches("ctrl+j")
            || (k.code == KeyCode::Enter && (k.mods.alt || k.mods.shift))
        {
            self.new_line();
        } else {
            return None;
        }
        Some(true)
    }

    pub(super) fn insert_char(&mut self, c: char) {
        self.history_index = None;
        if c.is_whitespace() || self.last_action != Some(LastAction::TypeWord) {
            self.push_undo();
        }
        self.last_action = Some(LastAction::TypeWord);
        let mut buf = [0; 4];
        let s = c.encode_utf8(&mut buf);
        let col = self.state.col;
        self.state.lines[self.state.line].insert_str(col, s);
        self.set_col(col + s.len());
        self.refresh_autocomplete(Some(c));
    }

    pub(super) fn new_line(&mut self) {
        self.popup = None;
        self.history_index = None;
        self.last_action = None;
        self.push_undo();
        let State { lines, line, col } = &mut self.state;
        let rest = lines[*line].split_off(*col);
        *line += 1;
        lines.insert(*line, rest);
        self.set_col(0);
    }

    /// Joins the current line onto the previous one; the cursor stays at the seam.
    fn join_with_previous(&mut self) {
        let State { lines, line, .. } = &mut self.state;
        let current = lines.remove(*line);
        *line -= 1;
        let seam = lines[*line].len();
        lines[*line].push_str(&current);
        self.set_col(seam);
    }

    fn join_with_next(&mut self) {
        let State { lines, line, .. } = &mut self.state;
        let next = lines.remove(*line + 1);
        lines[*line].push_str(&next);
    }

    pub(super) fn delete_char_backward(&mut self) {
        self.history_index = None;
        self.last_action = None;
        if self.state.col > 0 {
            self.push_undo();
            let n = self.grapheme_before().max(1);
            let col = self.state.col - n;
            self.state.lines[self.state.line].replace_range(col..self.state.col, "");
            self.set_col(col);
        } else if self.state.line > 0 {
            self.push_undo();
            self.join_with_previous();
        }
    }

    fn delete_char_forward(&mut self) {
        self.history_index = None;
        self.last_action = None;
        let col = self.state.col;
        if col < self.line().len() {
            self.push_undo();
            let n = self.grapheme_after().max(1);
            self.state.lines[self.state.line].replace_range(col..col + n, "");
        } else if self.state.line + 1 < self.state.lines.len() {
            self.push_undo();
            self.join_with_next();
        }
    }

    fn kill(&mut self, text: &str, backward: bool, was_kill: bool) {
        self.kill_ring.push(text, was_kill, backward);
        self.last_action = Some(LastAction::Kill);
    }

    fn kill_to_line_start(&mut self) {
        self.history_index = None;
        let was_kill = self.last_action == Some(LastAction::Kill);
        let col = self.state.col;
        if col > 0 {
            self.push_undo();
            let killed: String = self.state.lines[self.state.line].drain(..col).collect();
            self.kill(&killed, true, was_kill);
            self.set_col(0);
        } else if self.state.line > 0 {
            self.push_undo();
            self.kill("\n", true, was_kill);
            self.join_with_previous();
        }
    }

    fn kill_to_line_end(&mut self) {
        self.history_index = None;
        let was_kill = self.last_action == Some(LastAction::Kill);
        let col = self.state.col;
        if col < self.line().len() {
            self.push_undo();
            let killed = self.state.lines[self.state.line].split_off(col);
            self.kill(&killed, false, was_kill);
        } else if self.state.line + 1 < self.state.lines.len() {
            self.push_undo();
            self.kill("\n", false, was_kill);
            self.join_with_next();
        }
    }

    fn kill_word_backward(&mut self) {
        self.history_index = None;
        let was_kill = self.last_action == Some(LastAction::Kill);
        if self.state.col == 0 {
            if self.state.line > 0 {
                self.push_undo();
                self.kill("\n", true, was_kill);
                self.join_with_previous();
            }
            return;
        }
        self.push_undo();
        let (from, to) = (self.word_left(), self.state.col);
        let killed: String = self.state.lines[self.state.line].drain(from..to).collect();
        self.kill(&killed, true, was_kill);
        self.set_col(from);
    }

    fn kill_word_forward(&mut self) {
        self.history_index = None;
        let was_kill = self.last_action == Some(LastAction::Kill);
        if self.state.col >= self.line().len() {
            if self.state.line + 1 < self.state.lines.len() {
                self.push_undo();
                self.kill("\n", false, was_kill);
                self.join_with_next();
            }
            return;
        }
        self.push_undo();
        let (from, to) = (self.state.col, self.word_right());
        let killed: String = self.state.lines[self.state.line].drain(from..to).collect();
        self.kill(&killed, false, was_kill);
    }

    fn yank(&mut self) {
        let Some(text) = self.kill_ring.peek().map(str::to_string) else {
            return;
        };
        self.push_undo();
        self.history_index = None;
        self.insert_raw(&text);
        self.last_action = Some(LastAction::Yank);
    }

    /// Replaces the text just yanked with the previous kill-ring entry.
    fn yank_pop(&mut self) {
        if self.last_action != Some(LastAction::Yank) || self.kill_ring.len() <= 1 {
            return;
        }
        self.push_undo();
        let yanked = self.kill_ring.peek().unwrap_or("").to_string();
        let parts: Vec<&str> = yanked.split('\n').collect();
        let start_line = self.state.line + 1 - parts.len();
        let start_col = if parts.len() == 1 {
            self.state.col - yanked.len()
        } else {
            self.state.lines[start_line].len() - parts[0].len()
        };
        let after = self.state.lines[self.state.line].split_off(self.state.col);
        self.state.lines.drain(start_line + 1..=self.state.line);
        self.state.lines[start_line].truncate(start_col);
        self.state.lines[start_line].push_str(&after);
        self.state.line = start_line;
        self.set_col(start_col);
        self.kill_ring.rotate();
        let text = self.kill_ring.peek().unwrap_or("").to_string();
        self.insert_raw(&text);
        self.last_action = Some(LastAction::Yank);
    }

    /// Column after moving one word left: skip whitespace, then a run of punctuation or of
    /// word characters (a paste marker is one word); at column 0, the previous line's end.
    fn word_left(&mut self) -> usize {
        if self.state.col == 0 {
            if self.state.line > 0 {
                self.state.line -= 1;
                return self.line().len();
            }
            return 0;
        }
        let line = self.line();
        let mut segs = segments(line, &self.marker_ids());
        segs.retain(|s| s.end <= self.state.col);
        let ws = |s: &Segment| !s.is_marker && is_whitespace(s.text(line));
        while segs.last().is_some_and(ws) {
            segs.pop();
        }
        match segs.last() {
            Some(s) if s.is_marker => {
                segs.pop();
            }
            Some(s) if is_punctuation(s.text(line)) => {
                while segs
                    .last()
                    .is_some_and(|s| !s.is_marker && is_punctuation(s.text(line)))
                {
                    segs.pop();
                }
            }
            Some(_) => {
                while segs.last().is_some_and(|s| {
                    !s.is_marker && !is_whitespace(s.text(line)) && !is_punctuation(s.text(line))
                }) {
                    segs.pop();
                }
            }
            None => {}
        }
        segs.last().map_or(0, |s| s.end)
    }

    fn word_right(&mut self) -> usize {
        if self.state.col >= self.line().len() {
            if self.state.line + 1 < self.state.lines.len() {
                self.state.line += 1;
                return 0;
            }
            return self.state.col;
        }
        let line = self.line();
        let segs = segments(line, &self.marker_ids());
        let mut it = segs.iter().filter(|s| s.start >= self.state.col).peekable();
        let mut col = self.state.col;
        while let Some(s) = it.next_if(|s| !s.is_marker && is_whitespace(s.text(line))) {
            col = s.end;
        }
        if let Some(first) = it.next() {
            col = first.end;
            let punct = is_punctuation(first.text(line));
            if !first.is_marker {
                while let Some(s) = it.next_if(|s| {
                    !s.is_marker
                        && if punct {
                            is_punctuation(s.text(line))
                        } else {
                            !is_whitespace(s.text(line)) && !is_punctuation(s.text(line))
                        }
                }) {
                    col = s.end;
                }
            }
        }
        col
    }

    pub(super) fn move_left(&mut self) {
        self.last_action = None;
        if self.state.col > 0 {
            let col = self.state.col - self.grapheme_before().max(1);
            self.set_col(col);
        } else if self.state.line > 0 {
            self.state.line -= 1;
            let len = self.line().len();
            self.set_col(len);
        }
    }

    pub(super) fn move_right(&mut self) {
        self.last_action = None;
        if self.state.col < self.line().len() {
            let col = self.state.col + self.grapheme_after().max(1);
            self.set_col(col);
        } else if self.state.line + 1 < self.state.lines.len() {
            self.state.line += 1;
            self.set_col(0);
        }
    }

    /// Moves `delta` visual rows, keeping the display column (clamped at the ends).
    pub(super) fn move_vertical(&mut self, delta: isize) {
        self.last_action = None;
        let ids = self.marker_ids();
        let vls = visual_lines(&self.state.lines, self.layout_width, &ids);
        let cur = find_visual_line(&vls, self.state.line, self.state.col);
        let target = (cur as isize + delta).clamp(0, vls.len() as isize - 1) as usize;
        if target == cur {
            return;
        }
        let cvl = vls[cur];
        let x = column_of(&self.state.lines[cvl.line], &cvl, self.state.col, &ids);
        let want = self.preferred_col.unwrap_or(x);
        let tvl = vls[target];
        let last_row = !matches!(vls.get(target + 1), Some(n) if n.line == tvl.line);
        self.state.line = tvl.line;
        self.state.col = col_at(&self.state.lines[tvl.line], &tvl, want, last_row, &ids);
        self.preferred_col = Some(want);
    }

    pub(super) fn jump_to_char(&mut self, c: char, dir: Jump) {
        self.last_action = None;
        let (line, col) = (self.state.line, self.state.col);
        let found = match dir {
            Jump::Forward => (line..self.state.lines.len()).find_map(|i| {
                let l = &self.state.lines[i];
                let from = if i == line {
                    col + l[col..].chars().next().map_or(0, char::len_utf8)
                } else {
                    0
                };
                l[from..].find(c).map(|p| (i, from + p))
            }),
            Jump::Backward => (0..=line).rev().find_map(|i| {
                let l = &self.state.lines[i];
                let to = if i == line { col } else { l.len() };
                l[..to].rfind(c).map(|p| (i, p))
            }),
        };
        if let Some((i, p)) = found {
            self.state.line = i;
            self.set_col(p);
        }
    }

    pub(super) fn navigate_history(&mut self, direction: isize) {
        self.last_action = None;
        if self.history.is_empty() {
            return;
        }
        let current = self.history_index.map_or(-1, |i| i as isize);
        let next = current - direction;
        if next < -1 || next >= self.history.len() as isize {
            return;
        }
        if current == -1 {
            self.push_undo();
        }
        if next == -1 {
            self.history_index = None;
            self.set_text_internal("");
        } else {
            self.history_index = Some(next as usize);
            let text = self.history[next as usize].clone();
            self.set_text_internal(&text);
        }
        debug_assert!(self.history.len() <= HISTORY_LIMIT);
    }

    pub(super) fn undo_once(&mut self) {
        self.history_index = None;
        if let Some(snapshot) = self.undo.pop() {
            self.state = snapshot;
            self.last_action = None;
            self.preferred_col = None;
        }
    }

    pub(super) fn handle_paste(&mut self, pasted: &str) {
        self.popup = None;
        self.history_index = None;
        self.last_action = None;
        self.push_undo();
        let mut text: String = normalize_paste(pasted);
        if text.starts_with(['/', '~', '.']) {
            let before = self.line()[..self.state.col].chars().last();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                text.insert(0, ' ');
            }
        }
        let line_count = text.split('\n').count();
        let char_count = text.chars().count();
        if line_count > PASTE_MAX_LINES || char_count > PASTE_MAX_CHARS {
            self.paste_counter += 1;
            let id = self.paste_counter;
            let marker = if line_count > PASTE_MAX_LINES {
                format!("[paste #{id} +{line_count} lines]")
            } else {
                format!("[paste #{id} {char_count} chars]")
            };
            self.pastes.push((id, text));
            self.insert_raw(&marker);
        } else {
            self.insert_raw(&text);
        }
    }

    pub(super) fn submit(&mut self) {
        self.popup = None;
        let result = self.get_expanded_text().trim().to_string();
        self.state = State::default();
        self.pastes.clear();
        self.paste_counter = 0;
        self.history_index = None;
        self.scroll_offset = 0;
        self.undo.clear();
        self.last_action = None;
        self.preferred_col = None;
        self.submitted = Some(result);
    }
}

/// Pasted text as the editor stores it: Kitty-encoded Ctrl+letters decoded, line endings
/// and tabs normalized, other control characters dropped.
fn normalize_paste(pasted: &str) -> String {
    let mut decoded = String::with_capacity(pasted.len());
    let mut rest = pasted;
    while let Some(i) = rest.find("\x1b[") {
        decoded.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let ctrl = after[digits..]
            .strip_prefix(";5u")
            .and_then(|_| after[..digits].parse::<u32>().ok())
            .and_then(|cp| match cp {
                97..=122 => char::from_u32(cp - 96),
                65..=90 => char::from_u32(cp - 64),
                _ => None,
            });
        match ctrl {
            Some(c) => {
                decoded.push(c);
                rest = &after[digits + 3..];
            }
            None => {
                decoded.push_str("\x1b[");
                rest = after;
            }
        }
    }
    decoded.push_str(rest);
    super::normalize(&decoded)
        .chars()
        .filter(|&c| c == '\n' || (c >= ' ' && c != '\x7f'))
        .collect()
}
