//! Classifier calls (pi-ai 1.6.0's `classify()`): a model answers typed questions (`choice`,
//! `score`, `bool`) about a JSON state and, for some models, images. Built here:
//! `typesafe-system-one`, the System One protocol TypeSafe serves and OpenRouter, Vercel's AI
//! Gateway, OpenCode and GitHub Copilot relay (75 of the 81 classifiers 1.6.0 lists), as pi-ai's
//! `api/system-one-shared.ts` speaks it: `POST <baseUrl>/systemone` with `{model, state,
//! questions}`, `bool` questions sent as System One's `noul`, images as `image_url` parts before
//! the state (OpenRouter) or as `assets` with TypeSafe's opt-in header. The other classifier
//! APIs (`openai-decisions`, `cloudflare-workers-ai-system-one`) answer with an error result
//! naming the API.

use std::time::Duration;

use crossbeam_channel::select;
use serde_json::{json, Map, Value};

use super::catalog::NonChatModel;
use super::types::{usage_json, CallStop, ModelAuth, Request};
use crate::ai::{Abort, Usage};

pub const SYSTEM_ONE_API: &str = "typesafe-system-one";
const LABEL: &str = "System One API";
const POLL: Duration = Duration::from_millis(50);

/// pi-ai's `ClassifierResult`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassifierResult {
    pub api: String,
    pub provider: String,
    pub model: String,
    pub answers: Map<String, Value>,
    pub stop_reason: CallStop,
    pub timestamp: i64,
    pub usage: Option<Usage>,
    pub error_message: Option<String>,
}

impl ClassifierResult {
    fn empty(model: &NonChatModel) -> ClassifierResult {
        ClassifierResult {
            api: model.api.clone(),
            provider: model.provider.clone(),
            model: model.id.clone(),
            answers: Map::new(),
            stop_reason: CallStop::Stop,
            timestamp: crate::ai::types::now_ms(),
            usage: None,
            error_message: None,
        }
    }

    fn failed(mut self, stop: CallStop, message: String) -> ClassifierResult {
        self.stop_reason = stop;
        self.error_message = Some(message);
        self
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("api".into(), json!(self.api));
        m.insert("provider".into(), json!(self.provider));
        m.insert("model".into(), json!(self.model));
        m.insert("answers".into(), Value::Object(self.answers.clone()));
        m.insert("stopReason".into(), json!(self.stop_reason.as_str()));
        m.insert("timestamp".into(), json!(self.timestamp));
        if let Some(u) = &self.usage {
            let mut u = usage_json(u);
            if let Some(cost) = u["cost"].as_object_mut() {
                cost.remove("totalFromProvider");
            }
            m.insert("usage".into(), u);
        }
        if let Some(e) = &self.error_message {
            m.insert("errorMessage".into(), json!(e));
        }
        Value::Object(m)
    }
}

/// Whether the model's provider is reached through OpenRouter (images go in the state).
fn through_openrouter(model: &NonChatModel, base: &str) -> bool {
    model.provider == "openrouter" || base.contains("openrouter.ai")
}

/// The request for `context` (`{state, images?, questions}`, already checked by the caller):
/// URL, headers and body.
pub fn build_request(
    model: &NonChatModel,
    context: &Value,
    auth: &ModelAuth,
) -> Result<Request, String> {
    let base = auth.base_url.as_deref().unwrap_or(&model.base_url);
    let mut questions = Map::new();
    for (id, q) in context["questions"].as_object().into_iter().flatten() {
        let mut q = q.clone();
        if q["type"] == "bool" {
            q["type"] = json!("noul");
        }
        questions.insert(id.clone(), q);
    }
    let mut state = context["state"].clone();
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    let mut headers = vec![
        (
            "authorization".to_string(),
            format!("Bearer {}", auth.api_key),
        ),
        ("content-type".to_string(), "application/json".to_string()),
    ];
    let images: Vec<&Value> = context["images"].as_array().into_iter().flatten().collect();
    if !images.is_empty() {
        let accepts = model.entry["input"]
            .as_array()
            .is_some_and(|i| i.iter().any(|v| v == "image"));
        if !accepts {
            return Err(format!(
                "{LABEL} does not support image input for {}",
                model.id
            ));
        }
        let compat = &model.entry["compat"];
        let openrouter = through_openrouter(model, base);
        let input = compat["imageInput"].as_str().unwrap_or(if openrouter {
            "state-image-urls"
        } else {
            "assets"
        });
        let url = |i: &Value| {
            format!(
                "data:{};base64,{}",
                i["mimeType"].as_str().unwrap_or_default(),
                i["data"].as_str().unwrap_or_default()
            )
        };
        if input == "state-image-urls" {
            let mut parts: Vec<Value> = images
                .iter()
                .map(|i| json!({"type": "image_url", "image_url": {"url": url(i)}}))
                .collect();
            parts.push(state);
            state = Value::Array(parts);
        } else {
            let mut assets = Map::new();
            for (n, i) in images.iter().enumerate() {
                let format = match i["mimeType"].as_str() {
                    Some("image/png") => "png",
                    Some("image/jpeg") => "jpeg",
                    other => {
                        return Err(format!(
                            "{LABEL} accepts PNG and JPEG images for {}, got {}",
                            model.id,
                            other.unwrap_or("undefined")
                        ))
                    }
                };
                assets.insert(
                    format!("<image-{}>", n + 1),
                    json!({"type": "image", "format": format, "data_base64": i["data"]}),
                );
            }
            let mut parts: Vec<Value> = assets.keys().map(|k| json!(k)).collect();
            parts.push(state);
            state = Value::Array(parts);
            body.insert("assets".into(), Value::Object(assets));
        }
        if compat["sendImageOptInHeader"]
            .as_bool()
            .unwrap_or(!openrouter)
        {
            headers.push(("TypeSafe-Danger-Zone-Images".into(), "true".into()));
        }
    }
    body.insert("state".into(), state);
    body.insert("questions".into(), Value::Object(questions));
    // Key order as pi sends it: model, state, questions, then assets.
    let mut ordered = Map::new();
    for k in ["model", "state", "questions", "assets"] {
        if let Some(v) = body.remove(k) {
            ordered.insert(k.into(), v);
        }
    }
    for (k, v) in &auth.headers {
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case(k));
        headers.push((k.clone(), v.clone()));
    }
    Ok((
        format!("{}/systemone", base.trim_end_matches('/')),
        headers,
        Value::Object(ordered),
    ))
}

