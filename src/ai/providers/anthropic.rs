//! The Anthropic Messages API (`anthropic-messages`): builds the `POST /v1/messages` request
//! exactly as pi does (system prompt and last user block marked for prompt caching, tool results
//! grouped into one user turn, budget or adaptive thinking, API-key or OAuth headers) and
//! translates the SSE stream (`message_start` … `message_stop`) into `AssistantEvent`s.

use std::io::Read;

use crossbeam_channel::Receiver;
use serde_json::{json, Map, Value};

use crate::ai::http;
use crate::ai::partial_json::parse_partial_json;
use crate::ai::sse::read_events;
use crate::ai::stream::{spawn_stream, Abort, StreamWriter};
use crate::ai::transform::transform_messages;
use crate::ai::types::*;

const API_VERSION: &str = "2023-06-01";
const FINE_GRAINED_TOOL_STREAMING_BETA: &str = "fine-grained-tool-streaming-2025-05-14";
const INTERLEAVED_THINKING_BETA: &str = "interleaved-thinking-2025-05-14";
const CLAUDE_CODE_VERSION: &str = "2.1.75";
const CLAUDE_CODE_IDENTITY: &str = "You are Claude Code, Anthropic's official CLI for Claude.";
/// Tool names as Claude Code spells them; OAuth requests must use this casing.
const CLAUDE_CODE_TOOLS: &[&str] = &[
    "Read",
    "Write",
    "Edit",
    "Bash",
    "Grep",
    "Glob",
    "AskUserQuestion",
    "EnterPlanMode",
    "ExitPlanMode",
    "KillShell",
    "NotebookEdit",
    "Skill",
    "Task",
    "TaskOutput",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
];

pub fn stream(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    abort: Abort,
) -> Receiver<AssistantEvent> {
    let (url, headers, body) = build_request(model, context, options);
    let cost = model.cost;
    let oauth_tools = is_oauth_token(&options.api_key).then(|| context.tools.clone());
    spawn_stream(model, abort, move |w| {
        let resp = http::post_json(&url, &headers, &body.to_string()).map_err(|e| {
            w.retry_after_ms = e.retry_after_ms;
            e.message
        })?;
        parse_stream_with(resp, w, &cost, oauth_tools.as_deref())
    })
}

/// Tool-call ids must match `^[a-zA-Z0-9_-]{1,64}$`.
pub fn normalize_id(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect()
}

/// Claude subscription tokens (OAuth) rather than console API keys.
pub fn is_oauth_token(key: &str) -> bool {
    key.contains("sk-ant-oat")
}

/// Opus 4.6+/Sonnet 4.6 think adaptively (effort) instead of with a token budget.
fn supports_adaptive_thinking(model_id: &str) -> bool {
    [
        "opus-4-6",
        "opus-4.6",
        "opus-4-7",
        "opus-4.7",
        "sonnet-4-6",
        "sonnet-4.6",
    ]
    .iter()
    .any(|s| model_id.contains(s))
}

fn to_claude_code_name(name: &str) -> String {
    CLAUDE_CODE_TOOLS
        .iter()
        .find(|t| t.eq_ignore_ascii_case(name))
        .map(|t| t.to_string())
        .unwrap_or_else(|| name.to_string())
}

fn from_claude_code_name(name: &str, tools: &[ToolSpec]) -> String {
    tools
        .iter()
        .find(|t| t.name.eq_ignore_ascii_case(name))
        .map(|t| t.name.clone())
        .unwrap_or_else(|| name.to_string())
}

/// `cache_control` for prompt caching: ephemeral, one hour with `PI_CACHE_RETENTION=long`.
fn cache_control(model: &Model) -> Option<Value> {
    match std::env::var("PI_CACHE_RETENTION").ok().as_deref() {
        Some("none") => None,
        Some("long")
            if model
                .compat_bool("supportsLongCacheRetention")
                .unwrap_or(true) =>
        {
            Some(json!({"type": "ephemeral", "ttl": "1h"}))
        }
        _ => Some(json!({"type": "ephemeral"})),
    }
}

/// Merges header maps in order; a later key replaces an earlier one case-insensitively, and a
/// JSON `null` in a model's `headers` removes the header.
pub(crate) fn merge_headers(
    base: Vec<(String, String)>,
    model_headers: Option<&Map<String, Value>>,
    option_headers: &[(String, String)],
) -> Vec<(String, String)> {
    let mut out = base;
    let mut set = |k: &str, v: Option<String>| {
        out.retain(|(name, _)| !name.eq_ignore_ascii_case(k));
        if let Some(v) = v {
            out.push((k.to_string(), v));
        }
    };
    for (k, v) in model_headers.into_iter().flatten() {
        match v {
            Value::Null => set(k, None),
            Value::String(s) => set(k, Some(s.clone())),
            other => set(k, Some(other.to_string())),
        }
    }
    for (k, v) in option_headers {
        set(k, Some(v.clone()));
    }
    out
}

