//! The AWS event-stream binary framing (`application/vnd.amazon.eventstream`) that Bedrock's
//! `ConverseStream` answers with: a pure, incremental decoder fed with arbitrary byte chunks,
//! plus the CRC-32 it checks. Each message is
//!
//! ```text
//! total length u32 | headers length u32 | prelude CRC u32 | headers | payload | message CRC u32
//! ```
//!
//! (big-endian; both CRCs are CRC-32/IEEE, the second over everything before it). A bad CRC or
//! an impossible length is an error the caller turns into the stream's one terminal `error`
//! event; the decoder never panics and never resynchronises after one.

/// Larger messages are refused (the service's own limit is 16 MiB).
const MAX_MESSAGE: usize = 16 * 1024 * 1024;
/// Prelude (12 bytes) plus the trailing message CRC (4 bytes).
const OVERHEAD: usize = 16;

const fn crc_table() -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
}

static CRC_TABLE: [u32; 256] = crc_table();

/// CRC-32 (IEEE 802.3, reflected, as zlib computes it).
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut c = !0u32;
    for b in bytes {
        c = CRC_TABLE[((c ^ *b as u32) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

/// A header value. Only strings matter to Bedrock; the other types are decoded so a message
/// carrying them still parses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderValue {
    Bool(bool),
    Int(i64),
    Bytes(Vec<u8>),
    String(String),
    Timestamp(i64),
    Uuid([u8; 16]),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub headers: Vec<(String, HeaderValue)>,
    pub payload: Vec<u8>,
}

impl Message {
    /// A string header (`:message-type`, `:event-type`, `:exception-type`, …).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find_map(|(k, v)| match v {
            HeaderValue::String(s) if k == name => Some(s.as_str()),
            _ => None,
        })
    }
}

/// Incremental decoder: `push` bytes, get back every message they complete.
#[derive(Debug, Default)]
pub struct Decoder {
    buf: Vec<u8>,
    failed: bool,
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

impl Decoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds `chunk`; returns the messages it completed and, if framing broke after them, the
    /// error (after which the decoder refuses further input).
    pub fn push(&mut self, chunk: &[u8]) -> (Vec<Message>, Option<String>) {
        let mut out = Vec::new();
        let err = self.decode(chunk, &mut out).err();
        (out, err)
    }

    fn decode(&mut self, chunk: &[u8], out: &mut Vec<Message>) -> Result<(), String> {
        if self.failed {
            return Err("Malformed Bedrock event stream: input after a framing error".into());
        }
        self.buf.extend_from_slice(chunk);
        let mut start = 0;
        loop {
            let rest = &self.buf[start..];
            if rest.len() < 12 {
                break;
            }
            let total = be32(rest) as usize;
            let headers_len = be32(&rest[4..]) as usize;
            let prelude_crc = be32(&rest[8..]);
            if crc32(&rest[..8]) != prelude_crc {
                return self.fail("prelude checksum mismatch");
            }
            if !(OVERHEAD..=MAX_MESSAGE).contains(&total) || headers_len > total - OVERHEAD {
                return self.fail(&format!(
                    "impossible lengths (total {total}, headers {headers_len})"
                ));
            }
            if rest.len() < total {
                break;
            }
            let msg = &rest[..total];
            if crc32(&msg[..total - 4]) != be32(&msg[total - 4..]) {
                return self.fail("message checksum mismatch");
            }
            let headers = match parse_headers(&msg[12..12 + headers_len]) {
                Ok(h) => h,
                Err(e) => return self.fail(&e),
            };
            out.push(Message {
                headers,
                payload: msg[12 + headers_len..total - 4].to_vec(),
            });
            start += total;
        }
        self.buf.drain(..start);
        Ok(())
    }

    /// Bytes received that do not yet form a whole message (non-zero at EOF = truncated).
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    fn fail(&mut self, what: &str) -> Result<(), String> {
        self.failed = true;
        self.buf.clear();
        Err(format!("Malformed Bedrock event stream: {what}"))
    }
}

fn parse_headers(mut b: &[u8]) -> Result<Vec<(String, HeaderValue)>, String> {
    fn take<'a>(b: &mut &'a [u8], n: usize) -> Result<&'a [u8], String> {
        if b.len() < n {
            return Err("header runs past its section".into());
        }
        let (head, tail) = b.split_at(n);
        *b = tail;
        Ok(head)
    }
    fn int(b: &mut &[u8], n: usize) -> Result<i64, String> {
        let bytes = take(b, n)?;
        let mut v: i64 = if bytes[0] & 0x80 != 0 { -1 } else { 0 };
        for x in bytes {
            v = (v << 8) | *x as i64;
        }
        Ok(v)
    }
    let mut out = Vec::new();
    while !b.is_empty() {
        let name_len = take(&mut b, 1)?[0] as usize;
        let name = String::from_utf8_lossy(take(&mut b, name_len)?).into_owned();
        let kind = take(&mut b, 1)?[0];
        let value = match kind {
            0 => HeaderValue::Bool(true),
            1 => HeaderValue::Bool(false),
            2 => HeaderValue::Int(int(&mut b, 1)?),
            3 => HeaderValue::Int(int(&mut b, 2)?),
            4 => HeaderValue::Int(int(&mut b, 4)?),
            5 => HeaderValue::Int(int(&mut b, 8)?),
            6 | 7 => {
                let len = int(&mut b, 2)? as u16 as usize;
                let bytes = take(&mut b, len)?.to_vec();
                if kind == 6 {
                    HeaderValue::Bytes(bytes)
                } else {
                    HeaderValue::String(String::from_utf8_lossy(&bytes).into_owned())
                }
            }
            8 => HeaderValue::Timestamp(int(&mut b, 8)?),
            9 => {
                let mut id = [0u8; 16];
                id.copy_from_slice(take(&mut b, 16)?);
                HeaderValue::Uuid(id)
            }
            other => return Err(format!("unknown header value type {other}")),
        };
        out.push((name, value));
    }
    Ok(out)
}

