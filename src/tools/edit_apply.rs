//! Matching and applying the edit tool's replacements, as today's pi does: every `oldText` is
//! found in the LF-normalized original (exactly, or after fuzzy normalization), must be unique
//! there and must not overlap another. A fuzzy match rewrites only the lines it touches (from
//! their normalized form); every other line keeps its bytes. Finally the replacements are
//! spliced into the original text itself, so untouched lines keep CRLF, LF or a lone CR, and
//! new text takes the line ending of the line it replaces.

use super::fuzzy::{self, normalize_for_fuzzy};
use crate::util::sort;

/// One requested replacement.
#[derive(Debug, Clone, PartialEq)]
pub struct Edit {
    pub old_text: String,
    pub new_text: String,
}

/// A replacement located in the LF-normalized content: byte offset, matched length, new text.
#[derive(Debug, Clone, PartialEq)]
pub struct Replacement {
    pub at: usize,
    pub len: usize,
    pub new_text: String,
}

/// The edited LF-normalized content and the replacements that produced it (sorted, disjoint,
/// in the coordinates of the content the edits were applied to).
#[derive(Debug)]
pub struct Applied {
    pub new: String,
    pub replacements: Vec<Replacement>,
}

pub fn to_lf(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains('\r') {
        s.replace("\r\n", "\n").replace('\r', "\n").into()
    } else {
        s.into()
    }
}

/// Non-overlapping occurrences, counted like JavaScript's `split(needle).length - 1`.
fn count_occurrences(hay: &str, needle: &str) -> usize {
    if needle.is_empty() {
        return hay.encode_utf16().count().saturating_sub(1);
    }
    hay.matches(needle).count()
}

/// Where `old` (or, failing that, its fuzzy form `fuzzy_old`) first occurs in `content`, whose
/// fuzzy form is `fuzzy_content`: `(offset, length, fuzzy)`.
fn find(
    content: &str,
    fuzzy_content: &str,
    old: &str,
    fuzzy_old: &str,
) -> Option<(usize, usize, bool)> {
    if let Some(at) = content.find(old) {
        return Some((at, old.len(), false));
    }
    fuzzy_content
        .find(fuzzy_old)
        .map(|at| (at, fuzzy_old.len(), true))
}

/// Matches every edit against `content` (LF-normalized) and applies them all at once.
pub fn apply_edits(content: &str, edits: &[Edit], path: &str) -> Result<Applied, String> {
    let many = edits.len() > 1;
    let edits: Vec<Edit> = edits
        .iter()
        .map(|e| Edit {
            old_text: to_lf(&e.old_text).into_owned(),
            new_text: to_lf(&e.new_text).into_owned(),
        })
        .collect();
    for (i, e) in edits.iter().enumerate() {
        if e.old_text.is_empty() {
            return Err(if many {
                format!("edits[{i}].oldText must not be empty in {path}.")
            } else {
                format!("oldText must not be empty in {path}.")
            });
        }
    }
    let fuzzy_old: Vec<String> = edits
        .iter()
        .map(|e| normalize_for_fuzzy(&e.old_text))
        .collect();
    // Most files are plain ASCII without trailing spaces: then the fuzzy form is the text
    // itself and no normalized copy is made.
    let fuzzy_content: std::borrow::Cow<str> = if fuzzy::is_fuzzy_invariant(content) {
        content.into()
    } else {
        normalize_for_fuzzy(content).into()
    };
    let used_fuzzy = edits
        .iter()
        .zip(&fuzzy_old)
        .any(|(e, fo)| find(content, &fuzzy_content, &e.old_text, fo).is_some_and(|m| m.2));
    // With any fuzzy match every edit is located in the fuzzy form (normalizing it again
    // changes nothing).
    let base: &str = if used_fuzzy { &fuzzy_content } else { content };
    let mut matched: Vec<(usize, usize, usize)> = Vec::with_capacity(edits.len()); // (at, len, edit)
    for (i, (e, fo)) in edits.iter().zip(&fuzzy_old).enumerate() {
        let Some((at, len, _)) = find(base, &fuzzy_content, &e.old_text, fo) else {
            return Err(if many {
                format!("Could not find edits[{i}] in {path}. The oldText must match exactly including all whitespace and newlines.")
            } else {
                format!("Could not find the exact text in {path}. The old text must match exactly including all whitespace and newlines.")
            });
        };
        let n = count_occurrences(&fuzzy_content, fo);
        if n > 1 {
            return Err(if many {
                format!("Found {n} occurrences of edits[{i}] in {path}. Each oldText must be unique. Please provide more context to make it unique.")
            } else {
                format!("Found {n} occurrences of the text in {path}. The text must be unique. Please provide more context to make it unique.")
            });
        }
        matched.push((at, len, i));
    }
    sort::sort_by_key(&mut matched, |m| m.0);
    for w in matched.windows(2) {
        if w[0].0 + w[0].1 > w[1].0 {
            return Err(format!(
                "edits[{}] and edits[{}] overlap in {path}. Merge them into one edit or target disjoint regions.",
                w[0].2, w[1].2
            ));
        }
    }
    let located: Vec<Replacement> = matched
        .into_iter()
        .map(|(at, len, i)| Replacement {
            at,
            len,
            new_text: edits[i].new_text.clone(),
        })
        .collect();
    let replacements = if used_fuzzy {
        widen_to_lines(content, base, &located)?
    } else {
        located
    };
    let new = splice(content, &replacements);
    if new == content {
        return Err(if many {
            format!("No changes made to {path}. The replacements produced identical content.")
        } else {
            format!("No changes made to {path}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected.")
        });
    }
    Ok(Applied { new, replacements })
}

