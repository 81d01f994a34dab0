//! The assistant event stream: a producer thread per LLM call that owns one HTTP response and
//! sends `AssistantEvent`s over a channel. `StreamWriter` keeps the partial message and the
//! block bookkeeping so providers only translate wire events; `spawn_stream` guarantees exactly
//! one terminal event (`Done` or `Error`) even if the provider returns an error or panics.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crossbeam_channel::{Receiver, Sender};

use super::partial_json::parse_partial_json;
use super::types::*;

/// Events a stream may run ahead of its listener. Each carries a copy of the partial
/// message, so an unbounded queue behind a slow reader would grow quadratically.
pub const EVENT_BUFFER: usize = 64;

/// How often a stream blocked on a full buffer looks at the abort flag.
const ABORT_POLL: std::time::Duration = std::time::Duration::from_millis(50);

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

/// Builds the partial assistant message and emits events for it.
pub struct StreamWriter {
    tx: Sender<AssistantEvent>,
    pub partial: AssistantMessage,
    pub abort: Abort,
    /// Raw argument JSON accumulated per content index (tool calls only).
    tool_json: Vec<(usize, String)>,
    /// Content indexes whose block has started but not ended.
    open: Vec<usize>,
    finished: bool,
    /// Set by the HTTP layer when the server asked us to wait before retrying.
    pub retry_after_ms: Option<u64>,
    /// The model's prices; cost is filled in from usage when the stream ends.
    price: ModelCost,
}

impl StreamWriter {
    pub fn new(tx: Sender<AssistantEvent>, model: &Model, abort: Abort) -> Self {
        StreamWriter {
            tx,
            partial: AssistantMessage::empty(model),
            abort,
            tool_json: Vec::new(),
            open: Vec::new(),
            finished: false,
            retry_after_ms: None,
            price: model.cost,
        }
    }

    fn send(&self, ev: AssistantEvent) {
        // The channel is bounded so a slow listener holds the stream back instead of letting
        // partial-message copies pile up. A closed receiver means nobody listens any more
        // (aborted run), and an aborted run stops waiting for room: dropping is correct then.
        let mut ev = ev;
        loop {
            match self.tx.send_timeout(ev, ABORT_POLL) {
                Ok(()) => return,
                Err(crossbeam_channel::SendTimeoutError::Timeout(back)) => {
                    if self.abort.is_aborted() {
                        return;
                    }
                    ev = back;
                }
                Err(crossbeam_channel::SendTimeoutError::Disconnected(_)) => return,
            }
        }
    }

    /// POSTs a provider request. On failure the server's `Retry-After` is kept for the retry
    /// policy, so every provider reports it the same way.
    pub fn post_json(
        &mut self,
        url: &str,
        headers: &[(String, String)],
        body: &serde_json::Value,
    ) -> Result<super::http::Body, super::http::HttpError> {
        super::http::post_json(url, headers, &body.to_string()).inspect_err(|e| {
            self.retry_after_ms = e.retry_after_ms;
        })
    }

    pub fn start(&mut self) {
        self.send(AssistantEvent::Start {
            partial: self.partial.clone(),
        });
    }

    fn push_block(&mut self, c: Content) -> usize {
        self.partial.content.push(c);
        let idx = self.partial.content.len() - 1;
        self.open.push(idx);
        idx
    }

    pub fn text_start(&mut self) -> usize {
        let index = self.push_block(Content::text(""));
        self.send(AssistantEvent::TextStart {
            index,
            partial: self.partial.clone(),
        });
        index
    }

    pub fn text_delta(&mut self, index: usize, delta: &str) {
        if let Some(Content::Text(t)) = self.partial.content.get_mut(index) {
            t.text.push_str(delta);
        }
        self.send(AssistantEvent::TextDelta {
            index,
            delta: delta.to_string(),
            partial: self.partial.clone(),
        });
    }

    pub fn thinking_start(&mut self) -> usize {
        let index = self.push_block(Content::Thinking(ThinkingContent {
            thinking: String::new(),
            thinking_signature: None,
            redacted: false,
        }));
        self.send(AssistantEvent::ThinkingStart {
            index,
            partial: self.partial.clone(),
        });
        index
    }

    pub fn thinking_delta(&mut self, index: usize, delta: &str) {
        if let Some(Content::Thinking(t)) = self.partial.content.get_mut(index) {
            t.thinking.push_str(delta);
        }
        self.send(AssistantEvent::ThinkingDelta {
            index,
            delta: delta.to_string(),
            partial: self.partial.clone(),
        });
    }

