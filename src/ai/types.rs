//! The LLM vocabulary shared by every layer: messages, content blocks, usage, stop reasons,
//! models and the streaming event taxonomy. Every type serializes exactly like the TypeScript
//! pi (field names, order and optional-field omission), and unknown fields read from disk are
//! kept in `extra` so a rewrite never drops them.

use std::fmt;

use serde::de::{self, Error as _, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::util::json::{object, tag_index, untagged_fields};

/// Unknown JSON fields carried through untouched.
pub type Extra = Map<String, Value>;

fn is_false(b: &bool) -> bool {
    !*b
}

/// Milliseconds since the Unix epoch, like JavaScript's `Date.now()`.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextContent {
    pub text: String,
    #[serde(
        rename = "textSignature",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub text_signature: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThinkingContent {
    pub thinking: String,
    #[serde(
        rename = "thinkingSignature",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub thinking_signature: Option<String>,
    #[serde(skip_serializing_if = "is_false", default)]
    pub redacted: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageContent {
    pub data: String,
    #[serde(rename = "mimeType")]
    pub mime_type: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: Value,
    #[serde(
        rename = "thoughtSignature",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub thought_signature: Option<String>,
}

/// One block of message content, tagged by `type` as pi writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum Content {
    #[serde(rename = "text")]
    Text(TextContent),
    #[serde(rename = "thinking")]
    Thinking(ThinkingContent),
    #[serde(rename = "image")]
    Image(ImageContent),
    #[serde(rename = "toolCall")]
    ToolCall(ToolCall),
}

impl Content {
    pub fn text(s: impl Into<String>) -> Self {
        Content::Text(TextContent {
            text: s.into(),
            text_signature: None,
        })
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    pub input: f64,
    pub output: f64,
    #[serde(rename = "cacheRead")]
    pub cache_read: f64,
    #[serde(rename = "cacheWrite")]
    pub cache_write: f64,
    pub total: f64,
    /// pi 1.6.0: `false` once usage reported by the provider was priced from the model's
    /// rates, `true` when the provider reported the total itself (OpenRouter); absent when no
    /// usage was reported.
    #[serde(
        rename = "totalFromProvider",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub total_from_provider: Option<bool>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    #[serde(rename = "cacheRead")]
    pub cache_read: u64,
    #[serde(rename = "cacheWrite")]
    pub cache_write: u64,
    /// Reasoning tokens (part of `output`), where the provider reports them (pi 1.x).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reasoning: Option<u64>,
    #[serde(rename = "totalTokens")]
    pub total_tokens: u64,
    pub cost: Cost,
    /// Anthropic's one-hour cache writes (part of `cache_write`), written after `cost` as pi 1.x
    /// writes them; absent for other providers.
    #[serde(
        rename = "cacheWrite1h",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub cache_write_1h: Option<u64>,
}

impl Usage {
    /// Fills `cost` from per-million-token prices, as pi's `calculateCost` does (1.x: one-hour
    /// cache writes cost twice the input price).
    pub fn apply_pricing(&mut self, price: &ModelCost) {
        let long_writes = self.cache_write_1h.unwrap_or(0).min(self.cache_write);
        let short_writes = self.cache_write - long_writes;
        self.cost.input = price.input * self.input as f64 / 1e6;
        self.cost.output = price.output * self.output as f64 / 1e6;
        self.cost.cache_read = price.cache_read * self.cache_read as f64 / 1e6;
        self.cost.cache_write = (price.cache_write * short_writes as f64
            + price.input * 2.0 * long_writes as f64)
            / 1e6;
        if self.cost.total_from_provider != Some(true) {
            self.cost.total =
                self.cost.input + self.cost.output + self.cost.cache_read + self.cost.cache_write;
        }
    }

    /// Marks usage as reported by the provider, as pi 1.6.0's `calculateCost` does when it
    /// prices a provider's usage report (`cost.totalFromProvider: false`).
    pub fn mark_reported(&mut self) {
        self.cost.total_from_provider.get_or_insert(false);
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum StopReason {
    #[default]
    #[serde(rename = "stop")]
    Stop,
    #[serde(rename = "length")]
    Length,
    #[serde(rename = "toolUse")]
    ToolUse,
    #[serde(rename = "error")]
    Error,
    #[serde(rename = "aborted")]
    Aborted,
    /// A message still streaming, as today's pi shows it in `message_start`; never stored.
    #[serde(rename = "pending")]
    Pending,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Stop => "stop",
            StopReason::Length => "length",
            StopReason::ToolUse => "toolUse",
            StopReason::Error => "error",
            StopReason::Aborted => "aborted",
            StopReason::Pending => "pending",
        }
    }
}

/// User content: pi accepts a bare string on read but always writes blocks.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum UserContent {
    Text(String),
    Blocks(Vec<Content>),
}

/// Read as serde's untagged enum reads it (a string, else a list of blocks; any failure is
/// the one untagged error), without buffering the value first.
impl<'de> Deserialize<'de> for UserContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Text;
        impl<'de> Visitor<'de> for Text {
            type Value = UserContent;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or a list of content blocks")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<UserContent, E> {
                Ok(UserContent::Text(s.to_owned()))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<UserContent, E> {
                Ok(UserContent::Text(s))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<UserContent, A::Error> {
                let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
                while let Some(block) = seq.next_element::<Content>()? {
                    blocks.push(block);
                }
                Ok(UserContent::Blocks(blocks))
            }
        }
        d.deserialize_any(Text).map_err(|_| {
            D::Error::custom("data did not match any variant of untagged enum UserContent")
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserMessage {
    pub content: UserContent,
    pub timestamp: i64,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssistantMessage {
    pub content: Vec<Content>,
    pub api: String,
    pub provider: String,
    pub model: String,
    pub usage: Usage,
    #[serde(rename = "stopReason")]
    pub stop_reason: StopReason,
    pub timestamp: i64,
    #[serde(
        rename = "responseModel",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub response_model: Option<String>,
    #[serde(
        rename = "responseId",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub response_id: Option<String>,
    #[serde(
        rename = "errorMessage",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub error_message: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl AssistantMessage {
    /// Records the provider's own stop reason (`finish_reason`, `stop_reason`, …) as pi 1.x
    /// keeps it beside the mapped `stopReason`.
    pub fn set_raw_stop_reason(&mut self, raw: &str) {
        self.extra
            .insert("rawStopReason".into(), Value::String(raw.to_string()));
    }

    /// An empty in-progress message for `model`, as every provider starts one.
    pub fn empty(model: &Model) -> Self {
        AssistantMessage {
            content: Vec::new(),
            api: model.api.clone(),
            provider: model.provider.clone(),
            model: model.id.clone(),
            response_model: None,
            response_id: None,
            usage: Usage::default(),
            stop_reason: StopReason::Stop,
            error_message: None,
            timestamp: now_ms(),
            extra: Extra::new(),
        }
    }

    /// An empty message of no known model, for a stream that did not say where it came from.
    pub fn unknown() -> Self {
        AssistantMessage {
            content: Vec::new(),
            api: String::new(),
            provider: String::new(),
            model: String::new(),
            response_model: None,
            response_id: None,
            usage: Usage::default(),
            stop_reason: StopReason::Stop,
            error_message: None,
            timestamp: now_ms(),
            extra: Extra::new(),
        }
    }

    /// Concatenated text blocks (thinking and tool calls excluded).
    pub fn text(&self) -> String {
        let mut out = String::new();
        for c in &self.content {
            if let Content::Text(t) = c {
                out.push_str(&t.text);
            }
        }
        out
    }

    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|c| match c {
            Content::ToolCall(t) => Some(t),
            _ => None,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResultMessage {
    #[serde(rename = "toolCallId")]
    pub tool_call_id: String,
    #[serde(rename = "toolName")]
    pub tool_name: String,
    pub content: Vec<Content>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub details: Option<Value>,
    #[serde(rename = "isError")]
    pub is_error: bool,
    /// How long the tool ran, in whole ms (pi 1.6.0); absent when it never ran.
    #[serde(
        rename = "durationMs",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub duration_ms: Option<u64>,
    pub timestamp: i64,
    #[serde(flatten)]
    pub extra: Extra,
}

/// A message of the LLM conversation, tagged by `role` (read by [`Message::from_json`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "role")]
pub enum Message {
    #[serde(rename = "user")]
    User(UserMessage),
    #[serde(rename = "assistant")]
    Assistant(AssistantMessage),
    #[serde(rename = "toolResult")]
    ToolResult(ToolResultMessage),
}

/// `Message`'s roles, in declaration order.
const MESSAGE_ROLES: &[&str] = &["user", "assistant", "toolResult"];

impl Message {
    /// Reads a message from its JSON, as serde's internally tagged enum would (same result,
    /// same errors), dispatching on `role` itself: one reader per role instead of a buffered
    /// copy of the object per message.
    pub fn from_json(v: &Value) -> Result<Message, serde_json::Error> {
        match tag_index(v, "role", "Message", MESSAGE_ROLES)? {
            0 => untagged_fields(v, "role", |m: &mut UserMessage| &mut m.extra).map(Message::User),
            1 => untagged_fields(v, "role", |m: &mut AssistantMessage| &mut m.extra)
                .map(Message::Assistant),
            _ => untagged_fields(v, "role", |m: &mut ToolResultMessage| &mut m.extra)
                .map(Message::ToolResult),
        }
    }

    pub fn user_text(text: impl Into<String>) -> Self {
        Message::User(UserMessage {
            content: UserContent::Blocks(vec![Content::text(text)]),
            timestamp: now_ms(),
            extra: Extra::new(),
        })
    }
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Message::from_json(&v).map_err(D::Error::custom)
    }
}

/// A tool as the model sees it: name, description and JSON-schema parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// Everything one LLM call needs besides the model.
#[derive(Debug, Clone, Default)]
pub struct Context {
    pub system_prompt: Option<String>,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ThinkingLevel {
    Off,
    Minimal,
    Low,
    Medium,
    High,
    Xhigh,
    /// 1.x's level above `xhigh` (v0.80.6): offered only where a model maps it.
    Max,
}

impl ThinkingLevel {
    pub const ALL: [ThinkingLevel; 7] = [
        ThinkingLevel::Off,
        ThinkingLevel::Minimal,
        ThinkingLevel::Low,
        ThinkingLevel::Medium,
        ThinkingLevel::High,
        ThinkingLevel::Xhigh,
        ThinkingLevel::Max,
    ];

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == s)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ThinkingLevel::Off => "off",
            ThinkingLevel::Minimal => "minimal",
            ThinkingLevel::Low => "low",
            ThinkingLevel::Medium => "medium",
            ThinkingLevel::High => "high",
            ThinkingLevel::Xhigh => "xhigh",
            ThinkingLevel::Max => "max",
        }
    }

    /// `xhigh` and `max` exist for a model only when its `thinkingLevelMap` names them;
    /// the other levels exist unless the map sets them to `null` (pi's rule).
    pub fn needs_explicit_mapping(self) -> bool {
        matches!(self, ThinkingLevel::Xhigh | ThinkingLevel::Max)
    }

    /// pi-ai's default thinking-token budgets (xhigh and max are treated as high).
    pub fn default_budget(self) -> u64 {
        match self {
            ThinkingLevel::Off => 0,
            ThinkingLevel::Minimal => 1024,
            ThinkingLevel::Low => 2048,
            ThinkingLevel::Medium => 8192,
            ThinkingLevel::High | ThinkingLevel::Xhigh | ThinkingLevel::Max => 16384,
        }
    }
}

impl Serialize for ThinkingLevel {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ThinkingLevel {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        ThinkingLevel::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("invalid thinking level {s:?}")))
    }
}

/// Prices in USD per million tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelCost {
    #[serde(default)]
    pub input: f64,
    #[serde(default)]
    pub output: f64,
    #[serde(rename = "cacheRead", default)]
    pub cache_read: f64,
    #[serde(rename = "cacheWrite", default)]
    pub cache_write: f64,
}

/// A model as pi's registry describes it (`Model` in pi-ai), serialized like pi's RPC does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Model {
    pub id: String,
    pub name: String,
    pub api: String,
    pub provider: String,
    #[serde(rename = "baseUrl")]
    pub base_url: String,
    pub reasoning: bool,
    pub input: Vec<String>,
    pub cost: ModelCost,
    #[serde(rename = "contextWindow")]
    pub context_window: u64,
    #[serde(rename = "maxTokens")]
    pub max_tokens: u64,
    /// Level name → provider value, or null when the level is unsupported.
    #[serde(
        rename = "thinkingLevelMap",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub thinking_level_map: Option<Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub headers: Option<Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub compat: Option<Map<String, Value>>,
}

impl Model {
    pub fn supports_images(&self) -> bool {
        self.input.iter().any(|i| i == "image")
    }

    /// A compat flag from `compat`, if set.
    pub fn compat_bool(&self, key: &str) -> Option<bool> {
        self.compat.as_ref()?.get(key)?.as_bool()
    }

    pub fn compat_str(&self, key: &str) -> Option<&str> {
        self.compat.as_ref()?.get(key)?.as_str()
    }
}

/// Per-request options every provider understands (`SimpleStreamOptions` in pi-ai).
#[derive(Debug, Clone, Default)]
pub struct StreamOptions {
    pub api_key: String,
    /// Extra HTTP headers (already resolved).
    pub headers: Vec<(String, String)>,
    pub reasoning: Option<ThinkingLevel>,
    pub max_tokens: Option<u64>,
    pub temperature: Option<f64>,
    pub session_id: Option<String>,
    /// Provider-level retries and the answer timeout (`retry.provider.*`).
    pub provider_retry: ProviderRetry,
    /// Rewrites the request body before it is sent (extensions' `before_provider_request`).
    pub on_payload: Option<PayloadHook>,
}

/// `retry.provider.*` settings, carried in every request's options (applied by
/// `provider_retry`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProviderRetry {
    /// Retries after the first attempt (`retry.provider.maxRetries`, default 0).
    pub max_retries: u32,
    /// Longest server-requested wait we accept (`retry.provider.maxRetryDelayMs`, 0 = any).
    pub max_retry_delay_ms: u64,
    /// How long to wait for the server's answer (`retry.provider.timeoutMs`).
    pub timeout_ms: Option<u64>,
}

