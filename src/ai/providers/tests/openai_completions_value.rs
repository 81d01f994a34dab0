//! The `messages` array as `build_request` built it before issue 35, as a `Value` tree over
//! a copy of the conversation: kept for the test that the direct writer sends the same bytes.

use serde_json::{json, Map, Value};

use super::*;

fn image_url(img: &ImageContent) -> Value {
    json!({"type": "image_url", "image_url": {"url": format!("data:{};base64,{}", img.mime_type, img.data)}})
}

/// The `messages` array: system prompt, then the transformed transcript.
pub fn convert_messages_value(model: &Model, context: &Context, compat: &Compat) -> Vec<Value> {
    let norm = |id: &str| normalize_id(model, id);
    let msgs = transform_messages(&context.messages, model, Some(&norm));
    let mut out = Vec::new();
    if let Some(sp) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        let role = if model.reasoning && compat.supports_developer_role {
            "developer"
        } else {
            "system"
        };
        out.push(json!({"role": role, "content": sp}));
    }
    let bridge = || json!({"role": "assistant", "content": BRIDGE_TEXT});
    let mut last_was_tool_result = false;
    let mut i = 0;
    while i < msgs.len() {
        match &msgs[i] {
            Message::User(u) => {
                if compat.requires_assistant_after_tool_result && last_was_tool_result {
                    out.push(bridge());
                }
                last_was_tool_result = false;
                match &u.content {
                    UserContent::Text(s) => out.push(json!({"role": "user", "content": s})),
                    UserContent::Blocks(blocks) => {
                        let parts: Vec<Value> = blocks
                            .iter()
                            .filter_map(|b| match b {
                                Content::Text(t) => Some(json!({"type": "text", "text": t.text})),
                                Content::Image(img) => Some(image_url(img)),
                                _ => None,
                            })
                            .collect();
                        if !parts.is_empty() {
                            out.push(json!({"role": "user", "content": parts}));
                        }
                    }
                }
            }
            Message::Assistant(a) => {
                last_was_tool_result = false;
                if let Some(m) = convert_assistant(model, a, compat) {
                    out.push(m);
                }
            }
            Message::ToolResult(_) => {
                let mut images = Vec::new();
                while let Some(Message::ToolResult(r)) = msgs.get(i) {
                    let text: Vec<&str> = r
                        .content
                        .iter()
                        .filter_map(|c| match c {
                            Content::Text(t) => Some(t.text.as_str()),
                            _ => None,
                        })
                        .collect();
                    let text = text.join("\n");
                    // pi 1.x: the image placeholder only when there is an image.
                    let content = if !text.is_empty() {
                        text
                    } else if r.content.iter().any(|c| matches!(c, Content::Image(_))) {
                        "(see attached image)".into()
                    } else {
                        "(no tool output)".into()
                    };
                    let mut m = Map::new();
                    m.insert("role".into(), json!("tool"));
                    m.insert("content".into(), json!(content));
                    m.insert("tool_call_id".into(), json!(r.tool_call_id));
                    if compat.requires_tool_result_name && !r.tool_name.is_empty() {
                        m.insert("name".into(), json!(r.tool_name));
                    }
                    out.push(Value::Object(m));
                    if model.supports_images() {
                        for c in &r.content {
                            if let Content::Image(img) = c {
                                images.push(image_url(img));
                            }
                        }
                    }
                    i += 1;
                }
                if images.is_empty() {
                    last_was_tool_result = true;
                } else {
                    if compat.requires_assistant_after_tool_result {
                        out.push(bridge());
                    }
                    let mut parts = vec![
                        json!({"type": "text", "text": "Attached image(s) from tool result:"}),
                    ];
                    parts.extend(images);
                    out.push(json!({"role": "user", "content": parts}));
                    last_was_tool_result = false;
                }
                continue;
            }
        }
        i += 1;
    }
    out
}

fn convert_assistant(model: &Model, a: &AssistantMessage, compat: &Compat) -> Option<Value> {
    let mut m = Map::new();
    m.insert("role".into(), json!("assistant"));
    let empty = if compat.requires_assistant_after_tool_result {
        json!("")
    } else {
        Value::Null
    };
    m.insert("content".into(), empty);
    let texts: Vec<&str> = a
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Text(t) if !t.text.trim().is_empty() => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    let joined = texts.concat();
    let thinking: Vec<&ThinkingContent> = a
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Thinking(t) if !t.thinking.trim().is_empty() => Some(t),
            _ => None,
        })
        .collect();
    if !thinking.is_empty() && compat.requires_thinking_as_text {
        let all: Vec<&str> = thinking.iter().map(|t| t.thinking.as_str()).collect();
        let mut parts = vec![json!({"type": "text", "text": all.join("\n\n")})];
        parts.extend(texts.iter().map(|t| json!({"type": "text", "text": t})));
        m.insert("content".into(), Value::Array(parts));
    } else {
        if !joined.is_empty() {
            m.insert("content".into(), json!(joined));
        }
        // Only a field a Chat Completions server reads back: a signature from another provider
        // (an id, an encrypted blob) would become a bogus top-level key (pi 1.x).
        if let Some(sig) = thinking
            .first()
            .and_then(|t| t.thinking_signature.as_deref())
            .filter(|s| REASONING_FIELDS.contains(s))
        {
            let all: Vec<&str> = thinking.iter().map(|t| t.thinking.as_str()).collect();
            m.insert(sig.to_string(), json!(all.join("\n")));
        }
    }
    let calls: Vec<&ToolCall> = a.tool_calls().collect();
    if !calls.is_empty() {
        let tc: Vec<Value> = calls
            .iter()
            .map(|c| {
                json!({"id": c.id, "type": "function",
                       "function": {"name": c.name, "arguments": c.arguments.to_string()}})
            })
            .collect();
        m.insert("tool_calls".into(), Value::Array(tc));
        let details: Vec<Value> = calls
            .iter()
            .filter_map(|c| c.thought_signature.as_deref())
            .filter_map(|s| serde_json::from_str::<Value>(s).ok())
            .filter(|v| !v.is_null())
            .collect();
        if !details.is_empty() {
            m.insert("reasoning_details".into(), Value::Array(details));
        }
    }
    if compat.requires_reasoning_content_on_assistant_messages
        && model.reasoning
        && !m.contains_key("reasoning_content")
    {
        m.insert("reasoning_content".into(), json!(""));
    }
    let has_content = match m.get("content") {
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        _ => false,
    };
    if !has_content && !m.contains_key("tool_calls") {
        return None;
    }
    Some(Value::Object(m))
}
