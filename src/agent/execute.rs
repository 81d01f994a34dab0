//! Executing one assistant message's tool calls: prepared one after another in source order
//! (lookup, argument validation, the before-hook), then run — sequentially on the run thread,
//! or in parallel with one thread per call. `tool_execution_end` is emitted in completion
//! order; the tool results come back in source order. A tool that panics produces an error
//! result, never a crashed run.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use crossbeam_channel::Sender;
use serde_json::{json, Map, Value};

use super::tool::{ExecutionMode, Tool, ToolContext, ToolOutput};
use super::validate::validate_arguments;
use super::{Agent, AgentEvent};
use crate::ai::{now_ms, Abort, Content, Extra, ToolCall, ToolResultMessage};

/// Decides whether a call may run: `Some(reason)` blocks it (empty reason = pi's default). It
/// may also rewrite the validated arguments the tool will get.
pub type BeforeToolCall = Arc<dyn Fn(&ToolCall, &mut Value) -> Option<String> + Send + Sync>;
/// May rewrite a finished call's output and error flag.
pub type AfterToolCall = Arc<dyn Fn(&ToolCall, &mut ToolOutput, &mut bool) + Send + Sync>;

/// One call's final outcome.
pub struct Finished {
    pub call: ToolCall,
    pub output: ToolOutput,
    pub is_error: bool,
}

impl Finished {
    fn error(call: &ToolCall, message: String) -> Self {
        Finished {
            call: call.clone(),
            output: ToolOutput::text(message).with_details(json!({})),
            is_error: true,
        }
    }

    pub fn to_message(&self) -> ToolResultMessage {
        ToolResultMessage {
            tool_call_id: self.call.id.clone(),
            tool_name: self.call.name.clone(),
            content: self.output.content.clone(),
            details: self.output.details.clone(),
            is_error: self.is_error,
            timestamp: now_ms(),
            extra: Extra::new(),
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

fn prepare(agent: &Agent, tools: &[Arc<dyn Tool>], call: &ToolCall) -> Prepared {
    let Some(tool) = tools.iter().find(|t| t.name() == call.name).cloned() else {
        return Prepared::Immediate(Finished::error(
            call,
            format!("Tool {} not found", call.name),
        ));
    };
    let mut args = match validate_arguments(&call.name, &tool.parameters(), &call.arguments) {
        Ok(a) => a,
        Err(e) => return Prepared::Immediate(Finished::error(call, e)),
    };
    if let Some(hook) = &agent.before_tool_call {
        if let Some(reason) = hook(call, &mut args) {
            let reason = if reason.is_empty() {
                "Tool execution was blocked".to_string()
            } else {
                reason
            };
            return Prepared::Immediate(Finished::error(call, reason));
        }
    }
    Prepared::Ready {
        tool,
        call: call.clone(),
        args,
    }
}

fn run_prepared(
    tool: &dyn Tool,
    call: &ToolCall,
    args: Value,
    cwd: std::path::PathBuf,
    abort: &Abort,
    tx: &Sender<AgentEvent>,
    after: Option<&AfterToolCall>,
) -> Finished {
    let on_update = |partial: ToolOutput| {
        let _ = tx.send(AgentEvent::ToolExecutionUpdate {
            id: call.id.clone(),
            name: call.name.clone(),
            args: call.arguments.clone(),
            partial_result: output_json(&partial),
        });
    };
    let ctx = ToolContext {
        cwd,
        abort: abort.clone(),
        on_update: &on_update,
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| tool.execute(&call.id, args, &ctx)));
    let mut finished = match outcome {
        Ok(Ok(output)) => Finished {
            call: call.clone(),
            output,
            is_error: false,
        },
        Ok(Err(message)) => Finished::error(call, message),
        Err(_) => Finished::error(
            call,
            format!("Tool {} failed unexpectedly (internal error)", call.name),
        ),
    };
    if let Some(hook) = after {
        hook(call, &mut finished.output, &mut finished.is_error);
    }
    finished
}

fn emit_end(tx: &Sender<AgentEvent>, f: &Finished) {
    let _ = tx.send(AgentEvent::ToolExecutionEnd {
        id: f.call.id.clone(),
        name: f.call.name.clone(),
        result: output_json(&f.output),
        is_error: f.is_error,
    });
}

fn emit_result_message(tx: &Sender<AgentEvent>, m: &ToolResultMessage) {
    let message = crate::ai::Message::ToolResult(m.clone());
    let _ = tx.send(AgentEvent::MessageStart {
        message: message.clone(),
    });
    let _ = tx.send(AgentEvent::MessageEnd { message });
}

/// Runs every tool call of `calls`; returns the result messages in source order and whether
/// the batch asked to terminate the run.
pub fn execute_calls(
    agent: &Agent,
    calls: &[ToolCall],
    tx: &Sender<AgentEvent>,
    abort: &Abort,
) -> (Vec<ToolResultMessage>, bool) {
    // The tools declared for the reply being executed (MCP tools included).
    let tools = agent.current_tools();
    let sequential = calls.iter().any(|c| {
        tools
            .iter()
            .any(|t| t.name() == c.name && t.execution_mode() == ExecutionMode::Sequential)
    });
    let start = |c: &ToolCall| {
        let _ = tx.send(AgentEvent::ToolExecutionStart {
            id: c.id.clone(),
            name: c.name.clone(),
            args: c.arguments.clone(),
        });
    };
    let mut finished: Vec<Finished> = Vec::with_capacity(calls.len());
    let mut messages = Vec::with_capacity(calls.len());
    if sequential {
        for c in calls {
            start(c);
            let f = match prepare(agent, &tools, c) {
                Prepared::Immediate(f) => f,
                Prepared::Ready { tool, call, args } => run_prepared(
                    tool.as_ref(),
                    &call,
                    args,
                    agent.cwd.clone(),
                    abort,
                    tx,
                    agent.after_tool_call.as_ref(),
                ),
            };
            emit_end(tx, &f);
            let m = f.to_message();
            emit_result_message(tx, &m);
            messages.push(m);
            finished.push(f);
        }
    } else {
        let (done_tx, done_rx) = crossbeam_channel::unbounded::<(usize, Finished)>();
        let mut slots: Vec<Option<Finished>> = Vec::with_capacity(calls.len());
        let mut running = 0;
        // Scoped threads: every call thread is joined before the batch returns.
        std::thread::scope(|scope| {
            for (i, c) in calls.iter().enumerate() {
                start(c);
                match prepare(agent, &tools, c) {
                    Prepared::Immediate(f) => {
                        emit_end(tx, &f);
                        slots.push(Some(f));
                    }
                    Prepared::Ready { tool, call, args } => {
                        slots.push(None);
                        running += 1;
                        let done_tx = done_tx.clone();
                        let cwd = agent.cwd.clone();
                        let after = agent.after_tool_call.clone();
                        scope.spawn(move || {
                            let f = run_prepared(
                                tool.as_ref(),
                                &call,
                                args,
                                cwd,
                                abort,
                                tx,
                                after.as_ref(),
                            );
                            emit_end(tx, &f);
                            let _ = done_tx.send((i, f));
                        });
                    }
                }
            }
            for _ in 0..running {
                if let Ok((i, f)) = done_rx.recv() {
                    slots[i] = Some(f);
                }
            }
        });
        for (slot, c) in slots.into_iter().zip(calls) {
            let f = slot.unwrap_or_else(|| Finished::error(c, "Tool call did not finish".into()));
            let m = f.to_message();
            emit_result_message(tx, &m);
            messages.push(m);
            finished.push(f);
        }
    }
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
