//! The one approximation of JavaScript's `localeCompare` (Node's ICU root collation) for the
//! names pi sorts: model ids, provider names and (lowercased) file names for `ls`. Like ICU it
//! compares on three levels: base characters (whitespace < punctuation and symbols < digits <
//! letters), then accents, then case. A small table covers ASCII, Latin-1 and the common
//! Latin Extended-A letters; other characters fall back to code point order within their
//! group. `src/util/collate_tests.rs` holds Node's order for the characters this covers.

use std::cmp::Ordering;

/// Whitespace with its own primary weight, in ICU's order. Other whitespace follows.
const SPACES: &str = "\t\n\u{b}\u{c}\r ";

/// Punctuation and symbols in ICU's root order, after whitespace and before digits. Other
/// symbols follow by code point.
const PUNCT: &str = "_-,;:!¡?¿.'\"«»()[]{}§@*/\\&#%`^°©+±<=>|~$£¥€";

// Primary weight bases of the groups, far enough apart for any code point in between.
const OTHER_SPACE: u32 = 0x10;
const PUNCT_BASE: u32 = 0x20_0000;
const OTHER_SYMBOL: u32 = 0x30_0000;
const DIGIT_BASE: u32 = 0x50_0000;
const LATIN_BASE: u32 = 0x60_0000;
const OTHER_LETTER: u32 = 0x70_0000;

/// Tertiary weights: lowercase (and caseless) < no-break variant < uppercase.
const LOWER: u8 = 0;
const NO_BREAK: u8 = 1;
const UPPER: u8 = 2;

/// Secondary weights of the diacritics, in ICU's order (0 is "no accent").
mod mark {
    pub const ACUTE: u8 = 1;
    pub const GRAVE: u8 = 2;
    pub const BREVE: u8 = 3;
    pub const CIRCUMFLEX: u8 = 4;
    pub const CARON: u8 = 5;
    pub const RING: u8 = 6;
    pub const DIAERESIS: u8 = 7;
    pub const DOUBLE_ACUTE: u8 = 8;
    pub const TILDE: u8 = 9;
    pub const DOT: u8 = 10;
    pub const CEDILLA: u8 = 11;
    pub const OGONEK: u8 = 12;
    pub const MACRON: u8 = 13;
    pub const STROKE: u8 = 14;
    /// `ð`, `æ`, `œ`, `ß`: variants of `d`, `ae`, `oe`, `ss` that sort after every accent.
    pub const LIGATURE: u8 = 15;
}

/// Compares as JavaScript's `a.localeCompare(b)` does in Node: `Equal` only where Node says 0.
/// `ls` passes names it has lowercased, as pi does.
pub fn locale_compare(a: &str, b: &str) -> Ordering {
    primaries(a)
        .cmp(primaries(b))
        .then_with(|| secondaries(a).cmp(secondaries(b)))
        .then_with(|| tertiaries(a).cmp(tertiaries(b)))
}

fn primaries(s: &str) -> impl Iterator<Item = u32> + '_ {
    s.chars().flat_map(|c| element(c).primaries())
}

fn secondaries(s: &str) -> impl Iterator<Item = u8> + '_ {
    s.chars().flat_map(|c| element(c).secondaries())
}

fn tertiaries(s: &str) -> impl Iterator<Item = u8> + '_ {
    s.chars().flat_map(|c| element(c).tertiaries())
}

/// One character's collation elements: up to two base weights, then an accent weight.
#[derive(Clone, Copy)]
struct Element {
    primary: [u32; 2],
    /// How many of `primary` are used: 0 for an ignorable character or a combining mark.
    len: usize,
    mark: u8,
    tertiary: u8,
}

impl Element {
    fn primaries(self) -> impl Iterator<Item = u32> {
        self.primary.into_iter().take(self.len)
    }

    /// A 0 per base weight, then the accent if there is one.
    fn secondaries(self) -> impl Iterator<Item = u8> {
        let accent = (self.mark != 0).then_some(self.mark);
        std::iter::repeat_n(0, self.len).chain(accent)
    }

    fn tertiaries(self) -> impl Iterator<Item = u8> {
        let accent = (self.mark != 0).then_some(LOWER);
        std::iter::repeat_n(self.tertiary, self.len).chain(accent)
    }
}

fn element(c: char) -> Element {
    let single = |primary| Element {
        primary: [primary, 0],
        len: 1,
        mark: 0,
        tertiary: LOWER,
    };
    if let Some(i) = SPACES.find(c) {
        return single(i as u32);
    }
    if c == '\u{a0}' {
        return Element {
            tertiary: NO_BREAK,
            ..element(' ')
        };
    }
    if c.is_whitespace() {
        return single(OTHER_SPACE + c as u32);
    }
    if let Some(i) = PUNCT.find(c) {
        return single(PUNCT_BASE + i as u32);
    }
    if let Some(d) = c.to_digit(10) {
        return single(DIGIT_BASE + d);
    }
    if let Some(mark) = combining_mark(c) {
        return Element {
            primary: [0, 0],
            len: 0,
            mark,
            tertiary: LOWER,
        };
    }
    if c.is_control() {
        // Ignorable in ICU, like a lone combining mark without a weight of its own.
        return Element {
            primary: [0, 0],
            len: 0,
            mark: 0,
            tertiary: LOWER,
        };
    }
    if !c.is_alphanumeric() {
        return single(OTHER_SYMBOL + c as u32);
    }
    let lower = c.to_lowercase().next().unwrap_or(c);
    let tertiary = if c.is_uppercase() { UPPER } else { LOWER };
    let (letters, mark) = latin(lower).unwrap_or(("", 0));
    let mut element = Element {
        primary: [0, 0],
        len: 0,
        mark,
        tertiary,
    };
    if letters.is_empty() {
        // Not a Latin letter: after `z`, by code point (`µ` is the Greek `μ` to ICU).
        let lower = if lower == 'µ' { 'μ' } else { lower };
        element.primary[0] = OTHER_LETTER + lower as u32;
        element.len = 1;
        return element;
    }
    for (slot, letter) in element.primary.iter_mut().zip(letters.chars()) {
        *slot = latin_primary(letter);
        element.len += 1;
    }
    element
}

