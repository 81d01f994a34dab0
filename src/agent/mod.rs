//! The agent: a transcript, a model, a thinking level and tools, and the run loop that drives
//! one prompt to completion on its own thread, emitting pi's events in pi's order. A run owns
//! the `Agent` while it runs (so there is never a second active run) and hands it back on join.
//! Abort is honoured within 50 ms even if the provider stalls: the loop stops waiting, closes
//! the turn with an `aborted` message, and leaves the stream thread to notice on its own.

pub mod events;
pub mod tool;

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{select, Receiver, Sender};
use serde_json::json;

pub use events::AgentEvent;

use crate::ai::{
    now_ms, Abort, AssistantEvent, AssistantMessage, Content, Context, Extra, Message, Model,
    StopReason, StreamOptions, ThinkingLevel, ToolResultMessage, ToolSpec,
};

/// How a run starts an LLM call; the real one is `ai::providers::stream`, tests may script it.
pub type StreamFn =
    Arc<dyn Fn(&Model, &Context, &StreamOptions, Abort) -> Receiver<AssistantEvent> + Send + Sync>;

/// How often a waiting run re-checks the abort flag.
const ABORT_POLL: Duration = Duration::from_millis(50);

pub struct Agent {
    pub messages: Vec<Message>,
    pub model: Model,
    pub thinking: ThinkingLevel,
    pub system_prompt: String,
    pub tools: Vec<ToolSpec>,
    /// Key, headers and limits sent with every request.
    pub options: StreamOptions,
    pub stream_fn: StreamFn,
    /// `Retry-After` of the last failed request, for the retry policy above us.
    pub last_retry_after_ms: Option<u64>,
}

impl Agent {
    pub fn new(model: Model, system_prompt: String, options: StreamOptions) -> Self {
        Agent {
            messages: Vec::new(),
            model,
            thinking: ThinkingLevel::Off,
            system_prompt,
            tools: Vec::new(),
            options,
            stream_fn: Arc::new(crate::ai::providers::stream),
            last_retry_after_ms: None,
        }
    }

    /// Starts a run with new prompt messages.
    pub fn prompt(self, prompts: Vec<Message>, abort: Abort) -> Run {
        self.spawn(prompts, abort)
    }

    /// Starts a run from the current transcript (used by retry), adding no messages.
    pub fn continue_run(self, abort: Abort) -> Run {
        self.spawn(Vec::new(), abort)
    }

    fn spawn(mut self, prompts: Vec<Message>, abort: Abort) -> Run {
        let (tx, rx) = crossbeam_channel::unbounded();
        let handle = std::thread::Builder::new()
            .name("pi-agent-run".into())
            .spawn(move || {
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    run_loop(&mut self, prompts, &tx, &abort)
                }));
                if outcome.is_err() {
                    // The loop panicked mid-run: still close the run so listeners never hang.
                    let _ = tx.send(AgentEvent::AgentEnd {
                        messages: Vec::new(),
                    });
                }
                self
            })
            .expect("failed to spawn the agent run thread");
        Run { events: rx, handle }
    }
}

/// A run in progress: read `events` until `AgentEnd`, then `finish` to get the agent back.
pub struct Run {
    pub events: Receiver<AgentEvent>,
    handle: JoinHandle<Agent>,
}

impl Run {
    pub fn finish(self) -> Agent {
        // The run thread catches its own panics, so join only fails if it was killed.
        self.handle
            .join()
            .unwrap_or_else(|_| panic!("agent run thread died"))
    }
}

fn run_loop(agent: &mut Agent, prompts: Vec<Message>, tx: &Sender<AgentEvent>, abort: &Abort) {
    let emit = |e: AgentEvent| {
        let _ = tx.send(e);
    };
    let mut new_messages = Vec::new();
    emit(AgentEvent::AgentStart);
    emit(AgentEvent::TurnStart);
    for p in prompts {
        emit(AgentEvent::MessageStart { message: p.clone() });
        emit(AgentEvent::MessageEnd { message: p.clone() });
        agent.messages.push(p.clone());
        new_messages.push(p);
    }
    loop {
        let assistant = stream_assistant(agent, tx, abort);
        let assistant_msg = Message::Assistant(assistant.clone());
        agent.messages.push(assistant_msg.clone());
        new_messages.push(assistant_msg.clone());
        if matches!(
            assistant.stop_reason,
            StopReason::Error | StopReason::Aborted
        ) {
            emit(AgentEvent::TurnEnd {
                message: assistant_msg,
                tool_results: Vec::new(),
            });
            break;
        }
        let results = execute_tool_calls(agent, &assistant, tx);
        for r in &results {
            let m = Message::ToolResult(r.clone());
            emit(AgentEvent::MessageStart { message: m.clone() });
            emit(AgentEvent::MessageEnd { message: m.clone() });
            agent.messages.push(m.clone());
            new_messages.push(m);
        }
        let more = !results.is_empty();
        emit(AgentEvent::TurnEnd {
            message: assistant_msg,
            tool_results: results,
        });
        if !more || abort.is_aborted() {
            break;
        }
        emit(AgentEvent::TurnStart);
    }
    emit(AgentEvent::AgentEnd {
        messages: new_messages,
    });
}

