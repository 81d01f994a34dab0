//! JavaScript's notions of text that pi's behaviour depends on, so ours matches it.

/// ECMAScript WhiteSpace or LineTerminator: what `trim`, `trimEnd` and `Number(" 1 ")` skip.
pub fn is_js_space(c: char) -> bool {
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
