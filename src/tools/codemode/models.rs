//! `models` in codemode scripts (pi 1.6.0, `docs/codemode.md` "Models"): the catalog
//! (`getModelsOfType`, `getAvailableOfType`, `getModelOfType`) and non-LLM calls with the
//! session's credentials (`classify`, `generateImages`). The calls check the script's model
//! and context first, so a mistake fails with the expected shape rather than a provider error;
//! at most four run at once per script, in call order; each is a row in the result's `calls`.
//! Provider errors never reject: they are in the result's `stopReason` and `errorMessage`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::ai::images::{Models, OutputBlock, MODEL_TYPES};
use crate::ai::Abort;

/// `models.classify()` and `models.generateImages()` calls one script may have in flight.
const MAX_CONCURRENT_MODEL_CALLS: usize = 4;
const DOCS: &str = "pi's docs/codemode.md";
const CLASSIFIER_CONTEXT_SHAPE: &str = r#"{ state: { ... }, images?: [{ type: "image", data: <base64>, mimeType }], questions: { <id>: { type: "choice", instructions, criteria: { <label>: <meaning> } } | { type: "score", instructions, criteria: [<lowest level>, ..., <highest level>] } | { type: "bool", instructions, criteria: { true: <meaning>, false: <meaning> } } } }"#;

/// Where a script's model calls are listed (the codemode result's `calls`).
pub trait CallLog {
    /// A call started; returns its row.
    fn start(&self, id: String, name: &str) -> usize;
    fn finish(&self, row: usize, status: &'static str);
}

/// One script's `models`.
pub struct ScriptModels {
    models: Option<Models>,
    tool_call_id: String,
    calls_made: AtomicUsize,
    running: Mutex<usize>,
    freed: Condvar,
    /// Images `generateImages()` returned, to notice a script that never shows them.
    pub generated_images: AtomicUsize,
}

impl ScriptModels {
    pub fn new(models: Option<Models>, tool_call_id: &str) -> ScriptModels {
        ScriptModels {
            models,
            tool_call_id: tool_call_id.to_string(),
            calls_made: AtomicUsize::new(0),
            running: Mutex::new(0),
            freed: Condvar::new(),
            generated_images: AtomicUsize::new(0),
        }
    }

    /// `models.<method>(...args)`: `Ok` is what the promise resolves to, `Err` its rejection.
    pub fn call(
        &self,
        method: &str,
        args: Value,
        abort: &Abort,
        log: &dyn CallLog,
    ) -> Result<Value, String> {
        let Some(models) = &self.models else {
            return Err("models is not available without a session".into());
        };
        let args = args.as_array().cloned().unwrap_or_default();
        let arg = |i: usize| args.get(i).cloned().unwrap_or(Value::Null);
        match method {
            "getModelsOfType" => {
                let kind = model_type(&arg(0))?;
                Ok(Value::Array(models.of_type(kind, provider(&arg(1))?)))
            }
            "getAvailableOfType" => {
                let kind = model_type(&arg(0))?;
                Ok(Value::Array(
                    models.available_of_type(kind, provider(&arg(1))?),
                ))
            }
            "getModelOfType" => {
                let (Some(p), Some(id)) = (
                    arg(1).as_str().map(str::to_string),
                    arg(2).as_str().map(str::to_string),
                ) else {
                    let described: Vec<String> = args.iter().map(describe_value).collect();
                    return Err(format!("models.getModelOfType(type, provider, id) expects three strings, got ({}). The provider and the id are separate arguments, for example models.getModelOfType(\"classifier\", \"typesafe\", \"jev-latest\").", described.join(", ")));
                };
                let kind = model_type(&arg(0))?;
                Ok(models.model_of_type(kind, &p, &id).unwrap_or(Value::Null))
            }
            "classify" => {
                let model = self.resolve(models, "models.classify", "classifier", &arg(0))?;
                let context = check_classifier_context(&arg(1))?;
                self.run(log, "models.classify", &model, abort, |abort| {
                    let r = models.classify(&model, &context, abort);
                    (r.to_json(), r.stop_reason.as_str())
                })
            }
            "generateImages" => {
                let model = self.resolve(models, "models.generateImages", "image", &arg(0))?;
                let input = check_images_context(&arg(1))?;
                self.run(log, "models.generateImages", &model, abort, |abort| {
                    let r = models.generate_images(&model, &input, abort);
                    self.generated_images
                        .fetch_add(r.image_count(), Ordering::Relaxed);
                    (r.to_json(), r.stop_reason.as_str())
                })
            }
            other => Err(format!("models.{other} is not a function")),
        }
    }