/// Encodes one message with string headers (what the test fixtures and mock servers need).
pub fn encode(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut h = Vec::new();
    for (k, v) in headers {
        h.push(k.len() as u8);
        h.extend_from_slice(k.as_bytes());
        h.push(7);
        h.extend_from_slice(&(v.len() as u16).to_be_bytes());
        h.extend_from_slice(v.as_bytes());
    }
    let total = (OVERHEAD + h.len() + payload.len()) as u32;
    let mut out = Vec::with_capacity(total as usize);
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&(h.len() as u32).to_be_bytes());
    let prelude_crc = crc32(&out);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(&h);
    out.extend_from_slice(payload);
    let crc = crc32(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

/// An `event` message as Bedrock sends one: `:event-type` names the union member and the
/// payload is that member's JSON.
pub fn encode_event(event_type: &str, json: &str) -> Vec<u8> {
    encode(
        &[
            (":event-type", event_type),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ],
        json.as_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_check_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    /// The smallest message from AWS's event-stream test suite (`int32_header`-style framing
    /// without headers): 16 bytes, total length 0x10, prelude CRC 0x05c248eb, message CRC
    /// 0x7d98c8ff.
    #[test]
    fn empty_message_matches_the_published_vector() {
        let bytes = [
            0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x05, 0xc2, 0x48, 0xeb, 0x7d, 0x98,
            0xc8, 0xff,
        ];
        assert_eq!(encode(&[], b""), bytes);
        let msgs = ok(Decoder::new().push(&bytes));
        assert_eq!(
            msgs,
            [Message {
                headers: vec![],
                payload: vec![]
            }]
        );
    }

    fn ok((msgs, err): (Vec<Message>, Option<String>)) -> Vec<Message> {
        assert_eq!(err, None);
        msgs
    }

    fn sample() -> (Vec<u8>, Vec<Message>) {
        let a = encode_event("messageStart", r#"{"role":"assistant"}"#);
        let b = encode(
            &[(":message-type", "exception"), (":exception-type", "x")],
            "ünï ✓".as_bytes(),
        );
        let mut bytes = a.clone();
        bytes.extend_from_slice(&b);
        let mut all = ok(Decoder::new().push(&bytes));
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].header(":event-type"), Some("messageStart"));
        assert_eq!(all[1].payload, "ünï ✓".as_bytes());
        all.truncate(2);
        (bytes, all)
    }

    #[test]
    fn every_split_point_decodes_the_same() {
        let (bytes, expected) = sample();
        for cut in 0..=bytes.len() {
            let mut d = Decoder::new();
            let mut got = ok(d.push(&bytes[..cut]));
            got.extend(ok(d.push(&bytes[cut..])));
            assert_eq!(got, expected, "split at {cut}");
            assert_eq!(d.pending(), 0);
        }
    }

    #[test]
    fn byte_at_a_time() {
        let (bytes, expected) = sample();
        let mut d = Decoder::new();
        let mut got = Vec::new();
        for b in &bytes {
            got.extend(ok(d.push(std::slice::from_ref(b))));
        }
        assert_eq!(got, expected);
    }

    #[test]
    fn corrupted_bytes_are_clean_errors() {
        let good = encode_event("contentBlockDelta", r#"{"delta":{"text":"hi"}}"#);
        // Every single-byte corruption is caught by one of the two checksums or the lengths.
        for i in 0..good.len() {
            let mut bad = good.clone();
            bad[i] ^= 0x41;
            let mut d = Decoder::new();
            let (msgs, err) = d.push(&bad);
            assert!(msgs.is_empty(), "byte {i}");
            match err {
                Some(e) => assert!(e.starts_with("Malformed Bedrock event stream"), "{e}"),
                // A corrupted length may just look like "more to come".
                None => assert!(d.pending() > 0, "byte {i}"),
            }
        }
        let mut bad = good.clone();
        let n = bad.len();
        bad[n - 1] ^= 1;
        let mut two = good.clone();
        two.extend_from_slice(&bad);
        let (msgs, err) = Decoder::new().push(&two);
        assert_eq!(msgs.len(), 1, "the good message before the bad one is kept");
        assert_eq!(
            err.as_deref(),
            Some("Malformed Bedrock event stream: message checksum mismatch")
        );
    }

    #[test]
    fn typed_headers_decode() {
        let mut h = vec![1u8, b'a', 0, 1, b'b', 4, 0xff, 0xff, 0xff, 0xfe];
        h.extend_from_slice(&[1, b'c', 6, 0, 2, 9, 8]);
        let total = (16 + h.len()) as u32;
        let mut m = total.to_be_bytes().to_vec();
        m.extend_from_slice(&(h.len() as u32).to_be_bytes());
        let c = crc32(&m);
        m.extend_from_slice(&c.to_be_bytes());
        m.extend_from_slice(&h);
        let c = crc32(&m);
        m.extend_from_slice(&c.to_be_bytes());
        let msgs = ok(Decoder::new().push(&m));
        assert_eq!(
            msgs[0].headers,
            [
                ("a".to_string(), HeaderValue::Bool(true)),
                ("b".to_string(), HeaderValue::Int(-2)),
                ("c".to_string(), HeaderValue::Bytes(vec![9, 8])),
            ]
        );
    }

    #[test]
    fn garbage_never_panics() {
        let junk: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
        let mut d = Decoder::new();
        for chunk in junk.chunks(7) {
            if d.push(chunk).1.is_some() {
                break;
            }
        }
    }
}
