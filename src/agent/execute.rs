//! Executing one assistant message's tool calls: prepared one after another in source order
//! (lookup, argument validation, the before-hook), then run — one after another, or in
//! parallel. Every call runs on its own detached thread while the run thread waits for results
//! and for the abort flag, so a tool stuck in the kernel (`open(2)` on a FIFO, a stalled mount)
//! never holds the run: on abort the calls still running become "Operation aborted" results
//! and their threads are left to finish on their own. `tool_execution_start` is emitted, and
//! acknowledged by the run's listener, before the call runs, so a client reading a file at the
//! start event sees it untouched. `tool_execution_end` is emitted in completion order; the
//! tool results come back in source order. A tool that panics produces an error result, never
//! a crashed run.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{select, Receiver, Sender};
use serde_json::{json, Map, Value};

use super::nested_record::NestedCallRecorder;
use super::repeats::RepeatGuard;
use super::tool::{
    ExecutionMode, NestedOutcome, NestedTools, Tool, ToolContext, ToolOutput, ToolSource,
};
use super::validate::validate_arguments;
use super::AgentEvent;
use crate::ai::{now_ms, Abort, Content, Extra, ToolCall, ToolResultMessage};

/// Decides whether a call may run: `Some(reason)` blocks it (empty reason = pi's default). It
/// may also rewrite the validated arguments the tool will get.
pub type BeforeToolCall = Arc<dyn Fn(&ToolCall, &mut Value) -> Option<String> + Send + Sync>;
/// The one gate every tool call passes on its way to the tool (issue 34's approval rules):
/// after argument validation and the extensions' `tool_call` hook (so it judges the arguments
/// the tool will really get), before the tool runs. `Err(reason)` refuses the call; the reason
/// is the error result the model sees. It may block to ask the user, honouring `abort`.
/// Anything else that runs a tool for the model (codemode) calls it the same way, through
/// [`pass_gate`].
pub type ToolGate = Arc<dyn Fn(&ToolCall, &Value, &Abort) -> Result<(), String> + Send + Sync>;

/// Whether `call` (with the arguments the tool will get) may run: `Err` is the tool result
/// to give the model instead.
pub fn pass_gate(
    gate: Option<&ToolGate>,
    call: &ToolCall,
    args: &Value,
    abort: &Abort,
) -> Result<(), String> {
    match gate {
        Some(gate) => gate(call, args, abort),
        None => Ok(()),
    }
}

/// May rewrite a finished call's output and error flag.
pub type AfterToolCall = Arc<dyn Fn(&ToolCall, &mut ToolOutput, &mut bool) + Send + Sync>;

/// What a batch of tool calls needs from the agent that runs it.
pub struct ToolBatch<'a> {
    /// The tools declared for the reply being executed (MCP tools included).
    pub tools: Vec<Arc<dyn Tool>>,
    /// Where nested calls (`codemode` scripts) find the tools kept for scripts only.
    pub tool_source: Option<Arc<dyn ToolSource>>,
    /// Directory tools run in.
    pub cwd: &'a Path,
    pub before_tool_call: Option<&'a BeforeToolCall>,
    pub after_tool_call: Option<&'a AfterToolCall>,
    /// Approval rules; see [`ToolGate`].
    pub gate: Option<&'a ToolGate>,
}

/// After an abort, how long calls still running get to come back with their own result (a
/// killed `bash` reports its partial output) before they are reported as aborted.
const ABORT_GRACE: Duration = Duration::from_millis(50);

/// The result of a call that was still running (or not yet started) when the run was aborted,
/// as pi's tools reject on abort.
pub const ABORTED: &str = "Operation aborted";

/// One call's final outcome.
pub struct Finished {
    pub call: ToolCall,
    pub output: ToolOutput,
    pub is_error: bool,
    /// How long `execute` ran; `None` when the tool never ran (not found, invalid arguments,
    /// blocked, aborted before it started).
    pub duration: Option<Duration>,
    /// The calls the tool made while it ran (`nestedCalls`, see `nested_record`).
    pub nested: Option<Value>,
}

impl Finished {
    fn error(call: &ToolCall, message: String) -> Self {
        Finished {
            call: call.clone(),
            output: ToolOutput::text(message).with_details(json!({})),
            is_error: true,
            duration: None,
            nested: None,
        }
    }

