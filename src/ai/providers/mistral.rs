//! Mistral's chat API (`mistral-conversations`), as pi drives it through the Mistral SDK's
//! `chat.stream`: a POST to `/v1/chat/completions` with `stream: true`, answered by data-only
//! SSE `CompletionChunk`s ending in `data: [DONE]`. `build_request` produces the body the SDK
//! puts on the wire (snake_case, SDK field order); `parse_stream` turns chunks into events:
//! one current text/thinking block at a time, tool calls keyed by id and stream index.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::Read;

use crossbeam_channel::Receiver;
use serde_json::{json, Map, Value};

use super::hot::MistralChunk;
use super::openai_compat as oc;
use crate::ai::error::ProviderError;
use crate::ai::provider_retry::{self, Rules};
use crate::ai::sse::read_events;
use crate::ai::stream::{spawn_stream, Abort, StreamWriter};
use crate::ai::transform::transform_messages;
use crate::ai::types::*;

const TOOL_CALL_ID_LENGTH: usize = 9;
const MAX_ERROR_BODY_CHARS: usize = 4000;

pub fn stream(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    abort: Abort,
) -> Receiver<AssistantEvent> {
    let (url, headers, body) = build_request(model, context, options);
    let body = options.payload(body);
    let retry = options.provider_retry;
    spawn_stream(model, abort, move |w| {
        let resp = provider_retry::post_json(w, Rules::Never, &retry, &url, &headers, &body)
            .map_err(|e| {
                let message = format_http_error(e.status, &e.message);
                w.http_error(crate::ai::http::HttpError { message, ..e })
            })?;
        parse_stream(resp, w)
    })
}

/// pi's `Mistral API error (<status>): <body>` wording, the body capped at 4000 characters.
pub fn format_http_error(status: Option<u16>, message: &str) -> String {
    let Some(code) = status else {
        return message.to_string();
    };
    let prefix = format!("{code} ");
    let body = message.strip_prefix(&prefix).unwrap_or(message).trim();
    let n = body.chars().count();
    let body = if n > MAX_ERROR_BODY_CHARS {
        format!(
            "{}... [truncated {} chars]",
            oc::truncate_chars(body, MAX_ERROR_BODY_CHARS),
            n - MAX_ERROR_BODY_CHARS
        )
    } else {
        body.to_string()
    };
    format!("Mistral API error ({code}): {body}")
}

/// One candidate Mistral id for `id`: its alphanumerics when they are exactly nine, else the
/// first nine alphanumerics of pi's short hash (salted with the attempt on collisions).
pub fn derive_tool_call_id(id: &str, attempt: u32) -> String {
    let normalized: String = id.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    if attempt == 0 && normalized.chars().count() == TOOL_CALL_ID_LENGTH {
        return normalized;
    }
    let base = if normalized.is_empty() {
        id
    } else {
        &normalized
    };
    let seed = if attempt == 0 {
        base.to_string()
    } else {
        format!("{base}:{attempt}")
    };
    oc::short_hash(&seed)
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .take(TOOL_CALL_ID_LENGTH)
        .collect()
}

/// Per-request id normalizer: stable for repeated ids, never maps two ids to one.
#[derive(Default)]
pub struct IdNormalizer {
    forward: HashMap<String, String>,
    owner: HashMap<String, String>,
}

impl IdNormalizer {
    pub fn normalize(&mut self, id: &str) -> String {
        if let Some(n) = self.forward.get(id) {
            return n.clone();
        }
        let mut attempt = 0;
        loop {
            let candidate = derive_tool_call_id(id, attempt);
            match self.owner.get(&candidate) {
                Some(o) if o != id => attempt += 1,
                _ => {
                    self.forward.insert(id.to_string(), candidate.clone());
                    self.owner.insert(candidate.clone(), id.to_string());
                    return candidate;
                }
            }
        }
    }
}

/// Model ids that take `reasoning_effort` instead of `prompt_mode: "reasoning"`.
fn uses_reasoning_effort(model: &Model) -> bool {
    matches!(
        model.id.as_str(),
        "mistral-small-2603" | "mistral-small-latest" | "mistral-medium-3.5"
    )
}

