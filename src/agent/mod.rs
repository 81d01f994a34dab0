//! The agent: a transcript, a model, a thinking level and tools, and the run loop that drives
//! one prompt to completion on its own thread, emitting pi's events in pi's order. A run owns
//! the `Agent` while it runs (so there is never a second active run) and hands it back on join.
//! Abort is honoured within 50 ms even if the provider stalls: the loop stops waiting, closes
//! the turn with an `aborted` message, and leaves the stream thread to notice on its own.
//! `message` holds the transcript's message types (sessions store them; the loop owns them).

pub mod events;
pub mod execute;
pub mod message;
pub mod nested_record;
pub mod normalize;
pub mod queue;
pub mod repeats;
pub mod system_message;
pub mod tool;
pub mod validate;

use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{select, Receiver, Sender};
pub use events::{AgentEvent, CompactionReason};
pub use execute::{pass_gate, AfterToolCall, BeforeToolCall, ToolGate};
pub use message::{into_llm_messages, to_llm_messages, AgentMessage, CustomMessage};
pub use queue::{MessageQueue, QueueMode};
pub use tool::{
    ExecutionMode, NestedOutcome, NestedTools, Tool, ToolContext, ToolNamespace, ToolOutput,
    ToolSource,
};

use crate::ai::stream::MessageBuilder;
use crate::ai::{
    Abort, AssistantEvent, AssistantMessage, Context, Message, Model, StopReason, StreamOptions,
    ThinkingLevel, ToolResultMessage,
};
use system_message::SystemMessage;

/// How a run starts an LLM call; the real one is `ai::providers::stream`, tests may script it.
pub type StreamFn =
    Arc<dyn Fn(&Model, &Context, &StreamOptions, Abort) -> Receiver<AssistantEvent> + Send + Sync>;

/// Rewrites the messages sent to the model for one call (extensions' `context` hook); the
/// transcript itself is unchanged.
pub type TransformContext = Arc<dyn Fn(Vec<Message>, &Abort) -> Vec<Message> + Send + Sync>;

/// Extensions' actionable `turn_end` (pi 1.x): called on the run thread after a turn's
/// messages are in, before `TurnEnd` is emitted. Returns the extension messages to add to the
/// context (each emitted as a custom message) and whether to make one more request.
pub type TurnEndHook = Arc<
    dyn Fn(&AssistantMessage, &[ToolResultMessage], &Abort) -> (Vec<CustomMessage>, bool)
        + Send
        + Sync,
>;

pub struct Agent {
    pub messages: Vec<Message>,
    pub model: Model,
    pub thinking: ThinkingLevel,
    pub system_prompt: String,
    pub tools: Vec<Arc<dyn Tool>>,
    /// MCP: tools that come and go during a run, declared after `tools` (see [`ToolSource`]).
    pub tool_source: Option<Arc<dyn ToolSource>>,
    /// Directory tools run in.
    pub cwd: PathBuf,
    /// Messages delivered after the current tool batch.
    pub steering: MessageQueue,
    /// Messages delivered when the agent would otherwise stop.
    pub follow_up: MessageQueue,
    pub before_tool_call: Option<BeforeToolCall>,
    pub after_tool_call: Option<AfterToolCall>,
    /// Approval rules every call passes (see [`execute::ToolGate`]); extensions never
    /// replace it.
    pub tool_gate: Option<execute::ToolGate>,
    pub transform_context: Option<TransformContext>,
    pub turn_end: Option<TurnEndHook>,
    /// Extension messages that join the next run's prompt after its own messages
    /// (`before_agent_start`); taken by that run, each emitted as a custom message.
    pub prompt_customs: Vec<CustomMessage>,
    /// The prompt and tool changes the next run declares before its prompt messages (pi 1.x's
    /// system message); taken by that run. The request itself is built from `system_prompt`
    /// and the tools, which already hold the result.
    pub prompt_system: Option<SystemMessage>,
    /// Key, headers and limits sent with every request.
    pub options: StreamOptions,
    pub stream_fn: StreamFn,
    /// Why the last request failed, as its provider saw it (with the wait the server asked
    /// for: `Retry-After`, `retry-after-ms`, Google's `RetryInfo`), for the auto-retry and the
    /// overflow compaction above us.
    pub last_error: Option<crate::ai::ProviderError>,
}

