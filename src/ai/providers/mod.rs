//! Dispatch from a model's wire API to the provider that speaks it. Every provider returns a
//! receiver of `AssistantEvent`s that ends with exactly one `Done` or `Error`.

pub mod anthropic;
pub mod azure_openai_responses;
pub mod bedrock;
pub mod cloud;
pub mod google;
pub mod hot;
mod json_out;
pub mod mistral;
pub mod openai_codex_responses;
pub mod openai_compat;
pub mod openai_completions;
pub mod openai_responses;
pub mod scripted;
pub mod vertex;

use crossbeam_channel::Receiver;

use super::stream::{spawn_stream, Abort};
use super::types::{AssistantEvent, Context, Model, StreamOptions};

/// The wire APIs this build can speak.
pub const SUPPORTED_APIS: &[&str] = &[
    "anthropic-messages",
    "openai-completions",
    "openai-responses",
    "google-generative-ai",
    "azure-openai-responses",
    "mistral-conversations",
    "bedrock-converse-stream",
    "google-vertex",
    "openai-codex-responses",
];

/// Starts one streaming LLM call for `model`.
pub fn stream(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    abort: Abort,
) -> Receiver<AssistantEvent> {
    let resolved;
    let model = if model.base_url.contains('{') {
        match resolve_base_url_placeholders(&model.base_url, &model.provider, |k| {
            std::env::var(k).ok()
        }) {
            Ok(url) => {
                resolved = Model {
                    base_url: url,
                    ..model.clone()
                };
                &resolved
            }
            Err(msg) => return spawn_stream(model, abort, move |_| Err(msg.into())),
        }
    } else {
        model
    };
    match model.api.as_str() {
        "anthropic-messages" => anthropic::stream(model, context, options, abort),
        "openai-completions" => openai_completions::stream(model, context, options, abort),
        "openai-responses" => openai_responses::stream(model, context, options, abort),
        "google-generative-ai" => google::stream(model, context, options, abort),
        "azure-openai-responses" => azure_openai_responses::stream(model, context, options, abort),
        "mistral-conversations" => mistral::stream(model, context, options, abort),
        "bedrock-converse-stream" => bedrock::stream(model, context, options, abort),
        "google-vertex" => vertex::stream(model, context, options, abort),
        "openai-codex-responses" => openai_codex_responses::stream(model, context, options, abort),
        api if api.starts_with("scripted") => scripted::stream(model, context, options, abort),
        api => {
            let msg = format!("No API provider registered for api: {api}");
            spawn_stream(model, abort, move |_| Err(msg.into()))
        }
    }
}

/// Fills `{VAR}` placeholders in a base URL from the environment (Cloudflare's catalog URLs
/// carry `{CLOUDFLARE_ACCOUNT_ID}` and `{CLOUDFLARE_GATEWAY_ID}`); a missing variable is an
/// error naming it, as in pi.
pub fn resolve_base_url_placeholders(
    url: &str,
    provider: &str,
    env: impl Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let mut out = String::with_capacity(url.len());
    let mut rest = url;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}').map(|c| open + c) else {
            break;
        };
        let name = &rest[open + 1..close];
        let valid = !name.is_empty()
            && name.starts_with(|c: char| c.is_ascii_uppercase() || c == '_')
            && name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        out.push_str(&rest[..open]);
        if valid {
            match env(name).filter(|v| !v.is_empty()) {
                Some(v) => out.push_str(&v),
                None => {
                    return Err(format!(
                        "{name} is required for provider {provider} but is not set."
                    ))
                }
            }
        } else {
            out.push_str(&rest[open..=close]);
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
#[test]
fn base_url_placeholders_come_from_the_environment() {
    let env = |k: &str| (k == "CLOUDFLARE_ACCOUNT_ID").then(|| "acc".to_string());
    assert_eq!(
        resolve_base_url_placeholders("https://x/{CLOUDFLARE_ACCOUNT_ID}/ai/v1", "cf", env),
        Ok("https://x/acc/ai/v1".into())
    );
    assert_eq!(
        resolve_base_url_placeholders(
            "https://x/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}",
            "cf",
            env
        ),
        Err("CLOUDFLARE_GATEWAY_ID is required for provider cf but is not set.".into())
    );
    assert_eq!(
        resolve_base_url_placeholders("https://x/{lower}", "cf", env),
        Ok("https://x/{lower}".into())
    );
}

/// For providers authenticated by ambient cloud credentials rather than an API key: what to
/// tell the user when none are configured.
pub fn missing_credentials_message(provider: &str) -> Option<&'static str> {
    match provider {
        "amazon-bedrock" => Some(bedrock::credentials::MISSING_CREDENTIALS),
        "google-vertex" => Some(vertex::MISSING_CREDENTIALS),
        _ => None,
    }
}