/// No tools are registered yet: every call gets pi's "not found" error result so the model
/// can recover, and the transcript stays valid.
fn execute_tool_calls(
    agent: &Agent,
    assistant: &AssistantMessage,
    tx: &Sender<AgentEvent>,
) -> Vec<ToolResultMessage> {
    let mut results = Vec::new();
    for call in assistant.tool_calls() {
        let _ = tx.send(AgentEvent::ToolExecutionStart {
            id: call.id.clone(),
            name: call.name.clone(),
            args: call.arguments.clone(),
        });
        let known = agent.tools.iter().any(|t| t.name == call.name);
        let text = if known {
            format!("Tool {} is not executable in this build", call.name)
        } else {
            format!("Tool {} not found", call.name)
        };
        let content = vec![Content::text(text)];
        let _ = tx.send(AgentEvent::ToolExecutionEnd {
            id: call.id.clone(),
            name: call.name.clone(),
            result: json!({"content": content, "details": {}}),
            is_error: true,
        });
        results.push(ToolResultMessage {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            content,
            details: Some(json!({})),
            is_error: true,
            timestamp: now_ms(),
            extra: Extra::new(),
        });
    }
    results
}

/// Streams one assistant message, forwarding its events, and returns it complete.
fn stream_assistant(agent: &mut Agent, tx: &Sender<AgentEvent>, abort: &Abort) -> AssistantMessage {
    let context = Context {
        system_prompt: Some(agent.system_prompt.clone()).filter(|s| !s.is_empty()),
        messages: agent.messages.clone(),
        tools: agent.tools.clone(),
    };
    let mut options = agent.options.clone();
    options.reasoning = Some(agent.thinking).filter(|t| *t != ThinkingLevel::Off);
    let rx = (agent.stream_fn)(&agent.model, &context, &options, abort.clone());
    agent.last_retry_after_ms = None;

    let mut partial: Option<AssistantMessage> = None;
    let emit = |e: AgentEvent| {
        let _ = tx.send(e);
    };
    let finish = |msg: AssistantMessage, started: bool| {
        if !started {
            emit(AgentEvent::MessageStart {
                message: Message::Assistant(msg.clone()),
            });
        }
        emit(AgentEvent::MessageEnd {
            message: Message::Assistant(msg.clone()),
        });
        msg
    };
    loop {
        select! {
            recv(rx) -> ev => match ev {
                Ok(AssistantEvent::Start { partial: p }) => {
                    emit(AgentEvent::MessageStart { message: Message::Assistant(p.clone()) });
                    partial = Some(p);
                }
                Ok(AssistantEvent::Done { message, .. }) => return finish(message, partial.is_some()),
                Ok(AssistantEvent::Error { error, retry_after_ms, .. }) => {
                    agent.last_retry_after_ms = retry_after_ms;
                    return finish(error, partial.is_some());
                }
                Ok(ev) => {
                    let p = partial_of(&ev).clone();
                    if partial.is_none() {
                        emit(AgentEvent::MessageStart { message: Message::Assistant(p.clone()) });
                    }
                    emit(AgentEvent::MessageUpdate { message: Message::Assistant(p.clone()), event: ev });
                    partial = Some(p);
                }
                Err(_) => {
                    let started = partial.is_some();
                    let mut msg = partial.take().unwrap_or_else(|| AssistantMessage::empty(&agent.model));
                    msg.stop_reason = StopReason::Error;
                    msg.error_message = Some("Provider stream ended without a final event".into());
                    return finish(msg, started);
                }
            },
            default(ABORT_POLL) => {
                if abort.is_aborted() {
                    let started = partial.is_some();
                    let mut msg = partial.take().unwrap_or_else(|| AssistantMessage::empty(&agent.model));
                    msg.stop_reason = StopReason::Aborted;
                    msg.error_message = Some("Request was aborted".into());
                    return finish(msg, started);
                }
            }
        }
    }
}

fn partial_of(ev: &AssistantEvent) -> &AssistantMessage {
    match ev {
        AssistantEvent::Start { partial }
        | AssistantEvent::TextStart { partial, .. }
        | AssistantEvent::TextDelta { partial, .. }
        | AssistantEvent::TextEnd { partial, .. }
        | AssistantEvent::ThinkingStart { partial, .. }
        | AssistantEvent::ThinkingDelta { partial, .. }
        | AssistantEvent::ThinkingEnd { partial, .. }
        | AssistantEvent::ToolCallStart { partial, .. }
        | AssistantEvent::ToolCallDelta { partial, .. }
        | AssistantEvent::ToolCallEnd { partial, .. } => partial,
        AssistantEvent::Done { message, .. } => message,
        AssistantEvent::Error { error, .. } => error,
    }
}

#[cfg(test)]
mod tests;
