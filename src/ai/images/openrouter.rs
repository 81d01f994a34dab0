//! `openrouter-images`: image generation over OpenRouter's chat completions endpoint, as pi-ai
//! 1.6.0's `api/openrouter-images.ts` speaks it. The request is one non-streaming
//! `POST <baseUrl>/chat/completions` with the prompt as one user message of text and
//! `image_url` parts and `modalities: ["image", "text"]` (`["image"]` for models that answer
//! with images only); the answer's `choices[0].message` holds the text in `content` and the
//! images in `images[].image_url.url` as base64 `data:` URLs.
//!
//! Wire format checked against OpenRouter's published API: "Image Generation",
//! https://openrouter.ai/docs/features/multimodal/image-generation (request: `modalities`
//! including `"image"` on `/api/v1/chat/completions`; response: `choices[0].message.images`,
//! each `{ type: "image_url", image_url: { url: "data:image/png;base64,…" } }`).

use std::time::Duration;

use crossbeam_channel::select;
use serde_json::{json, Value};

use super::catalog::NonChatModel;
use super::types::{CallStop, ImageBlock, ImagesResult, ModelAuth, OutputBlock, Request};
use crate::ai::{Abort, Usage};

pub const API: &str = "openrouter-images";

/// How often the caller looks at the abort flag while the request runs (well under 100 ms).
const POLL: Duration = Duration::from_millis(50);

/// The request for `input`: its URL, headers and JSON body.
pub fn build_request(model: &NonChatModel, input: &[OutputBlock], auth: &ModelAuth) -> Request {
    let content: Vec<Value> = input
        .iter()
        .map(|block| match block {
            OutputBlock::Text(text) => json!({"type": "text", "text": text}),
            OutputBlock::Image(i) => json!({
                "type": "image_url",
                "image_url": {"url": format!("data:{};base64,{}", i.mime_type, i.data)},
            }),
        })
        .collect();
    let modalities = if model.text_output {
        json!(["image", "text"])
    } else {
        json!(["image"])
    };
    let body = json!({
        "model": model.id,
        "messages": [{"role": "user", "content": content}],
        "stream": false,
        "modalities": modalities,
    });
    let base = auth.base_url.as_deref().unwrap_or(&model.base_url);
    let url = format!("{}/chat/completions", base.trim_end_matches('/'));
    let mut headers = vec![(
        "Authorization".to_string(),
        format!("Bearer {}", auth.api_key),
    )];
    for (k, v) in &auth.headers {
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case(k));
        headers.push((k.clone(), v.clone()));
    }
    (url, headers, body)
}

/// The result a response body makes: text from `content`, images from `images` (only base64
/// `data:` URLs; others are skipped as pi skips them), usage priced with the model's cost.
pub fn parse_response(model: &NonChatModel, body: &Value) -> ImagesResult {
    let mut result = ImagesResult::empty(API, &model.provider, &model.id);
    result.response_id = body["id"].as_str().map(str::to_string);
    if body.get("usage").is_some_and(Value::is_object) {
        result.usage = Some(usage(model, &body["usage"]));
    }
    let message = &body["choices"][0]["message"];
    if let Some(text) = message["content"].as_str().filter(|t| !t.is_empty()) {
        result.output.push(OutputBlock::Text(text.to_string()));
    }
    for image in message["images"].as_array().into_iter().flatten() {
        let url = match &image["image_url"] {
            Value::String(s) => Some(s.as_str()),
            v => v["url"].as_str(),
        };
        let Some(rest) = url.and_then(|u| u.strip_prefix("data:")) else {
            continue;
        };
        let Some((mime_type, data)) = rest.split_once(";base64,") else {
            continue;
        };
        if mime_type.is_empty() || mime_type.contains(';') || data.is_empty() {
            continue;
        }
        result.output.push(OutputBlock::Image(ImageBlock {
            data: data.to_string(),
            mime_type: mime_type.to_string(),
        }));
    }
    result
}

/// pi-ai's `parseUsage`: cached prompt tokens split into reads and writes, each priced per
/// million tokens.
fn usage(model: &NonChatModel, raw: &Value) -> Usage {
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    let prompt = n(&raw["prompt_tokens"]);
    let cached = n(&raw["prompt_tokens_details"]["cached_tokens"]);
    let cache_write = n(&raw["prompt_tokens_details"]["cache_write_tokens"]);
    let cache_read = if cache_write > 0 {
        cached.saturating_sub(cache_write)
    } else {
        cached
    };
    let input = prompt.saturating_sub(cache_read + cache_write);
    let output = n(&raw["completion_tokens"]);
    let mut u = Usage {
        input,
        output,
        cache_read,
        cache_write,
        total_tokens: input + output + cache_read + cache_write,
        ..Default::default()
    };
    let per = |price: f64, tokens: u64| price / 1_000_000.0 * tokens as f64;
    u.cost.input = per(model.cost.input, input);
    u.cost.output = per(model.cost.output, output);
    u.cost.cache_read = per(model.cost.cache_read, cache_read);
    u.cost.cache_write = per(model.cost.cache_write, cache_write);
    u.cost.total = u.cost.input + u.cost.output + u.cost.cache_read + u.cost.cache_write;
    u
}