impl Agent {
    pub fn new(model: Model, system_prompt: String, options: StreamOptions) -> Self {
        Agent {
            messages: Vec::new(),
            model,
            thinking: ThinkingLevel::Off,
            system_prompt,
            tools: Vec::new(),
            tool_source: None,
            cwd: std::env::current_dir().unwrap_or_default(),
            steering: MessageQueue::default(),
            follow_up: MessageQueue::default(),
            before_tool_call: None,
            after_tool_call: None,
            tool_gate: None,
            transform_context: None,
            turn_end: None,
            prompt_customs: Vec::new(),
            prompt_system: None,
            options,
            stream_fn: Arc::new(crate::ai::providers::stream),
            last_error: None,
        }
    }

    /// The tools declared for the next model call: the fixed ones, then those of the
    /// [`ToolSource`] (MCP) whose names are free.
    pub fn current_tools(&self) -> Vec<Arc<dyn Tool>> {
        let mut tools = self.tools.clone();
        if let Some(source) = &self.tool_source {
            for t in source.tools() {
                if !tools.iter().any(|have| have.name() == t.name()) {
                    tools.push(t);
                }
            }
        }
        tools
    }

    /// Starts a run with new prompt messages.
    pub fn prompt(self, prompts: Vec<Message>, abort: Abort) -> Run {
        self.spawn(prompts, abort)
    }

    /// Starts a run from the current transcript (retry, or the user's "continue"), adding no
    /// messages. Like pi, it refuses an empty transcript, and a transcript ending in an
    /// assistant reply unless queued messages can be delivered instead; the agent comes back
    /// with the error.
    pub fn continue_run(self, abort: Abort) -> Result<Run, Box<(Agent, String)>> {
        match self.messages.last() {
            None => Err(Box::new((
                self,
                "Cannot continue: no messages in context".into(),
            ))),
            Some(Message::Assistant(_)) => {
                let mut queued = self.steering.take();
                if queued.is_empty() {
                    queued = self.follow_up.take();
                }
                if queued.is_empty() {
                    Err(Box::new((
                        self,
                        "Cannot continue from message role: assistant".into(),
                    )))
                } else {
                    Ok(self.spawn(queued, abort))
                }
            }
            Some(_) => Ok(self.spawn(Vec::new(), abort)),
        }
    }

    fn spawn(mut self, prompts: Vec<Message>, abort: Abort) -> Run {
        // Bounded for the same reason as the provider stream: a slow listener (a blocked
        // stdout) must hold the run back rather than queue copies of the partial message.
        // Listeners read until `AgentEnd`, so the run never waits on one that stopped.
        let (tx, rx) = crossbeam_channel::bounded(crate::ai::stream::EVENT_BUFFER);
        let (acks, acks_rx) = crossbeam_channel::unbounded();
        let handle = std::thread::Builder::new()
            .name("pi-agent-run".into())
            .spawn(move || {
                let outcome = crate::util::panic::catch(|| {
                    run_loop(&mut self, prompts, &tx, &acks_rx, &abort)
                });
                if outcome.is_err() {
                    // The loop panicked mid-run: still close the run so listeners never hang.
                    let _ = tx.send(AgentEvent::AgentEnd {
                        messages: Vec::new(),
                        will_retry: false,
                    });
                }
                self
            })
            .expect("failed to spawn the agent run thread");
        Run {
            events: rx,
            acks,
            unacknowledged: false,
            handle,
        }
    }
}

/// A run in progress: take events with `next_event` (or `events`) until `AgentEnd`, then
/// `finish` to get the agent back.
pub struct Run {
    events: Receiver<AgentEvent>,
    /// Tells the run that the listener has handled a `tool_execution_start`: the tool waits
    /// for that, so whatever the listener does with the event (a client reading the file it
    /// is about to change) happens before the tool runs.
    acks: Sender<()>,
    unacknowledged: bool,
    handle: JoinHandle<Agent>,
}

impl Run {
    /// The next event, once the listener is done with the previous one; `None` after the
    /// run's last event.
    pub fn next_event(&mut self) -> Option<AgentEvent> {
        if std::mem::take(&mut self.unacknowledged) {
            let _ = self.acks.send(());
        }
        let ev = self.events.recv().ok()?;
        self.unacknowledged = matches!(
            ev,
            AgentEvent::ToolExecutionStart {
                parent_id: None,
                ..
            }
        );
        Some(ev)
    }

