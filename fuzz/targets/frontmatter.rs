//! Front matter of skills and prompt templates (`resources::frontmatter`): any text is read
//! without a panic, text without a front-matter block is all body, and a block written from
//! known fields (plain, quoted and block scalars, booleans) reads back as those fields.
//!
//! Input: a mode byte; odd: the text itself; even: fields and a body to write and read back.

use std::collections::BTreeMap;

use pi::resources::frontmatter::{parse, FmValue};

use super::input::Input;

pub fn run(data: &[u8]) {
    let mut input = Input::new(data);
    if input.byte() & 1 == 1 {
        any_text(&String::from_utf8_lossy(input.rest()));
    } else {
        round_trip(&mut input);
    }
}

fn any_text(text: &str) {
    let fm = parse(text);
    let normalized = text.replace("\r\n", "\n").replace('\r', "\n");
    let has_block = normalized.starts_with("---") && normalized[3..].contains("\n---");
    if !has_block {
        assert!(fm.fields.is_empty());
        // The one error without a block: a first line `---` that nothing closes.
        let opened = normalized.lines().next().map(str::trim_end) == Some("---");
        assert!(fm.error.is_none() || opened, "{:?}", fm.error);
        assert_eq!(fm.body, normalized, "text without front matter is all body");
    }
    assert!(fm.fields.keys().all(|k| !k.is_empty()), "{:?}", fm.fields);
}

const KEY_CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789_-";
const WORD_CHARS: &[u8] =
    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,/()!?= ";
const QUOTED_CHARS: &[u8] = b"ab c:#'\"\\\n\t-|>{[";

fn pick(input: &mut Input, alphabet: &[u8], max: u8) -> String {
    let len = input.byte() % max;
    (0..len)
        .map(|_| alphabet[usize::from(input.byte()) % alphabet.len()] as char)
        .collect()
}

fn round_trip(input: &mut Input) {
    let mut text = String::from("---\n");
    let mut expected = BTreeMap::new();
    for _ in 0..input.byte() % 6 {
        let key = format!("k{}", pick(input, KEY_CHARS, 10));
        let (written, value) = match input.byte() % 5 {
            0 => {
                let word = pick(input, WORD_CHARS, 24).trim().to_string();
                let reserved = ["true", "false", "null", "~"]
                    .iter()
                    .any(|r| word.eq_ignore_ascii_case(r));
                if word.is_empty() || reserved {
                    continue;
                }
                (word.clone(), FmValue::Str(word))
            }
            1 => {
                let s = pick(input, QUOTED_CHARS, 16);
                let escaped = s
                    .replace('\\', "\\\\")
                    .replace('"', "\\\"")
                    .replace('\n', "\\n")
                    .replace('\t', "\\t");
                (format!("\"{escaped}\""), FmValue::Str(s))
            }
            2 => {
                let s = pick(input, QUOTED_CHARS, 16).replace(['\n', '\t'], " ");
                (format!("'{}'", s.replace('\'', "''")), FmValue::Str(s))
            }
            3 => {
                let b = input.bool();
                (b.to_string(), FmValue::Bool(b))
            }
            _ => {
                let lines: Vec<String> = (0..1 + input.byte() % 3)
                    .map(|_| pick(input, WORD_CHARS, 12).trim().to_string())
                    .filter(|l| !l.is_empty())
                    .collect();
                if lines.is_empty() {
                    continue;
                }
                let block: String = lines.iter().map(|l| format!("  {l}\n")).collect();
                text.push_str(&format!("{key}: |\n{block}"));
                expected.insert(key, FmValue::Str(format!("{}\n", lines.join("\n"))));
                continue;
            }
        };
        text.push_str(&format!("{key}: {written}\n"));
        expected.insert(key, value);
    }
    let body = String::from_utf8_lossy(input.rest()).replace('\r', "");
    text.push_str("---\n");
    text.push_str(&body);
    let fm = parse(&text);
    assert_eq!(fm.error, None, "{text:?}");
    assert_eq!(fm.fields, expected, "{text:?}");
    assert_eq!(fm.body, body.trim(), "{text:?}");
    any_text(&text);
}
