//! The edit tool's diffs: pi's display diff (`-NN old`, `+NN new`, ` NN same`, four context
//! lines around each change and ` <pad> ...` for skipped lines) and a standard unified patch
//! (`--- path`/`+++ path`, `@@ -a,b +c,d @@` hunks with four context lines, as jsdiff's
//! `createTwoFilesPatch` writes it). Lines are compared with their newline (as jsdiff's
//! `diffLines` does). Only the regions an edit touched are diffed, so a small edit in a huge
//! file costs time proportional to the file's line count, not its square.

const CONTEXT: usize = 4;
/// Above this many cells the LCS of a region is skipped: the region becomes remove-all/add-all.
const MAX_LCS_CELLS: usize = 4_000_000;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Same,
    Del,
    Ins,
}

/// A run of `count` tokens: old tokens from `old_at` (Same/Del), new tokens from `new_at` (Same/Ins).
#[derive(Clone, Copy, Debug)]
struct Run {
    kind: Kind,
    old_at: usize,
    new_at: usize,
    count: usize,
}

/// Line tokens of a text: each line with its `\n`; a final line without one is a token too,
/// an empty remainder is not.
struct Tokens<'a> {
    text: &'a str,
    starts: Vec<usize>,
    /// Number of `\n` in the text (so `split('\n').count()` is this plus one).
    newlines: usize,
}

impl<'a> Tokens<'a> {
    fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        let newlines = starts.len() - 1;
        if starts.last() == Some(&text.len()) {
            starts.pop();
        }
        Tokens {
            text,
            starts,
            newlines,
        }
    }
    fn len(&self) -> usize {
        self.starts.len()
    }
    fn get(&self, i: usize) -> &'a str {
        let end = self.starts.get(i + 1).copied().unwrap_or(self.text.len());
        &self.text[self.starts[i]..end]
    }
    fn line(&self, i: usize) -> &'a str {
        let t = self.get(i);
        t.strip_suffix('\n').unwrap_or(t)
    }
    /// Index of the token containing byte `pos` (clamped to the token count).
    fn at(&self, pos: usize) -> usize {
        match self.starts.binary_search(&pos) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        }
        .min(self.len())
    }
}

fn push(runs: &mut Vec<Run>, kind: Kind, old_at: usize, new_at: usize, count: usize) {
    if count == 0 {
        return;
    }
    if let Some(last) = runs.last_mut() {
        if last.kind == kind {
            let contiguous = match kind {
                Kind::Same => {
                    last.old_at + last.count == old_at && last.new_at + last.count == new_at
                }
                Kind::Del => last.old_at + last.count == old_at,
                Kind::Ins => last.new_at + last.count == new_at,
            };
            if contiguous {
                last.count += count;
                return;
            }
        }
    }
    runs.push(Run {
        kind,
        old_at,
        new_at,
        count,
    });
}

