//! The agent's event taxonomy (`AgentEvent` in pi-agent-core, plus the session-level retry
//! events), with the exact JSON shapes `--mode json` and RPC print.

use serde_json::{Map, Value};

use super::message::{AgentMessage, CustomMessage, SystemMessage};
use crate::ai::stream::MessageBuilder;
use crate::ai::{AssistantEvent, AssistantMessage, Message, ToolResultMessage};
use crate::util::json::{object, to_js_string, write_js};

// Events are built once and moved through a channel; boxing the big variants would only add
// allocations.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum AgentEvent {
    AgentStart,
    /// One run of the agent loop ended. `will_retry`: an automatic retry follows (set by the
    /// session, which decides).
    AgentEnd {
        messages: Vec<AgentMessage>,
        will_retry: bool,
    },
    /// Nothing more will happen on its own: no retry, compaction recovery or queued message
    /// is left (today's pi). `aborted` when the run was aborted.
    AgentSettled {
        aborted: bool,
    },
    TurnStart,
    TurnEnd {
        message: Message,
        tool_results: Vec<ToolResultMessage>,
    },
    MessageStart {
        message: Message,
    },
    /// A streamed change to the assistant message being written: the delta, and the usage
    /// reported so far. Listeners that need the whole message so far rebuild it (see
    /// `ai::stream::MessageBuilder`).
    MessageUpdate {
        event: AssistantEvent,
        usage: crate::ai::Usage,
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
    /// The prompt and tool changes a run declares before its prompt (pi 1.x): `message_start`
    /// and `message_end` with the `system` role message, recorded in the session.
    SystemMessageStart {
        message: SystemMessage,
    },
    SystemMessageEnd {
        message: SystemMessage,
    },
    /// `parent_id` (`parentToolCallId`) is set for a call another tool made (a `codemode`
    /// script's `tools.*`), whose id is `<parent>/<n>`.
    ToolExecutionStart {
        id: String,
        name: String,
        args: Value,
        parent_id: Option<String>,
    },
    ToolExecutionUpdate {
        id: String,
        name: String,
        args: Value,
        partial_result: Value,
        parent_id: Option<String>,
    },
    ToolExecutionEnd {
        id: String,
        name: String,
        result: Value,
        is_error: bool,
        /// How long the tool ran (monotonic clock); `None` when it never ran.
        duration_ms: Option<f64>,
        parent_id: Option<String>,
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
    /// An entry an extension appended with `appendEntry` (pi 1.x's `entry_appended`): the
    /// entry as written to the session file.
    EntryAppended {
        entry: Value,
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

/// `parentToolCallId` last, as pi puts it on a nested call's events.
fn with_parent(mut v: Value, parent_id: &Option<String>) -> Value {
    if let Some(parent) = parent_id {
        v["parentToolCallId"] = Value::String(parent.clone());
    }
    v
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
            AgentEvent::AgentSettled { .. } => "agent_settled",
            AgentEvent::TurnStart => "turn_start",
            AgentEvent::TurnEnd { .. } => "turn_end",
            AgentEvent::MessageStart { .. } => "message_start",
            AgentEvent::MessageUpdate { .. } => "message_update",
            AgentEvent::MessageEnd { .. } => "message_end",
            AgentEvent::CustomMessageStart { .. } => "message_start",
            AgentEvent::CustomMessageEnd { .. } => "message_end",
            AgentEvent::SystemMessageStart { .. } => "message_start",
            AgentEvent::SystemMessageEnd { .. } => "message_end",
            AgentEvent::ToolExecutionStart { .. } => "tool_execution_start",
            AgentEvent::ToolExecutionUpdate { .. } => "tool_execution_update",
            AgentEvent::ToolExecutionEnd { .. } => "tool_execution_end",
            AgentEvent::AutoRetryStart { .. } => "auto_retry_start",
            AgentEvent::AutoRetryEnd { .. } => "auto_retry_end",
            AgentEvent::CompactionStart { .. } => "compaction_start",
            AgentEvent::CompactionEnd { .. } => "compaction_end",
            AgentEvent::SessionWriteError { .. } => "session_write_error",
            AgentEvent::EntryAppended { .. } => "entry_appended",
        }
    }

    /// The event as one line of today's pi JSON/RPC output (no newline). A `message_update` is
    /// its delta alone; [`SnapshotWriter`] writes the shapes that carry the message so far.
    pub fn to_json_line(&self) -> String {
        if let AgentEvent::MessageUpdate { event, usage } = self {
            if let Some(line) = delta_update_line(event, usage) {
                return line;
            }
        }
        to_js_string(&self.to_json())
    }

    pub fn to_json(&self) -> Value {
        let kind = self.type_name();
        let s = |t: &String| Value::String(t.clone());
        match self {
            AgentEvent::AgentStart | AgentEvent::TurnStart => object(&mut [("type", kind.into())]),
            AgentEvent::AgentEnd {
                messages,
                will_retry,
            } => object(&mut [
                ("type", kind.into()),
                (
                    "messages",
                    serde_json::to_value(messages).unwrap_or(Value::Null),
                ),
                ("willRetry", (*will_retry).into()),
            ]),
            AgentEvent::AgentSettled { aborted } => {
                object(&mut [("type", kind.into()), ("aborted", (*aborted).into())])
            }
            AgentEvent::TurnEnd {
                message,
                tool_results,
            } => object(&mut [
                ("type", kind.into()),
                ("message", msg(message)),
                (
                    "toolResults",
                    tool_results
                        .iter()
                        .map(|r| msg(&Message::ToolResult(r.clone())))
                        .collect(),
                ),
            ]),
            AgentEvent::MessageStart { message } | AgentEvent::MessageEnd { message } => {
                object(&mut [("type", kind.into()), ("message", msg(message))])
            }
            // Today's pi writes the delta alone, with the usage so far; `toolcall_start` names
            // the call.
            AgentEvent::MessageUpdate { event, usage } => {
                let mut inner = event.to_json();
                if let AssistantEvent::ToolCallStart { id, name, .. } = event {
                    inner["id"] = id.as_str().into();
                    inner["toolName"] = name.as_str().into();
                }
                object(&mut [
                    ("type", kind.into()),
                    ("usage", serde_json::to_value(usage).unwrap_or(Value::Null)),
                    ("assistantMessageEvent", inner),
                ])
            }
            AgentEvent::CustomMessageStart { message }
            | AgentEvent::CustomMessageEnd { message } => {
                let message = serde_json::to_value(AgentMessage::Custom(message.clone()))
                    .unwrap_or(Value::Null);
                object(&mut [("type", kind.into()), ("message", message)])
            }
            AgentEvent::SystemMessageStart { message }
            | AgentEvent::SystemMessageEnd { message } => {
                let message = serde_json::to_value(AgentMessage::System(message.clone()))
                    .unwrap_or(Value::Null);
                object(&mut [("type", kind.into()), ("message", message)])
            }
            AgentEvent::ToolExecutionStart {
                id,
                name,
                args,
                parent_id,
            } => with_parent(
                object(&mut [
                    ("type", kind.into()),
                    ("toolCallId", s(id)),
                    ("toolName", s(name)),
                    ("args", args.clone()),
                ]),
                parent_id,
            ),
            AgentEvent::ToolExecutionUpdate {
                id,
                name,
                args,
                partial_result,
                parent_id,
            } => with_parent(
                object(&mut [
                    ("type", kind.into()),
                    ("toolCallId", s(id)),
                    ("toolName", s(name)),
                    ("args", args.clone()),
                    ("partialResult", partial_result.clone()),
                ]),
                parent_id,
            ),
            AgentEvent::ToolExecutionEnd {
                id,
                name,
                result,
                is_error,
                duration_ms,
                parent_id,
            } => {
                let mut v = object(&mut [
                    ("type", kind.into()),
                    ("toolCallId", s(id)),
                    ("toolName", s(name)),
                    ("result", result.clone()),
                    ("isError", (*is_error).into()),
                ]);
                if let Some(ms) = duration_ms {
                    v["durationMs"] = (ms.round() as u64).into();
                }
                with_parent(v, parent_id)
            }
            AgentEvent::AutoRetryStart {
                attempt,
                max_attempts,
                delay_ms,
                error_message,
            } => object(&mut [
                ("type", kind.into()),
                ("attempt", (*attempt).into()),
                ("maxAttempts", (*max_attempts).into()),
                ("delayMs", (*delay_ms).into()),
                ("errorMessage", s(error_message)),
            ]),
            AgentEvent::AutoRetryEnd {
                success,
                attempt,
                final_error,
            } => {
                let mut m = Map::new();
                m.insert("type".into(), kind.into());
                m.insert("success".into(), (*success).into());
                m.insert("attempt".into(), (*attempt).into());
                if let Some(e) = final_error {
                    m.insert("finalError".into(), e.clone().into());
                }
                Value::Object(m)
            }
            AgentEvent::CompactionStart { reason } => {
                object(&mut [("type", kind.into()), ("reason", reason.as_str().into())])
            }
            AgentEvent::SessionWriteError { error } => {
                object(&mut [("type", kind.into()), ("error", s(error))])
            }
            AgentEvent::EntryAppended { entry } => {
                object(&mut [("type", kind.into()), ("entry", entry.clone())])
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
                m.insert("type".into(), kind.into());
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

thread_local! {
    /// The usage last written by [`delta_update_line`] and its JSON: it seldom changes while
    /// a reply streams, and writing its dozen fields was most of a delta line's cost.
    static USAGE_JSON: std::cell::RefCell<(Option<crate::ai::Usage>, Vec<u8>)> =
        const { std::cell::RefCell::new((None, Vec::new())) };
}

/// The `message_update` of a block start or a delta, written straight out instead of through a
/// map: one such line goes out per streamed delta. The bytes are those of `to_json`'s map (the
/// tests compare them); other events return `None`.
fn delta_update_line(event: &AssistantEvent, usage: &crate::ai::Usage) -> Option<String> {
    use AssistantEvent as E;
    let (index, fields): (usize, [(&str, &str); 2]) = match event {
        E::TextDelta { index, delta }
        | E::ThinkingDelta { index, delta }
        | E::ToolCallDelta { index, delta } => (*index, [("delta", delta), ("", "")]),
        E::TextStart { index } | E::ThinkingStart { index } => (*index, [("", ""); 2]),
        E::ToolCallStart { index, id, name } => (*index, [("id", id), ("toolName", name)]),
        _ => return None,
    };
    let mut line = Vec::with_capacity(320 + fields[0].1.len() + fields[1].1.len());
    line.extend_from_slice(b"{\"type\":\"message_update\",\"usage\":");
    USAGE_JSON.with_borrow_mut(|(last, json)| {
        if last.as_ref() != Some(usage) {
            json.clear();
            write_js(json, usage).ok()?;
            *last = Some(*usage);
        }
        line.extend_from_slice(json);
        Some(())
    })?;
    line.extend_from_slice(b",\"assistantMessageEvent\":{\"type\":\"");
    line.extend_from_slice(event.type_name().as_bytes());
    line.extend_from_slice(b"\",\"contentIndex\":");
    line.extend_from_slice(index.to_string().as_bytes());
    for (key, value) in fields.iter().filter(|(key, _)| !key.is_empty()) {
        line.extend_from_slice(b",\"");
        line.extend_from_slice(key.as_bytes());
        line.extend_from_slice(b"\":");
        write_js(&mut line, *value).ok()?;
    }
    line.extend_from_slice(b"}}");
    String::from_utf8(line).ok()
}

/// Writes events in pi's SDK shape, which extensions get (and JSON/RPC clients got from pi
/// 0.73.1): every `message_update` carries the assistant message so far, twice (as `message`
/// and as `assistantMessageEvent.partial`). The writer rebuilds that message from the deltas
/// it is shown and serializes it once per line. Every event must pass through it, in order,
/// for the snapshots to be right. JSON and RPC output use the delta-only `AgentEvent::to_json`.
#[derive(Default)]
pub struct SnapshotWriter {
    partial: Option<MessageBuilder>,
}

impl SnapshotWriter {
    pub fn new() -> Self {
        Self::default()
    }

    /// Follows an event without writing it (keeps the message so far current).
    pub fn observe(&mut self, ev: &AgentEvent) {
        match ev {
            AgentEvent::MessageStart {
                message: Message::Assistant(a),
            } => self.partial = Some(MessageBuilder::new(a.clone())),
            AgentEvent::MessageEnd {
                message: Message::Assistant(_),
            } => self.partial = None,
            AgentEvent::MessageUpdate { event, usage } => {
                let builder = self
                    .partial
                    .get_or_insert_with(|| MessageBuilder::new(AssistantMessage::unknown()));
                builder.apply(event);
                builder.set_usage(*usage);
            }
            _ => {}
        }
    }

    /// The event as one JSON line (no newline).
    pub fn line(&mut self, ev: &AgentEvent) -> String {
        self.observe(ev);
        match (ev, &self.partial) {
            (AgentEvent::MessageUpdate { event, .. }, Some(b)) => update_line(event, b),
            _ => ev.to_json_line(),
        }
    }

    /// The event as a JSON value (for extensions, which get pi's SDK shapes).
    pub fn value(&mut self, ev: &AgentEvent) -> Value {
        self.observe(ev);
        match (ev, &self.partial) {
            (AgentEvent::MessageUpdate { event, .. }, Some(b)) => {
                let snapshot = msg(&Message::Assistant(b.snapshot()));
                let mut inner = event.to_json();
                inner["partial"] = snapshot.clone();
                object(&mut [
                    ("type", "message_update".into()),
                    ("assistantMessageEvent", inner),
                    ("message", snapshot),
                ])
            }
            _ => ev.to_json(),
        }
    }
}

/// `message_update` with the message so far, serialized once and written twice.
fn update_line(event: &AssistantEvent, builder: &MessageBuilder) -> String {
    let message_text = to_js_string(&Message::Assistant(builder.snapshot()));
    let head = to_js_string(&event.to_json());
    let head = head.strip_suffix('}').unwrap_or(&head);
    let mut line = String::with_capacity(head.len() + 2 * message_text.len() + 80);
    line.push_str("{\"type\":\"message_update\",\"assistantMessageEvent\":");
    line.push_str(head);
    line.push_str(",\"partial\":");
    line.push_str(&message_text);
    line.push_str("},\"message\":");
    line.push_str(&message_text);
    line.push('}');
    line
}

#[cfg(test)]
#[path = "events_json_tests.rs"]
mod json_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::{AssistantMessage, Content, Model, TextContent};
    use crate::util::json::to_js_string;
    use serde_json::json;

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
    fn the_writer_rebuilds_the_message_so_far_for_each_update() {
        let start = partial("");
        let mut empty = start.clone();
        empty.content.clear();
        let mut w = SnapshotWriter::new();
        let usage = start.usage;
        let update = |event| AgentEvent::MessageUpdate { event, usage };
        let events = [
            AgentEvent::MessageStart {
                message: Message::Assistant(empty),
            },
            update(AssistantEvent::TextStart { index: 0 }),
            update(AssistantEvent::TextDelta {
                index: 0,
                delta: "héllo \"quoted\" ".into(),
            }),
            update(AssistantEvent::TextDelta {
                index: 0,
                delta: "\u{2028} 日本".into(),
            }),
        ];
        let lines: Vec<String> = events.iter().map(|e| w.line(e)).collect();
        let mut whole = partial("héllo \"quoted\" \u{2028} 日本");
        whole.timestamp = start.timestamp;
        let mut expected = json!({
            "type": "message_update",
            "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": "\u{2028} 日本"},
        });
        expected["assistantMessageEvent"]["partial"] = msg(&Message::Assistant(whole.clone()));
        expected["message"] = msg(&Message::Assistant(whole));
        assert_eq!(lines[3], to_js_string(&expected));
        // The delta-only form carries no message.
        assert!(!events[3].to_json_line().contains("partial"));
        // A new message starts from scratch.
        let mut next = partial("");
        next.content.clear();
        w.line(&AgentEvent::MessageStart {
            message: Message::Assistant(next),
        });
        let line = w.line(&update(AssistantEvent::TextStart { index: 0 }));
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(
            v["message"]["content"],
            json!([{"type": "text", "text": ""}])
        );
    }

    #[test]
    fn other_events_are_written_as_their_json() {
        let events = [
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
            AgentEvent::EntryAppended {
                entry: json!({"type": "custom", "id": "a1b2c3d4", "customType": "k"}),
            },
        ];
        let mut w = SnapshotWriter::new();
        for ev in events {
            assert_eq!(w.line(&ev), to_js_string(&ev.to_json()));
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