/// The URL, headers and JSON body pi sends for this call.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> (String, Vec<(String, String)>, Value) {
    let oauth = is_oauth_token(&options.api_key);
    let cache = cache_control(model);
    let reasoning = options.reasoning.filter(|l| *l != ThinkingLevel::Off);
    let adaptive = supports_adaptive_thinking(&model.id);
    let eager_tools = model
        .compat_bool("supportsEagerToolInputStreaming")
        .unwrap_or(true);

    // Headers.
    let mut betas: Vec<&str> = Vec::new();
    if !context.tools.is_empty() && !eager_tools {
        betas.push(FINE_GRAINED_TOOL_STREAMING_BETA);
    }
    if !adaptive {
        betas.push(INTERLEAVED_THINKING_BETA);
    }
    let mut base = vec![
        ("accept".to_string(), "application/json".to_string()),
        (
            "anthropic-dangerous-direct-browser-access".to_string(),
            "true".to_string(),
        ),
    ];
    if oauth {
        let mut all = vec!["claude-code-20250219", "oauth-2025-04-20"];
        all.extend(&betas);
        base.push(("anthropic-beta".into(), all.join(",")));
        base.push((
            "user-agent".into(),
            format!("claude-cli/{CLAUDE_CODE_VERSION}"),
        ));
        base.push(("x-app".into(), "cli".into()));
    } else if !betas.is_empty() {
        base.push(("anthropic-beta".into(), betas.join(",")));
    }
    let mut headers = merge_headers(base, model.headers.as_ref(), &options.headers);
    // The SDK adds auth and version after the default headers.
    if oauth {
        headers.push((
            "authorization".into(),
            format!("Bearer {}", options.api_key),
        ));
    } else {
        headers.push(("x-api-key".into(), options.api_key.clone()));
    }
    headers.push(("anthropic-version".into(), API_VERSION.into()));

    // Token limits and thinking.
    let base_max = options
        .max_tokens
        .or((model.max_tokens > 0).then(|| model.max_tokens.min(32000)));
    let mut max_tokens = base_max.unwrap_or(0);
    let mut thinking: Option<Value> = None;
    let mut output_config: Option<Value> = None;
    match reasoning {
        None if model.reasoning => thinking = Some(json!({"type": "disabled"})),
        None => {}
        Some(level) if adaptive && model.reasoning => {
            thinking = Some(json!({"type": "adaptive", "display": "summarized"}));
            output_config = Some(json!({"effort": adaptive_effort(model, level)}));
        }
        Some(_) if adaptive => {}
        Some(level) => {
            // pi grows max_tokens by the budget whenever a level is requested.
            let mut budget = level.default_budget();
            max_tokens = (max_tokens + budget).min(model.max_tokens);
            if max_tokens <= budget {
                budget = max_tokens.saturating_sub(1024);
            }
            let budget = if budget == 0 { 1024 } else { budget };
            if model.reasoning {
                thinking = Some(json!({
                    "type": "enabled", "budget_tokens": budget, "display": "summarized"
                }));
            }
        }
    }
    if max_tokens == 0 {
        max_tokens = model.max_tokens / 3;
    }

    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert(
        "messages".into(),
        Value::Array(convert_messages(
            &context.messages,
            model,
            oauth,
            cache.as_ref(),
        )),
    );
    body.insert("max_tokens".into(), json!(max_tokens));
    body.insert("stream".into(), json!(true));
    let system_block = |text: &str| {
        let mut b = json!({"type": "text", "text": text});
        if let Some(c) = &cache {
            b["cache_control"] = c.clone();
        }
        b
    };
    let mut system = Vec::new();
    if oauth {
        system.push(system_block(CLAUDE_CODE_IDENTITY));
    }
    if let Some(sp) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        system.push(system_block(sp));
    }
    if !system.is_empty() {
        body.insert("system".into(), Value::Array(system));
    }
    if let (Some(t), false) = (options.temperature, reasoning.is_some()) {
        body.insert("temperature".into(), json!(t));
    }
    if !context.tools.is_empty() {
        body.insert(
            "tools".into(),
            convert_tools(&context.tools, oauth, eager_tools, cache.as_ref()),
        );
    }
    if let Some(t) = thinking {
        body.insert("thinking".into(), t);
    }
    if let Some(o) = output_config {
        body.insert("output_config".into(), o);
    }

    let url = format!("{}/v1/messages", model.base_url.trim_end_matches('/'));
    (url, headers, Value::Object(body))
}

/// The adaptive-thinking effort for a level: the model's `thinkingLevelMap` wins.
fn adaptive_effort(model: &Model, level: ThinkingLevel) -> String {
    let mapped = model
        .thinking_level_map
        .as_ref()
        .and_then(|m| m.get(level.as_str()));
    if let Some(Value::String(s)) = mapped {
        return s.clone();
    }
    match level {
        ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        _ => "high",
    }
    .to_string()
}

fn image_block(img: &ImageContent) -> Value {
    json!({
        "type": "image",
        "source": {"type": "base64", "media_type": img.mime_type, "data": img.data},
    })
}