    /// The script's model, by its provider and id only: a script-supplied `baseUrl` or
    /// `headers` never receives the credentials.
    fn resolve(
        &self,
        models: &Models,
        name: &str,
        kind: &str,
        given: &Value,
    ) -> Result<crate::ai::images::NonChatModel, String> {
        let hint = format!(
            "List the {kind} models you can use with models.getAvailableOfType(\"{kind}\")."
        );
        let (Some(provider), Some(id)) = (given["provider"].as_str(), given["id"].as_str()) else {
            let undefined = if given.is_null() {
                " models.getModelOfType() returns undefined for an unknown provider or id."
            } else {
                ""
            };
            return Err(format!(
                "{name}() expects {} model as its first argument, got {}.{undefined} {hint}",
                with_article(kind),
                describe_value(given)
            ));
        };
        if let Some(model) = models.resolve(kind, provider, id) {
            return Ok(model);
        }
        let actual = MODEL_TYPES
            .iter()
            .find(|other| **other != kind && models.model_of_type(other, provider, id).is_some());
        Err(match actual {
            Some(actual) => format!(
                "\"{provider}/{id}\" is {} model, not {} model. {hint}",
                with_article(actual),
                with_article(kind)
            ),
            None => format!("Unknown {kind} model \"{provider}/{id}\". {hint}"),
        })
    }

    /// Runs one call as a row of the result, waiting for one of the four slots first.
    fn run(
        &self,
        log: &dyn CallLog,
        name: &str,
        _model: &crate::ai::images::NonChatModel,
        abort: &Abort,
        call: impl FnOnce(&Abort) -> (Value, &'static str),
    ) -> Result<Value, String> {
        let n = self.calls_made.fetch_add(1, Ordering::Relaxed) + 1;
        let row = log.start(format!("{}/{name}/{n}", self.tool_call_id), name);
        if !self.take_slot(abort) {
            log.finish(row, "cancelled");
            return Err("Execution aborted".into());
        }
        let (result, stop) = call(abort);
        self.release_slot();
        log.finish(
            row,
            match stop {
                "stop" => "ok",
                "aborted" => "cancelled",
                _ => "error",
            },
        );
        Ok(result)
    }

    fn take_slot(&self, abort: &Abort) -> bool {
        let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        while *running >= MAX_CONCURRENT_MODEL_CALLS {
            if abort.is_aborted() {
                return false;
            }
            running = self
                .freed
                .wait_timeout(running, Duration::from_millis(50))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        *running += 1;
        true
    }

    fn release_slot(&self) {
        *self.running.lock().unwrap_or_else(|p| p.into_inner()) -= 1;
        self.freed.notify_one();
    }
}

fn model_type(v: &Value) -> Result<&'static str, String> {
    MODEL_TYPES
        .iter()
        .find(|t| v.as_str() == Some(t))
        .copied()
        .ok_or_else(|| {
            format!(
                "Unknown model type {}. Use \"chat\", \"image\", or \"classifier\".",
                if v.is_null() {
                    "undefined".to_string()
                } else {
                    v.to_string()
                }
            )
        })
}

fn provider(v: &Value) -> Result<Option<&str>, String> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s)),
        _ => Err("provider must be a string".into()),
    }
}

/// `an image`, `a classifier`.
fn with_article(word: &str) -> String {
    let article = if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {word}")
}

/// A script value in an error message: `undefined`, `a string`, `an array`, or its keys.
fn describe_value(v: &Value) -> String {
    match v {
        Value::Null => "undefined".into(),
        Value::Array(a) if a.is_empty() => "an empty array".into(),
        Value::Array(_) => "an array".into(),
        Value::Object(m) if m.is_empty() => "{}".into(),
        Value::Object(m) => {
            let keys: Vec<&str> = m.keys().take(6).map(String::as_str).collect();
            format!(
                "{{ {}{} }}",
                keys.join(", "),
                if m.len() > 6 { ", ..." } else { "" }
            )
        }
        Value::String(_) => "a string".into(),
        Value::Number(_) => "a number".into(),
        Value::Bool(_) => "a boolean".into(),
    }
}

