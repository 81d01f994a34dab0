//! The session file vocabulary: the header line, the nine entry types and the messages a
//! `message` entry holds. Every type serializes with pi's field names, key order and
//! optional-field omission; unknown fields ride along in `extra`, and unknown entry types or
//! message roles are kept as raw JSON so a rewrite never drops them.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

pub use crate::agent::system_message::SystemMessage;
use crate::ai::{AssistantMessage, Extra, Message, ToolResultMessage, UserContent, UserMessage};

/// Deserializes a present field (even `null`) as `Some(..)`, so `null` and absent stay apart.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// Line 1 of a session file. `version` is absent in v1 files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionHeader {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub version: Option<u64>,
    pub id: String,
    #[serde(default)]
    pub timestamp: String,
    #[serde(default)]
    pub cwd: String,
    #[serde(
        rename = "parentSession",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub parent_session: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl SessionHeader {
    /// A fresh current-version header.
    pub fn new(id: &str, timestamp: &str, cwd: &str, parent_session: Option<String>) -> Self {
        SessionHeader {
            kind: "session".into(),
            version: Some(super::CURRENT_VERSION),
            id: id.into(),
            timestamp: timestamp.into(),
            cwd: cwd.into(),
            parent_session,
            extra: Extra::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageEntry {
    pub id: String,
    #[serde(rename = "parentId")]
    pub parent_id: Option<String>,
    pub timestamp: String,
    pub message: AgentMessage,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelChangeEntry {
    pub id: String,
    #[serde(rename = "parentId")]
    pub parent_id: Option<String>,
    pub timestamp: String,
    pub provider: String,
    #[serde(rename = "modelId")]
    pub model_id: String,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThinkingLevelChangeEntry {
    pub id: String,
    #[serde(rename = "parentId")]
    pub parent_id: Option<String>,
    pub timestamp: String,
    #[serde(rename = "thinkingLevel")]
    pub thinking_level: String,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactionEntry {
    pub id: String,
    #[serde(rename = "parentId")]
    pub parent_id: Option<String>,
    pub timestamp: String,
    pub summary: String,
    /// Absent only in oddly migrated v1 files.
    #[serde(
        rename = "firstKeptEntryId",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub first_kept_entry_id: Option<String>,
    #[serde(rename = "tokensBefore")]
    pub tokens_before: u64,
    #[serde(
        skip_serializing_if = "Option::is_none",
        default,
        deserialize_with = "present"
    )]
    pub details: Option<Value>,
    #[serde(rename = "fromHook", skip_serializing_if = "Option::is_none", default)]
    pub from_hook: Option<bool>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BranchSummaryEntry {
    pub id: String,
    #[serde(rename = "parentId")]
    pub parent_id: Option<String>,
    pub timestamp: String,
    /// The entry the branch was left from, or `"root"`.
    #[serde(rename = "fromId")]
    pub from_id: String,
    pub summary: String,
    #[serde(
        skip_serializing_if = "Option::is_none",
        default,
        deserialize_with = "present"
    )]
    pub details: Option<Value>,
    #[serde(rename = "fromHook", skip_serializing_if = "Option::is_none", default)]
    pub from_hook: Option<bool>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// Extension state; never sent to the LLM. pi writes `customType`/`data` before `id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CustomEntry {
    #[serde(rename = "customType")]
    pub custom_type: String,
    #[serde(
        skip_serializing_if = "Option::is_none",
        default,
        deserialize_with = "present"
    )]
    pub data: Option<Value>,
    pub id: String,
    #[serde(rename = "parentId")]
    pub parent_id: Option<String>,
    pub timestamp: String,
    #[serde(flatten)]
    pub extra: Extra,
}

/// An extension message that takes part in the LLM context as a user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CustomMessageEntry {
    #[serde(rename = "customType")]
    pub custom_type: String,
    pub content: UserContent,
    pub display: bool,
    #[serde(
        skip_serializing_if = "Option::is_none",
        default,
        deserialize_with = "present"
    )]
    pub details: Option<Value>,
    pub id: String,
    #[serde(rename = "parentId")]
    pub parent_id: Option<String>,
    pub timestamp: String,
    #[serde(flatten)]
    pub extra: Extra,
}

