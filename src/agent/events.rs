//! The agent's event taxonomy (`AgentEvent` in pi-agent-core, plus the session-level retry
//! events), with the exact JSON shapes `--mode json` and RPC print.

use serde_json::{json, Map, Value};

use crate::ai::{AssistantEvent, Message, ToolResultMessage};

// Events are built once and moved through a channel; boxing the big variants would only add
// allocations.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum AgentEvent {
    AgentStart,
    AgentEnd {
        messages: Vec<Message>,
    },
    TurnStart,
    TurnEnd {
        message: Message,
        tool_results: Vec<ToolResultMessage>,
    },
    MessageStart {
        message: Message,
    },
    MessageUpdate {
        message: Message,
        event: AssistantEvent,
    },
    MessageEnd {
        message: Message,
    },
    ToolExecutionStart {
        id: String,
        name: String,
        args: Value,
    },
    ToolExecutionUpdate {
        id: String,
        name: String,
        args: Value,
        partial_result: Value,
    },
    ToolExecutionEnd {
        id: String,
        name: String,
        result: Value,
        is_error: bool,
    },
    AutoRetryStart {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        error_message: String,
    },
    AutoRetryEnd {
        success: bool,
        attempt: u32,
        final_error: Option<String>,
    },
    CompactionStart {
        reason: CompactionReason,
    },
    CompactionEnd {
        reason: CompactionReason,
        /// `{summary, firstKeptEntryId, tokensBefore, details}` on success.
        result: Option<Value>,
        aborted: bool,
        will_retry: bool,
        error_message: Option<String>,
    },
}

/// Why a compaction ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionReason {
    Manual,
    Threshold,
    Overflow,
}

impl CompactionReason {
    pub fn as_str(self) -> &'static str {
        match self {
            CompactionReason::Manual => "manual",
            CompactionReason::Threshold => "threshold",
            CompactionReason::Overflow => "overflow",
        }
    }
}

fn msg(m: &Message) -> Value {
    serde_json::to_value(m).unwrap_or(Value::Null)
}

impl AgentEvent {
    pub fn to_json(&self) -> Value {
        match self {
            AgentEvent::AgentStart => json!({"type": "agent_start"}),
            AgentEvent::AgentEnd { messages } => {
                json!({"type": "agent_end", "messages": messages.iter().map(msg).collect::<Vec<_>>()})
            }
            AgentEvent::TurnStart => json!({"type": "turn_start"}),
            AgentEvent::TurnEnd {
                message,
                tool_results,
            } => json!({
                "type": "turn_end",
                "message": msg(message),
                "toolResults": tool_results,
            }),
            AgentEvent::MessageStart { message } => {
                json!({"type": "message_start", "message": msg(message)})
            }
            AgentEvent::MessageUpdate { message, event } => json!({
                "type": "message_update",
                "assistantMessageEvent": event.to_json(),
                "message": msg(message),
            }),
            AgentEvent::MessageEnd { message } => {
                json!({"type": "message_end", "message": msg(message)})
            }
            AgentEvent::ToolExecutionStart { id, name, args } => json!({
                "type": "tool_execution_start", "toolCallId": id, "toolName": name, "args": args
            }),
            AgentEvent::ToolExecutionUpdate {
                id,
                name,
                args,
                partial_result,
            } => json!({
                "type": "tool_execution_update", "toolCallId": id, "toolName": name,
                "args": args, "partialResult": partial_result
            }),
            AgentEvent::ToolExecutionEnd {
                id,
                name,
                result,
                is_error,
            } => json!({
                "type": "tool_execution_end", "toolCallId": id, "toolName": name,
                "result": result, "isError": is_error
            }),
            AgentEvent::AutoRetryStart {
                attempt,
                max_attempts,
                delay_ms,
                error_message,
            } => json!({
                "type": "auto_retry_start", "attempt": attempt, "maxAttempts": max_attempts,
                "delayMs": delay_ms, "errorMessage": error_message
            }),
            AgentEvent::AutoRetryEnd {
                success,
                attempt,
                final_error,
            } => {
                let mut m = Map::new();
                m.insert("type".into(), "auto_retry_end".into());
                m.insert("success".into(), (*success).into());
                m.insert("attempt".into(), (*attempt).into());
                if let Some(e) = final_error {
                    m.insert("finalError".into(), e.clone().into());
                }
                Value::Object(m)
            }
            AgentEvent::CompactionStart { reason } => {
                json!({"type": "compaction_start", "reason": reason.as_str()})
            }
            AgentEvent::CompactionEnd {
                reason,
                result,
                aborted,
                will_retry,
                error_message,
            } => {
                // Absent fields are left out, as `JSON.stringify` drops `undefined`.
                let mut m = Map::new();
                m.insert("type".into(), "compaction_end".into());
                m.insert("reason".into(), reason.as_str().into());
                if let Some(r) = result {
                    m.insert("result".into(), r.clone());
                }
                m.insert("aborted".into(), (*aborted).into());
                m.insert("willRetry".into(), (*will_retry).into());
                if let Some(e) = error_message {
                    m.insert("errorMessage".into(), e.clone().into());
                }
                Value::Object(m)
            }
        }
    }
}