impl Default for ProviderRetry {
    fn default() -> Self {
        ProviderRetry {
            max_retries: 0,
            max_retry_delay_ms: 60_000,
            timeout_ms: None,
        }
    }
}

/// A rewrite of a provider request body, called on the thread that starts the stream.
#[derive(Clone)]
pub struct PayloadHook(
    pub std::sync::Arc<dyn Fn(serde_json::Value) -> serde_json::Value + Send + Sync>,
);

impl std::fmt::Debug for PayloadHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PayloadHook")
    }
}

impl StreamOptions {
    /// The body to send: `body`, or what the payload hook made of it.
    pub fn payload(&self, body: serde_json::Value) -> serde_json::Value {
        match &self.on_payload {
            Some(hook) => (hook.0)(body),
            None => body,
        }
    }
}

/// One event of an assistant stream. Events carry what changed, never a copy of the whole
/// message, so a stream costs time linear in its length; a listener that wants the message so
/// far rebuilds it with [`crate::ai::stream::MessageBuilder`]. `Start` carries the (empty)
/// message the stream begins with; `Done` and `Error` carry the finished one.
#[derive(Debug, Clone, PartialEq)]
pub enum AssistantEvent {
    Start {
        partial: AssistantMessage,
    },
    TextStart {
        index: usize,
    },
    TextDelta {
        index: usize,
        delta: String,
    },
    /// `content` is the block's final text (a provider may correct what the deltas said).
    TextEnd {
        index: usize,
        content: String,
    },
    ThinkingStart {
        index: usize,
    },
    ThinkingDelta {
        index: usize,
        delta: String,
    },
    ThinkingEnd {
        index: usize,
        content: String,
    },
    ToolCallStart {
        index: usize,
        id: String,
        name: String,
    },
    /// A fragment of the arguments' JSON text.
    ToolCallDelta {
        index: usize,
        delta: String,
    },
    ToolCallEnd {
        index: usize,
        tool_call: ToolCall,
    },
    /// The usage or response ids changed; sent before the next event so a rebuilt message
    /// keeps them. Not one of pi's events: listeners apply it and never print it.
    Meta {
        usage: Usage,
        response_id: Option<String>,
        response_model: Option<String>,
    },
    Done {
        reason: StopReason,
        message: AssistantMessage,
    },
    /// `cause` says why (with the server's `Retry-After`, when it sent one); `None` when
    /// aborted. Not part of pi's JSON: the message's `errorMessage` is its text.
    Error {
        reason: StopReason,
        error: AssistantMessage,
        cause: Option<super::error::ProviderError>,
    },
}