    pub fn toolcall_start(&mut self, id: &str, name: &str) -> usize {
        let index = self.push_block(Content::ToolCall(ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: Value::Object(Default::default()),
            thought_signature: None,
        }));
        self.tool_json.push((index, String::new()));
        self.send(AssistantEvent::ToolCallStart {
            index,
            partial: self.partial.clone(),
        });
        index
    }

    /// Appends a raw argument fragment; the arguments are re-parsed leniently every time.
    pub fn toolcall_delta(&mut self, index: usize, delta: &str) {
        let Some((_, buf)) = self.tool_json.iter_mut().find(|(i, _)| *i == index) else {
            return;
        };
        buf.push_str(delta);
        let parsed = parse_partial_json(buf);
        if let Some(Content::ToolCall(t)) = self.partial.content.get_mut(index) {
            t.arguments = parsed;
        }
        self.send(AssistantEvent::ToolCallDelta {
            index,
            delta: delta.to_string(),
            partial: self.partial.clone(),
        });
    }

    /// Replaces a tool call's arguments wholesale (APIs that send complete arguments).
    pub fn toolcall_set_arguments(&mut self, index: usize, args: Value) {
        if let Some(Content::ToolCall(t)) = self.partial.content.get_mut(index) {
            t.arguments = args;
        }
    }

    /// Ends the block at `index`, emitting the matching `*_end` event. Ending twice is a no-op.
    pub fn end_block(&mut self, index: usize) {
        let Some(pos) = self.open.iter().position(|i| *i == index) else {
            return;
        };
        self.open.remove(pos);
        let ev = match self.partial.content.get(index).cloned() {
            Some(Content::Text(t)) => AssistantEvent::TextEnd {
                index,
                content: t.text,
                partial: self.partial.clone(),
            },
            Some(Content::Thinking(t)) => AssistantEvent::ThinkingEnd {
                index,
                content: t.thinking,
                partial: self.partial.clone(),
            },
            Some(Content::ToolCall(t)) => {
                self.tool_json.retain(|(i, _)| *i != index);
                AssistantEvent::ToolCallEnd {
                    index,
                    tool_call: t,
                    partial: self.partial.clone(),
                }
            }
            _ => return,
        };
        self.send(ev);
    }

    /// Ends every block still open, in content order.
    pub fn end_all_blocks(&mut self) {
        let mut open = self.open.clone();
        open.sort_unstable();
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
    pub fn fail(&mut self, message: &str) {
        if self.finished {
            return;
        }
        self.finished = true;
        self.partial.usage.apply_pricing(&self.price);
        self.open.clear();
        self.tool_json.clear();
        let reason = if self.abort.is_aborted() {
            StopReason::Aborted
        } else {
            StopReason::Error
        };
        self.partial.stop_reason = reason;
        self.partial.error_message = Some(if reason == StopReason::Aborted {
            "Request was aborted".to_string()
        } else {
            message.to_string()
        });
        self.send(AssistantEvent::Error {
            reason,
            error: self.partial.clone(),
            retry_after_ms: self.retry_after_ms,
        });
    }

    pub fn is_finished(&self) -> bool {
        self.finished
    }
}

/// Runs `produce` on its own thread and returns the event receiver. Whatever `produce` does —
/// return `Ok` without finishing, return `Err`, or panic — the receiver sees exactly one
/// terminal event. The thread is detached on purpose: after an abort nobody waits for it, and it
/// exits on its next wake-up when it notices the flag or the closed channel.
pub fn spawn_stream<F>(model: &Model, abort: Abort, produce: F) -> Receiver<AssistantEvent>
where
    F: FnOnce(&mut StreamWriter) -> Result<(), String> + Send + 'static,
{
    let (tx, rx) = crossbeam_channel::bounded(EVENT_BUFFER);
    let model = model.clone();
    let spawned = std::thread::Builder::new().name("pi-stream".into()).spawn({
        let tx = tx.clone();
        move || {
            let mut w = StreamWriter::new(tx, &model, abort);
            let outcome =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| produce(&mut w)));
            match outcome {
                Ok(Ok(())) if w.abort.is_aborted() => w.fail("Request was aborted"),
                Ok(Ok(())) => w.finish(),
                Ok(Err(e)) => w.fail(&e),
                Err(p) => {
                    let msg = p
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| p.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "unknown panic".into());
                    w.fail(&format!("Internal error in provider stream: {msg}"));
                }
            }
        }
    });
    if let Err(e) = spawned {
        let mut w = StreamWriter::new(tx, &model_placeholder(), Abort::new());
        w.fail(&format!("could not start stream thread: {e}"));
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
