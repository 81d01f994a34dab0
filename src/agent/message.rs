//! The messages the agent loop runs on: pi's transcript roles beside the LLM's own
//! (`bashExecution`, `custom`, `branchSummary`, `compactionSummary`), with pi's field names and
//! key order, and `to_llm_messages`, which turns them into what the model receives. Session
//! files store these messages; the loop owns their shape. `normalize` reads every older shape
//! of them.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::ai::{
    AssistantMessage, Content, Extra, Message, ToolResultMessage, UserContent, UserMessage,
};
use crate::util::json::{present, untagged_fields};

pub use super::system_message::SystemMessage;

pub const COMPACTION_SUMMARY_PREFIX: &str =
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

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
        // Each role's reader is called directly (see `Message::from_json`); the role, which
        // the struct takes into `extra`, is taken out again.
        let parsed = match role {
            "user" | "assistant" | "toolResult" => Message::from_json(&v).map(AgentMessage::Llm),
            "bashExecution" => {
                untagged_fields(&v, "role", |m: &mut BashExecutionMessage| &mut m.extra)
                    .map(AgentMessage::BashExecution)
            }
            "custom" => untagged_fields(&v, "role", |m: &mut CustomMessage| &mut m.extra)
                .map(AgentMessage::Custom),
            "branchSummary" => {
                untagged_fields(&v, "role", |m: &mut BranchSummaryMessage| &mut m.extra)
                    .map(AgentMessage::BranchSummary)
            }
            "compactionSummary" => {
                untagged_fields(&v, "role", |m: &mut CompactionSummaryMessage| &mut m.extra)
                    .map(AgentMessage::CompactionSummary)
            }
            "system" => untagged_fields(&v, "role", |m: &mut SystemMessage| &mut m.extra)
                .map(AgentMessage::System),
            _ => return AgentMessage::Unknown(v),
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

/// The text pi shows the LLM for a `bashExecution` message.
pub fn bash_execution_text(m: &BashExecutionMessage) -> String {
    let mut t = format!("Ran `{}`\n", m.command);
    if m.output.is_empty() {
        t.push_str("(no output)");
    } else {
        t.push_str(&format!("```\n{}\n```", m.output));
    }
    if m.cancelled {
        t.push_str("\n\n(command cancelled)");
    } else if let Some(Some(code)) = m.exit_code {
        if code != 0 {
            t.push_str(&format!("\n\nCommand exited with code {code}"));
        }
    }
    if m.truncated {
        if let Some(p) = m.full_output_path.as_deref().filter(|p| !p.is_empty()) {
            t.push_str(&format!("\n\n[Output truncated. Full output: {p}]"));
        }
    }
    t
}

fn user_text(text: String, timestamp: i64) -> Message {
    Message::User(UserMessage {
        content: UserContent::Blocks(vec![Content::text(text)]),
        timestamp,
        extra: Extra::new(),
    })
}

/// What the LLM receives for a transcript (pi's `convertToLlm`): LLM messages pass through,
/// pi's roles become user messages, excluded bash runs and unknown roles are dropped.
/// `to_llm_messages` of a transcript no longer needed: LLM messages move instead of being
/// copied, so a resumed conversation is not briefly held twice (issue 35).
pub fn into_llm_messages(messages: Vec<AgentMessage>) -> Vec<Message> {
    let mut out = Vec::with_capacity(messages.len());
    for m in messages {
        match m {
            AgentMessage::Llm(m) => out.push(m),
            other => out.extend(to_llm_messages(std::slice::from_ref(&other))),
        }
    }
    out
}

pub fn to_llm_messages(messages: &[AgentMessage]) -> Vec<Message> {
    messages
        .iter()
        .filter_map(|m| match m {
            AgentMessage::Llm(m) => Some(m.clone()),
            AgentMessage::BashExecution(b) if b.exclude_from_context == Some(true) => None,
            AgentMessage::BashExecution(b) => Some(user_text(bash_execution_text(b), b.timestamp)),
            AgentMessage::Custom(c) => Some(Message::User(UserMessage {
                content: match &c.content {
                    UserContent::Text(s) => UserContent::Blocks(vec![Content::text(s.clone())]),
                    blocks => blocks.clone(),
                },
                timestamp: c.timestamp,
                extra: Extra::new(),
            })),
            AgentMessage::BranchSummary(b) => Some(user_text(
                format!(
                    "{BRANCH_SUMMARY_PREFIX}{}{BRANCH_SUMMARY_SUFFIX}",
                    b.summary
                ),
                b.timestamp,
            )),
            AgentMessage::CompactionSummary(c) => Some(user_text(
                format!(
                    "{COMPACTION_SUMMARY_PREFIX}{}{COMPACTION_SUMMARY_SUFFIX}",
                    c.summary
                ),
                c.timestamp,
            )),
            // The prompt and tools reach the request through the agent, not as messages.
            AgentMessage::System(_) | AgentMessage::Unknown(_) => None,
        })
        .collect()
}
