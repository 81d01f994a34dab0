//! Text selection over rendered lines, for a UI that owns the mouse (the fullscreen mode): a
//! range between two cells, the selected text as the user sees it (escapes stripped, trailing
//! blanks dropped per row), the inverse-video highlight, and the word and line a double or
//! triple click picks.

use super::text::{pieces, slice_by_column, strip_ansi, visible_width, Piece};

/// A cell in content coordinates (row of the rendered lines, column on screen).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cell {
    pub row: usize,
    pub col: usize,
}

/// A selected range: from `start` (inclusive) to `end` (exclusive column on `end.row`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub start: Cell,
    pub end: Cell,
}

impl Range {
    /// The range a drag from `anchor` to `focus` covers, both cells included; `None` when it
    /// is a single point (a click).
    pub fn between(anchor: Cell, focus: Cell) -> Option<Range> {
        if anchor == focus {
            return None;
        }
        let (start, last) = if anchor < focus {
            (anchor, focus)
        } else {
            (focus, anchor)
        };
        Some(Range {
            start,
            end: Cell {
                row: last.row,
                col: last.col + 1,
            },
        })
    }

    /// The selected columns of `row` in a line `width` wide (`None`: row not selected).
    pub fn columns(&self, row: usize, width: usize) -> Option<(usize, usize)> {
        if row < self.start.row || row > self.end.row {
            return None;
        }
        let from = if row == self.start.row {
            self.start.col
        } else {
            0
        };
        let to = if row == self.end.row {
            self.end.col
        } else {
            width
        };
        let (from, to) = (from.min(width), to.min(width));
        (to > from).then_some((from, to))
    }

    /// The selected text of `lines`: rows joined by newlines, each without trailing blanks.
    pub fn text(&self, lines: &[String]) -> String {
        let mut rows = Vec::new();
        for row in self.start.row..=self.end.row {
            let line = lines.get(row).map(String::as_str).unwrap_or("");
            let text = match self.columns(row, visible_width(line)) {
                Some((from, to)) => strip_ansi(&slice_by_column(line, from, to - from, true)),
                None => String::new(),
            };
            rows.push(text.trim_end().to_string());
        }
        rows.join("\n")
    }
}

/// `line` with columns `from..to` in inverse video. Styles inside keep applying; the inverse
/// is set again after every SGR so a reset in the text does not end it.
pub fn highlight(line: &str, from: usize, to: usize) -> String {
    let width = visible_width(line);
    let (from, to) = (from.min(width), to.min(width));
    if to <= from {
        return line.to_string();
    }
    let before = slice_by_column(line, 0, from, true);
    let middle = slice_by_column(line, from, to - from, true);
    let after = slice_by_column(line, to, width - to, true);
    let mut out = format!("{before}\x1b[7m");
    for piece in pieces(&middle) {
        match piece {
            Piece::Escape(e) => {
                out.push_str(e);
                if e.starts_with("\x1b[") && e.ends_with('m') {
                    out.push_str("\x1b[7m");
                }
            }
            Piece::Cluster(c, _) => out.push_str(c),
        }
    }
    out.push_str("\x1b[27m");
    out.push_str(&after);
    out
}

/// Characters that keep a word whole besides letters and digits, as terminals do: paths and
/// kebab-case names select as one word.
fn is_word_char(c: &str) -> bool {
    c.chars()
        .all(|ch| ch.is_alphanumeric() || matches!(ch, '_' | '/' | '-' | '.'))
}

/// The word under column `col` of `line` (a double click): its columns, end exclusive.
pub fn word_at(line: &str, col: usize) -> Option<(usize, usize)> {
    let mut cells: Vec<(usize, usize, bool)> = Vec::new();
    let mut at = 0;
    for piece in pieces(line) {
        if let Piece::Cluster(c, w) = piece {
            cells.push((at, at + w, is_word_char(c)));
            at += w;
        }
    }
    let index = cells.iter().position(|&(s, e, _)| col >= s && col < e)?;
    if !cells[index].2 {
        return None;
    }
    let mut first = index;
    while first > 0 && cells[first - 1].2 {
        first -= 1;
    }
    let mut last = index;
    while last + 1 < cells.len() && cells[last + 1].2 {
        last += 1;
    }
    Some((cells[first].0, cells[last].1))
}

/// The non-blank extent of `line` (a triple click): its columns, end exclusive.
pub fn line_extent(line: &str) -> Option<(usize, usize)> {
    let text = strip_ansi(line);
    let trimmed_start = text.len() - text.trim_start().len();
    let start = visible_width(&text[..trimmed_start]);
    let end = visible_width(text.trim_end());
    (end > start).then_some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(row: usize, col: usize) -> Cell {
        Cell { row, col }
    }

    #[test]
    fn a_drag_selects_whole_cells_in_either_direction_and_a_click_selects_nothing() {
        let lines: Vec<String> = vec![
            " \x1b[1mfirst\x1b[0m line   ".into(),
            "second line".into(),
            "third".into(),
        ];
        let down = Range::between(cell(0, 7), cell(1, 5)).unwrap();
        assert_eq!(down.text(&lines), "line\nsecond");
        let up = Range::between(cell(1, 5), cell(0, 7)).unwrap();
        assert_eq!(up, down);
        assert_eq!(
            Range::between(cell(0, 1), cell(0, 5)).unwrap().text(&lines),
            "first"
        );
        assert_eq!(Range::between(cell(2, 1), cell(2, 1)), None);
    }

    #[test]
    fn the_highlight_is_inverse_video_that_survives_resets() {
        assert_eq!(
            highlight("ab\x1b[0mcd", 1, 3),
            "a\x1b[7mb\x1b[0m\x1b[7mc\x1b[27m\x1b[0md"
        );
        assert_eq!(highlight("ab", 3, 4), "ab");
    }

    #[test]
    fn double_and_triple_clicks_pick_a_word_and_a_line() {
        let line = "  open src/tui/mod.rs now ";
        assert_eq!(word_at(line, 9), Some((7, 21)));
        assert_eq!(word_at(line, 2), Some((2, 6)));
        assert_eq!(word_at(line, 0), None);
        assert_eq!(line_extent(line), Some((2, 25)));
        assert_eq!(line_extent("   "), None);
    }
}
