//! The `ConverseStream` request body as pi builds it: system blocks, messages (tool results of
//! one turn grouped into one user message, reasoning replayed with its signature for Claude),
//! tool config, `inferenceConfig`, Claude thinking in `additionalModelRequestFields` (adaptive
//! for Opus 4.6+/Sonnet 4.6, otherwise a budget), and prompt-cache points for Claude models
//! that support them.

use serde_json::{json, Map, Value};

use crate::ai::transform::transform_messages;
use crate::ai::types::*;

use super::super::cloud::Env;

/// Lower-cased id and name, each also with runs of space, `_`, `.` and `:` turned into `-`.
fn match_candidates(model: &Model) -> Vec<String> {
    let mut out = Vec::new();
    for v in [&model.id, &model.name] {
        if v.is_empty() {
            continue;
        }
        let lower = v.to_lowercase();
        let mut dashed = String::new();
        let mut in_run = false;
        for c in lower.chars() {
            if matches!(c, ' ' | '_' | '.' | ':') || c.is_whitespace() {
                if !in_run {
                    dashed.push('-');
                }
                in_run = true;
            } else {
                dashed.push(c);
                in_run = false;
            }
        }
        out.push(lower);
        out.push(dashed);
    }
    out
}

pub fn is_claude(model: &Model) -> bool {
    let id = model.id.to_lowercase();
    let name = model.name.to_lowercase();
    id.contains("anthropic.claude")
        || id.contains("anthropic/claude")
        || name.contains("anthropic.claude")
        || name.contains("anthropic/claude")
        || name.contains("claude")
}

pub fn supports_adaptive_thinking(model: &Model) -> bool {
    match_candidates(model)
        .iter()
        .any(|s| s.contains("opus-4-6") || s.contains("opus-4-7") || s.contains("sonnet-4-6"))
}

fn supports_prompt_caching(model: &Model, env: Env) -> bool {
    let c = match_candidates(model);
    if !c.iter().any(|s| s.contains("claude")) {
        return env("AWS_BEDROCK_FORCE_CACHE").as_deref() == Some("1");
    }
    c.iter().any(|s| {
        s.contains("-4-") || s.contains("claude-3-7-sonnet") || s.contains("claude-3-5-haiku")
    })
}

fn is_gov_cloud(model: &Model, env: Env) -> bool {
    let region = env("AWS_REGION").or_else(|| env("AWS_DEFAULT_REGION"));
    if region.is_some_and(|r| r.to_lowercase().starts_with("us-gov-")) {
        return true;
    }
    let id = model.id.to_lowercase();
    id.starts_with("us-gov.") || id.starts_with("arn:aws-us-gov:")
}

fn effort(model: &Model, level: ThinkingLevel) -> String {
    if level == ThinkingLevel::Xhigh
        && match_candidates(model)
            .iter()
            .any(|s| s.contains("opus-4-7"))
    {
        return "xhigh".into();
    }
    if let Some(Value::String(s)) = model
        .thinking_level_map
        .as_ref()
        .and_then(|m| m.get(level.as_str()))
    {
        return s.clone();
    }
    match level {
        ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        _ => "high",
    }
    .into()
}

fn cache_point(long: bool) -> Value {
    if long {
        json!({"cachePoint": {"type": "default", "ttl": "1h"}})
    } else {
        json!({"cachePoint": {"type": "default"}})
    }
}

/// Bedrock's image format name for a MIME type.
fn image_block(img: &ImageContent) -> Result<Value, String> {
    let format = match img.mime_type.as_str() {
        "image/jpeg" | "image/jpg" => "jpeg",
        "image/png" => "png",
        "image/gif" => "gif",
        "image/webp" => "webp",
        other => return Err(format!("Unknown image type: {other}")),
    };
    // The JSON protocol carries blob members as base64, which the content already is.
    Ok(json!({"image": {"format": format, "source": {"bytes": img.data}}}))
}

