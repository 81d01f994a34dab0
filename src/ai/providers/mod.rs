//! Dispatch from a model's wire API to the provider that speaks it. Every provider returns a
//! receiver of `AssistantEvent`s that ends with exactly one `Done` or `Error`.

pub mod anthropic;
pub mod azure_openai_responses;
pub mod bedrock;
pub mod cloud;
pub mod google;
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
            spawn_stream(model, abort, move |_| Err(msg))
        }
    }
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
