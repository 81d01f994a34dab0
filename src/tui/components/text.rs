//! The plain building blocks: [`Text`] (wrapped, padded, optionally on a background),
//! [`TruncatedText`] (one line, cut with an ellipsis), [`Spacer`] (blank rows), and the
//! line helpers other components share ([`Fill`], [`pad_to_width`], [`tail_rows`]).

use crate::tui::text::{truncate_to_width, visible_width, wrap_text_with_ansi};
use crate::tui::theme::{Theme, Token};
use crate::tui::{next_revision, Component};

/// A background colour applied to whole lines, surviving resets inside the content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fill {
    open: String,
    close: String,
}

impl Fill {
    /// The background of a theme token (e.g. `toolPendingBg`).
    pub fn token(theme: &Theme, token: Token) -> Fill {
        Fill {
            open: theme.bg_code(token).to_string(),
            close: theme.bg_reset().to_string(),
        }
    }

    /// A fill from raw escape codes.
    pub fn raw(open: &str, close: &str) -> Fill {
        Fill {
            open: open.to_string(),
            close: close.to_string(),
        }
    }

    /// `line` padded to `width` columns on this background. Background resets inside the
    /// line (`ESC[0m`, `ESC[49m`) are followed by the fill again so it never has holes.
    pub fn apply(&self, line: &str, width: usize) -> String {
        if self.open.is_empty() {
            return pad_to_width(line, width);
        }
        let mut out = String::with_capacity(line.len() + width + 24);
        out.push_str(&self.open);
        let mut rest = line;
        while let Some(i) = rest.find("\x1b[") {
            let (head, tail) = rest.split_at(i);
            out.push_str(head);
            let reset = ["\x1b[0m", "\x1b[m", "\x1b[49m"]
                .into_iter()
                .find(|r| tail.starts_with(r));
            match reset {
                Some(r) => {
                    out.push_str(r);
                    out.push_str(&self.open);
                    rest = &tail[r.len()..];
                }
                None => {
                    out.push_str("\x1b[");
                    rest = &tail[2..];
                }
            }
        }
        out.push_str(rest);
        let w = visible_width(line);
        out.extend(std::iter::repeat_n(' ', width.saturating_sub(w)));
        out.push_str(&self.close);
        out
    }
}

/// `line` followed by spaces up to `width` columns.
pub fn pad_to_width(line: &str, width: usize) -> String {
    let w = visible_width(line);
    let mut out = String::with_capacity(line.len() + width.saturating_sub(w));
    out.push_str(line);
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(w)));
    out
}

/// Frames content lines with horizontal padding, vertical padding and an optional fill;
/// every line comes out exactly `width` columns wide.
pub(crate) fn frame_lines(
    content: Vec<String>,
    width: usize,
    padding_x: usize,
    padding_y: usize,
    fill: Option<&Fill>,
) -> Vec<String> {
    let mut out = Vec::with_capacity(content.len() + 2 * padding_y);
    out.extend((0..padding_y).map(|_| frame_line("", width, 0, fill)));
    out.extend(
        content
            .iter()
            .map(|l| frame_line(l, width, padding_x, fill)),
    );
    out.extend((0..padding_y).map(|_| frame_line("", width, 0, fill)));
    out
}

/// One line behind a left margin of `padding_x`, cut if wider than `width` (a width
/// smaller than the padding), then padded or filled to exactly `width` columns.
pub(crate) fn frame_line(
    line: &str,
    width: usize,
    padding_x: usize,
    fill: Option<&Fill>,
) -> String {
    let mut l = String::with_capacity(padding_x + line.len());
    l.extend(std::iter::repeat_n(' ', padding_x.min(width)));
    l.push_str(line);
    if visible_width(&l) > width {
        l = truncate_to_width(&l, width, "", false);
    }
    match fill {
        Some(f) => f.apply(&l, width),
        None => pad_to_width(&l, width),
    }
}

/// Multi-line text, word-wrapped to the width, with padding and an optional background.
pub struct Text {
    text: String,
    padding_x: usize,
    padding_y: usize,
    fill: Option<Fill>,
    cache: Option<(usize, Vec<String>)>,
    revision: u64,
}

impl Text {
    /// pi's defaults are one column and one row of padding.
    pub fn new(text: impl Into<String>, padding_x: usize, padding_y: usize) -> Text {
        Text {
            text: text.into(),
            padding_x,
            padding_y,
            fill: None,
            cache: None,
            revision: next_revision(),
        }
    }

    pub fn with_fill(mut self, fill: Fill) -> Text {
        self.fill = Some(fill);
        self.revision = next_revision();
        self
    }

