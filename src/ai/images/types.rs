//! What an images call takes and gives back, as pi-ai 1.6.0 shapes them (`ImagesContext`,
//! `ImagesResult`); also the credentials a non-chat call is made with.

use serde_json::{json, Map, Value};

use crate::ai::Usage;

/// The key and headers a call sends (the session's credentials for the model's provider), and
/// the base URL when models.json moves the provider elsewhere.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelAuth {
    pub api_key: String,
    pub headers: Vec<(String, String)>,
    pub base_url: Option<String>,
}

/// A request ready to send: URL, headers and JSON body.
pub type Request = (String, Vec<(String, String)>, Value);

/// An image block (`data` is base64), as pi's content blocks write it.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageBlock {
    pub data: String,
    pub mime_type: String,
}

/// One block of an images request's input or of its result's output.
#[derive(Debug, Clone, PartialEq)]
pub enum OutputBlock {
    Text(String),
    Image(ImageBlock),
}

impl OutputBlock {
    /// `{type: "text", text}` or `{type: "image", data, mimeType}`; `None` for anything else.
    pub fn from_json(v: &Value) -> Option<OutputBlock> {
        match v.get("type")?.as_str()? {
            "text" => Some(OutputBlock::Text(v.get("text")?.as_str()?.to_string())),
            "image" => Some(OutputBlock::Image(ImageBlock {
                data: v.get("data")?.as_str()?.to_string(),
                mime_type: v.get("mimeType")?.as_str()?.to_string(),
            })),
            _ => None,
        }
    }

    pub fn to_json(&self) -> Value {
        match self {
            OutputBlock::Text(text) => json!({"type": "text", "text": text}),
            OutputBlock::Image(i) => {
                json!({"type": "image", "mimeType": i.mime_type, "data": i.data})
            }
        }
    }
}

/// How a call ended (`stopReason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallStop {
    Stop,
    Error,
    Aborted,
}

impl CallStop {
    pub fn as_str(self) -> &'static str {
        match self {
            CallStop::Stop => "stop",
            CallStop::Error => "error",
            CallStop::Aborted => "aborted",
        }
    }
}

/// pi-ai's `ImagesResult`: the images (and any text) a model generated, or why it did not.
#[derive(Debug, Clone, PartialEq)]
pub struct ImagesResult {
    pub api: String,
    pub provider: String,
    pub model: String,
    pub output: Vec<OutputBlock>,
    pub stop_reason: CallStop,
    pub timestamp: i64,
    pub response_id: Option<String>,
    pub usage: Option<Usage>,
    pub error_message: Option<String>,
}

impl ImagesResult {
    /// An empty result for `model` that ended with `stop`.
    pub fn empty(api: &str, provider: &str, model: &str) -> ImagesResult {
        ImagesResult {
            api: api.to_string(),
            provider: provider.to_string(),
            model: model.to_string(),
            output: Vec::new(),
            stop_reason: CallStop::Stop,
            timestamp: crate::ai::types::now_ms(),
            response_id: None,
            usage: None,
            error_message: None,
        }
    }

    pub fn failed(mut self, stop: CallStop, message: impl Into<String>) -> ImagesResult {
        self.stop_reason = stop;
        self.error_message = Some(message.into());
        self
    }

    /// The result as pi's object lists it (its keys in pi's order; the usage's cost says the
    /// provider did not report it, `totalFromProvider: false`).
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("api".into(), json!(self.api));
        m.insert("provider".into(), json!(self.provider));
        m.insert("model".into(), json!(self.model));
        m.insert(
            "output".into(),
            Value::Array(self.output.iter().map(OutputBlock::to_json).collect()),
        );
        m.insert("stopReason".into(), json!(self.stop_reason.as_str()));
        m.insert("timestamp".into(), json!(self.timestamp));
        if let Some(id) = &self.response_id {
            m.insert("responseId".into(), json!(id));
        }
        if let Some(u) = &self.usage {
            m.insert("usage".into(), usage_json(u));
        }
        if let Some(e) = &self.error_message {
            m.insert("errorMessage".into(), json!(e));
        }
        Value::Object(m)
    }

    /// How many images the result holds.
    pub fn image_count(&self) -> usize {
        self.output
            .iter()
            .filter(|b| matches!(b, OutputBlock::Image(_)))
            .count()
    }
}

/// A non-chat call's usage as pi-ai writes it.
pub fn usage_json(u: &Usage) -> Value {
    json!({
        "input": u.input,
        "output": u.output,
        "cacheRead": u.cache_read,
        "cacheWrite": u.cache_write,
        "totalTokens": u.total_tokens,
        "cost": {
            "input": u.cost.input,
            "output": u.cost.output,
            "cacheRead": u.cost.cache_read,
            "cacheWrite": u.cost.cache_write,
            "total": u.cost.total,
            "totalFromProvider": false,
        },
    })
}
