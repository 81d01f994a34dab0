//! The session lifecycle as extensions see it: the `session_before_*` questions an extension
//! may answer with `{cancel: true}` before pi compacts, forks, switches sessions or moves in
//! the tree; `session_start` after the session was replaced; and the notifications
//! `model_select` and `thinking_level_select`.
//!
//! A question is handed out as a [`SessionGate`] rather than asked at once, so a mode whose
//! UI thread must keep drawing (an extension may open a dialog while it decides) can ask it on
//! another thread. Modes without that need call [`SessionGate::cancelled`] in place.

use std::sync::Arc;

use serde_json::{json, Value};

use super::AgentSession;
use crate::ai::{Abort, Model, ThinkingLevel};
use crate::extensions::ExtensionHost;

/// One `session_before_*` question, ready to be asked (on any thread).
pub struct SessionGate {
    host: Arc<ExtensionHost>,
    event: &'static str,
    data: Value,
    abort: Abort,
}

impl SessionGate {
    /// Asks the subscribed extensions in load order; true when one cancelled. Blocks for at
    /// most the event timeout per extension (a silent extension is disabled and does not
    /// cancel).
    pub fn cancelled(&self) -> bool {
        self.host
            .session_before(self.event, self.data.clone(), &self.abort)
            .is_some()
    }

    pub fn event(&self) -> &str {
        self.event
    }
}

/// How a model came to be selected (`model_select`'s `source`, as in pi).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelSource {
    Set,
    Cycle,
    Restore,
}

impl ModelSource {
    pub fn as_str(self) -> &'static str {
        match self {
            ModelSource::Set => "set",
            ModelSource::Cycle => "cycle",
            ModelSource::Restore => "restore",
        }
    }
}

fn model_json(model: &Model) -> Value {
    serde_json::to_value(model).unwrap_or(Value::Null)
}

impl AgentSession {
    /// A gate for `event` when a live extension subscribes to it.
    fn gate(&self, event: &'static str, data: Value) -> Option<SessionGate> {
        let host = self.extension_host()?;
        host.has_subscribers(event).then(|| SessionGate {
            host: Arc::clone(host),
            event,
            data,
            abort: self.abort.clone(),
        })
    }

    /// `session_before_fork {entryId, position}` (`position`: `before` for a fork at a user
    /// message, `at` for a clone of the current branch).
    pub fn before_fork(&self, entry_id: &str, position: &str) -> Option<SessionGate> {
        self.gate(
            "session_before_fork",
            json!({"entryId": entry_id, "position": position}),
        )
    }

    /// `session_before_switch {reason, targetSessionFile?}` (`reason`: `new` or `resume`).
    pub fn before_switch(&self, reason: &str, target: Option<&str>) -> Option<SessionGate> {
        let mut data = json!({ "reason": reason });
        if let Some(t) = target {
            data["targetSessionFile"] = t.into();
        }
        self.gate("session_before_switch", data)
    }

    /// `session_before_tree {preparation: {targetId, oldLeafId, userWantsSummary,
    /// customInstructions?}}`.
    pub fn before_tree(
        &self,
        target_id: &str,
        summarize: bool,
        custom_instructions: Option<&str>,
    ) -> Option<SessionGate> {
        let preparation = json!({
            "targetId": target_id,
            "oldLeafId": self.session.leaf_id(),
            "userWantsSummary": summarize,
            "customInstructions": custom_instructions,
        });
        self.gate("session_before_tree", json!({ "preparation": preparation }))
    }

    /// `session_before_compact {customInstructions?, branchEntries}`.
    pub(super) fn before_compact(&self, custom_instructions: Option<&str>) -> Option<SessionGate> {
        let host = self.extension_host()?;
        if !host.has_subscribers("session_before_compact") {
            return None;
        }
        let tree = self.session.tree();
        let branch: Vec<Value> = self
            .session
            .leaf_id()
            .map(|leaf| tree.path(leaf))
            .unwrap_or_default()
            .into_iter()
            .filter_map(|e| serde_json::to_value(e).ok())
            .collect();
        self.gate(
            "session_before_compact",
            json!({"customInstructions": custom_instructions, "branchEntries": branch}),
        )
    }

    /// Tells extensions the session was replaced (`session_start` with pi's `reason`: `new`,
    /// `resume`, `fork` or `reload`, and the file that was current before).
    pub fn session_replaced(&self, reason: &str, previous_session_file: Option<String>) {
        self.refresh_extension_view();
        if let Some(host) = self.extension_host() {
            host.emit(
                "session_start",
                json!({"reason": reason, "previousSessionFile": previous_session_file}),
            );
        }
    }

    /// `model_select` when the model actually changed.
    pub(super) fn emit_model_select(&self, previous: &Model, source: ModelSource) {
        let model = &self.agent().model;
        if model.provider == previous.provider && model.id == previous.id {
            return;
        }
        if let Some(host) = self.extension_host() {
            host.emit(
                "model_select",
                json!({"model": model_json(model), "previousModel": model_json(previous),
                    "source": source.as_str()}),
            );
        }
    }

    /// `thinking_level_select` after a change.
    pub(super) fn emit_thinking_select(&self, level: ThinkingLevel, previous: ThinkingLevel) {
        if let Some(host) = self.extension_host() {
            host.emit(
                "thinking_level_select",
                json!({"level": level.as_str(), "previousLevel": previous.as_str()}),
            );
        }
    }
}
