//! Amazon Bedrock's `ConverseStream` API (`bedrock-converse-stream`): resolves credentials,
//! region and endpoint (`credentials`), builds the body (`request`), signs it (`sigv4`, or a
//! bearer token), and translates the binary event stream (`eventstream`) — `messageStart`,
//! `contentBlockStart/Delta/Stop` (text, reasoning, tool-use input fragments), `messageStop`,
//! `metadata`, and in-stream exceptions — into `AssistantEvent`s. Everything after the call is
//! started runs on the stream thread, including credential look-ups that touch the network.

pub mod credentials;
pub mod eventstream;
pub mod request;
pub mod sigv4;

use std::io::Read;
use std::sync::Arc;

use crossbeam_channel::Receiver;
use serde_json::Value;

use super::cloud::{amz_date, now_secs, process_env, SharedEnv};
use super::hot::BedrockBlockDelta;
use crate::ai::error::ProviderError;
use crate::ai::provider_retry::{self, Rules};
use crate::ai::stream::{spawn_stream, Abort, StreamWriter};
use crate::ai::types::*;

use credentials::Auth;
use eventstream::{Decoder, Message as Frame};

pub fn stream(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    abort: Abort,
) -> Receiver<AssistantEvent> {
    stream_with_env(model, context, options, abort, Arc::new(process_env))
}

/// `stream` with an explicit environment (credential chain, region, endpoint overrides).
pub fn stream_with_env(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    abort: Abort,
    env: SharedEnv,
) -> Receiver<AssistantEvent> {
    let (model_c, context, options) = (model.clone(), context.clone(), options.clone());
    spawn_stream(model, abort, move |w| {
        let env = &*env;
        let body = request::build_body(&model_c, &context, &options, env)?.to_string();
        let (region, endpoint) = credentials::region_and_endpoint(&model_c.base_url, env);
        let url = format!(
            "{endpoint}/model/{}/converse-stream",
            crate::util::encoding::percent_encode(&model_c.id, b"")
        );
        let mut headers = vec![
            ("content-type".to_string(), "application/json".to_string()),
            (
                "accept".to_string(),
                "application/vnd.amazon.eventstream".to_string(),
            ),
        ];
        match credentials::resolve_auth(env)? {
            Auth::Bearer(token) => {
                headers.push(("authorization".into(), format!("Bearer {token}")))
            }
            Auth::SigV4(creds) => {
                let date = amz_date(now_secs());
                let scope = sigv4::Scope {
                    region: &region,
                    service: "bedrock",
                    amz_date: &date,
                };
                let signed = sigv4::sign("POST", &url, &headers, body.as_bytes(), &creds, &scope);
                headers.extend(signed);
            }
        }
        let retry = &options.provider_retry;
        let resp = provider_retry::post(w, Rules::AwsSdk, retry, &url, &headers, &body)
            .map_err(|e| w.http_error(e))?;
        parse_stream(resp, w)
    })
}

/// Bedrock's content-block index → our content index, for blocks still open.
type Blocks = Vec<(u64, usize)>;

fn map_stop_reason(reason: &str) -> StopReason {
    match reason {
        "end_turn" | "stop_sequence" => StopReason::Stop,
        "max_tokens" | "model_context_window_exceeded" => StopReason::Length,
        "tool_use" => StopReason::ToolUse,
        _ => StopReason::Error,
    }
}

/// The message of an exception frame, prefixed as pi words them (retry and overflow
/// detection match on these prefixes).
fn exception_message(kind: &str, payload: &[u8]) -> String {
    let text = String::from_utf8_lossy(payload);
    let message = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| {
            v.get("message")
                .or_else(|| v.get("Message"))
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_else(|| text.trim().to_string());
    let mut name = kind.to_string();
    if let Some(first) = name.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    let prefix = match name.as_str() {
        "InternalServerException" => "Internal server error",
        "ModelStreamErrorException" => "Model stream error",
        "ValidationException" => "Validation error",
        "ThrottlingException" => "Throttling error",
        "ServiceUnavailableException" => "Service unavailable",
        other => other,
    };
    format!("{prefix}: {message}")
}

/// Parses a Converse event stream into `w`. Succeeds only if `messageStop` arrived with a
/// stop reason pi accepts.
pub fn parse_stream<R: Read>(mut reader: R, w: &mut StreamWriter) -> Result<(), ProviderError> {
    let abort = w.abort.clone();
    let mut decoder = Decoder::new();
    let mut blocks: Blocks = Vec::new();
    let mut stop: Option<String> = None;
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        if abort.is_aborted() {
            return Err("Request was aborted".into());
        }
        let n = match reader.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(crate::ai::http::read_error(&e)),
        };
        if n == 0 {
            break;
        }
        let (frames, err) = decoder.push(&buf[..n]);
        for frame in &frames {
            handle_message(frame, w, &mut blocks, &mut stop)?;
        }
        if let Some(e) = err {
            return Err(e.into());
        }
    }
    if decoder.pending() > 0 {
        return Err("Connection lost: the event stream ended in the middle of a message".into());
    }
    match stop {
        None => Err(
            "Connection lost: stream ended before the response was complete (no messageStop)"
                .into(),
        ),
        Some(r) if w.partial.stop_reason == StopReason::Error => {
            Err(format!("The model stopped without an answer (stopReason: {r})").into())
        }
        Some(_) => Ok(()),
    }
}

fn text<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

