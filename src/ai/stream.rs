//! The assistant event stream: a producer thread per LLM call that owns one HTTP response and
//! sends `AssistantEvent`s over a channel. `StreamWriter` keeps the partial message and the
//! block bookkeeping so providers only translate wire events; `spawn_stream` guarantees exactly
//! one terminal event (`Done` or `Error`) even if the provider returns an error or panics.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crossbeam_channel::{Receiver, Sender};

use super::error::ProviderError;
use super::partial_json::parse_partial_json;
use super::types::*;
use crate::util::sort;

/// Events a stream may run ahead of its listener: enough to absorb a burst, small enough that
/// a slow reader (a blocked stdout) holds the provider back.
pub const EVENT_BUFFER: usize = 64;

/// A shared cancellation flag. Cloned into every thread that must stop when the user aborts.
/// Besides the flag it carries a wake-up: [`Abort::signal`] is a channel that becomes ready the
/// moment `abort` is called, so a thread waiting in `select!` reacts at once instead of
/// polling.
#[derive(Debug, Clone, Default)]
pub struct Abort(Arc<AbortInner>);

#[derive(Debug)]
struct AbortInner {
    flag: AtomicBool,
    /// Dropping the sender disconnects every receiver handed out by `signal`, which wakes
    /// every `select!` waiting on one; `reset` installs a fresh pair.
    wake: Mutex<(Option<Sender<()>>, Receiver<()>)>,
}

impl Default for AbortInner {
    fn default() -> Self {
        let (tx, rx) = crossbeam_channel::bounded(0);
        AbortInner {
            flag: AtomicBool::new(false),
            wake: Mutex::new((Some(tx), rx)),
        }
    }
}

impl Abort {
    pub fn new() -> Self {
        Self::default()
    }

    fn wake(&self) -> std::sync::MutexGuard<'_, (Option<Sender<()>>, Receiver<()>)> {
        self.0.wake.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn abort(&self) {
        self.0.flag.store(true, Ordering::SeqCst);
        self.wake().0.take();
    }

    /// Clears the flag so the next run can start (after an aborted one has fully ended).
    pub fn reset(&self) {
        let mut wake = self.wake();
        self.0.flag.store(false, Ordering::SeqCst);
        if wake.0.is_none() {
            let (tx, rx) = crossbeam_channel::bounded(0);
            *wake = (Some(tx), rx);
        }
    }

    pub fn is_aborted(&self) -> bool {
        self.0.flag.load(Ordering::SeqCst)
    }

    /// A receiver that is ready (disconnected) once the flag is set — at once if it already
    /// is. Nothing is ever sent on it: use it as `recv(abort.signal()) -> _ => …` in `select!`.
    /// Take a new one after `reset`.
    pub fn signal(&self) -> Receiver<()> {
        self.wake().1.clone()
    }

    /// Sleeps for `d` unless the flag is set first; returns false if aborted.
    pub fn sleep(&self, d: std::time::Duration) -> bool {
        if self.is_aborted() {
            return false;
        }
        let signal = self.signal();
        crossbeam_channel::select! {
            recv(signal) -> _ => false,
            default(d) => !self.is_aborted(),
        }
    }
}

/// Builds the partial assistant message and emits events for it. Providers translate wire
/// events into calls here (and set usage, ids and the stop reason on `partial` directly); the
/// events sent carry only what changed.
pub struct StreamWriter {
    tx: Sender<AssistantEvent>,
    pub partial: AssistantMessage,
    pub abort: Abort,
    /// Raw argument JSON accumulated per content index (tool calls only), parsed once when
    /// the block ends. `explicit` marks calls whose arguments a provider set whole.
    tool_json: Vec<ToolJson>,
    /// Content indexes whose block has started but not ended.
    open: Vec<usize>,
    finished: bool,
    /// The model's prices; cost is filled in from usage when the stream ends.
    price: ModelCost,
    /// Usage and response ids as last reported to the listener (see `AssistantEvent::Meta`).
    sent_meta: (Usage, Option<String>, Option<String>),
    /// `abort.signal()`, taken once.
    aborted: Receiver<()>,
}

