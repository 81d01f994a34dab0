//! An edit's diff as pi draws it: `-NN old` lines in the removed colour, `+NN new` in the
//! added colour, context dimmed; when exactly one line was replaced by one line, the words
//! that changed are shown in inverse video (a word-level diff of the two lines, leading
//! indentation left plain).

use crate::tui::theme::{Theme, Token};

/// Above this many token pairs a line pair is shown without the word highlight.
const MAX_WORD_CELLS: usize = 250_000;

/// A diff line split into its prefix (`+`, `-`, ` `), line number and content.
fn parse(line: &str) -> Option<(char, &str, &str)> {
    let prefix = line
        .chars()
        .next()
        .filter(|c| matches!(c, '+' | '-' | ' '))?;
    let rest = &line[1..];
    let digits_end = rest.len() - rest.trim_start_matches(' ').len();
    let number_end = digits_end
        + rest[digits_end..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
    let content = rest[number_end..].strip_prefix(' ')?;
    Some((prefix, &rest[..number_end], content))
}

fn tabs(text: &str) -> String {
    text.replace('\t', "   ")
}

/// Renders pi's edit diff (`+NN text`, `-NN text`, ` NN text`, ` <pad> ...`).
pub fn render_diff(theme: &Theme, diff: &str) -> String {
    let lines: Vec<&str> = diff.split('\n').collect();
    let mut out = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let Some((prefix, number, content)) = parse(lines[i]) else {
            out.push(theme.fg(Token::ToolDiffContext, &tabs(lines[i])));
            i += 1;
            continue;
        };
        match prefix {
            '-' => {
                let run = |from: usize, want: char| {
                    lines[from..]
                        .iter()
                        .map_while(|l| parse(l).filter(|p| p.0 == want))
                        .collect::<Vec<_>>()
                };
                let removed = run(i, '-');
                let added = run(i + removed.len(), '+');
                i += removed.len() + added.len();
                if let ([(_, old_n, old)], [(_, new_n, new)]) = (&removed[..], &added[..]) {
                    let (old_line, new_line) = word_diff(theme, &tabs(old), &tabs(new));
                    out.push(theme.fg(Token::ToolDiffRemoved, &format!("-{old_n} {old_line}")));
                    out.push(theme.fg(Token::ToolDiffAdded, &format!("+{new_n} {new_line}")));
                } else {
                    for (_, n, text) in removed {
                        out.push(theme.fg(Token::ToolDiffRemoved, &format!("-{n} {}", tabs(text))));
                    }
                    for (_, n, text) in added {
                        out.push(theme.fg(Token::ToolDiffAdded, &format!("+{n} {}", tabs(text))));
                    }
                }
            }
            '+' => {
                out.push(theme.fg(
                    Token::ToolDiffAdded,
                    &format!("+{number} {}", tabs(content)),
                ));
                i += 1;
            }
            _ => {
                out.push(theme.fg(
                    Token::ToolDiffContext,
                    &format!(" {number} {}", tabs(content)),
                ));
                i += 1;
            }
        }
    }
    out.join("\n")
}

/// Words (letters, digits, `_`), runs of whitespace, and single other characters.
fn tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let class = |c: char| {
        if c.is_alphanumeric() || c == '_' {
            0
        } else if c.is_whitespace() {
            1
        } else {
            2
        }
    };
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let k = class(c);
        if k != 2 {
            while chars.peek().is_some_and(|&(_, n)| class(n) == k) {
                chars.next();
            }
        }
        let end = chars.peek().map_or(text.len(), |&(j, _)| j);
        out.push(&text[i..end]);
        start = end;
    }
    debug_assert_eq!(start, text.len());
    out
}