    pub fn to_message(&self) -> ToolResultMessage {
        ToolResultMessage {
            tool_call_id: self.call.id.clone(),
            tool_name: self.call.name.clone(),
            content: self.output.content.clone(),
            details: self.output.details.clone(),
            is_error: self.is_error,
            // pi 1.6.0: the message carries the duration `tool_execution_end` reports, so it
            // reaches the session file, `get_messages` and a replay.
            duration_ms: self
                .duration
                .map(|d| (d.as_secs_f64() * 1000.0).round() as u64),
            timestamp: now_ms(),
            extra: self
                .nested
                .iter()
                .map(|n| ("nestedCalls".to_string(), n.clone()))
                .collect::<Extra>(),
        }
    }
}

/// `{content, details?, terminate?}` as pi puts a result in its events.
pub fn output_json(o: &ToolOutput) -> Value {
    let mut m = Map::new();
    m.insert(
        "content".into(),
        serde_json::to_value(&o.content).unwrap_or(Value::Null),
    );
    if let Some(d) = &o.details {
        m.insert("details".into(), d.clone());
    }
    if let Some(sc) = &o.structured_content {
        m.insert("structuredContent".into(), sc.clone());
    }
    if o.terminate {
        m.insert("terminate".into(), Value::Bool(true));
    }
    Value::Object(m)
}

enum Prepared {
    Immediate(Finished),
    Ready {
        tool: Arc<dyn Tool>,
        call: ToolCall,
        args: Value,
    },
}

fn prepare(batch: &ToolBatch<'_>, call: &ToolCall, abort: &Abort) -> Prepared {
    let Some(tool) = batch.tools.iter().find(|t| t.name() == call.name).cloned() else {
        return Prepared::Immediate(Finished::error(
            call,
            format!("Tool {} not found", call.name),
        ));
    };
    let prepared = tool.prepare_arguments(call.arguments.clone());
    let mut args = match validate_arguments(&call.name, &tool.parameters(), &prepared) {
        Ok(a) => a,
        Err(e) => return Prepared::Immediate(Finished::error(call, e)),
    };
    if let Some(hook) = batch.before_tool_call {
        if let Some(reason) = hook(call, &mut args) {
            let reason = if reason.is_empty() {
                "Tool execution was blocked".to_string()
            } else {
                reason
            };
            return Prepared::Immediate(Finished::error(call, reason));
        }
    }
    if let Err(reason) = pass_gate(batch.gate, call, &args, abort) {
        return Prepared::Immediate(Finished::error(call, reason));
    }
    Prepared::Ready {
        tool,
        call: call.clone(),
        args,
    }
}

/// Whether a call's thread may still send progress: cleared (under the lock) when the batch
/// gives up on the call, so no update follows its `tool_execution_end`.
type Live = Arc<Mutex<bool>>;

/// Runs one prepared call on the current (tool) thread.
fn run_prepared(
    tool: &dyn Tool,
    call: &ToolCall,
    args: Value,
    ctx_parts: (std::path::PathBuf, Abort, Option<Arc<dyn NestedTools>>),
    events: &Sender<AgentEvent>,
    (live, parent): (&Live, Option<&str>),
    after: Option<&AfterToolCall>,
) -> Finished {
    let on_update = |partial: ToolOutput| {
        send_live(
            events,
            live,
            AgentEvent::ToolExecutionUpdate {
                id: call.id.clone(),
                name: call.name.clone(),
                args: call.arguments.clone(),
                partial_result: output_json(&partial),
                parent_id: parent.map(str::to_string),
            },
        );
    };
    let (cwd, abort, nested) = ctx_parts;
    let ctx = ToolContext {
        cwd,
        abort,
        on_update: &on_update,
        nested,
    };
    let started = Instant::now();
    let outcome = crate::util::panic::catch(|| tool.execute(&call.id, args, &ctx));
    let duration = Some(started.elapsed());
    let mut finished = match outcome {
        Ok(Ok(output)) => Finished {
            call: call.clone(),
            is_error: output.is_error,
            output,
            duration,
            nested: None,
        },
        Ok(Err(message)) => Finished {
            duration,
            ..Finished::error(call, message)
        },
        Err(panic) => Finished {
            duration,
            ..Finished::error(
                call,
                format!(
                    "Tool {} failed unexpectedly (internal error: {panic})",
                    call.name
                ),
            )
        },
    };
    if let Some(hook) = after {
        hook(call, &mut finished.output, &mut finished.is_error);
    }
    finished
}