fn normalize_tool_call_id(id: &str) -> String {
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

fn tool_result(r: &ToolResultMessage) -> Result<Value, String> {
    let content = r
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Image(i) => Some(image_block(i)),
            Content::Text(t) => Some(Ok(json!({"text": t.text}))),
            _ => None,
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(json!({"toolResult": {
        "toolUseId": r.tool_call_id,
        "content": content,
        "status": if r.is_error { "error" } else { "success" },
    }}))
}

fn convert_messages(
    model: &Model,
    messages: &[Message],
    cache: Option<bool>,
) -> Result<Vec<Value>, String> {
    let claude = is_claude(model);
    let transformed = transform_messages(messages, model, Some(&normalize_tool_call_id));
    let mut out: Vec<Value> = Vec::new();
    for msg in &transformed {
        match msg {
            Message::User(u) => {
                let content: Vec<Value> = match &u.content {
                    UserContent::Text(s) => vec![json!({"text": s})],
                    UserContent::Blocks(blocks) => blocks
                        .iter()
                        .filter_map(|b| match b {
                            Content::Text(t) => Some(Ok(json!({"text": t.text}))),
                            Content::Image(i) => Some(image_block(i)),
                            _ => None,
                        })
                        .collect::<Result<_, _>>()?,
                };
                out.push(json!({"role": "user", "content": content}));
            }
            Message::Assistant(a) => {
                let mut content = Vec::new();
                for block in &a.content {
                    match block {
                        Content::Text(t) if !t.text.trim().is_empty() => {
                            content.push(json!({"text": t.text}))
                        }
                        Content::ToolCall(tc) => content.push(json!({"toolUse": {
                            "toolUseId": tc.id, "name": tc.name, "input": tc.arguments,
                        }})),
                        Content::Thinking(t) if !t.thinking.trim().is_empty() => {
                            let sig = t
                                .thinking_signature
                                .as_deref()
                                .filter(|s| !s.trim().is_empty());
                            content.push(match (claude, sig) {
                                // Claude rejects unsigned reasoning on replay: send it as text.
                                (true, None) => json!({"text": t.thinking}),
                                (true, Some(s)) => json!({"reasoningContent": {
                                    "reasoningText": {"text": t.thinking, "signature": s}
                                }}),
                                (false, _) => json!({"reasoningContent": {
                                    "reasoningText": {"text": t.thinking}
                                }}),
                            });
                        }
                        _ => {}
                    }
                }
                if !content.is_empty() {
                    out.push(json!({"role": "assistant", "content": content}));
                }
            }
            Message::ToolResult(r) => {
                let block = tool_result(r)?;
                // Consecutive tool results travel in one user message.
                let grouped = out.last_mut().filter(|m| {
                    m["role"] == "user"
                        && m["content"]
                            .as_array()
                            .is_some_and(|c| c.iter().all(|b| b.get("toolResult").is_some()))
                });
                match grouped.and_then(|m| m["content"].as_array_mut()) {
                    Some(c) => c.push(block),
                    None => out.push(json!({"role": "user", "content": [block]})),
                }
            }
        }
    }
    if let Some(long) = cache {
        if let Some(last) = out.last_mut().filter(|m| m["role"] == "user") {
            if let Some(c) = last["content"].as_array_mut() {
                c.push(cache_point(long));
            }
        }
    }
    Ok(out)
}

/// `(maxTokens, thinking fields)` as pi's simple-stream options compute them.
fn thinking_and_max_tokens(
    model: &Model,
    options: &StreamOptions,
    env: Env,
) -> (Option<u64>, Option<Value>) {
    let base_max = options
        .max_tokens
        .or((model.max_tokens > 0).then(|| model.max_tokens.min(32000)));
    let Some(level) = options.reasoning.filter(|l| *l != ThinkingLevel::Off) else {
        return (base_max, None);
    };
    if !is_claude(model) {
        return (base_max, None);
    }
    let display = (!is_gov_cloud(model, env)).then_some("summarized");
    let with_display = |mut t: Value| {
        if let Some(d) = display {
            t["display"] = json!(d);
        }
        t
    };
    if supports_adaptive_thinking(model) {
        let fields = model.reasoning.then(|| {
            json!({
                "thinking": with_display(json!({"type": "adaptive"})),
                "output_config": {"effort": effort(model, level)},
            })
        });
        return (base_max, fields);
    }
    let mut budget = level.default_budget();
    let max = (base_max.unwrap_or(0) + budget).min(model.max_tokens);
    if max <= budget {
        budget = max.saturating_sub(1024);
    }
    let fields = model.reasoning.then(|| {
        json!({
            "thinking": with_display(json!({"type": "enabled", "budget_tokens": budget})),
            "anthropic_beta": ["interleaved-thinking-2025-05-14"],
        })
    });
    (Some(max), fields)
}

/// The JSON body of `POST /model/{modelId}/converse-stream`.
pub fn build_body(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    env: Env,
) -> Result<Value, String> {
    let long = env("PI_CACHE_RETENTION").as_deref() == Some("long");
    let cache = supports_prompt_caching(model, env).then_some(long);
    let mut body = Map::new();
    body.insert(
        "messages".into(),
        Value::Array(convert_messages(model, &context.messages, cache)?),
    );
    if let Some(sp) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        let mut system = vec![json!({"text": sp})];
        if let Some(long) = cache {
            system.push(cache_point(long));
        }
        body.insert("system".into(), Value::Array(system));
    }
    let (max_tokens, thinking) = thinking_and_max_tokens(model, options, env);
    let mut inference = Map::new();
    if let Some(m) = max_tokens {
        inference.insert("maxTokens".into(), json!(m));
    }
    if let Some(t) = options.temperature {
        inference.insert("temperature".into(), json!(t));
    }
    body.insert("inferenceConfig".into(), Value::Object(inference));
    if !context.tools.is_empty() {
        let tools: Vec<Value> = context
            .tools
            .iter()
            .map(|t| {
                json!({"toolSpec": {
                    "name": t.name,
                    "description": t.description,
                    "inputSchema": {"json": t.parameters},
                }})
            })
            .collect();
        body.insert("toolConfig".into(), json!({"tools": tools}));
    }
    if let Some(fields) = thinking {
        body.insert("additionalModelRequestFields".into(), fields);
    }
    Ok(Value::Object(body))
}
