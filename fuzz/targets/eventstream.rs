//! Bedrock's binary event stream (`ai::providers::bedrock::eventstream`): the decoder gives the
//! same messages and the same error whatever the chunking, and messages encoded with valid
//! checksums (every header type) come back exactly as they were built.
//!
//! Input: two bytes of chunking seed, a mode byte, then either raw stream bytes (odd mode) or
//! a description of messages to encode (even mode), optionally corrupted at one byte.

use pi::ai::providers::bedrock::eventstream::{crc32, Decoder, HeaderValue, Message};

use super::input::{chunkings, describe, Input};

pub fn run(data: &[u8]) {
    let mut input = Input::new(data);
    let seed = u64::from(input.u16());
    let mode = input.byte();
    if mode & 1 == 1 {
        check_chunking(input.rest(), seed);
        return;
    }
    let (mut stream, built, bad_type) = build(&mut input);
    let corrupt = input.u16();
    let mask = input.byte();
    let (messages, error, pending) = decode(&stream, &[0..stream.len()]);
    match bad_type {
        None => {
            assert_eq!(error, None);
            assert_eq!(messages, built, "encoded messages decode as built");
            assert_eq!(pending, 0);
        }
        Some(n) => {
            assert_eq!(messages, built[..n], "the messages before a bad one");
            let error = error.expect("a header of an unknown type is an error");
            assert!(error.contains("unknown header value type"), "{error}");
        }
    }
    if mask != 0 && !stream.is_empty() {
        let at = usize::from(corrupt) % stream.len();
        stream[at] ^= mask;
    }
    check_chunking(&stream, seed);
}

/// Messages, the first error and the bytes left over, feeding `stream` in `chunks`.
fn decode(
    stream: &[u8],
    chunks: &[std::ops::Range<usize>],
) -> (Vec<Message>, Option<String>, usize) {
    let mut d = Decoder::new();
    let mut messages = Vec::new();
    for r in chunks {
        let (m, err) = d.push(&stream[r.clone()]);
        messages.extend(m);
        if let Some(e) = err {
            let (more, again) = d.push(b"x");
            assert!(more.is_empty() && again.is_some(), "nothing after an error");
            return (messages, Some(e), d.pending());
        }
    }
    (messages, None, d.pending())
}

fn check_chunking(stream: &[u8], seed: u64) {
    let whole = decode(stream, &[0..stream.len()]);
    if whole.1.is_some() {
        assert_eq!(whole.2, 0, "a failed decoder keeps nothing");
    }
    for chunks in chunkings(seed, stream.len()) {
        let got = decode(stream, &chunks);
        assert_eq!(got.0, whole.0, "messages, {}", describe(&chunks));
        assert_eq!(got.1, whole.1, "error, {}", describe(&chunks));
        assert_eq!(got.2, whole.2, "pending bytes, {}", describe(&chunks));
    }
}

/// Encodes messages described by the input. Returns the bytes, the messages as the decoder
/// should read them, and the index of the first message given a header of an unknown type.
fn build(input: &mut Input) -> (Vec<u8>, Vec<Message>, Option<usize>) {
    let mut stream = Vec::new();
    let mut built = Vec::new();
    let mut bad_type = None;
    for index in 0..input.byte() % 5 {
        let mut headers = Vec::new();
        let mut wire = Vec::new();
        for _ in 0..input.byte() % 6 {
            let name_len = usize::from(input.byte() % 12);
            let name = input.take(name_len).to_vec();
            let kind = input.byte() % 11;
            wire.push(name.len() as u8);
            wire.extend_from_slice(&name);
            wire.push(kind);
            let value = match kind {
                0 => HeaderValue::Bool(true),
                1 => HeaderValue::Bool(false),
                2..=5 => {
                    let width = [1usize, 2, 4, 8][usize::from(kind - 2)];
                    let bytes = input.take(width).to_vec();
                    let mut full = bytes.clone();
                    full.resize(width, 0);
                    wire.extend_from_slice(&full);
                    let mut v: i64 = if full[0] & 0x80 != 0 { -1 } else { 0 };
                    for b in &full {
                        v = (v << 8) | i64::from(*b);
                    }
                    HeaderValue::Int(v)
                }
                6 | 7 => {
                    let len = usize::from(input.byte() % 40);
                    let bytes = input.take(len).to_vec();
                    wire.extend_from_slice(&(bytes.len() as u16).to_be_bytes());
                    wire.extend_from_slice(&bytes);
                    if kind == 6 {
                        HeaderValue::Bytes(bytes)
                    } else {
                        HeaderValue::String(String::from_utf8_lossy(&bytes).into_owned())
                    }
                }
                8 => {
                    let t = i64::from(input.u32()) - (1 << 31);
                    wire.extend_from_slice(&t.to_be_bytes());
                    HeaderValue::Timestamp(t)
                }
                9 => {
                    let mut id = [0u8; 16];
                    let got = input.take(16);
                    id[..got.len()].copy_from_slice(got);
                    wire.extend_from_slice(&id);
                    HeaderValue::Uuid(id)
                }
                _ => {
                    bad_type.get_or_insert(usize::from(index));
                    HeaderValue::Bool(true)
                }
            };
            headers.push((String::from_utf8_lossy(&name).into_owned(), value));
        }
        let payload_len = usize::from(input.u16() % 600);
        let payload = input.take(payload_len).to_vec();
        stream.extend(frame(&wire, &payload));
        built.push(Message { headers, payload });
    }
    (stream, built, bad_type)
}

/// One message around already encoded headers, with both checksums right.
fn frame(headers: &[u8], payload: &[u8]) -> Vec<u8> {
    let total = (16 + headers.len() + payload.len()) as u32;
    let mut out = total.to_be_bytes().to_vec();
    out.extend_from_slice(&(headers.len() as u32).to_be_bytes());
    let prelude = crc32(&out);
    out.extend_from_slice(&prelude.to_be_bytes());
    out.extend_from_slice(headers);
    out.extend_from_slice(payload);
    let crc = crc32(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}