/// Checks a classifier context as pi does; returns it.
fn check_classifier_context(context: &Value) -> Result<Value, String> {
    let fail = |problem: String| {
        format!("models.classify() {problem}. Expected context: {CLASSIFIER_CONTEXT_SHAPE}. See \"Classify\" in {DOCS}.")
    };
    if !context.is_object() {
        return Err(fail(format!(
            "expects a context object as its second argument, got {}",
            describe_value(context)
        )));
    }
    let state = &context["state"];
    if !state.is_object() {
        return Err(fail(format!(
            "context.state must be an object, got {}",
            describe_value(state)
        )));
    }
    match context.get("images") {
        None | Some(Value::Null) => {}
        Some(Value::Array(images)) => {
            for (i, image) in images.iter().enumerate() {
                if image["type"] != "image"
                    || !image["data"].is_string()
                    || !image["mimeType"].is_string()
                {
                    return Err(fail(format!(
                        "context.images[{i}] must be an image block, got {}",
                        describe_value(image)
                    )));
                }
            }
        }
        Some(other) => {
            return Err(fail(format!(
                "context.images must be an array, got {}",
                describe_value(other)
            )))
        }
    }
    let questions = match &context["questions"] {
        Value::Object(q) if !q.is_empty() => q,
        other => {
            return Err(fail(format!(
                "context.questions must map question IDs to questions, got {}",
                describe_value(other)
            )))
        }
    };
    let strings = |values: Vec<&Value>| !values.is_empty() && values.iter().all(|v| v.is_string());
    for (id, q) in questions {
        let at = format!("context.questions.{id}");
        if !q.is_object() {
            return Err(fail(format!(
                "{at} must be a question object, got {}",
                describe_value(q)
            )));
        }
        if !q["instructions"].is_string() {
            return Err(fail(format!("{at}.instructions must be a string")));
        }
        let criteria = &q["criteria"];
        match q["type"].as_str() {
            Some("choice") => {
                let ok = criteria
                    .as_object()
                    .is_some_and(|c| strings(c.values().collect()));
                if !ok {
                    return Err(fail(format!("{at} is a \"choice\" question, so criteria must map each label to its meaning")));
                }
            }
            Some("score") => {
                let ok = criteria
                    .as_array()
                    .is_some_and(|c| strings(c.iter().collect()));
                if !ok {
                    return Err(fail(format!("{at} is a \"score\" question, so criteria must list the levels as strings, lowest first")));
                }
            }
            Some("bool") => {
                if !criteria["true"].is_string() || !criteria["false"].is_string() {
                    return Err(fail(format!("{at} is a \"bool\" question, so criteria must be {{ true: string, false: string }}")));
                }
            }
            _ => {
                let got = if q["type"].is_null() {
                    "undefined".to_string()
                } else {
                    q["type"].to_string()
                };
                return Err(fail(format!(
                    "{at}.type must be \"choice\", \"score\", or \"bool\", got {got}"
                )));
            }
        }
    }
    Ok(context.clone())
}

/// Checks an images context as pi does; returns its input blocks.
fn check_images_context(context: &Value) -> Result<Vec<OutputBlock>, String> {
    let fail = |problem: String| {
        format!("models.generateImages() {problem}. Expected context: {{ input: [{{ type: \"text\", text: <prompt> }}, ...optional {{ type: \"image\", data: <base64>, mimeType }} references] }}. See \"Generate images\" in {DOCS}.")
    };
    if !context.is_object() {
        return Err(fail(format!(
            "expects a context object as its second argument, got {}",
            describe_value(context)
        )));
    }
    let input = match &context["input"] {
        Value::Array(a) if !a.is_empty() => a,
        other => {
            return Err(fail(format!(
                "context.input must be a non-empty array of blocks, got {}",
                describe_value(other)
            )))
        }
    };
    input
        .iter()
        .enumerate()
        .map(|(i, block)| {
            OutputBlock::from_json(block).ok_or_else(|| {
                fail(format!(
                    "context.input[{i}] must be a text or image block, got {}",
                    describe_value(block)
                ))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn contexts_are_checked_with_the_shape_pi_names() {
        let e = check_images_context(&json!({"prompt": "a fox"})).unwrap_err();
        assert!(e.starts_with("models.generateImages() context.input must be a non-empty array of blocks, got undefined. Expected context: { input: [{ type: \"text\""), "{e}");
        let e = check_classifier_context(&json!({"state": {}, "questions": {"q": {"type": "bool", "instructions": "?", "criteria": {"true": "y"}}}})).unwrap_err();
        assert!(e.starts_with("models.classify() context.questions.q is a \"bool\" question, so criteria must be { true: string, false: string }."), "{e}");
        assert_eq!(describe_value(&json!({"a": 1, "b": 2})), "{ a, b }");
        assert_eq!(with_article("image"), "an image");
    }
}