struct ToolJson {
    index: usize,
    text: String,
    explicit: bool,
}

impl StreamWriter {
    pub fn new(tx: Sender<AssistantEvent>, model: &Model, abort: Abort) -> Self {
        let aborted = abort.signal();
        StreamWriter {
            tx,
            partial: AssistantMessage::empty(model),
            abort,
            tool_json: Vec::new(),
            open: Vec::new(),
            finished: false,
            price: model.cost,
            sent_meta: Default::default(),
            aborted,
        }
    }

    fn send(&mut self, ev: AssistantEvent) {
        if !ev.is_terminal() && !matches!(ev, AssistantEvent::Start { .. }) {
            self.send_meta_if_changed();
        }
        self.send_raw(ev);
    }

    fn send_meta_if_changed(&mut self) {
        let p = &self.partial;
        let (usage, id, model) = &self.sent_meta;
        if *usage == p.usage && *id == p.response_id && *model == p.response_model {
            return;
        }
        self.sent_meta = (p.usage, p.response_id.clone(), p.response_model.clone());
        self.send_raw(AssistantEvent::Meta {
            usage: p.usage,
            response_id: p.response_id.clone(),
            response_model: p.response_model.clone(),
        });
    }

    fn send_raw(&self, ev: AssistantEvent) {
        // The channel is bounded so a slow listener holds the stream back instead of letting
        // events pile up. A closed receiver means nobody listens any more (aborted run), and
        // an aborted run stops waiting for room: dropping is correct then.
        let Err(crossbeam_channel::TrySendError::Full(ev)) = self.tx.try_send(ev) else {
            return;
        };
        crossbeam_channel::select! {
            send(self.tx, ev) -> _ => {}
            recv(self.aborted) -> _ => {}
        }
    }

    /// A failed request of this stream's provider, as the typed error it ends with.
    pub fn http_error(&self, e: super::http::HttpError) -> ProviderError {
        e.into_provider_error(&self.partial.provider)
    }

    pub fn start(&mut self) {
        self.sent_meta = (
            self.partial.usage,
            self.partial.response_id.clone(),
            self.partial.response_model.clone(),
        );
        let partial = self.partial.clone();
        self.send(AssistantEvent::Start { partial });
    }

    fn push_block(&mut self, c: Content) -> usize {
        self.partial.content.push(c);
        let idx = self.partial.content.len() - 1;
        self.open.push(idx);
        idx
    }

    pub fn text_start(&mut self) -> usize {
        let index = self.push_block(Content::text(""));
        self.send(AssistantEvent::TextStart { index });
        index
    }

    pub fn text_delta(&mut self, index: usize, delta: &str) {
        if let Some(Content::Text(t)) = self.partial.content.get_mut(index) {
            t.text.push_str(delta);
        }
        self.send(AssistantEvent::TextDelta {
            index,
            delta: delta.to_string(),
        });
    }

    pub fn thinking_start(&mut self) -> usize {
        let index = self.push_block(Content::Thinking(ThinkingContent {
            thinking: String::new(),
            thinking_signature: None,
            redacted: false,
        }));
        self.send(AssistantEvent::ThinkingStart { index });
        index
    }

    pub fn thinking_delta(&mut self, index: usize, delta: &str) {
        if let Some(Content::Thinking(t)) = self.partial.content.get_mut(index) {
            t.thinking.push_str(delta);
        }
        self.send(AssistantEvent::ThinkingDelta {
            index,
            delta: delta.to_string(),
        });
    }

