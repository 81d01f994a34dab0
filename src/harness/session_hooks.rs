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
    pub fn session_replaced(&mut self, reason: &str, previous_session_file: Option<String>) {
        // pi gives its extensions a fresh start for the new session.
        self.restart_extensions(reason);
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

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::agent::Agent;
    use crate::ai::ModelCost;
    use crate::extensions::{discover, DiscoveryOptions, HostOptions};
    use crate::resources::settings::RetrySettings;
    use crate::resources::trust::ProjectScope;

    fn model(id: &str) -> Model {
        Model {
            id: id.into(),
            name: id.into(),
            api: "scripted".into(),
            provider: "test".into(),
            base_url: String::new(),
            reasoning: true,
            input: vec!["text".into()],
            cost: ModelCost::default(),
            context_window: 1000,
            max_tokens: 100,
            thinking_level_map: None,
            headers: None,
            compat: None,
        }
    }

    /// A session whose one extension logs the events it gets to `<dir>/events.jsonl`.
    fn logging_session(dir: &std::path::Path) -> AgentSession {
        use std::os::unix::fs::PermissionsExt;
        let script = dir.join("logger.py");
        std::fs::write(
            &script,
            "#!/usr/bin/env python3\nimport json, sys\nlog = open(sys.argv[0] + '.jsonl', 'a')\n\
             for line in sys.stdin:\n    msg = json.loads(line)\n\
             \x20   if msg['type'] == 'hello':\n\
             \x20       print(json.dumps({'type': 'register', 'protocol': 1, 'events': \
             ['model_select', 'thinking_level_select']}), flush=True)\n\
             \x20   elif msg['type'] == 'event':\n\
             \x20       log.write(json.dumps({'event': msg['event'], 'data': msg['data']}) + '\\n')\n\
             \x20       log.flush()\n",
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let scope = ProjectScope::trusting(dir, dir);
        let (sources, _, _) = discover(&DiscoveryOptions {
            agent_dir: &dir.join("agent"),
            cwd: dir,
            scope: &scope,
            settings_paths: Vec::new(),
            package_paths: Vec::new(),
            cli_paths: vec![script.to_string_lossy().into_owned()],
            no_extensions: true,
        });
        let host = ExtensionHost::load(sources, HostOptions::new(dir.to_path_buf(), "print")).host;
        let mut agent = Agent::new(model("first"), String::new(), Default::default());
        agent.cwd = dir.to_path_buf();
        let mut s = AgentSession::new(agent, RetrySettings::default(), Abort::new());
        s.attach_extensions(host, Vec::new(), None);
        s.start_extensions("startup");
        s
    }

    fn logged(dir: &std::path::Path, n: usize) -> Vec<Value> {
        let start = Instant::now();
        loop {
            let lines: Vec<Value> = std::fs::read_to_string(dir.join("logger.py.jsonl"))
                .unwrap_or_default()
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect();
            if lines.len() >= n || start.elapsed() > Duration::from_secs(5) {
                return lines;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn model_and_thinking_changes_reach_extensions() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = logging_session(dir.path());
        s.set_thinking_level(ThinkingLevel::High);
        // Setting the same level again is no change and says nothing.
        s.set_thinking_level(ThinkingLevel::High);
        s.set_model(model("second"), ("k".into(), Vec::new()))
            .unwrap();
        let events = logged(dir.path(), 2);
        s.extension_host().unwrap().shutdown();
        assert_eq!(events.len(), 2, "{events:?}");
        assert_eq!(events[0]["event"], "thinking_level_select");
        assert_eq!(events[0]["data"]["level"], "high");
        assert_eq!(events[1]["event"], "model_select");
        assert_eq!(events[1]["data"]["model"]["id"], "second");
        assert_eq!(events[1]["data"]["previousModel"]["id"], "first");
        assert_eq!(events[1]["data"]["source"], "set");
    }
}
