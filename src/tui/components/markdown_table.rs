//! Table layout for the Markdown component: box-drawn borders as pi draws them
//! (`┌─┬─┐`, `│`, `├─┼─┤` between every row, `└─┴─┘`), bold header cells, column widths
//! fitted to the available width and cells word-wrapped inside their column.
//!
//! Widths: every column gets its natural width when the table fits; otherwise each keeps at
//! least its longest word (capped at 30 columns) and the rest of the space is shared in
//! proportion to how much each column wants. Too narrow for one column each, the table
//! falls back to its raw Markdown source.

use crate::tui::text::{visible_width, wrap_text_with_ansi};

/// Longest word that still sets a column's minimum width; longer ones are broken.
const MAX_UNBROKEN_WORD: usize = 30;

const CELL_CLOSE: &str = "\x1b[22;23;24;29;39m";

/// Renders a table whose cells are already-styled strings. Rows may have fewer cells than
/// the header (missing cells are empty).
pub(super) fn render_table(
    header: &[String],
    rows: &[Vec<String>],
    width: usize,
    raw: &str,
) -> Vec<String> {
    let cols = header.len();
    if cols == 0 {
        return Vec::new();
    }
    let overhead = 3 * cols + 1;
    if width < overhead + cols {
        return wrap_text_with_ansi(raw.trim_end(), width);
    }
    let available = width - overhead;
    let cell = |row: &[String], i: usize| row.get(i).cloned().unwrap_or_default();
    let all_rows = std::iter::once(header).chain(rows.iter().map(Vec::as_slice));
    let mut natural = vec![0usize; cols];
    let mut min_word = vec![1usize; cols];
    for row in all_rows {
        for i in 0..cols {
            let text = cell(row, i);
            natural[i] = natural[i].max(visible_width(&text));
            min_word[i] = min_word[i].max(longest_word(&text).min(MAX_UNBROKEN_WORD));
        }
    }
    let widths = fit_columns(&natural, &min_word, available);

    let border = |l: &str, m: &str, r: &str| {
        let parts: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
        format!("{l}─{}─{r}", parts.join(&format!("─{m}─")))
    };
    let mut lines = vec![border("┌", "┬", "┐")];
    let header_cells: Vec<String> = (0..cols).map(|i| cell(header, i)).collect();
    push_row(&mut lines, &header_cells, &widths, true);
    let separator = border("├", "┼", "┤");
    lines.push(separator.clone());
    for (r, row) in rows.iter().enumerate() {
        let cells: Vec<String> = (0..cols).map(|i| cell(row, i)).collect();
        push_row(&mut lines, &cells, &widths, false);
        if r + 1 < rows.len() {
            lines.push(separator.clone());
        }
    }
    lines.push(border("└", "┴", "┘"));
    lines
}

fn longest_word(text: &str) -> usize {
    crate::tui::text::strip_ansi(text)
        .split_whitespace()
        .map(visible_width)
        .max()
        .unwrap_or(0)
}

