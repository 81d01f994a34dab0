//! The Google Generative AI API (`google-generative-ai`): builds the
//! `models/{id}:streamGenerateContent?alt=sse` request exactly as pi (through `@google/genai`)
//! sends it — contents with `model`/`user` roles, function calls and responses, thought
//! signatures, `thinkingConfig` by level or budget — and translates the stream of
//! `GenerateContentResponse` chunks into `AssistantEvent`s. The body builder and stream parser
//! are shared with `vertex`, which differs only in URL, auth and thinking tables.

use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_channel::Receiver;
use serde_json::{json, Map, Value};

use crate::ai::error::ProviderError;
use crate::ai::provider_retry::{self, Rules};
use crate::ai::sse::read_events;
use crate::ai::stream::{spawn_stream, Abort, StreamWriter};
use crate::ai::transform::transform_messages;
use crate::ai::types::*;

use super::anthropic::merge_headers;
use super::hot::{GoogleChunk, GoogleUsage};

/// Makes generated tool-call ids unique within the process.
static TOOL_CALL_COUNTER: AtomicU64 = AtomicU64::new(0);

pub fn stream(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    abort: Abort,
) -> Receiver<AssistantEvent> {
    let (url, headers, body) = build_request(model, context, options);
    let body = options.payload(body);
    let cost = model.cost;
    let retry = options.provider_retry;
    spawn_stream(model, abort, move |w| {
        let resp = provider_retry::post_json(w, Rules::GoogleSdk, &retry, &url, &headers, &body)
            .map_err(|e| w.http_error(e))?;
        parse_stream_with(resp, w, &cost)
    })
}

/// Claude and gpt-oss models behind Google APIs need explicit tool-call ids.
fn requires_tool_call_id(model_id: &str) -> bool {
    model_id.starts_with("claude-") || model_id.starts_with("gpt-oss-")
}

/// `/gemini-3(\.\d+)?<suffix>/` on the lower-cased id.
fn is_gemini3(model_id: &str, suffix: &str) -> bool {
    let id = model_id.to_lowercase();
    id.match_indices("gemini-3").any(|(pos, m)| {
        let mut rest = &id[pos + m.len()..];
        if let Some(r) = rest.strip_prefix('.') {
            let digits = r.chars().take_while(|c| c.is_ascii_digit()).count();
            if digits > 0 {
                rest = &r[digits..];
            }
        }
        rest.starts_with(suffix)
    })
}

fn is_gemma4(model_id: &str) -> bool {
    let id = model_id.to_lowercase();
    id.contains("gemma4") || id.contains("gemma-4")
}

/// Gemini below 3 cannot nest images in a function response.
fn supports_multimodal_function_response(model_id: &str) -> bool {
    let id = model_id.to_lowercase();
    let rest = id
        .strip_prefix("gemini-live-")
        .or_else(|| id.strip_prefix("gemini-"));
    let Some(rest) = rest else { return true };
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    match digits.parse::<u32>() {
        Ok(major) => major >= 3,
        Err(_) => true,
    }
}

/// Thought signatures are base64 bytes; anything else is rejected by the API.
fn is_valid_signature(sig: &str) -> bool {
    if sig.is_empty() || sig.len() % 4 != 0 {
        return false;
    }
    let body = sig.trim_end_matches('=');
    sig.len() - body.len() <= 2
        && !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
}

/// The closest level the model supports, as pi's `clampThinkingLevel`.
fn clamp_level(model: &Model, level: ThinkingLevel) -> ThinkingLevel {
    let supported: Vec<ThinkingLevel> = if !model.reasoning {
        vec![ThinkingLevel::Off]
    } else {
        ThinkingLevel::ALL
            .into_iter()
            .filter(|l| {
                let mapped = model
                    .thinking_level_map
                    .as_ref()
                    .and_then(|m| m.get(l.as_str()));
                match (l, mapped) {
                    (_, Some(Value::Null)) => false,
                    (l, m) if l.needs_explicit_mapping() => m.is_some(),
                    _ => true,
                }
            })
            .collect()
    };
    if supported.contains(&level) {
        return level;
    }
    let all = ThinkingLevel::ALL;
    let req = all.iter().position(|l| *l == level).unwrap_or(0);
    all[req..]
        .iter()
        .chain(all[..req].iter().rev())
        .find(|l| supported.contains(l))
        .copied()
        .unwrap_or(ThinkingLevel::Off)
}

