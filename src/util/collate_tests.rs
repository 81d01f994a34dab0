use super::*;

/// `model_resolve::locale_compare` before the two helpers became one, kept to prove its
/// callers' order unchanged.
fn old_model_compare(a: &str, b: &str) -> Ordering {
    const PUNCT: &str = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";
    fn key(c: char) -> (u8, u32) {
        if c.is_whitespace() {
            (0, c as u32)
        } else if let Some(i) = PUNCT.find(c) {
            (1, i as u32)
        } else if c.is_ascii_digit() {
            (2, c as u32)
        } else if c.is_alphabetic() {
            (3, c.to_lowercase().next().unwrap_or(c) as u32)
        } else {
            (1, 100 + c as u32)
        }
    }
    let primary = a.chars().map(key).cmp(b.chars().map(key));
    if primary != Ordering::Equal {
        return primary;
    }
    let case = |c: char| if c.is_uppercase() { 1u8 } else { 0 };
    a.chars().map(case).cmp(b.chars().map(case))
}

/// `tools::ls::locale_cmp` before the two helpers became one.
fn old_ls_compare(a: &str, b: &str) -> Ordering {
    fn weight(c: char) -> (u8, u32) {
        const PUNCT: &str = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";
        if let Some(i) = PUNCT.find(c) {
            return (0, i as u32);
        }
        if c.is_ascii_digit() {
            return (1, c as u32);
        }
        if c.is_ascii_alphabetic() {
            return (2, c as u32);
        }
        if c.is_alphabetic() {
            if let Some(base) = latin_base(c) {
                return (2, base as u32);
            }
            return (3, c as u32);
        }
        (0, 1000 + c as u32)
    }
    let primary = a.chars().map(weight).cmp(b.chars().map(weight));
    primary.then_with(|| a.cmp(b))
}

/// Characters from every group either rule set treats specially.
const ALPHABET: &[char] = &[
    ' ', '\t', '\n', '\u{a0}', '\u{2003}', '_', '-', '.', '$', '~', '§', '€', '0', '7', '9', 'a',
    'A', 'b', 'B', 'e', 'E', 'é', 'É', 'è', 'z', 'Z', 'ø', 'Ø', 'ß', 'ÿ', 'ñ', 'Ω', 'Ω', 'K', 'K',
    'İ', 'ı', 'σ', 'Σ', 'ς', 'я', 'Я', '中', '\u{301}', 'ℋ', '٣',
];

/// Every string of up to two characters from [`ALPHABET`], then pseudo-random longer ones.
fn corpus() -> Vec<String> {
    let mut out = vec![String::new()];
    for &x in ALPHABET {
        out.push(x.to_string());
        for &y in ALPHABET {
            out.push([x, y].iter().collect());
        }
    }
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    for _ in 0..2_000 {
        let len = 3 + (state % 5) as usize;
        let s: String = (0..len)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                ALPHABET[(state >> 33) as usize % ALPHABET.len()]
            })
            .collect();
        out.push(s);
    }
    out
}

#[test]
fn model_order_is_unchanged() {
    let corpus = corpus();
    for a in &corpus {
        for b in corpus.iter().step_by(7) {
            assert_eq!(
                locale_compare(a, b),
                old_model_compare(a, b),
                "{a:?} vs {b:?}"
            );
        }
    }
}

#[test]
fn ls_order_is_unchanged() {
    // `ls` compares lowercased names.
    let corpus: Vec<String> = corpus().iter().map(|s| s.to_lowercase()).collect();
    for a in &corpus {
        for b in corpus.iter().step_by(7) {
            assert_eq!(
                locale_compare_folded(a, b),
                old_ls_compare(a, b),
                "{a:?} vs {b:?}"
            );
        }
    }
}

#[test]
fn lowercasing_a_lowercased_character_changes_nothing() {
    // `locale_compare_folded` lowercases each letter again, which is only harmless because
    // lowercase mapping is idempotent: check it for every character.
    for c in (0..=0x10ffff).filter_map(char::from_u32) {
        for d in c.to_lowercase() {
            assert_eq!(d.to_lowercase().next(), Some(d), "{c:?}");
        }
    }
}

#[test]
fn orders_like_node() {
    // Node's `localeCompare` gives these.
    assert_eq!(locale_compare("a-b", "a1"), Ordering::Less);
    assert_eq!(locale_compare("B", "a"), Ordering::Greater);
    assert_eq!(locale_compare("a", "A"), Ordering::Less);
    assert_eq!(locale_compare_folded("é", "f"), Ordering::Less);
    assert_eq!(locale_compare_folded("e", "é"), Ordering::Less);
    assert_eq!(locale_compare_folded("a b", "a_b"), Ordering::Less);
}