/// A Latin letter's primary weight; `ı`, `ŋ` and `þ` are letters of their own after `i`,
/// `n` and `z`.
fn latin_primary(letter: char) -> u32 {
    let (base, after) = match letter {
        'ı' => ('i', 1),
        'ŋ' => ('n', 1),
        'þ' => ('z', 1),
        other => (other, 0),
    };
    LATIN_BASE + 2 * base as u32 + after
}

/// The base letters and accent of a lowercase Latin letter.
fn latin(c: char) -> Option<(&'static str, u8)> {
    use mark::*;
    if c.is_ascii_lowercase() {
        // Every ASCII letter is its own base; `ASCII` indexes it without allocating.
        const ASCII: &str = "abcdefghijklmnopqrstuvwxyz";
        let i = (c as u8 - b'a') as usize;
        return Some((&ASCII[i..=i], 0));
    }
    let found = match c {
        'á' => ("a", ACUTE),
        'à' => ("a", GRAVE),
        'â' => ("a", CIRCUMFLEX),
        'ã' => ("a", TILDE),
        'ä' => ("a", DIAERESIS),
        'å' => ("a", RING),
        'ā' => ("a", MACRON),
        'ă' => ("a", BREVE),
        'ą' => ("a", OGONEK),
        'æ' => ("ae", LIGATURE),
        'ç' => ("c", CEDILLA),
        'ć' => ("c", ACUTE),
        'č' => ("c", CARON),
        'ď' => ("d", CARON),
        'đ' => ("d", STROKE),
        'ð' => ("d", LIGATURE),
        'é' => ("e", ACUTE),
        'è' => ("e", GRAVE),
        'ê' => ("e", CIRCUMFLEX),
        'ë' => ("e", DIAERESIS),
        'ē' => ("e", MACRON),
        'ė' => ("e", DOT),
        'ę' => ("e", OGONEK),
        'ě' => ("e", CARON),
        'ğ' => ("g", BREVE),
        'í' => ("i", ACUTE),
        'ì' => ("i", GRAVE),
        'î' => ("i", CIRCUMFLEX),
        'ï' => ("i", DIAERESIS),
        'ī' => ("i", MACRON),
        'ı' => ("ı", 0),
        'ł' => ("l", STROKE),
        'ñ' => ("n", TILDE),
        'ń' => ("n", ACUTE),
        'ň' => ("n", CARON),
        'ŋ' => ("ŋ", 0),
        'ó' => ("o", ACUTE),
        'ò' => ("o", GRAVE),
        'ô' => ("o", CIRCUMFLEX),
        'õ' => ("o", TILDE),
        'ö' => ("o", DIAERESIS),
        'ő' => ("o", DOUBLE_ACUTE),
        'ø' => ("o", STROKE),
        'œ' => ("oe", LIGATURE),
        'ř' => ("r", CARON),
        'ś' => ("s", ACUTE),
        'š' => ("s", CARON),
        'ş' => ("s", CEDILLA),
        'ß' => ("ss", LIGATURE),
        'ť' => ("t", CARON),
        'ú' => ("u", ACUTE),
        'ù' => ("u", GRAVE),
        'û' => ("u", CIRCUMFLEX),
        'ü' => ("u", DIAERESIS),
        'ū' => ("u", MACRON),
        'ů' => ("u", RING),
        'ű' => ("u", DOUBLE_ACUTE),
        'ý' => ("y", ACUTE),
        'ÿ' => ("y", DIAERESIS),
        'ź' => ("z", ACUTE),
        'ż' => ("z", DOT),
        'ž' => ("z", CARON),
        'þ' => ("þ", 0),
        _ => return None,
    };
    Some(found)
}

/// The accent weight of a combining diacritic, so `a` + U+0301 equals `á`.
fn combining_mark(c: char) -> Option<u8> {
    use mark::*;
    let found = match c {
        '\u{301}' => ACUTE,
        '\u{300}' => GRAVE,
        '\u{306}' => BREVE,
        '\u{302}' => CIRCUMFLEX,
        '\u{30c}' => CARON,
        '\u{30a}' => RING,
        '\u{308}' => DIAERESIS,
        '\u{30b}' => DOUBLE_ACUTE,
        '\u{303}' => TILDE,
        '\u{307}' => DOT,
        '\u{327}' => CEDILLA,
        '\u{328}' => OGONEK,
        '\u{304}' => MACRON,
        _ => return None,
    };
    Some(found)
}

#[cfg(test)]
#[path = "collate_tests.rs"]
mod tests;
