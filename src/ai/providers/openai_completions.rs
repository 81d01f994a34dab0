//! The OpenAI Chat Completions wire API (`openai-completions`), also spoken by most
//! OpenAI-compatible servers. `build_request` produces the exact body pi sends (shaped by the
//! resolved `Compat` flags); `parse_stream` turns `chat.completion.chunk` SSE data into
//! assistant events: one text block, one thinking block, tool calls by stream index.

use std::io::Read;

use crossbeam_channel::Receiver;
use serde_json::{json, Map, Value};

use super::hot::ChatChunk as HotChunk;
use super::json_out;
use super::openai_compat::{self as oc, Compat, ThinkingFormat};
use crate::ai::error::ProviderError;
use crate::ai::provider_retry::{self, Rules};
use crate::ai::sse::read_events;
use crate::ai::stream::{spawn_stream, Abort, StreamWriter};
use crate::ai::transform::transform_messages;
use crate::ai::types::*;

pub fn stream(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    abort: Abort,
) -> Receiver<AssistantEvent> {
    let (url, headers, body) = build_request_bytes(model, context, options);
    // A payload hook edits the body as JSON; without one the bytes go as written.
    let body = match options.on_payload {
        Some(_) => match serde_json::from_str(&body) {
            Ok(v) => options.payload(v).to_string(),
            Err(_) => body,
        },
        None => body,
    };
    let retry = options.provider_retry;
    let window = model.context_window;
    spawn_stream(model, abort, move |w| {
        let resp = provider_retry::post(w, Rules::OpenAiSdk, &retry, &url, &headers, &body)
            .map_err(|e| w.http_error(e))?;
        parse_stream(resp, w).map_err(|e| with_window(e, window))
    })
}

/// An empty reply (llama.cpp's answer to a prompt longer than its window) names the window
/// the model was configured or detected with, so the user sees which limit was hit.
fn with_window(err: ProviderError, window: u64) -> ProviderError {
    if err.message().starts_with("Empty reply:") && window > 0 {
        format!("{err} This model's context window is {window} tokens.").into()
    } else {
        err
    }
}

/// The tool-call id rewrite pi applies to ids coming from other providers.
fn normalize_id(model: &Model, id: &str) -> String {
    if let Some((call_id, _)) = id.split_once('|') {
        return oc::truncate_chars(&oc::sanitize_id(call_id), 40);
    }
    if model.provider == "openai" {
        return oc::truncate_chars(id, 40);
    }
    id.to_string()
}

/// URL, headers and JSON body of one streaming Chat Completions request, the body as a
/// `Value` (what a payload hook and the tests see).
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> (String, Vec<(String, String)>, Value) {
    let (url, headers, body) = build_request_bytes(model, context, options);
    let body = serde_json::from_str(&body).unwrap_or(Value::Null);
    (url, headers, body)
}