/// URL, headers and JSON body of one streaming chat request.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> (String, Vec<(String, String)>, Value) {
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    if let Some(t) = options.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(n) = oc::max_tokens(model, options) {
        body.insert("max_tokens".into(), json!(n));
    }
    body.insert("stream".into(), json!(true));
    body.insert(
        "messages".into(),
        Value::Array(convert_messages(model, context)),
    );
    if !context.tools.is_empty() {
        let tools: Vec<Value> = context.tools.iter().map(convert_tool).collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    let effort = if model.reasoning {
        oc::reasoning_effort(model, options)
    } else {
        None
    };
    if let Some(level) = effort {
        if uses_reasoning_effort(model) {
            let v = model
                .thinking_level_map
                .as_ref()
                .and_then(|m| m.get(level.as_str()))
                .filter(|v| !v.is_null())
                .cloned()
                .unwrap_or_else(|| json!("high"));
            body.insert("reasoning_effort".into(), v);
        } else {
            body.insert("prompt_mode".into(), json!("reasoning"));
        }
    }

    let mut headers = oc::build_headers(model, options, &[]);
    oc::set_header(&mut headers, "Accept", "text/event-stream");
    if let Some(sid) = &options.session_id {
        if !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("x-affinity"))
        {
            headers.push(("x-affinity".into(), sid.clone()));
        }
    }
    (
        oc::join_url(&model.base_url, "v1/chat/completions"),
        headers,
        Value::Object(body),
    )
}

fn convert_tool(tool: &ToolSpec) -> Value {
    json!({"type": "function", "function": {
        "name": tool.name,
        "description": tool.description,
        "strict": false,
        "parameters": tool.parameters,
    }})
}

fn image_chunk(img: &ImageContent) -> Value {
    json!({"type": "image_url", "image_url": format!("data:{};base64,{}", img.mime_type, img.data)})
}

const IMAGE_OMITTED: &str = "(image omitted: model does not support images)";

/// The `messages` array: system prompt, then the transformed transcript.
pub fn convert_messages(model: &Model, context: &Context) -> Vec<Value> {
    let ids = RefCell::new(IdNormalizer::default());
    let norm = |id: &str| ids.borrow_mut().normalize(id);
    let msgs = transform_messages(&context.messages, model, Some(&norm));
    let images_ok = model.supports_images();
    let mut out = Vec::new();
    if let Some(sp) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        out.push(json!({"role": "system", "content": sp}));
    }
    for msg in &msgs {
        match msg {
            Message::User(u) => match &u.content {
                UserContent::Text(s) => out.push(json!({"role": "user", "content": s})),
                UserContent::Blocks(blocks) => {
                    let had_images = blocks.iter().any(|b| matches!(b, Content::Image(_)));
                    let parts: Vec<Value> = blocks
                        .iter()
                        .filter_map(|b| match b {
                            Content::Text(t) => Some(json!({"type": "text", "text": t.text})),
                            Content::Image(img) if images_ok => Some(image_chunk(img)),
                            _ => None,
                        })
                        .collect();
                    if !parts.is_empty() {
                        out.push(json!({"role": "user", "content": parts}));
                    } else if had_images && !images_ok {
                        out.push(json!({"role": "user", "content": IMAGE_OMITTED}));
                    }
                }
            },
            Message::Assistant(a) => {
                if let Some(m) = convert_assistant(a) {
                    out.push(m);
                }
            }
            Message::ToolResult(r) => out.push(convert_tool_result(r, images_ok)),
        }
    }
    out
}

fn convert_assistant(a: &AssistantMessage) -> Option<Value> {
    let mut parts = Vec::new();
    let mut calls = Vec::new();
    for block in &a.content {
        match block {
            Content::Text(t) if !t.text.trim().is_empty() => {
                parts.push(json!({"type": "text", "text": t.text}));
            }
            Content::Thinking(t) if !t.thinking.trim().is_empty() => {
                parts.push(
                    json!({"type": "thinking", "thinking": [{"type": "text", "text": t.thinking}]}),
                );
            }
            Content::ToolCall(c) => calls.push(json!({
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments.to_string()},
                "index": 0,
            })),
            _ => {}
        }
    }
    if parts.is_empty() && calls.is_empty() {
        return None;
    }
    let mut m = Map::new();
    m.insert("role".into(), json!("assistant"));
    if !parts.is_empty() {
        m.insert("content".into(), Value::Array(parts));
    }
    if !calls.is_empty() {
        m.insert("tool_calls".into(), Value::Array(calls));
    }
    m.insert("prefix".into(), json!(false));
    Some(Value::Object(m))
}