    pub fn toolcall_start(&mut self, id: &str, name: &str) -> usize {
        let index = self.push_block(Content::ToolCall(ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: Value::Object(Default::default()),
            thought_signature: None,
        }));
        self.tool_json.push(ToolJson {
            index,
            text: String::new(),
            explicit: false,
        });
        self.send(AssistantEvent::ToolCallStart {
            index,
            id: id.to_string(),
            name: name.to_string(),
        });
        index
    }

    /// Appends a raw argument fragment. The arguments are parsed once, when the block ends
    /// (parsing on every fragment would make a long streamed `write` quadratic).
    pub fn toolcall_delta(&mut self, index: usize, delta: &str) {
        let Some(buf) = self.tool_json.iter_mut().find(|t| t.index == index) else {
            return;
        };
        buf.text.push_str(delta);
        self.send(AssistantEvent::ToolCallDelta {
            index,
            delta: delta.to_string(),
        });
    }

    /// Replaces a tool call's arguments wholesale (APIs that send complete arguments); the
    /// streamed fragments are then not parsed.
    pub fn toolcall_set_arguments(&mut self, index: usize, args: Value) {
        if let Some(Content::ToolCall(t)) = self.partial.content.get_mut(index) {
            t.arguments = args;
        }
        if let Some(buf) = self.tool_json.iter_mut().find(|t| t.index == index) {
            buf.explicit = true;
        }
    }

    /// Parses the streamed arguments of the tool call at `index` into the partial message,
    /// unless a provider set them whole.
    fn settle_arguments(&mut self, index: usize) {
        let Some(pos) = self.tool_json.iter().position(|t| t.index == index) else {
            return;
        };
        let buf = self.tool_json.remove(pos);
        if buf.explicit {
            return;
        }
        if let Some(Content::ToolCall(t)) = self.partial.content.get_mut(index) {
            t.arguments = parse_partial_json(&buf.text);
        }
    }

    /// Ends the block at `index`, emitting the matching `*_end` event. Ending twice is a no-op.
    pub fn end_block(&mut self, index: usize) {
        let Some(pos) = self.open.iter().position(|i| *i == index) else {
            return;
        };
        self.open.remove(pos);
        self.settle_arguments(index);
        let ev = match self.partial.content.get(index) {
            Some(Content::Text(t)) => AssistantEvent::TextEnd {
                index,
                content: t.text.clone(),
            },
            Some(Content::Thinking(t)) => AssistantEvent::ThinkingEnd {
                index,
                content: t.thinking.clone(),
            },
            Some(Content::ToolCall(t)) => AssistantEvent::ToolCallEnd {
                index,
                tool_call: t.clone(),
            },
            _ => return,
        };
        self.send(ev);
    }

    /// Ends every block still open, in content order.
    pub fn end_all_blocks(&mut self) {
        let mut open = self.open.clone();
        sort::sort(&mut open);
        for i in open {
            self.end_block(i);
        }
    }

    /// Finishes successfully with the stop reason collected so far.
    pub fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.end_all_blocks();
        self.finished = true;
        self.partial.usage.apply_pricing(&self.price);
        let reason = self.partial.stop_reason;
        self.send(AssistantEvent::Done {
            reason,
            message: self.partial.clone(),
        });
    }

    /// Finishes with an error (or `aborted` if the abort flag is set).
    pub fn fail(&mut self, error: impl Into<ProviderError>) {
        let error = error.into();
        if self.finished {
            return;
        }
        self.finished = true;
        self.partial.usage.apply_pricing(&self.price);
        self.open.clear();
        let indexes: Vec<usize> = self.tool_json.iter().map(|t| t.index).collect();
        for i in indexes {
            self.settle_arguments(i);
        }
        let reason = if self.abort.is_aborted() {
            StopReason::Aborted
        } else {
            StopReason::Error
        };
        self.partial.stop_reason = reason;
        let cause = (reason == StopReason::Error).then_some(error);
        self.partial.error_message = Some(match &cause {
            Some(e) => e.message().to_string(),
            None => "Request was aborted".to_string(),
        });
        self.send(AssistantEvent::Error {
            reason,
            error: self.partial.clone(),
            cause,
        });
    }

    pub fn is_finished(&self) -> bool {
        self.finished
    }
}