    pub fn set_text(&mut self, text: impl Into<String>) {
        self.text = text.into();
        self.cache = None;
        self.revision = next_revision();
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn set_fill(&mut self, fill: Option<Fill>) {
        self.fill = fill;
        self.cache = None;
        self.revision = next_revision();
    }
}

impl Component for Text {
    fn render(&mut self, width: usize) -> Vec<String> {
        if let Some((w, lines)) = &self.cache {
            if *w == width {
                return lines.clone();
            }
        }
        let lines = if self.text.trim().is_empty() {
            Vec::new()
        } else {
            let content_width = width.saturating_sub(self.padding_x * 2).max(1);
            let wrapped = wrap_text_with_ansi(&self.text.replace('\t', "   "), content_width);
            frame_lines(
                wrapped,
                width,
                self.padding_x,
                self.padding_y,
                self.fill.as_ref(),
            )
        };
        self.cache = Some((width, lines.clone()));
        lines
    }

    fn invalidate(&mut self) {
        self.cache = None;
        self.revision = next_revision();
    }

    fn revision(&self) -> Option<u64> {
        Some(self.revision)
    }
}

/// The last `max_rows` rows `text` takes as a [`Text`] with `padding_x` at `width`, and how
/// many rows above them were left out (pi's `truncateToVisualLines`): a long line wrapped on a
/// narrow terminal counts once for every row it fills.
pub fn tail_rows(
    text: &str,
    max_rows: usize,
    width: usize,
    padding_x: usize,
) -> (Vec<String>, usize) {
    let mut lines = Text::new(text, padding_x, 0).render(width);
    let skipped = lines.len().saturating_sub(max_rows);
    lines.drain(..skipped);
    (lines, skipped)
}

/// The first line of a text, cut to fit the width.
pub struct TruncatedText {
    text: String,
    padding_x: usize,
    padding_y: usize,
    revision: u64,
}

impl TruncatedText {
    pub fn new(text: impl Into<String>, padding_x: usize, padding_y: usize) -> TruncatedText {
        TruncatedText {
            text: text.into(),
            padding_x,
            padding_y,
            revision: next_revision(),
        }
    }

    pub fn set_text(&mut self, text: impl Into<String>) {
        self.text = text.into();
        self.revision = next_revision();
    }
}

impl Component for TruncatedText {
    fn render(&mut self, width: usize) -> Vec<String> {
        let available = width.saturating_sub(self.padding_x * 2).max(1);
        let first = self.text.split('\n').next().unwrap_or("");
        let line = truncate_to_width(first, available, "...", false);
        frame_lines(vec![line], width, self.padding_x, self.padding_y, None)
    }

    fn revision(&self) -> Option<u64> {
        Some(self.revision)
    }
}

/// `n` empty rows.
pub struct Spacer {
    lines: usize,
    revision: u64,
}

impl Spacer {
    pub fn new(lines: usize) -> Spacer {
        Spacer {
            lines,
            revision: next_revision(),
        }
    }

    pub fn set_lines(&mut self, lines: usize) {
        self.lines = lines;
        self.revision = next_revision();
    }
}

impl Component for Spacer {
    fn render(&mut self, _width: usize) -> Vec<String> {
        vec![String::new(); self.lines]
    }

    fn revision(&self) -> Option<u64> {
        Some(self.revision)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::text::strip_ansi;

    #[test]
    fn text_wraps_pads_and_fills() {
        let mut t = Text::new("hello world again", 1, 1);
        let lines = t.render(10);
        let plain: Vec<String> = lines.iter().map(|l| strip_ansi(l)).collect();
        assert_eq!(
            plain,
            [
                "          ",
                " hello    ",
                " world    ",
                " again    ",
                "          "
            ]
        );
        let mut t = Text::new("hi \x1b[0mthere", 0, 0).with_fill(Fill::raw("\x1b[41m", "\x1b[49m"));
        assert_eq!(t.render(10), ["\x1b[41mhi \x1b[0m\x1b[41mthere  \x1b[49m"]);
        assert!(Text::new("  ", 1, 1).render(10).is_empty());
    }

    #[test]
    fn tail_rows_counts_wrapped_rows_not_lines() {
        let text = "one\ntwo\na long line that wraps onto several rows";
        let (rows, skipped) = tail_rows(text, 3, 12, 0);
        let plain: Vec<String> = rows
            .iter()
            .map(|l| strip_ansi(l).trim_end().to_string())
            .collect();
        assert_eq!(plain, ["that wraps", "onto several", "rows"]);
        assert_eq!(skipped, 3);
        let (rows, skipped) = tail_rows(text, 10, 80, 0);
        assert_eq!((rows.len(), skipped), (3, 0));
    }

    #[test]
    fn text_lines_never_exceed_width() {
        let mut t = Text::new("some words and a verylongwordthatmustbreak", 2, 0);
        for w in 1..40 {
            t.invalidate();
            for l in t.render(w) {
                assert!(visible_width(&l) <= w, "{w}: {l:?}");
            }
        }
    }

    #[test]
    fn truncated_text_keeps_first_line() {
        let mut t = TruncatedText::new("abcdefghij\nsecond", 1, 0);
        let lines = t.render(8);
        assert_eq!(lines.len(), 1);
        assert_eq!(strip_ansi(&lines[0]), " abc... ");
        assert_eq!(Spacer::new(2).render(5), ["", ""]);
    }
}
