//! In-process mock LLM HTTP server for integration tests.
//!
//! Owns: a `TcpListener` on 127.0.0.1:0, its accept thread (`mock-accept`) and one thread per
//! connection (`mock-conn`); the queue of scripted replies; the log of received requests.
//! Does not own: the `pi` child process (see `pi.rs`).
//!
//! Each request is parsed (request line, headers, `Content-Length` or chunked body), recorded,
//! then answered with the next scripted [`Reply`] (or `500 mock: no scripted reply` when the
//! queue is empty). Streams are written as `text/event-stream` with `Connection: close` and no
//! `Content-Length` (the close delimits the body) unless [`Reply::chunked`] asks for chunked
//! transfer encoding. Dropping the server stops its threads.
//!
//! The SSE builders ([`sse_text`], [`sse_malformed`]) produce the wire formats of the four
//! APIs the way the providers (and `shared/tools/mockllm/mockllm.py`) stream them.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The four wire APIs, spelled as in models.json.
pub const APIS: [&str; 4] = [
    "anthropic-messages",
    "openai-completions",
    "openai-responses",
    "google-generative-ai",
];

// ---------------------------------------------------------------------------------------------
// Recorded requests
// ---------------------------------------------------------------------------------------------

/// One request as the mock received it.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// Path plus query string, e.g. `/v1beta/models/m:streamGenerateContent?alt=sse`.
    pub path: String,
    /// Header names lowercased, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON (`Value::Null` when empty or not JSON; see `raw_body`).
    pub body: Value,
    pub raw_body: Vec<u8>,
    /// The API the path routes to, or `None` for an unknown route.
    pub api: Option<&'static str>,
}

impl Request {
    /// First header with this (case-insensitive) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.raw_body).into_owned()
    }

    /// Text of every user message in the request, in order, whatever the wire format.
    pub fn user_texts(&self) -> Vec<String> {
        user_texts(&self.body)
    }

    /// Text of the last user message.
    pub fn last_user_text(&self) -> Option<String> {
        self.user_texts().pop()
    }
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(text_of).collect::<Vec<_>>().join(""),
        Value::Object(o) => {
            if let Some(Value::String(t)) = o.get("text") {
                t.clone()
            } else {
                String::new()
            }
        }
        _ => String::new(),
    }
}

/// User texts from an Anthropic/OpenAI Chat (`messages`), Responses (`input`) or Google
/// (`contents`) request body.
pub fn user_texts(body: &Value) -> Vec<String> {
    let list = body
        .get("messages")
        .or_else(|| body.get("input"))
        .or_else(|| body.get("contents"));
    let mut out = Vec::new();
    match list {
        Some(Value::String(s)) => out.push(s.clone()),
        Some(Value::Array(items)) => {
            for m in items {
                if m.get("role").and_then(Value::as_str) != Some("user") {
                    continue;
                }
                let content = m.get("content").or_else(|| m.get("parts"));
                out.push(content.map(text_of).unwrap_or_default());
            }
        }
        _ => {}
    }
    out
}

/// Which API a request path belongs to (routing by suffix, query ignored).
pub fn route(path: &str) -> Option<&'static str> {
    let p = path.split('?').next().unwrap_or("").trim_end_matches('/');
    if p.ends_with(":streamGenerateContent") {
        Some("google-generative-ai")
    } else if p.ends_with("/chat/completions") {
        Some("openai-completions")
    } else if p.ends_with("/responses") {
        Some("openai-responses")
    } else if p.ends_with("/messages") {
        Some("anthropic-messages")
    } else if p.ends_with("/converse-stream") {
        Some("bedrock-converse-stream")
    } else if p.ends_with("/systemone") {
        // Classifiers (pi 1.6.0's `typesafe-system-one`).
        Some("typesafe-system-one")
    } else if p.ends_with("/token") {
        // OAuth token endpoints (`pi --login` with PI_OAUTH_TEST_BASE).
        Some("oauth")
    } else {
        None
    }
}

// ---------------------------------------------------------------------------------------------
// Scripted replies
// ---------------------------------------------------------------------------------------------

/// How the body of a reply ends.
#[derive(Debug, Clone, PartialEq)]
enum Ending {
    /// Send everything, then close.
    Complete,
    /// Send `events` whole events plus half of the next one, then close the socket.
    CutAfter { events: usize },
}

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    /// Body split into pieces written one by one (SSE events for streams).
    pieces: Vec<Vec<u8>>,
    stream: bool,
    chunked: bool,
    ending: Ending,
    /// `(after_events, ms)`: hold the socket silent for `ms` after that many events.
    stall: Option<(usize, u64)>,
    chunk_delay_ms: u64,
}

