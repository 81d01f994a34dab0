//! The one approximation of JavaScript's `localeCompare` (ICU root collation) for the names
//! pi sorts: whitespace, then punctuation and symbols (in ICU's order), then digits, then
//! letters compared case-insensitively. Two callers need slightly different rules, so two
//! functions share the core: [`locale_compare`] for model ids and provider names, and
//! [`locale_compare_folded`] for the `ls` tool's file names.

use std::cmp::Ordering;

/// Punctuation and symbols in ICU's root order, after whitespace and before digits.
const PUNCT: &str = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";

/// What sets the two callers' primary order apart.
#[derive(Clone, Copy)]
struct Rules {
    /// Every whitespace character sorts first, by code point; otherwise only the space does,
    /// and tabs and other blanks sort with the symbols by code point.
    whitespace_first: bool,
    /// Latin letters with diacritics weigh as their base letter (`é` beside `e`); otherwise
    /// they follow `z` by code point.
    fold_accents: bool,
}

/// Compares as JavaScript's `a.localeCompare(b)` does for ASCII-ish ids: punctuation <
/// digits < letters, letters case-insensitively first, then lowercase before uppercase.
pub fn locale_compare(a: &str, b: &str) -> Ordering {
    let rules = Rules {
        whitespace_first: true,
        fold_accents: false,
    };
    primary(a, b, rules).then_with(|| {
        let case = |c: char| u8::from(c.is_uppercase());
        a.chars().map(case).cmp(b.chars().map(case))
    })
}

/// Compares names the caller has already lowercased (`ls` sorts `name.toLowerCase()` with
/// `localeCompare`): like [`locale_compare`], but accented Latin letters sort with their base
/// letter, and names equal but for accents put the unaccented one first.
pub fn locale_compare_folded(a: &str, b: &str) -> Ordering {
    let rules = Rules {
        whitespace_first: false,
        fold_accents: true,
    };
    primary(a, b, rules).then_with(|| a.cmp(b))
}

fn primary(a: &str, b: &str, rules: Rules) -> Ordering {
    let weight = |c| weight(c, rules);
    a.chars().map(weight).cmp(b.chars().map(weight))
}

/// One character's primary weight: (group, order within the group).
fn weight(c: char, rules: Rules) -> (u8, u32) {
    if c == ' ' || (rules.whitespace_first && c.is_whitespace()) {
        return (0, c as u32);
    }
    if let Some(i) = PUNCT.find(c) {
        return (1, i as u32);
    }
    if c.is_ascii_digit() {
        return (2, c as u32);
    }
    if c.is_alphabetic() {
        let lower = c.to_lowercase().next().unwrap_or(c);
        let base = match rules.fold_accents {
            true => latin_base(lower).unwrap_or(lower),
            false => lower,
        };
        return (3, base as u32);
    }
    (1, 100 + c as u32)
}

/// The base letter of a lowercase Latin-1 letter with a diacritic.
fn latin_base(c: char) -> Option<char> {
    let base = match c {
        'à'..='å' => 'a',
        'ç' => 'c',
        'è'..='ë' => 'e',
        'ì'..='ï' => 'i',
        'ñ' => 'n',
        'ò'..='ö' | 'ø' => 'o',
        'ù'..='ü' => 'u',
        'ý' | 'ÿ' => 'y',
        _ => return None,
    };
    Some(base)
}

#[cfg(test)]
#[path = "collate_tests.rs"]
mod tests;
