//! What extensions ask the session for, as data: the `SessionView` getters answer from,
//! the `Action`s the harness applies at its next safe point, the `ModeRequest`s only the mode
//! can carry out, and `ReplyTo`, where each answer goes. The host queues them; `calls` makes
//! them from an extension's lines; the harness and the modes consume them.

use std::sync::Arc;

use serde_json::{json, Value};

use super::extension::Extension;
use super::protocol;
use crate::ai::{Message, UserContent};

/// What getters answer while the session is busy elsewhere (also pushed to the Node.js
/// bridge, whose extensions' getters are synchronous).
#[derive(Debug, Clone, Default)]
pub struct SessionView {
    pub active_tools: Vec<String>,
    /// `{name, description, parameters}` of every tool that could be active.
    pub all_tools: Vec<Value>,
    pub thinking_level: String,
    pub session_name: Option<String>,
    pub model: Value,
    pub system_prompt: String,
    pub session_file: Option<String>,
    pub session_id: String,
    pub leaf_id: Option<String>,
}

impl SessionView {
    /// The view as the bridge's extensions read it.
    pub fn to_json(&self, idle: bool) -> Value {
        json!({
            "activeTools": self.active_tools,
            "allTools": self.all_tools,
            "thinkingLevel": self.thinking_level,
            "sessionName": self.session_name,
            "model": self.model,
            "systemPrompt": self.system_prompt,
            "sessionFile": self.session_file,
            "sessionId": self.session_id,
            "leafId": self.leaf_id,
            "idle": idle,
        })
    }
}

/// Where an action's answer goes once applied.
#[derive(Clone)]
pub struct ReplyTo {
    pub extension: Arc<Extension>,
    pub id: Value,
}

impl ReplyTo {
    /// Where the answer to the call `msg` goes (nowhere for a call without id).
    pub fn of(extension: &Arc<Extension>, msg: &Value) -> ReplyTo {
        ReplyTo {
            extension: Arc::clone(extension),
            id: msg.get("id").cloned().unwrap_or(Value::Null),
        }
    }

    pub fn send(&self, result: Result<Value, String>) {
        if self.id.is_null() {
            return;
        }
        self.extension
            .process
            .send(protocol::reply(&self.id, result));
    }
}

/// A session change an extension asked for, applied by the harness between runs.
pub enum Action {
    /// Start a prompt with this message (`sendUserMessage`, `sendMessage` with `triggerTurn`).
    Prompt(Box<Message>),
    /// Record an extension message; it joins the context of the next prompt.
    CustomMessage {
        custom_type: String,
        content: UserContent,
        display: bool,
        details: Option<Value>,
        trigger_turn: bool,
    },
    AppendEntry {
        custom_type: String,
        data: Option<Value>,
    },
    SetModel {
        provider: String,
        model_id: String,
    },
    SetThinkingLevel(String),
    SetActiveTools(Vec<String>),
    SetSessionName(String),
    Compact(Option<String>),
    SetLabel {
        entry_id: String,
        label: Option<String>,
    },
    /// Nothing to change: answered once pi is idle (`ctx.waitForIdle()`).
    WaitForIdle,
}

/// What only the mode can do for an extension's command (`ctx.newSession()`, `ctx.fork()`,
/// `ctx.switchSession()`, `ctx.navigateTree()`, `ctx.reload()`, `ctx.shutdown()`): the
/// extension is answered at once and the mode acts once the command is over.
#[derive(Debug, Clone, PartialEq)]
pub enum ModeRequest {
    NewSession,
    Fork { entry_id: String, at: bool },
    SwitchSession(String),
    NavigateTree { target_id: String, summarize: bool },
    Reload,
    Shutdown,
}

/// An action plus where its answer goes (`None` for a call without id).
pub struct PendingAction {
    pub action: Action,
    pub reply: Option<ReplyTo>,
}