fn number(v: &Value, field: &str) -> Result<f64, String> {
    v.as_f64()
        .filter(|n| n.is_finite())
        .ok_or_else(|| format!("{LABEL} returned an invalid {field}"))
}

/// The answers of a response, one per question of `context`, checked as pi checks them.
pub fn parse_answers(context: &Value, answers: &Value) -> Result<Map<String, Value>, String> {
    if !answers.is_object() {
        return Err(format!("{LABEL} returned an unexpected response"));
    }
    let mut out = Map::new();
    for (id, q) in context["questions"].as_object().into_iter().flatten() {
        let a = &answers[id];
        if !a.is_object() {
            return Err(format!("{LABEL} did not return an answer for {id}"));
        }
        let answer = match q["type"].as_str() {
            Some("choice") => {
                let choice = a["choice"].as_str().filter(|_| a["type"] == "choice");
                let Some(choice) = choice else {
                    return Err(format!("{LABEL} did not return a choice answer for {id}"));
                };
                let Some(probs) = a["probabilities"].as_object() else {
                    return Err(format!("{LABEL} returned invalid probabilities for {id}"));
                };
                let mut p = Map::new();
                for (k, v) in probs {
                    p.insert(
                        k.clone(),
                        json!(number(v, &format!("probability for {id}.{k}"))?),
                    );
                }
                json!({"type": "choice", "choice": choice, "probabilities": p,
                       "confidence": number(&a["confidence"], &format!("confidence for {id}"))?})
            }
            Some("score") => {
                if a["type"] != "score" {
                    return Err(format!("{LABEL} did not return a score answer for {id}"));
                }
                json!({"type": "score", "score": number(&a["score"], &format!("score for {id}"))?,
                       "confidence": number(&a["confidence"], &format!("confidence for {id}"))?})
            }
            _ => {
                if a["type"] != "noul" {
                    return Err(format!("{LABEL} did not return a bool answer for {id}"));
                }
                json!({"type": "bool", "probability": number(&a["noul"], &format!("probability for {id}"))?})
            }
        };
        out.insert(id.clone(), answer);
    }
    Ok(out)
}

fn usage(model: &NonChatModel, raw: &Value) -> Option<Usage> {
    if !raw.is_object() || (raw.get("input_tokens").is_none() && raw.get("output_tokens").is_none())
    {
        return None;
    }
    let n = |v: &Value| {
        v.as_f64()
            .filter(|n| n.is_finite() && *n > 0.0)
            .unwrap_or(0.0) as u64
    };
    let (input, output) = (n(&raw["input_tokens"]), n(&raw["output_tokens"]));
    let mut u = Usage {
        input,
        output,
        total_tokens: input + output,
        ..Default::default()
    };
    u.cost.input = model.cost.input / 1_000_000.0 * input as f64;
    u.cost.output = model.cost.output / 1_000_000.0 * output as f64;
    u.cost.total = u.cost.input + u.cost.output;
    Some(u)
}

