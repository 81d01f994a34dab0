//! Pieces shared by the two OpenAI wire APIs: the resolved `compat` flags of an
//! openai-completions model (explicit `model.compat` over auto-detection from provider and base
//! URL), thinking-level clamping and mapping, request headers, the default output-token cap and
//! the small string helpers both request builders need.

use serde_json::{Map, Value};

use crate::ai::error::ProviderError;
use crate::ai::types::{Model, StreamOptions, ThinkingLevel};

/// How a provider wants reasoning requested on Chat Completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThinkingFormat {
    OpenAi,
    OpenRouter,
    DeepSeek,
    Zai,
    Qwen,
    QwenChatTemplate,
}

impl ThinkingFormat {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "openai" => ThinkingFormat::OpenAi,
            "openrouter" => ThinkingFormat::OpenRouter,
            "deepseek" => ThinkingFormat::DeepSeek,
            "zai" => ThinkingFormat::Zai,
            "qwen" => ThinkingFormat::Qwen,
            "qwen-chat-template" => ThinkingFormat::QwenChatTemplate,
            _ => return None,
        })
    }
}

/// Fully resolved compatibility flags for an openai-completions endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct Compat {
    pub supports_store: bool,
    pub supports_developer_role: bool,
    pub supports_reasoning_effort: bool,
    pub supports_usage_in_streaming: bool,
    /// `true` → `max_tokens`, `false` → `max_completion_tokens`.
    pub use_max_tokens_field: bool,
    pub requires_tool_result_name: bool,
    pub requires_assistant_after_tool_result: bool,
    pub requires_thinking_as_text: bool,
    pub requires_reasoning_content_on_assistant_messages: bool,
    pub thinking_format: ThinkingFormat,
    pub open_router_routing: Option<Value>,
    pub vercel_gateway_routing: Option<Value>,
    pub zai_tool_stream: bool,
    pub supports_strict_mode: bool,
    /// `Some("anthropic")` adds Anthropic-style `cache_control` markers.
    pub cache_control_format: Option<String>,
    pub send_session_affinity_headers: bool,
    pub supports_long_cache_retention: bool,
}

impl Compat {
    /// What pi infers from the provider name and base URL alone.
    pub fn detect(model: &Model) -> Compat {
        let provider = model.provider.as_str();
        let url = model.base_url.as_str();
        let is_zai = provider == "zai" || url.contains("api.z.ai");
        let is_moonshot = provider == "moonshotai"
            || provider == "moonshotai-cn"
            || url.contains("api.moonshot.");
        let is_cf_workers =
            provider == "cloudflare-workers-ai" || url.contains("api.cloudflare.com");
        let is_cf_gateway =
            provider == "cloudflare-ai-gateway" || url.contains("gateway.ai.cloudflare.com");
        let is_grok = provider == "xai" || url.contains("api.x.ai");
        let is_deepseek = provider == "deepseek" || url.contains("deepseek.com");
        let non_standard = provider == "cerebras"
            || url.contains("cerebras.ai")
            || is_grok
            || url.contains("chutes.ai")
            || url.contains("deepseek.com")
            || is_zai
            || is_moonshot
            || provider == "opencode"
            || url.contains("opencode.ai")
            || is_cf_workers
            || is_cf_gateway;
        let thinking_format = if is_deepseek {
            ThinkingFormat::DeepSeek
        } else if is_zai {
            ThinkingFormat::Zai
        } else if provider == "openrouter" || url.contains("openrouter.ai") {
            ThinkingFormat::OpenRouter
        } else {
            ThinkingFormat::OpenAi
        };
        Compat {
            supports_store: !non_standard,
            // pi 1.6.0 (#10741): the developer role is OpenAI's own; other hosts' chat
            // templates often reject it and all accept `system`.
            supports_developer_role: provider == "openai" || url.contains("api.openai.com"),
            supports_reasoning_effort: !is_grok && !is_zai && !is_moonshot && !is_cf_gateway,
            supports_usage_in_streaming: true,
            use_max_tokens_field: url.contains("chutes.ai") || is_moonshot || is_cf_gateway,
            requires_tool_result_name: false,
            requires_assistant_after_tool_result: false,
            requires_thinking_as_text: false,
            requires_reasoning_content_on_assistant_messages: is_deepseek,
            thinking_format,
            open_router_routing: None,
            vercel_gateway_routing: None,
            zai_tool_stream: false,
            // pi 1.x: Chat Completions compatibility alone does not mean strict tool schemas
            // are understood; an endpoint opts in with `compat.supportsStrictMode`.
            supports_strict_mode: false,
            cache_control_format: (provider == "openrouter" && model.id.starts_with("anthropic/"))
                .then(|| "anthropic".to_string()),
            send_session_affinity_headers: false,
            supports_long_cache_retention: !(is_cf_workers || is_cf_gateway),
        }
    }

