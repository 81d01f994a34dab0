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
    // Every character weighs the same wherever it stands, so a shared start decides nothing.
    let mut common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    while !a.is_char_boundary(common) {
        common -= 1;
    }
    let (a, b) = (&a[common..], &b[common..]);
    let primaries = |s| Primaries {
        chars: str::chars(s),
        pending: None,
    };
    primaries(a)
        .cmp(primaries(b))
        .then_with(|| secondaries(a).cmp(secondaries(b)))
        .then_with(|| tertiaries(a).cmp(tertiaries(b)))
}

/// The base weights of a string's characters: the level nearly every comparison ends on, so
/// ASCII skips [`element`].
struct Primaries<'a> {
    chars: std::str::Chars<'a>,
    /// The second weight of an expanding letter (`æ`, `ß`).
    pending: Option<u32>,
}

impl Iterator for Primaries<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        if let Some(primary) = self.pending.take() {
            return Some(primary);
        }
        loop {
            let c = self.chars.next()?;
            if c.is_ascii() {
                match ASCII_PRIMARY[c as usize] {
                    IGNORABLE => continue,
                    primary => return Some(primary),
                }
            }
            let element = element(c);
            match element.len {
                0 => continue,
                1 => return Some(element.primary[0]),
                _ => {
                    self.pending = Some(element.primary[1]);
                    return Some(element.primary[0]);
                }
            }
        }
    }
}

fn secondaries(s: &str) -> impl Iterator<Item = u8> + '_ {
    s.chars().flat_map(|c| element(c).secondaries())
}

fn tertiaries(s: &str) -> impl Iterator<Item = u8> + '_ {
    s.chars().flat_map(|c| element(c).tertiaries())
}

/// The primary weight of a control character: it has none.
const IGNORABLE: u32 = 0;

/// The primary weight of every ASCII character, the only ones most names hold.
static ASCII_PRIMARY: [u32; 128] = ascii_primaries();

const fn ascii_primaries() -> [u32; 128] {
    let mut table = [IGNORABLE; 128];
    let spaces = SPACES.as_bytes();
    let mut i = 0;
    while i < spaces.len() {
        table[spaces[i] as usize] = 1 + i as u32;
        i += 1;
    }
    // Weights are byte offsets into PUNCT: increasing, which is all the order needs.
    let punct = PUNCT.as_bytes();
    let mut i = 0;
    while i < punct.len() {
        if punct[i].is_ascii() {
            table[punct[i] as usize] = PUNCT_BASE + i as u32;
        }
        i += 1;
    }
    let mut d = 0;
    while d < 10 {
        table[(b'0' + d) as usize] = DIGIT_BASE + d as u32;
        d += 1;
    }
    let mut letter = b'a';
    while letter <= b'z' {
        table[letter as usize] = latin_primary(letter as char);
        table[letter.to_ascii_uppercase() as usize] = latin_primary(letter as char);
        letter += 1;
    }
    table
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
    let ignorable = |mark| Element {
        primary: [0, 0],
        len: 0,
        mark,
        tertiary: LOWER,
    };
    let single = |primary| Element {
        primary: [primary, 0],
        len: 1,
        mark: 0,
        tertiary: LOWER,
    };
    if c.is_ascii() {
        return match ASCII_PRIMARY[c as usize] {
            IGNORABLE => ignorable(0),
            primary => Element {
                tertiary: if c.is_ascii_uppercase() { UPPER } else { LOWER },
                ..single(primary)
            },
        };
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
    if let Some(mark) = combining_mark(c) {
        return ignorable(mark);
    }
    if c.is_control() {
        // Controls are ignorable in ICU.
        return ignorable(0);
    }
    if !c.is_alphanumeric() {
        return single(OTHER_SYMBOL + c as u32);
    }
    let lower = c.to_lowercase().next().unwrap_or(c);
    let tertiary = if c.is_uppercase() { UPPER } else { LOWER };
    if lower.is_ascii() {
        // The Kelvin sign and the like.
        return Element {
            tertiary,
            ..element(lower)
        };
    }
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
const fn latin_primary(letter: char) -> u32 {
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