/// A tool result's content: a plain string when there are no images, blocks otherwise.
fn tool_result_content(content: &[Content]) -> Value {
    let has_images = content.iter().any(|c| matches!(c, Content::Image(_)));
    if !has_images {
        let texts: Vec<&str> = content
            .iter()
            .filter_map(|c| match c {
                Content::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect();
        return json!(texts.join("\n"));
    }
    let mut blocks: Vec<Value> = content
        .iter()
        .filter_map(|c| match c {
            Content::Text(t) => Some(json!({"type": "text", "text": t.text})),
            Content::Image(i) => Some(image_block(i)),
            _ => None,
        })
        .collect();
    if !blocks.iter().any(|b| b["type"] == "text") {
        blocks.insert(0, json!({"type": "text", "text": "(see attached image)"}));
    }
    Value::Array(blocks)
}

fn convert_messages(
    messages: &[Message],
    model: &Model,
    oauth: bool,
    cache: Option<&Value>,
) -> Vec<Value> {
    let transformed = transform_messages(messages, model, Some(&normalize_id));
    let mut out: Vec<Value> = Vec::new();
    let mut i = 0;
    while i < transformed.len() {
        match &transformed[i] {
            Message::User(u) => match &u.content {
                UserContent::Text(s) => {
                    if !s.trim().is_empty() {
                        out.push(json!({"role": "user", "content": s}));
                    }
                }
                UserContent::Blocks(blocks) => {
                    let blocks: Vec<Value> = blocks
                        .iter()
                        .filter_map(|b| match b {
                            Content::Text(t) if !t.text.trim().is_empty() => {
                                Some(json!({"type": "text", "text": t.text}))
                            }
                            Content::Image(img) => Some(image_block(img)),
                            _ => None,
                        })
                        .collect();
                    if !blocks.is_empty() {
                        out.push(json!({"role": "user", "content": blocks}));
                    }
                }
            },
            Message::Assistant(a) => {
                let mut blocks = Vec::new();
                for block in &a.content {
                    match block {
                        Content::Text(t) if !t.text.trim().is_empty() => {
                            blocks.push(json!({"type": "text", "text": t.text}));
                        }
                        Content::Thinking(t) if t.redacted => blocks.push(json!({
                            "type": "redacted_thinking",
                            "data": t.thinking_signature.clone().unwrap_or_default(),
                        })),
                        Content::Thinking(t) if !t.thinking.trim().is_empty() => {
                            match t
                                .thinking_signature
                                .as_deref()
                                .filter(|s| !s.trim().is_empty())
                            {
                                Some(sig) => blocks.push(json!({
                                    "type": "thinking", "thinking": t.thinking, "signature": sig,
                                })),
                                None => blocks.push(json!({"type": "text", "text": t.thinking})),
                            }
                        }
                        Content::ToolCall(tc) => {
                            let name = if oauth {
                                to_claude_code_name(&tc.name)
                            } else {
                                tc.name.clone()
                            };
                            let input = if tc.arguments.is_null() {
                                json!({})
                            } else {
                                tc.arguments.clone()
                            };
                            blocks.push(json!({
                                "type": "tool_use", "id": tc.id, "name": name, "input": input,
                            }));
                        }
                        _ => {}
                    }
                }
                if !blocks.is_empty() {
                    out.push(json!({"role": "assistant", "content": blocks}));
                }
            }
            Message::ToolResult(_) => {
                // Consecutive tool results travel together in one user message.
                let mut results = Vec::new();
                while let Some(Message::ToolResult(r)) = transformed.get(i) {
                    results.push(json!({
                        "type": "tool_result",
                        "tool_use_id": r.tool_call_id,
                        "content": tool_result_content(&r.content),
                        "is_error": r.is_error,
                    }));
                    i += 1;
                }
                out.push(json!({"role": "user", "content": results}));
                continue;
            }
        }
        i += 1;
    }

    // Cache the conversation so far: mark the last block of a trailing user message.
    if let (Some(cache), Some(last)) = (cache, out.last_mut()) {
        if last["role"] == "user" {
            match &mut last["content"] {
                Value::Array(blocks) => {
                    if let Some(b) = blocks.last_mut() {
                        if matches!(b["type"].as_str(), Some("text" | "image" | "tool_result")) {
                            b["cache_control"] = cache.clone();
                        }
                    }
                }
                Value::String(s) => {
                    let text = std::mem::take(s);
                    last["content"] =
                        json!([{"type": "text", "text": text, "cache_control": cache.clone()}]);
                }
                _ => {}
            }
        }
    }
    out
}

fn convert_tools(tools: &[ToolSpec], oauth: bool, eager: bool, cache: Option<&Value>) -> Value {
    let n = tools.len();
    let list = tools
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut o = Map::new();
            let name = if oauth {
                to_claude_code_name(&t.name)
            } else {
                t.name.clone()
            };
            o.insert("name".into(), json!(name));
            o.insert("description".into(), json!(t.description));
            if eager {
                o.insert("eager_input_streaming".into(), json!(true));
            }
            let props = t
                .parameters
                .get("properties")
                .cloned()
                .unwrap_or_else(|| json!({}));
            let required = t
                .parameters
                .get("required")
                .cloned()
                .unwrap_or_else(|| json!([]));
            o.insert(
                "input_schema".into(),
                json!({"type": "object", "properties": props, "required": required}),
            );
            if let (Some(c), true) = (cache, i + 1 == n) {
                o.insert("cache_control".into(), c.clone());
            }
            Value::Object(o)
        })
        .collect();
    Value::Array(list)
}

fn map_stop_reason(reason: &str) -> Result<StopReason, String> {
    match reason {
        "end_turn" | "pause_turn" | "stop_sequence" => Ok(StopReason::Stop),
        "max_tokens" => Ok(StopReason::Length),
        "tool_use" => Ok(StopReason::ToolUse),
        "refusal" | "sensitive" => Ok(StopReason::Error),
        other => Err(format!("Unhandled stop reason: {other}")),
    }
}

/// Parses an Anthropic SSE stream into `w` (no pricing, API-key tool names).
pub fn parse_stream<R: Read>(reader: R, w: &mut StreamWriter) -> Result<(), String> {
    parse_stream_with(reader, w, &ModelCost::default(), None)
}

/// State of one streamed content block: its wire index and, for tool calls, the raw JSON.
struct OpenBlock {
    wire: u64,
    content: usize,
    json: String,
}

/// Reads the usage counters of a `usage` object into `usage`; absent or null fields keep their
/// previous value, as pi does for proxies that omit them in `message_delta`.
fn read_usage(usage: &mut Usage, u: &Value, cost: &ModelCost) {
    let field = |k: &str| u.get(k).and_then(Value::as_u64);
    if let Some(v) = field("input_tokens") {
        usage.input = v;
    }
    if let Some(v) = field("output_tokens") {
        usage.output = v;
    }
    if let Some(v) = field("cache_read_input_tokens") {
        usage.cache_read = v;
    }
    if let Some(v) = field("cache_creation_input_tokens") {
        usage.cache_write = v;
    }
    usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write;
    usage.apply_pricing(cost);
}