    /// Explicit `model.compat` keys win over detection; unknown values fall back to it.
    pub fn resolve(model: &Model) -> Compat {
        let mut c = Compat::detect(model);
        let b = |key: &str, slot: &mut bool| {
            if let Some(v) = model.compat_bool(key) {
                *slot = v;
            }
        };
        b("supportsStore", &mut c.supports_store);
        b("supportsDeveloperRole", &mut c.supports_developer_role);
        b("supportsReasoningEffort", &mut c.supports_reasoning_effort);
        b(
            "supportsUsageInStreaming",
            &mut c.supports_usage_in_streaming,
        );
        b("requiresToolResultName", &mut c.requires_tool_result_name);
        b(
            "requiresAssistantAfterToolResult",
            &mut c.requires_assistant_after_tool_result,
        );
        b("requiresThinkingAsText", &mut c.requires_thinking_as_text);
        b(
            "requiresReasoningContentOnAssistantMessages",
            &mut c.requires_reasoning_content_on_assistant_messages,
        );
        b("zaiToolStream", &mut c.zai_tool_stream);
        b("supportsStrictMode", &mut c.supports_strict_mode);
        b(
            "sendSessionAffinityHeaders",
            &mut c.send_session_affinity_headers,
        );
        b(
            "supportsLongCacheRetention",
            &mut c.supports_long_cache_retention,
        );
        match model.compat_str("maxTokensField") {
            Some("max_tokens") => c.use_max_tokens_field = true,
            Some("max_completion_tokens") => c.use_max_tokens_field = false,
            _ => {}
        }
        if let Some(f) = model
            .compat_str("thinkingFormat")
            .and_then(ThinkingFormat::parse)
        {
            c.thinking_format = f;
        }
        if let Some(f) = model.compat_str("cacheControlFormat") {
            c.cache_control_format = Some(f.to_string());
        }
        let obj = |key: &str| {
            model
                .compat
                .as_ref()?
                .get(key)
                .filter(|v| v.is_object())
                .cloned()
        };
        c.open_router_routing = obj("openRouterRouting");
        c.vercel_gateway_routing = obj("vercelGatewayRouting");
        c
    }
}

/// `short` unless `PI_CACHE_RETENTION=long` (pi's default cache-retention resolution).
pub fn long_cache_retention() -> bool {
    std::env::var("PI_CACHE_RETENTION")
        .map(|v| v == "long")
        .unwrap_or(false)
}

/// Output-token cap: the caller's, else the model's capped at 32000 (none for a 0 model cap).
pub fn max_tokens(model: &Model, options: &StreamOptions) -> Option<u64> {
    options
        .max_tokens
        .or_else(|| (model.max_tokens > 0).then(|| model.max_tokens.min(32000)))
        .filter(|n| *n > 0)
}

fn level_map(model: &Model) -> Option<&Map<String, Value>> {
    model.thinking_level_map.as_ref()
}

/// The levels a model accepts, as pi computes them from `reasoning` and `thinkingLevelMap`.
fn supported_levels(model: &Model) -> Vec<ThinkingLevel> {
    if !model.reasoning {
        return vec![ThinkingLevel::Off];
    }
    ThinkingLevel::ALL
        .into_iter()
        .filter(|l| {
            let mapped = level_map(model).and_then(|m| m.get(l.as_str()));
            match mapped {
                Some(Value::Null) => false,
                None => !l.needs_explicit_mapping(),
                Some(_) => true,
            }
        })
        .collect()
}

/// The requested level clamped to what the model supports; `None` when thinking is off.
pub fn reasoning_effort(model: &Model, options: &StreamOptions) -> Option<ThinkingLevel> {
    let wanted = options.reasoning?;
    let levels = supported_levels(model);
    let clamped = if levels.contains(&wanted) {
        wanted
    } else {
        let all = ThinkingLevel::ALL;
        let i = all.iter().position(|l| *l == wanted).unwrap_or(0);
        all[i..]
            .iter()
            .chain(all[..i].iter().rev())
            .copied()
            .find(|l| levels.contains(l))
            .unwrap_or(ThinkingLevel::Off)
    };
    (clamped != ThinkingLevel::Off).then_some(clamped)
}