    /// [`next_event`](Self::next_event), with `wait` taking the event off the run's channel:
    /// an owner that has other work to do while the run streams (the session actor answering
    /// queries) selects over this channel and its own.
    pub fn next_event_with(
        &mut self,
        wait: &mut dyn FnMut(&Receiver<AgentEvent>) -> Option<AgentEvent>,
    ) -> Option<AgentEvent> {
        if std::mem::take(&mut self.unacknowledged) {
            let _ = self.acks.send(());
        }
        let ev = wait(&self.events)?;
        self.unacknowledged = matches!(
            ev,
            AgentEvent::ToolExecutionStart {
                parent_id: None,
                ..
            }
        );
        Some(ev)
    }

    /// Every remaining event, each acknowledged when the next is asked for.
    pub fn events(&mut self) -> impl Iterator<Item = AgentEvent> + '_ {
        std::iter::from_fn(move || self.next_event())
    }

    pub fn finish(self) -> Agent {
        // The run thread catches its own panics, so join only fails if it was killed.
        self.handle
            .join()
            .unwrap_or_else(|_| panic!("agent run thread died"))
    }
}

/// Emits an extension message and adds it to the context the model sees (as a user message).
fn emit_custom(emit: &dyn Fn(AgentEvent), agent: &mut Agent, message: CustomMessage) {
    emit(AgentEvent::CustomMessageStart {
        message: message.clone(),
    });
    emit(AgentEvent::CustomMessageEnd {
        message: message.clone(),
    });
    let custom = AgentMessage::Custom(message);
    agent.messages.extend(to_llm_messages(&[custom]));
}

fn run_loop(
    agent: &mut Agent,
    prompts: Vec<Message>,
    tx: &Sender<AgentEvent>,
    acks: &Receiver<()>,
    abort: &Abort,
) {
    let emit = |e: AgentEvent| {
        let _ = tx.send(e);
    };
    let mut new_messages: Vec<AgentMessage> = Vec::new();
    emit(AgentEvent::AgentStart);
    emit(AgentEvent::TurnStart);
    if let Some(message) = agent.prompt_system.take() {
        emit(AgentEvent::SystemMessageStart {
            message: message.clone(),
        });
        emit(AgentEvent::SystemMessageEnd {
            message: message.clone(),
        });
        new_messages.push(AgentMessage::System(message));
    }
    for m in prompts {
        emit(AgentEvent::MessageStart { message: m.clone() });
        emit(AgentEvent::MessageEnd { message: m.clone() });
        agent.messages.push(m.clone());
        new_messages.push(m.into());
    }
    for message in std::mem::take(&mut agent.prompt_customs) {
        emit_custom(&emit, agent, message);
    }
    // Anything queued while nothing ran goes in before the first reply.
    let mut pending = agent.steering.take();
    let mut first_turn = true;
    let mut repeats = repeats::RepeatGuard::default();
    'run: loop {
        let mut more_tool_calls = true;
        while more_tool_calls || !pending.is_empty() {
            if !first_turn {
                emit(AgentEvent::TurnStart);
            }
            first_turn = false;
            if !pending.is_empty() {
                // The user spoke: whatever failed before may be worth another try.
                repeats = repeats::RepeatGuard::default();
            }
            for m in pending.drain(..) {
                emit(AgentEvent::MessageStart { message: m.clone() });
                emit(AgentEvent::MessageEnd { message: m.clone() });
                agent.messages.push(m.clone());
                new_messages.push(m.into());
            }
            let assistant = stream_assistant(agent, tx, abort);
            let assistant_msg = Message::Assistant(assistant.clone());
            agent.messages.push(assistant_msg.clone());
            new_messages.push(assistant_msg.clone().into());
            if matches!(
                assistant.stop_reason,
                StopReason::Error | StopReason::Aborted
            ) {
                emit(AgentEvent::TurnEnd {
                    message: assistant_msg,
                    tool_results: Vec::new(),
                });
                break 'run;
            }
            let calls: Vec<_> = assistant.tool_calls().cloned().collect();
            let mut results = Vec::new();
            more_tool_calls = false;
            if !calls.is_empty() {
                let batch = execute::ToolBatch {
                    tools: agent.current_tools(),
                    tool_source: agent.tool_source.clone(),
                    cwd: &agent.cwd,
                    before_tool_call: agent.before_tool_call.as_ref(),
                    after_tool_call: agent.after_tool_call.as_ref(),
                    gate: agent.tool_gate.as_ref(),
                };
                let (messages, terminate) =
                    execute::execute_calls(&batch, &calls, tx, acks, abort, &mut repeats);
                more_tool_calls = !terminate;
                for r in &messages {
                    agent.messages.push(Message::ToolResult(r.clone()));
                    new_messages.push(Message::ToolResult(r.clone()).into());
                }
                results = messages;
            }
            if let Some(hook) = agent.turn_end.clone() {
                let (added, continue_run) = hook(&assistant, &results, abort);
                for message in added {
                    emit_custom(&emit, agent, message);
                }
                // One more request, unless tool results or queued messages make one anyway.
                more_tool_calls |= continue_run && !abort.is_aborted();
            }
            emit(AgentEvent::TurnEnd {
                message: assistant_msg,
                tool_results: results,
            });
            repeats.end_turn();
            if let Some(error) = repeats.take_stop() {
                stop_repeating(agent, &emit, &mut new_messages, error);
                break 'run;
            }
            pending = agent.steering.take();
        }
        pending = agent.follow_up.take();
        if pending.is_empty() {
            break;
        }
    }
    emit(AgentEvent::AgentEnd {
        messages: new_messages,
        will_retry: false,
    });
}

