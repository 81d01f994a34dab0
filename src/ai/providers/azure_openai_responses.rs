//! The Azure OpenAI Responses wire API (`azure-openai-responses`). The body is the OpenAI
//! Responses body (see `openai_responses`) with the Azure deployment name in `model`, no
//! `store`/`prompt_cache_retention`, and Azure counted among the providers whose tool-call ids
//! keep their `|item_id` half. The endpoint is `<base>/responses?api-version=<v>`, where the base
//! comes from `AZURE_OPENAI_BASE_URL`, else `AZURE_OPENAI_RESOURCE_NAME`, else the model's
//! `baseUrl`; the key goes in an `api-key` header. The SSE answer is parsed by
//! `openai_responses::parse_stream`.

use crossbeam_channel::Receiver;
use serde_json::{json, Map, Value};

use super::openai_compat as oc;
use super::openai_responses;
use crate::ai::provider_retry::{self, Rules};
use crate::ai::stream::{spawn_stream, Abort};
use crate::ai::types::*;
use crate::util::encoding::percent_encode;

pub const DEFAULT_API_VERSION: &str = "v1";

/// Providers whose Responses endpoint accepts the `|item_id` half of a tool-call id.
const TOOL_CALL_ITEM_PROVIDERS: [&str; 5] = [
    "openai",
    "openai-codex",
    "opencode",
    "azure",
    "azure-openai-responses",
];

/// Looks up an environment variable (injected so tests need not touch the process env).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// A variable's value, with unset and empty (after trimming) both meaning "not set".
fn env_value(env: Env, name: &str) -> Option<String> {
    env(name)
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// URL, headers and JSON body of one request.
pub type Request = (String, Vec<(String, String)>, Value);

/// Where requests go: the normalized base URL and the `api-version` query value.
#[derive(Debug, Clone, PartialEq)]
pub struct AzureConfig {
    pub base_url: String,
    pub api_version: String,
}

impl AzureConfig {
    /// The full Responses endpoint URL.
    pub fn responses_url(&self) -> String {
        // Like the OpenAI SDK, the request's query replaces any query on the base URL.
        let base = self.base_url.split(['?', '#']).next().unwrap_or("");
        format!(
            "{}?api-version={}",
            oc::join_url(base, "responses"),
            // `encodeURIComponent`, as the SDK encodes query values.
            percent_encode(&self.api_version, b"!*'()")
        )
    }
}

/// pi's `resolveAzureConfig`: `AZURE_OPENAI_BASE_URL`, else the resource name's default
/// endpoint, else the model's `baseUrl`; `AZURE_OPENAI_API_VERSION` defaults to `v1`.
pub fn resolve_config(model: &Model, env: Env) -> Result<AzureConfig, String> {
    let api_version =
        env_value(env, "AZURE_OPENAI_API_VERSION").unwrap_or_else(|| DEFAULT_API_VERSION.into());
    let base = env_value(env, "AZURE_OPENAI_BASE_URL")
        .or_else(|| {
            env_value(env, "AZURE_OPENAI_RESOURCE_NAME")
                .map(|r| format!("https://{r}.openai.azure.com/openai/v1"))
        })
        .or_else(|| Some(model.base_url.trim().to_string()).filter(|b| !b.is_empty()))
        .ok_or_else(|| {
            "Azure OpenAI base URL is required. Set AZURE_OPENAI_BASE_URL (for example \
             https://<resource>.openai.azure.com/openai/v1) or AZURE_OPENAI_RESOURCE_NAME, \
             or give the model a baseUrl in models.json."
                .to_string()
        })?;
    Ok(AzureConfig {
        base_url: normalize_base_url(&base)?,
        api_version,
    })
}

/// Trims trailing slashes and, for `*.openai.azure.com` / `*.cognitiveservices.azure.com`
/// hosts given without a path (or just `/openai`), uses the `/openai/v1` path.
pub fn normalize_base_url(raw: &str) -> Result<String, String> {
    let trimmed = raw.trim().trim_end_matches('/');
    let invalid = || format!("Invalid Azure OpenAI base URL: {raw}");
    let (scheme, rest) = trimmed.split_once("://").ok_or_else(invalid)?;
    let scheme_ok = scheme
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if host_port.starts_with('[') {
        host_port
    } else {
        host_port.split(':').next().unwrap_or("")
    }
    .to_ascii_lowercase();
    if !scheme_ok || host.is_empty() || rest.contains(char::is_whitespace) {
        return Err(invalid());
    }
    let path = tail.split(['?', '#']).next().unwrap_or("");
    let path = path.trim_end_matches('/');
    let azure_host =
        host.ends_with(".openai.azure.com") || host.ends_with(".cognitiveservices.azure.com");
    if azure_host && (path.is_empty() || path == "/openai") {
        return Ok(format!("{scheme}://{authority}/openai/v1"));
    }
    Ok(trimmed.to_string())
}

/// pi's `AZURE_OPENAI_DEPLOYMENT_NAME_MAP` parsing: `model=deployment` pairs separated by
/// commas; malformed entries are skipped and later entries win.
pub fn parse_deployment_map(value: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for entry in value.split(',') {
        let entry = entry.trim();
        if entry.is_empty() {
            continue;
        }
        let mut parts = entry.split('=');
        let (Some(id), Some(dep)) = (parts.next(), parts.next()) else {
            continue;
        };
        if id.is_empty() || dep.is_empty() {
            continue;
        }
        let (id, dep) = (id.trim().to_string(), dep.trim().to_string());
        out.retain(|(k, _)| *k != id);
        out.push((id, dep));
    }
    out
}

/// The deployment to name in `model`: the mapped one, else the model id.
pub fn deployment_name(model: &Model, env: Env) -> String {
    env("AZURE_OPENAI_DEPLOYMENT_NAME_MAP")
        .map(|m| parse_deployment_map(&m))
        .and_then(|m| m.into_iter().find(|(k, _)| *k == model.id))
        .map(|(_, d)| d)
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| model.id.clone())
}

