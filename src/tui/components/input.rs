//! A single-line text input (`> ` prompt) with horizontal scrolling, for dialogs and
//! pickers. It shares the editor's key actions (motions, kills, yank, undo); Enter makes
//! the value available through [`Input::take_submitted`] and Escape through
//! [`Input::take_cancelled`].

use super::editor_layout::{is_punctuation, is_whitespace, segments};
use crate::tui::keybindings;
use crate::tui::keys::{InputEvent, KeyEvent, KeyKind};
use crate::tui::kill_ring::KillRing;
use crate::tui::text::{slice_by_column, visible_width};
use crate::tui::undo::UndoStack;
use crate::tui::{Component, CURSOR_MARKER};

const PROMPT: &str = "> ";

#[derive(Default)]
pub struct Input {
    value: String,
    /// Byte offset of the cursor, on a grapheme boundary.
    cursor: usize,
    focused: bool,
    kill_ring: KillRing,
    last_was_kill: bool,
    last_was_yank: bool,
    /// Whether the last edit typed a word character (typing runs undo as one step).
    typing: bool,
    undo: UndoStack<(String, usize)>,
    submitted: Option<String>,
    cancelled: bool,
}

impl Input {
    pub fn new() -> Self {
        Input {
            focused: true,
            ..Self::default()
        }
    }

    pub fn value(&self) -> &str {
        &self.value
    }

    pub fn set_value(&mut self, value: &str) {
        self.value = value.replace(['\r', '\n'], " ");
        self.cursor = self.value.len();
    }

    pub fn set_focused(&mut self, focused: bool) {
        self.focused = focused;
    }

    /// The value submitted with Enter, once.
    pub fn take_submitted(&mut self) -> Option<String> {
        self.submitted.take()
    }

    /// Whether Escape was pressed since the last call.
    pub fn take_cancelled(&mut self) -> bool {
        std::mem::take(&mut self.cancelled)
    }

    fn boundary_before(&self, col: usize) -> usize {
        segments(&self.value, &[])
            .iter()
            .rev()
            .find(|s| s.end <= col)
            .map_or(0, |s| s.start)
    }

    fn boundary_after(&self, col: usize) -> usize {
        segments(&self.value, &[])
            .iter()
            .find(|s| s.start >= col)
            .map_or(self.value.len(), |s| s.end)
    }

    fn word_left(&self) -> usize {
        let v = &self.value;
        let segs: Vec<_> = segments(v, &[])
            .into_iter()
            .filter(|s| s.end <= self.cursor)
            .collect();
        let mut i = segs.len();
        while i > 0 && is_whitespace(segs[i - 1].text(v)) {
            i -= 1;
        }
        let punct = i > 0 && is_punctuation(segs[i - 1].text(v));
        while i > 0 {
            let t = segs[i - 1].text(v);
            let same = if punct {
                is_punctuation(t)
            } else {
                !is_whitespace(t) && !is_punctuation(t)
            };
            if !same {
                break;
            }
            i -= 1;
        }
        if i == 0 {
            0
        } else {
            segs[i - 1].end
        }
    }

    fn word_right(&self) -> usize {
        let v = &self.value;
        let segs: Vec<_> = segments(v, &[])
            .into_iter()
            .filter(|s| s.start >= self.cursor)
            .collect();
        let mut i = 0;
        while i < segs.len() && is_whitespace(segs[i].text(v)) {
            i += 1;
        }
        let punct = i < segs.len() && is_punctuation(segs[i].text(v));
        while i < segs.len() {
            let t = segs[i].text(v);
            let same = if punct {
                is_punctuation(t)
            } else {
                !is_whitespace(t) && !is_punctuation(t)
            };
            if !same {
                break;
            }
            i += 1;
        }
        segs.get(i).map_or(v.len(), |s| s.start)
    }

    fn snapshot(&mut self) {
        self.undo.push(&(self.value.clone(), self.cursor));
    }

