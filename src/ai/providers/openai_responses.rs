//! The OpenAI Responses wire API (`openai-responses`). `build_request` produces pi's body
//! (`input` items, `store:false`, reasoning with encrypted content, `call_id|item_id` tool-call
//! ids); `parse_stream` follows the typed `response.*` SSE events, one block per output item,
//! and requires `response.completed` (or `response.incomplete`) before the stream ends.

use std::collections::HashMap;
use std::io::Read;

use crossbeam_channel::Receiver;
use serde_json::{json, Map, Value};

use super::hot::{or_empty, ResponsesDelta};
use super::openai_compat as oc;
use crate::ai::error::ProviderError;
use crate::ai::partial_json::parse_partial_json;
use crate::ai::provider_retry::{self, Rules};
use crate::ai::sse::read_events;
use crate::ai::stream::{spawn_stream, Abort, StreamWriter};
use crate::ai::transform::transform_messages;
use crate::ai::types::*;

/// Providers whose Responses endpoint accepts (and needs) the `|item_id` half of an id.
const TOOL_CALL_ITEM_PROVIDERS: [&str; 3] = ["openai", "openai-codex", "opencode"];

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
        let resp = provider_retry::post_json(w, Rules::OpenAiSdk, &retry, &url, &headers, &body)
            .map_err(|e| w.http_error(e))?;
        parse_stream(resp, w)
    })
}

fn normalize_part(part: &str) -> String {
    let s = oc::truncate_chars(&oc::sanitize_id(part), 64);
    s.trim_end_matches('_').to_string()
}

/// pi's id rewrite for tool calls replayed into a Responses request. `foreign` says whether
/// the call came from another provider or API (its item id is then re-hashed).
fn normalize_id(model: &Model, id: &str, foreign: bool, item_providers: &[&str]) -> String {
    if !item_providers.contains(&model.provider.as_str()) {
        return normalize_part(id);
    }
    let Some((call_id, rest)) = id.split_once('|') else {
        return normalize_part(id);
    };
    let item_id = rest.split('|').next().unwrap_or("");
    let mut item = if foreign {
        oc::truncate_chars(&format!("fc_{}", oc::short_hash(item_id)), 64)
    } else {
        normalize_part(item_id)
    };
    if !item.starts_with("fc_") {
        item = normalize_part(&format!("fc_{item}"));
    }
    format!("{}|{}", normalize_part(call_id), item)
}

/// URL, headers and JSON body of one streaming Responses request.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> (String, Vec<(String, String)>, Value) {
    let long_cache = oc::long_cache_retention();
    let supports_long = model
        .compat_bool("supportsLongCacheRetention")
        .unwrap_or(true);
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("input".into(), Value::Array(convert_input(model, context)));
    body.insert("stream".into(), json!(true));
    if let Some(sid) = &options.session_id {
        body.insert("prompt_cache_key".into(), json!(sid));
    }
    if long_cache && supports_long {
        body.insert("prompt_cache_retention".into(), json!("24h"));
    }
    body.insert("store".into(), json!(false));
    if let Some(n) = oc::max_tokens(model, options) {
        body.insert("max_output_tokens".into(), json!(n));
    }
    if let Some(t) = options.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if !context.tools.is_empty() {
        let tools: Vec<Value> = context
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "name": t.name, "description": t.description,
                       "parameters": t.parameters, "strict": false})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if model.reasoning {
        if let Some(level) = oc::reasoning_effort(model, options) {
            body.insert(
                "reasoning".into(),
                json!({"effort": oc::effort_value(model, level), "summary": "auto"}),
            );
            body.insert("include".into(), json!(["reasoning.encrypted_content"]));
        } else if model.provider != "github-copilot" {
            match oc::off_value(model) {
                Some(Value::Null) => {}
                Some(v) => {
                    body.insert("reasoning".into(), json!({"effort": v}));
                }
                None => {
                    body.insert("reasoning".into(), json!({"effort": "none"}));
                }
            }
        }
    }
    let mut extra = Vec::new();
    if let Some(sid) = &options.session_id {
        if model.compat_bool("sendSessionIdHeader").unwrap_or(true) {
            extra.push(("session_id".to_string(), sid.clone()));
        }
        extra.push(("x-client-request-id".to_string(), sid.clone()));
    }
    let headers = oc::build_headers(model, options, &extra);
    (
        oc::join_url(&model.base_url, "responses"),
        headers,
        Value::Object(body),
    )
}

