//! The agent's event taxonomy (`AgentEvent` in pi-agent-core, plus the session-level retry
//! events), with the exact JSON shapes `--mode json` and RPC print.

use serde_json::{json, Map, Value};

use crate::ai::{AssistantEvent, Message, ToolResultMessage};
use crate::session::entry::{AgentMessage, CustomMessage};
use crate::session::json::to_js_string;

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
    /// An extension's `sendMessage` that joined the conversation: pi emits `message_start`
    /// and `message_end` with its `custom` role message.
    CustomMessageStart {
        message: CustomMessage,
    },
    CustomMessageEnd {
        message: CustomMessage,
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
        /// How long the tool ran (monotonic clock); `None` when it never ran.
        duration_ms: Option<f64>,
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
    /// A session (or settings) write failed, or the session file had to be written again:
    /// the conversation may not be saved. Not in pi, which only warns in print mode; every
    /// mode reports this one as it happens.
    SessionWriteError {
        error: String,
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
    /// The event's `type` in pi's JSON.
    pub fn type_name(&self) -> &'static str {
        match self {
            AgentEvent::AgentStart => "agent_start",
            AgentEvent::AgentEnd { .. } => "agent_end",
            AgentEvent::TurnStart => "turn_start",
            AgentEvent::TurnEnd { .. } => "turn_end",
            AgentEvent::MessageStart { .. } => "message_start",
            AgentEvent::MessageUpdate { .. } => "message_update",
            AgentEvent::MessageEnd { .. } => "message_end",
            AgentEvent::CustomMessageStart { .. } => "message_start",
            AgentEvent::CustomMessageEnd { .. } => "message_end",
            AgentEvent::ToolExecutionStart { .. } => "tool_execution_start",
            AgentEvent::ToolExecutionUpdate { .. } => "tool_execution_update",
            AgentEvent::ToolExecutionEnd { .. } => "tool_execution_end",
            AgentEvent::AutoRetryStart { .. } => "auto_retry_start",
            AgentEvent::AutoRetryEnd { .. } => "auto_retry_end",
            AgentEvent::CompactionStart { .. } => "compaction_start",
            AgentEvent::CompactionEnd { .. } => "compaction_end",
            AgentEvent::SessionWriteError { .. } => "session_write_error",
        }
    }

    /// The event as one line of pi's JSON (no newline), as `to_js_string(&self.to_json())`
    /// would write it. A `message_update` carries the partial message twice (as the message
    /// and inside the stream event); it is serialized once here and the text reused, which
    /// halves the cost of long streams in RPC and JSON modes.
    pub fn to_json_line(&self) -> String {
        let AgentEvent::MessageUpdate { message, event } = self else {
            return to_js_string(&self.to_json());
        };
        let message_text = to_js_string(message);
        let (head, key, inner) = event.parts();
        let inner_text = match message {
            Message::Assistant(a) if a == inner => None,
            _ => Some(to_js_string(&Message::Assistant(inner.clone()))),
        };
        let head = to_js_string(&head);
        let head = head.strip_suffix('}').unwrap_or(&head);
        let inner_text = inner_text.as_deref().unwrap_or(&message_text);
        let mut line =
            String::with_capacity(head.len() + inner_text.len() + message_text.len() + 80);
        line.push_str("{\"type\":\"message_update\",\"assistantMessageEvent\":");
        line.push_str(head);
        line.push_str(",\"");
        line.push_str(key);
        line.push_str("\":");
        line.push_str(inner_text);
        line.push_str("},\"message\":");
        line.push_str(&message_text);
        line.push('}');
        line
    }

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
            AgentEvent::CustomMessageStart { message }
            | AgentEvent::CustomMessageEnd { message } => {
                let message = serde_json::to_value(AgentMessage::Custom(message.clone()))
                    .unwrap_or(Value::Null);
                json!({"type": self.type_name(), "message": message})
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
                ..
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
            AgentEvent::SessionWriteError { error } => {
                json!({"type": "session_write_error", "error": error})
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::{AssistantMessage, Content, Model, TextContent};
    use crate::session::json::to_js_string;

    fn partial(text: &str) -> AssistantMessage {
        let model = Model {
            id: "m".into(),
            name: "m".into(),
            api: "a".into(),
            provider: "p".into(),
            base_url: String::new(),
            reasoning: false,
            input: vec!["text".into()],
            cost: Default::default(),
            context_window: 1,
            max_tokens: 1,
            thinking_level_map: None,
            headers: None,
            compat: None,
        };
        let mut m = AssistantMessage::empty(&model);
        m.content.push(Content::Text(TextContent {
            text: text.into(),
            text_signature: None,
        }));
        m.usage.cost.input = 0.000_000_3;
        m.usage.cost.total = 1e21;
        m
    }

    #[test]
    fn the_fast_line_is_byte_identical_to_the_generic_one() {
        let p = partial("héllo \"quoted\" \u{2028} 日本");
        let events = [
            AgentEvent::MessageUpdate {
                message: Message::Assistant(p.clone()),
                event: AssistantEvent::TextDelta {
                    index: 0,
                    delta: "lo".into(),
                    partial: p.clone(),
                },
            },
            // A stream event whose partial differs from the message is written as is.
            AgentEvent::MessageUpdate {
                message: Message::Assistant(p.clone()),
                event: AssistantEvent::Done {
                    reason: crate::ai::StopReason::Stop,
                    message: partial("other"),
                },
            },
            AgentEvent::MessageStart {
                message: Message::Assistant(p),
            },
            AgentEvent::AutoRetryEnd {
                success: false,
                attempt: 2,
                final_error: Some("x".into()),
            },
            AgentEvent::CompactionEnd {
                reason: CompactionReason::Overflow,
                result: None,
                aborted: false,
                will_retry: true,
                error_message: None,
            },
            AgentEvent::TurnStart,
        ];
        for ev in events {
            assert_eq!(ev.to_json_line(), to_js_string(&ev.to_json()));
            assert_eq!(ev.to_json()["type"], ev.type_name());
        }
    }

    #[test]
    fn a_custom_message_is_a_message_start_and_end_with_the_custom_role() {
        let message = CustomMessage {
            custom_type: "note".into(),
            content: crate::ai::UserContent::Text("hi".into()),
            display: true,
            details: Some(serde_json::json!({"n": 1})),
            timestamp: 5,
            extra: Default::default(),
        };
        let start = AgentEvent::CustomMessageStart {
            message: message.clone(),
        };
        assert_eq!(
            start.to_json_line(),
            r#"{"type":"message_start","message":{"role":"custom","customType":"note","content":"hi","display":true,"details":{"n":1},"timestamp":5}}"#
        );
        let end = AgentEvent::CustomMessageEnd { message };
        assert_eq!(end.to_json()["type"], "message_end");
        assert_eq!(end.type_name(), "message_end");
    }
}