/// A bookmark on `target_id`; an absent or empty label clears it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelEntry {
    pub id: String,
    #[serde(rename = "parentId")]
    pub parent_id: Option<String>,
    pub timestamp: String,
    #[serde(rename = "targetId")]
    pub target_id: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub label: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The session's display name (latest wins; empty clears).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionInfoEntry {
    pub id: String,
    #[serde(rename = "parentId")]
    pub parent_id: Option<String>,
    pub timestamp: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub name: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The known entry types, tagged by `type`.
// Most entries are messages, so boxing the large variant would cost an allocation per line.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
enum Known {
    #[serde(rename = "message")]
    Message(MessageEntry),
    #[serde(rename = "model_change")]
    ModelChange(ModelChangeEntry),
    #[serde(rename = "thinking_level_change")]
    ThinkingLevelChange(ThinkingLevelChangeEntry),
    #[serde(rename = "compaction")]
    Compaction(CompactionEntry),
    #[serde(rename = "branch_summary")]
    BranchSummary(BranchSummaryEntry),
    #[serde(rename = "custom")]
    Custom(CustomEntry),
    #[serde(rename = "custom_message")]
    CustomMessage(CustomMessageEntry),
    #[serde(rename = "label")]
    Label(LabelEntry),
    #[serde(rename = "session_info")]
    SessionInfo(SessionInfoEntry),
}

/// One line after the header. A line whose `type` is unknown (or whose known shape does not
/// parse) is kept verbatim as `Unknown`.
// Most entries are messages (see `Known`).
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    Message(MessageEntry),
    ModelChange(ModelChangeEntry),
    ThinkingLevelChange(ThinkingLevelChangeEntry),
    Compaction(CompactionEntry),
    BranchSummary(BranchSummaryEntry),
    Custom(CustomEntry),
    CustomMessage(CustomMessageEntry),
    Label(LabelEntry),
    SessionInfo(SessionInfoEntry),
    Unknown(Value),
}