/// `{"v":1,"id":…,"phase":…}` text signatures, or a legacy bare id.
fn parse_text_signature(sig: Option<&str>) -> Option<(String, Option<String>)> {
    let sig = sig?;
    if sig.starts_with('{') {
        if let Ok(v) = serde_json::from_str::<Value>(sig) {
            if v.get("v").and_then(Value::as_i64) == Some(1) {
                if let Some(id) = v.get("id").and_then(Value::as_str) {
                    let phase = v
                        .get("phase")
                        .and_then(Value::as_str)
                        .filter(|p| *p == "commentary" || *p == "final_answer")
                        .map(str::to_string);
                    return Some((id.to_string(), phase));
                }
            }
        }
    }
    Some((sig.to_string(), None))
}

fn input_image(img: &ImageContent) -> Value {
    json!({"type": "input_image", "detail": "auto",
           "image_url": format!("data:{};base64,{}", img.mime_type, img.data)})
}

/// The `input` array: system prompt, then the transformed transcript as Responses items.
pub fn convert_input(model: &Model, context: &Context) -> Vec<Value> {
    convert_input_for(model, context, &TOOL_CALL_ITEM_PROVIDERS)
}

/// `convert_input` with the set of providers whose replayed tool-call ids keep their
/// `|item_id` half (Azure adds itself to OpenAI's set).
pub(crate) fn convert_input_for(
    model: &Model,
    context: &Context,
    item_providers: &[&str],
) -> Vec<Value> {
    convert_items(model, context, item_providers, true)
}

/// The `input` items, with or without the system prompt as the first one (Codex sends it as
/// `instructions` instead).
pub(crate) fn convert_items(
    model: &Model,
    context: &Context,
    item_providers: &[&str],
    include_system_prompt: bool,
) -> Vec<Value> {
    // Which original tool-call ids came from another provider or API (decides item-id hashing).
    let mut foreign: HashMap<String, bool> = HashMap::new();
    for m in &context.messages {
        if let Message::Assistant(a) = m {
            let f = a.provider != model.provider || a.api != model.api;
            for tc in a.tool_calls() {
                foreign.insert(tc.id.clone(), f);
            }
        }
    }
    let norm = |id: &str| {
        let f = foreign.get(id).copied().unwrap_or(true);
        normalize_id(model, id, f, item_providers)
    };
    let msgs = transform_messages(&context.messages, model, Some(&norm));
    let mut out = Vec::new();
    let system_prompt = context
        .system_prompt
        .as_deref()
        .filter(|_| include_system_prompt);
    if let Some(sp) = system_prompt.filter(|s| !s.is_empty()) {
        let role = if model.reasoning {
            "developer"
        } else {
            "system"
        };
        out.push(json!({"role": role, "content": sp}));
    }
    let mut msg_index = 0usize;
    for msg in &msgs {
        match msg {
            Message::User(u) => {
                let parts: Vec<Value> = match &u.content {
                    UserContent::Text(s) => vec![json!({"type": "input_text", "text": s})],
                    UserContent::Blocks(b) => b
                        .iter()
                        .filter_map(|c| match c {
                            Content::Text(t) => Some(json!({"type": "input_text", "text": t.text})),
                            Content::Image(img) => Some(input_image(img)),
                            _ => None,
                        })
                        .collect(),
                };
                if parts.is_empty() {
                    continue;
                }
                out.push(json!({"role": "user", "content": parts}));
            }
            Message::Assistant(a) => {
                let different_model =
                    a.model != model.id && a.provider == model.provider && a.api == model.api;
                let mut items = Vec::new();
                for block in &a.content {
                    match block {
                        Content::Thinking(t) => {
                            if let Some(item) = t
                                .thinking_signature
                                .as_deref()
                                .and_then(|s| serde_json::from_str::<Value>(s).ok())
                            {
                                items.push(item);
                            }
                        }
                        Content::Text(t) => {
                            let sig = parse_text_signature(t.text_signature.as_deref());
                            let (id, phase) = match sig {
                                Some((id, phase)) if !id.is_empty() => {
                                    let id = if id.encode_utf16().count() > 64 {
                                        format!("msg_{}", oc::short_hash(&id))
                                    } else {
                                        id
                                    };
                                    (id, phase)
                                }
                                other => (format!("msg_{msg_index}"), other.and_then(|s| s.1)),
                            };
                            let mut m = Map::new();
                            m.insert("type".into(), json!("message"));
                            m.insert("role".into(), json!("assistant"));
                            m.insert(
                                "content".into(),
                                json!([{"type": "output_text", "text": t.text, "annotations": []}]),
                            );
                            m.insert("status".into(), json!("completed"));
                            m.insert("id".into(), json!(id));
                            if let Some(p) = phase {
                                m.insert("phase".into(), json!(p));
                            }
                            items.push(Value::Object(m));
                        }
                        Content::ToolCall(tc) => {
                            let mut parts = tc.id.split('|');
                            let call_id = parts.next().unwrap_or("");
                            let item_id = parts
                                .next()
                                .filter(|i| !(different_model && i.starts_with("fc_")));
                            let mut m = Map::new();
                            m.insert("type".into(), json!("function_call"));
                            if let Some(i) = item_id {
                                m.insert("id".into(), json!(i));
                            }
                            m.insert("call_id".into(), json!(call_id));
                            m.insert("name".into(), json!(tc.name));
                            m.insert("arguments".into(), json!(tc.arguments.to_string()));
                            items.push(Value::Object(m));
                        }
                        Content::Image(_) => {}
                    }
                }
                if items.is_empty() {
                    continue;
                }
                out.extend(items);
            }
            Message::ToolResult(r) => {
                let texts: Vec<&str> = r
                    .content
                    .iter()
                    .filter_map(|c| match c {
                        Content::Text(t) => Some(t.text.as_str()),
                        _ => None,
                    })
                    .collect();
                let text = texts.join("\n");
                let has_images = r.content.iter().any(|c| matches!(c, Content::Image(_)));
                let call_id = r.tool_call_id.split('|').next().unwrap_or("");
                let output = if has_images && model.supports_images() {
                    let mut parts = Vec::new();
                    if !text.is_empty() {
                        parts.push(json!({"type": "input_text", "text": text}));
                    }
                    for c in &r.content {
                        if let Content::Image(img) = c {
                            parts.push(input_image(img));
                        }
                    }
                    Value::Array(parts)
                } else if text.is_empty() {
                    // pi 1.x: the image placeholder only when there is an image.
                    json!(if has_images {
                        "(see attached image)"
                    } else {
                        "(no tool output)"
                    })
                } else {
                    json!(text)
                };
                out.push(
                    json!({"type": "function_call_output", "call_id": call_id, "output": output}),
                );
            }
        }
        msg_index += 1;
    }
    out
}