/// An assistant message on its own, carrying its `role` first as pi's objects do.
pub fn assistant_json(m: &AssistantMessage) -> Value {
    let mut obj = serde_json::Map::new();
    obj.insert("role".into(), "assistant".into());
    if let Ok(Value::Object(fields)) = serde_json::to_value(m) {
        obj.extend(fields);
    }
    Value::Object(obj)
}

impl AssistantEvent {
    /// The event's `type` in pi's JSON.
    pub fn type_name(&self) -> &'static str {
        match self {
            AssistantEvent::Start { .. } => "start",
            AssistantEvent::TextStart { .. } => "text_start",
            AssistantEvent::TextDelta { .. } => "text_delta",
            AssistantEvent::TextEnd { .. } => "text_end",
            AssistantEvent::ThinkingStart { .. } => "thinking_start",
            AssistantEvent::ThinkingDelta { .. } => "thinking_delta",
            AssistantEvent::ThinkingEnd { .. } => "thinking_end",
            AssistantEvent::ToolCallStart { .. } => "toolcall_start",
            AssistantEvent::ToolCallDelta { .. } => "toolcall_delta",
            AssistantEvent::ToolCallEnd { .. } => "toolcall_end",
            AssistantEvent::Meta { .. } => "meta",
            AssistantEvent::Done { .. } => "done",
            AssistantEvent::Error { .. } => "error",
        }
    }

    /// The event as pi's `assistantMessageEvent` without any message snapshot: `type`, the
    /// content index and the delta or final content (`done` and `error` keep their message,
    /// the last key). Listeners that print snapshots add `partial` themselves.
    pub fn to_json(&self) -> Value {
        let at = |index: &usize| Value::from(*index);
        let s = |t: &String| Value::String(t.clone());
        let kind = self.type_name();
        match self {
            AssistantEvent::Start { .. } | AssistantEvent::Meta { .. } => {
                object(&mut [("type", kind.into())])
            }
            AssistantEvent::TextStart { index }
            | AssistantEvent::ThinkingStart { index }
            | AssistantEvent::ToolCallStart { index, .. } => {
                object(&mut [("type", kind.into()), ("contentIndex", at(index))])
            }
            AssistantEvent::TextDelta { index, delta }
            | AssistantEvent::ThinkingDelta { index, delta }
            | AssistantEvent::ToolCallDelta { index, delta } => object(&mut [
                ("type", kind.into()),
                ("contentIndex", at(index)),
                ("delta", s(delta)),
            ]),
            AssistantEvent::TextEnd { index, content }
            | AssistantEvent::ThinkingEnd { index, content } => object(&mut [
                ("type", kind.into()),
                ("contentIndex", at(index)),
                ("content", s(content)),
            ]),
            AssistantEvent::ToolCallEnd { index, tool_call } => object(&mut [
                ("type", kind.into()),
                ("contentIndex", at(index)),
                (
                    "toolCall",
                    serde_json::to_value(Content::ToolCall(tool_call.clone()))
                        .unwrap_or(Value::Null),
                ),
            ]),
            AssistantEvent::Done { reason, message } => object(&mut [
                ("type", kind.into()),
                ("reason", reason.as_str().into()),
                ("message", assistant_json(message)),
            ]),
            AssistantEvent::Error { reason, error, .. } => object(&mut [
                ("type", kind.into()),
                ("reason", reason.as_str().into()),
                ("error", assistant_json(error)),
            ]),
        }
    }

    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            AssistantEvent::Done { .. } | AssistantEvent::Error { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_events_are_deltas_and_messages_carry_the_assistant_role_like_pi() {
        let model = Model {
            id: "m".into(),
            name: "m".into(),
            api: "a".into(),
            provider: "p".into(),
            base_url: String::new(),
            reasoning: false,
            input: vec![],
            cost: ModelCost::default(),
            context_window: 0,
            max_tokens: 0,
            thinking_level_map: None,
            headers: None,
            compat: None,
        };
        let ev = AssistantEvent::TextDelta {
            index: 0,
            delta: "hi".into(),
        }
        .to_json();
        assert_eq!(
            ev,
            serde_json::json!({"type": "text_delta", "contentIndex": 0, "delta": "hi"})
        );
        let call = AssistantEvent::ToolCallEnd {
            index: 1,
            tool_call: ToolCall {
                id: "c".into(),
                name: "read".into(),
                arguments: serde_json::json!({}),
                thought_signature: None,
            },
        }
        .to_json();
        assert_eq!(call["toolCall"]["type"], "toolCall");
        let done = AssistantEvent::Done {
            reason: StopReason::Stop,
            message: AssistantMessage::empty(&model),
        }
        .to_json();
        assert_eq!(done["message"]["role"], "assistant");
        let first_key = done["message"]
            .as_object()
            .unwrap()
            .keys()
            .next()
            .unwrap()
            .clone();
        assert_eq!(first_key, "role");
    }
}