impl Entry {
    /// Reads an entry from a parsed JSON line; never fails.
    pub fn from_value(v: Value) -> Entry {
        const KNOWN: [&str; 9] = [
            "message",
            "model_change",
            "thinking_level_change",
            "compaction",
            "branch_summary",
            "custom",
            "custom_message",
            "label",
            "session_info",
        ];
        let known = v
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| KNOWN.contains(&t));
        if !known || super::normalize::unusable_entry(&v).is_some() {
            return Entry::Unknown(v);
        }
        let mut v = v;
        super::normalize::entry(&mut v);
        match Known::deserialize(&v) {
            Ok(k) => k.into(),
            Err(_) => Entry::Unknown(v),
        }
    }

    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The JSON line (without the newline), as pi's `JSON.stringify` writes it.
    pub fn to_line(&self) -> String {
        super::json::to_js_string(self)
    }

    /// The `type` tag.
    pub fn kind(&self) -> &str {
        match self {
            Entry::Message(_) => "message",
            Entry::ModelChange(_) => "model_change",
            Entry::ThinkingLevelChange(_) => "thinking_level_change",
            Entry::Compaction(_) => "compaction",
            Entry::BranchSummary(_) => "branch_summary",
            Entry::Custom(_) => "custom",
            Entry::CustomMessage(_) => "custom_message",
            Entry::Label(_) => "label",
            Entry::SessionInfo(_) => "session_info",
            Entry::Unknown(v) => v.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }

    pub fn id(&self) -> &str {
        match self {
            Entry::Message(e) => &e.id,
            Entry::ModelChange(e) => &e.id,
            Entry::ThinkingLevelChange(e) => &e.id,
            Entry::Compaction(e) => &e.id,
            Entry::BranchSummary(e) => &e.id,
            Entry::Custom(e) => &e.id,
            Entry::CustomMessage(e) => &e.id,
            Entry::Label(e) => &e.id,
            Entry::SessionInfo(e) => &e.id,
            Entry::Unknown(v) => v.get("id").and_then(Value::as_str).unwrap_or(""),
        }
    }

    pub fn parent_id(&self) -> Option<&str> {
        match self {
            Entry::Message(e) => e.parent_id.as_deref(),
            Entry::ModelChange(e) => e.parent_id.as_deref(),
            Entry::ThinkingLevelChange(e) => e.parent_id.as_deref(),
            Entry::Compaction(e) => e.parent_id.as_deref(),
            Entry::BranchSummary(e) => e.parent_id.as_deref(),
            Entry::Custom(e) => e.parent_id.as_deref(),
            Entry::CustomMessage(e) => e.parent_id.as_deref(),
            Entry::Label(e) => e.parent_id.as_deref(),
            Entry::SessionInfo(e) => e.parent_id.as_deref(),
            Entry::Unknown(v) => v.get("parentId").and_then(Value::as_str),
        }
    }

    pub fn timestamp(&self) -> &str {
        match self {
            Entry::Message(e) => &e.timestamp,
            Entry::ModelChange(e) => &e.timestamp,
            Entry::ThinkingLevelChange(e) => &e.timestamp,
            Entry::Compaction(e) => &e.timestamp,
            Entry::BranchSummary(e) => &e.timestamp,
            Entry::Custom(e) => &e.timestamp,
            Entry::CustomMessage(e) => &e.timestamp,
            Entry::Label(e) => &e.timestamp,
            Entry::SessionInfo(e) => &e.timestamp,
            Entry::Unknown(v) => v.get("timestamp").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// The message of a `message` entry.
    pub fn message(&self) -> Option<&AgentMessage> {
        match self {
            Entry::Message(e) => Some(&e.message),
            _ => None,
        }
    }

    pub fn is_assistant_message(&self) -> bool {
        matches!(self.message(), Some(m) if m.role() == "assistant")
    }
}

impl From<Known> for Entry {
    fn from(k: Known) -> Entry {
        match k {
            Known::Message(e) => Entry::Message(e),
            Known::ModelChange(e) => Entry::ModelChange(e),
            Known::ThinkingLevelChange(e) => Entry::ThinkingLevelChange(e),
            Known::Compaction(e) => Entry::Compaction(e),
            Known::BranchSummary(e) => Entry::BranchSummary(e),
            Known::Custom(e) => Entry::Custom(e),
            Known::CustomMessage(e) => Entry::CustomMessage(e),
            Known::Label(e) => Entry::Label(e),
            Known::SessionInfo(e) => Entry::SessionInfo(e),
        }
    }
}

impl Serialize for Entry {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(tag = "type")]
        enum Ref<'a> {
            #[serde(rename = "message")]
            Message(&'a MessageEntry),
            #[serde(rename = "model_change")]
            ModelChange(&'a ModelChangeEntry),
            #[serde(rename = "thinking_level_change")]
            ThinkingLevelChange(&'a ThinkingLevelChangeEntry),
            #[serde(rename = "compaction")]
            Compaction(&'a CompactionEntry),
            #[serde(rename = "branch_summary")]
            BranchSummary(&'a BranchSummaryEntry),
            #[serde(rename = "custom")]
            Custom(&'a CustomEntry),
            #[serde(rename = "custom_message")]
            CustomMessage(&'a CustomMessageEntry),
            #[serde(rename = "label")]
            Label(&'a LabelEntry),
            #[serde(rename = "session_info")]
            SessionInfo(&'a SessionInfoEntry),
        }
        let r = match self {
            Entry::Message(e) => Ref::Message(e),
            Entry::ModelChange(e) => Ref::ModelChange(e),
            Entry::ThinkingLevelChange(e) => Ref::ThinkingLevelChange(e),
            Entry::Compaction(e) => Ref::Compaction(e),
            Entry::BranchSummary(e) => Ref::BranchSummary(e),
            Entry::Custom(e) => Ref::Custom(e),
            Entry::CustomMessage(e) => Ref::CustomMessage(e),
            Entry::Label(e) => Ref::Label(e),
            Entry::SessionInfo(e) => Ref::SessionInfo(e),
            Entry::Unknown(v) => return v.serialize(s),
        };
        r.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Entry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Entry::from_value(Value::deserialize(d)?))
    }
}

/// Output of `!cmd` (or RPC `bash`), shown to the LLM as a user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BashExecutionMessage {
    pub command: String,
    pub output: String,
    /// Absent when the process was killed; `Some(None)` keeps an explicit `null`.
    #[serde(
        rename = "exitCode",
        skip_serializing_if = "Option::is_none",
        default,
        deserialize_with = "present"
    )]
    pub exit_code: Option<Option<i64>>,
    pub cancelled: bool,
    pub truncated: bool,
    #[serde(
        rename = "fullOutputPath",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub full_output_path: Option<String>,
    pub timestamp: i64,
    /// `!!cmd`: recorded but never sent to the LLM.
    #[serde(
        rename = "excludeFromContext",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub exclude_from_context: Option<bool>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// An extension message (`hookMessage` before v3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CustomMessage {
    #[serde(rename = "customType")]
    pub custom_type: String,
    pub content: UserContent,
    pub display: bool,
    #[serde(
        skip_serializing_if = "Option::is_none",
        default,
        deserialize_with = "present"
    )]
    pub details: Option<Value>,
    pub timestamp: i64,
    #[serde(flatten)]
    pub extra: Extra,
}

/// Synthesized from a `branch_summary` entry when building context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BranchSummaryMessage {
    pub summary: String,
    #[serde(rename = "fromId")]
    pub from_id: String,
    pub timestamp: i64,
    #[serde(flatten)]
    pub extra: Extra,
}

/// Synthesized from a `compaction` entry when building context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactionSummaryMessage {
    pub summary: String,
    #[serde(rename = "tokensBefore")]
    pub tokens_before: u64,
    pub timestamp: i64,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "role")]
