//! Checkpoints of the workspace, for `/rewind`: before each prompt's turn the working tree
//! (as `.gitignore` sees it) is snapshotted into a content-addressed store of our own under the
//! agent dir, never the user's `.git`; a rewind previews the changes (and which of them the
//! user made since the last turn), snapshots the present state so the rewind itself can be
//! undone, and restores without following links out of the workspace.
//!
//! Why a store of our own rather than git: git may be absent, and a separate `GIT_DIR` still
//! means several child processes a turn and a care for every `GIT_*` variable, while the
//! walk, the stat index and SHA-256 here cost about what `git add -A` does, in process.

pub mod prune;
pub mod restore;
pub mod scan;
pub mod store;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use restore::Changes;
use scan::Limits;
use store::{Checkpoint, CheckpointKind, Digest, Store};

/// `checkpoints.*` settings.
#[derive(Clone, Debug)]
pub struct CheckpointSettings {
    pub enabled: bool,
    pub limits: Limits,
    pub prune: prune::PruneLimits,
}

impl Default for CheckpointSettings {
    fn default() -> Self {
        CheckpointSettings {
            enabled: false,
            limits: Limits::default(),
            prune: prune::PruneLimits {
                max_bytes: 2 << 30,
                max_age_ms: 30 * 24 * 3600 * 1000,
                grace: Duration::from_secs(3600),
            },
        }
    }
}

impl CheckpointSettings {
    /// From the merged settings (`checkpoints.enabled`, `maxSizeMB`, `maxAgeDays`,
    /// `maxFileSizeMB`, `maxFiles`).
    pub fn from_settings(s: &crate::resources::settings::Settings) -> Self {
        let mut out = CheckpointSettings::default();
        let key = |k: &str| s.u64(&["checkpoints", k]);
        out.enabled = s.bool(&["checkpoints", "enabled"]).unwrap_or(false);
        if let Some(mb) = key("maxSizeMB") {
            out.prune.max_bytes = mb.saturating_mul(1 << 20);
        }
        if let Some(days) = key("maxAgeDays") {
            out.prune.max_age_ms = (days as i64).saturating_mul(24 * 3600 * 1000);
        }
        if let Some(mb) = key("maxFileSizeMB") {
            out.limits.max_file_bytes = mb.saturating_mul(1 << 20);
        }
        if let Some(n) = key("maxFiles") {
            out.limits.max_entries = n as usize;
        }
        out
    }
}

/// What a rewind to a checkpoint would do.
#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct Preview {
    pub files: Changes,
    /// Paths among those that were changed since the last turn ended, by someone other than
    /// pi's turns: the rewind overwrites that work too (it stays in the undo checkpoint).
    pub changed_since_last_turn: Vec<String>,
    /// Paths the checkpoint did not capture (too large, special files): left as they are.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_captured: Vec<String>,
    #[serde(skip)]
    current: Option<(Digest, store::Tree)>,
    #[serde(skip)]
    target: Option<store::Tree>,
}

/// A snapshot taken before a prompt, waiting for the prompt's user message to be recorded
/// (with the workspace it belongs to: the run holds the agent meanwhile).
pub struct PendingCheckpoint(pub Checkpoints, pub scan::Snapshot);

