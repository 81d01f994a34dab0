//! Shared test helpers for provider tests: chunked readers, a parse runner, event summaries, a one-shot local server.

use std::io::Read;

use crate::ai::stream::{Abort, StreamWriter};
use crate::ai::types::*;

/// Read sizes to replay a fixture with: byte by byte, small odd chunks, mixed, whole.
pub const CHUNKINGS: &[&[usize]] = &[
    &[1],
    &[2],
    &[3],
    &[7],
    &[64],
    &[1, 5, 2, 13, 4],
    &[usize::MAX],
];

pub fn test_model(id: &str, api: &str, provider: &str, base_url: &str) -> Model {
    Model {
        id: id.into(),
        name: id.into(),
        api: api.into(),
        provider: provider.into(),
        base_url: base_url.into(),
        reasoning: true,
        input: vec!["text".into(), "image".into()],
        cost: ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
        },
        context_window: 200_000,
        max_tokens: 64_000,
        thinking_level_map: None,
        headers: None,
        compat: None,
    }
}

pub fn fixture(dir: &str, name: &str) -> Vec<u8> {
    let path = format!("{}/fixtures/{dir}/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A reader that hands out the bytes in reads of the given sizes, cycling.
pub struct Chunked<'a> {
    data: &'a [u8],
    sizes: &'a [usize],
    n: usize,
}

impl Read for Chunked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let want = self.sizes[self.n % self.sizes.len()];
        self.n += 1;
        let k = want.min(buf.len()).min(self.data.len());
        buf[..k].copy_from_slice(&self.data[..k]);
        self.data = &self.data[k..];
        Ok(k)
    }
}

/// Runs `parse` over `bytes` read in `sizes` chunks and returns every event, terminal
/// included (finished the way `spawn_stream` finishes).
pub fn run_parser(
    bytes: &[u8],
    sizes: &[usize],
    model: &Model,
    parse: impl FnOnce(Chunked<'_>, &mut StreamWriter) -> Result<(), crate::ai::ProviderError>,
) -> Vec<AssistantEvent> {
    let (tx, rx) = crossbeam_channel::unbounded();
    let mut w = StreamWriter::new(tx, model, Abort::new());
    match parse(
        Chunked {
            data: bytes,
            sizes,
            n: 0,
        },
        &mut w,
    ) {
        Ok(()) => w.finish(),
        Err(e) => w.fail(e),
    }
    drop(w);
    rx.iter().collect()
}

/// One line per event: kind, content index and payload.
pub fn summary(events: &[AssistantEvent]) -> Vec<String> {
    use AssistantEvent as E;
    events
        .iter()
        .filter(|e| !matches!(e, E::Meta { .. }))
        .map(|e| match e {
            E::Meta { .. } => unreachable!(),
            E::Start { .. } => "start".to_string(),
            E::TextStart { index, .. } => format!("text_start {index}"),
            E::TextDelta { index, delta, .. } => format!("text_delta {index} {delta}"),
            E::TextEnd { index, content, .. } => format!("text_end {index} {content}"),
            E::ThinkingStart { index, .. } => format!("thinking_start {index}"),
            E::ThinkingDelta { index, delta, .. } => format!("thinking_delta {index} {delta}"),
            E::ThinkingEnd { index, content, .. } => format!("thinking_end {index} {content}"),
            E::ToolCallStart { index, .. } => format!("toolcall_start {index}"),
            E::ToolCallDelta { index, delta, .. } => format!("toolcall_delta {index} {delta}"),
            E::ToolCallEnd {
                index,
                tool_call: t,
                ..
            } => {
                format!("toolcall_end {index} {} {} {}", t.id, t.name, t.arguments)
            }
            E::Done { reason, .. } => format!("done {}", reason.as_str()),
            E::Error { reason, error, .. } => format!(
                "error {} {}",
                reason.as_str(),
                error.error_message.clone().unwrap_or_default()
            ),
        })
        .collect()
}

pub fn final_message(events: &[AssistantEvent]) -> AssistantMessage {
    match events.last() {
        Some(AssistantEvent::Done { message, .. }) => message.clone(),
        Some(AssistantEvent::Error { error, .. }) => error.clone(),
        other => panic!("stream did not terminate: {other:?}"),
    }
}

pub fn untimed(mut m: AssistantMessage) -> AssistantMessage {
    m.timestamp = 0;
    m
}

/// Checks a stream read through the providers' hot shapes (`hot`) gives the events and message
/// of the same stream made to miss them (`cold`, read as `Value`s), at several chunkings.
pub fn assert_same_reading(
    hot: &[u8],
    cold: &[u8],
    model: &Model,
    parse: impl Fn(Chunked<'_>, &mut StreamWriter) -> Result<(), crate::ai::ProviderError>,
) {
    assert_ne!(hot, cold, "the cold copy must differ");
    for sizes in [&[usize::MAX][..], &[1, 7]] {
        let a = run_parser(hot, sizes, model, &parse);
        let b = run_parser(cold, sizes, model, &parse);
        assert_eq!(summary(&a), summary(&b));
        assert_eq!(untimed(final_message(&a)), untimed(final_message(&b)));
    }
}

/// How many `data:` lines of `stream` read as the hot shape `T`.
pub fn hot_lines<'a, T: serde::Deserialize<'a>>(stream: &'a str) -> usize {
    stream
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| serde_json::from_str::<T>(d).is_ok())
        .count()
}

pub fn tool_result(id: &str, name: &str, content: Vec<Content>, is_error: bool) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: name.into(),
        content,
        details: None,
        is_error,
        duration_ms: None,
        timestamp: 0,
        extra: Extra::new(),
    })
}

fn tool(name: &str, description: &str, param: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        parameters: serde_json::json!({
            "type": "object",
            "properties": {param: {"type": "string"}},
            "required": [param],
        }),
    }
}

pub fn read_tool() -> ToolSpec {
    tool("read", "Read a file", "path")
}

pub fn bash_tool() -> ToolSpec {
    tool("bash", "Run a command", "command")
}

/// Serves one HTTP response on a local port; the handle yields the raw request received.
pub fn serve_once(
    status: &str,
    extra_headers: &str,
    body: Vec<u8>,
) -> (String, std::thread::JoinHandle<String>) {
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/event-stream\r\n{extra_headers}content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let handle = std::thread::spawn(move || {
        let (mut sock, _) = listener.accept().expect("accept");
        let mut req = Vec::new();
        let mut buf = [0u8; 4096];
        // Read the head, then as much body as content-length announces.
        loop {
            let n = sock.read(&mut buf).unwrap_or(0);
            req.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&req).to_string();
            if let Some(end) = text.find("\r\n\r\n") {
                let len = text
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                    })
                    .unwrap_or(0);
                if req.len() >= end + 4 + len {
                    break;
                }
            }
            if n == 0 {
                break;
            }
        }
        let _ = sock.write_all(head.as_bytes());
        let _ = sock.write_all(&body);
        String::from_utf8_lossy(&req).to_string()
    });
    (format!("http://{addr}"), handle)
}

pub fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}
