//! Shared test helpers for the OpenAI-family provider tests.

use std::io::Read;

use crate::ai::stream::{Abort, StreamWriter};
use crate::ai::types::*;

pub fn test_model(api: &str) -> Model {
    Model {
        id: "mock-model".into(),
        name: "Mock".into(),
        api: api.into(),
        provider: "mock".into(),
        base_url: "http://127.0.0.1:8765/v1".into(),
        reasoning: false,
        input: vec!["text".into()],
        cost: ModelCost::default(),
        context_window: 128000,
        max_tokens: 16384,
        thinking_level_map: None,
        headers: None,
        compat: None,
    }
}

/// Yields at most `n` bytes per read.
pub struct Chunked {
    pub data: Vec<u8>,
    pub pos: usize,
    pub n: usize,
}

impl Read for Chunked {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let rest = &self.data[self.pos..];
        let k = self.n.min(buf.len()).min(rest.len());
        buf[..k].copy_from_slice(&rest[..k]);
        self.pos += k;
        Ok(k)
    }
}

pub struct Run {
    pub trace: Vec<String>,
    pub message: AssistantMessage,
}

fn trace(ev: &AssistantEvent) -> String {
    use AssistantEvent as E;
    match ev {
        E::Meta { .. } => "meta".into(),
        E::Start { .. } => "start".into(),
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
        E::Error { reason, .. } => format!("error {}", reason.as_str()),
    }
}

/// Feeds `data` through `parse` the way `spawn_stream` would finish it.
pub fn run_once(
    data: &[u8],
    n: usize,
    model: &Model,
    parse: fn(Chunked, &mut StreamWriter) -> Result<(), crate::ai::ProviderError>,
) -> Run {
    let (tx, rx) = crossbeam_channel::unbounded();
    let mut w = StreamWriter::new(tx, model, Abort::new());
    match parse(
        Chunked {
            data: data.to_vec(),
            pos: 0,
            n,
        },
        &mut w,
    ) {
        Ok(()) => w.finish(),
        Err(e) => w.fail(e),
    }
    drop(w);
    let events: Vec<AssistantEvent> = rx.try_iter().collect();
    let message = match events.last() {
        Some(AssistantEvent::Done { message, .. }) => message.clone(),
        Some(AssistantEvent::Error { error, .. }) => error.clone(),
        other => panic!("no terminal event: {other:?}"),
    };
    assert_eq!(events.iter().filter(|e| e.is_terminal()).count(), 1);
    Run {
        trace: events
            .iter()
            .filter(|e| !matches!(e, AssistantEvent::Meta { .. }))
            .map(trace)
            .collect(),
        message,
    }
}

/// Runs at 1, 2, 3, 5, 17, 64 bytes per read and whole; all runs must agree.
pub fn run_all_chunkings(
    data: &[u8],
    model: &Model,
    parse: fn(Chunked, &mut StreamWriter) -> Result<(), crate::ai::ProviderError>,
) -> Run {
    let first = run_once(data, data.len().max(1), model, parse);
    for n in [1, 2, 3, 5, 17, 64] {
        let r = run_once(data, n, model, parse);
        assert_eq!(r.trace, first.trace, "chunk size {n}");
        let mut m = r.message.clone();
        m.timestamp = first.message.timestamp;
        assert_eq!(m, first.message, "chunk size {n}");
    }
    first
}