/// The checkpoints of one workspace.
pub struct Checkpoints {
    pub store: Store,
    pub workspace: PathBuf,
    pub settings: CheckpointSettings,
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl Checkpoints {
    pub fn open(agent_dir: &Path, workspace: &Path, settings: CheckpointSettings) -> Checkpoints {
        let workspace = workspace
            .canonicalize()
            .unwrap_or_else(|_| workspace.to_path_buf());
        Checkpoints {
            store: Store::for_workspace(agent_dir, &workspace),
            workspace,
            settings,
        }
    }

    /// Snapshots the workspace (stored, not yet logged).
    pub fn snapshot(&self) -> Result<scan::Snapshot, String> {
        scan::snapshot(&self.store, &self.workspace, &self.settings.limits)
    }

    /// Saves `snap` as a checkpoint (a line of the log); prunes when the store is over its limits.
    pub fn save(
        &self,
        kind: CheckpointKind,
        snap: &scan::Snapshot,
        session_id: Option<&str>,
        entry_id: Option<&str>,
    ) -> Result<Checkpoint, String> {
        let cp = Checkpoint {
            kind,
            time: now_ms(),
            tree: snap.digest.hex(),
            session_id: session_id.map(str::to_string),
            entry_id: entry_id.map(str::to_string),
            skipped: snap.skipped.clone(),
        };
        let failed = |e: std::io::Error| {
            format!(
                "checkpoint: cannot write {}: {e}",
                self.store.root.display()
            )
        };
        self.store.append(&cp).map_err(failed)?;
        let used = self.store.usage() + snap.new_bytes;
        let oldest = self.store.oldest_time().unwrap_or(cp.time);
        if used > self.settings.prune.max_bytes || cp.time - oldest > self.settings.prune.max_age_ms
        {
            let (_, left) =
                prune::prune(&self.store, self.settings.prune, cp.time).map_err(failed)?;
            self.store.set_usage(left).map_err(failed)?;
        } else if snap.new_bytes > 0 {
            self.store.set_usage(used).map_err(failed)?;
        }
        Ok(cp)
    }

    /// Snapshots the workspace and logs it.
    pub fn record(
        &self,
        kind: CheckpointKind,
        session_id: Option<&str>,
        entry_id: Option<&str>,
    ) -> Result<Checkpoint, String> {
        self.save(kind, &self.snapshot()?, session_id, entry_id)
    }

    /// Every checkpoint, oldest first.
    pub fn list(&self) -> Vec<Checkpoint> {
        self.store.checkpoints()
    }

    /// The checkpoint taken before the turn of the user message `entry_id`.
    pub fn before_entry(&self, entry_id: &str) -> Option<Checkpoint> {
        self.list().into_iter().rev().find(|c| {
            c.kind == CheckpointKind::BeforeTurn && c.entry_id.as_deref() == Some(entry_id)
        })
    }

    /// What restoring `cp` would change now.
    pub fn preview(&self, cp: &Checkpoint) -> Result<Preview, String> {
        let target_digest = Digest::parse(&cp.tree).ok_or("checkpoint: damaged log line")?;
        let target = self
            .store
            .load_tree(&target_digest)
            .map_err(|e| format!("checkpoint: {e}"))?;
        let snap = scan::snapshot(&self.store, &self.workspace, &self.settings.limits)?;
        let files = restore::diff(&snap.tree, &target);
        let last = self
            .list()
            .into_iter()
            .rev()
            .find(|c| c.kind != CheckpointKind::BeforeRewind)
            .and_then(|c| Digest::parse(&c.tree))
            .filter(|d| *d != snap.digest)
            .and_then(|d| self.store.load_tree(&d).ok());
        let changed_since_last_turn = match last {
            Some(last) => {
                let since: std::collections::HashSet<String> =
                    restore::changed_paths(&last, &snap.tree)
                        .into_iter()
                        .collect();
                files
                    .paths()
                    .filter(|p| since.contains(*p))
                    .cloned()
                    .collect()
            }
            None => Vec::new(),
        };
        Ok(Preview {
            files,
            changed_since_last_turn,
            not_captured: cp.skipped.clone(),
            current: Some((snap.digest, snap.tree)),
            target: Some(target),
        })
    }

    /// Restores `preview`'s checkpoint. The present state is logged first (`beforeRewind`), so
    /// the rewind can be undone. Returns the paths that could not be restored.
    pub fn restore(
        &self,
        preview: &Preview,
        session_id: Option<&str>,
    ) -> Result<Vec<String>, String> {
        let (Some((digest, current)), Some(target)) = (&preview.current, &preview.target) else {
            return Err("checkpoint: nothing to restore".into());
        };
        let undo = Checkpoint {
            kind: CheckpointKind::BeforeRewind,
            time: now_ms(),
            tree: digest.hex(),
            session_id: session_id.map(str::to_string),
            entry_id: None,
            skipped: Vec::new(),
        };
        self.store.append(&undo).map_err(|e| {
            format!(
                "checkpoint: cannot write {}: {e}",
                self.store.root.display()
            )
        })?;
        restore::apply(&self.store, &self.workspace, current, target)
    }
}

#[cfg(test)]
mod tests;