/// `thinkingLevel` for Gemini 3 / Gemma 4 models.
fn thinking_level_name(model_id: &str, effort: ThinkingLevel) -> Option<&'static str> {
    use ThinkingLevel::*;
    if is_gemini3(model_id, "-pro") {
        return match effort {
            Minimal | Low => Some("LOW"),
            Medium | High => Some("HIGH"),
            _ => None,
        };
    }
    if is_gemma4(model_id) {
        return match effort {
            Minimal | Low => Some("MINIMAL"),
            Medium | High => Some("HIGH"),
            _ => None,
        };
    }
    match effort {
        Minimal => Some("MINIMAL"),
        Low => Some("LOW"),
        Medium => Some("MEDIUM"),
        High => Some("HIGH"),
        _ => None,
    }
}

/// `thinkingBudget` for Gemini 2.x models (-1 = dynamic). Vertex has no separate
/// Flash-Lite table.
fn thinking_budget(model_id: &str, effort: ThinkingLevel, dialect: Dialect) -> Option<i64> {
    use ThinkingLevel::*;
    let table: [i64; 4] = if model_id.contains("2.5-pro") {
        [128, 2048, 8192, 32768]
    } else if dialect == Dialect::Gemini && model_id.contains("2.5-flash-lite") {
        [512, 2048, 8192, 24576]
    } else if model_id.contains("2.5-flash") {
        [128, 2048, 8192, 24576]
    } else {
        return Some(-1);
    };
    match effort {
        Minimal => Some(table[0]),
        Low => Some(table[1]),
        Medium => Some(table[2]),
        High => Some(table[3]),
        _ => None,
    }
}

fn thinking_config(
    model: &Model,
    reasoning: Option<ThinkingLevel>,
    dialect: Dialect,
) -> Option<Value> {
    if !model.reasoning {
        return None;
    }
    // Only the Gemini API's pi adapter knows Gemma 4's thinking levels.
    let gemma4 = dialect == Dialect::Gemini && is_gemma4(&model.id);
    let gemini3ish = is_gemini3(&model.id, "-pro") || is_gemini3(&model.id, "-flash") || gemma4;
    let Some(level) = reasoning else {
        // Thinking off: Gemini 3 / Gemma 4 cannot fully disable it, so use the lowest level.
        return Some(if is_gemini3(&model.id, "-pro") {
            json!({"thinkingLevel": "LOW"})
        } else if gemini3ish {
            json!({"thinkingLevel": "MINIMAL"})
        } else {
            json!({"thinkingBudget": 0})
        });
    };
    let effort = match clamp_level(model, level) {
        ThinkingLevel::Off => ThinkingLevel::High,
        l => l,
    };
    let mut cfg = json!({"includeThoughts": true});
    if gemini3ish {
        if let Some(l) = thinking_level_name(&model.id, effort) {
            cfg["thinkingLevel"] = json!(l);
        }
    } else if let Some(b) = thinking_budget(&model.id, effort, dialect) {
        cfg["thinkingBudget"] = json!(b);
    }
    Some(cfg)
}

/// Which of pi's two Google adapters a request follows; they differ only in thinking tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `google-generative-ai`.
    Gemini,
    /// `google-vertex`.
    Vertex,
}

/// The URL, headers and JSON body pi sends for this call.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> (String, Vec<(String, String)>, Value) {
    let body = build_body(model, context, options, Dialect::Gemini);
    let path = if model.id.starts_with("models/") || model.id.starts_with("tunedModels/") {
        model.id.clone()
    } else {
        format!("models/{}", model.id)
    };
    let url = format!(
        "{}/{path}:streamGenerateContent?alt=sse",
        model.base_url.trim_end_matches('/')
    );
    let base = vec![("x-goog-api-key".to_string(), options.api_key.clone())];
    let headers = merge_headers(base, model.headers.as_ref(), &options.headers);
    (url, headers, body)
}