/// Rebuilds an assistant message from its stream events, as a listener that sees only deltas
/// must: the agent loop keeps one so a stream cut short by abort still ends with what arrived,
/// and the terminal UI renders from one. Each event costs time in its own size only; tool
/// arguments stay raw JSON text until asked for.
#[derive(Debug, Clone)]
pub struct MessageBuilder {
    message: AssistantMessage,
    /// Raw argument JSON of the tool calls still streaming, by content index.
    tool_json: Vec<(usize, String)>,
    /// Content indexes started but not ended, in start order.
    open: Vec<usize>,
}

impl MessageBuilder {
    /// Starts from the message a stream's `Start` carried.
    pub fn new(start: AssistantMessage) -> Self {
        MessageBuilder {
            message: start,
            tool_json: Vec::new(),
            open: Vec::new(),
        }
    }

    pub fn message(&self) -> &AssistantMessage {
        &self.message
    }

    pub fn set_usage(&mut self, usage: Usage) {
        self.message.usage = usage;
    }

    fn put(&mut self, index: usize, c: Content) {
        match self.message.content.get_mut(index) {
            Some(slot) => *slot = c,
            None => self.message.content.push(c),
        }
        self.open.push(index);
    }

    /// Applies one event (`Start`, `Done` and `Error` are the caller's business).
    pub fn apply(&mut self, ev: &AssistantEvent) {
        match ev {
            AssistantEvent::TextStart { index } => self.put(*index, Content::text("")),
            AssistantEvent::ThinkingStart { index } => self.put(
                *index,
                Content::Thinking(ThinkingContent {
                    thinking: String::new(),
                    thinking_signature: None,
                    redacted: false,
                }),
            ),
            AssistantEvent::ToolCallStart { index, id, name } => {
                self.put(
                    *index,
                    Content::ToolCall(ToolCall {
                        id: id.clone(),
                        name: name.clone(),
                        arguments: Value::Object(Default::default()),
                        thought_signature: None,
                    }),
                );
                self.tool_json.push((*index, String::new()));
            }
            AssistantEvent::TextDelta { index, delta } => {
                if let Some(Content::Text(t)) = self.message.content.get_mut(*index) {
                    t.text.push_str(delta);
                }
            }
            AssistantEvent::ThinkingDelta { index, delta } => {
                if let Some(Content::Thinking(t)) = self.message.content.get_mut(*index) {
                    t.thinking.push_str(delta);
                }
            }
            AssistantEvent::ToolCallDelta { index, delta } => {
                if let Some((_, buf)) = self.tool_json.iter_mut().find(|(i, _)| i == index) {
                    buf.push_str(delta);
                }
            }
            AssistantEvent::TextEnd { index, content } => {
                if let Some(Content::Text(t)) = self.message.content.get_mut(*index) {
                    content.clone_into(&mut t.text);
                }
                self.close(*index);
            }
            AssistantEvent::ThinkingEnd { index, content } => {
                if let Some(Content::Thinking(t)) = self.message.content.get_mut(*index) {
                    content.clone_into(&mut t.thinking);
                }
                self.close(*index);
            }
            AssistantEvent::ToolCallEnd { index, tool_call } => {
                if let Some(slot) = self.message.content.get_mut(*index) {
                    *slot = Content::ToolCall(tool_call.clone());
                }
                self.tool_json.retain(|(i, _)| i != index);
                self.close(*index);
            }
            AssistantEvent::Meta {
                usage,
                response_id,
                response_model,
            } => {
                self.message.usage = *usage;
                self.message.response_id.clone_from(response_id);
                self.message.response_model.clone_from(response_model);
            }
            AssistantEvent::Start { .. }
            | AssistantEvent::Done { .. }
            | AssistantEvent::Error { .. } => {}
        }
    }