enum ExtraRole {
    #[serde(rename = "bashExecution")]
    BashExecution(BashExecutionMessage),
    #[serde(rename = "custom")]
    Custom(CustomMessage),
    #[serde(rename = "branchSummary")]
    BranchSummary(BranchSummaryMessage),
    #[serde(rename = "compactionSummary")]
    CompactionSummary(CompactionSummaryMessage),
    #[serde(rename = "system")]
    System(SystemMessage),
}

/// A message of the agent transcript: an LLM message or one of pi's own roles. Unknown roles
/// (and known roles whose shape does not parse) are kept as raw JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentMessage {
    Llm(Message),
    BashExecution(BashExecutionMessage),
    Custom(CustomMessage),
    BranchSummary(BranchSummaryMessage),
    CompactionSummary(CompactionSummaryMessage),
    /// pi 1.x's prompt and tool checkpoints and patches (`role: "system"`).
    System(SystemMessage),
    Unknown(Value),
}

impl AgentMessage {
    pub fn role(&self) -> &str {
        match self {
            AgentMessage::Llm(Message::User(_)) => "user",
            AgentMessage::Llm(Message::Assistant(_)) => "assistant",
            AgentMessage::Llm(Message::ToolResult(_)) => "toolResult",
            AgentMessage::BashExecution(_) => "bashExecution",
            AgentMessage::Custom(_) => "custom",
            AgentMessage::BranchSummary(_) => "branchSummary",
            AgentMessage::CompactionSummary(_) => "compactionSummary",
            AgentMessage::System(_) => "system",
            AgentMessage::Unknown(v) => v.get("role").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// Reads a message of any shape a pi version wrote (see `normalize`); an unknown role is
    /// kept as it is.
    pub fn from_value(mut v: Value) -> AgentMessage {
        super::normalize::message(&mut v);
        let role = v.get("role").and_then(Value::as_str).unwrap_or("");
        let parsed = match role {
            "user" | "assistant" | "toolResult" => {
                Message::deserialize(&v).ok().map(AgentMessage::Llm)
            }
            "bashExecution" | "custom" | "branchSummary" | "compactionSummary" | "system" => {
                ExtraRole::deserialize(&v).ok().map(|r| match r {
                    ExtraRole::BashExecution(m) => AgentMessage::BashExecution(m),
                    ExtraRole::Custom(m) => AgentMessage::Custom(m),
                    ExtraRole::BranchSummary(m) => AgentMessage::BranchSummary(m),
                    ExtraRole::CompactionSummary(m) => AgentMessage::CompactionSummary(m),
                    ExtraRole::System(m) => AgentMessage::System(m),
                })
            }
            _ => None,
        };
        parsed.unwrap_or(AgentMessage::Unknown(v))
    }

    pub fn user(m: UserMessage) -> Self {
        AgentMessage::Llm(Message::User(m))
    }

    pub fn assistant(m: AssistantMessage) -> Self {
        AgentMessage::Llm(Message::Assistant(m))
    }

    pub fn tool_result(m: ToolResultMessage) -> Self {
        AgentMessage::Llm(Message::ToolResult(m))
    }

    /// The `timestamp` (ms) if the message has one.
    pub fn timestamp(&self) -> Option<i64> {
        match self {
            AgentMessage::Llm(Message::User(m)) => Some(m.timestamp),
            AgentMessage::Llm(Message::Assistant(m)) => Some(m.timestamp),
            AgentMessage::Llm(Message::ToolResult(m)) => Some(m.timestamp),
            AgentMessage::BashExecution(m) => Some(m.timestamp),
            AgentMessage::Custom(m) => Some(m.timestamp),
            AgentMessage::BranchSummary(m) => Some(m.timestamp),
            AgentMessage::CompactionSummary(m) => Some(m.timestamp),
            AgentMessage::System(m) => Some(m.timestamp),
            AgentMessage::Unknown(v) => v.get("timestamp").and_then(Value::as_i64),
        }
    }
}

impl From<Message> for AgentMessage {
    fn from(m: Message) -> Self {
        AgentMessage::Llm(m)
    }
}

impl Serialize for AgentMessage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(tag = "role")]
        enum Ref<'a> {
            #[serde(rename = "bashExecution")]
            BashExecution(&'a BashExecutionMessage),
            #[serde(rename = "custom")]
            Custom(&'a CustomMessage),
            #[serde(rename = "branchSummary")]
            BranchSummary(&'a BranchSummaryMessage),
            #[serde(rename = "compactionSummary")]
            CompactionSummary(&'a CompactionSummaryMessage),
            #[serde(rename = "system")]
            System(&'a SystemMessage),
        }
        match self {
            AgentMessage::Llm(m) => m.serialize(s),
            AgentMessage::BashExecution(m) => Ref::BashExecution(m).serialize(s),
            AgentMessage::Custom(m) => Ref::Custom(m).serialize(s),
            AgentMessage::BranchSummary(m) => Ref::BranchSummary(m).serialize(s),
            AgentMessage::CompactionSummary(m) => Ref::CompactionSummary(m).serialize(s),
            AgentMessage::System(m) => Ref::System(m).serialize(s),
            AgentMessage::Unknown(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for AgentMessage {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(AgentMessage::from_value(Value::deserialize(d)?))
    }
}
