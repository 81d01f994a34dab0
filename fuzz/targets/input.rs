//! Reading structure out of fuzz bytes, and the chunkings a stream is cut into.
//!
//! A target that needs more than one value (a chunking seed and a stream, a template and its
//! arguments) reads them from the front of the input with [`Input`]; an exhausted input reads as
//! zeros, so every byte string is a valid input and libFuzzer's mutations stay meaningful.

use std::ops::Range;

/// A cursor over the fuzz input.
pub struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Input { data }
    }

    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((b, rest)) => {
                self.data = rest;
                *b
            }
            None => 0,
        }
    }

    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }

    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.byte(), self.byte(), self.byte(), self.byte()])
    }

    pub fn bool(&mut self) -> bool {
        self.byte() & 1 == 1
    }

    /// Up to `n` bytes.
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let (head, tail) = self.data.split_at(n.min(self.data.len()));
        self.data = tail;
        head
    }

    /// Bytes up to the next `sep` (consumed, not returned), or the rest.
    pub fn until(&mut self, sep: u8) -> &'a [u8] {
        match self.data.iter().position(|&b| b == sep) {
            Some(i) => {
                let head = &self.data[..i];
                self.data = &self.data[i + 1..];
                head
            }
            None => self.rest(),
        }
    }

    /// [`until`](Self::until), as text (invalid UTF-8 replaced).
    pub fn text_until(&mut self, sep: u8) -> String {
        String::from_utf8_lossy(self.until(sep)).into_owned()
    }

    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.data)
    }
}

/// SplitMix64: a tiny deterministic generator, so a chunking is a function of the input.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Chunk sizes drawn from `seed`: mostly 1–4 bytes (where split bugs live), sometimes empty
/// chunks (a read that returned nothing new), sometimes long runs.
pub fn random_chunking(seed: u64, len: usize) -> Vec<Range<usize>> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    let mut at = 0;
    while at < len {
        let size = match rng.below(16) {
            0 => 0,
            1..=10 => 1 + rng.below(4),
            11..=14 => 1 + rng.below(32),
            _ => 1 + rng.below(len),
        };
        let end = (at + size).min(len);
        out.push(at..end);
        at = end;
    }
    out
}

/// Every single cut is tried for streams up to this long, every pair of cuts up to the next.
const SINGLE_CUTS_UP_TO: usize = 48;
const PAIRS_OF_CUTS_UP_TO: usize = 12;

/// The chunkings a split-invariance property is checked under: the seeded random one (which
/// the fuzzer steers), one byte at a time, every single cut of a short stream, and every pair
/// of cuts of a very short one. The whole stream in one piece is the reference the caller
/// compares them to.
pub fn chunkings(seed: u64, len: usize) -> Vec<Vec<Range<usize>>> {
    let mut out = vec![
        random_chunking(seed, len),
        (0..len).map(|i| i..i + 1).collect(),
    ];
    if len <= SINGLE_CUTS_UP_TO {
        out.extend((1..len).map(|c| vec![0..c, c..len]));
    }
    if len <= PAIRS_OF_CUTS_UP_TO {
        for a in 1..len {
            for b in a + 1..len {
                out.push(vec![0..a, a..b, b..len]);
            }
        }
    }
    out
}

/// A reader handing out `data` in the given chunks (one per `read`), as a socket might.
pub struct ChunkedReader<'a> {
    data: &'a [u8],
    chunks: std::vec::IntoIter<Range<usize>>,
    pending: Range<usize>,
}

impl<'a> ChunkedReader<'a> {
    pub fn new(data: &'a [u8], chunks: Vec<Range<usize>>) -> Self {
        ChunkedReader {
            data,
            chunks: chunks.into_iter(),
            pending: 0..0,
        }
    }
}

impl std::io::Read for ChunkedReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.pending.is_empty() {
            match self.chunks.next() {
                Some(r) => self.pending = r,
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.pending.len());
        let start = self.pending.start;
        buf[..n].copy_from_slice(&self.data[start..start + n]);
        self.pending.start += n;
        Ok(n)
    }
}

/// A short description of a chunking for failure messages.
pub fn describe(chunks: &[Range<usize>]) -> String {
    if chunks.len() > 1 && chunks.iter().all(|r| r.len() == 1) {
        return "one byte at a time".into();
    }
    let cuts: Vec<String> = chunks.iter().map(|r| r.end.to_string()).collect();
    match cuts.len() {
        0..=24 => format!("cut at [{}]", cuts.join(",")),
        n => format!("cut at [{},… ({n} chunks)]", cuts[..24].join(",")),
    }
}