/// URL, headers and the JSON body's text of one streaming Chat Completions request: the
/// conversation is written straight from its typed messages (issue 35).
pub fn build_request_bytes(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> (String, Vec<(String, String)>, String) {
    let compat = Compat::resolve(model);
    let long_cache = oc::long_cache_retention();
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("stream".into(), json!(true));
    if let Some(sid) = &options.session_id {
        if model.base_url.contains("api.openai.com")
            || (long_cache && compat.supports_long_cache_retention)
        {
            body.insert("prompt_cache_key".into(), json!(sid));
        }
    }
    if long_cache && compat.supports_long_cache_retention {
        body.insert("prompt_cache_retention".into(), json!("24h"));
    }
    if compat.supports_usage_in_streaming {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if compat.supports_store {
        body.insert("store".into(), json!(false));
    }
    if let Some(n) = oc::max_tokens(model, options) {
        let field = if compat.use_max_tokens_field {
            "max_tokens"
        } else {
            "max_completion_tokens"
        };
        body.insert(field.into(), json!(n));
    }
    if let Some(t) = options.temperature {
        body.insert("temperature".into(), json!(t));
    }
    let mut tools: Option<Vec<Value>> = None;
    if !context.tools.is_empty() {
        tools = Some(
            context
                .tools
                .iter()
                .map(|t| convert_tool(t, &compat))
                .collect(),
        );
    } else if has_tool_history(&context.messages) {
        tools = Some(Vec::new());
    }
    // Cache markers (OpenRouter's Anthropic models) are set on the messages as JSON; everyone
    // else's messages are written straight into the body.
    let mut marked_messages = None;
    if compat.cache_control_format.as_deref() == Some("anthropic") {
        let mut cc = json!({"type": "ephemeral"});
        if long_cache && compat.supports_long_cache_retention {
            cc["ttl"] = json!("1h");
        }
        let mut written = Vec::new();
        write_messages(&mut written, model, context, &compat);
        let mut messages: Vec<Value> = serde_json::from_slice(&written).unwrap_or_default();
        apply_cache_control(&mut messages, tools.as_mut(), cc);
        marked_messages = Some(Value::Array(messages));
    }
    if let Some(tools) = tools {
        let non_empty = !tools.is_empty();
        body.insert("tools".into(), Value::Array(tools));
        if non_empty && compat.zai_tool_stream {
            body.insert("tool_stream".into(), json!(true));
        }
    }
    let effort = oc::reasoning_effort(model, options);
    if model.reasoning {
        match compat.thinking_format {
            ThinkingFormat::Zai | ThinkingFormat::Qwen => {
                body.insert("enable_thinking".into(), json!(effort.is_some()));
            }
            ThinkingFormat::QwenChatTemplate => {
                body.insert(
                    "chat_template_kwargs".into(),
                    json!({"enable_thinking": effort.is_some(), "preserve_thinking": true}),
                );
            }
            ThinkingFormat::DeepSeek => {
                let kind = if effort.is_some() {
                    "enabled"
                } else {
                    "disabled"
                };
                body.insert("thinking".into(), json!({"type": kind}));
                if let Some(l) = effort {
                    body.insert("reasoning_effort".into(), oc::effort_value(model, l));
                }
            }
            ThinkingFormat::OpenRouter => {
                if let Some(l) = effort {
                    body.insert(
                        "reasoning".into(),
                        json!({"effort": oc::effort_value(model, l)}),
                    );
                } else {
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
            ThinkingFormat::OpenAi if compat.supports_reasoning_effort => match effort {
                Some(l) => {
                    body.insert("reasoning_effort".into(), oc::effort_value(model, l));
                }
                None => {
                    if let Some(v @ Value::String(_)) = oc::off_value(model) {
                        body.insert("reasoning_effort".into(), v.clone());
                    }
                }
            },
            ThinkingFormat::OpenAi => {}
        }
    }
    if model.base_url.contains("openrouter.ai") {
        if let Some(r) = &compat.open_router_routing {
            body.insert("provider".into(), r.clone());
        }
    }
    if model.base_url.contains("ai-gateway.vercel.sh") {
        if let Some(r) = &compat.vercel_gateway_routing {
            let mut gw = Map::new();
            for k in ["only", "order"] {
                if let Some(v) = r.get(k).filter(|v| !v.is_null()) {
                    gw.insert(k.into(), v.clone());
                }
            }
            if !gw.is_empty() {
                body.insert("providerOptions".into(), json!({"gateway": gw}));
            }
        }
    }

    let mut extra = Vec::new();
    if let Some(sid) = &options.session_id {
        if compat.send_session_affinity_headers {
            for h in ["session_id", "x-client-request-id", "x-session-affinity"] {
                extra.push((h.to_string(), sid.clone()));
            }
        }
    }
    let headers = oc::build_headers(model, options, &extra);
    // `messages` goes second, as pi builds it.
    let mut out = Vec::new();
    let mut o = json_out::Obj::start(&mut out);
    for (k, v) in &body {
        o.field(k, v);
        if k == "model" {
            match &marked_messages {
                Some(messages) => o.field("messages", messages),
                None => write_messages(o.key("messages"), model, context, &compat),
            }
        }
    }
    o.end();
    (
        oc::join_url(&model.base_url, "chat/completions"),
        headers,
        json_out::into_string(out),
    )
}

fn has_tool_history(messages: &[Message]) -> bool {
    messages.iter().any(|m| match m {
        Message::ToolResult(_) => true,
        Message::Assistant(a) => a.tool_calls().next().is_some(),
        Message::User(_) => false,
    })
}

fn convert_tool(tool: &ToolSpec, compat: &Compat) -> Value {
    let mut f = Map::new();
    f.insert("name".into(), json!(tool.name));
    f.insert("description".into(), json!(tool.description));
    f.insert("parameters".into(), tool.parameters.clone());
    if compat.supports_strict_mode {
        f.insert("strict".into(), json!(false));
    }
    json!({"type": "function", "function": f})
}

const BRIDGE_TEXT: &str = "I have processed the tool results.";

/// `{"type":"image_url","image_url":{"url":"data:MIME;base64,DATA"}}`, the URL written in
/// pieces (an image is not copied into a string of its own).
fn write_image_url(out: &mut Vec<u8>, img: &ImageContent) {
    out.extend_from_slice(br#"{"type":"image_url","image_url":{"url":"data:"#);
    json_out::string_contents(out, &img.mime_type);
    out.extend_from_slice(b";base64,");
    json_out::string_contents(out, &img.data);
    out.extend_from_slice(b"\"}}");
}

fn write_text_part(out: &mut Vec<u8>, text: &str) {
    let mut o = json_out::Obj::start(out);
    o.str("type", "text");
    o.str("text", text);
    o.end();
}

/// Writes the `messages` array (system prompt, then the transformed transcript) straight from
/// the typed messages, byte for byte what a `Value` of it would print.
pub fn write_messages(out: &mut Vec<u8>, model: &Model, context: &Context, compat: &Compat) {
    let norm = |id: &str| normalize_id(model, id);
    let msgs = transform_messages(&context.messages, model, Some(&norm));
    let mut arr = json_out::Arr::start(out);
    if let Some(sp) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        let role = if model.reasoning && compat.supports_developer_role {
            "developer"
        } else {
            "system"
        };
        let mut o = json_out::Obj::start(arr.item());
        o.str("role", role);
        o.str("content", sp);
        o.end();
    }
    let bridge = |out: &mut Vec<u8>| {
        let mut o = json_out::Obj::start(out);
        o.str("role", "assistant");
        o.str("content", BRIDGE_TEXT);
        o.end();
    };
    let mut last_was_tool_result = false;
    let mut i = 0;
    while i < msgs.len() {
        match &msgs[i] {
            Message::User(u) => {
                if compat.requires_assistant_after_tool_result && last_was_tool_result {
                    bridge(arr.item());
                }
                last_was_tool_result = false;
                match &u.content {
                    UserContent::Text(s) => {
                        let mut o = json_out::Obj::start(arr.item());
                        o.str("role", "user");
                        o.str("content", s);
                        o.end();
                    }
                    UserContent::Blocks(blocks) => {
                        let sent = |b: &&Content| matches!(b, Content::Text(_) | Content::Image(_));
                        if blocks.iter().any(|b| sent(&b)) {
                            let mut o = json_out::Obj::start(arr.item());
                            o.str("role", "user");
                            let mut parts = json_out::Arr::start(o.key("content"));
                            for b in blocks.iter().filter(sent) {
                                match b {
                                    Content::Text(t) => write_text_part(parts.item(), &t.text),
                                    Content::Image(img) => write_image_url(parts.item(), img),
                                    _ => {}
                                }
                            }
                            parts.end();
                            o.end();
                        }
                    }
                }
            }
            Message::Assistant(a) => {
                last_was_tool_result = false;
                if assistant_is_sent(a, compat) {
                    write_assistant(arr.item(), model, a, compat);
                }
            }
            Message::ToolResult(_) => {
                let mut images: Vec<&ImageContent> = Vec::new();
                while let Some(Message::ToolResult(r)) = msgs.get(i) {
                    let mut o = json_out::Obj::start(arr.item());
                    o.str("role", "tool");
                    write_tool_result_content(o.key("content"), &r.content);
                    o.str("tool_call_id", &r.tool_call_id);
                    if compat.requires_tool_result_name && !r.tool_name.is_empty() {
                        o.str("name", &r.tool_name);
                    }
                    o.end();
                    if model.supports_images() {
                        images.extend(r.content.iter().filter_map(|c| match c {
                            Content::Image(img) => Some(img),
                            _ => None,
                        }));
                    }
                    i += 1;
                }
                if images.is_empty() {
                    last_was_tool_result = true;
                } else {
                    if compat.requires_assistant_after_tool_result {
                        bridge(arr.item());
                    }
                    let mut o = json_out::Obj::start(arr.item());
                    o.str("role", "user");
                    let mut parts = json_out::Arr::start(o.key("content"));
                    write_text_part(parts.item(), "Attached image(s) from tool result:");
                    for img in images {
                        write_image_url(parts.item(), img);
                    }
                    parts.end();
                    o.end();
                    last_was_tool_result = false;
                }
                continue;
            }
        }
        i += 1;
    }
    arr.end();
}

/// A tool result's text parts joined by newlines; pi 1.x's image placeholder only when there
/// is an image and no text.
fn write_tool_result_content(out: &mut Vec<u8>, content: &[Content]) {
    let mut texts = content.iter().filter_map(|c| match c {
        Content::Text(t) => Some(t.text.as_str()),
        _ => None,
    });
    let has_text = {
        let mut probe = texts.clone();
        match (probe.next(), probe.next()) {
            (Some(first), None) => !first.is_empty(),
            (Some(_), Some(_)) => true,
            (None, _) => false,
        }
    };
    if !has_text {
        let placeholder = match content.iter().any(|c| matches!(c, Content::Image(_))) {
            true => "(see attached image)",
            false => "(no tool output)",
        };
        return json_out::string(out, placeholder);
    }
    out.push(b'"');
    if let Some(first) = texts.next() {
        json_out::string_contents(out, first);
    }
    for t in texts {
        out.push(b'\\');
        out.push(b'n');
        json_out::string_contents(out, t);
    }
    out.push(b'"');
}

fn sent_texts(a: &AssistantMessage) -> impl Iterator<Item = &str> + Clone {
    a.content.iter().filter_map(|c| match c {
        Content::Text(t) if !t.text.trim().is_empty() => Some(t.text.as_str()),
        _ => None,
    })
}

fn sent_thinking(a: &AssistantMessage) -> impl Iterator<Item = &ThinkingContent> + Clone {
    a.content.iter().filter_map(|c| match c {
        Content::Thinking(t) if !t.thinking.trim().is_empty() => Some(t),
        _ => None,
    })
}

/// Whether an assistant message is sent at all: it has text (thinking sent as text counts)
/// or tool calls.
fn assistant_is_sent(a: &AssistantMessage, compat: &Compat) -> bool {
    let thinking_as_text = compat.requires_thinking_as_text && sent_thinking(a).next().is_some();
    thinking_as_text || sent_texts(a).next().is_some() || a.tool_calls().next().is_some()
}

/// Writes `items` joined by `sep` as one JSON string.
fn write_joined<'s>(out: &mut Vec<u8>, items: impl Iterator<Item = &'s str>, sep: &str) {
    out.push(b'"');
    for (n, item) in items.enumerate() {
        if n > 0 {
            json_out::string_contents(out, sep);
        }
        json_out::string_contents(out, item);
    }
    out.push(b'"');
}

fn write_assistant(out: &mut Vec<u8>, model: &Model, a: &AssistantMessage, compat: &Compat) {
    let mut o = json_out::Obj::start(out);
    o.str("role", "assistant");
    let texts = sent_texts(a);
    let thinking = sent_thinking(a);
    let mut reasoning_field = None;
    if thinking.clone().next().is_some() && compat.requires_thinking_as_text {
        let mut parts = json_out::Arr::start(o.key("content"));
        {
            let mut p = json_out::Obj::start(parts.item());
            p.str("type", "text");
            write_joined(p.key("text"), thinking.map(|t| t.thinking.as_str()), "\n\n");
            p.end();
        }
        for t in texts {
            write_text_part(parts.item(), t);
        }
        parts.end();
    } else {
        let out = o.key("content");
        if texts.clone().any(|t| !t.is_empty()) {
            write_joined(out, texts, "");
        } else if compat.requires_assistant_after_tool_result {
            json_out::string(out, "");
        } else {
            out.extend_from_slice(b"null");
        }
        // Only a field a Chat Completions server reads back: a signature from another provider
        // (an id, an encrypted blob) would become a bogus top-level key (pi 1.x).
        if let Some(sig) = thinking
            .clone()
            .next()
            .and_then(|t| t.thinking_signature.as_deref())
            .filter(|s| REASONING_FIELDS.contains(s))
        {
            write_joined(o.key(sig), thinking.map(|t| t.thinking.as_str()), "\n");
            reasoning_field = Some(sig);
        }
    }
    if a.tool_calls().next().is_some() {
        let mut calls = json_out::Arr::start(o.key("tool_calls"));
        for c in a.tool_calls() {
            let mut call = json_out::Obj::start(calls.item());
            call.str("id", &c.id);
            call.str("type", "function");
            let mut f = json_out::Obj::start(call.key("function"));
            f.str("name", &c.name);
            f.str("arguments", &c.arguments.to_string());
            f.end();
            call.end();
        }
        calls.end();
        let details: Vec<Value> = a
            .tool_calls()
            .filter_map(|c| c.thought_signature.as_deref())
            .filter_map(|s| serde_json::from_str::<Value>(s).ok())
            .filter(|v| !v.is_null())
            .collect();
        if !details.is_empty() {
            o.field("reasoning_details", &details);
        }
    }
    if compat.requires_reasoning_content_on_assistant_messages
        && model.reasoning
        && reasoning_field != Some("reasoning_content")
    {
        o.str("reasoning_content", "");
    }
    o.end();
}

/// Adds Anthropic `cache_control` to the system prompt, the last tool and the last
/// user/assistant text (OpenRouter's Anthropic models).
fn apply_cache_control(messages: &mut [Value], tools: Option<&mut Vec<Value>>, cc: Value) {
    if let Some(m) = messages.iter_mut().find(|m| {
        matches!(
            m.get("role").and_then(Value::as_str),
            Some("system") | Some("developer")
        )
    }) {
        mark_text(m, &cc);
    }
    if let Some(last) = tools.and_then(|t| t.last_mut()) {
        last["cache_control"] = cc.clone();
    }
    for m in messages.iter_mut().rev() {
        if matches!(
            m.get("role").and_then(Value::as_str),
            Some("user") | Some("assistant")
        ) && mark_text(m, &cc)
        {
            break;
        }
    }
}

fn mark_text(m: &mut Value, cc: &Value) -> bool {
    match m.get_mut("content") {
        Some(Value::String(s)) if !s.is_empty() => {
            let text = std::mem::take(s);
            m["content"] = json!([{"type": "text", "text": text, "cache_control": cc}]);
            true
        }
        Some(Value::Array(parts)) => {
            for p in parts.iter_mut().rev() {
                if p.get("type").and_then(Value::as_str) == Some("text") {
                    p["cache_control"] = cc.clone();
                    return true;
                }
            }
            false
        }
        _ => false,
    }
}

/// pi 1.6.0's usage normalization: cached prompt tokens are cache reads (OpenAI and OpenRouter
/// under `prompt_tokens_details.cached_tokens`, DeepSeek `prompt_cache_hit_tokens`, Kimi a
/// top-level `cached_tokens`), cache writes a separate count, and `completion_tokens` (which
/// already includes reasoning) is the output.
pub fn parse_usage(u: &Value) -> Usage {
    let prompt = oc::tokens(u.get("prompt_tokens"));
    let details = u.get("prompt_tokens_details");
    let cache_read = oc::tokens(
        present(details.and_then(|d| d.get("cached_tokens")))
            .or_else(|| present(u.get("prompt_cache_hit_tokens")))
            .or_else(|| present(u.get("cached_tokens"))),
    );
    let cache_write = oc::tokens(details.and_then(|d| d.get("cache_write_tokens")));
    let input = prompt
        .saturating_sub(cache_read)
        .saturating_sub(cache_write);
    let output = oc::tokens(u.get("completion_tokens"));
    let reasoning = match oc::tokens(u.pointer("/completion_tokens_details/reasoning_tokens")) {
        0 => oc::tokens(u.get("reasoning_tokens")),
        n => n,
    };
    Usage {
        input,
        output,
        cache_read,
        cache_write,
        reasoning: Some(reasoning),
        total_tokens: input + output + cache_read + cache_write,
        cost: Cost::default(),
        cache_write_1h: None,
    }
}

fn present(v: Option<&Value>) -> Option<&Value> {
    v.filter(|v| !v.is_null())
}

/// A streamed usage report: parsed, marked as the provider's (pi 1.6.0's
/// `totalFromProvider: false`), and carrying OpenRouter's billed total when it sends one.
fn reported_usage(u: &Value) -> Usage {
    let mut usage = parse_usage(u);
    usage.mark_reported();
    apply_openrouter_cost(&mut usage, u);
    usage
}

/// pi 1.6.0's `applyOpenRouterReportedCost`: OpenRouter's `cost` (plus the upstream cost when
/// the key is the user's own, `is_byok`) replaces the catalog total when the accounting is
/// complete. Only OpenRouter sends `is_byok`, so its presence is the test.
fn apply_openrouter_cost(usage: &mut Usage, u: &Value) {
    let valid = |v: Option<&Value>| {
        v.and_then(Value::as_f64)
            .filter(|c| c.is_finite() && *c >= 0.0)
    };
    let Some(cost) = valid(u.get("cost")) else {
        return;
    };
    let total = match u.get("is_byok").and_then(Value::as_bool) {
        Some(false) => cost,
        Some(true) => {
            let Some(details) = u.get("cost_details").filter(|d| d.is_object()) else {
                return;
            };
            let upstream = match details.get("upstream_inference_cost") {
                Some(Value::Null) => match (
                    valid(details.get("upstream_inference_prompt_cost")),
                    valid(details.get("upstream_inference_completions_cost")),
                ) {
                    (Some(p), Some(c)) => p + c,
                    _ => return,
                },
                other => match valid(other) {
                    Some(v) => v,
                    None => return,
                },
            };
            cost + upstream
        }
        None => return,
    };
    usage.cost.total = total;
    usage.cost.total_from_provider = Some(true);
}

/// `finish_reason` → stop reason, with pi's error message for the failing ones.
pub fn map_finish_reason(reason: &str) -> (StopReason, Option<String>) {
    match reason {
        "stop" | "end" => (StopReason::Stop, None),
        "length" => (StopReason::Length, None),
        "function_call" | "tool_calls" => (StopReason::ToolUse, None),
        other => (
            StopReason::Error,
            Some(format!("Provider finish_reason: {other}")),
        ),
    }
}

const REASONING_FIELDS: [&str; 3] = ["reasoning_content", "reasoning", "reasoning_text"];

/// What a stream has opened so far: its one text and one thinking block, and its tool calls by
/// stream index and by id (a handful each, so a list beats hashing on every fragment).
#[derive(Default)]
struct Blocks {
    started: bool,
    text: Option<usize>,
    thinking: Option<usize>,
    by_stream_index: Vec<(i64, usize)>,
    by_id: Vec<(String, usize)>,
}

impl Blocks {
    /// The chunk's response id and model (kept from the first that has them), then `start`.
    fn meta(&mut self, w: &mut StreamWriter, id: Option<&str>, model: Option<&str>) {
        if w.partial.response_id.is_none() {
            if let Some(id) = id.filter(|s| !s.is_empty()) {
                w.partial.response_id = Some(id.to_string());
            }
        }
        if let Some(m) = model {
            if !m.is_empty() && m != w.partial.model && w.partial.response_model.is_none() {
                w.partial.response_model = Some(m.to_string());
            }
        }
        if !self.started {
            self.started = true;
            w.start();
        }
    }

    fn text(&mut self, w: &mut StreamWriter, text: Option<&str>) {
        if let Some(text) = text.filter(|s| !s.is_empty()) {
            let i = *self.text.get_or_insert_with(|| w.text_start());
            w.text_delta(i, text);
        }
    }

    /// The first of the reasoning fields (`REASONING_FIELDS` order) holding text.
    fn reasoning<'s>(
        &mut self,
        w: &mut StreamWriter,
        fields: impl IntoIterator<Item = (&'static str, Option<&'s str>)>,
    ) {
        let found = fields
            .into_iter()
            .find_map(|(f, s)| s.filter(|s| !s.is_empty()).map(|s| (f, s)));
        let Some((field, text)) = found else {
            return;
        };
        let i = match self.thinking {
            Some(i) => i,
            None => {
                let i = w.thinking_start();
                if let Some(Content::Thinking(t)) = w.partial.content.get_mut(i) {
                    t.thinking_signature = Some(field.to_string());
                }
                self.thinking = Some(i);
                i
            }
        };
        w.thinking_delta(i, text);
    }

    fn tool_call(&mut self, w: &mut StreamWriter, call: ToolCallPart<'_>) {
        let ToolCallPart {
            index: stream_index,
            id,
            name,
            arguments,
        } = call;
        let id = id.filter(|s| !s.is_empty());
        let name = name.filter(|s| !s.is_empty());
        let by_index = stream_index
            .and_then(|si| self.by_stream_index.iter().find(|(s, _)| *s == si))
            .map(|(_, idx)| *idx);
        let existing = by_index.or_else(|| {
            let id = id?;
            self.by_id
                .iter()
                .find(|(s, _)| s == id)
                .map(|(_, idx)| *idx)
        });
        let idx = match existing {
            Some(i) => i,
            None => w.toolcall_start(id.unwrap_or(""), name.unwrap_or("")),
        };
        if let Some(si) = stream_index {
            if !self.by_stream_index.iter().any(|(s, _)| *s == si) {
                self.by_stream_index.push((si, idx));
            }
        }
        if let Some(id) = id {
            match self.by_id.iter_mut().find(|(s, _)| s == id) {
                Some(entry) => entry.1 = idx,
                None => self.by_id.push((id.to_string(), idx)),
            }
        }
        if let Some(Content::ToolCall(block)) = w.partial.content.get_mut(idx) {
            if block.id.is_empty() {
                if let Some(id) = id {
                    block.id = id.to_string();
                }
            }
            if block.name.is_empty() {
                if let Some(n) = name {
                    block.name = n.to_string();
                }
            }
        }
        w.toolcall_delta(idx, arguments.unwrap_or(""));
    }
}

/// One entry of a delta's `tool_calls`, its fields read as strings where they are strings.
struct ToolCallPart<'a> {
    index: Option<i64>,
    id: Option<&'a str>,
    name: Option<&'a str>,
    arguments: Option<&'a str>,
}

/// Handles `data` if it is a [`HotChunk`]; false if it is not (nothing was done then).
fn hot_chunk(data: &str, blocks: &mut Blocks, w: &mut StreamWriter) -> bool {
    let Ok(HotChunk {
        id,
        model,
        choices: [choice],
        ..
    }) = serde_json::from_str::<HotChunk>(data)
    else {
        return false;
    };
    blocks.meta(w, id.as_deref(), model.as_deref());
    let d = choice.delta;
    blocks.text(w, d.content.as_deref());
    blocks.reasoning(
        w,
        [
            (REASONING_FIELDS[0], d.reasoning_content.as_deref()),
            (REASONING_FIELDS[1], d.reasoning.as_deref()),
            (REASONING_FIELDS[2], d.reasoning_text.as_deref()),
        ],
    );
    if let Some([call]) = &d.tool_calls {
        let function = call.function.as_ref();
        blocks.tool_call(
            w,
            ToolCallPart {
                index: call.index,
                id: call.id.as_deref(),
                name: function.and_then(|f| f.name.as_deref()),
                arguments: function.and_then(|f| f.arguments.as_deref()),
            },
        );
    }
    true
}

/// Translates a Chat Completions SSE body into events on `w`. Usage is set on `w.partial`
/// without pricing (the caller applies the model's prices).
pub fn parse_stream<R: Read>(reader: R, w: &mut StreamWriter) -> Result<(), ProviderError> {
    // `start` waits for the first chunk, so `message_start` carries its response id and model
    // as pi's does (pi reads the first chunk before its listeners see `start`).
    let abort = w.abort.clone();
    let mut blocks = Blocks::default();
    let mut saw_done = false;
    let mut saw_finish = false;
    let mut error_message: Option<String> = None;

    let read = read_events(reader, &abort, |ev| {
        let data = ev.data.trim();
        if data.is_empty() {
            return Ok(true);
        }
        if data.starts_with("[DONE]") {
            saw_done = true;
            return Ok(false);
        }
        if hot_chunk(data, &mut blocks, w) {
            return Ok(true);
        }
        let chunk = oc::parse_chunk(data)?;
        if let Some(err) = chunk.get("error").filter(|e| !e.is_null()) {
            let code = err.get("code").and_then(Value::as_str);
            return Err(ProviderError::in_stream(oc::error_message(err), code));
        }
        if !chunk.is_object() {
            return Ok(true);
        }
        let str_of = |key: &str| chunk.get(key).and_then(Value::as_str);
        blocks.meta(w, str_of("id"), str_of("model"));
        let usage = chunk.get("usage").filter(|u| u.is_object());
        if let Some(u) = usage {
            w.partial.usage = reported_usage(u);
        }
        let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            return Ok(true);
        };
        if usage.is_none() {
            if let Some(u) = choice.get("usage").filter(|u| u.is_object()) {
                w.partial.usage = reported_usage(u);
            }
        }
        if let Some(fr) = choice.get("finish_reason").and_then(Value::as_str) {
            if !fr.is_empty() {
                saw_finish = true;
                let (reason, msg) = map_finish_reason(fr);
                w.partial.stop_reason = reason;
                w.partial.set_raw_stop_reason(fr);
                if msg.is_some() {
                    error_message = msg;
                }
            }
        }
        let Some(delta) = choice.get("delta").filter(|d| d.is_object()) else {
            return Ok(true);
        };
        let str_at = |key: &str| delta.get(key).and_then(Value::as_str);
        blocks.text(w, str_at("content"));
        blocks.reasoning(w, REASONING_FIELDS.map(|f| (f, str_at(f))));
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for tc in calls {
                let func = tc.get("function");
                let func_str = |key: &str| func.and_then(|f| f.get(key)).and_then(Value::as_str);
                blocks.tool_call(
                    w,
                    ToolCallPart {
                        index: tc.get("index").and_then(Value::as_i64),
                        id: tc.get("id").and_then(Value::as_str),
                        name: func_str("name"),
                        arguments: func_str("arguments"),
                    },
                );
            }
        }
        if let Some(details) = delta.get("reasoning_details").and_then(Value::as_array) {
            for d in details {
                let encrypted =
                    d.get("type").and_then(Value::as_str) == Some("reasoning.encrypted");
                let id = d
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty());
                let has_data = d
                    .get("data")
                    .is_some_and(|v| v.as_str() != Some("") && !v.is_null());
                if let (true, Some(id), true) = (encrypted, id, has_data) {
                    for c in w.partial.content.iter_mut() {
                        if let Content::ToolCall(t) = c {
                            if t.id == id {
                                t.thought_signature = Some(d.to_string());
                                break;
                            }
                        }
                    }
                }
            }
        }
        Ok(true)
    });
    if !blocks.started {
        w.start();
    }
    read?;

    if !saw_done && !saw_finish {
        return Err(oc::CONNECTION_LOST.into());
    }
    // On success the open blocks are ended by `finish`, after the caller has priced usage.
    if w.partial.stop_reason == StopReason::Error {
        w.end_all_blocks();
        return Err(error_message
            .unwrap_or_else(|| "Provider returned an error stop reason".into())
            .into());
    }
    Ok(())
}

#[cfg(test)]
#[path = "tests/openai_completions.rs"]
mod tests;

#[cfg(test)]
#[path = "tests/openai_completions_value.rs"]
mod value_body;