    fn kill(&mut self, from: usize, to: usize, backward: bool) {
        if from >= to {
            return;
        }
        self.snapshot();
        let killed: String = self.value.drain(from..to).collect();
        self.kill_ring.push(&killed, self.last_was_kill, backward);
        self.cursor = from;
        self.last_was_kill = true;
    }

    fn insert(&mut self, text: &str) {
        self.value.insert_str(self.cursor, text);
        self.cursor += text.len();
    }

    fn handle_key(&mut self, k: &KeyEvent) -> bool {
        let kb = keybindings::current();
        let is = |id: &str| kb.matches(k, id);
        let (was_kill, was_yank) = (self.last_was_kill, self.last_was_yank);
        self.last_was_kill = false;
        self.last_was_yank = false;
        let typing = std::mem::take(&mut self.typing);
        if is("tui.select.cancel") {
            self.cancelled = true;
        } else if is("tui.editor.undo") {
            if let Some((v, c)) = self.undo.pop() {
                self.value = v;
                self.cursor = c;
            }
        } else if is("tui.input.submit") || k.matches("ctrl+j") {
            self.submitted = Some(self.value.clone());
        } else if is("tui.editor.deleteCharBackward") {
            let from = self.boundary_before(self.cursor);
            if from < self.cursor {
                self.snapshot();
                self.value.replace_range(from..self.cursor, "");
                self.cursor = from;
            }
        } else if is("tui.editor.deleteCharForward") {
            let to = self.boundary_after(self.cursor);
            if to > self.cursor {
                self.snapshot();
                self.value.replace_range(self.cursor..to, "");
            }
        } else if is("tui.editor.deleteWordBackward") {
            self.last_was_kill = was_kill;
            self.kill(self.word_left(), self.cursor, true);
        } else if is("tui.editor.deleteWordForward") {
            self.last_was_kill = was_kill;
            self.kill(self.cursor, self.word_right(), false);
        } else if is("tui.editor.deleteToLineStart") {
            self.last_was_kill = was_kill;
            self.kill(0, self.cursor, true);
        } else if is("tui.editor.deleteToLineEnd") {
            self.last_was_kill = was_kill;
            self.kill(self.cursor, self.value.len(), false);
        } else if is("tui.editor.yank") {
            if let Some(text) = self.kill_ring.peek().map(str::to_string) {
                self.snapshot();
                self.insert(&text);
                self.last_was_yank = true;
            }
        } else if is("tui.editor.yankPop") {
            if was_yank && self.kill_ring.len() > 1 {
                self.snapshot();
                let len = self.kill_ring.peek().map_or(0, str::len);
                self.value.replace_range(self.cursor - len..self.cursor, "");
                self.cursor -= len;
                self.kill_ring.rotate();
                let text = self.kill_ring.peek().unwrap_or("").to_string();
                self.insert(&text);
                self.last_was_yank = true;
            }
        } else if is("tui.editor.cursorLeft") {
            self.cursor = self.boundary_before(self.cursor);
        } else if is("tui.editor.cursorRight") {
            self.cursor = self.boundary_after(self.cursor);
        } else if is("tui.editor.cursorLineStart") {
            self.cursor = 0;
        } else if is("tui.editor.cursorLineEnd") {
            self.cursor = self.value.len();
        } else if is("tui.editor.cursorWordLeft") {
            self.cursor = self.word_left();
        } else if is("tui.editor.cursorWordRight") {
            self.cursor = self.word_right();
        } else if let Some(c) = k.text() {
            if c.is_whitespace() || !typing {
                self.snapshot();
            }
            self.typing = !c.is_whitespace();
            self.insert(c.encode_utf8(&mut [0; 4]));
        } else {
            return false;
        }
        true
    }
}