/// Response `status` → stop reason (pi's mapping; unknown statuses are an error).
fn map_status(status: Option<&str>) -> Result<StopReason, ProviderError> {
    Ok(match status {
        None | Some("completed") | Some("in_progress") | Some("queued") => StopReason::Stop,
        Some("incomplete") => StopReason::Length,
        Some("failed") | Some("cancelled") => StopReason::Error,
        Some(other) => return Err(format!("Unhandled stop reason: {other}").into()),
    })
}

/// The output item being streamed and the content block it feeds.
struct Current {
    item: Value,
    block: usize,
    /// Raw argument JSON of a function call.
    args: String,
}

fn kind(v: &Value) -> &str {
    v.get("type").and_then(Value::as_str).unwrap_or("")
}

/// The events that add text to the current item (a summary part's end adds its separator).
const DELTA_KINDS: [&str; 6] = [
    "response.reasoning_summary_text.delta",
    "response.reasoning_summary_part.done",
    "response.reasoning_text.delta",
    "response.output_text.delta",
    "response.refusal.delta",
    "response.function_call_arguments.delta",
];

/// Applies a [`DELTA_KINDS`] event whose `delta` is `d` to the item being streamed.
fn apply_delta(w: &mut StreamWriter, cur: &mut Option<Current>, ty: &str, d: &str) {
    match ty {
        "response.reasoning_summary_text.delta" | "response.reasoning_summary_part.done" => {
            let delta = if ty.ends_with(".delta") { d } else { "\n\n" };
            if let Some(c) = cur.as_mut().filter(|c| kind(&c.item) == "reasoning") {
                if append_last(&mut c.item, "summary", "text", delta) {
                    w.thinking_delta(c.block, delta);
                }
            }
        }
        "response.reasoning_text.delta" => {
            if let Some(c) = cur.as_ref().filter(|c| kind(&c.item) == "reasoning") {
                w.thinking_delta(c.block, d);
            }
        }
        "response.output_text.delta" | "response.refusal.delta" => {
            let (want, field) = if ty == "response.output_text.delta" {
                ("output_text", "text")
            } else {
                ("refusal", "refusal")
            };
            if let Some(c) = cur.as_mut().filter(|c| kind(&c.item) == "message") {
                let last = c
                    .item
                    .get("content")
                    .and_then(Value::as_array)
                    .and_then(|a| a.last());
                if last.map(kind) == Some(want) {
                    append_last(&mut c.item, "content", field, d);
                    w.text_delta(c.block, d);
                }
            }
        }
        "response.function_call_arguments.delta" => {
            if let Some(c) = cur.as_mut().filter(|c| kind(&c.item) == "function_call") {
                c.args.push_str(d);
                // Parsed once, at `.done` (parsing every fragment is quadratic).
                w.toolcall_delta(c.block, d);
            }
        }
        _ => {}
    }
}

