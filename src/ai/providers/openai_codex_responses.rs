//! The ChatGPT-subscription Codex backend (`openai-codex-responses`, provider `openai-codex`):
//! the Responses wire format sent to `<base>/codex/responses` with the OAuth access token, the
//! ChatGPT account id read from that token, `originator: pi`, and pi's fixed body (system prompt
//! as `instructions`, `store:false`, `text.verbosity:"low"`, encrypted reasoning included, tools
//! with `strict:null`). The SSE answer goes through `openai_responses`' parser after mapping the
//! backend's dialect (`response.done`, top-level `error`, `response.failed`). pi's WebSocket
//! transport is not implemented: this is its SSE path.

use crossbeam_channel::Receiver;
use serde_json::{json, Map, Value};

use super::openai_compat as oc;
use super::openai_responses;
use crate::ai::error::ProviderError;
use crate::ai::provider_retry::{self, Rules};
use crate::ai::stream::{spawn_stream, Abort};
use crate::ai::types::*;

pub const DEFAULT_BASE_URL: &str = "https://chatgpt.com/backend-api";

/// Providers whose replayed tool-call ids keep their `|item_id` half.
const TOOL_CALL_ITEM_PROVIDERS: [&str; 3] = ["openai", "openai-codex", "opencode"];

pub fn stream(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    abort: Abort,
) -> Receiver<AssistantEvent> {
    let request = build_request(model, context, options)
        .map(|(url, headers, body)| (url, headers, options.payload(body)));
    let retry = options.provider_retry;
    spawn_stream(model, abort, move |w| {
        let (url, headers, body) = request?;
        let resp = provider_retry::post_json(w, Rules::Codex, &retry, &url, &headers, &body)
            .map_err(|e| match friendly_error(e.status, &e.body) {
                // pi rewords Codex's usage limits and decides on them by these words.
                Some(message) => ProviderError::Provider {
                    status: e.status,
                    message,
                    retry_after_ms: e.retry_after_ms,
                },
                None => w.http_error(e),
            })?;
        openai_responses::parse_stream_mapped(resp, w, &map_event)
    })
}

/// `<base>/codex/responses`, tolerating bases that already end in `/codex` or the full path.
pub fn resolve_url(base_url: &str) -> String {
    let raw = match base_url.trim() {
        "" => DEFAULT_BASE_URL,
        b => b,
    };
    let base = raw.trim_end_matches('/');
    if base.ends_with("/codex/responses") {
        base.to_string()
    } else if base.ends_with("/codex") {
        format!("{base}/responses")
    } else {
        format!("{base}/codex/responses")
    }
}

/// `pi (<platform> <release>; <arch>)` as Node names them.
fn user_agent() -> String {
    let platform = match std::env::consts::OS {
        "macos" => "darwin",
        os => os,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        "x86" => "ia32",
        a => a,
    };
    format!("pi ({platform} {}; {arch})", os_release())
}

fn os_release() -> String {
    // SAFETY: `uname` fills a caller-owned, zero-initialised struct; its fields are
    // NUL-terminated C strings on success.
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut u) != 0 {
            return String::new();
        }
        std::ffi::CStr::from_ptr(u.release.as_ptr())
            .to_string_lossy()
            .into_owned()
    }
}

/// URL, headers and JSON body of one request.
pub type Request = (String, Vec<(String, String)>, Value);

