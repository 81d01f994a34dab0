//! MCP's JSON-RPC over stdio (`mcp::stdio` framing, `mcp::rpc`, `mcp::client`, `mcp::tools`):
//! a server's output is framed into the same messages whatever the chunking (one per line, as
//! serde_json reads it, garbage reported), and a client talking to a server that answers with
//! anything at all never panics and never waits for an answer that is not coming.
//!
//! Input: two bytes of chunking seed, then the server's output: one "turn" per request the
//! client sends, turns separated by NUL bytes. Requests are numbered from 1, so seeds answer
//! `initialize` with id 1, the first `tools/list` page with id 2, and so on.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi::mcp::client::{Client, ClientOptions, RequestOptions};
use pi::mcp::content::convert_result;
use pi::mcp::rpc::{classify, Incoming, Kind, McpError, Sink, Transport};
use pi::mcp::stdio::LineFramer;
use pi::mcp::tools::{normalize_schema, tool_name};
use serde_json::{json, Value};

use super::input::{chunkings, describe, Input};

pub fn run(data: &[u8]) {
    let mut input = Input::new(data);
    let seed = u64::from(input.u16());
    let output = input.rest();
    framing(output, seed);
    conversation(output.split(|&b| b == 0).map(<[u8]>::to_vec).collect());
}

/// What framing `output` in `chunks` delivers, in a comparable form.
fn frame(output: &[u8], chunks: &[std::ops::Range<usize>]) -> Vec<String> {
    let got = Mutex::new(Vec::new());
    let sink = |i: Incoming| got.lock().unwrap().push(format!("{i:?}"));
    let mut framer = LineFramer::default();
    for r in chunks {
        framer.push(&output[r.clone()], &sink);
    }
    framer.finish(&sink);
    got.into_inner().unwrap()
}

fn framing(output: &[u8], seed: u64) {
    let whole = frame(output, &[0..output.len()]);
    // One message per non-blank line, read by serde_json; an unfinished last line is garbage.
    let mut lines: Vec<&[u8]> = output.split(|&b| b == b'\n').collect();
    let last = lines.pop().unwrap_or_default();
    let mut expected = Vec::new();
    for line in lines {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Value>(line) {
            Ok(v) => expected.push(format!("{:?}", Incoming::Message(v))),
            Err(_) => expected.push("Garbage".into()),
        }
    }
    if !String::from_utf8_lossy(last).trim().is_empty() {
        expected.push("Garbage".into());
    }
    let shape: Vec<String> = whole
        .iter()
        .map(|m| match m.starts_with("Garbage") {
            true => "Garbage".to_string(),
            false => m.clone(),
        })
        .collect();
    assert_eq!(shape, expected, "one message per line");
    for chunks in chunkings(seed, output.len()) {
        assert_eq!(frame(output, &chunks), whole, "{}", describe(&chunks));
    }
}

/// A stdio server reduced to its output: each request the client sends is answered with the
/// next turn. When a turn does not answer the request, the server is gone (as when a real
/// one exits), so the client never waits for its timeout.
struct Scripted {
    /// Dropped once the server is gone, as the stdio reader thread drops it at EOF: the
    /// client's state holds this transport, so keeping it would be a cycle (found as a leak).
    sink: Mutex<Option<Sink>>,
    state: Mutex<Script>,
}

struct Script {
    turns: std::vec::IntoIter<Vec<u8>>,
    framer: LineFramer,
    closed: bool,
}

impl Transport for Scripted {
    fn send(&self, message: Value) -> Result<(), McpError> {
        // Notifications and the client's own answers need no reply.
        let Some(id) = message.get("method").and(message["id"].as_u64()) else {
            return Ok(());
        };
        let mut delivered = Vec::new();
        let mut end = false;
        {
            let mut script = self.state.lock().unwrap();
            if script.closed {
                return Err(McpError::Closed(None));
            }
            match script.turns.next() {
                Some(turn) => {
                    let framer = &mut script.framer;
                    let out = Mutex::new(Vec::new());
                    framer.push(&turn, &|i| out.lock().unwrap().push(i));
                    delivered = out.into_inner().unwrap();
                }
                None => end = true,
            }
            // The client stops waiting for a request when a response (or an invalid message)
            // with its id arrives.
            let answered = delivered.iter().any(|i| match i {
                Incoming::Message(v) => {
                    matches!(classify(v), Kind::Response | Kind::Invalid)
                        && v.get("id").and_then(Value::as_u64) == Some(id)
                }
                _ => false,
            });
            if !answered {
                end = true;
                script.closed = true;
                let framer = std::mem::take(&mut script.framer);
                let out = Mutex::new(Vec::new());
                framer.finish(&|i| out.lock().unwrap().push(i));
                delivered.extend(out.into_inner().unwrap());
            }
        }
        let sink = self.sink.lock().unwrap().clone();
        let Some(sink) = sink else {
            return Err(McpError::Closed(None));
        };
        for i in delivered {
            sink(i);
        }
        if end {
            sink(Incoming::Closed(Some("the server's script ended".into())));
            self.sink.lock().unwrap().take();
        }
        Ok(())
    }

    fn close(&self) {
        self.state.lock().unwrap().closed = true;
        self.sink.lock().unwrap().take();
    }
}

fn conversation(turns: Vec<Vec<u8>>) {
    let options = ClientOptions {
        // Never reached: every request is answered or the connection ends at once.
        timeout: Duration::from_secs(30),
        roots: vec![json!({"uri": "file:///tmp", "name": "tmp"})],
        on_notification: Arc::new(|_, _| {}),
        on_close: Arc::new(|_| {}),
    };
    let client = Client::connect(options, None, |sink| {
        let script = Script {
            turns: turns.into_iter(),
            framer: LineFramer::default(),
            closed: false,
        };
        Ok(Arc::new(Scripted {
            sink: Mutex::new(Some(sink)),
            state: Mutex::new(script),
        }) as Arc<dyn Transport>)
    });
    let Ok(client) = client else { return };
    let _ = client.has_capability("tools");
    if let Ok(tools) = client.list_tools(None) {
        for t in &tools {
            let name = t["name"].as_str().unwrap_or_default();
            let full = tool_name("server", name, &|n| n.len() % 2 == 0);
            assert!(full.len() <= 64, "{full}");
            let schema = normalize_schema(&t["inputSchema"]);
            assert!(schema.is_object());
        }
    }
    let progress = |_: &Value| {};
    let mut options = RequestOptions::new(Duration::from_secs(30), None);
    options.on_progress = Some(&progress);
    if let Ok(result) = client.call_tool("echo", json!({"text": "hi"}), options) {
        let _ = convert_result("server", "echo", &result, true);
    }
    let _ = client.read_resource(
        "file:///a",
        RequestOptions::new(Duration::from_secs(30), None),
    );
    let _ = client.ping(None);
    client.close();
}