/// Translates a Responses SSE body into events on `w`. Usage is set on `w.partial` without
/// pricing (the caller applies the model's prices).
pub fn parse_stream<R: Read>(reader: R, w: &mut StreamWriter) -> Result<(), ProviderError> {
    parse_stream_mapped(reader, w, &|e| Ok(e))
}

/// [`parse_stream`] with every decoded event first passed through `map`, which may rewrite
/// it or end the stream with an error (the Codex backend's dialect of the same events).
pub(crate) fn parse_stream_mapped<R: Read>(
    reader: R,
    w: &mut StreamWriter,
    map: &dyn Fn(Value) -> Result<Value, ProviderError>,
) -> Result<(), ProviderError> {
    w.start();
    let abort = w.abort.clone();
    let mut cur: Option<Current> = None;
    let mut completed = false;

    read_events(reader, &abort, |ev| {
        let data = ev.data.trim();
        if data.is_empty() || data.starts_with("[DONE]") {
            return Ok(true);
        }
        // Deltas are read into borrowed fields (`map` leaves them as they are).
        if let Ok(hot) = serde_json::from_str::<ResponsesDelta>(data) {
            if DELTA_KINDS.contains(&&*hot.kind) {
                apply_delta(w, &mut cur, &hot.kind, or_empty(&hot.delta));
                return Ok(true);
            }
        }
        let e = map(oc::parse_chunk(data)?)?;
        if let Some(err) = e.get("error").filter(|v| v.is_object()) {
            if kind(&e).is_empty() {
                let code = err.get("code").and_then(Value::as_str);
                return Err(ProviderError::in_stream(oc::error_message(err), code));
            }
        }
        let ty = match kind(&e) {
            "" => ev.event.as_str(),
            t => t,
        };
        match ty {
            "response.created" => {
                if let Some(id) = e.pointer("/response/id").and_then(Value::as_str) {
                    w.partial.response_id = Some(id.to_string());
                }
            }
            "response.output_item.added" => {
                let item = e.get("item").cloned().unwrap_or(Value::Null);
                let (block, args) = match kind(&item) {
                    "reasoning" => (w.thinking_start(), String::new()),
                    "message" => (w.text_start(), String::new()),
                    "function_call" => {
                        let s = |k: &str| item.get(k).and_then(Value::as_str).unwrap_or("");
                        let id = format!("{}|{}", s("call_id"), s("id"));
                        let i = w.toolcall_start(&id, s("name"));
                        let args = s("arguments").to_string();
                        if !args.is_empty() {
                            w.toolcall_set_arguments(i, parse_partial_json(&args));
                        }
                        (i, args)
                    }
                    _ => return Ok(true),
                };
                let mut item = item;
                if kind(&item) == "message" {
                    item["content"] = json!([]);
                }
                cur = Some(Current { item, block, args });
            }
            "response.reasoning_summary_part.added" => {
                if let Some(c) = cur.as_mut().filter(|c| kind(&c.item) == "reasoning") {
                    let part = e.get("part").cloned().unwrap_or(json!({"text": ""}));
                    push_part(&mut c.item, "summary", part);
                }
            }
            "response.content_part.added" => {
                if let Some(c) = cur.as_mut().filter(|c| kind(&c.item) == "message") {
                    let part = e.get("part").cloned().unwrap_or(Value::Null);
                    if matches!(kind(&part), "output_text" | "refusal") {
                        push_part(&mut c.item, "content", part);
                    }
                }
            }
            t if DELTA_KINDS.contains(&t) => {
                let d = e.get("delta").and_then(Value::as_str).unwrap_or("");
                apply_delta(w, &mut cur, t, d);
            }
            "response.function_call_arguments.done" => {
                if let Some(c) = cur.as_mut().filter(|c| kind(&c.item) == "function_call") {
                    let full = e.get("arguments").and_then(Value::as_str).unwrap_or("");
                    let prev = std::mem::replace(&mut c.args, full.to_string());
                    if let Some(rest) = full.strip_prefix(prev.as_str()).filter(|r| !r.is_empty()) {
                        w.toolcall_delta(c.block, rest);
                    }
                    w.toolcall_set_arguments(c.block, parse_partial_json(full));
                }
            }
            "response.output_item.done" => {
                let item = e.get("item").cloned().unwrap_or(Value::Null);
                finish_item(w, &mut cur, &item);
            }
            "response.completed" | "response.incomplete" => {
                let resp = e.get("response").cloned().unwrap_or(Value::Null);
                if let Some(id) = resp.get("id").and_then(Value::as_str) {
                    w.partial.response_id = Some(id.to_string());
                }
                if let Some(u) = resp.get("usage").filter(|u| u.is_object()) {
                    let cached = oc::tokens(u.pointer("/input_tokens_details/cached_tokens"));
                    w.partial.usage = Usage {
                        input: oc::tokens(u.get("input_tokens")).saturating_sub(cached),
                        output: oc::tokens(u.get("output_tokens")),
                        cache_read: cached,
                        cache_write: 0,
                        reasoning: Some(oc::tokens(
                            u.pointer("/output_tokens_details/reasoning_tokens"),
                        )),
                        total_tokens: oc::tokens(u.get("total_tokens")),
                        cost: Cost::default(),
                        cache_write_1h: None,
                    };
                    w.partial.usage.mark_reported();
                }
                let mut reason = map_status(resp.get("status").and_then(Value::as_str))?;
                if let Some(status) = resp.get("status").and_then(Value::as_str) {
                    match resp
                        .pointer("/incomplete_details/reason")
                        .and_then(Value::as_str)
                    {
                        Some(why) => w.partial.set_raw_stop_reason(&format!("{status}.{why}")),
                        None => w.partial.set_raw_stop_reason(status),
                    }
                }
                let has_tools = w.partial.tool_calls().next().is_some();
                if reason == StopReason::Stop && has_tools {
                    reason = StopReason::ToolUse;
                }
                w.partial.stop_reason = reason;
                completed = true;
            }
            "error" => {
                let code = e.get("code").map(|c| match c {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                });
                let msg = e
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("Unknown error");
                let message = format!(
                    "Error Code {}: {msg}",
                    code.as_deref().unwrap_or("undefined")
                );
                return Err(ProviderError::in_stream(message, code.as_deref()));
            }
            "response.failed" => {
                let resp = e.get("response").cloned().unwrap_or(Value::Null);
                let err = resp.get("error").filter(|v| !v.is_null());
                let reason = resp
                    .pointer("/incomplete_details/reason")
                    .and_then(Value::as_str);
                let code = err.and_then(|e| e.get("code")).and_then(Value::as_str);
                let msg = match (err, reason) {
                    (Some(err), _) => {
                        let f = |k: &str, d: &str| {
                            err.get(k)
                                .and_then(Value::as_str)
                                .filter(|s| !s.is_empty())
                                .unwrap_or(d)
                                .to_string()
                        };
                        format!("{}: {}", f("code", "unknown"), f("message", "no message"))
                    }
                    (None, Some(r)) => format!("incomplete: {r}"),
                    (None, None) => "Unknown error (no error details in response)".to_string(),
                };
                return Err(ProviderError::in_stream(msg, code));
            }
            _ => {}
        }
        Ok(true)
    })?;

    if !completed {
        return Err(oc::CONNECTION_LOST.into());
    }
    if matches!(
        w.partial.stop_reason,
        StopReason::Error | StopReason::Aborted
    ) {
        return Err("An unknown error occurred".into());
    }
    Ok(())
}