/// `api-key`, then the model's headers, then the request's (later ones win; a null model
/// header removes the name).
fn build_headers(model: &Model, options: &StreamOptions, api_key: &str) -> Vec<(String, String)> {
    let mut h = vec![("api-key".to_string(), api_key.to_string())];
    if let Some(mh) = &model.headers {
        for (k, v) in mh {
            match v {
                Value::String(s) => oc::set_header(&mut h, k, s),
                Value::Null => h.retain(|(n, _)| !n.eq_ignore_ascii_case(k)),
                other => oc::set_header(&mut h, k, &other.to_string()),
            }
        }
    }
    for (k, v) in &options.headers {
        oc::set_header(&mut h, k, v);
    }
    h
}

/// URL, headers and JSON body of one streaming Azure Responses request, reading
/// configuration through `env`. Errors name the variable to set.
pub fn build_request_with(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    env: Env,
) -> Result<Request, String> {
    let api_key = Some(options.api_key.clone())
        .filter(|k| !k.is_empty())
        .or_else(|| env("AZURE_OPENAI_API_KEY").filter(|k| !k.is_empty()))
        .ok_or_else(|| {
            "Azure OpenAI API key is required. Set the AZURE_OPENAI_API_KEY environment \
             variable or configure a key for this provider."
                .to_string()
        })?;
    let config = resolve_config(model, env)?;
    let deployment = deployment_name(model, env);

    let (_, _, base) = openai_responses::build_request(model, context, options);
    let mut body = Map::new();
    if let Value::Object(m) = base {
        for (k, v) in m {
            match k.as_str() {
                "store" | "prompt_cache_retention" => {}
                "model" => {
                    body.insert(k, json!(deployment));
                }
                "input" => {
                    let input = openai_responses::convert_input_for(
                        model,
                        context,
                        &TOOL_CALL_ITEM_PROVIDERS,
                    );
                    body.insert(k, Value::Array(input));
                }
                _ => {
                    body.insert(k, v);
                }
            }
        }
    }
    // The Responses provider never sends an "off" effort for github-copilot; Azure does.
    if model.reasoning && !body.contains_key("reasoning") {
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
    Ok((
        config.responses_url(),
        build_headers(model, options, &api_key),
        Value::Object(body),
    ))
}

/// `build_request_with` over the process environment.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> Result<Request, String> {
    build_request_with(model, context, options, &process_env)
}

pub fn stream(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    abort: Abort,
) -> Receiver<AssistantEvent> {
    stream_with(model, context, options, abort, &process_env)
}

fn stream_with(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    abort: Abort,
    env: Env,
) -> Receiver<AssistantEvent> {
    let request = build_request_with(model, context, options, env)
        .map(|(url, headers, body)| (url, headers, options.payload(body)));
    let retry = options.provider_retry;
    spawn_stream(model, abort, move |w| {
        let (url, headers, body) = request?;
        let resp = provider_retry::post_json(w, Rules::OpenAiSdk, &retry, &url, &headers, &body)
            .map_err(|e| w.http_error(e))?;
        openai_responses::parse_stream(resp, w)
    })
}

#[cfg(test)]
#[path = "tests/azure_openai_responses.rs"]
mod tests;
