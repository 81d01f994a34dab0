//! Reading a session file line by line, the one way both loaders (eager and lazy) do it: lines
//! end at `\n` only (U+2028/U+2029 inside strings are not line breaks), a trailing `\r` is
//! tolerated, and a line longer than [`MAX_LINE_BYTES`] is reported and skipped without ever
//! being held in memory whole. Session files are opened with `util::files::open_regular`,
//! so a FIFO or a device never blocks or floods the loader.
//!
//! JSON is parsed as JavaScript's `JSON.parse` would accept it: pi may have written a lone
//! UTF-16 surrogate (`"\ud800"`), which JavaScript strings allow and Rust strings do not, so a
//! line that fails only for that is read with each lone surrogate as U+FFFD.

use std::io::{self, BufRead, BufReader, Read};

use serde::de::DeserializeOwned;

/// The longest line a session may hold (a few large pasted images stay well below this).
pub const MAX_LINE_BYTES: usize = 256 << 20;

/// One line of a file.
pub struct Line<'a> {
    /// 1-based line number.
    pub number: usize,
    /// Byte offset of the line's start in the file (or the part of it being read).
    pub offset: u64,
    /// The line without its `\n` (a `\r` before it included); empty when `too_long`.
    pub raw: &'a [u8],
    /// The line's length without `\n`.
    pub len: u64,
    /// Longer than [`MAX_LINE_BYTES`]: its bytes were not kept.
    pub too_long: bool,
}

impl Line<'_> {
    /// The content without a trailing `\r`.
    pub fn text(&self) -> &[u8] {
        self.raw.strip_suffix(b"\r").unwrap_or(self.raw)
    }

    /// Nothing but whitespace (such lines are skipped silently, as pi does).
    pub fn is_blank(&self) -> bool {
        !self.too_long && self.raw.iter().all(u8::is_ascii_whitespace)
    }

    /// The warning for a line that is too long to read.
    pub fn too_long_warning(&self) -> String {
        too_long_warning(self.number, self.len)
    }
}

/// The warning for line `number`, `len` bytes long, that is too long to read.
pub fn too_long_warning(number: usize, len: u64) -> String {
    format!(
        "line {number}: skipped a line of {len} bytes (longer than the {} MiB a session line may have)",
        MAX_LINE_BYTES >> 20
    )
}

/// Reads lines from `r`, which starts at byte `offset` of its file.
pub struct LineReader<R> {
    reader: BufReader<R>,
    buf: Vec<u8>,
    offset: u64,
    number: usize,
}

impl<R: Read> LineReader<R> {
    pub fn new(r: R, offset: u64) -> Self {
        LineReader {
            reader: BufReader::with_capacity(1 << 20, r),
            buf: Vec::new(),
            offset,
            number: 0,
        }
    }

    /// Bytes read so far (the offset of the next line).
    pub fn position(&self) -> u64 {
        self.offset
    }

    /// The next line, or `None` at the end of the input.
    pub fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        self.buf.clear();
        let start = self.offset;
        let mut len: u64 = 0;
        let mut newline = false;
        let mut too_long = false;
        loop {
            let chunk = match self.reader.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                break;
            }
            let (part, used) = match memchr::memchr(b'\n', chunk) {
                Some(i) => {
                    newline = true;
                    (&chunk[..i], i + 1)
                }
                None => (chunk, chunk.len()),
            };
            len += part.len() as u64;
            if !too_long {
                if len > MAX_LINE_BYTES as u64 {
                    too_long = true;
                    self.buf = Vec::new();
                } else {
                    self.buf.extend_from_slice(part);
                }
            }
            self.reader.consume(used);
            if newline {
                break;
            }
        }
        if len == 0 && !newline {
            return Ok(None);
        }
        self.offset += len + u64::from(newline);
        self.number += 1;
        Ok(Some(Line {
            number: self.number,
            offset: start,
            raw: &self.buf,
            len,
            too_long,
        }))
    }
}

/// Parses one line of JSON as JavaScript would accept it (see the module doc).
pub fn parse_json<T: DeserializeOwned>(text: &[u8]) -> Result<T, serde_json::Error> {
    match serde_json::from_slice(text) {
        Ok(v) => Ok(v),
        Err(e) => match replace_lone_surrogates(text) {
            Some(fixed) => serde_json::from_slice(&fixed).map_err(|_| e),
            None => Err(e),
        },
    }
}