/// The `GenerateContentRequest` body both Google APIs take.
pub fn build_body(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    dialect: Dialect,
) -> Value {
    let reasoning = options.reasoning.filter(|l| *l != ThinkingLevel::Off);
    let mut body = Map::new();
    body.insert(
        "contents".into(),
        Value::Array(convert_messages(model, &context.messages)),
    );
    if let Some(sp) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        body.insert("systemInstruction".into(), json!({"parts": [{"text": sp}]}));
    }
    if !context.tools.is_empty() {
        let decls: Vec<Value> = context
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "parametersJsonSchema": t.parameters,
                })
            })
            .collect();
        body.insert("tools".into(), json!([{"functionDeclarations": decls}]));
    }
    let mut gen = Map::new();
    if let Some(t) = options.temperature {
        gen.insert("temperature".into(), json!(t));
    }
    let max_tokens = options
        .max_tokens
        .or((model.max_tokens > 0).then(|| model.max_tokens.min(32000)));
    if let Some(m) = max_tokens {
        gen.insert("maxOutputTokens".into(), json!(m));
    }
    if let Some(cfg) = thinking_config(model, reasoning, dialect) {
        gen.insert("thinkingConfig".into(), cfg);
    }
    body.insert("generationConfig".into(), Value::Object(gen));
    Value::Object(body)
}

fn inline_data(img: &ImageContent) -> Value {
    json!({"inlineData": {"mimeType": img.mime_type, "data": img.data}})
}

fn convert_messages(model: &Model, messages: &[Message]) -> Vec<Value> {
    let needs_id = requires_tool_call_id(&model.id);
    let normalize = |id: &str| -> String {
        if !needs_id {
            return id.to_string();
        }
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
    };
    let transformed = transform_messages(messages, model, Some(&normalize));
    let mut contents: Vec<Value> = Vec::new();
    for msg in &transformed {
        match msg {
            Message::User(u) => {
                let parts: Vec<Value> = match &u.content {
                    UserContent::Text(s) => vec![json!({"text": s})],
                    UserContent::Blocks(blocks) => blocks
                        .iter()
                        .filter_map(|b| match b {
                            Content::Text(t) => Some(json!({"text": t.text})),
                            Content::Image(i) => Some(inline_data(i)),
                            _ => None,
                        })
                        .collect(),
                };
                if !parts.is_empty() {
                    contents.push(json!({"role": "user", "parts": parts}));
                }
            }
            Message::Assistant(a) => {
                let same = a.provider == model.provider && a.model == model.id;
                let sig = |s: &Option<String>| -> Option<String> {
                    s.clone().filter(|s| same && is_valid_signature(s))
                };
                let mut parts = Vec::new();
                for block in &a.content {
                    match block {
                        Content::Text(t) if !t.text.trim().is_empty() => {
                            let mut p = json!({"text": t.text});
                            if let Some(s) = sig(&t.text_signature) {
                                p["thoughtSignature"] = json!(s);
                            }
                            parts.push(p);
                        }
                        Content::Thinking(t) if !t.thinking.trim().is_empty() => {
                            if same {
                                let mut p = json!({"thought": true, "text": t.thinking});
                                if let Some(s) = sig(&t.thinking_signature) {
                                    p["thoughtSignature"] = json!(s);
                                }
                                parts.push(p);
                            } else {
                                parts.push(json!({"text": t.thinking}));
                            }
                        }
                        Content::ToolCall(tc) => {
                            let args = if tc.arguments.is_null() {
                                json!({})
                            } else {
                                tc.arguments.clone()
                            };
                            let mut fc = json!({"name": tc.name, "args": args});
                            if needs_id {
                                fc["id"] = json!(tc.id);
                            }
                            let mut p = json!({"functionCall": fc});
                            if let Some(s) = sig(&tc.thought_signature) {
                                p["thoughtSignature"] = json!(s);
                            }
                            parts.push(p);
                        }
                        _ => {}
                    }
                }
                if !parts.is_empty() {
                    contents.push(json!({"role": "model", "parts": parts}));
                }
            }
            Message::ToolResult(r) => push_tool_result(model, r, needs_id, &mut contents),
        }
    }
    contents
}

fn push_tool_result(
    model: &Model,
    r: &ToolResultMessage,
    needs_id: bool,
    contents: &mut Vec<Value>,
) {
    let text: Vec<&str> = r
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    let text = text.join("\n");
    let images: Vec<Value> = if model.supports_images() {
        r.content
            .iter()
            .filter_map(|c| match c {
                Content::Image(i) => Some(inline_data(i)),
                _ => None,
            })
            .collect()
    } else {
        Vec::new()
    };
    let nested = supports_multimodal_function_response(&model.id);
    let value = if !text.is_empty() {
        text
    } else if !images.is_empty() {
        "(see attached image)".to_string()
    } else {
        String::new()
    };
    let mut fr = json!({
        "name": r.tool_name,
        "response": if r.is_error { json!({"error": value}) } else { json!({"output": value}) },
    });
    if !images.is_empty() && nested {
        fr["parts"] = json!(images);
    }
    if needs_id {
        fr["id"] = json!(r.tool_call_id);
    }
    let part = json!({"functionResponse": fr});
    // All function responses of one turn travel in a single user message.
    let merge = contents.last().is_some_and(|c| {
        c["role"] == "user"
            && c["parts"]
                .as_array()
                .is_some_and(|ps| ps.iter().any(|p| p.get("functionResponse").is_some()))
    });
    match contents.last_mut().and_then(|c| c["parts"].as_array_mut()) {
        Some(parts) if merge => parts.push(part),
        _ => contents.push(json!({"role": "user", "parts": [part]})),
    }
    if !images.is_empty() && !nested {
        let mut parts = vec![json!({"text": "Tool result image:"})];
        parts.extend(images);
        contents.push(json!({"role": "user", "parts": parts}));
    }
}

