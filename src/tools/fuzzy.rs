//! The edit tool's forgiving comparison form, following pi's steps: Unicode compatibility
//! folding (a hand-written subset of NFKC covering what shows up in source text: odd spaces,
//! fullwidth ASCII, ligatures, super/subscript digits, ellipsis, ...), trailing whitespace
//! removed from every line, smart quotes to ASCII quotes, Unicode dashes to `-`, and special
//! spaces to a plain space.

/// Compatibility folding of one character, or `None` when it stays as it is.
fn fold(c: char) -> Option<&'static str> {
    const DIGITS: [&str; 10] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];
    const ROMAN: [&str; 16] = [
        "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII", "L", "C", "D",
        "M",
    ];
    const ROMAN_LOWER: [&str; 16] = [
        "i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x", "xi", "xii", "l", "c", "d",
        "m",
    ];
    const CIRCLED: [&str; 20] = [
        "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16",
        "17", "18", "19", "20",
    ];
    let u = c as u32;
    Some(match c {
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => " ",
        '\u{00A8}' => " \u{308}",
        '\u{00AA}' => "a",
        '\u{00AF}' | '\u{FFE3}' => " \u{304}",
        '\u{00B2}' => "2",
        '\u{00B3}' => "3",
        '\u{00B4}' => " \u{301}",
        '\u{00B5}' => "\u{3BC}",
        '\u{00B8}' => " \u{327}",
        '\u{00B9}' => "1",
        '\u{00BA}' => "o",
        '\u{00BC}' => "1\u{2044}4",
        '\u{00BD}' => "1\u{2044}2",
        '\u{00BE}' => "3\u{2044}4",
        '\u{2011}' => "\u{2010}",
        '\u{2017}' => " \u{333}",
        '\u{2024}' => ".",
        '\u{2025}' => "..",
        '\u{2026}' => "...",
        '\u{2033}' => "\u{2032}\u{2032}",
        '\u{2034}' => "\u{2032}\u{2032}\u{2032}",
        '\u{2036}' => "\u{2035}\u{2035}",
        '\u{2037}' => "\u{2035}\u{2035}\u{2035}",
        '\u{203C}' => "!!",
        '\u{2047}' => "??",
        '\u{2048}' => "?!",
        '\u{2049}' => "!?",
        '\u{2070}' => "0",
        '\u{2071}' => "i",
        '\u{2074}'..='\u{2079}' => DIGITS[(u - 0x2070) as usize],
        '\u{2080}'..='\u{2089}' => DIGITS[(u - 0x2080) as usize],
        '\u{207A}' | '\u{208A}' => "+",
        '\u{207B}' | '\u{208B}' => "\u{2212}",
        '\u{207C}' | '\u{208C}' => "=",
        '\u{207D}' | '\u{208D}' => "(",
        '\u{207E}' | '\u{208E}' => ")",
        '\u{207F}' => "n",
        '\u{2100}' => "a/c",
        '\u{2101}' => "a/s",
        '\u{2103}' => "\u{B0}C",
        '\u{2109}' => "\u{B0}F",
        '\u{2116}' => "No",
        '\u{2121}' => "TEL",
        '\u{2122}' => "TM",
        '\u{2126}' => "\u{3A9}",
        '\u{212A}' => "K",
        '\u{212B}' => "\u{C5}",
        '\u{2160}'..='\u{216F}' => ROMAN[(u - 0x2160) as usize],
        '\u{2170}'..='\u{217F}' => ROMAN_LOWER[(u - 0x2170) as usize],
        '\u{2460}'..='\u{2473}' => CIRCLED[(u - 0x2460) as usize],
        '\u{FB00}' => "ff",
        '\u{FB01}' => "fi",
        '\u{FB02}' => "fl",
        '\u{FB03}' => "ffi",
        '\u{FB04}' => "ffl",
        '\u{FB05}' | '\u{FB06}' => "st",
        '\u{FF61}' => "\u{3002}",
        '\u{FF62}' => "\u{300C}",
        '\u{FF63}' => "\u{300D}",
        '\u{FF64}' => "\u{3001}",
        '\u{FFE0}' => "\u{A2}",
        '\u{FFE1}' => "\u{A3}",
        '\u{FFE2}' => "\u{AC}",
        '\u{FFE4}' => "\u{A6}",
        '\u{FFE5}' => "\u{A5}",
        '\u{FFE6}' => "\u{20A9}",
        _ => return None,
    })
}

/// JavaScript's `trimEnd` whitespace (WhiteSpace and LineTerminator of ECMAScript).
fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{B}' | '\u{C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

fn after_trim(c: char) -> char {
    match c {
        '\u{2018}'..='\u{201B}' => '\'',
        '\u{201C}'..='\u{201F}' => '"',
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        c => c,
    }
}

/// pi's `normalizeForFuzzyMatch`.
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
        for c in line.chars() {
            if ('\u{FF01}'..='\u{FF5E}').contains(&c) {
                // Fullwidth ASCII maps onto ASCII.
                folded.push(char::from_u32(c as u32 - 0xFEE0).unwrap_or(c));
                continue;
            }
            match fold(c) {
                Some(s) => folded.push_str(s),
                None => folded.push(c),
            }
        }
        // Folding never produces a newline, so the line structure is unchanged.
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