/// Which tokens of `a` and `b` are kept (a longest common subsequence of the non-blank
/// tokens); `None` when the lines are too long to compare cheaply.
fn kept(a: &[&str], b: &[&str]) -> Option<(Vec<bool>, Vec<bool>)> {
    let words =
        |t: &[&str]| -> Vec<usize> { (0..t.len()).filter(|&i| !t[i].trim().is_empty()).collect() };
    let (wa, wb) = (words(a), words(b));
    let (n, m) = (wa.len(), wb.len());
    if n.saturating_mul(m) > MAX_WORD_CELLS {
        return None;
    }
    // lcs[i][j]: the LCS length of wa[i..] and wb[j..].
    let mut lcs = vec![0u32; (n + 1) * (m + 1)];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i * (m + 1) + j] = if a[wa[i]] == b[wb[j]] {
                lcs[(i + 1) * (m + 1) + j + 1] + 1
            } else {
                lcs[(i + 1) * (m + 1) + j].max(lcs[i * (m + 1) + j + 1])
            };
        }
    }
    let (mut keep_a, mut keep_b) = (vec![false; a.len()], vec![false; b.len()]);
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if a[wa[i]] == b[wb[j]] {
            keep_a[wa[i]] = true;
            keep_b[wb[j]] = true;
            i += 1;
            j += 1;
        } else if lcs[(i + 1) * (m + 1) + j] >= lcs[i * (m + 1) + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    // Blanks are kept unless both their neighbours changed (then they join the change).
    for (t, keep) in [(a, &mut keep_a), (b, &mut keep_b)] {
        for k in 0..t.len() {
            if t[k].trim().is_empty() {
                let before = k.checked_sub(1).map(|p| keep[p]);
                let after = keep.get(k + 1).copied().filter(|_| k + 1 < t.len());
                keep[k] = !matches!((before, after), (Some(false), Some(false)));
            }
        }
    }
    Some((keep_a, keep_b))
}

/// The old and new line with their changed words in inverse video.
fn word_diff(theme: &Theme, old: &str, new: &str) -> (String, String) {
    let (a, b) = (tokens(old), tokens(new));
    let Some((keep_a, keep_b)) = kept(&a, &b) else {
        return (old.to_string(), new.to_string());
    };
    let paint = |t: &[&str], keep: &[bool]| {
        let mut out = String::new();
        let mut changed = String::new();
        for (token, kept) in t.iter().zip(keep) {
            if *kept {
                if !changed.is_empty() {
                    out.push_str(&theme.inverse(&std::mem::take(&mut changed)));
                }
                out.push_str(token);
            } else {
                changed.push_str(token);
            }
        }
        if !changed.is_empty() {
            out.push_str(&theme.inverse(&changed));
        }
        out
    };
    (paint(&a, &keep_a), paint(&b, &keep_b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::text::strip_ansi;
    use crate::tui::theme::{ColorMode, Theme};

    fn theme() -> Theme {
        Theme::builtin("dark", ColorMode::TrueColor).unwrap()
    }

    /// The line with inverse parts in brackets.
    fn marked(line: &str) -> String {
        strip_ansi(&line.replace("\x1b[7m", "[").replace("\x1b[27m", "]"))
    }

    #[test]
    fn one_replaced_line_highlights_the_changed_words() {
        let t = theme();
        let out = render_diff(
            &t,
            " 1 fn main() {\n-2     let x = old_name(1);\n+2     let x = new_name(1, 2);\n 3 }",
        );
        let lines: Vec<String> = out.split('\n').map(marked).collect();
        assert_eq!(
            lines,
            [
                " 1 fn main() {",
                "-2     let x = [old_name](1);",
                "+2     let x = [new_name](1[, 2]);",
                " 3 }",
            ]
        );
    }

    #[test]
    fn several_lines_or_unpaired_ones_are_not_word_diffed() {
        let t = theme();
        let out = render_diff(&t, "-1 a\n-2 b\n+1 c\n+3 added\n     ...");
        assert!(!out.contains("\x1b[7m"), "{out:?}");
        let lines: Vec<String> = out.split('\n').map(strip_ansi).collect();
        assert_eq!(lines, ["-1 a", "-2 b", "+1 c", "+3 added", "     ..."]);
    }

    #[test]
    fn changed_runs_of_words_are_one_highlight_and_indentation_stays_plain() {
        let t = theme();
        let (old, new) = word_diff(&t, "    alpha beta", "    alpha BETA gamma");
        assert_eq!(marked(&old), "    alpha [beta]");
        assert_eq!(marked(&new), "    alpha [BETA gamma]");
        let (old, new) = word_diff(&t, "x", "\tx");
        assert_eq!((marked(&old), marked(&new)), ("x".into(), "\tx".into()));
    }

    #[test]
    fn tokens_cover_the_text() {
        for text in ["", "a", "foo(bar, baz)  // ünï", "  x\t= 1;"] {
            assert_eq!(tokens(text).concat(), text);
        }
        assert_eq!(tokens("foo(bar)"), ["foo", "(", "bar", ")"]);
    }
}