/// Ends a run whose model kept making the same failing tool call: one more turn, holding an
/// assistant message with the error and no request behind it, so every mode shows the error
/// as it shows a provider's and the session records why the run stopped.
fn stop_repeating(
    agent: &mut Agent,
    emit: &dyn Fn(AgentEvent),
    new_messages: &mut Vec<AgentMessage>,
    error: String,
) {
    emit(AgentEvent::TurnStart);
    let mut msg = AssistantMessage::empty(&agent.model);
    msg.stop_reason = StopReason::Error;
    msg.error_message = Some(error);
    let msg = Message::Assistant(finish(msg, None, None, emit));
    agent.messages.push(msg.clone());
    new_messages.push(msg.clone().into());
    emit(AgentEvent::TurnEnd {
        message: msg,
        tool_results: Vec::new(),
    });
}

/// Streams one assistant message, forwarding its events, and returns it complete. The
/// message so far is rebuilt from the deltas (never copied per event); if the stream is cut
/// short by abort, the blocks still open get their `*_end` events before the aborted
/// `message_end`, as pi's providers end them.
fn stream_assistant(agent: &mut Agent, tx: &Sender<AgentEvent>, abort: &Abort) -> AssistantMessage {
    // Without a transform the transcript is lent to the request and given back as soon as the
    // provider has serialized it, rather than copied (issue 35: held once).
    let (messages, lent) = match &agent.transform_context {
        Some(transform) if !abort.is_aborted() => (transform(agent.messages.clone(), abort), false),
        _ => (std::mem::take(&mut agent.messages), true),
    };
    let mut context = Context {
        system_prompt: Some(agent.system_prompt.clone()).filter(|s| !s.is_empty()),
        messages,
        tools: tool::request_specs(&agent.current_tools()),
    };
    let mut options = agent.options.clone();
    options.reasoning = Some(agent.thinking).filter(|t| *t != ThinkingLevel::Off);
    let timing = Some(ReplyTiming {
        started: std::time::Instant::now(),
        level: agent.thinking,
    });
    let emit = |e: AgentEvent| {
        let _ = tx.send(e);
    };
    if abort.is_aborted() {
        if lent {
            agent.messages = std::mem::take(&mut context.messages);
        }
        // Aborted during the tool batch: close the run with an aborted reply, no request.
        let mut msg = AssistantMessage::empty(&agent.model);
        msg.stop_reason = StopReason::Aborted;
        msg.error_message = Some("Request was aborted".into());
        return finish(msg, None, timing, &emit);
    }
    let rx = (agent.stream_fn)(&agent.model, &context, &options, abort.clone());
    if lent {
        agent.messages = std::mem::take(&mut context.messages);
    }
    agent.last_error = None;

    let mut builder: Option<MessageBuilder> = None;
    let signal = abort.signal();
    loop {
        let ev = select! {
            recv(rx) -> ev => ev,
            recv(signal) -> _ => {
                let msg = cut_short(builder.as_ref(), &agent.model, StopReason::Aborted, "Request was aborted");
                return finish(msg, builder.as_ref(), timing, &emit);
            }
        };
        match ev {
            Ok(AssistantEvent::Start { partial }) => {
                emit(AgentEvent::MessageStart {
                    message: Message::Assistant(pending(&partial)),
                });
                builder = Some(MessageBuilder::new(pending(&partial)));
            }
            Ok(AssistantEvent::Done { message, .. }) => {
                return finish(message, builder.as_ref(), timing, &emit)
            }
            // The server's wait outlives the provider's own retries (none by default): the
            // auto-retry waits for it too, as pi's SDK clients do.
            Ok(AssistantEvent::Error { error, cause, .. }) => {
                agent.last_error = cause;
                return finish(error, builder.as_ref(), timing, &emit);
            }
            Ok(ev) => {
                let b = builder.get_or_insert_with(|| {
                    let start = pending(&AssistantMessage::empty(&agent.model));
                    emit(AgentEvent::MessageStart {
                        message: Message::Assistant(start.clone()),
                    });
                    MessageBuilder::new(start)
                });
                b.apply(&ev);
                if !matches!(ev, AssistantEvent::Meta { .. }) {
                    emit(AgentEvent::MessageUpdate {
                        event: ev,
                        usage: b.message().usage,
                    });
                }
            }
            Err(_) => {
                let msg = cut_short(
                    builder.as_ref(),
                    &agent.model,
                    StopReason::Error,
                    "Provider stream ended without a final event",
                );
                return finish(msg, builder.as_ref(), timing, &emit);
            }
        }
    }
}

