//! Text search over rendered lines, as pi's fullscreen transcript search does it: the visible
//! text of every line (escapes stripped) becomes one corpus where any run of blanks, line
//! breaks included, counts as a single space, so a phrase wrapped across rows is still found.
//! Matching ignores case. Each match maps back to per-row column [`Segment`]s, which
//! [`highlight_row`] paints over the styled line.
//!
//! [`SearchIndex`] keeps the corpus while the lines stay the same, so moving between matches
//! or typing into the query costs the search, not the re-indexing.

use super::text::{pieces, slice_by_column, visible_width, Piece};

/// Columns `start_col..end_col` of one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub row: usize,
    pub start_col: usize,
    pub end_col: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Match {
    pub segments: Vec<Segment>,
}

impl Match {
    pub fn first_row(&self) -> usize {
        self.segments.first().map_or(0, |s| s.row)
    }

    pub fn last_row(&self) -> usize {
        self.segments.last().map_or(0, |s| s.row)
    }
}

/// One visible cluster: where its characters sit in the corpus and on screen.
struct Span {
    text_start: usize,
    text_end: usize,
    row: usize,
    start_col: usize,
    end_col: usize,
}

#[derive(Default)]
struct Corpus {
    /// Lower-cased characters.
    text: Vec<char>,
    spans: Vec<Span>,
}

fn fold(c: char) -> char {
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(l), None) => l,
        _ => c,
    }
}

fn build_corpus(lines: &[String]) -> Corpus {
    let mut corpus = Corpus::default();
    let mut pending_space = false;
    for (row, line) in lines.iter().enumerate() {
        let mut col = 0;
        for piece in pieces(line) {
            let Piece::Cluster(cluster, width) = piece else {
                continue;
            };
            if cluster.chars().all(char::is_whitespace) {
                pending_space |= !corpus.text.is_empty();
                col += width;
                continue;
            }
            if pending_space {
                corpus.text.push(' ');
                pending_space = false;
            }
            let text_start = corpus.text.len();
            corpus.text.extend(cluster.chars().map(fold));
            corpus.spans.push(Span {
                text_start,
                text_end: corpus.text.len(),
                row,
                start_col: col,
                end_col: col + width,
            });
            col += width;
        }
        pending_space |= !corpus.text.is_empty();
    }
    corpus
}

/// The query as searched: blanks collapsed to one space, trimmed, lower-cased.
fn normalize(query: &str) -> Vec<char> {
    query
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .map(fold)
        .collect()
}

fn find_matches(corpus: &Corpus, needle: &[char]) -> Vec<Match> {
    let mut matches = Vec::new();
    if needle.is_empty() || needle.len() > corpus.text.len() {
        return matches;
    }
    let mut span_index = 0;
    let mut start = 0;
    while start + needle.len() <= corpus.text.len() {
        if corpus.text[start..start + needle.len()] != *needle {
            start += 1;
            continue;
        }
        let end = start + needle.len();
        while span_index < corpus.spans.len() && corpus.spans[span_index].text_end <= start {
            span_index += 1;
        }
        let mut segments: Vec<Segment> = Vec::new();
        for span in &corpus.spans[span_index..] {
            if span.text_start >= end {
                break;
            }
            match segments.last_mut() {
                Some(prev) if prev.row == span.row && span.start_col <= prev.end_col => {
                    prev.end_col = prev.end_col.max(span.end_col);
                }
                _ => segments.push(Segment {
                    row: span.row,
                    start_col: span.start_col,
                    end_col: span.end_col,
                }),
            }
        }
        if !segments.is_empty() {
            matches.push(Match { segments });
        }
        // Matches do not overlap.
        start = end;
    }
    matches
}

/// Every match of `query` in `lines`.
pub fn find(lines: &[String], query: &str) -> Vec<Match> {
    find_matches(&build_corpus(lines), &normalize(query))
}

/// The corpus of the lines searched last, and the matches of the last query.
#[derive(Default)]
pub struct SearchIndex {
    source: Vec<String>,
    corpus: Option<Corpus>,
    query: Vec<char>,
    matches: Vec<Match>,
}

impl SearchIndex {
    /// The matches of `query` in `lines`, and whether they may differ from the last call's.
    pub fn search(&mut self, lines: &[String], query: &str) -> (&[Match], bool) {
        let source_changed = self.corpus.is_none() || self.source != lines;
        if source_changed {
            self.source = lines.to_vec();
            self.corpus = Some(build_corpus(lines));
        }
        let query = normalize(query);
        let changed = source_changed || query != self.query;
        if changed {
            self.matches = find_matches(self.corpus.as_ref().expect("built above"), &query);
            self.query = query;
        }
        (&self.matches, changed)
    }
}

/// `line` with columns `start..end` passed through `style` (escapes inside are kept, and the
/// style is applied to each plain run between them so it survives their resets).
pub fn highlight_row(
    line: &str,
    start: usize,
    end: usize,
    style: &dyn Fn(&str) -> String,
) -> String {
    let width = visible_width(line);
    let (start, end) = (start.min(width), end.min(width));
    if end <= start {
        return line.to_string();
    }
    let before = slice_by_column(line, 0, start, true);
    let middle = slice_by_column(line, start, end - start, true);
    let after = slice_by_column(line, end, width - end, true);
    let mut styled = String::new();
    let mut plain = String::new();
    for piece in pieces(&middle) {
        match piece {
            Piece::Escape(e) => {
                if !plain.is_empty() {
                    styled.push_str(&style(&std::mem::take(&mut plain)));
                }
                styled.push_str(e);
            }
            Piece::Cluster(c, _) => plain.push_str(c),
        }
    }
    if !plain.is_empty() {
        styled.push_str(&style(&plain));
    }
    format!("{before}{styled}{after}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(rows: &[&str]) -> Vec<String> {
        rows.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn matches_ignore_case_and_styles_and_cross_wrapped_rows() {
        let rows = lines(&["  \x1b[1mHello\x1b[0m there", "world, hello", "   World"]);
        let found = find(&rows, "hello");
        assert_eq!(found.len(), 2);
        assert_eq!(
            found[0].segments,
            [Segment {
                row: 0,
                start_col: 2,
                end_col: 7
            }]
        );
        // "there world" spans the line break as one space.
        let wrapped = find(&rows, "there   WORLD");
        assert_eq!(wrapped.len(), 1);
        assert_eq!(wrapped[0].first_row(), 0);
        assert_eq!(wrapped[0].last_row(), 1);
        assert_eq!(wrapped[0].segments[1].end_col, 5);
        assert!(find(&rows, "  ").is_empty());
        assert!(find(&rows, "absent").is_empty());
    }

    #[test]
    fn the_index_reports_when_results_may_have_changed() {
        let mut index = SearchIndex::default();
        let rows = lines(&["abc abc"]);
        assert_eq!(index.search(&rows, "abc").0.len(), 2);
        assert!(!index.search(&rows, " abc ").1);
        let more = lines(&["abc abc abc"]);
        let (found, changed) = index.search(&more, "abc");
        assert_eq!((found.len(), changed), (3, true));
    }

    #[test]
    fn highlighting_keeps_the_columns_and_styles_each_plain_run() {
        let mark = |s: &str| format!("[{s}]");
        let out = highlight_row("ab\x1b[31mcd\x1b[0mef", 1, 5, &mark);
        // The rest of the line gets the styles in force where it starts.
        assert_eq!(out, "a[b]\x1b[31m[cd]\x1b[0m[e]\x1b[31m\x1b[0mf");
        assert_eq!(highlight_row("abc", 5, 9, &mark), "abc");
    }
}