/// Classifies `context` with `model`; the request runs on its own thread and the wait gives up
/// within 50 ms of `abort`.
pub fn classify(
    model: &NonChatModel,
    context: &Value,
    auth: &ModelAuth,
    abort: &Abort,
) -> ClassifierResult {
    let empty = ClassifierResult::empty(model);
    let error = |m: String| format!("{LABEL} error: {m}");
    if model.api != SYSTEM_ONE_API {
        return empty.failed(
            CallStop::Error,
            format!(
                "Classifier API {} is not supported by this build of pi",
                model.api
            ),
        );
    }
    if abort.is_aborted() {
        return empty.failed(CallStop::Aborted, error("Request was aborted".into()));
    }
    if auth.api_key.is_empty() {
        return empty.failed(
            CallStop::Error,
            error(format!("No API key for provider: {}", model.provider)),
        );
    }
    let (url, headers, body) = match build_request(model, context, auth) {
        Ok(r) => r,
        Err(e) => return empty.failed(CallStop::Error, error(e)),
    };
    let (tx, rx) = crossbeam_channel::bounded(1);
    let spawned = std::thread::Builder::new()
        .name("pi-classify".into())
        .spawn(move || {
            let _ = tx.send(super::openrouter::post(&url, &headers, &body.to_string()));
        });
    if let Err(e) = spawned {
        return empty.failed(
            CallStop::Error,
            error(format!("could not start the request: {e}")),
        );
    }
    let signal = abort.signal();
    loop {
        select! {
            recv(rx) -> got => {
                let body = match got {
                    Ok(Ok(body)) if body.is_object() => body,
                    Ok(Ok(_)) => return empty.failed(CallStop::Error, error(format!("{LABEL} returned an unexpected response"))),
                    Ok(Err(m)) => return empty.failed(CallStop::Error, error(m)),
                    Err(_) => return empty.failed(CallStop::Error, error("the request ended without an answer".into())),
                };
                let mut result = empty;
                // Set before the answers are read: a request with malformed answers was billed.
                result.usage = usage(model, &body["usage"]);
                return match parse_answers(context, &body["answers"]) {
                    Ok(answers) => {
                        result.answers = answers;
                        result
                    }
                    Err(e) => result.failed(CallStop::Error, error(e)),
                };
            }
            recv(signal) -> _ => {}
            default(POLL) => {}
        }
        if abort.is_aborted() {
            return empty.failed(CallStop::Aborted, error("Request was aborted".into()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::images::catalog::find_model;

    fn context() -> Value {
        json!({
            "state": {"message": "love it"},
            "questions": {
                "mood": {"type": "choice", "instructions": "How?", "criteria": {"good": "g", "bad": "b"}},
                "spam": {"type": "bool", "instructions": "Spam?", "criteria": {"true": "y", "false": "n"}},
            },
        })
    }

    #[test]
    fn bool_questions_go_out_as_noul_and_images_as_state_parts_through_openrouter() {
        let m = find_model("classifier", "openrouter", "typesafe/jev-1.14").unwrap();
        let auth = ModelAuth {
            api_key: "k".into(),
            ..Default::default()
        };
        let mut ctx = context();
        ctx["images"] = json!([{"type": "image", "data": "AAAA", "mimeType": "image/png"}]);
        let (url, headers, body) = build_request(m, &ctx, &auth).unwrap();
        assert_eq!(url, "https://openrouter.ai/api/v1/systemone");
        assert_eq!(body["questions"]["spam"]["type"], "noul");
        assert_eq!(
            body["state"][0]["image_url"]["url"],
            "data:image/png;base64,AAAA"
        );
        assert_eq!(body["state"][1], json!({"message": "love it"}));
        assert!(!headers
            .iter()
            .any(|(k, _)| k == "TypeSafe-Danger-Zone-Images"));
        let text_only = find_model("classifier", "openrouter", "respan/span-01").unwrap();
        assert!(build_request(text_only, &ctx, &auth)
            .unwrap_err()
            .contains("does not support image input"));
    }

    #[test]
    fn answers_come_back_typed_and_checked() {
        let answers = json!({
            "mood": {"type": "choice", "choice": "good", "probabilities": {"good": 0.9, "bad": 0.1}, "confidence": 0.8},
            "spam": {"type": "noul", "noul": 0.05},
        });
        let parsed = parse_answers(&context(), &answers).unwrap();
        assert_eq!(parsed["spam"], json!({"type": "bool", "probability": 0.05}));
        assert_eq!(parsed["mood"]["choice"], "good");
        let missing = parse_answers(&context(), &json!({"mood": answers["mood"]})).unwrap_err();
        assert_eq!(missing, "System One API did not return an answer for spam");
    }

    #[test]
    fn other_classifier_apis_answer_with_an_error_result() {
        let m = find_model("classifier", "openai", "gpt-6-luna").unwrap();
        let r = classify(m, &context(), &ModelAuth::default(), &Abort::new());
        assert_eq!(r.stop_reason, CallStop::Error);
        assert!(r.error_message.unwrap().contains("openai-decisions"));
    }
}