/// `content` with the sorted, disjoint replacements applied.
fn splice(content: &str, replacements: &[Replacement]) -> String {
    let extra: usize = replacements.iter().map(|r| r.new_text.len()).sum();
    let mut out = String::with_capacity(content.len() + extra);
    let mut pos = 0;
    for r in replacements {
        out.push_str(&content[pos..r.at]);
        out.push_str(&r.new_text);
        pos = r.at + r.len;
    }
    out.push_str(&content[pos..]);
    out
}

/// Start offsets of the lines of `text` (each with its `\n`; an empty remainder after the
/// last `\n` is not a line), plus the end.
fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
    if starts.last() != Some(&text.len()) {
        starts.push(text.len());
    }
    if text.is_empty() {
        starts.clear();
    }
    starts
}

/// Replacements located in `base` (the fuzzy form of `original`) turned into replacements of
/// `original` that rewrite only the whole lines they touch, from their fuzzy form; lines no
/// replacement touches keep their original text.
fn widen_to_lines(
    original: &str,
    base: &str,
    replacements: &[Replacement],
) -> Result<Vec<Replacement>, String> {
    let orig_lines = line_starts(original);
    let base_lines = line_starts(base);
    if orig_lines.len() != base_lines.len() {
        return Err(
            "Cannot preserve unchanged lines because the base content has a different line count."
                .into(),
        );
    }
    let line_count = base_lines.len().saturating_sub(1);
    let outside = || "Replacement range is outside the base content.".to_string();
    // (first line, end line exclusive, replacements)
    let mut groups: Vec<(usize, usize, Vec<&Replacement>)> = Vec::new();
    for r in replacements {
        // The line holding the first matched byte, then every line up to the match's end.
        let start = base_lines[..line_count]
            .partition_point(|&s| s <= r.at)
            .checked_sub(1)
            .filter(|&l| r.at < base_lines[l + 1])
            .ok_or_else(outside)?;
        let mut end = start;
        while end < line_count && base_lines[end + 1] < r.at + r.len {
            end += 1;
        }
        if end >= line_count {
            return Err(outside());
        }
        match groups.last_mut() {
            Some(g) if start < g.1 => {
                g.1 = g.1.max(end + 1);
                g.2.push(r);
            }
            _ => groups.push((start, end + 1, vec![r])),
        }
    }
    Ok(groups
        .into_iter()
        .map(|(first, end, rs)| {
            let (from, to) = (base_lines[first], base_lines[end]);
            let mut text = String::new();
            let mut pos = from;
            for r in rs {
                text.push_str(&base[pos..r.at]);
                text.push_str(&r.new_text);
                pos = r.at + r.len;
            }
            text.push_str(&base[pos..to]);
            Replacement {
                at: orig_lines[first],
                len: orig_lines[end] - orig_lines[first],
                new_text: text,
            }
        })
        .collect())
}

/// The line ending of the line holding `offset` in `text`: its own `\n` or `\r\n`, that of the
/// line before for an unterminated last line; a lone `\r` only in files without any `\n`.
fn line_ending_at(text: &str, offset: usize) -> &'static str {
    let b = text.as_bytes();
    let lf = memchr::memchr(b'\n', &b[offset.min(b.len())..])
        .map(|i| offset + i)
        .or_else(|| memchr::memrchr(b'\n', &b[..(offset + 1).min(b.len())]));
    match lf {
        None if memchr::memchr(b'\r', b).is_some() => "\r",
        None => "\n",
        Some(i) if i > 0 && b[i - 1] == b'\r' => "\r\n",
        Some(_) => "\n",
    }
}

/// Applies replacements located in `to_lf(original)` to `original` itself: text outside the
/// replaced ranges keeps its bytes, line breaks in new text take the line ending where the
/// replaced range starts.
pub fn splice_into_original(original: &str, replacements: &[Replacement]) -> String {
    // Only CRLF changes length when normalizing: the LF of the n-th CRLF sits n bytes earlier
    // in the normalized text.
    let crlfs: Vec<usize> = memchr::memmem::find_iter(original.as_bytes(), b"\r\n").collect();
    let mut before = 0;
    let mut to_original = |offset: usize| {
        while before < crlfs.len() && crlfs[before] - before < offset {
            before += 1;
        }
        offset + before
    };
    let mut out = String::with_capacity(original.len());
    let push = |out: &mut String, part: &str| {
        if part.is_empty() {
            return;
        }
        // A CR before the seam and an LF after it would merge into one CRLF: keep them two
        // line breaks, as the diff shows them.
        if out.ends_with('\r') && part.starts_with('\n') {
            out.push('\n');
        }
        out.push_str(part);
    };
    let mut pos = 0;
    for r in replacements {
        let start = to_original(r.at);
        push(&mut out, &original[pos..start]);
        let ending = line_ending_at(original, start);
        if ending == "\n" {
            push(&mut out, &r.new_text);
        } else {
            push(&mut out, &r.new_text.replace('\n', ending));
        }
        pos = to_original(r.at + r.len);
    }
    push(&mut out, &original[pos..]);
    out
}

#[cfg(test)]
#[path = "tests/edit_apply.rs"]
mod tests;
