//! The extension protocol's line reader (`extensions::protocol`): an extension's output is read
//! into the same messages whatever the chunking, one per non-blank line, the first line that is
//! not a protocol message ends the reading, and any `register` message is checked without a
//! panic (a registration that parses names only valid tools, commands and events).
//!
//! Input: two bytes of chunking seed, then the extension's output.

use std::io::BufReader;

use pi::extensions::protocol::{read_messages, Registration, EVENTS};
use serde_json::Value;

use super::input::{chunkings, describe, ChunkedReader, Input};

type Read = (Vec<Result<Value, String>>, bool);

fn read(output: &[u8], chunks: Vec<std::ops::Range<usize>>) -> Read {
    let mut got = Vec::new();
    let reader = BufReader::with_capacity(16, ChunkedReader::new(output, chunks));
    let at_end = read_messages(reader, |m| {
        let ok = m.is_ok();
        got.push(m.map_err(|e| e.to_string()));
        ok
    });
    (got, at_end)
}

pub fn run(data: &[u8]) {
    let mut input = Input::new(data);
    let seed = u64::from(input.u16());
    let output = input.rest();

    let whole = read(output, vec![0..output.len()]);
    let shape = |r: &Read| -> (Vec<Option<Value>>, bool) {
        (r.0.iter().map(|m| m.as_ref().ok().cloned()).collect(), r.1)
    };
    assert_eq!(
        shape(&whole),
        shape(&reference(output)),
        "one message per non-blank line"
    );
    for e in whole.0.iter().filter_map(|m| m.as_ref().err()) {
        assert!(e.starts_with("wrote "), "{e}");
    }
    for chunks in chunkings(seed, output.len()) {
        let note = describe(&chunks);
        assert_eq!(read(output, chunks), whole, "{note}");
    }
    for msg in whole.0.iter().flatten() {
        if msg["type"] != "register" {
            continue;
        }
        if let Ok(reg) = Registration::parse(msg) {
            assert!((1..=2).contains(&reg.protocol));
            for t in &reg.tools {
                assert!(!t.name.is_empty() && !t.name.contains(char::is_whitespace));
                assert!(t.parameters.is_object());
            }
            assert!(reg.events.iter().all(|e| EVENTS.contains(&e.as_str())));
        }
    }
}

/// Lines split at `\n`, line ends and blank lines dropped, each parsed as JSON of a known
/// message type; reading stops after the first line that is not one.
fn reference(output: &[u8]) -> Read {
    const TYPES: &[&str] = &[
        "reply",
        "tool_update",
        "stream_event",
        "register",
        "call",
        "cancel",
        "error",
    ];
    let text = String::from_utf8_lossy(output);
    let mut got = Vec::new();
    for line in text.split_inclusive('\n') {
        let line = line.trim_end_matches(['\n', '\r']);
        if line.trim().is_empty() {
            continue;
        }
        let msg = serde_json::from_str::<Value>(line)
            .ok()
            .filter(|v| TYPES.contains(&v["type"].as_str().unwrap_or("")))
            .ok_or_else(String::new);
        let ok = msg.is_ok();
        got.push(msg);
        if !ok {
            return (got, false);
        }
    }
    (got, true)
}