    fn close(&mut self, index: usize) {
        self.open.retain(|i| *i != index);
    }

    /// The raw JSON received so far for the arguments of the tool call at `index`, while it
    /// streams.
    pub fn tool_json(&self, index: usize) -> Option<&str> {
        self.tool_json
            .iter()
            .find(|(i, _)| *i == index)
            .map(|(_, s)| s.as_str())
    }

    /// The message so far with every streaming tool call's arguments parsed from what
    /// arrived (a snapshot, as pi's `partial` shows it).
    pub fn snapshot(&self) -> AssistantMessage {
        let mut m = self.message.clone();
        for (i, json) in &self.tool_json {
            if let Some(Content::ToolCall(t)) = m.content.get_mut(*i) {
                t.arguments = parse_partial_json(json);
            }
        }
        m
    }

    /// The `*_end` events of the blocks still open (a stream cut short), in content order,
    /// with the final content taken from `finished` (the message the stream ended with).
    pub fn end_events(&self, finished: &AssistantMessage) -> Vec<AssistantEvent> {
        let mut open = self.open.clone();
        sort::sort(&mut open);
        open.dedup();
        open.into_iter()
            .filter_map(|index| match finished.content.get(index) {
                Some(Content::Text(t)) => Some(AssistantEvent::TextEnd {
                    index,
                    content: t.text.clone(),
                }),
                Some(Content::Thinking(t)) => Some(AssistantEvent::ThinkingEnd {
                    index,
                    content: t.thinking.clone(),
                }),
                Some(Content::ToolCall(t)) => Some(AssistantEvent::ToolCallEnd {
                    index,
                    tool_call: t.clone(),
                }),
                _ => None,
            })
            .collect()
    }
}

/// Runs `produce` on its own thread and returns the event receiver. Whatever `produce` does —
/// return `Ok` without finishing, return `Err`, or panic — the receiver sees exactly one
/// terminal event. The thread is detached on purpose: after an abort nobody waits for it, and it
/// exits on its next wake-up when it notices the flag or the closed channel.
pub fn spawn_stream<F>(model: &Model, abort: Abort, produce: F) -> Receiver<AssistantEvent>
where
    F: FnOnce(&mut StreamWriter) -> Result<(), ProviderError> + Send + 'static,
{
    let (tx, rx) = crossbeam_channel::bounded(EVENT_BUFFER);
    let model = model.clone();
    let spawned = std::thread::Builder::new().name("pi-stream".into()).spawn({
        let tx = tx.clone();
        move || {
            let mut w = StreamWriter::new(tx, &model, abort);
            let outcome = crate::util::panic::catch(|| produce(&mut w));
            match outcome {
                Ok(Ok(())) if w.abort.is_aborted() => w.fail("Request was aborted"),
                Ok(Ok(())) => w.finish(),
                Ok(Err(e)) => w.fail(e),
                Err(msg) => w.fail(format!("Internal error in provider stream: {msg}")),
            }
        }
    });
    if let Err(e) = spawned {
        let mut w = StreamWriter::new(tx, &model_placeholder(), Abort::new());
        w.fail(format!("could not start stream thread: {e}"));
    }
    rx
}

fn model_placeholder() -> Model {
    Model {
        id: "unknown".into(),
        name: "unknown".into(),
        api: "unknown".into(),
        provider: "unknown".into(),
        base_url: String::new(),
        reasoning: false,
        input: vec!["text".into()],
        cost: ModelCost::default(),
        context_window: 0,
        max_tokens: 0,
        thinking_level_map: None,
        headers: None,
        compat: None,
    }
}

use serde_json::Value;

#[cfg(test)]
mod tests {
    use super::*;