/// Sends `event` unless the batch has given up on the call it belongs to.
fn send_live(events: &Sender<AgentEvent>, live: &Live, event: AgentEvent) {
    let live = live.lock().unwrap_or_else(|p| p.into_inner());
    if *live {
        let _ = events.send(event);
    }
}

/// The tool calls one model-issued call makes while it runs (a `codemode` script's
/// `tools.*`): each is prepared and run exactly as the batch prepares and runs the model's calls
/// (lookup, `prepare_arguments`, validation, the before and after hooks), under the id
/// `<caller>/<n>`, with `tool_execution_*` events that name the caller (`parentToolCallId`),
/// and recorded for the caller's result (`nestedCalls`). Nested calls get no nested calls of
/// their own, so a script cannot start a script.
struct BatchNested {
    declared: Vec<Arc<dyn Tool>>,
    source: Option<Arc<dyn ToolSource>>,
    /// `declared` plus the source's script-only tools, found on first use.
    tools: std::sync::OnceLock<Vec<Arc<dyn Tool>>>,
    cwd: PathBuf,
    before: Option<BeforeToolCall>,
    after: Option<AfterToolCall>,
    /// The approval rules, which a script's calls pass exactly as the model's do.
    gate: Option<ToolGate>,
    caller: ToolCall,
    next: AtomicUsize,
    /// The run's events, and the caller's live flag: once the batch gives up on the caller,
    /// neither it nor its nested calls send anything more.
    events: Sender<AgentEvent>,
    live: Live,
    record: Mutex<NestedCallRecorder>,
}

impl BatchNested {
    fn record(&self) -> std::sync::MutexGuard<'_, NestedCallRecorder> {
        self.record.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl NestedTools for BatchNested {
    fn tools(&self, abort: &Abort) -> Vec<Arc<dyn Tool>> {
        self.tools
            .get_or_init(|| {
                let mut tools = self.declared.clone();
                for t in self.source.iter().flat_map(|s| s.script_tools(abort)) {
                    if !tools.iter().any(|have| have.name() == t.name()) {
                        tools.push(t);
                    }
                }
                tools
            })
            .clone()
    }

    fn call(&self, name: &str, args: Value, abort: &Abort, started: &dyn Fn()) -> NestedOutcome {
        let n = self.next.fetch_add(1, Ordering::SeqCst) + 1;
        let call = ToolCall {
            id: format!("{}/{n}", self.caller.id),
            name: name.to_string(),
            arguments: args,
            thought_signature: None,
        };
        let slot = self.record().start(&call.id, &call.name, &call.arguments);
        let parent = Some(self.caller.id.clone());
        send_live(
            &self.events,
            &self.live,
            AgentEvent::ToolExecutionStart {
                id: call.id.clone(),
                name: call.name.clone(),
                args: call.arguments.clone(),
                parent_id: parent.clone(),
            },
        );
        started();
        let batch = ToolBatch {
            tools: self.tools(abort),
            tool_source: None,
            cwd: &self.cwd,
            before_tool_call: self.before.as_ref(),
            after_tool_call: self.after.as_ref(),
            gate: self.gate.as_ref(),
        };
        let finished = if abort.is_aborted() {
            Finished::error(&call, ABORTED.into())
        } else {
            match prepare(&batch, &call, abort) {
                Prepared::Immediate(f) => f,
                Prepared::Ready { tool, call, args } => {
                    if let Some(claim) = tool.reserve(&args, &self.cwd) {
                        claim();
                    }
                    run_prepared(
                        tool.as_ref(),
                        &call,
                        args,
                        (self.cwd.clone(), abort.clone(), None),
                        &self.events,
                        (&self.live, Some(&self.caller.id)),
                        self.after.as_ref(),
                    )
                }
            }
        };
        self.record().finish(
            slot,
            finished.is_error,
            &content_text(&finished.output.content),
        );
        send_live(
            &self.events,
            &self.live,
            AgentEvent::ToolExecutionEnd {
                id: call.id.clone(),
                name: call.name.clone(),
                result: output_json(&finished.output),
                is_error: finished.is_error,
                duration_ms: finished.duration.map(|d| d.as_secs_f64() * 1000.0),
                parent_id: parent,
            },
        );
        NestedOutcome {
            id: call.id,
            output: finished.output,
            is_error: finished.is_error,
        }
    }

    fn report(&self, partial: ToolOutput) {
        send_live(
            &self.events,
            &self.live,
            AgentEvent::ToolExecutionUpdate {
                id: self.caller.id.clone(),
                name: self.caller.name.clone(),
                args: self.caller.arguments.clone(),
                partial_result: output_json(&partial),
                parent_id: None,
            },
        );
    }
}

/// A call's outcome is final: the repeat guard sees it (and may add its note) before
/// `tool_execution_end` shows it.
fn settle(tx: &Sender<AgentEvent>, guard: &mut RepeatGuard, mut f: Finished) -> Finished {
    guard.observe(&f.call, &mut f.output.content, f.is_error);
    emit_end(tx, &f);
    f
}

fn emit_end(tx: &Sender<AgentEvent>, f: &Finished) {
    let _ = tx.send(AgentEvent::ToolExecutionEnd {
        id: f.call.id.clone(),
        name: f.call.name.clone(),
        result: output_json(&f.output),
        is_error: f.is_error,
        duration_ms: f.duration.map(|d| d.as_secs_f64() * 1000.0),
        parent_id: None,
    });
}

fn emit_result_message(tx: &Sender<AgentEvent>, m: &ToolResultMessage) {
    let message = crate::ai::Message::ToolResult(m.clone());
    let _ = tx.send(AgentEvent::MessageStart {
        message: message.clone(),
    });
    let _ = tx.send(AgentEvent::MessageEnd { message });
}

/// The calls of one batch that are running on their threads.
struct Running {
    done_tx: Sender<(usize, Finished)>,
    done_rx: Receiver<(usize, Finished)>,
    /// `(slot, call, live flag)` of every call still out.
    out: Vec<(usize, ToolCall, Live)>,
}

impl Running {
    fn new() -> Self {
        let (done_tx, done_rx) = crossbeam_channel::unbounded();
        Running {
            done_tx,
            done_rx,
            out: Vec::new(),
        }
    }