/// A `contentBlockDelta`'s `delta`, its fields as strings where they are strings.
struct BlockDelta<'a> {
    text: Option<&'a str>,
    /// `toolUse` (when present): its `input`.
    tool_input: Option<Option<&'a str>>,
    /// `reasoningContent` (when present): its `text` and `signature`.
    reasoning: Option<(Option<&'a str>, Option<&'a str>)>,
}

/// Applies a `contentBlockDelta` to the block open at `index` (text and reasoning blocks have
/// no start event; their first delta opens them).
fn block_delta(w: &mut StreamWriter, blocks: &mut Blocks, index: u64, d: BlockDelta<'_>) {
    let open = |blocks: &Blocks| blocks.iter().find(|(b, _)| *b == index).map(|(_, c)| *c);
    if let Some(text) = d.text {
        let i = match open(blocks) {
            Some(i) => i,
            None => {
                let i = w.text_start();
                blocks.push((index, i));
                i
            }
        };
        if matches!(w.partial.content.get(i), Some(Content::Text(_))) {
            w.text_delta(i, text);
        }
    } else if let Some(input) = d.tool_input {
        if let Some(i) = open(blocks) {
            w.toolcall_delta(i, input.unwrap_or(""));
        }
    } else if let Some((text, sig)) = d.reasoning {
        let i = match open(blocks) {
            Some(i) => i,
            None => {
                let i = w.thinking_start();
                blocks.push((index, i));
                i
            }
        };
        if let Some(text) = text.filter(|t| !t.is_empty()) {
            w.thinking_delta(i, text);
        }
        if let Some(sig) = sig {
            if let Some(Content::Thinking(t)) = w.partial.content.get_mut(i) {
                t.thinking_signature
                    .get_or_insert_with(String::new)
                    .push_str(sig);
            }
        }
    }
}

fn handle_message(
    msg: &Frame,
    w: &mut StreamWriter,
    blocks: &mut Blocks,
    stop: &mut Option<String>,
) -> Result<(), ProviderError> {
    match msg.header(":message-type") {
        Some("exception") => {
            let kind = msg.header(":exception-type").unwrap_or("exception");
            return Err(exception_message(kind, &msg.payload).into());
        }
        Some("error") => {
            let code = msg.header(":error-code").unwrap_or("Error");
            let text = msg.header(":error-message").unwrap_or("unknown error");
            return Err(format!("{code}: {text}").into());
        }
        _ => {}
    }
    let event = msg.header(":event-type").unwrap_or("");
    if event == "contentBlockDelta" {
        if let Ok(hot) = serde_json::from_slice::<BedrockBlockDelta>(&msg.payload) {
            if let Some(d) = &hot.delta {
                let reasoning = d.reasoning_content.as_ref().map(|r| match r {
                    Some(r) => (r.text.as_deref(), r.signature.as_deref()),
                    None => (None, None),
                });
                let view = BlockDelta {
                    text: d.text.as_deref(),
                    tool_input: d.tool_use.as_ref().map(|t| t.as_ref()?.input.as_deref()),
                    reasoning,
                };
                block_delta(w, blocks, hot.content_block_index.unwrap_or(0), view);
            }
            return Ok(());
        }
    }
    let data: Value = serde_json::from_slice(&msg.payload)
        .map_err(|e| format!("Could not parse Bedrock {event} event: {e}"))?;
    let index = data
        .get("contentBlockIndex")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    match event {
        "messageStart" => {
            let role = data
                .get("role")
                .and_then(Value::as_str)
                .unwrap_or("assistant");
            if role != "assistant" {
                return Err(format!(
                    "Unexpected message start with role {role:?} instead of assistant"
                )
                .into());
            }
            w.start();
        }
        "contentBlockStart" => {
            if let Some(tool) = data.get("start").and_then(|s| s.get("toolUse")) {
                let id = tool.get("toolUseId").and_then(Value::as_str).unwrap_or("");
                let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
                let i = w.toolcall_start(id, name);
                blocks.push((index, i));
            }
        }
        "contentBlockDelta" => {
            let delta = data.get("delta").unwrap_or(&Value::Null);
            let view = BlockDelta {
                text: text(delta, "text"),
                tool_input: delta.get("toolUse").map(|t| text(t, "input")),
                reasoning: delta
                    .get("reasoningContent")
                    .map(|r| (text(r, "text"), text(r, "signature"))),
            };
            block_delta(w, blocks, index, view);
        }
        "contentBlockStop" => {
            if let Some(pos) = blocks.iter().position(|(b, _)| *b == index) {
                let (_, i) = blocks.remove(pos);
                w.end_block(i);
            }
        }
        "messageStop" => {
            let reason = data.get("stopReason").and_then(Value::as_str).unwrap_or("");
            w.partial.stop_reason = map_stop_reason(reason);
            w.partial.set_raw_stop_reason(reason);
            *stop = Some(reason.to_string());
        }
        "metadata" => {
            if let Some(u) = data.get("usage") {
                let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
                let usage = &mut w.partial.usage;
                usage.input = n("inputTokens");
                usage.output = n("outputTokens");
                usage.cache_read = n("cacheReadInputTokens");
                usage.cache_write = n("cacheWriteInputTokens");
                usage.total_tokens = match n("totalTokens") {
                    0 => usage.input + usage.output,
                    t => t,
                };
                usage.mark_reported();
            }
        }
        // Unknown events are newer API additions; skipping them loses nothing we render.
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
#[path = "../tests/bedrock.rs"]
mod tests;