/// URL, headers and body of one request; `Err` when the key is not a ChatGPT token.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> Result<Request, String> {
    if options.api_key.is_empty() {
        return Err(format!("No API key for provider: {}", model.provider));
    }
    let account_id = crate::ai::jwt::chatgpt_account_id(&options.api_key)
        .ok_or("Failed to extract accountId from token")?;
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("store".into(), json!(false));
    body.insert("stream".into(), json!(true));
    let instructions = context
        .system_prompt
        .as_deref()
        .filter(|s| !s.is_empty())
        .unwrap_or("You are a helpful assistant.");
    body.insert("instructions".into(), json!(instructions));
    let input = openai_responses::convert_items(model, context, &TOOL_CALL_ITEM_PROVIDERS, false);
    body.insert("input".into(), Value::Array(input));
    body.insert("text".into(), json!({"verbosity": "low"}));
    body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    if let Some(sid) = &options.session_id {
        body.insert("prompt_cache_key".into(), json!(sid));
    }
    body.insert("tool_choice".into(), json!("auto"));
    body.insert("parallel_tool_calls".into(), json!(true));
    if let Some(t) = options.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if !context.tools.is_empty() {
        let tools: Vec<Value> = context
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "name": t.name, "description": t.description,
                       "parameters": t.parameters, "strict": null})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(level) = oc::reasoning_effort(model, options) {
        body.insert(
            "reasoning".into(),
            json!({"effort": oc::effort_value(model, level), "summary": "auto"}),
        );
    }
    // Model and caller headers first; pi's own identity headers override them.
    let mut headers = oc::build_headers(model, options, &[]);
    let auth = format!("Bearer {}", options.api_key);
    let fixed = [
        ("Authorization", auth.as_str()),
        ("chatgpt-account-id", account_id.as_str()),
        ("originator", "pi"),
        ("OpenAI-Beta", "responses=experimental"),
        ("accept", "text/event-stream"),
    ];
    for (k, v) in fixed {
        oc::set_header(&mut headers, k, v);
    }
    oc::set_header(&mut headers, "User-Agent", &user_agent());
    if let Some(sid) = &options.session_id {
        oc::set_header(&mut headers, "session_id", sid);
        oc::set_header(&mut headers, "x-client-request-id", sid);
    }
    Ok((resolve_url(&model.base_url), headers, Value::Object(body)))
}

/// The backend's events in the shape the shared parser knows.
fn map_event(mut e: Value) -> Result<Value, ProviderError> {
    let s = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
    match e.get("type").and_then(Value::as_str).unwrap_or("") {
        "error" => {
            let (code, message) = (s(e.get("code")), s(e.get("message")));
            let what = [message, code.clone()]
                .into_iter()
                .find(|x| !x.is_empty())
                .unwrap_or_else(|| e.to_string());
            Err(ProviderError::in_stream(
                format!("Codex error: {what}"),
                Some(code.as_str()),
            ))
        }
        "response.failed" => {
            let message = s(e.pointer("/response/error/message"));
            let code = s(e.pointer("/response/error/code"));
            Err(ProviderError::in_stream(
                if message.is_empty() {
                    "Codex response failed".into()
                } else {
                    message
                },
                Some(code.as_str()),
            ))
        }
        "response.done" | "response.completed" | "response.incomplete" => {
            e["type"] = json!("response.completed");
            if let Some(resp) = e.get_mut("response").and_then(Value::as_object_mut) {
                let known = [
                    "completed",
                    "incomplete",
                    "failed",
                    "cancelled",
                    "queued",
                    "in_progress",
                ];
                let keep = resp
                    .get("status")
                    .and_then(Value::as_str)
                    .is_some_and(|st| known.contains(&st));
                if !keep {
                    resp.remove("status");
                }
            }
            Ok(e)
        }
        _ => Ok(e),
    }
}

/// pi's wording for a spent ChatGPT quota (`usage_limit_reached` and friends, or any 429).
pub fn friendly_error(status: Option<u16>, body: &str) -> Option<String> {
    let v: Value = serde_json::from_str(body).ok()?;
    let err = v.get("error")?;
    let code = err
        .get("code")
        .or_else(|| err.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_ascii_lowercase();
    let limited = [
        "usage_limit_reached",
        "usage_not_included",
        "rate_limit_exceeded",
    ]
    .iter()
    .any(|c| code.contains(c));
    if !limited && status != Some(429) {
        return None;
    }
    let plan = err
        .get("plan_type")
        .and_then(Value::as_str)
        .map(|p| format!(" ({} plan)", p.to_ascii_lowercase()))
        .unwrap_or_default();
    let when = err
        .get("resets_at")
        .and_then(Value::as_f64)
        .map(|at| {
            let mins = ((at * 1000.0 - now_ms() as f64) / 60_000.0)
                .round()
                .max(0.0);
            format!(" Try again in ~{mins} min.")
        })
        .unwrap_or_default();
    Some(format!(
        "You have hit your ChatGPT usage limit{plan}.{when}"
    ))
}

#[cfg(test)]
#[path = "tests/openai_codex_responses.rs"]
mod tests;