    /// Starts `call` on a detached thread. Detached on purpose: a tool blocked in the kernel
    /// may never return, and nobody may wait for it. If it returns after the batch gave up on
    /// it, its result goes into a channel nobody reads any more and is dropped with it.
    fn spawn(
        &mut self,
        slot: usize,
        (tool, call, args): (Arc<dyn Tool>, ToolCall, Value),
        batch: &ToolBatch<'_>,
        abort: &Abort,
        tx: &Sender<AgentEvent>,
    ) -> Result<(), String> {
        let live: Live = Arc::new(Mutex::new(true));
        let done_tx = self.done_tx.clone();
        let ctx = (batch.cwd.to_path_buf(), abort.clone());
        let after = batch.after_tool_call.cloned();
        let before = batch.before_tool_call.cloned();
        let gate = batch.gate.cloned();
        let nested_tools = batch.tools.clone();
        let tool_source = batch.tool_source.clone();
        let events = tx.clone();
        let thread_call = call.clone();
        let thread_live = Arc::clone(&live);
        let reserved = tool.reserve(&args, batch.cwd);
        let spawned = std::thread::Builder::new()
            .name("pi-tool".into())
            .spawn(move || {
                if let Some(claim) = reserved {
                    claim();
                }
                let nested = Arc::new(BatchNested {
                    declared: nested_tools,
                    source: tool_source,
                    tools: std::sync::OnceLock::new(),
                    cwd: ctx.0.clone(),
                    before,
                    after: after.clone(),
                    gate,
                    caller: thread_call.clone(),
                    next: AtomicUsize::new(0),
                    events: events.clone(),
                    live: Arc::clone(&thread_live),
                    record: Mutex::new(NestedCallRecorder::default()),
                });
                let mut f = run_prepared(
                    tool.as_ref(),
                    &thread_call,
                    args,
                    (
                        ctx.0,
                        ctx.1,
                        Some(Arc::clone(&nested) as Arc<dyn NestedTools>),
                    ),
                    &events,
                    (&thread_live, None),
                    after.as_ref(),
                );
                f.nested = nested.record().snapshot();
                let _ = done_tx.send((slot, f));
            });
        match spawned {
            Ok(_) => {
                self.out.push((slot, call, live));
                Ok(())
            }
            Err(e) => Err(format!("Could not start tool {}: {e}", call.name)),
        }
    }

