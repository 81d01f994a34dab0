//! The session file vocabulary: the header line and the nine entry types (the messages a
//! `message` entry holds are the agent's, `agent::message`). Every type serializes with pi's
//! field names, key order and optional-field omission; unknown fields ride along in `extra`,
//! and unknown entry types are kept as raw JSON so a rewrite never drops them.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::ai::{Extra, UserContent};
use crate::util::json::{present, untagged_fields};

// The messages moved to `agent::message` (the loop owns their shape; storage uses them);
// re-exported for callers of the old path.
pub use crate::agent::message::{
    AgentMessage, BashExecutionMessage, BranchSummaryMessage, CompactionSummaryMessage,
    CustomMessage, SystemMessage,
};

/// pi's current session file format version.
pub const CURRENT_VERSION: u64 = 3;

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
            version: Some(CURRENT_VERSION),
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
    /// What the summary requests used (pi 1.x), written where 1.x writes it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub usage: Option<Value>,
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

/// The entry types this version reads into typed entries; others stay `Unknown`.
const KNOWN_TYPES: [&str; 9] = [
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

/// Reads one entry type's fields from its (shaped) line (see `untagged_fields`).
fn fields<T: DeserializeOwned>(v: &Value, extra: fn(&mut T) -> &mut Extra) -> Option<T> {
    untagged_fields(v, "type", extra).ok()
}

/// The fields of a `message` entry besides the message.
#[derive(Deserialize)]
struct MessageEntryFields {
    id: String,
    #[serde(rename = "parentId")]
    parent_id: Option<String>,
    timestamp: String,
    #[serde(flatten)]
    extra: Extra,
}

/// A shaped `message` line as an entry. The message is moved out of the line rather than
/// copied (it is most of the line), and put back if the other fields do not parse.
fn message_entry(mut v: Value) -> Entry {
    let message = v.get_mut("message").map(Value::take).unwrap_or_default();
    match MessageEntryFields::deserialize(&v) {
        Ok(mut f) => {
            f.extra.shift_remove("type");
            f.extra.shift_remove("message");
            Entry::Message(MessageEntry {
                id: f.id,
                parent_id: f.parent_id,
                timestamp: f.timestamp,
                message: AgentMessage::from_value(message),
                extra: f.extra,
            })
        }
        Err(_) => {
            if let Some(slot) = v.get_mut("message") {
                *slot = message;
            }
            Entry::Unknown(v)
        }
    }
}

/// One line after the header. A line whose `type` is unknown (or whose known shape does not
/// parse) is kept verbatim as `Unknown`.
// Most entries are messages, so boxing the large variant would cost an allocation per line.
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
    pub fn from_value(mut v: Value) -> Entry {
        let known = v
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| KNOWN_TYPES.contains(&t));
        if !known || super::normalize::unusable_entry(&v).is_some() {
            return Entry::Unknown(v);
        }
        super::normalize::entry(&mut v);
        let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
        // Dispatching on the tag here (rather than with serde's internally tagged enums, which
        // buffer the whole line and then each variant again) keeps one small reader per type.
        let parsed = match kind {
            "message" => return message_entry(v),
            "model_change" => {
                fields(&v, |e: &mut ModelChangeEntry| &mut e.extra).map(Entry::ModelChange)
            }
            "thinking_level_change" => fields(&v, |e: &mut ThinkingLevelChangeEntry| &mut e.extra)
                .map(Entry::ThinkingLevelChange),
            "compaction" => {
                fields(&v, |e: &mut CompactionEntry| &mut e.extra).map(Entry::Compaction)
            }
            "branch_summary" => {
                fields(&v, |e: &mut BranchSummaryEntry| &mut e.extra).map(Entry::BranchSummary)
            }
            "custom" => fields(&v, |e: &mut CustomEntry| &mut e.extra).map(Entry::Custom),
            "custom_message" => {
                fields(&v, |e: &mut CustomMessageEntry| &mut e.extra).map(Entry::CustomMessage)
            }
            "label" => fields(&v, |e: &mut LabelEntry| &mut e.extra).map(Entry::Label),
            _ => fields(&v, |e: &mut SessionInfoEntry| &mut e.extra).map(Entry::SessionInfo),
        };
        parsed.unwrap_or(Entry::Unknown(v))
    }

    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The JSON line (without the newline), as pi's `JSON.stringify` writes it.
    pub fn to_line(&self) -> String {
        crate::util::json::to_js_string(self)
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

    /// A user or assistant message: what makes a new session worth a file (pi 1.6.0).
    pub fn is_conversation_message(&self) -> bool {
        matches!(self.message(), Some(m) if matches!(m.role(), "user" | "assistant"))
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_message_line_whose_fields_do_not_parse_keeps_its_message_in_place() {
        let line = json!({"type": "message", "id": 5, "parentId": null, "timestamp": "t",
                          "message": {"role": "user", "content": "hi", "timestamp": 1}, "z": 1});
        match message_entry(line.clone()) {
            Entry::Unknown(kept) => assert_eq!(kept.to_string(), line.to_string()),
            other => panic!("typed: {other:?}"),
        }
    }
}