fn map_finish_reason(reason: &str) -> StopReason {
    match reason {
        "STOP" => StopReason::Stop,
        "MAX_TOKENS" => StopReason::Length,
        _ => StopReason::Error,
    }
}

/// Parses a Google SSE stream into `w` (usage left unpriced).
pub fn parse_stream<R: Read>(reader: R, w: &mut StreamWriter) -> Result<(), ProviderError> {
    parse_stream_with(reader, w, &ModelCost::default())
}

fn clip(s: &str) -> String {
    if s.chars().count() <= 200 {
        return s.to_string();
    }
    let head: String = s.chars().take(200).collect();
    format!("{head}…")
}

/// The readable message of an in-stream `{"error":{code,message,status}}` chunk.
fn stream_error_message(err: &Value) -> String {
    let msg = err.get("message").and_then(Value::as_str);
    let code = err.get("code").and_then(Value::as_u64);
    let status = err.get("status").and_then(Value::as_str);
    match (code, msg, status) {
        (Some(c), Some(m), _) => format!("{c} {m}"),
        (None, Some(m), _) => m.to_string(),
        (_, None, Some(s)) => format!("Google stream error: {s}"),
        _ => format!("Google stream error: {}", clip(&err.to_string())),
    }
}

/// The block text is currently flowing into: its content index and whether it is thinking.
type Current = Option<(usize, bool)>;

/// Parses a Google SSE stream into `w`, pricing usage with `cost`.
pub fn parse_stream_with<R: Read>(
    reader: R,
    w: &mut StreamWriter,
    cost: &ModelCost,
) -> Result<(), ProviderError> {
    w.start();
    let abort = w.abort.clone();
    let mut current: Current = None;
    let mut finish: Option<String> = None;
    read_events(reader, &abort, |ev| {
        let data = ev.data.trim();
        if data.is_empty() {
            return Ok(true);
        }
        if let Ok(hot) = serde_json::from_str::<GoogleChunk>(data) {
            hot_chunk(w, hot, &mut current, cost);
            return Ok(true);
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| format!("Could not parse Google SSE chunk: {e}; data={}", clip(data)))?;
        if let Some(err) = chunk.get("error") {
            return Err(stream_error_message(err).into());
        }
        if w.partial.response_id.is_none() {
            if let Some(id) = chunk
                .get("responseId")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
            {
                w.partial.response_id = Some(id.to_string());
            }
        }
        let candidate = chunk.get("candidates").and_then(|c| c.get(0));
        let parts = candidate
            .and_then(|c| c.get("content"))
            .and_then(|c| c.get("parts"))
            .and_then(Value::as_array);
        for part in parts.into_iter().flatten() {
            let text = Part {
                text: part.get("text").and_then(Value::as_str),
                thought: part.get("thought").and_then(Value::as_bool) == Some(true),
                signature: part.get("thoughtSignature").and_then(Value::as_str),
            };
            handle_part(w, text, part.get("functionCall"), &mut current);
        }
        if let Some(reason) = candidate
            .and_then(|c| c.get("finishReason"))
            .and_then(Value::as_str)
        {
            w.partial.stop_reason = map_finish_reason(reason);
            w.partial.set_raw_stop_reason(reason);
            if w.partial.tool_calls().next().is_some() {
                w.partial.stop_reason = StopReason::ToolUse;
            }
            finish = Some(reason.to_string());
        }
        if let Some(u) = chunk.get("usageMetadata") {
            let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
            let counts = GoogleUsage {
                prompt_token_count: Some(n("promptTokenCount")),
                candidates_token_count: Some(n("candidatesTokenCount")),
                thoughts_token_count: Some(n("thoughtsTokenCount")),
                cached_content_token_count: Some(n("cachedContentTokenCount")),
                total_token_count: Some(n("totalTokenCount")),
            };
            set_usage(w, &counts, cost);
        }
        Ok(true)
    })?;
    if let Some((i, _)) = current {
        w.end_block(i);
    }
    match finish {
        None => Err(
            "Connection lost: stream ended before the response was complete (no finishReason)"
                .into(),
        ),
        Some(r) if w.partial.stop_reason == StopReason::Error => {
            Err(format!("The model stopped without an answer (finishReason: {r})").into())
        }
        Some(_) => Ok(()),
    }
}