    /// Waits until every call is back, emitting each `tool_execution_end` as it arrives. On
    /// abort, calls get [`ABORT_GRACE`] to report; the rest are finished as aborted.
    fn wait_all(
        &mut self,
        slots: &mut [Option<Finished>],
        tx: &Sender<AgentEvent>,
        abort: &Abort,
        guard: &mut RepeatGuard,
    ) {
        let signal = abort.signal();
        let mut deadline: Option<Instant> =
            abort.is_aborted().then(|| Instant::now() + ABORT_GRACE);
        while !self.out.is_empty() {
            // `Duration::MAX` waits without a time limit.
            let wait = deadline.map_or(Duration::MAX, |d| {
                d.saturating_duration_since(Instant::now())
            });
            let abort_signal = if deadline.is_some() {
                crossbeam_channel::never()
            } else {
                signal.clone()
            };
            select! {
                recv(self.done_rx) -> got => {
                    let Ok((slot, f)) = got else { break };
                    self.out.retain(|(s, _, _)| *s != slot);
                    slots[slot] = Some(settle(tx, guard, f));
                }
                recv(abort_signal) -> _ => {
                    deadline = Some(Instant::now() + ABORT_GRACE);
                }
                default(wait) => break,
            }
        }
        for (slot, call, live) in self.out.drain(..) {
            *live.lock().unwrap_or_else(|p| p.into_inner()) = false;
            let f = Finished::error(&call, ABORTED.into());
            slots[slot] = Some(settle(tx, guard, f));
        }
    }
}

/// Emits `tool_execution_start` and waits until the run's listener has taken it in (or the
/// run is aborted, or nobody listens).
fn start(c: &ToolCall, tx: &Sender<AgentEvent>, acks: &Receiver<()>, abort: &Abort) {
    let _ = tx.send(AgentEvent::ToolExecutionStart {
        id: c.id.clone(),
        name: c.name.clone(),
        args: c.arguments.clone(),
        parent_id: None,
    });
    let signal = abort.signal();
    select! {
        recv(acks) -> _ => {}
        recv(signal) -> _ => {}
    }
}

/// Runs every tool call of `calls`; returns the result messages in source order and whether
/// the batch asked to terminate the run. `guard` sees every outcome (see `repeats`).
pub fn execute_calls(
    batch: &ToolBatch<'_>,
    calls: &[ToolCall],
    tx: &Sender<AgentEvent>,
    acks: &Receiver<()>,
    abort: &Abort,
    guard: &mut RepeatGuard,
) -> (Vec<ToolResultMessage>, bool) {
    let sequential = calls.iter().any(|c| {
        batch
            .tools
            .iter()
            .any(|t| t.name() == c.name && t.execution_mode() == ExecutionMode::Sequential)
    });
    let mut slots: Vec<Option<Finished>> = (0..calls.len()).map(|_| None).collect();
    let mut running = Running::new();
    let mut messages = Vec::with_capacity(calls.len());
    for (i, c) in calls.iter().enumerate() {
        start(c, tx, acks, abort);
        let outcome = if abort.is_aborted() {
            Err(Finished::error(c, ABORTED.into()))
        } else {
            match prepare(batch, c, abort) {
                Prepared::Immediate(f) => Err(f),
                Prepared::Ready { tool, call, args } => running
                    .spawn(i, (tool, call, args), batch, abort, tx)
                    .map_err(|e| Finished::error(c, e)),
            }
        };
        if let Err(f) = outcome {
            slots[i] = Some(settle(tx, guard, f));
        }
        if sequential {
            running.wait_all(&mut slots, tx, abort, guard);
            if let Some(f) = &slots[i] {
                let m = f.to_message();
                emit_result_message(tx, &m);
                messages.push(m);
            }
        }
    }
    if !sequential {
        running.wait_all(&mut slots, tx, abort, guard);
        for f in slots.iter().flatten() {
            let m = f.to_message();
            emit_result_message(tx, &m);
            messages.push(m);
        }
    }
    let finished: Vec<&Finished> = slots.iter().flatten().collect();
    let terminate = !finished.is_empty() && finished.iter().all(|f| f.output.terminate);
    (messages, terminate)
}

/// Plain text of a result's content, for tests and summaries.
pub fn content_text(content: &[Content]) -> String {
    content
        .iter()
        .filter_map(|c| match c {
            Content::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}