fn convert_tool_result(r: &ToolResultMessage, images_ok: bool) -> Value {
    let text: Vec<&str> = r
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    let has_images = r.content.iter().any(|c| matches!(c, Content::Image(_)));
    let text = tool_result_text(&text.join("\n"), has_images, images_ok, r.is_error);
    let mut content = vec![json!({"type": "text", "text": text})];
    if images_ok {
        for c in &r.content {
            if let Content::Image(img) = c {
                content.push(image_chunk(img));
            }
        }
    }
    json!({"role": "tool", "content": content, "tool_call_id": r.tool_call_id, "name": r.tool_name})
}

/// pi's tool-result text: `[tool error] ` prefix on failures and placeholders for empty output.
pub fn tool_result_text(text: &str, has_images: bool, images_ok: bool, is_error: bool) -> String {
    let trimmed = text.trim();
    let prefix = if is_error { "[tool error] " } else { "" };
    if !trimmed.is_empty() {
        let suffix = if has_images && !images_ok {
            "\n[tool image omitted: model does not support images]"
        } else {
            ""
        };
        return format!("{prefix}{trimmed}{suffix}");
    }
    let body = match (has_images, images_ok) {
        (true, true) => "(see attached image)",
        (true, false) => IMAGE_OMITTED,
        (false, _) => "(no tool output)",
    };
    format!("{prefix}{body}")
}

/// `finish_reason` → stop reason (unknown reasons read as a normal stop, as in pi).
pub fn map_finish_reason(reason: &str) -> StopReason {
    match reason {
        "length" | "model_length" => StopReason::Length,
        "tool_calls" => StopReason::ToolUse,
        "error" => StopReason::Error,
        _ => StopReason::Stop,
    }
}

fn parse_usage(u: &Value) -> Usage {
    let input = oc::tokens(u.get("prompt_tokens"));
    let output = oc::tokens(u.get("completion_tokens"));
    let total = match oc::tokens(u.get("total_tokens")) {
        0 => input + output,
        t => t,
    };
    Usage {
        input,
        output,
        cache_read: 0,
        cache_write: 0,
        reasoning: None,
        total_tokens: total,
        cost: Cost::default(),
        cache_write_1h: None,
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Text,
    Thinking,
}

/// The block content is appended to: a new block starts whenever the kind changes.
struct Current {
    block: Option<(Kind, usize)>,
}

impl Current {
    fn append(&mut self, w: &mut StreamWriter, kind: Kind, delta: &str) {
        let idx = match self.block {
            Some((k, i)) if k == kind => i,
            other => {
                if let Some((_, i)) = other {
                    w.end_block(i);
                }
                let i = match kind {
                    Kind::Text => w.text_start(),
                    Kind::Thinking => w.thinking_start(),
                };
                self.block = Some((kind, i));
                i
            }
        };
        match kind {
            Kind::Text => w.text_delta(idx, delta),
            Kind::Thinking => w.thinking_delta(idx, delta),
        }
    }

    fn close(&mut self, w: &mut StreamWriter) {
        if let Some((_, i)) = self.block.take() {
            w.end_block(i);
        }
    }
}

/// The readable message of an error payload sent inside the stream, if `chunk` is one.
fn chunk_error(chunk: &Value) -> Option<String> {
    if let Some(err) = chunk.get("error").filter(|e| !e.is_null()) {
        return Some(oc::error_message(err));
    }
    let is_error = chunk.get("object").and_then(Value::as_str) == Some("error")
        || (chunk.get("choices").is_none() && chunk.get("message").is_some());
    is_error.then(|| match chunk.get("message") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(m)) => oc::error_message(&Value::Object(m.clone())),
        _ => chunk.to_string(),
    })
}