    /// Drives a writer the way a provider would and returns what it sent.
    fn events_of(produce: impl FnOnce(&mut StreamWriter)) -> Vec<AssistantEvent> {
        let (tx, rx) = crossbeam_channel::unbounded();
        let mut w = StreamWriter::new(tx, &model_placeholder(), Abort::new());
        produce(&mut w);
        drop(w);
        rx.try_iter().collect()
    }

    #[test]
    fn a_message_rebuilt_from_the_deltas_is_the_one_the_stream_ends_with() {
        let events = events_of(|w| {
            w.start();
            w.partial.response_id = Some("resp-1".into());
            let t = w.thinking_start();
            w.thinking_delta(t, "hmm");
            w.end_block(t);
            let x = w.text_start();
            w.text_delta(x, "Hel");
            w.partial.usage.input = 12;
            w.text_delta(x, "lo");
            let c = w.toolcall_start("call_1", "write");
            for piece in ["{\"pa", "th\": \"a.t", "xt\", \"content\": \"x\"}"] {
                w.toolcall_delta(c, piece);
            }
            w.finish();
        });
        let Some(AssistantEvent::Start { partial }) = events.first() else {
            panic!("{events:?}")
        };
        let mut b = MessageBuilder::new(partial.clone());
        for ev in &events[1..events.len() - 1] {
            b.apply(ev);
        }
        let Some(AssistantEvent::Done { message, .. }) = events.last() else {
            panic!("{events:?}")
        };
        assert_eq!(b.snapshot(), *message);
        assert_eq!(b.message().response_id.as_deref(), Some("resp-1"));
        assert_eq!(b.message().usage.input, 12);
        // Tool arguments are parsed once, at the end of the block.
        let Content::ToolCall(call) = &message.content[2] else {
            panic!("{message:?}")
        };
        assert_eq!(
            call.arguments,
            serde_json::json!({"path": "a.txt", "content": "x"})
        );
        // Usage and ids travel as `Meta`, sent only when they change.
        let metas = events
            .iter()
            .filter(|e| matches!(e, AssistantEvent::Meta { .. }))
            .count();
        assert_eq!(metas, 2);
    }

    #[test]
    fn a_stream_cut_short_reports_the_end_of_each_open_block() {
        let events = events_of(|w| {
            w.start();
            let x = w.text_start();
            w.text_delta(x, "partial te");
            let c = w.toolcall_start("call_1", "read");
            w.toolcall_delta(c, "{\"path\": \"sr");
        });
        let Some(AssistantEvent::Start { partial }) = events.first() else {
            panic!()
        };
        let mut b = MessageBuilder::new(partial.clone());
        events[1..].iter().for_each(|e| b.apply(e));
        let cut = b.snapshot();
        let ends = b.end_events(&cut);
        assert_eq!(ends.len(), 2);
        assert_eq!(
            ends[0],
            AssistantEvent::TextEnd {
                index: 0,
                content: "partial te".into()
            }
        );
        let AssistantEvent::ToolCallEnd { tool_call, .. } = &ends[1] else {
            panic!("{ends:?}")
        };
        assert_eq!(tool_call.arguments, serde_json::json!({"path": "sr"}));
    }

    #[test]
    fn abort_wakes_every_waiter_at_once_and_reset_rearms_it() {
        let abort = Abort::new();
        let signal = abort.signal();
        assert!(signal.try_recv().is_err_and(|e| e.is_empty()));
        let waiter = {
            let abort = abort.clone();
            std::thread::spawn(move || {
                let s = abort.signal();
                crossbeam_channel::select! { recv(s) -> _ => true }
            })
        };
        abort.abort();
        assert!(waiter.join().unwrap());
        assert!(signal.try_recv().is_err_and(|e| e.is_disconnected()));
        assert!(!abort.sleep(std::time::Duration::from_secs(60)));
        abort.reset();
        assert!(!abort.is_aborted());
        assert!(abort.signal().try_recv().is_err_and(|e| e.is_empty()));
        assert!(abort.sleep(std::time::Duration::from_millis(1)));
    }
}