impl Reply {
    /// A `200 text/event-stream` reply with this SSE body (split at blank lines into events).
    pub fn sse(body: impl AsRef<[u8]>) -> Reply {
        Reply {
            status: 200,
            headers: Vec::new(),
            pieces: split_events(body.as_ref()),
            stream: true,
            chunked: false,
            ending: Ending::Complete,
            stall: None,
            chunk_delay_ms: 0,
        }
    }

    /// A streamed text answer in the wire format of `api` (see [`sse_text`]).
    pub fn text(api: &str, text: &str) -> Reply {
        Reply::sse(sse_text(api, text))
    }

    /// Streams `fixtures/<rel>` (relative to the crate root). Leading `#` comment lines are
    /// dropped.
    pub fn fixture(rel: &str) -> Reply {
        Reply::sse(read_fixture(rel))
    }

    /// A non-streaming error answer with this status and body.
    pub fn error(status: u16, body: &str) -> Reply {
        let ctype = if body.trim_start().starts_with('{') {
            "application/json"
        } else {
            "text/plain"
        };
        Reply {
            status,
            headers: vec![("content-type".into(), ctype.into())],
            pieces: vec![body.as_bytes().to_vec()],
            stream: false,
            chunked: false,
            ending: Ending::Complete,
            stall: None,
            chunk_delay_ms: 0,
        }
    }

    /// A `200` JSON answer (non-streaming APIs: images, classifiers).
    pub fn json(body: &Value) -> Reply {
        Reply::error(200, &body.to_string())
    }

    /// OpenRouter's answer to an image-generation request (`openrouter-images`, non-streaming
    /// `/chat/completions` with `modalities`): `text` in `message.content`, each image as a
    /// base64 `data:` URL in `message.images[].image_url.url`, and token usage. The format is
    /// OpenRouter's published one: https://openrouter.ai/docs/features/multimodal/image-generation
    pub fn openrouter_images(text: Option<&str>, images: &[(&str, &str)]) -> Reply {
        let images: Vec<Value> = images
            .iter()
            .map(|(mime, data)| {
                serde_json::json!({"type": "image_url", "image_url": {"url": format!("data:{mime};base64,{data}")}})
            })
            .collect();
        Reply::json(&serde_json::json!({
            "id": "gen-mock-1",
            "object": "chat.completion",
            "model": "mock-image-model",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {
                "role": "assistant", "content": text, "images": images,
            }}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 1290, "total_tokens": 1300},
        }))
    }

    /// A System One classifier's answer (`typesafe-system-one`): `answers` by question id, in
    /// the service's own form (`bool` questions answered as `{type: "noul", noul}`).
    pub fn system_one(answers: Value) -> Reply {
        Reply::json(&serde_json::json!({
            "answers": answers,
            "usage": {"input_tokens": 120, "output_tokens": 0},
        }))
    }

    /// An error with the JSON body the provider of `api` would send for `status`.
    pub fn api_error(api: &str, status: u16, message: &str) -> Reply {
        Reply::error(status, &error_body(api, status, message).to_string())
    }

    /// `429` with a `retry-after-ms` header.
    pub fn rate_limited(api: &str, retry_after_ms: u64) -> Reply {
        Reply::api_error(api, 429, "Rate limit exceeded")
            .header("retry-after-ms", &retry_after_ms.to_string())
    }

    /// Anthropic's `529 overloaded_error`.
    pub fn overloaded() -> Reply {
        Reply::api_error("anthropic-messages", 529, "Overloaded")
    }

    /// Adds a response header.
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers
            .push((name.to_ascii_lowercase(), value.to_string()));
        self
    }

    /// Use `Transfer-Encoding: chunked` (one chunk per event) instead of close-delimiting.
    pub fn chunked(mut self) -> Reply {
        self.chunked = true;
        self
    }

    /// Send `events` whole events and half of the next, then close the socket. Close-delimited,
    /// the client sees a clean EOF without the terminal event; chunked, it sees a read error.
    pub fn cut_after(mut self, events: usize) -> Reply {
        self.ending = Ending::CutAfter { events };
        self
    }

    /// After `events` events, hold the socket open and silent for `ms` milliseconds, then go on.
    pub fn stall_after(mut self, events: usize, ms: u64) -> Reply {
        self.stall = Some((events, ms));
        self
    }

    /// Sleep this long before every event after the first.
    pub fn chunk_delay(mut self, ms: u64) -> Reply {
        self.chunk_delay_ms = ms;
        self
    }

    /// Number of events (or body pieces) this reply carries.
    pub fn len(&self) -> usize {
        self.pieces.len()
    }
}