/// Generates images with `model`. The request runs on its own thread (`pi-images`); this waits
/// for it and gives up within 50 ms of `abort` (the request's late answer is dropped).
pub fn generate_images(
    model: &NonChatModel,
    input: &[OutputBlock],
    auth: &ModelAuth,
    abort: &Abort,
) -> ImagesResult {
    let empty = ImagesResult::empty(API, &model.provider, &model.id);
    if abort.is_aborted() {
        return empty.failed(CallStop::Aborted, "Request was aborted");
    }
    if auth.api_key.is_empty() {
        return empty.failed(
            CallStop::Error,
            format!("No API key for provider: {}", model.provider),
        );
    }
    let (url, headers, body) = build_request(model, input, auth);
    let (tx, rx) = crossbeam_channel::bounded(1);
    let spawned = std::thread::Builder::new()
        .name("pi-images".into())
        .spawn(move || {
            let _ = tx.send(post(&url, &headers, &body.to_string()));
        });
    if let Err(e) = spawned {
        return empty.failed(CallStop::Error, format!("could not start the request: {e}"));
    }
    let signal = abort.signal();
    loop {
        select! {
            recv(rx) -> got => {
                return match got {
                    Ok(Ok(body)) => parse_response(model, &body),
                    Ok(Err(message)) => empty.failed(CallStop::Error, message),
                    Err(_) => empty.failed(CallStop::Error, "the request ended without an answer"),
                };
            }
            recv(signal) -> _ => {}
            default(POLL) => {}
        }
        if abort.is_aborted() {
            return empty.failed(CallStop::Aborted, "Request was aborted");
        }
    }
}

/// POSTs the body and reads the JSON answer; `Err` is the message for the result.
pub(super) fn post(url: &str, headers: &[(String, String)], body: &str) -> Result<Value, String> {
    let text = crate::ai::http::post_json_document(url, headers, body).map_err(|e| e.message)?;
    serde_json::from_str(&text).map_err(|e| format!("Invalid JSON response from {url}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::images::catalog::find_model;

    fn banana() -> &'static NonChatModel {
        find_model("image", "openrouter", "google/gemini-2.5-flash-image").unwrap()
    }

    #[test]
    fn the_request_is_one_user_message_with_the_modalities_the_model_answers_in() {
        let auth = ModelAuth {
            api_key: "sk-or".into(),
            headers: vec![("X-Extra".into(), "1".into())],
            base_url: None,
        };
        let input = [
            OutputBlock::Text("a red fox".into()),
            OutputBlock::Image(ImageBlock {
                data: "iVBORw0KGgo=".into(),
                mime_type: "image/png".into(),
            }),
        ];
        let (url, headers, body) = build_request(banana(), &input, &auth);
        assert_eq!(url, "https://openrouter.ai/api/v1/chat/completions");
        assert!(headers.contains(&("Authorization".into(), "Bearer sk-or".into())));
        assert!(headers.contains(&("X-Extra".into(), "1".into())));
        assert_eq!(
            body,
            json!({
                "model": "google/gemini-2.5-flash-image",
                "messages": [{"role": "user", "content": [
                    {"type": "text", "text": "a red fox"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                ]}],
                "stream": false,
                "modalities": ["image", "text"],
            })
        );
        let flux = find_model("image", "openrouter", "black-forest-labs/flux.2-pro").unwrap();
        let (_, _, body) = build_request(flux, &input[..1], &auth);
        assert_eq!(body["modalities"], json!(["image"]));
    }

    #[test]
    fn the_response_gives_text_images_and_priced_usage() {
        let body = json!({
            "id": "gen-1",
            "choices": [{"message": {"role": "assistant", "content": "Here it is", "images": [
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                {"type": "image_url", "image_url": {"url": "https://example.com/x.png"}},
                {"type": "image_url", "image_url": "data:image/jpeg;base64,BBBB"},
            ]}}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 2000,
                      "prompt_tokens_details": {"cached_tokens": 100}},
        });
        let r = parse_response(banana(), &body);
        assert_eq!(r.stop_reason, CallStop::Stop);
        assert_eq!(r.response_id.as_deref(), Some("gen-1"));
        assert_eq!(r.image_count(), 2);
        assert_eq!(r.output[0], OutputBlock::Text("Here it is".into()));
        let u = r.usage.unwrap();
        assert_eq!(
            (u.input, u.output, u.cache_read, u.total_tokens),
            (900, 2000, 100, 3000)
        );
        assert!((u.cost.total - (0.3 * 900.0 + 2.5 * 2000.0 + 0.03 * 100.0) / 1e6).abs() < 1e-12);
        let json = r.to_json();
        let keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "api",
                "provider",
                "model",
                "output",
                "stopReason",
                "timestamp",
                "responseId",
                "usage"
            ]
        );
        assert_eq!(
            json["output"][1],
            json!({"type": "image", "mimeType": "image/png", "data": "AAAA"})
        );
    }

    #[test]
    fn no_key_and_an_abort_are_results_not_failures() {
        let r = generate_images(banana(), &[], &ModelAuth::default(), &Abort::new());
        assert_eq!(r.stop_reason, CallStop::Error);
        assert_eq!(
            r.error_message.as_deref(),
            Some("No API key for provider: openrouter")
        );
        let abort = Abort::new();
        abort.abort();
        let auth = ModelAuth {
            api_key: "k".into(),
            ..Default::default()
        };
        let r = generate_images(banana(), &[], &auth, &abort);
        assert_eq!(r.stop_reason, CallStop::Aborted);
    }

    /// A server that never answers: the abort still ends the call within 100 ms.
    #[test]
    fn an_abort_ends_a_stalled_request() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let held = std::thread::spawn(move || listener.accept().map(|(s, _)| s));
        let auth = ModelAuth {
            api_key: "k".into(),
            headers: Vec::new(),
            base_url: Some(format!("http://127.0.0.1:{port}/api/v1")),
        };
        let abort = Abort::new();
        let stopper = abort.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            stopper.abort();
        });
        let input = [OutputBlock::Text("x".into())];
        let r = generate_images(banana(), &input, &auth, &abort);
        assert_eq!(r.stop_reason, CallStop::Aborted);
        assert_eq!(r.error_message.as_deref(), Some("Request was aborted"));
        drop(held);
    }
}