fn handle_content(item: &Value, cur: &mut Current, w: &mut StreamWriter) {
    match item {
        Value::String(s) => cur.append(w, Kind::Text, s),
        Value::Object(o) => match o.get("type").and_then(Value::as_str) {
            Some("thinking") => {
                let text: String = o
                    .get("thinking")
                    .and_then(Value::as_array)
                    .map(|parts| {
                        parts
                            .iter()
                            .filter_map(|p| p.get("text").and_then(Value::as_str))
                            .collect()
                    })
                    .unwrap_or_default();
                if !text.is_empty() {
                    cur.append(w, Kind::Thinking, &text);
                }
            }
            Some("text") => {
                let text = o.get("text").and_then(Value::as_str).unwrap_or("");
                cur.append(w, Kind::Text, text);
            }
            _ => {}
        },
        _ => {}
    }
}

/// Translates a Mistral chat SSE body into events on `w`. Usage is set on `w.partial`
/// without pricing (the caller applies the model's prices).
pub fn parse_stream<R: Read>(reader: R, w: &mut StreamWriter) -> Result<(), ProviderError> {
    w.start();
    let abort = w.abort.clone();
    let mut cur = Current { block: None };
    let mut tools: HashMap<String, usize> = HashMap::new();
    let mut saw_done = false;
    let mut saw_finish = false;

    read_events(reader, &abort, |ev| {
        let data = ev.data.trim();
        if data.is_empty() {
            return Ok(true);
        }
        if data == "[DONE]" {
            saw_done = true;
            return Ok(false);
        }
        if let Ok(hot) = serde_json::from_str::<MistralChunk>(data) {
            if hot.object.as_deref() != Some("error") {
                if w.partial.response_id.is_none() {
                    if let Some(id) = hot.id.filter(|s| !s.is_empty()) {
                        w.partial.response_id = Some(id.into_owned());
                    }
                }
                let [choice] = hot.choices;
                if let Some(text) = choice.delta.content {
                    cur.append(w, Kind::Text, &text);
                }
                return Ok(true);
            }
        }
        let chunk = oc::parse_chunk(data)?;
        if let Some(msg) = chunk_error(&chunk) {
            return Err(msg.into());
        }
        if w.partial.response_id.is_none() {
            if let Some(id) = chunk
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
            {
                w.partial.response_id = Some(id.to_string());
            }
        }
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            w.partial.usage = parse_usage(u);
            w.partial.usage.mark_reported();
        }
        let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            return Ok(true);
        };
        if let Some(fr) = choice.get("finish_reason").and_then(Value::as_str) {
            saw_finish = true;
            w.partial.stop_reason = map_finish_reason(fr);
            w.partial.set_raw_stop_reason(fr);
        }
        let Some(delta) = choice.get("delta").filter(|d| d.is_object()) else {
            return Ok(true);
        };
        match delta.get("content") {
            Some(Value::Array(items)) => {
                for item in items {
                    handle_content(item, &mut cur, w);
                }
            }
            Some(s @ Value::String(_)) => handle_content(s, &mut cur, w),
            _ => {}
        }
        for tc in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            cur.close(w);
            let stream_index = tc.get("index").and_then(Value::as_i64).unwrap_or(0);
            let id = match tc.get("id").and_then(Value::as_str) {
                Some(id) if !id.is_empty() && id != "null" => id.to_string(),
                _ => derive_tool_call_id(&format!("toolcall:{stream_index}"), 0),
            };
            let func = tc.get("function");
            let key = format!("{id}:{stream_index}");
            let idx = match tools.get(&key) {
                Some(i) => *i,
                None => {
                    let name = func
                        .and_then(|f| f.get("name"))
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    let i = w.toolcall_start(&id, name);
                    tools.insert(key, i);
                    i
                }
            };
            let args = match func.and_then(|f| f.get("arguments")) {
                Some(Value::String(s)) => s.clone(),
                Some(v) if !v.is_null() => v.to_string(),
                _ => "{}".to_string(),
            };
            w.toolcall_delta(idx, &args);
        }
        Ok(true)
    })?;

    if !saw_done && !saw_finish {
        return Err(oc::CONNECTION_LOST.into());
    }
    // pi ends the current text/thinking block before the tool calls; otherwise the open blocks
    // are ended (in content order) by `finish`, after the caller has priced usage.
    if let Some((_, i)) = cur.block {
        if tools.values().any(|t| *t < i) {
            cur.close(w);
        }
    }
    if w.partial.stop_reason == StopReason::Error {
        w.end_all_blocks();
        return Err("An unknown error occurred".into());
    }
    Ok(())
}

#[cfg(test)]
#[path = "tests/mistral.rs"]
mod tests;