/// The provider value for `level`: the model's `thinkingLevelMap` entry, else the level name.
pub fn effort_value(model: &Model, level: ThinkingLevel) -> Value {
    match level_map(model).and_then(|m| m.get(level.as_str())) {
        Some(v) if !v.is_null() => v.clone(),
        _ => Value::String(level.as_str().to_string()),
    }
}

/// The raw `thinkingLevelMap.off` entry: `None` if absent, `Some(Null)` if explicitly null.
pub fn off_value(model: &Model) -> Option<&Value> {
    level_map(model)?.get("off")
}

/// Sets `name: value`, replacing any header of the same name (compared case-insensitively).
pub fn set_header(headers: &mut Vec<(String, String)>, name: &str, value: &str) {
    headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
    headers.push((name.to_string(), value.to_string()));
}

/// Bearer auth, then the model's headers, then `extra`, then the caller's headers (last wins).
pub fn build_headers(
    model: &Model,
    options: &StreamOptions,
    extra: &[(String, String)],
) -> Vec<(String, String)> {
    let mut h = Vec::new();
    set_header(
        &mut h,
        "Authorization",
        &format!("Bearer {}", options.api_key),
    );
    if let Some(mh) = &model.headers {
        for (k, v) in mh {
            match v {
                Value::String(s) => set_header(&mut h, k, s),
                Value::Null => h.retain(|(n, _)| !n.eq_ignore_ascii_case(k)),
                other => set_header(&mut h, k, &other.to_string()),
            }
        }
    }
    for (k, v) in extra.iter().chain(options.headers.iter()) {
        set_header(&mut h, k, v);
    }
    h
}

/// `<baseUrl>/<path>` without doubling the slash.
pub fn join_url(base: &str, path: &str) -> String {
    format!("{}/{}", base.trim_end_matches('/'), path)
}

/// Replaces every character outside `[A-Za-z0-9_-]` with `_`.
pub fn sanitize_id(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The first `n` characters of `s`.
pub fn truncate_chars(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// pi's 53-bit-style short string hash (two 32-bit lanes over UTF-16 units, base 36).
pub fn short_hash(s: &str) -> String {
    let mut h1: u32 = 0xdead_beef;
    let mut h2: u32 = 0x41c6_ce57;
    for ch in s.encode_utf16() {
        h1 = (h1 ^ ch as u32).wrapping_mul(2_654_435_761);
        h2 = (h2 ^ ch as u32).wrapping_mul(1_597_334_677);
    }
    h1 = (h1 ^ (h1 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h2 ^ (h2 >> 13)).wrapping_mul(3_266_489_909);
    h2 = (h2 ^ (h2 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h1 ^ (h1 >> 13)).wrapping_mul(3_266_489_909);
    format!("{}{}", base36(h2), base36(h1))
}

fn base36(mut n: u32) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    if n == 0 {
        return "0".into();
    }
    let mut out = Vec::new();
    while n > 0 {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// A JSON number as a token count (missing, negative or non-numeric → 0).
pub fn tokens(v: Option<&Value>) -> u64 {
    match v {
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| n.as_f64().map(|f| f.max(0.0) as u64))
            .unwrap_or(0),
        _ => 0,
    }
}

/// The readable message of an `error` object from a stream chunk.
pub fn error_message(err: &Value) -> String {
    err.get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| err.as_str().map(str::to_string))
        .unwrap_or_else(|| err.to_string())
}

/// Parses one SSE data payload, turning bad JSON into a readable error.
pub fn parse_chunk(data: &str) -> Result<Value, ProviderError> {
    serde_json::from_str(data).map_err(|e| {
        let snippet: String = data.chars().take(200).collect();
        format!("Malformed stream chunk from server ({e}): {snippet}").into()
    })
}

pub const CONNECTION_LOST: &str = "Connection lost: stream ended before the response was complete";

#[cfg(test)]
#[path = "tests/openai_compat.rs"]
mod tests;

/// Helpers shared by the provider tests: a local custom model, a reader that hands out a few
/// bytes per `read`, and a compact trace of the emitted events.
#[cfg(test)]
#[path = "tests/compat_support.rs"]
pub mod test_support;
