//! Server-sent events (`ai::sse`): the incremental parser gives the events a whole-stream
//! reading of the spec gives, whatever the chunking, and `read_events` (the blocking reader
//! every provider and MCP's HTTP transport use) agrees with it.
//!
//! Input: two bytes of chunking seed, then the stream.

use pi::ai::sse::{read_events, SseEvent, SseParser};
use pi::ai::Abort;

use super::input::{chunkings, describe, ChunkedReader, Input};

pub fn run(data: &[u8]) {
    let mut input = Input::new(data);
    let seed = u64::from(input.u16());
    let stream = input.rest();
    let expected = spec_reading(stream);

    let mut whole = SseParser::new();
    let mut got = whole.push(stream);
    got.extend(whole.finish());
    assert_eq!(got, expected, "the whole stream at once");

    for chunks in chunkings(seed, stream.len()) {
        let mut parser = SseParser::new();
        let mut got = Vec::new();
        for r in &chunks {
            got.extend(parser.push(&stream[r.clone()]));
        }
        got.extend(parser.finish());
        assert_eq!(got, expected, "{}", describe(&chunks));
    }

    let chunks = super::input::random_chunking(seed, stream.len());
    let mut got = Vec::new();
    let ended = read_events(
        ChunkedReader::new(stream, chunks.clone()),
        &Abort::new(),
        |ev| {
            got.push(ev);
            Ok(true)
        },
    );
    assert_eq!(ended, Ok(true), "read_events reaches the end");
    assert_eq!(got, expected, "read_events, {}", describe(&chunks));
}

/// The events of a complete stream, read as the SSE spec describes it: decode as UTF-8, split
/// into lines at CRLF, CR or LF, drop an unterminated last line, then apply each line.
fn spec_reading(stream: &[u8]) -> Vec<SseEvent> {
    let text = String::from_utf8_lossy(stream);
    let mut lines = Vec::new();
    let mut rest = text.as_ref();
    while let Some(i) = rest.find(['\r', '\n']) {
        lines.push(&rest[..i]);
        let skip = if rest[i..].starts_with("\r\n") { 2 } else { 1 };
        rest = &rest[i + skip..];
    }
    let mut events = Vec::new();
    let mut event_type = String::new();
    let mut data: Option<String> = None;
    for line in lines {
        if line.is_empty() {
            let kind = std::mem::take(&mut event_type);
            if let Some(data) = data.take() {
                events.push(SseEvent { event: kind, data });
            }
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => event_type = value.to_string(),
            "data" => match data.as_mut() {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => data = Some(value.to_string()),
            },
            _ => {}
        }
    }
    events
}
