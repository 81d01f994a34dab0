//! Google Vertex AI (`google-vertex`): the same `streamGenerateContent` body and SSE stream as
//! the Gemini API (shared with `google`), sent to Vertex's URL shape and authenticated either
//! with a Vertex API key (`GOOGLE_CLOUD_API_KEY` or a stored key: express mode) or with
//! application-default credentials (`adc`) plus `GOOGLE_CLOUD_PROJECT`/`GCLOUD_PROJECT` and
//! `GOOGLE_CLOUD_LOCATION`. Token look-ups run on the stream thread.

pub mod adc;

use std::sync::Arc;

use crossbeam_channel::Receiver;

use super::anthropic::merge_headers;
use super::cloud::{process_env, Env, SharedEnv};
use super::google::{build_body, parse_stream_with, Dialect};
use crate::ai::provider_retry::{self, Rules};
use crate::ai::stream::{spawn_stream, Abort};
use crate::ai::types::*;

/// What pi-ai treats as "use ADC" when it appears as the API key.
const ADC_MARKER: &str = "gcp-vertex-credentials";

pub const MISSING_CREDENTIALS: &str = "No Google Cloud credentials found for google-vertex: set GOOGLE_CLOUD_API_KEY, or run `gcloud auth application-default login` (or set GOOGLE_APPLICATION_CREDENTIALS) and set GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION";

pub fn stream(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    abort: Abort,
) -> Receiver<AssistantEvent> {
    stream_with_env(model, context, options, abort, Arc::new(process_env))
}

/// A real API key, or `None` for placeholders such as `<authenticated>`.
fn api_key(options: &StreamOptions, env: Env) -> Option<String> {
    let key = Some(options.api_key.trim().to_string())
        .filter(|k| !k.is_empty())
        .or_else(|| env("GOOGLE_CLOUD_API_KEY").map(|k| k.trim().to_string()))?;
    let placeholder = key.len() > 2 && key.starts_with('<') && key.ends_with('>');
    (!placeholder && key != ADC_MARKER && !key.is_empty()).then_some(key)
}

/// `publishers/google/models/{id}` unless the id is already a resource path.
fn model_path(id: &str) -> String {
    if ["publishers/", "projects/", "models/"]
        .iter()
        .any(|p| id.starts_with(p))
    {
        return id.to_string();
    }
    match id.split_once('/') {
        Some((publisher, name)) => format!("publishers/{publisher}/models/{name}"),
        None => format!("publishers/google/models/{id}"),
    }
}

/// A custom `baseUrl` (one without the catalog's `{location}` placeholder), if set.
fn custom_base(model: &Model) -> Option<&str> {
    let b = model.base_url.trim();
    (!b.is_empty() && !b.contains("{location}")).then_some(b)
}

/// Whether a URL path already names an API version (`v1`, `v1beta1`, …).
fn has_api_version(url: &str) -> bool {
    let path = url.split_once("://").map_or(url, |(_, r)| r);
    path.split('/').skip(1).any(|seg| {
        let Some(rest) = seg.strip_prefix('v') else {
            return false;
        };
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0 && {
            let tail = &rest[digits..];
            tail.is_empty()
                || tail
                    .strip_prefix("beta")
                    .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit()))
        }
    })
}

/// The request URL, as `@google/genai` builds it for Vertex. `scope` is `None` in API-key
/// mode, else `(project, location)`.
pub fn request_url(model: &Model, scope: Option<(&str, &str)>) -> String {
    let method = format!("{}:streamGenerateContent?alt=sse", model_path(&model.id));
    if let Some(base) = custom_base(model) {
        // A custom base URL addresses the model collection directly, without the project.
        let base = base.trim_end_matches('/');
        return if has_api_version(base) {
            format!("{base}/{method}")
        } else {
            format!("{base}/v1/{method}")
        };
    }
    match scope {
        None => format!("https://aiplatform.googleapis.com/v1/{method}"),
        Some((project, location)) => {
            let host = match location {
                "global" => "aiplatform.googleapis.com".to_string(),
                "us" | "eu" => format!("aiplatform.{location}.rep.googleapis.com"),
                l => format!("{l}-aiplatform.googleapis.com"),
            };
            format!("https://{host}/v1/projects/{project}/locations/{location}/{method}")
        }
    }
}

/// `stream` with an explicit environment (credentials, project, location, token endpoint).
pub fn stream_with_env(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    abort: Abort,
    env: SharedEnv,
) -> Receiver<AssistantEvent> {
    let body = options.payload(build_body(model, context, options, Dialect::Vertex));
    let (model_c, options) = (model.clone(), options.clone());
    spawn_stream(model, abort, move |w| {
        let env = &*env;
        let (url, auth) = match api_key(&options, env) {
            Some(key) => (
                request_url(&model_c, None),
                vec![("x-goog-api-key".to_string(), key)],
            ),
            None => {
                if !adc::credentials_path(env).is_some_and(|p| p.exists()) {
                    return Err(MISSING_CREDENTIALS.into());
                }
                let token = adc::access_token(env)?;
                let project = env("GOOGLE_CLOUD_PROJECT")
                    .or_else(|| env("GCLOUD_PROJECT"))
                    .or_else(|| token.project.clone())
                    .ok_or(
                        "Vertex AI requires a project ID. Set GOOGLE_CLOUD_PROJECT/GCLOUD_PROJECT.",
                    )?;
                let location = env("GOOGLE_CLOUD_LOCATION")
                    .ok_or("Vertex AI requires a location. Set GOOGLE_CLOUD_LOCATION.")?;
                let mut h = vec![(
                    "authorization".to_string(),
                    format!("Bearer {}", token.token),
                )];
                if let Some(q) = token.quota_project {
                    h.push(("x-goog-user-project".to_string(), q));
                }
                (request_url(&model_c, Some((&project, &location))), h)
            }
        };
        let headers = merge_headers(auth, model_c.headers.as_ref(), &options.headers);
        let retry = &options.provider_retry;
        let resp = provider_retry::post_json(w, Rules::GoogleSdk, retry, &url, &headers, &body)
            .map_err(|e| w.http_error(e))?;
        parse_stream_with(resp, w, &model_c.cost)
    })
}

#[cfg(test)]
#[path = "../tests/vertex.rs"]
mod tests;