/// A chunk of the hot shape: a text or thought part, perhaps usage so far.
fn hot_chunk(w: &mut StreamWriter, chunk: GoogleChunk, current: &mut Current, cost: &ModelCost) {
    if w.partial.response_id.is_none() {
        if let Some(id) = chunk.response_id.filter(|s| !s.is_empty()) {
            w.partial.response_id = Some(id.into_owned());
        }
    }
    let parts = chunk.candidates.and_then(|[c]| c.content?.parts);
    if let Some([part]) = &parts {
        let text = Part {
            text: part.text.as_deref(),
            thought: part.thought == Some(true),
            signature: part.thought_signature.as_deref(),
        };
        handle_part(w, text, None, current);
    }
    if let Some(usage) = chunk.usage_metadata {
        set_usage(w, &usage.unwrap_or_default(), cost);
    }
}

/// Usage from `usageMetadata`'s counts (absent ones are 0), priced.
fn set_usage(w: &mut StreamWriter, u: &GoogleUsage, cost: &ModelCost) {
    let n = |count: Option<u64>| count.unwrap_or(0);
    let cached = n(u.cached_content_token_count);
    let thoughts = n(u.thoughts_token_count);
    w.partial.usage = Usage {
        input: n(u.prompt_token_count).saturating_sub(cached),
        output: n(u.candidates_token_count) + thoughts,
        cache_read: cached,
        cache_write: 0,
        reasoning: Some(thoughts),
        total_tokens: n(u.total_token_count),
        cost: Cost::default(),
        cache_write_1h: None,
    };
    w.partial.usage.mark_reported();
    w.partial.usage.apply_pricing(cost);
}

/// A part's text fields, as strings where they are strings.
struct Part<'a> {
    text: Option<&'a str>,
    thought: bool,
    signature: Option<&'a str>,
}

fn handle_part(w: &mut StreamWriter, part: Part<'_>, call: Option<&Value>, current: &mut Current) {
    let signature = part.signature.filter(|s| !s.is_empty()).map(String::from);
    if let Some(text) = part.text {
        let thinking = part.thought;
        let idx = match *current {
            Some((i, t)) if t == thinking => i,
            other => {
                if let Some((i, _)) = other {
                    w.end_block(i);
                }
                let i = if thinking {
                    w.thinking_start()
                } else {
                    w.text_start()
                };
                *current = Some((i, thinking));
                i
            }
        };
        if thinking {
            w.thinking_delta(idx, text);
        } else {
            w.text_delta(idx, text);
        }
        // Keep the last non-empty signature of this block.
        if let Some(sig) = signature.clone() {
            match w.partial.content.get_mut(idx) {
                Some(Content::Thinking(t)) => t.thinking_signature = Some(sig),
                Some(Content::Text(t)) => t.text_signature = Some(sig),
                _ => {}
            }
        }
    }
    if let Some(fc) = call {
        if let Some((i, _)) = current.take() {
            w.end_block(i);
        }
        let name = fc.get("name").and_then(Value::as_str).unwrap_or("");
        let provided = fc
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let id = match provided {
            Some(id) if !w.partial.tool_calls().any(|t| t.id == id) => id.to_string(),
            _ => {
                let n = TOOL_CALL_COUNTER.fetch_add(1, Ordering::Relaxed) + 1;
                format!("{name}_{}_{n}", now_ms())
            }
        };
        let args = fc
            .get("args")
            .filter(|a| !a.is_null())
            .cloned()
            .unwrap_or_else(|| json!({}));
        let i = w.toolcall_start(&id, name);
        if let Some(Content::ToolCall(t)) = w.partial.content.get_mut(i) {
            t.thought_signature = signature;
        }
        w.toolcall_delta(i, &args.to_string());
        w.toolcall_set_arguments(i, args);
        w.end_block(i);
    }
}

#[cfg(test)]
#[path = "tests/google.rs"]
mod tests;