/// Diffs old tokens `[o0, o1)` against new tokens `[n0, n1)`.
fn diff_region(
    a: &Tokens,
    b: &Tokens,
    (mut o0, mut o1): (usize, usize),
    (mut n0, mut n1): (usize, usize),
    runs: &mut Vec<Run>,
) {
    let mut pre = 0;
    while o0 + pre < o1 && n0 + pre < n1 && a.get(o0 + pre) == b.get(n0 + pre) {
        pre += 1;
    }
    push(runs, Kind::Same, o0, n0, pre);
    o0 += pre;
    n0 += pre;
    let mut suf = 0;
    while o1 - suf > o0 && n1 - suf > n0 && a.get(o1 - suf - 1) == b.get(n1 - suf - 1) {
        suf += 1;
    }
    o1 -= suf;
    n1 -= suf;
    let (la, lb) = (o1 - o0, n1 - n0);
    if la > 0 && lb > 0 && (la + 1) * (lb + 1) <= MAX_LCS_CELLS {
        // lcs[i][j] = LCS length of a[o0+i..o1] and b[n0+j..n1].
        let w = lb + 1;
        let mut lcs = vec![0u32; (la + 1) * w];
        for i in (0..la).rev() {
            for j in (0..lb).rev() {
                lcs[i * w + j] = if a.get(o0 + i) == b.get(n0 + j) {
                    lcs[(i + 1) * w + j + 1] + 1
                } else {
                    lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        let (mut dels, mut inss) = (Vec::new(), Vec::new());
        let flush = |runs: &mut Vec<Run>, dels: &mut Vec<usize>, inss: &mut Vec<usize>| {
            for &d in dels.iter() {
                push(runs, Kind::Del, d, 0, 1);
            }
            for &n in inss.iter() {
                push(runs, Kind::Ins, 0, n, 1);
            }
            dels.clear();
            inss.clear();
        };
        while i < la || j < lb {
            if i < la
                && j < lb
                && a.get(o0 + i) == b.get(n0 + j)
                && lcs[i * w + j] == lcs[(i + 1) * w + j + 1] + 1
            {
                flush(runs, &mut dels, &mut inss);
                push(runs, Kind::Same, o0 + i, n0 + j, 1);
                i += 1;
                j += 1;
            } else if i < la && (j >= lb || lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) {
                dels.push(o0 + i);
                i += 1;
            } else {
                inss.push(n0 + j);
                j += 1;
            }
        }
        flush(runs, &mut dels, &mut inss);
    } else {
        push(runs, Kind::Del, o0, n0, la);
        push(runs, Kind::Ins, o0, n0, lb);
    }
    push(runs, Kind::Same, o1, n1, suf);
}

/// The line runs of `old` → `new`, given the byte ranges that changed: `(old_start, old_end,
/// new_start, new_end)`, sorted and disjoint.
fn runs_for(a: &Tokens, b: &Tokens, changes: &[(usize, usize, usize, usize)]) -> Vec<Run> {
    // Token ranges touched by each change, merged when they meet.
    let mut regions: Vec<((usize, usize), (usize, usize))> = Vec::new();
    for &(os, oe, ns, ne) in changes {
        let o = (a.at(os), (a.at(oe) + 1).min(a.len()));
        let n = (b.at(ns), (b.at(ne) + 1).min(b.len()));
        if let Some(last) = regions.last_mut() {
            let gap_old = o.0 as isize - last.0 .1 as isize;
            let gap_new = n.0 as isize - last.1 .1 as isize;
            if gap_old <= 0 || gap_new <= 0 || gap_old != gap_new {
                last.0 .1 = last.0 .1.max(o.1);
                last.1 .1 = last.1 .1.max(n.1);
                continue;
            }
        }
        regions.push((o, n));
    }
    let mut runs = Vec::new();
    let (mut oi, mut ni) = (0, 0);
    for (o, n) in regions {
        push(&mut runs, Kind::Same, oi, ni, o.0 - oi);
        diff_region(a, b, o, n, &mut runs);
        (oi, ni) = (o.1, n.1);
    }
    push(&mut runs, Kind::Same, oi, ni, a.len() - oi);
    runs
}

/// pi's display diff of `old` → `new`, given the byte ranges that changed (see `runs_for`).
/// Returns the text and the first changed line (in the new file).
pub fn diff_changes(
    old: &str,
    new: &str,
    changes: &[(usize, usize, usize, usize)],
) -> (String, Option<usize>) {
    let a = Tokens::new(old);
    let b = Tokens::new(new);
    let runs = runs_for(&a, &b, changes);
    render(&a, &b, &runs, a.newlines.max(b.newlines) + 1)
}

/// What the edit tool reports: the display diff, the unified patch, the first changed line.
pub struct EditDiff {
    pub diff: String,
    pub patch: String,
    pub first_changed_line: Option<usize>,
}

/// Both diffs of an edit of the file shown as `path`, given the byte ranges that changed.
pub fn edit_diff(
    path: &str,
    old: &str,
    new: &str,
    changes: &[(usize, usize, usize, usize)],
) -> EditDiff {
    let a = Tokens::new(old);
    let b = Tokens::new(new);
    let runs = runs_for(&a, &b, changes);
    let (diff, first_changed_line) = render(&a, &b, &runs, a.newlines.max(b.newlines) + 1);
    EditDiff {
        diff,
        patch: unified_patch(path, &a, &b, &runs),
        first_changed_line,
    }
}

/// The unified patch of the runs, hunk for hunk as jsdiff's `structuredPatch` and
/// `formatPatch` (file headers only) write it: a hunk closes at a stretch of more than eight
/// unchanged lines (or the last one), and a line without a final newline is followed by
/// `\ No newline at end of file`.
fn unified_patch(path: &str, a: &Tokens, b: &Tokens, runs: &[Run]) -> String {
    let mut out = format!("--- {path}\n+++ {path}\n");
    let (mut old_line, mut new_line) = (1usize, 1usize);
    // The open hunk: its first old and new line numbers and its lines.
    let mut cur: Option<OpenHunk> = None;
    let last = runs.len(); // index of the sentinel after the last run
    for i in 0..=last {
        let run = runs.get(i);
        match run.map(|r| r.kind) {
            Some(kind @ (Kind::Del | Kind::Ins)) => {
                let r = run.unwrap();
                if cur.is_none() {
                    let mut lines = Vec::new();
                    if let Some(prev) = i.checked_sub(1).map(|p| runs[p]) {
                        let n = prev.count.min(CONTEXT);
                        for t in prev.count - n..prev.count {
                            lines.push((' ', a.get(prev.old_at + t)));
                        }
                    }
                    cur = Some((old_line - lines.len(), new_line - lines.len(), lines));
                }
                let lines = &mut cur.as_mut().unwrap().2;
                for t in 0..r.count {
                    if kind == Kind::Del {
                        lines.push(('-', a.get(r.old_at + t)));
                    } else {
                        lines.push(('+', b.get(r.new_at + t)));
                    }
                }
                if kind == Kind::Del {
                    old_line += r.count;
                } else {
                    new_line += r.count;
                }
            }
            _ => {
                let (count, old_at) = run.map_or((0, 0), |r| (r.count, r.old_at));
                if let Some((os, ns, mut lines)) = cur.take() {
                    let is_last_run = i + 1 >= last;
                    if count <= CONTEXT * 2 && !is_last_run {
                        for t in 0..count {
                            lines.push((' ', a.get(old_at + t)));
                        }
                        cur = Some((os, ns, lines));
                    } else {
                        let n = count.min(CONTEXT);
                        for t in 0..n {
                            lines.push((' ', a.get(old_at + t)));
                        }
                        let counts = (old_line - os + n, new_line - ns + n);
                        push_hunk(&mut out, (os, ns), counts, &lines);
                    }
                }
                old_line += count;
                new_line += count;
            }
        }
    }
    out
}

/// pi's diff of two whole texts (one region spanning the first to the last differing byte).
pub fn diff_texts(old: &str, new: &str) -> (String, Option<usize>) {
    let pre = old
        .bytes()
        .zip(new.bytes())
        .take_while(|(x, y)| x == y)
        .count();
    let max_suf = old.len().min(new.len()) - pre;
    let suf = old
        .bytes()
        .rev()
        .zip(new.bytes().rev())
        .take(max_suf)
        .take_while(|(x, y)| x == y)
        .count();
    if pre == old.len() && pre == new.len() {
        return (String::new(), None);
    }
    diff_changes(old, new, &[(pre, old.len() - suf, pre, new.len() - suf)])
}

/// A hunk being collected: its first old and new line numbers and its signed lines.
type OpenHunk<'a> = (usize, usize, Vec<(char, &'a str)>);

/// One hunk: its header (a side without lines counts from the line before, as in `-0,0`),
/// then each line with its newline or the no-newline marker.
fn push_hunk(
    out: &mut String,
    (old_start, new_start): (usize, usize),
    (old_lines, new_lines): (usize, usize),
    lines: &[(char, &str)],
) {
    let os = if old_lines == 0 {
        old_start - 1
    } else {
        old_start
    };
    let ns = if new_lines == 0 {
        new_start - 1
    } else {
        new_start
    };
    out.push_str(&format!("@@ -{os},{old_lines} +{ns},{new_lines} @@\n"));
    for (sign, line) in lines {
        out.push(*sign);
        match line.strip_suffix('\n') {
            Some(l) => {
                out.push_str(l);
                out.push('\n');
            }
            None => {
                out.push_str(line);
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
}

fn render(a: &Tokens, b: &Tokens, runs: &[Run], max_lines: usize) -> (String, Option<usize>) {
    let width = max_lines.to_string().len();
    let pad = " ".repeat(width);
    let mut out: Vec<String> = Vec::new();
    let (mut old_no, mut new_no) = (1usize, 1usize);
    let mut first = None;
    let mut last_was_change = false;
    let same = |out: &mut Vec<String>, old_no: &mut usize, new_no: &mut usize, tok: usize| {
        out.push(format!(" {:>width$} {}", *old_no, a.line(tok)));
        *old_no += 1;
        *new_no += 1;
    };
    for (k, run) in runs.iter().enumerate() {
        match run.kind {
            Kind::Del | Kind::Ins => {
                first.get_or_insert(new_no);
                for t in 0..run.count {
                    if run.kind == Kind::Ins {
                        out.push(format!("+{new_no:>width$} {}", b.line(run.new_at + t)));
                        new_no += 1;
                    } else {
                        out.push(format!("-{old_no:>width$} {}", a.line(run.old_at + t)));
                        old_no += 1;
                    }
                }
                last_was_change = true;
            }
            Kind::Same => {
                let n = run.count;
                let next_change = runs.get(k + 1).is_some_and(|r| r.kind != Kind::Same);
                let (lead, trail) = match (last_was_change, next_change) {
                    (true, true) if n <= CONTEXT * 2 => (n, 0),
                    (true, true) => (CONTEXT, CONTEXT),
                    (true, false) => (n.min(CONTEXT), 0),
                    (false, true) => (0, n.min(CONTEXT)),
                    (false, false) => (0, 0),
                };
                for t in 0..lead {
                    same(&mut out, &mut old_no, &mut new_no, run.old_at + t);
                }
                let skipped = n - lead - trail;
                if skipped > 0 {
                    if last_was_change || next_change {
                        out.push(format!(" {pad} ..."));
                    }
                    old_no += skipped;
                    new_no += skipped;
                }
                for t in n - trail..n {
                    same(&mut out, &mut old_no, &mut new_no, run.old_at + t);
                }
                last_was_change = false;
            }
        }
    }
    (out.join("\n"), first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_line_change_with_context_and_gaps() {
        let old: String = (1..=20).map(|i| format!("line{i}\n")).collect();
        let new = old.replace("line10\n", "changed\n");
        let (d, first) = diff_texts(&old, &new);
        assert_eq!(first, Some(10));
        let expected = "    ...\n  6 line6\n  7 line7\n  8 line8\n  9 line9\n-10 line10\n+10 changed\n 11 line11\n 12 line12\n 13 line13\n 14 line14\n    ...";
        assert_eq!(d, expected);
    }

    #[test]
    fn missing_final_newline_is_a_different_line() {
        let (d, first) = diff_texts("a\nb", "a\nb\nc");
        assert_eq!(first, Some(2));
        assert_eq!(d, " 1 a\n-2 b\n+2 b\n+3 c");
    }

    #[test]
    fn two_distant_changes_are_separate_hunks() {
        let old: String = (1..=40).map(|i| format!("l{i}\n")).collect();
        let new = old.replace("l5\n", "five\n").replace("l30\n", "thirty\n");
        let a = old.find("l5\n").unwrap();
        let b = old.find("l30\n").unwrap();
        let changes = [(a, a + 3, a, a + 5), (b, b + 4, b + 2, b + 2 + 7)];
        let (d1, f1) = diff_changes(&old, &new, &changes);
        let (d2, f2) = diff_texts(&old, &new);
        assert_eq!((d1.clone(), f1), (d2, f2));
        assert!(d1.contains("-30 l30\n+30 thirty"));
        assert!(d1.contains("\n    ...\n"));
    }
}