impl Component for Input {
    fn render(&mut self, width: usize) -> Vec<String> {
        let available = width.saturating_sub(PROMPT.len());
        if available == 0 {
            return vec![PROMPT[..width.min(PROMPT.len())].to_string()];
        }
        let total = visible_width(&self.value);
        let cursor_col = visible_width(&self.value[..self.cursor]);
        let (visible, before_width) = if total < available {
            (self.value.clone(), cursor_col)
        } else {
            // Scroll so the cursor stays roughly centred; keep a column for the cursor
            // when it sits at the end.
            let span = if self.cursor == self.value.len() {
                available - 1
            } else {
                available
            };
            let half = span / 2;
            let start = if cursor_col < half {
                0
            } else if cursor_col > total.saturating_sub(half) {
                total.saturating_sub(span)
            } else {
                cursor_col - half
            };
            let shown = slice_by_column(&self.value, start, span, true);
            let before = slice_by_column(&self.value, start, cursor_col - start, true);
            (shown, visible_width(&before))
        };
        let split = slice_by_column(&visible, 0, before_width, true).len();
        let (before, rest) = visible.split_at(split.min(visible.len()));
        let under = segments(rest, &[]).first().map_or(" ", |s| s.text(rest));
        let after = rest.get(under.len()..).unwrap_or("");
        let marker = if self.focused { CURSOR_MARKER } else { "" };
        let line = format!("{before}{marker}\x1b[7m{under}\x1b[27m{after}");
        let fill = " ".repeat(available.saturating_sub(visible_width(&line)));
        vec![format!("{PROMPT}{line}{fill}")]
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        match event {
            InputEvent::Paste(text) => {
                self.snapshot();
                let clean: String = text
                    .replace("\r\n", "")
                    .chars()
                    .filter(|c| !matches!(c, '\r' | '\n'))
                    .map(|c| if c == '\t' { ' ' } else { c })
                    .filter(|c| !c.is_control())
                    .collect();
                self.insert(&clean);
                true
            }
            InputEvent::Key(k) if k.kind == KeyKind::Release => false,
            InputEvent::Key(k) => self.handle_key(k),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::keys::{parse_key_id, KeyCode};
    use crate::tui::text::strip_ansi;

    fn key(id: &str) -> InputEvent {
        InputEvent::Key(parse_key_id(id).unwrap())
    }
    fn typed(input: &mut Input, s: &str) {
        for c in s.chars() {
            input.handle_input(&InputEvent::Key(KeyEvent::plain(KeyCode::Char(c))));
        }
    }

    #[test]
    fn edits_kills_yanks_and_submits() {
        let mut i = Input::new();
        typed(&mut i, "hello big world");
        i.handle_input(&key("ctrl+w"));
        i.handle_input(&key("ctrl+w"));
        assert_eq!(i.value(), "hello ");
        i.handle_input(&key("ctrl+a"));
        i.handle_input(&key("ctrl+y"));
        assert_eq!(i.value(), "big worldhello ");
        i.handle_input(&key("ctrl+-"));
        assert_eq!(i.value(), "hello ");
        i.handle_input(&key("alt+f"));
        assert_eq!(i.cursor, 5);
        assert!(i.handle_input(&key("enter")));
        assert_eq!(i.take_submitted().as_deref(), Some("hello "));
        assert!(i.handle_input(&key("escape")));
        assert!(i.take_cancelled());
        assert!(!i.handle_input(&key("ctrl+p")));
        i.handle_input(&InputEvent::Paste("a\nb\tc".into()));
        assert_eq!(i.value(), "helloab c ");
    }

    #[test]
    fn scrolls_horizontally_keeping_the_cursor_visible() {
        let mut i = Input::new();
        typed(&mut i, &"中".repeat(30));
        let line = &i.render(20)[0];
        assert_eq!(visible_width(line), 20);
        let before = &line[..line.find(CURSOR_MARKER).unwrap()];
        assert_eq!(visible_width(before), 19 - 1);
        i.handle_input(&key("home"));
        let line = strip_ansi(&i.render(20)[0]);
        assert!(line.starts_with("> 中中"), "{line}");
        assert_eq!(visible_width(&line), 20);
    }
}
