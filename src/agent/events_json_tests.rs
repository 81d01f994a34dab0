//! `AgentEvent::to_json` and `AssistantEvent::to_json` against the `json!`-built shapes they
//! replaced (kept here as the reference): every variant gives the same value, key order included.

use serde_json::{json, Map, Value};

use super::*;
use crate::agent::message::{CustomMessage, SystemMessage};
use crate::ai::{
    assistant_json, AssistantEvent, AssistantMessage, Content, Extra, StopReason, ToolCall,
    ToolResultMessage, Usage, UserContent,
};

/// pi 1.6.0 puts `parentToolCallId` on a nested call's events.
fn parent(mut v: Value, parent_id: &Option<String>) -> Value {
    if let Some(p) = parent_id {
        v["parentToolCallId"] = json!(p);
    }
    v
}

fn msg(m: &Message) -> Value {
    serde_json::to_value(m).unwrap_or(Value::Null)
}

fn old_assistant(ev: &AssistantEvent) -> Value {
    use serde_json::json;
    match ev {
        AssistantEvent::Start { .. } => json!({"type": "start"}),
        AssistantEvent::TextStart { index } => {
            json!({"type": "text_start", "contentIndex": index})
        }
        AssistantEvent::TextDelta { index, delta } => {
            json!({"type": "text_delta", "contentIndex": index, "delta": delta})
        }
        AssistantEvent::TextEnd { index, content } => {
            json!({"type": "text_end", "contentIndex": index, "content": content})
        }
        AssistantEvent::ThinkingStart { index } => {
            json!({"type": "thinking_start", "contentIndex": index})
        }
        AssistantEvent::ThinkingDelta { index, delta } => {
            json!({"type": "thinking_delta", "contentIndex": index, "delta": delta})
        }
        AssistantEvent::ThinkingEnd { index, content } => {
            json!({"type": "thinking_end", "contentIndex": index, "content": content})
        }
        AssistantEvent::ToolCallStart { index, .. } => {
            json!({"type": "toolcall_start", "contentIndex": index})
        }
        AssistantEvent::ToolCallDelta { index, delta } => {
            json!({"type": "toolcall_delta", "contentIndex": index, "delta": delta})
        }
        AssistantEvent::ToolCallEnd { index, tool_call } => json!({
            "type": "toolcall_end",
            "contentIndex": index,
            "toolCall": Content::ToolCall(tool_call.clone()),
        }),
        AssistantEvent::Meta { .. } => json!({"type": "meta"}),
        AssistantEvent::Done { reason, message } => {
            json!({"type": "done", "reason": reason, "message": assistant_json(message)})
        }
        AssistantEvent::Error { reason, error, .. } => {
            json!({"type": "error", "reason": reason, "error": assistant_json(error)})
        }
    }
}

