//! The edit tool's forgiving comparison form, pi's `normalizeForFuzzyMatch` step by step:
//! Unicode NFKC (compatibility forms: odd spaces, fullwidth ASCII, ligatures, super- and
//! subscripts, ...), trailing whitespace removed from every line, smart quotes to ASCII
//! quotes, Unicode dashes to `-`, and special spaces to a plain space.

use unicode_normalization::UnicodeNormalization;

use crate::util::js::is_js_space;

fn after_trim(c: char) -> char {
    match c {
        '\u{2018}'..='\u{201B}' => '\'',
        '\u{201C}'..='\u{201F}' => '"',
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        c => c,
    }
}

/// True when `normalize_for_fuzzy(text) == text`: plain ASCII with no trailing whitespace
/// on any line. Checked in one fast pass so exact edits on big files skip the copy.
pub fn is_fuzzy_invariant(text: &str) -> bool {
    let b = text.as_bytes();
    let trailing_space =
        |end: usize| end > 0 && matches!(b[end - 1], b' ' | b'\t' | 0x0B | 0x0C | b'\r');
    text.is_ascii()
        && !trailing_space(b.len())
        && !memchr::memchr_iter(b'\n', b).any(trailing_space)
}

/// pi's `normalizeForFuzzyMatch`.
pub fn normalize_for_fuzzy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut folded = String::new();
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if line.is_ascii() {
            out.push_str(line.trim_end_matches(|c: char| is_js_space(c)));
            continue;
        }
        folded.clear();
        folded.extend(line.nfkc());
        // NFKC never produces a newline, so the line structure is unchanged.
        out.extend(folded.trim_end_matches(is_js_space).chars().map(after_trim));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::normalize_for_fuzzy as n;

    #[test]
    fn invariance_check_agrees_with_normalization() {
        for t in [
            "plain\ntext\n",
            "a \nb",
            "x\t",
            "caf\u{e9}\n",
            "a\r\nb",
            "",
            "\n\n",
        ] {
            assert_eq!(
                super::is_fuzzy_invariant(t),
                t.is_ascii() && n(t) == t,
                "{t:?}"
            );
            // The check may say "no" for text that happens to be stable, never "yes" wrongly.
            if super::is_fuzzy_invariant(t) {
                assert_eq!(n(t), t, "{t:?}");
            }
        }
    }

    #[test]
    fn folds_quotes_dashes_spaces_and_trailing_whitespace() {
        assert_eq!(
            n("a \u{201C}b\u{201D} \u{2018}c\u{2019}  \nx\u{2014}y\u{00A0}z\t"),
            "a \"b\" 'c'\nx-yz".replace("yz", "y z")
        );
        assert_eq!(n("\u{FF21}\u{FF42}\u{2026}\u{FB01}"), "Ab...fi");
        assert_eq!(n("plain  \n\n"), "plain\n\n");
        let once = n("\u{00BD} \u{2122}\u{3000}");
        assert_eq!(n(&once), once);
    }
}