fn push_part(item: &mut Value, key: &str, part: Value) {
    if !item.get(key).is_some_and(Value::is_array) {
        item[key] = json!([]);
    }
    if let Some(a) = item.get_mut(key).and_then(Value::as_array_mut) {
        a.push(part);
    }
}

/// Appends `delta` to `item[key][-1][field]`; false when there is no such part.
fn append_last(item: &mut Value, key: &str, field: &str, delta: &str) -> bool {
    let Some(last) = item
        .get_mut(key)
        .and_then(Value::as_array_mut)
        .and_then(|a| a.last_mut())
    else {
        return false;
    };
    if last.is_null() {
        *last = json!({});
    }
    let Some(part) = last.as_object_mut() else {
        return false;
    };
    // In place: copying the text so far on every delta would make a reply quadratic.
    match part.get_mut(field) {
        Some(Value::String(s)) => s.push_str(delta),
        _ => {
            part.insert(field.into(), delta.into());
        }
    }
    true
}

fn join_texts(parts: Option<&Value>, field: impl Fn(&Value) -> &str, sep: &str) -> String {
    let Some(arr) = parts.and_then(Value::as_array) else {
        return String::new();
    };
    arr.iter().map(field).collect::<Vec<_>>().join(sep)
}

/// `response.output_item.done`: final text/thinking/arguments and signatures, then the block end.
fn finish_item(w: &mut StreamWriter, cur: &mut Option<Current>, item: &Value) {
    fn text_of(p: &Value) -> &str {
        p.get("text").and_then(Value::as_str).unwrap_or("")
    }
    match kind(item) {
        "reasoning" => {
            let Some(c) = cur.take_if_kind("reasoning") else {
                return;
            };
            let summary = join_texts(item.get("summary"), text_of, "\n\n");
            let content = join_texts(item.get("content"), text_of, "\n\n");
            if let Some(Content::Thinking(t)) = w.partial.content.get_mut(c.block) {
                if !summary.is_empty() {
                    t.thinking = summary;
                } else if !content.is_empty() {
                    t.thinking = content;
                }
                t.thinking_signature = Some(item.to_string());
            }
            w.end_block(c.block);
        }
        "message" => {
            let Some(c) = cur.take_if_kind("message") else {
                return;
            };
            let text = join_texts(
                item.get("content"),
                |p| {
                    let f = if kind(p) == "output_text" {
                        "text"
                    } else {
                        "refusal"
                    };
                    p.get(f).and_then(Value::as_str).unwrap_or("")
                },
                "",
            );
            let mut sig = Map::new();
            sig.insert("v".into(), json!(1));
            sig.insert("id".into(), item.get("id").cloned().unwrap_or(json!("")));
            if let Some(p) = item.get("phase").filter(|p| !p.is_null()) {
                sig.insert("phase".into(), p.clone());
            }
            if let Some(Content::Text(t)) = w.partial.content.get_mut(c.block) {
                t.text = text;
                t.text_signature = Some(Value::Object(sig).to_string());
            }
            w.end_block(c.block);
        }
        "function_call" => {
            let fallback = || {
                let raw = item
                    .get("arguments")
                    .and_then(Value::as_str)
                    .unwrap_or("{}");
                parse_partial_json(raw)
            };
            let block = match cur.take_if_kind("function_call") {
                Some(c) => {
                    let args = if c.args.is_empty() {
                        fallback()
                    } else {
                        parse_partial_json(&c.args)
                    };
                    w.toolcall_set_arguments(c.block, args);
                    c.block
                }
                None => {
                    let s = |k: &str| item.get(k).and_then(Value::as_str).unwrap_or("");
                    let i = w.toolcall_start(&format!("{}|{}", s("call_id"), s("id")), s("name"));
                    w.toolcall_set_arguments(i, fallback());
                    i
                }
            };
            w.end_block(block);
        }
        _ => {}
    }
}

trait TakeIfKind {
    fn take_if_kind(&mut self, k: &str) -> Option<Current>;
}

impl TakeIfKind for Option<Current> {
    fn take_if_kind(&mut self, k: &str) -> Option<Current> {
        if self.as_ref().is_some_and(|c| kind(&c.item) == k) {
            self.take()
        } else {
            None
        }
    }
}

#[cfg(test)]
#[path = "tests/openai_responses.rs"]
mod tests;
