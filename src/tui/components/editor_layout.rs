//! Layout for the multi-line editor: splitting logical lines into grapheme segments
//! (paste markers count as one unbreakable segment), word-wrapping them into visual lines
//! by display width, and mapping between byte columns and visual positions.
//!
//! Everything here is pure: the editor passes its lines and width in and gets ranges out.

use crate::tui::text::{pieces, Piece};

/// One grapheme (or a whole paste marker) of a line: byte range and display width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub start: usize,
    pub end: usize,
    pub width: usize,
    pub is_marker: bool,
}

impl Segment {
    pub fn text<'a>(&self, line: &'a str) -> &'a str {
        &line[self.start..self.end]
    }
}

/// Byte ranges of `[paste #N …]` markers in `line` whose id is in `ids`.
pub fn marker_ranges(line: &str, ids: &[u32]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    if ids.is_empty() {
        return out;
    }
    let mut from = 0;
    while let Some(i) = line[from..].find("[paste #") {
        let start = from + i;
        from = start + 1;
        let Some(close) = line[start..].find(']') else {
            break;
        };
        let inner = &line[start + 8..start + close];
        let (num, rest) = inner.split_once(' ').unwrap_or((inner, ""));
        let valid_rest = rest.is_empty()
            || rest
                .strip_prefix('+')
                .and_then(|r| r.strip_suffix(" lines"))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            || rest
                .strip_suffix(" chars")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if let Ok(id) = num.parse::<u32>() {
            if valid_rest && ids.contains(&id) {
                out.push((start, start + close + 1));
                from = start + close + 1;
            }
        }
    }
    out
}

/// Splits a plain-text line into graphemes, keeping valid paste markers whole.
pub fn segments(line: &str, marker_ids: &[u32]) -> Vec<Segment> {
    let markers = marker_ranges(line, marker_ids);
    let mut out = Vec::new();
    let mut pos = 0;
    let mut next_marker = markers.iter().peekable();
    for piece in pieces(line) {
        let (text, width) = match piece {
            Piece::Cluster(c, w) => (c, w),
            Piece::Escape(e) => (e, 0),
        };
        let start = pos;
        pos += text.len();
        if let Some(&&(ms, me)) = next_marker.peek() {
            if start >= ms && start < me {
                if start == ms {
                    let width = crate::tui::text::visible_width(&line[ms..me]);
                    out.push(Segment {
                        start: ms,
                        end: me,
                        width,
                        is_marker: true,
                    });
                }
                if pos >= me {
                    next_marker.next();
                }
                continue;
            }
        }
        out.push(Segment {
            start,
            end: pos,
            width,
            is_marker: false,
        });
    }
    out
}

pub fn is_whitespace(s: &str) -> bool {
    s.chars().next().is_some_and(char::is_whitespace)
}

pub fn is_punctuation(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| "(){}[]<>.,;:'\"!?+-=*/\\|&%^$#@~`".contains(c))
}

/// A visual row: which logical line, and the byte range of it shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VisualLine {
    pub line: usize,
    pub start: usize,
    pub end: usize,
}

/// Word-wraps one line to `width` columns: breaks after whitespace when the word fits on
/// the next row, otherwise mid-word; a segment wider than the row gets a row of its own.
pub fn wrap_line(line: &str, width: usize, marker_ids: &[u32]) -> Vec<(usize, usize)> {
    let segs = segments(line, marker_ids);
    let total: usize = segs.iter().map(|s| s.width).sum();
    if line.is_empty() || width == 0 || total <= width {
        return vec![(0, line.len())];
    }
    let mut chunks = Vec::new();
    let mut chunk_start = 0;
    let mut cur = 0;
    // Where the current row may break (start of a word after whitespace) and the width
    // before it.
    let mut wrap_at: Option<(usize, usize)> = None;
    for (i, seg) in segs.iter().enumerate() {
        if cur + seg.width > width {
            match wrap_at {
                Some((at, w)) if cur - w + seg.width <= width => {
                    chunks.push((chunk_start, at));
                    chunk_start = at;
                    cur -= w;
                }
                _ if chunk_start < seg.start => {
                    chunks.push((chunk_start, seg.start));
                    chunk_start = seg.start;
                    cur = 0;
                }
                _ => {}
            }
            wrap_at = None;
        }
        cur += seg.width;
        let ws = !seg.is_marker && is_whitespace(seg.text(line));
        if let Some(next) = segs.get(i + 1) {
            if ws && (next.is_marker || !is_whitespace(next.text(line))) {
                wrap_at = Some((next.start, cur));
            }
        }
    }
    chunks.push((chunk_start, line.len()));
    chunks
}

/// Visual rows of all lines at `width`.
pub fn visual_lines(lines: &[String], width: usize, marker_ids: &[u32]) -> Vec<VisualLine> {
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        for (start, end) in wrap_line(l, width, marker_ids) {
            out.push(VisualLine {
                line: i,
                start,
                end,
            });
        }
    }
    out
}

/// Index of the visual row holding byte `col` of logical `line`. A column at a row's end
/// belongs to the next row unless it is the line's last row.
pub fn find_visual_line(vls: &[VisualLine], line: usize, col: usize) -> usize {
    for (i, vl) in vls.iter().enumerate() {
        if vl.line != line {
            continue;
        }
        let last = !matches!(vls.get(i + 1), Some(n) if n.line == line);
        if col >= vl.start && (col < vl.end || (last && col <= vl.end)) {
            return i;
        }
    }
    vls.len().saturating_sub(1)
}

/// Display columns from `vl.start` to byte `col`.
pub fn column_of(line: &str, vl: &VisualLine, col: usize, marker_ids: &[u32]) -> usize {
    segments(line, marker_ids)
        .iter()
        .filter(|s| s.start >= vl.start && s.end <= col)
        .map(|s| s.width)
        .sum()
}

/// The byte column in visual row `vl` closest to display column `target` (never inside a
/// grapheme or marker; never past the row's last segment unless it ends the line).
pub fn col_at(line: &str, vl: &VisualLine, target: usize, last_row: bool, ids: &[u32]) -> usize {
    let segs: Vec<Segment> = segments(line, ids)
        .into_iter()
        .filter(|s| s.start >= vl.start && s.end <= vl.end)
        .collect();
    let mut x = 0;
    for (i, s) in segs.iter().enumerate() {
        let is_last_seg = i + 1 == segs.len();
        if x + s.width > target || (is_last_seg && !last_row) {
            return s.start;
        }
        x += s.width;
    }
    vl.end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_at_word_boundaries_by_width() {
        let l = "hello world foo";
        assert_eq!(wrap_line(l, 11, &[]), vec![(0, 6), (6, 15)]);
        assert_eq!(wrap_line("abcdefgh", 3, &[]), vec![(0, 3), (3, 6), (6, 8)]);
        // CJK: two columns each.
        let cjk = "中文中文中";
        assert_eq!(wrap_line(cjk, 4, &[]), vec![(0, 6), (6, 12), (12, 15)]);
        assert_eq!(wrap_line("", 5, &[]), vec![(0, 0)]);
    }

    #[test]
    fn paste_markers_are_single_segments() {
        let l = "a [paste #1 +20 lines] b";
        let segs = segments(l, &[1]);
        assert_eq!(segs.len(), 5);
        assert!(segs[2].is_marker);
        assert_eq!(segments(l, &[2]).len(), l.len());
        assert_eq!(marker_ranges("[paste #3 1200 chars]", &[3]), vec![(0, 21)]);
        assert_eq!(marker_ranges("[paste #3 junk]", &[3]), vec![]);
    }
}
