//! Checkpoints around turns and `/rewind`, for every mode: with `checkpoints.enabled`, the
//! workspace is snapshotted before a prompt runs and the snapshot is tied to the prompt's user
//! message once the session has recorded it; another is taken when the run settles, so a later
//! rewind can tell the user's own changes from the turns'. A rewind restores the files, the
//! conversation (the leaf goes back before the user message, as `/tree` does), or both.

use serde::Serialize;

use super::checkpoint::store::CheckpointKind;
use super::checkpoint::{CheckpointSettings, Checkpoints, PendingCheckpoint, Preview};
use super::AgentSession;
use crate::ai::Message;
use crate::session::{ops, AgentMessage, Entry};

/// A user message `/rewind` can go back to.
#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct RewindPoint {
    pub entry_id: String,
    pub text: String,
    pub timestamp: String,
    /// Whether the files as they were before this message's turn were recorded.
    pub has_checkpoint: bool,
}

/// What a rewind puts back.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RewindScope {
    Code,
    Conversation,
    Both,
}

impl RewindScope {
    pub fn parse(s: &str) -> Option<RewindScope> {
        match s {
            "code" => Some(RewindScope::Code),
            "conversation" => Some(RewindScope::Conversation),
            "both" => Some(RewindScope::Both),
            _ => None,
        }
    }

    pub fn code(self) -> bool {
        self != RewindScope::Conversation
    }

    pub fn conversation(self) -> bool {
        self != RewindScope::Code
    }
}

/// What a rewind did.
#[derive(Serialize, Debug, Clone, Default)]
#[serde(rename_all = "camelCase")]
pub struct RewindOutcome {
    /// The file changes (present when the code was restored or previewed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview: Option<Preview>,
    /// Paths that could not be restored, with why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
    /// The user message's text, for the editor (when the conversation went back).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

impl AgentSession {
    /// The workspace's checkpoints when `checkpoints.enabled` is set.
    pub fn checkpoints(&self) -> Option<Checkpoints> {
        let settings = CheckpointSettings::from_settings(&self.settings);
        settings
            .enabled
            .then(|| Checkpoints::open(&crate::resources::agent_dir(), &self.agent().cwd, settings))
    }

    /// Before a prompt's run: snapshots the workspace (a failure is kept for the mode to show
    /// and never stops the prompt).
    pub(super) fn checkpoint_before_turn(&mut self) {
        self.pending_checkpoint = None;
        let Some(cps) = self.checkpoints() else {
            return;
        };
        match cps.snapshot() {
            Ok(snap) => self.pending_checkpoint = Some(PendingCheckpoint(cps, snap)),
            Err(e) => self.checkpoint_error = Some(e),
        }
    }

    /// A user message was just recorded: the pending snapshot becomes its checkpoint.
    pub(super) fn attach_checkpoint(&mut self, message: &Message) {
        if !matches!(message, Message::User(_)) {
            return;
        }
        // The run holds the agent: the workspace comes with the pending snapshot.
        let (Some(PendingCheckpoint(cps, snap)), Some(entry)) =
            (self.pending_checkpoint.take(), self.session.leaf_id())
        else {
            return;
        };
        let entry = entry.to_string();
        let session_id = self.session.session_id().to_string();
        if let Err(e) = cps.save(
            CheckpointKind::BeforeTurn,
            &snap,
            Some(&session_id),
            Some(&entry),
        ) {
            self.checkpoint_error = Some(e);
        }
        self.turn_checkpointed = true;
    }

    /// The run settled: records the files as the turn left them.
    pub(super) fn checkpoint_after_turn(&mut self) {
        self.pending_checkpoint = None;
        if !std::mem::take(&mut self.turn_checkpointed) {
            return;
        }
        let Some(cps) = self.checkpoints() else {
            return;
        };
        let session_id = self.session.session_id().to_string();
        if let Err(e) = cps.record(CheckpointKind::AfterTurn, Some(&session_id), None) {
            self.checkpoint_error = Some(e);
        }
    }

    /// The last checkpoint failure (too many files, a full disk), once.
    pub fn take_checkpoint_error(&mut self) -> Option<String> {
        self.checkpoint_error.take()
    }

    /// The user messages of the current branch, oldest first.
    pub fn rewind_points(&self) -> Vec<RewindPoint> {
        let cps = self.checkpoints();
        let tree = self.session.tree();
        let Some(leaf) = self.session.leaf_id() else {
            return Vec::new();
        };
        let logged: std::collections::HashSet<String> = cps
            .iter()
            .flat_map(|c| c.list())
            .filter(|c| c.kind == CheckpointKind::BeforeTurn)
            .filter_map(|c| c.entry_id)
            .collect();
        tree.path(leaf)
            .into_iter()
            .filter_map(|e| match e.message() {
                Some(AgentMessage::Llm(Message::User(u))) => Some(RewindPoint {
                    entry_id: e.id().to_string(),
                    text: ops::user_content_text(&u.content),
                    timestamp: e.timestamp().to_string(),
                    has_checkpoint: logged.contains(e.id()),
                }),
                _ => None,
            })
            .collect()
    }

    fn user_entry(&self, entry_id: &str) -> Result<Entry, String> {
        let entry = self
            .session
            .tree()
            .get(entry_id)
            .cloned()
            .ok_or_else(|| format!("Entry {entry_id} not found in this session"))?;
        match entry.message() {
            Some(AgentMessage::Llm(Message::User(_))) => Ok(entry),
            _ => Err(format!(
                "Entry {entry_id} is not a user message; /rewind goes back to a user message"
            )),
        }
    }

    /// What restoring the files to before `entry_id`'s turn would change.
    pub fn rewind_preview(&self, entry_id: &str) -> Result<Preview, String> {
        self.user_entry(entry_id)?;
        let cps = self.checkpoints().ok_or(
            "Checkpoints are off: set \"checkpoints\": {\"enabled\": true} in settings.json \
             (files are recorded from the next prompt on)",
        )?;
        let cp = cps.before_entry(entry_id).ok_or_else(|| {
            format!(
                "No checkpoint of the files before entry {entry_id} (taken before checkpoints \
                 were on, or pruned); the conversation can still go back"
            )
        })?;
        cps.preview(&cp)
    }

    /// Rewinds to before the user message `entry_id`: its files, its conversation, or both.
    /// The files go first; when they cannot be restored, the conversation stays.
    pub fn rewind(&mut self, entry_id: &str, scope: RewindScope) -> Result<RewindOutcome, String> {
        let entry = self.user_entry(entry_id)?;
        let mut outcome = RewindOutcome::default();
        if scope.code() {
            let preview = self.rewind_preview(entry_id)?;
            let cps = self.checkpoints().ok_or("Checkpoints are off")?;
            let session_id = self.session.session_id().to_string();
            outcome.failed = cps.restore(&preview, Some(&session_id))?;
            outcome.preview = Some(preview);
        }
        if scope.conversation() {
            if let Some(AgentMessage::Llm(Message::User(u))) = entry.message() {
                outcome.text = Some(ops::user_content_text(&u.content));
            }
            match entry.parent_id() {
                Some(parent) => self.session.branch(parent)?,
                None => self.session.reset_leaf(),
            }
            let ctx = self.session.build_context();
            self.agent_mut().messages = crate::session::to_llm_messages(&ctx.messages);
            self.restore_tools_from_transcript();
        }
        Ok(outcome)
    }
}
