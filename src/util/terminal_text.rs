//! The one cleaner for untrusted text before it is shown or stored as a command's output:
//! removes every terminal escape sequence (CSI, OSC, DCS, APC, PM, SOS, two-character escapes,
//! and their 8-bit C1 forms), every control character other than tab and newline (carriage
//! returns included, as pi drops them), and the invisible characters that can make a
//! transcript say something else than it seems: bidirectional overrides, embeddings, isolates
//! and marks (U+202A–202E, U+2066–2069, U+200E, U+200F, U+061C), zero-width characters
//! (U+200B–200D, U+FEFF) and the interlinear annotation characters (U+FFF9–FFFB).
//!
//! [`Cleaner`] does the same over a stream cut into arbitrary chunks: an escape sequence split
//! across chunks is still removed whole.

/// `s` with escapes, control and invisible characters removed (see the module doc).
pub fn clean(s: &str) -> String {
    let mut c = Cleaner::default();
    let mut out = c.push(s);
    out.push_str(&c.finish());
    out
}

/// Whether `c` is one of the invisible formatting characters this module removes.
pub fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2066}'..='\u{2069}'
        | '\u{061C}'
        | '\u{FEFF}'
        | '\u{FFF9}'..='\u{FFFB}')
}

/// Where the cleaner is inside an escape sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    #[default]
    Text,
    /// After ESC.
    Escape,
    /// After ESC and intermediate bytes (`ESC ( B`).
    Intermediate,
    /// Inside a CSI (`ESC [` or C1 0x9B) before its final byte.
    Csi,
    /// Inside a string sequence (OSC, DCS, APC, PM, SOS) before its terminator.
    Str,
    /// After ESC inside a string sequence (`ESC \` ends it).
    StrEscape,
}

/// Streaming [`clean`]: feed chunks in order; the state of an unfinished escape carries over.
#[derive(Debug, Default)]
pub struct Cleaner {
    state: State,
}

impl Cleaner {
    /// The cleaned text of the next chunk.
    pub fn push(&mut self, chunk: &str) -> String {
        let mut out = String::with_capacity(chunk.len());
        for c in chunk.chars() {
            self.step(c, &mut out);
        }
        out
    }

    /// Ends the stream; an unfinished escape sequence is dropped.
    pub fn finish(&mut self) -> String {
        self.state = State::Text;
        String::new()
    }

    fn step(&mut self, c: char, out: &mut String) {
        match self.state {
            State::Text => self.text(c, out),
            State::Escape => match c {
                '[' => self.state = State::Csi,
                ']' | 'P' | '_' | '^' | 'X' => self.state = State::Str,
                '\u{20}'..='\u{2f}' => self.state = State::Intermediate,
                '\u{30}'..='\u{7e}' => self.state = State::Text,
                // Not an escape after all: the lone ESC goes, the character stays.
                _ => {
                    self.state = State::Text;
                    self.text(c, out);
                }
            },
            State::Intermediate => match c {
                '\u{20}'..='\u{2f}' => {}
                '\u{30}'..='\u{7e}' => self.state = State::Text,
                _ => {
                    self.state = State::Text;
                    self.text(c, out);
                }
            },
            State::Csi => match c {
                '\u{20}'..='\u{3f}' => {}
                '\u{40}'..='\u{7e}' => self.state = State::Text,
                // A broken sequence ends here; what follows is text again.
                _ => {
                    self.state = State::Text;
                    self.text(c, out);
                }
            },
            State::Str => match c {
                '\u{7}' | '\u{9c}' => self.state = State::Text,
                '\u{1b}' => self.state = State::StrEscape,
                _ => {}
            },
            State::StrEscape => {
                if c == '\\' {
                    self.state = State::Text;
                } else {
                    // ESC ends the string and starts a new escape, as terminals treat it.
                    self.state = State::Escape;
                    self.step(c, out);
                }
            }
        }
    }

    fn text(&mut self, c: char, out: &mut String) {
        match c {
            '\u{1b}' => self.state = State::Escape,
            '\u{9b}' => self.state = State::Csi,
            '\u{90}' | '\u{98}' | '\u{9d}' | '\u{9e}' | '\u{9f}' => self.state = State::Str,
            '\t' | '\n' => out.push(c),
            c if c.is_control() || is_invisible(c) => {}
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_control_characters_are_removed() {
        assert_eq!(clean("\u{1b}[31mred\u{1b}[0m"), "red");
        assert_eq!(clean("a\u{1b}]0;title\u{7}b"), "ab");
        assert_eq!(clean("a\u{1b}]8;;http://x\u{1b}\\b"), "ab");
        assert_eq!(clean("\u{1b}(Bok\u{1b}=x"), "okx");
        assert_eq!(clean("a\u{0}b\tc\u{7}\r\n"), "ab\tc\n");
        assert_eq!(clean("x\u{1b}[2J\u{1b}[Hy\u{9b}1mz"), "xyz");
        assert_eq!(clean("\u{1b}_pi:c\u{7}ok"), "ok");
        assert_eq!(clean("\u{1b}Pq#0;2;0;0;0\u{1b}\\after"), "after");
        assert_eq!(clean("a\u{7f}b\u{85}c"), "abc");
        // A broken CSI does not swallow the text after it.
        assert_eq!(clean("a\u{1b}[12\nb"), "a\nb");
    }

    #[test]
    fn bidi_controls_and_zero_width_characters_are_removed() {
        // "Trojan source": an override that makes `admin` read as something else.
        assert_eq!(clean("user\u{202E}nimda\u{202C} ok"), "usernimda ok");
        for c in [
            '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}',
            '\u{2068}', '\u{2069}', '\u{200B}', '\u{200C}', '\u{200D}', '\u{200E}', '\u{200F}',
            '\u{FEFF}', '\u{061C}', '\u{FFF9}',
        ] {
            assert_eq!(clean(&format!("a{c}b")), "ab", "U+{:04X} kept", c as u32);
        }
        assert_eq!(clean("héllo → 日本 ✓"), "héllo → 日本 ✓");
    }

    #[test]
    fn an_escape_split_across_chunks_is_still_removed() {
        let text =
            "one \u{1b}[1;31mred\u{1b}[0m \u{1b}]8;;http://x\u{1b}\\link\u{1b}]8;;\u{7} two\r\n";
        let chars: Vec<char> = text.chars().collect();
        for cut in 0..=chars.len() {
            for cut2 in cut..=chars.len() {
                let a: String = chars[..cut].iter().collect();
                let b: String = chars[cut..cut2].iter().collect();
                let c: String = chars[cut2..].iter().collect();
                let mut cleaner = Cleaner::default();
                let joined =
                    cleaner.push(&a) + &cleaner.push(&b) + &cleaner.push(&c) + &cleaner.finish();
                assert_eq!(joined, "one red link two\n", "cut at {cut} and {cut2}");
            }
        }
    }
}