/// `text` with every `\uD800`–`\uDFFF` escape that is not half of a valid pair replaced by
/// `\uFFFD`; `None` if there is none.
fn replace_lone_surrogates(text: &[u8]) -> Option<Vec<u8>> {
    fn hex4(b: &[u8]) -> Option<u16> {
        let s = std::str::from_utf8(b.get(..4)?).ok()?;
        u16::from_str_radix(s, 16).ok()
    }
    fn escape_at(text: &[u8], i: usize) -> Option<u16> {
        match text.get(i..i + 2) {
            Some(b"\\u") => hex4(&text[i + 2..]),
            _ => None,
        }
    }
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    let mut copied = 0;
    while i < text.len() {
        if text[i] != b'\\' {
            i += 1;
            continue;
        }
        let Some(unit) = escape_at(text, i) else {
            // Any other escape: skip the backslash and the escaped character.
            i += 2;
            continue;
        };
        let high = (0xD800..0xDC00).contains(&unit);
        let low = (0xDC00..0xE000).contains(&unit);
        let paired = high && escape_at(text, i + 6).is_some_and(|u| (0xDC00..0xE000).contains(&u));
        if paired {
            i += 12;
            continue;
        }
        if high || low {
            let o = out.get_or_insert_with(|| Vec::with_capacity(text.len()));
            o.extend_from_slice(&text[copied..i]);
            o.extend_from_slice(b"\\ufffd");
            copied = i + 6;
        }
        i += 6;
    }
    let mut o = out?;
    o.extend_from_slice(&text[copied..]);
    Some(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn lines(text: &[u8]) -> Vec<(usize, u64, Vec<u8>, bool)> {
        let mut r = LineReader::new(text, 0);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().unwrap() {
            out.push((l.number, l.offset, l.raw.to_vec(), l.too_long));
        }
        out
    }

    #[test]
    fn splits_on_newline_only_and_keeps_offsets() {
        let got = lines("a\r\nb\u{2028}c\n\nlast".as_bytes());
        assert_eq!(got.len(), 4);
        assert_eq!(got[0], (1, 0, b"a\r".to_vec(), false));
        assert_eq!(got[1].2, "b\u{2028}c".as_bytes());
        assert_eq!(got[1].1, 3);
        assert_eq!(got[2], (3, 9, Vec::new(), false));
        assert_eq!(got[3], (4, 10, b"last".to_vec(), false));
        assert!(lines(b"").is_empty());
        assert_eq!(lines(b"x\n").len(), 1);
    }

    #[test]
    fn a_line_over_the_limit_is_skipped_without_being_kept() {
        // A reader that yields a long run of 'x' without ever allocating it.
        let long = std::io::repeat(b'x').take(MAX_LINE_BYTES as u64 + 10);
        let text = b"\nok\n".as_slice();
        let mut r = LineReader::new(long.chain(text), 0);
        let l = r.next_line().unwrap().unwrap();
        assert!(l.too_long && l.raw.is_empty());
        assert_eq!(l.len, MAX_LINE_BYTES as u64 + 10);
        assert!(l
            .too_long_warning()
            .starts_with("line 1: skipped a line of"));
        let l = r.next_line().unwrap().unwrap();
        assert_eq!((l.number, l.raw), (2, b"ok".as_slice()));
        assert_eq!(l.offset, MAX_LINE_BYTES as u64 + 11);
        assert!(r.next_line().unwrap().is_none());
    }

    #[test]
    fn lone_surrogates_read_as_replacement_characters_pairs_untouched() {
        let v: Value =
            parse_json(br#"{"a":"x\ud800y","b":"\ud83d\ude42","c":"\\ud800","d":"\udc00"}"#)
                .unwrap();
        assert_eq!(v["a"], "x\u{fffd}y");
        assert_eq!(v["b"], "\u{1f642}");
        assert_eq!(v["c"], "\\ud800");
        assert_eq!(v["d"], "\u{fffd}");
        assert!(parse_json::<Value>(b"{\"a\":").is_err());
        assert!(replace_lone_surrogates(br#""\ud83d\ude42""#).is_none());
    }
}
