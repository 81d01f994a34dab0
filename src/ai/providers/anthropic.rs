//! The Anthropic Messages API (`anthropic-messages`): builds the `POST /v1/messages` request
//! exactly as pi does (system prompt and last user block marked for prompt caching, tool results
//! grouped into one user turn, budget or adaptive thinking, API-key or OAuth headers) and
//! translates the SSE stream (`message_start` … `message_stop`) into `AssistantEvent`s.

use std::borrow::Cow;
use std::io::Read;

use crossbeam_channel::Receiver;
use serde_json::{json, Map, Value};

use super::hot::{or_empty, AnthropicBlockDelta, AnthropicDelta};
use crate::ai::error::ProviderError;
use crate::ai::partial_json::parse_partial_json;
use crate::ai::provider_retry::{self, Rules};
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
    let body = options.payload(body);
    let cost = model.cost;
    let oauth_tools = is_oauth_token(&options.api_key).then(|| context.tools.clone());
    let retry = options.provider_retry;
    spawn_stream(model, abort, move |w| {
        let resp = provider_retry::post_json(w, Rules::OpenAiSdk, &retry, &url, &headers, &body)
            .map_err(|e| w.http_error(e))?;
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

fn map_stop_reason(reason: &str) -> Result<StopReason, ProviderError> {
    match reason {
        "end_turn" | "pause_turn" | "stop_sequence" => Ok(StopReason::Stop),
        "max_tokens" => Ok(StopReason::Length),
        "tool_use" => Ok(StopReason::ToolUse),
        "refusal" | "sensitive" => Ok(StopReason::Error),
        other => Err(format!("Unhandled stop reason: {other}").into()),
    }
}

/// Parses an Anthropic SSE stream into `w` (no pricing, API-key tool names).
pub fn parse_stream<R: Read>(reader: R, w: &mut StreamWriter) -> Result<(), ProviderError> {
    parse_stream_with(reader, w, &ModelCost::default(), None)
}

/// State of one streamed content block: its wire index and, for tool calls, the raw JSON.
/// Applies a `content_block_delta` to the open block it names (`wire` is its `index`).
fn block_delta(w: &mut StreamWriter, blocks: &mut [OpenBlock], wire: u64, d: &AnthropicDelta) {
    let Some(b) = blocks.iter_mut().find(|b| b.wire == wire) else {
        return;
    };
    let idx = b.content;
    // Absent and non-string fields read as "".
    match (or_empty(&d.kind), w.partial.content.get(idx)) {
        ("text_delta", Some(Content::Text(_))) => w.text_delta(idx, or_empty(&d.text)),
        ("thinking_delta", Some(Content::Thinking(_))) => {
            w.thinking_delta(idx, or_empty(&d.thinking))
        }
        ("input_json_delta", Some(Content::ToolCall(_))) => {
            b.json.push_str(or_empty(&d.partial_json));
            w.toolcall_delta(idx, or_empty(&d.partial_json));
        }
        ("signature_delta", Some(Content::Thinking(t))) => {
            let sig = t.thinking_signature.clone().unwrap_or_default() + or_empty(&d.signature);
            set_signature(w, idx, Some(sig));
        }
        _ => {}
    }
}

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
    if let Some(v) = u
        .pointer("/cache_creation/ephemeral_1h_input_tokens")
        .and_then(Value::as_u64)
    {
        usage.cache_write_1h = Some(v);
    }
    usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write;
    usage.mark_reported();
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
) -> Result<(), ProviderError> {
    // The start event carries the input usage of Anthropic's `message_start` (not yet its id),
    // as pi's does: its consumer reads the message once that first SSE event is parsed.
    let mut started = false;
    let abort = w.abort.clone();
    let mut blocks: Vec<OpenBlock> = Vec::new();
    let mut saw_stop = false;
    let mut raw_stop = String::new();
    let read = read_events(reader, &abort, |ev| {
        if ev.event == "error" {
            return Err(stream_error(&ev.data));
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
        if let Ok(hot) = serde_json::from_str::<AnthropicBlockDelta>(&ev.data) {
            if hot.kind == "content_block_delta" {
                if !started {
                    started = true;
                    w.start();
                }
                block_delta(w, &mut blocks, hot.index.unwrap_or(0), &hot.delta);
                return Ok(true);
            }
        }
        let v: Value = serde_json::from_str(&ev.data).map_err(|e| {
            format!(
                "Could not parse Anthropic SSE event {name}: {e}; data={}",
                clip(&ev.data)
            )
        })?;
        let typ = v.get("type").and_then(Value::as_str).unwrap_or("");
        let wire = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        if typ != "message_start" && !started {
            started = true;
            w.start();
        }
        match typ {
            "error" => return Err(stream_error(&ev.data)),
            "message_start" => {
                let msg = &v["message"];
                // pi 1.x records the one-hour share of cache writes for every Anthropic reply.
                w.partial.usage = Usage {
                    cache_write_1h: Some(0),
                    ..Usage::default()
                };
                read_usage(&mut w.partial.usage, &msg["usage"], cost);
                // Before `start`, so `message_start` carries the id as pi's does.
                if let Some(id) = msg.get("id").and_then(Value::as_str) {
                    w.partial.response_id = Some(id.to_string());
                }
                if !started {
                    started = true;
                    w.start();
                }
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
                let d = &v["delta"];
                let s = |k: &str| d.get(k).and_then(Value::as_str).map(Cow::Borrowed);
                let delta = AnthropicDelta {
                    kind: s("type"),
                    text: s("text"),
                    thinking: s("thinking"),
                    partial_json: s("partial_json"),
                    signature: s("signature"),
                };
                block_delta(w, &mut blocks, wire, &delta);
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
                    w.partial.set_raw_stop_reason(r);
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
    });
    if !started {
        w.start();
    }
    read?;
    if !saw_stop {
        return Err(
            "Connection lost: stream ended before the response was complete (no message_stop)"
                .into(),
        );
    }
    if w.partial.stop_reason == StopReason::Error {
        return Err(
            format!("The model stopped without an answer (stop_reason: {raw_stop})").into(),
        );
    }
    Ok(())
}

fn set_signature(w: &mut StreamWriter, index: usize, sig: Option<String>) {
    if let Some(Content::Thinking(t)) = w.partial.content.get_mut(index) {
        t.thinking_signature = sig;
    }
}

/// The readable message of an in-stream `error` event (`{"error":{"type","message"}}`).
fn stream_error(data: &str) -> ProviderError {
    let parsed: Option<Value> = serde_json::from_str(data).ok();
    let err = parsed.as_ref().map(|v| v.get("error").unwrap_or(v));
    let message = match err.and_then(|e| e.get("message")).and_then(Value::as_str) {
        Some(m) => m.to_string(),
        None if data.trim().is_empty() => "Anthropic stream error (no details)".into(),
        None => format!("Anthropic stream error: {}", clip(data)),
    };
    // `request_too_large` is Anthropic's type for an overflow; the rest go by their words.
    let kind = err.and_then(|e| e.get("type")).and_then(Value::as_str);
    ProviderError::in_stream(message, kind)
}

/// Helpers shared by the provider tests of this module and `google`.
#[cfg(test)]
#[path = "tests/support.rs"]
pub(crate) mod test_support;

#[cfg(test)]
#[path = "tests/anthropic.rs"]
mod tests;