/// The message as it stood when a stream started, as `message_start` shows it (today's pi
/// marks it `pending`).
fn pending(start: &AssistantMessage) -> AssistantMessage {
    let mut m = start.clone();
    m.stop_reason = StopReason::Pending;
    m
}

/// What arrived of a stream that ended without its final event.
fn cut_short(
    builder: Option<&MessageBuilder>,
    model: &Model,
    reason: StopReason,
    error: &str,
) -> AssistantMessage {
    let mut msg = builder
        .map(MessageBuilder::snapshot)
        .unwrap_or_else(|| AssistantMessage::empty(model));
    msg.stop_reason = reason;
    msg.error_message = Some(error.into());
    msg
}

/// When a reply's request started and the thinking level it asked for (pi 1.6.0 records both
/// on the final message).
#[derive(Clone, Copy)]
struct ReplyTiming {
    started: std::time::Instant,
    level: ThinkingLevel,
}

impl ReplyTiming {
    /// pi 1.6.0's final-message fields, after the provider's own: `durationMs` (whole ms since
    /// the stream was created, kept if the message has one) then `thinkingLevel` (the level
    /// requested, `off` included).
    fn stamp(self, msg: &mut AssistantMessage) {
        if !msg.extra.contains_key("durationMs") {
            let ms = self.started.elapsed().as_millis() as u64;
            msg.extra.insert("durationMs".into(), ms.into());
        }
        msg.extra
            .insert("thinkingLevel".into(), self.level.as_str().into());
    }
}

/// Emits the end of a streamed message: `message_start` if the stream never started, the
/// `*_end` events of blocks an abort left open, then `message_end`.
fn finish(
    mut msg: AssistantMessage,
    builder: Option<&MessageBuilder>,
    timing: Option<ReplyTiming>,
    emit: &dyn Fn(AgentEvent),
) -> AssistantMessage {
    if let Some(timing) = timing {
        timing.stamp(&mut msg);
    }
    match builder {
        // A reply that never started: its `message_start` is the final message, as pi's is.
        None => emit(AgentEvent::MessageStart {
            message: Message::Assistant(msg.clone()),
        }),
        Some(b) if msg.stop_reason == StopReason::Aborted => {
            for event in b.end_events(&msg) {
                emit(AgentEvent::MessageUpdate {
                    event,
                    usage: msg.usage,
                });
            }
        }
        Some(_) => {}
    }
    emit(AgentEvent::MessageEnd {
        message: Message::Assistant(msg.clone()),
    });
    msg
}

#[cfg(test)]
mod tests;