/// Reads `fixtures/<rel>` and drops leading `#` comment lines.
pub fn read_fixture(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()));
    let mut rest = text.as_str();
    while rest.starts_with('#') {
        rest = rest.split_once('\n').map(|(_, r)| r).unwrap_or("");
    }
    rest.to_string()
}

/// Splits an SSE body into events, each keeping its terminating blank line.
fn split_events(body: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < body.len() {
        let sep = if body[i..].starts_with(b"\r\n\r\n") {
            4
        } else if body[i..].starts_with(b"\n\n") {
            2
        } else {
            0
        };
        if sep > 0 {
            out.push(body[start..i + sep].to_vec());
            i += sep;
            start = i;
        } else {
            i += 1;
        }
    }
    if start < body.len() {
        out.push(body[start..].to_vec());
    }
    out
}

// ---------------------------------------------------------------------------------------------
// SSE builders, one per wire API
// ---------------------------------------------------------------------------------------------

fn pieces(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(n).map(|c| c.iter().collect()).collect()
}

fn data(v: &Value) -> String {
    format!("data: {v}\n\n")
}

fn event(name: &str, v: &Value) -> String {
    format!("event: {name}\ndata: {v}\n\n")
}

const INPUT_TOKENS: u64 = 12;

fn output_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4).max(1)
}

/// A complete streamed text answer in the exact wire format of `api`, usage and terminal
/// event included (`message_stop`, `data: [DONE]`, `response.completed`, `finishReason`).
/// Panics on an unknown api.
pub fn sse_text(api: &str, text: &str) -> String {
    sse_events(api, text).concat()
}