fn old_agent(ev: &AgentEvent) -> Value {
    match ev {
        AgentEvent::AgentStart => json!({"type": "agent_start"}),
        AgentEvent::AgentEnd {
            messages,
            will_retry,
        } => json!({
            "type": "agent_end",
            "messages": serde_json::to_value(messages).unwrap_or(Value::Null),
            "willRetry": will_retry,
        }),
        AgentEvent::AgentSettled { aborted } => {
            json!({"type": "agent_settled", "aborted": aborted})
        }
        AgentEvent::TurnStart => json!({"type": "turn_start"}),
        AgentEvent::TurnEnd {
            message,
            tool_results,
        } => json!({
            "type": "turn_end",
            "message": msg(message),
            "toolResults": tool_results
                .iter()
                .map(|r| msg(&Message::ToolResult(r.clone())))
                .collect::<Vec<_>>(),
        }),
        AgentEvent::MessageStart { message } => {
            json!({"type": "message_start", "message": msg(message)})
        }
        // Today's pi writes the delta alone, with the usage so far; `toolcall_start` names
        // the call.
        AgentEvent::MessageUpdate { event, usage } => {
            let mut inner = old_assistant(event);
            if let AssistantEvent::ToolCallStart { id, name, .. } = event {
                inner["id"] = id.as_str().into();
                inner["toolName"] = name.as_str().into();
            }
            json!({"type": "message_update", "usage": usage, "assistantMessageEvent": inner})
        }
        AgentEvent::MessageEnd { message } => {
            json!({"type": "message_end", "message": msg(message)})
        }
        AgentEvent::CustomMessageStart { message } | AgentEvent::CustomMessageEnd { message } => {
            let message =
                serde_json::to_value(AgentMessage::Custom(message.clone())).unwrap_or(Value::Null);
            json!({"type": ev.type_name(), "message": message})
        }
        AgentEvent::SystemMessageStart { message } | AgentEvent::SystemMessageEnd { message } => {
            let message =
                serde_json::to_value(AgentMessage::System(message.clone())).unwrap_or(Value::Null);
            json!({"type": ev.type_name(), "message": message})
        }
        AgentEvent::ToolExecutionStart {
            id,
            name,
            args,
            parent_id,
        } => parent(
            json!({
                "type": "tool_execution_start", "toolCallId": id, "toolName": name, "args": args
            }),
            parent_id,
        ),
        AgentEvent::ToolExecutionUpdate {
            id,
            name,
            args,
            partial_result,
            parent_id,
        } => parent(
            json!({
                "type": "tool_execution_update", "toolCallId": id, "toolName": name,
                "args": args, "partialResult": partial_result
            }),
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
            let mut v = json!({
                "type": "tool_execution_end", "toolCallId": id, "toolName": name,
                "result": result, "isError": is_error
            });
            if let Some(ms) = duration_ms {
                v["durationMs"] = (ms.round() as u64).into();
            }
            parent(v, parent_id)
        }
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
        AgentEvent::EntryAppended { entry } => {
            json!({"type": "entry_appended", "entry": entry})
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

fn assistant() -> AssistantMessage {
    let mut m = AssistantMessage::unknown();
    m.content = vec![Content::text("hi")];
    m.timestamp = 7;
    m.extra.insert("x".into(), json!(1));
    m
}

fn call() -> ToolCall {
    ToolCall {
        id: "c1".into(),
        name: "bash".into(),
        arguments: json!({"command": "ls", "n": 1.5}),
        thought_signature: Some("sig".into()),
    }
}

fn assistant_events() -> Vec<AssistantEvent> {
    vec![
        AssistantEvent::Start {
            partial: assistant(),
        },
        AssistantEvent::TextStart { index: 0 },
        AssistantEvent::TextDelta {
            index: 0,
            delta: "d\"é".into(),
        },
        AssistantEvent::TextEnd {
            index: 0,
            content: "c".into(),
        },
        AssistantEvent::ThinkingStart { index: 1 },
        AssistantEvent::ThinkingDelta {
            index: 1,
            delta: "t".into(),
        },
        AssistantEvent::ThinkingEnd {
            index: 1,
            content: "tc".into(),
        },
        AssistantEvent::ToolCallStart {
            index: 2,
            id: "c1".into(),
            name: "bash".into(),
        },
        AssistantEvent::ToolCallDelta {
            index: 2,
            delta: "{\"a".into(),
        },
        AssistantEvent::ToolCallEnd {
            index: 2,
            tool_call: call(),
        },
        AssistantEvent::Meta {
            usage: Usage::default(),
            response_id: Some("r".into()),
            response_model: None,
        },
        AssistantEvent::Done {
            reason: StopReason::ToolUse,
            message: assistant(),
        },
        AssistantEvent::Error {
            reason: StopReason::Aborted,
            error: assistant(),
            cause: None,
        },
    ]
}

fn agent_events() -> Vec<AgentEvent> {
    let result = ToolResultMessage {
        tool_call_id: "c1".into(),
        tool_name: "bash".into(),
        content: vec![Content::text("out")],
        details: Some(json!({"d": [1, 2]})),
        is_error: false,
        duration_ms: None,
        timestamp: 9,
        extra: Extra::new(),
    };
    let custom = CustomMessage {
        custom_type: "k".into(),
        content: UserContent::Text("c".into()),
        display: true,
        details: None,
        timestamp: 3,
        extra: Extra::new(),
    };
    let system: SystemMessage =
        serde_json::from_value(json!({"content": "", "timestamp": 4, "toolsAdded": []})).unwrap();
    let usage = Usage {
        input: 5,
        cache_write_1h: Some(2),
        ..Usage::default()
    };
    let mut events = vec![
        AgentEvent::AgentStart,
        AgentEvent::AgentEnd {
            messages: vec![
                AgentMessage::assistant(assistant()),
                AgentMessage::Custom(custom.clone()),
            ],
            will_retry: true,
        },
        AgentEvent::AgentSettled { aborted: false },
        AgentEvent::TurnStart,
        AgentEvent::TurnEnd {
            message: Message::Assistant(assistant()),
            tool_results: vec![result.clone(), result],
        },
        AgentEvent::MessageStart {
            message: Message::user_text("u"),
        },
        AgentEvent::MessageEnd {
            message: Message::Assistant(assistant()),
        },
        AgentEvent::CustomMessageStart {
            message: custom.clone(),
        },
        AgentEvent::CustomMessageEnd { message: custom },
        AgentEvent::SystemMessageStart {
            message: system.clone(),
        },
        AgentEvent::SystemMessageEnd { message: system },
        AgentEvent::ToolExecutionStart {
            id: "c1".into(),
            name: "bash".into(),
            args: json!({"command": "ls"}),
            parent_id: None,
        },
        AgentEvent::ToolExecutionUpdate {
            id: "c1".into(),
            name: "bash".into(),
            args: json!({"command": "ls"}),
            partial_result: json!({"content": [], "n": -1}),
            parent_id: None,
        },
        // A codemode script's own call names the script's call.
        AgentEvent::ToolExecutionStart {
            id: "cm/1".into(),
            name: "read".into(),
            args: json!({"path": "a"}),
            parent_id: Some("cm".into()),
        },
        AgentEvent::ToolExecutionUpdate {
            id: "cm/1".into(),
            name: "read".into(),
            args: json!({"path": "a"}),
            partial_result: json!({"content": []}),
            parent_id: Some("cm".into()),
        },
        AgentEvent::AutoRetryStart {
            attempt: 1,
            max_attempts: 3,
            delay_ms: 2000,
            error_message: "overloaded".into(),
        },
        AgentEvent::AutoRetryEnd {
            success: false,
            attempt: 3,
            final_error: Some("e".into()),
        },
        AgentEvent::AutoRetryEnd {
            success: true,
            attempt: 1,
            final_error: None,
        },
        AgentEvent::CompactionStart {
            reason: CompactionReason::Overflow,
        },
        AgentEvent::EntryAppended {
            entry: json!({"type": "custom", "id": "a"}),
        },
        AgentEvent::SessionWriteError {
            error: "disk full".into(),
        },
        AgentEvent::CompactionEnd {
            reason: CompactionReason::Manual,
            result: Some(json!({"summary": "s"})),
            aborted: false,
            will_retry: false,
            error_message: Some("e".into()),
        },
        AgentEvent::CompactionEnd {
            reason: CompactionReason::Threshold,
            result: None,
            aborted: true,
            will_retry: true,
            error_message: None,
        },
    ];
    for (is_error, duration_ms, parent_id) in [
        (true, Some(12.6), None),
        (false, None, None),
        (false, Some(1.0), Some("cm".to_string())),
    ] {
        events.push(AgentEvent::ToolExecutionEnd {
            id: "c1".into(),
            name: "bash".into(),
            result: json!({"content": [{"type": "text", "text": "x"}]}),
            is_error,
            duration_ms,
            parent_id,
        });
    }
    for event in assistant_events() {
        events.push(AgentEvent::MessageUpdate { event, usage });
    }
    events
}

#[test]
fn every_event_serializes_as_the_json_macro_shapes_did() {
    for ev in assistant_events() {
        let (new, old) = (ev.to_json(), old_assistant(&ev));
        assert_eq!(to_js_string(&new), to_js_string(&old), "{ev:?}");
    }
    let events = agent_events();
    assert!(events.len() > 30);
    for ev in &events {
        let (new, old) = (ev.to_json(), old_agent(ev));
        assert_eq!(to_js_string(&new), to_js_string(&old), "{ev:?}");
        assert_eq!(ev.to_json_line(), to_js_string(&old));
    }
}

#[test]
fn streamed_updates_written_directly_match_the_map_built_line() {
    let mut usage = Usage {
        input: 12,
        output: 3_000_000_000,
        reasoning: Some(7),
        total_tokens: 99,
        cache_write_1h: Some(1),
        ..Usage::default()
    };
    usage.cost.input = 0.000_000_3;
    usage.cost.output = 1e21;
    usage.cost.total = 1.5;
    usage.cost.cache_read = f64::NAN;
    let texts = [
        "",
        "x",
        "tab\t\"q\" \\ \u{1} \u{7f} \u{2028} 日本 🦀",
        "{\"a\":",
    ];
    for (n, text) in texts.iter().enumerate() {
        let index = n * 1000;
        let events = [
            AssistantEvent::TextStart { index },
            AssistantEvent::ThinkingStart { index },
            AssistantEvent::TextDelta {
                index,
                delta: text.to_string(),
            },
            AssistantEvent::ThinkingDelta {
                index,
                delta: text.to_string(),
            },
            AssistantEvent::ToolCallDelta {
                index,
                delta: text.to_string(),
            },
            AssistantEvent::ToolCallStart {
                index,
                id: text.to_string(),
                name: format!("n{text}"),
            },
        ];
        // The usage's JSON is kept between lines; a changed usage must show.
        for (event, usage) in events
            .into_iter()
            .zip([usage, Usage::default()].iter().cycle())
        {
            let ev = AgentEvent::MessageUpdate {
                event,
                usage: *usage,
            };
            assert_eq!(ev.to_json_line(), to_js_string(&ev.to_json()), "{ev:?}");
        }
    }
}
