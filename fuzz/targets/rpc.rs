//! The RPC command reader (`modes::rpc::input`): stdin is split into the same records whatever
//! the reads (at `\n` only, one `\r` before it dropped), and each record is either a command or
//! pi's error response for it, never both: the queueing decision (`command_kind`), the dialog
//! fast path (`ui_response`) and the handler (`parse_command`) agree on what a record is, and
//! every error response is a well-formed `response` line that carries the request's id.
//!
//! Input: two bytes of chunking seed, then what the client writes to stdin.

use std::io::BufReader;

use pi::modes::rpc::input::{command_kind, parse_command, read_records, ui_response};
use pi::session::json::to_js_string;
use serde_json::Value;

use super::input::{chunkings, describe, ChunkedReader, Input};

fn records(stdin: &[u8], chunks: Vec<std::ops::Range<usize>>) -> Vec<String> {
    let mut out = Vec::new();
    let reader = BufReader::with_capacity(8, ChunkedReader::new(stdin, chunks));
    read_records(reader, |r| {
        out.push(r);
        true
    });
    out
}

pub fn run(data: &[u8]) {
    let mut input = Input::new(data);
    let seed = u64::from(input.u16());
    let stdin = input.rest();

    let whole = records(stdin, vec![0..stdin.len()]);
    let mut expected: Vec<String> = stdin
        .split(|&b| b == b'\n')
        .map(|r| String::from_utf8_lossy(r.strip_suffix(b"\r").unwrap_or(r)).into_owned())
        .collect();
    if stdin.is_empty() || stdin.ends_with(b"\n") {
        expected.pop();
    }
    assert_eq!(whole, expected, "one record per line");
    for chunks in chunkings(seed, stdin.len()) {
        let note = describe(&chunks);
        assert_eq!(records(stdin, chunks), whole, "{note}");
    }

    for record in &whole {
        check(record);
    }
}

fn check(record: &str) {
    let kind = command_kind(record);
    if let Some(v) = ui_response(record) {
        assert_eq!(v["type"], "extension_ui_response");
        assert_eq!(
            kind, "extension_ui_response",
            "both paths see a dialog answer"
        );
    }
    let parsed: Option<Value> = serde_json::from_str(record).ok();
    match parse_command(record) {
        Ok(command) => {
            assert_eq!(command.kind, kind);
            assert_eq!(command.value["type"], Value::String(kind.clone()));
            assert_eq!(command.id.as_ref(), command.value.get("id"));
        }
        Err(response) => {
            assert_eq!(kind, "", "a record answered with an error has no kind");
            assert_eq!(response["type"], "response");
            assert_eq!(response["success"], false);
            assert!(response["error"].as_str().is_some_and(|e| !e.is_empty()));
            let id = parsed.as_ref().and_then(|v| v.get("id"));
            assert_eq!(response.get("id"), id, "the error carries the request's id");
            if parsed.is_none() {
                assert_eq!(response["command"], "parse");
            }
            let line = to_js_string(&response);
            assert!(!line.contains('\n'), "one response, one line");
            let back: Value = serde_json::from_str(&line).expect("a response line is JSON");
            assert_eq!(back["error"], response["error"]);
        }
    }
}