fn clip(s: &str) -> String {
    if s.chars().count() <= 200 {
        return s.to_string();
    }
    let head: String = s.chars().take(200).collect();
    format!("{head}…")
}

/// Parses an Anthropic SSE stream into `w`, pricing usage with `cost`. With `oauth_tools`, tool
/// names coming back in Claude Code casing are mapped to the caller's tool names.
pub fn parse_stream_with<R: Read>(
    reader: R,
    w: &mut StreamWriter,
    cost: &ModelCost,
    oauth_tools: Option<&[ToolSpec]>,
) -> Result<(), String> {
    w.start();
    let abort = w.abort.clone();
    let mut blocks: Vec<OpenBlock> = Vec::new();
    let mut saw_stop = false;
    let mut raw_stop = String::new();
    read_events(reader, &abort, |ev| {
        if ev.event == "error" {
            return Err(stream_error_message(&ev.data));
        }
        let known = [
            "",
            "message_start",
            "message_delta",
            "message_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
        ];
        if !known.contains(&ev.event.as_str()) {
            return Ok(true);
        }
        let name = if ev.event.is_empty() {
            "(unnamed)"
        } else {
            ev.event.as_str()
        };
        let v: Value = serde_json::from_str(&ev.data).map_err(|e| {
            format!(
                "Could not parse Anthropic SSE event {name}: {e}; data={}",
                clip(&ev.data)
            )
        })?;
        let typ = v.get("type").and_then(Value::as_str).unwrap_or("");
        let wire = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        match typ {
            "error" => return Err(stream_error_message(&ev.data)),
            "message_start" => {
                let msg = &v["message"];
                if let Some(id) = msg.get("id").and_then(Value::as_str) {
                    w.partial.response_id = Some(id.to_string());
                }
                w.partial.usage = Usage::default();
                read_usage(&mut w.partial.usage, &msg["usage"], cost);
            }
            "content_block_start" => {
                let cb = &v["content_block"];
                let idx = match cb.get("type").and_then(Value::as_str).unwrap_or("") {
                    "text" => w.text_start(),
                    "thinking" => {
                        let i = w.thinking_start();
                        set_signature(w, i, Some(String::new()));
                        i
                    }
                    "redacted_thinking" => {
                        let i = w.thinking_start();
                        if let Some(Content::Thinking(t)) = w.partial.content.get_mut(i) {
                            t.thinking = "[Reasoning redacted]".into();
                            t.thinking_signature =
                                cb.get("data").and_then(Value::as_str).map(String::from);
                            t.redacted = true;
                        }
                        i
                    }
                    "tool_use" => {
                        let id = cb.get("id").and_then(Value::as_str).unwrap_or("");
                        let raw = cb.get("name").and_then(Value::as_str).unwrap_or("");
                        let name = match oauth_tools {
                            Some(tools) => from_claude_code_name(raw, tools),
                            None => raw.to_string(),
                        };
                        let i = w.toolcall_start(id, &name);
                        if let Some(input) = cb.get("input").filter(|x| x.is_object()) {
                            w.toolcall_set_arguments(i, input.clone());
                        }
                        i
                    }
                    _ => return Ok(true),
                };
                blocks.push(OpenBlock {
                    wire,
                    content: idx,
                    json: String::new(),
                });
            }
            "content_block_delta" => {
                let Some(b) = blocks.iter_mut().find(|b| b.wire == wire) else {
                    return Ok(true);
                };
                let d = &v["delta"];
                let s = |k: &str| d.get(k).and_then(Value::as_str).unwrap_or("");
                let idx = b.content;
                match (s("type"), w.partial.content.get(idx)) {
                    ("text_delta", Some(Content::Text(_))) => w.text_delta(idx, s("text")),
                    ("thinking_delta", Some(Content::Thinking(_))) => {
                        w.thinking_delta(idx, s("thinking"))
                    }
                    ("input_json_delta", Some(Content::ToolCall(_))) => {
                        b.json.push_str(s("partial_json"));
                        w.toolcall_delta(idx, s("partial_json"));
                    }
                    ("signature_delta", Some(Content::Thinking(t))) => {
                        let sig = t.thinking_signature.clone().unwrap_or_default() + s("signature");
                        set_signature(w, idx, Some(sig));
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(pos) = blocks.iter().position(|b| b.wire == wire) {
                    let b = blocks.remove(pos);
                    if matches!(w.partial.content.get(b.content), Some(Content::ToolCall(_))) {
                        let args = parse_partial_json(&b.json);
                        if !b.json.trim().is_empty() {
                            w.toolcall_set_arguments(b.content, args);
                        }
                    }
                    w.end_block(b.content);
                }
            }
            "message_delta" => {
                if let Some(r) = v["delta"].get("stop_reason").and_then(Value::as_str) {
                    w.partial.stop_reason = map_stop_reason(r)?;
                    raw_stop = r.to_string();
                }
                if let Some(u) = v.get("usage") {
                    read_usage(&mut w.partial.usage, u, cost);
                }
            }
            "message_stop" => {
                saw_stop = true;
                return Ok(false);
            }
            _ => {}
        }
        Ok(true)
    })?;
    if !saw_stop {
        return Err(
            "Connection lost: stream ended before the response was complete (no message_stop)"
                .into(),
        );
    }
    if w.partial.stop_reason == StopReason::Error {
        return Err(format!(
            "The model stopped without an answer (stop_reason: {raw_stop})"
        ));
    }
    Ok(())
}

fn set_signature(w: &mut StreamWriter, index: usize, sig: Option<String>) {
    if let Some(Content::Thinking(t)) = w.partial.content.get_mut(index) {
        t.thinking_signature = sig;
    }
}

/// The readable message of an in-stream `error` event (`{"error":{"type","message"}}`).
fn stream_error_message(data: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(data).ok();
    let err = parsed.as_ref().map(|v| v.get("error").unwrap_or(v));
    match err.and_then(|e| e.get("message")).and_then(Value::as_str) {
        Some(m) => m.to_string(),
        None if data.trim().is_empty() => "Anthropic stream error (no details)".into(),
        None => format!("Anthropic stream error: {}", clip(data)),
    }
}

/// Helpers shared by the provider tests of this module and `google`.
#[cfg(test)]
pub(crate) mod test_support {
    use std::io::Read;

    use crate::ai::stream::{Abort, StreamWriter};
    use crate::ai::types::*;

    /// Read sizes to replay a fixture with: byte by byte, small odd chunks, mixed, whole.
    pub const CHUNKINGS: &[&[usize]] = &[
        &[1],
        &[2],
        &[3],
        &[7],
        &[64],
        &[1, 5, 2, 13, 4],
        &[usize::MAX],
    ];

    pub fn test_model(id: &str, api: &str, provider: &str, base_url: &str) -> Model {
        Model {
            id: id.into(),
            name: id.into(),
            api: api.into(),
            provider: provider.into(),
            base_url: base_url.into(),
            reasoning: true,
            input: vec!["text".into(), "image".into()],
            cost: ModelCost {
                input: 3.0,
                output: 15.0,
                cache_read: 0.3,
                cache_write: 3.75,
            },
            context_window: 200_000,
            max_tokens: 64_000,
            thinking_level_map: None,
            headers: None,
            compat: None,
        }
    }

    pub fn fixture(dir: &str, name: &str) -> Vec<u8> {
        let path = format!("{}/fixtures/{dir}/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// A reader that hands out the bytes in reads of the given sizes, cycling.
    pub struct Chunked<'a> {
        data: &'a [u8],
        sizes: &'a [usize],
        n: usize,
    }

    impl Read for Chunked<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let want = self.sizes[self.n % self.sizes.len()];
            self.n += 1;
            let k = want.min(buf.len()).min(self.data.len());
            buf[..k].copy_from_slice(&self.data[..k]);
            self.data = &self.data[k..];
            Ok(k)
        }
    }

    /// Runs `parse` over `bytes` read in `sizes` chunks and returns every event, terminal
    /// included (finished the way `spawn_stream` finishes).
    pub fn run_parser(
        bytes: &[u8],
        sizes: &[usize],
        model: &Model,
        parse: impl FnOnce(Chunked<'_>, &mut StreamWriter) -> Result<(), String>,
    ) -> Vec<AssistantEvent> {
        let (tx, rx) = crossbeam_channel::unbounded();
        let mut w = StreamWriter::new(tx, model, Abort::new());
        match parse(
            Chunked {
                data: bytes,
                sizes,
                n: 0,
            },
            &mut w,
        ) {
            Ok(()) => w.finish(),
            Err(e) => w.fail(&e),
        }
        drop(w);
        rx.iter().collect()
    }

    /// One line per event: kind, content index and payload.
    pub fn summary(events: &[AssistantEvent]) -> Vec<String> {
        use AssistantEvent as E;
        events
            .iter()
            .map(|e| match e {
                E::Start { .. } => "start".to_string(),
                E::TextStart { index, .. } => format!("text_start {index}"),
                E::TextDelta { index, delta, .. } => format!("text_delta {index} {delta}"),
                E::TextEnd { index, content, .. } => format!("text_end {index} {content}"),
                E::ThinkingStart { index, .. } => format!("thinking_start {index}"),
                E::ThinkingDelta { index, delta, .. } => format!("thinking_delta {index} {delta}"),
                E::ThinkingEnd { index, content, .. } => format!("thinking_end {index} {content}"),
                E::ToolCallStart { index, .. } => format!("toolcall_start {index}"),
                E::ToolCallDelta { index, delta, .. } => format!("toolcall_delta {index} {delta}"),
                E::ToolCallEnd {
                    index,
                    tool_call: t,
                    ..
                } => {
                    format!("toolcall_end {index} {} {} {}", t.id, t.name, t.arguments)
                }
                E::Done { reason, .. } => format!("done {}", reason.as_str()),
                E::Error { reason, error, .. } => format!(
                    "error {} {}",
                    reason.as_str(),
                    error.error_message.clone().unwrap_or_default()
                ),
            })
            .collect()
    }

    pub fn final_message(events: &[AssistantEvent]) -> AssistantMessage {
        match events.last() {
            Some(AssistantEvent::Done { message, .. }) => message.clone(),
            Some(AssistantEvent::Error { error, .. }) => error.clone(),
            other => panic!("stream did not terminate: {other:?}"),
        }
    }

    pub fn untimed(mut m: AssistantMessage) -> AssistantMessage {
        m.timestamp = 0;
        m
    }

    pub fn tool_result(id: &str, name: &str, content: Vec<Content>, is_error: bool) -> Message {
        Message::ToolResult(ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: name.into(),
            content,
            details: None,
            is_error,
            timestamp: 0,
            extra: Extra::new(),
        })
    }

    fn tool(name: &str, description: &str, param: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters: serde_json::json!({
                "type": "object",
                "properties": {param: {"type": "string"}},
                "required": [param],
            }),
        }
    }

    pub fn read_tool() -> ToolSpec {
        tool("read", "Read a file", "path")
    }

    pub fn bash_tool() -> ToolSpec {
        tool("bash", "Run a command", "command")
    }

    /// Serves one HTTP response on a local port; the handle yields the raw request received.
    pub fn serve_once(
        status: &str,
        extra_headers: &str,
        body: Vec<u8>,
    ) -> (String, std::thread::JoinHandle<String>) {
        use std::io::Write;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let head = format!(
            "HTTP/1.1 {status}\r\ncontent-type: text/event-stream\r\n{extra_headers}content-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        let handle = std::thread::spawn(move || {
            let (mut sock, _) = listener.accept().expect("accept");
            let mut req = Vec::new();
            let mut buf = [0u8; 4096];
            // Read the head, then as much body as content-length announces.
            loop {
                let n = sock.read(&mut buf).unwrap_or(0);
                req.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&req).to_string();
                if let Some(end) = text.find("\r\n\r\n") {
                    let len = text
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                        })
                        .unwrap_or(0);
                    if req.len() >= end + 4 + len {
                        break;
                    }
                }
                if n == 0 {
                    break;
                }
            }
            let _ = sock.write_all(head.as_bytes());
            let _ = sock.write_all(&body);
            String::from_utf8_lossy(&req).to_string()
        });
        (format!("http://{addr}"), handle)
    }

    pub fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::providers::anthropic::test_support::*;

    fn model() -> Model {
        test_model(
            "claude-sonnet-4-5",
            "anthropic-messages",
            "anthropic",
            "https://api.anthropic.com",
        )
    }

    fn run(name: &str, sizes: &[usize]) -> Vec<AssistantEvent> {
        let m = model();
        run_parser(&fixture("anthropic", name), sizes, &m, |r, w| {
            parse_stream_with(r, w, &m.cost, None)
        })
    }

    #[test]
    fn parses_plain_text() {
        let events = run("text.sse", &[usize::MAX]);
        assert_eq!(
            summary(&events),
            [
                "start",
                "text_start 0",
                "text_delta 0 Hello, ",
                "text_delta 0 wörld ✓",
                "text_end 0 Hello, wörld ✓",
                "done stop",
            ]
        );
        let m = final_message(&events);
        assert_eq!(m.text(), "Hello, wörld ✓");
        assert_eq!(m.response_id.as_deref(), Some("msg_01TextFixture"));
        assert_eq!(m.stop_reason, StopReason::Stop);
        let u = m.usage;
        assert_eq!(
            (u.input, u.output, u.cache_read, u.cache_write),
            (12, 7, 200, 100)
        );
        assert_eq!(u.total_tokens, 319);
        assert!(
            (u.cost.total - (12.0 * 3.0 + 7.0 * 15.0 + 200.0 * 0.3 + 100.0 * 3.75) / 1e6).abs()
                < 1e-12
        );
    }

    #[test]
    fn parses_thinking_signature_and_redacted_thinking() {
        let events = run("thinking.sse", &[usize::MAX]);
        assert_eq!(
            summary(&events),
            [
                "start",
                "thinking_start 0",
                "thinking_delta 0 Let me think",
                "thinking_delta 0  about it.",
                "thinking_end 0 Let me think about it.",
                "thinking_start 1",
                "thinking_end 1 [Reasoning redacted]",
                "text_start 2",
                "text_delta 2 The answer is 42.",
                "text_end 2 The answer is 42.",
                "done length",
            ]
        );
        let m = final_message(&events);
        let Content::Thinking(t) = &m.content[0] else {
            panic!("thinking expected")
        };
        assert_eq!(
            t.thinking_signature.as_deref(),
            Some("EqQBCkgIARABGAIiQL2sig==")
        );
        assert!(!t.redacted);
        let Content::Thinking(r) = &m.content[1] else {
            panic!("redacted thinking expected")
        };
        assert!(r.redacted);
        assert_eq!(r.thinking_signature.as_deref(), Some("EmwKAhgBEgyredacted"));
        assert_eq!(m.usage.output, 30);
        assert_eq!(m.stop_reason, StopReason::Length);
    }

    #[test]
    fn parses_tool_call_argument_fragments() {
        let events = run("tool_call.sse", &[usize::MAX]);
        assert_eq!(
            summary(&events),
            [
                "start",
                "text_start 0",
                "text_delta 0 Reading it.",
                "text_end 0 Reading it.",
                "toolcall_start 1",
                "toolcall_delta 1 ",
                "toolcall_delta 1 {\"path\": \"sr",
                "toolcall_delta 1 c/main.rs\", \"lim",
                "toolcall_delta 1 it\": 20}",
                "toolcall_end 1 toolu_01AbC read {\"path\":\"src/main.rs\",\"limit\":20}",
                "done toolUse",
            ]
        );
        // Partial arguments are visible while streaming.
        let AssistantEvent::ToolCallDelta { partial, .. } = &events[6] else {
            panic!()
        };
        let Content::ToolCall(tc) = &partial.content[1] else {
            panic!()
        };
        assert_eq!(tc.arguments, json!({"path": "sr"}));
        let m = final_message(&events);
        assert_eq!(m.stop_reason, StopReason::ToolUse);
        assert_eq!(m.tool_calls().count(), 1);
    }

    #[test]
    fn in_stream_error_event_fails_readably() {
        let events = run("error.sse", &[usize::MAX]);
        assert_eq!(
            summary(&events),
            [
                "start",
                "text_start 0",
                "text_delta 0 Partial",
                "error error Overloaded"
            ]
        );
        let m = final_message(&events);
        assert_eq!(m.text(), "Partial");
        assert_eq!(m.usage.input, 9);
    }

    #[test]
    fn truncated_stream_is_an_error() {
        let events = run("truncated.sse", &[usize::MAX]);
        let last = summary(&events).pop().unwrap();
        assert!(
            last.starts_with("error error Connection lost: stream ended"),
            "{last}"
        );
        assert_eq!(final_message(&events).text(), "Half a sen");
    }

    #[test]
    fn malformed_chunk_names_the_event() {
        let events = run("malformed.sse", &[usize::MAX]);
        let last = summary(&events).pop().unwrap();
        assert!(
            last.starts_with("error error Could not parse Anthropic SSE event content_block_delta"),
            "{last}"
        );
    }

    #[test]
    fn fixtures_parse_identically_at_any_chunking() {
        for name in [
            "text.sse",
            "thinking.sse",
            "tool_call.sse",
            "error.sse",
            "truncated.sse",
            "malformed.sse",
        ] {
            let whole = run(name, &[usize::MAX]);
            for sizes in CHUNKINGS {
                let got = run(name, sizes);
                assert_eq!(summary(&got), summary(&whole), "{name} at {sizes:?}");
                assert_eq!(
                    untimed(final_message(&got)),
                    untimed(final_message(&whole)),
                    "{name} at {sizes:?}"
                );
            }
        }
    }

    #[test]
    fn unknown_stop_reason_is_an_error() {
        let sse = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{}}}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"weird\"},\"usage\":{}}\n\n";
        let m = model();
        let events = run_parser(sse.as_bytes(), &[usize::MAX], &m, |r, w| parse_stream(r, w));
        assert_eq!(
            summary(&events).pop().unwrap(),
            "error error Unhandled stop reason: weird"
        );
    }

    fn conversation() -> Context {
        let other = AssistantMessage {
            content: vec![
                Content::Thinking(ThinkingContent {
                    thinking: "foreign thoughts".into(),
                    thinking_signature: Some("rs_1".into()),
                    redacted: false,
                }),
                Content::ToolCall(ToolCall {
                    id: "call_abc|fc_123".into(),
                    name: "read".into(),
                    arguments: json!({"path": "a.txt"}),
                    thought_signature: None,
                }),
            ],
            stop_reason: StopReason::ToolUse,
            ..AssistantMessage::empty(&test_model("gpt-5", "openai-responses", "openai", ""))
        };
        let same = AssistantMessage {
            content: vec![
                Content::Thinking(ThinkingContent {
                    thinking: "my thoughts".into(),
                    thinking_signature: Some("sig-1".into()),
                    redacted: false,
                }),
                Content::Text(TextContent {
                    text: "Two calls.".into(),
                    text_signature: None,
                }),
                Content::ToolCall(ToolCall {
                    id: "toolu_1".into(),
                    name: "bash".into(),
                    arguments: json!({"command": "ls"}),
                    thought_signature: None,
                }),
                Content::ToolCall(ToolCall {
                    id: "toolu_2".into(),
                    name: "read".into(),
                    arguments: json!({"path": "img.png"}),
                    thought_signature: None,
                }),
            ],
            stop_reason: StopReason::ToolUse,
            ..AssistantMessage::empty(&model())
        };
        Context {
            system_prompt: Some("You are pi.".into()),
            messages: vec![
                Message::user_text("read a.txt"),
                Message::Assistant(other),
                tool_result("call_abc|fc_123", "read", vec![Content::text("A")], false),
                Message::user_text("now list and look"),
                Message::Assistant(same),
                tool_result("toolu_1", "bash", vec![Content::text("boom")], true),
                tool_result(
                    "toolu_2",
                    "read",
                    vec![Content::Image(ImageContent {
                        data: "iVBOR".into(),
                        mime_type: "image/png".into(),
                    })],
                    false,
                ),
            ],
            tools: vec![read_tool(), bash_tool()],
        }
    }

    #[test]
    fn build_request_replays_tool_calls_and_grouped_results() {
        let mut opts = StreamOptions {
            api_key: "sk-ant-api03-key".into(),
            ..Default::default()
        };
        opts.headers.push(("X-Extra".into(), "1".into()));
        let (url, headers, body) = build_request(&model(), &conversation(), &opts);
        assert_eq!(url, "https://api.anthropic.com/v1/messages");
        assert_eq!(
            headers,
            pairs(&[
                ("accept", "application/json"),
                ("anthropic-dangerous-direct-browser-access", "true"),
                ("anthropic-beta", "interleaved-thinking-2025-05-14"),
                ("X-Extra", "1"),
                ("x-api-key", "sk-ant-api03-key"),
                ("anthropic-version", "2023-06-01"),
            ])
        );
        let eph = json!({"type": "ephemeral"});
        let expected = json!({
            "model": "claude-sonnet-4-5",
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "read a.txt"}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "foreign thoughts"},
                    {"type": "tool_use", "id": "call_abc_fc_123", "name": "read", "input": {"path": "a.txt"}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "call_abc_fc_123", "content": "A", "is_error": false},
                ]},
                {"role": "user", "content": [{"type": "text", "text": "now list and look"}]},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "my thoughts", "signature": "sig-1"},
                    {"type": "text", "text": "Two calls."},
                    {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}},
                    {"type": "tool_use", "id": "toolu_2", "name": "read", "input": {"path": "img.png"}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "boom", "is_error": true},
                    {"type": "tool_result", "tool_use_id": "toolu_2", "content": [
                        {"type": "text", "text": "(see attached image)"},
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}},
                    ], "is_error": false, "cache_control": eph},
                ]},
            ],
            "max_tokens": 32000,
            "stream": true,
            "system": [{"type": "text", "text": "You are pi.", "cache_control": eph}],
            "tools": [
                {"name": "read", "description": "Read a file", "eager_input_streaming": true,
                 "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
                {"name": "bash", "description": "Run a command", "eager_input_streaming": true,
                 "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
                 "cache_control": eph},
            ],
            "thinking": {"type": "disabled"},
        });
        assert_eq!(body, expected);
    }

    #[test]
    fn build_request_budget_thinking_drops_temperature() {
        let ctx = Context {
            messages: vec![Message::user_text("hi")],
            ..Default::default()
        };
        let opts = StreamOptions {
            api_key: "k".into(),
            reasoning: Some(ThinkingLevel::Medium),
            temperature: Some(0.5),
            ..Default::default()
        };
        let (_, _, body) = build_request(&model(), &ctx, &opts);
        assert_eq!(body["max_tokens"], json!(32000 + 8192));
        assert_eq!(
            body["thinking"],
            json!({"type": "enabled", "budget_tokens": 8192, "display": "summarized"})
        );
        assert!(body.get("temperature").is_none());
        assert_eq!(
            body["messages"],
            json!([{"role": "user", "content": [
                {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}
            ]}])
        );
        // Without reasoning the temperature is sent.
        let opts = StreamOptions {
            reasoning: None,
            max_tokens: Some(100),
            ..opts
        };
        let (_, _, body) = build_request(&model(), &ctx, &opts);
        assert_eq!(body["temperature"], json!(0.5));
        assert_eq!(body["max_tokens"], json!(100));
    }

    #[test]
    fn build_request_adaptive_thinking_with_oauth() {
        let mut m = model();
        m.id = "claude-opus-4-6".into();
        let mut map = Map::new();
        map.insert("xhigh".into(), json!("max"));
        m.thinking_level_map = Some(map);
        let ctx = Context {
            system_prompt: Some("sys".into()),
            messages: vec![Message::user_text("hi")],
            tools: vec![read_tool()],
        };
        let opts = StreamOptions {
            api_key: "sk-ant-oat01-token".into(),
            reasoning: Some(ThinkingLevel::Xhigh),
            ..Default::default()
        };
        let (_, headers, body) = build_request(&m, &ctx, &opts);
        assert!(headers.contains(&(
            "anthropic-beta".into(),
            "claude-code-20250219,oauth-2025-04-20".into()
        )));
        assert!(headers.contains(&("authorization".into(), "Bearer sk-ant-oat01-token".into())));
        assert!(!headers.iter().any(|(k, _)| k == "x-api-key"));
        assert_eq!(
            body["thinking"],
            json!({"type": "adaptive", "display": "summarized"})
        );
        assert_eq!(body["output_config"], json!({"effort": "max"}));
        assert_eq!(body["system"][0]["text"], json!(CLAUDE_CODE_IDENTITY));
        assert_eq!(body["system"][1]["text"], json!("sys"));
        assert_eq!(body["tools"][0]["name"], json!("Read"));
        assert_eq!(body["max_tokens"], json!(32000));
    }

    #[test]
    fn abort_ends_the_stream_as_aborted() {
        let m = model();
        let events = run_parser(&fixture("anthropic", "text.sse"), &[1], &m, |r, w| {
            w.abort.abort();
            parse_stream(r, w)
        });
        assert_eq!(
            summary(&events),
            ["start", "error aborted Request was aborted"]
        );
    }

    #[test]
    fn stream_posts_to_the_messages_endpoint() {
        let (base, server) = serve_once("200 OK", "", fixture("anthropic", "tool_call.sse"));
        let mut m = model();
        m.base_url = base;
        let ctx = Context {
            messages: vec![Message::user_text("hi")],
            ..Default::default()
        };
        let opts = StreamOptions {
            api_key: "sk-test".into(),
            ..Default::default()
        };
        let events: Vec<AssistantEvent> = stream(&m, &ctx, &opts, Abort::new()).iter().collect();
        assert_eq!(summary(&events).pop().unwrap(), "done toolUse");
        let req = server.join().unwrap().to_ascii_lowercase();
        assert!(req.starts_with("post /v1/messages "), "{req}");
        assert!(req.contains("x-api-key: sk-test"));
        assert!(req.contains("anthropic-version: 2023-06-01"));
        assert!(req.contains("\"stream\":true"));
    }

    #[test]
    fn stream_reports_http_errors_with_retry_after() {
        let body =
            br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        let (base, server) = serve_once("529 Overloaded", "retry-after: 2\r\n", body.to_vec());
        let mut m = model();
        m.base_url = base;
        let events: Vec<AssistantEvent> = stream(
            &m,
            &Context::default(),
            &StreamOptions::default(),
            Abort::new(),
        )
        .iter()
        .collect();
        server.join().unwrap();
        match events.last() {
            Some(AssistantEvent::Error {
                error,
                retry_after_ms,
                ..
            }) => {
                assert_eq!(error.error_message.as_deref(), Some("529 Overloaded"));
                assert_eq!(*retry_after_ms, Some(2000));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn cut_anywhere_never_panics_and_always_terminates() {
        let m = model();
        for name in ["thinking.sse", "tool_call.sse"] {
            let bytes = fixture("anthropic", name);
            // An event needs its closing blank line (SSE spec), so any cut short of the end is
            // an incomplete stream.
            let complete = bytes.len();
            for cut in 0..bytes.len() {
                let events =
                    run_parser(&bytes[..cut], &[usize::MAX], &m, |r, w| parse_stream(r, w));
                match events.last() {
                    Some(AssistantEvent::Error {
                        reason: StopReason::Error,
                        ..
                    }) if cut < complete => {}
                    Some(AssistantEvent::Done { .. }) if cut >= complete => {}
                    other => panic!("{name} cut at {cut}: {other:?}"),
                }
            }
        }
    }

    #[test]
    fn normalizes_foreign_tool_call_ids() {
        assert_eq!(normalize_id("call_abc|fc/1.2"), "call_abc_fc_1_2");
        assert_eq!(normalize_id(&"x".repeat(80)).len(), 64);
    }
}