/// Column widths summing to at most `available` (which is at least one per column).
fn fit_columns(natural: &[usize], min_word: &[usize], available: usize) -> Vec<usize> {
    let cols = natural.len();
    let mut minimum = min_word.to_vec();
    if minimum.iter().sum::<usize>() > available {
        // Even the longest words do not fit: share the space by word length.
        let spare = available - cols;
        let weight: usize = min_word.iter().map(|w| w - 1).sum();
        minimum = min_word
            .iter()
            .map(|w| 1 + ((w - 1) * spare).checked_div(weight).unwrap_or(0))
            .collect();
        let mut leftover = available - minimum.iter().sum::<usize>();
        for m in minimum.iter_mut() {
            if leftover == 0 {
                break;
            }
            *m += 1;
            leftover -= 1;
        }
    }
    let fitted: Vec<usize> = natural
        .iter()
        .zip(&minimum)
        .map(|(n, m)| *n.max(m))
        .collect();
    if fitted.iter().sum::<usize>() <= available {
        return fitted;
    }
    let wants: Vec<usize> = natural
        .iter()
        .zip(&minimum)
        .map(|(n, m)| n.saturating_sub(*m))
        .collect();
    let total_want: usize = wants.iter().sum();
    let extra = available.saturating_sub(minimum.iter().sum());
    let mut widths: Vec<usize> = minimum
        .iter()
        .zip(&wants)
        .map(|(m, w)| m + (w * extra).checked_div(total_want).unwrap_or(0))
        .collect();
    let mut remaining = available.saturating_sub(widths.iter().sum());
    while remaining > 0 {
        let mut grew = false;
        for i in 0..cols {
            if remaining > 0 && widths[i] < natural[i] {
                widths[i] += 1;
                remaining -= 1;
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    widths
}

fn push_row(lines: &mut Vec<String>, cells: &[String], widths: &[usize], bold: bool) {
    let wrapped: Vec<Vec<String>> = cells
        .iter()
        .zip(widths)
        .map(|(c, w)| wrap_text_with_ansi(c, *w))
        .collect();
    let height = wrapped.iter().map(Vec::len).max().unwrap_or(1);
    for l in 0..height {
        let parts: Vec<String> = wrapped
            .iter()
            .zip(widths)
            .map(|(cell_lines, w)| {
                let text = cell_lines.get(l).map(String::as_str).unwrap_or("");
                let pad = " ".repeat(w.saturating_sub(visible_width(text)));
                let close = if text.contains('\x1b') {
                    CELL_CLOSE
                } else {
                    ""
                };
                if bold {
                    format!("\x1b[1m{text}{pad}\x1b[22m{close}")
                } else {
                    format!("{text}{close}{pad}")
                }
            })
            .collect();
        lines.push(format!("│ {} │", parts.join(" │ ")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::text::strip_ansi;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn natural_widths_when_it_fits() {
        let lines = render_table(
            &s(&["Name", "Qty"]),
            &[s(&["apple", "3"]), s(&["fig", "12"])],
            40,
            "",
        );
        let plain: Vec<String> = lines.iter().map(|l| strip_ansi(l)).collect();
        assert_eq!(
            plain,
            [
                "┌───────┬─────┐",
                "│ Name  │ Qty │",
                "├───────┼─────┤",
                "│ apple │ 3   │",
                "├───────┼─────┤",
                "│ fig   │ 12  │",
                "└───────┴─────┘",
            ]
        );
        assert_eq!(lines[1], "│ \x1b[1mName \x1b[22m │ \x1b[1mQty\x1b[22m │");
    }

    #[test]
    fn narrow_tables_wrap_cells_and_fall_back_to_source() {
        let header = s(&["Column", "Description"]);
        let rows = [s(&["a", "a fairly long description that must wrap"])];
        let lines = render_table(&header, &rows, 24, "");
        for l in &lines {
            assert!(visible_width(l) <= 24, "{l}");
        }
        let plain: Vec<String> = lines.iter().map(|l| strip_ansi(l)).collect();
        assert_eq!(plain[0], "┌────────┬─────────────┐");
        assert_eq!(plain[3], "│ a      │ a fairly    │");
        assert_eq!(plain[4], "│        │ long        │");
        // An empty column still gets one cell of width and the table stays inside the width.
        let empty = render_table(&s(&["a", ""]), &[s(&["bb", ""])], 10, "");
        assert!(empty.iter().all(|l| visible_width(l) <= 10), "{empty:?}");
        assert_eq!(strip_ansi(&empty[3]), "│ bb │   │");
        let raw = "| Column | Description |\n|---|---|\n| a | b |";
        let fallback = render_table(&header, &rows, 6, raw);
        assert!(fallback.iter().all(|l| visible_width(l) <= 6));
        assert_eq!(fallback[0], "|");
    }
}