/// Like [`sse_text`] but as a list of events.
pub fn sse_events(api: &str, text: &str) -> Vec<String> {
    let out_tokens = output_tokens(text);
    let parts = pieces(text, 8);
    match api {
        "anthropic-messages" => {
            let mut ev = vec![event(
                "message_start",
                &json!({"type": "message_start", "message": {
                    "id": "msg_mock0001", "type": "message", "role": "assistant", "model": "mock-model",
                    "content": [], "stop_reason": null, "stop_sequence": null,
                    "usage": {"input_tokens": INPUT_TOKENS, "cache_creation_input_tokens": 0,
                              "cache_read_input_tokens": 0, "output_tokens": 1}}}),
            )];
            ev.push(event(
                "content_block_start",
                &json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ));
            ev.push(event("ping", &json!({"type": "ping"})));
            for p in &parts {
                ev.push(event(
                    "content_block_delta",
                    &json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}),
                ));
            }
            ev.push(event(
                "content_block_stop",
                &json!({"type": "content_block_stop", "index": 0}),
            ));
            ev.push(event(
                "message_delta",
                &json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null},
                        "usage": {"output_tokens": out_tokens}}),
            ));
            ev.push(event("message_stop", &json!({"type": "message_stop"})));
            ev
        }
        "openai-completions" => {
            let chunk = |delta: Value, finish: Value| {
                data(
                    &json!({"id": "chatcmpl-mock0001", "object": "chat.completion.chunk", "created": 1735689600,
                    "model": "mock-model", "system_fingerprint": "fp_mock",
                    "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
                    "usage": null}),
                )
            };
            let mut ev = vec![chunk(
                json!({"role": "assistant", "content": "", "refusal": null}),
                Value::Null,
            )];
            for p in &parts {
                ev.push(chunk(json!({"content": p}), Value::Null));
            }
            ev.push(chunk(json!({}), json!("stop")));
            ev.push(data(&json!({"id": "chatcmpl-mock0001", "object": "chat.completion.chunk",
                "created": 1735689600, "model": "mock-model", "system_fingerprint": "fp_mock", "choices": [],
                "usage": {"prompt_tokens": INPUT_TOKENS, "completion_tokens": out_tokens,
                          "total_tokens": INPUT_TOKENS + out_tokens,
                          "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                          "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                              "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}})));
            ev.push("data: [DONE]\n\n".to_string());
            ev
        }
        "openai-responses" => {
            let mut seq = 0u64;
            let mut ev = Vec::new();
            let mut push = |name: &str, mut v: Value| {
                v["type"] = json!(name);
                v["sequence_number"] = json!(seq);
                seq += 1;
                ev.push(event(name, &v));
            };
            let response = |status: &str, output: Value, usage: Value| {
                json!({"id": "resp_mock0001", "object": "response", "created_at": 1735689600,
                    "status": status, "error": null, "incomplete_details": null, "instructions": null,
                    "model": "mock-model", "output": output, "parallel_tool_calls": true,
                    "previous_response_id": null, "store": false, "tools": [], "usage": usage})
            };
            push(
                "response.created",
                json!({"response": response("in_progress", json!([]), Value::Null)}),
            );
            push(
                "response.in_progress",
                json!({"response": response("in_progress", json!([]), Value::Null)}),
            );
            let done_item = json!({"id": "msg_mock0001", "type": "message", "status": "completed",
                "role": "assistant", "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]});
            push(
                "response.output_item.added",
                json!({"output_index": 0, "item": {"id": "msg_mock0001", "type": "message",
                    "status": "in_progress", "role": "assistant", "content": []}}),
            );
            push(
                "response.content_part.added",
                json!({"item_id": "msg_mock0001", "output_index": 0, "content_index": 0,
                    "part": {"type": "output_text", "text": "", "annotations": [], "logprobs": []}}),
            );
            for p in &parts {
                push(
                    "response.output_text.delta",
                    json!({"item_id": "msg_mock0001", "output_index": 0, "content_index": 0, "delta": p, "logprobs": []}),
                );
            }
            push(
                "response.output_text.done",
                json!({"item_id": "msg_mock0001", "output_index": 0, "content_index": 0, "text": text, "logprobs": []}),
            );
            push(
                "response.content_part.done",
                json!({"item_id": "msg_mock0001", "output_index": 0, "content_index": 0,
                    "part": done_item["content"][0].clone()}),
            );
            push(
                "response.output_item.done",
                json!({"output_index": 0, "item": done_item.clone()}),
            );
            let usage = json!({"input_tokens": INPUT_TOKENS, "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": out_tokens, "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": INPUT_TOKENS + out_tokens});
            push(
                "response.completed",
                json!({"response": response("completed", json!([done_item]), usage)}),
            );
            ev
        }
        "google-generative-ai" => {
            let parts = if parts.is_empty() {
                vec![String::new()]
            } else {
                parts
            };
            let n = parts.len();
            parts
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let mut v = json!({"candidates": [{"content": {"parts": [{"text": p}], "role": "model"}, "index": 0}],
                        "modelVersion": "mock-model", "responseId": "mockresp0001"});
                    if i + 1 == n {
                        v["candidates"][0]["finishReason"] = json!("STOP");
                        v["usageMetadata"] = json!({"promptTokenCount": INPUT_TOKENS,
                            "candidatesTokenCount": out_tokens, "totalTokenCount": INPUT_TOKENS + out_tokens});
                    }
                    format!("data: {v}\r\n\r\n")
                })
                .collect()
        }
        other => panic!("sse_text: unknown api {other:?}"),
    }
}

/// A stream of `api` in which the model calls tools: each `(id, name, arguments)` becomes one
/// call, its arguments streamed in small fragments, and the stop reason is "tool use".
pub fn sse_tool_calls(api: &str, calls: &[(&str, &str, Value)]) -> String {
    let frags = |args: &Value| pieces(&args.to_string(), 7);
    let mut ev = Vec::new();
    match api {
        "anthropic-messages" => {
            ev.push(event("message_start", &json!({"type": "message_start", "message": {
                "id": "msg_mocktools", "type": "message", "role": "assistant", "model": "mock-model",
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": INPUT_TOKENS, "output_tokens": 1}}})));
            for (i, (id, name, args)) in calls.iter().enumerate() {
                ev.push(event(
                    "content_block_start",
                    &json!({"type": "content_block_start", "index": i,
                    "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
                ));
                for f in frags(args) {
                    ev.push(event(
                        "content_block_delta",
                        &json!({"type": "content_block_delta", "index": i,
                        "delta": {"type": "input_json_delta", "partial_json": f}}),
                    ));
                }
                ev.push(event(
                    "content_block_stop",
                    &json!({"type": "content_block_stop", "index": i}),
                ));
            }
            ev.push(event("message_delta", &json!({"type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 20}})));
            ev.push(event("message_stop", &json!({"type": "message_stop"})));
        }
        "openai-completions" => {
            let chunk = |delta: Value, finish: Value| {
                data(
                    &json!({"id": "chatcmpl-mocktools", "object": "chat.completion.chunk", "created": 1735689600,
                    "model": "mock-model", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
                )
            };
            ev.push(chunk(
                json!({"role": "assistant", "content": null}),
                Value::Null,
            ));
            for (i, (id, name, args)) in calls.iter().enumerate() {
                ev.push(chunk(
                    json!({"tool_calls": [{"index": i, "id": id, "type": "function",
                    "function": {"name": name, "arguments": ""}}]}),
                    Value::Null,
                ));
                for f in frags(args) {
                    ev.push(chunk(
                        json!({"tool_calls": [{"index": i, "function": {"arguments": f}}]}),
                        Value::Null,
                    ));
                }
            }
            ev.push(chunk(json!({}), json!("tool_calls")));
            ev.push(data(&json!({"id": "chatcmpl-mocktools", "object": "chat.completion.chunk", "choices": [],
                "usage": {"prompt_tokens": INPUT_TOKENS, "completion_tokens": 20, "total_tokens": INPUT_TOKENS + 20}})));
            ev.push("data: [DONE]\n\n".to_string());
        }
        other => panic!("sse_tool_calls: unsupported api {other:?}"),
    }
    ev.concat()
}

/// A stream of `api` whose second event carries invalid JSON in its data line.
pub fn sse_malformed(api: &str, text: &str) -> String {
    let mut ev = sse_events(api, text);
    let bad = match api {
        "anthropic-messages" => "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"oops\n\n",
        "openai-completions" => "data: {\"id\":\"chatcmpl-broken\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{\"content\":\"oops\n\n",
        "openai-responses" => "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\n\n",
        _ => "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"oops\"}]\r\n\r\n",
    };
    ev.insert(2.min(ev.len()), bad.to_string());
    ev.concat()
}

/// The error JSON body the provider of `api` sends for `status`.
pub fn error_body(api: &str, status: u16, message: &str) -> Value {
    match api {
        "anthropic-messages" => {
            let t = match status {
                400 => "invalid_request_error",
                401 => "authentication_error",
                403 => "permission_error",
                404 => "not_found_error",
                413 => "request_too_large",
                429 => "rate_limit_error",
                504 => "timeout_error",
                529 => "overloaded_error",
                _ => "api_error",
            };
            json!({"type": "error", "error": {"type": t, "message": message}, "request_id": "req_mock0001"})
        }
        "google-generative-ai" => {
            let s = match status {
                400 => "INVALID_ARGUMENT",
                401 => "UNAUTHENTICATED",
                403 => "PERMISSION_DENIED",
                404 => "NOT_FOUND",
                429 => "RESOURCE_EXHAUSTED",
                500 => "INTERNAL",
                503 => "UNAVAILABLE",
                504 => "DEADLINE_EXCEEDED",
                _ => "UNKNOWN",
            };
            json!({"error": {"code": status, "message": message, "status": s}})
        }
        _ => {
            let t = if status >= 500 {
                "server_error"
            } else {
                "invalid_request_error"
            };
            json!({"error": {"message": message, "type": t, "param": null, "code": null}})
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------------------------

#[derive(Default)]
struct Shared {
    replies: Mutex<VecDeque<Reply>>,
    /// Fixed answers by path (without query), for routes that take no scripted reply.
    documents: Mutex<Vec<(String, Reply)>>,
    requests: Mutex<Vec<Request>>,
    arrived: Condvar,
}

/// The mock server. Dropping it stops the accept thread and ends any stalled connection.
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl MockServer {
    /// Starts a server with an empty reply queue.
    pub fn start() -> MockServer {
        MockServer::start_on("127.0.0.1:0")
    }

    /// Starts a server listening on `addr` (`"[::1]:0"` for a server on IPv6 loopback only).
    pub fn start_on(addr: &str) -> MockServer {
        let listener = TcpListener::bind(addr).expect("mock: bind");
        listener
            .set_nonblocking(true)
            .expect("mock: set_nonblocking");
        let addr = listener.local_addr().expect("mock: local_addr");
        let shared = Arc::new(Shared::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (shared.clone(), stop.clone());
        let accept = thread::Builder::new()
            .name("mock-accept".into())
            .spawn(move || accept_loop(listener, s, st))
            .expect("mock: spawn accept thread");
        MockServer {
            addr,
            shared,
            stop,
            accept: Some(accept),
        }
    }

    /// Starts a server that will answer with these replies, in order.
    pub fn with_replies(replies: impl IntoIterator<Item = Reply>) -> MockServer {
        let server = MockServer::start();
        for r in replies {
            server.push(r);
        }
        server
    }

    /// Answers every request for `path` (query ignored) with `status` and the JSON `body`,
    /// as a local server's model listing or property page would; overrides the built-in
    /// `/v1/models` listing.
    pub fn serve(&self, path: &str, status: u16, body: &str) -> &Self {
        self.serve_reply(path, Reply::error(status, body))
    }

    /// The same with any reply (a slow one, say).
    pub fn serve_reply(&self, path: &str, reply: Reply) -> &Self {
        self.shared
            .documents
            .lock()
            .unwrap()
            .push((path.to_string(), reply));
        self
    }

    /// Queues one more reply.
    pub fn push(&self, reply: Reply) {
        self.shared.replies.lock().unwrap().push_back(reply);
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Request> {
        self.shared.requests.lock().unwrap().clone()
    }

    pub fn request_count(&self) -> usize {
        self.shared.requests.lock().unwrap().len()
    }

    /// The only request; panics unless exactly one arrived.
    pub fn single_request(&self) -> Request {
        let reqs = self.requests();
        assert_eq!(
            reqs.len(),
            1,
            "expected exactly one request, got {}: {reqs:#?}",
            reqs.len()
        );
        reqs.into_iter().next().unwrap()
    }

    /// Replies still queued.
    pub fn pending_replies(&self) -> usize {
        self.shared.replies.lock().unwrap().len()
    }

    /// Blocks until at least `n` requests arrived or `timeout` passed; true if they did.
    pub fn wait_for_requests(&self, n: usize, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut reqs = self.shared.requests.lock().unwrap();
        while reqs.len() < n {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            reqs = self
                .shared
                .arrived
                .wait_timeout(reqs, deadline - now)
                .unwrap()
                .0;
        }
        true
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>, stop: Arc<AtomicBool>) {
    while !stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((sock, _)) => {
                let (s, st) = (shared.clone(), stop.clone());
                let _ = thread::Builder::new()
                    .name("mock-conn".into())
                    .spawn(move || {
                        let _ = handle_connection(sock, &s, &st);
                    });
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                thread::sleep(Duration::from_millis(5))
            }
            Err(_) => thread::sleep(Duration::from_millis(5)),
        }
    }
}

fn handle_connection(sock: TcpStream, shared: &Shared, stop: &AtomicBool) -> std::io::Result<()> {
    sock.set_nonblocking(false)?;
    sock.set_nodelay(true)?;
    sock.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(sock.try_clone()?);
    let mut out = sock;
    let req = match read_request(&mut reader)? {
        Some(r) => r,
        None => return Ok(()),
    };
    let known = req.api.is_some();
    let path = req.path.clone();
    {
        let mut reqs = shared.requests.lock().unwrap();
        reqs.push(req);
        shared.arrived.notify_all();
    }
    let bare = path.split('?').next().unwrap_or("");
    let document = shared
        .documents
        .lock()
        .unwrap()
        .iter()
        .find(|(p, _)| p == bare)
        .map(|(_, r)| r.clone());
    let reply = if document.is_some() {
        document
    } else if known {
        shared.replies.lock().unwrap().pop_front()
    } else if path.ends_with("/models") {
        // A model listing, as OpenAI-compatible local servers answer it; takes no reply.
        Some(Reply::error(
            200,
            r#"{"object":"list","data":[{"id":"mock-model","object":"model","owned_by":"mock"}]}"#,
        ))
    } else {
        Some(Reply::error(404, &format!("mock: no route for {path}")))
    };
    let reply = reply.unwrap_or_else(|| Reply::error(500, "mock: no scripted reply"));
    let result = write_reply(&mut out, &reply, stop);
    let _ = out.flush();
    let _ = out.shutdown(Shutdown::Both);
    result
}

fn read_request(r: &mut impl BufRead) -> std::io::Result<Option<Request>> {
    let mut line = String::new();
    if r.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if r.read_line(&mut h)? == 0 {
            break;
        }
        let h = h.trim_end_matches(['\r', '\n']);
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let mut raw_body = Vec::new();
    if get("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked")) {
        loop {
            let mut size_line = String::new();
            if r.read_line(&mut size_line)? == 0 {
                break;
            }
            let size_hex = size_line.split(';').next().unwrap_or("").trim();
            let size = usize::from_str_radix(size_hex, 16).map_err(|_| {
                std::io::Error::new(std::io::ErrorKind::InvalidData, "bad chunk size")
            })?;
            if size == 0 {
                // trailers until a blank line
                loop {
                    let mut t = String::new();
                    if r.read_line(&mut t)? == 0 || t.trim().is_empty() {
                        break;
                    }
                }
                break;
            }
            let mut buf = vec![0; size];
            r.read_exact(&mut buf)?;
            raw_body.extend_from_slice(&buf);
            let mut crlf = String::new();
            r.read_line(&mut crlf)?;
        }
    } else if let Some(n) = get("content-length").and_then(|v| v.parse::<usize>().ok()) {
        raw_body = vec![0; n];
        r.read_exact(&mut raw_body)?;
    }
    let body = serde_json::from_slice(&raw_body).unwrap_or(Value::Null);
    let api = route(&path);
    Ok(Some(Request {
        method,
        path,
        headers,
        body,
        raw_body,
        api,
    }))
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "Status",
    }
}

/// Sleeps `ms`, waking early when the server is dropped.
fn sleep_unless_stopped(ms: u64, stop: &AtomicBool) {
    let deadline = Instant::now() + Duration::from_millis(ms);
    while Instant::now() < deadline && !stop.load(Ordering::SeqCst) {
        thread::sleep(Duration::from_millis(10).min(deadline - Instant::now()));
    }
}

fn write_reply(out: &mut TcpStream, reply: &Reply, stop: &AtomicBool) -> std::io::Result<()> {
    let mut head = format!("HTTP/1.1 {} {}\r\n", reply.status, reason(reply.status));
    if reply.stream {
        head.push_str("content-type: text/event-stream\r\ncache-control: no-cache\r\n");
    }
    for (k, v) in &reply.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if !reply.stream {
        let len: usize = reply.pieces.iter().map(Vec::len).sum();
        head.push_str(&format!("content-length: {len}\r\n"));
    } else if reply.chunked {
        head.push_str("transfer-encoding: chunked\r\n");
    }
    head.push_str("connection: close\r\n\r\n");
    out.write_all(head.as_bytes())?;
    out.flush()?;

    let write_piece = |out: &mut TcpStream, bytes: &[u8]| -> std::io::Result<()> {
        if reply.stream && reply.chunked {
            out.write_all(format!("{:x}\r\n", bytes.len()).as_bytes())?;
            out.write_all(bytes)?;
            out.write_all(b"\r\n")?;
        } else {
            out.write_all(bytes)?;
        }
        out.flush()
    };

    for (i, piece) in reply.pieces.iter().enumerate() {
        if let Some((at, ms)) = reply.stall {
            if at == i {
                sleep_unless_stopped(ms, stop);
            }
        }
        if stop.load(Ordering::SeqCst) {
            return Ok(());
        }
        if let Ending::CutAfter { events } = reply.ending {
            if events == i {
                // Chunked, half the event goes out as a whole chunk and no terminating chunk
                // follows: ureq reports the missing chunk header as an error (EOF inside a
                // chunk would read as a clean end).
                write_piece(out, &piece[..piece.len() / 2])?;
                out.flush()?;
                return Ok(());
            }
        }
        if reply.chunk_delay_ms > 0 && i > 0 {
            sleep_unless_stopped(reply.chunk_delay_ms, stop);
        }
        write_piece(out, piece)?;
    }
    if let Some((at, ms)) = reply.stall {
        if at >= reply.pieces.len() {
            sleep_unless_stopped(ms, stop);
        }
    }
    if reply.stream && reply.chunked && matches!(reply.ending, Ending::Complete) {
        out.write_all(b"0\r\n\r\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod self_tests {
    use super::*;

    #[test]
    fn split_events_keeps_separators() {
        let ev = split_events(b"data: a\n\ndata: b\r\n\r\ntail");
        assert_eq!(
            ev,
            vec![
                b"data: a\n\n".to_vec(),
                b"data: b\r\n\r\n".to_vec(),
                b"tail".to_vec()
            ]
        );
    }
}
