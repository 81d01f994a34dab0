//! The RPC commands of `/rewind` (ours; pi has none): `get_checkpoints` lists the user
//! messages of the current branch and whether the files before each were recorded; `rewind`
//! previews (`dryRun`) or restores the files, the conversation, or both.

use serde::Serialize;
use serde_json::Value;

use crate::harness::checkpoint::Preview;
use crate::harness::rewind::{RewindPoint, RewindScope};
use crate::harness::AgentSession;

/// `get_checkpoints`'s data.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CheckpointList {
    /// Whether `checkpoints.enabled` is on (without it only the conversation can go back).
    enabled: bool,
    checkpoints: Vec<RewindPoint>,
    /// The last checkpoint that could not be taken, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// `rewind`'s data.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RewindResult {
    /// The file changes the rewind makes (or made), when it restores the code.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    preview: Option<Preview>,
    /// Whether anything was changed (false for a `dryRun`).
    restored: bool,
    /// Paths that could not be restored, with why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    failed: Vec<String>,
    /// The user message's text, when the conversation went back (for the client's editor).
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
}

pub fn get_checkpoints(s: &mut AgentSession) -> Value {
    let list = CheckpointList {
        enabled: s.checkpoints().is_some(),
        checkpoints: s.rewind_points(),
        error: s.take_checkpoint_error(),
    };
    serde_json::to_value(list).unwrap_or_default()
}

pub fn rewind(s: &mut AgentSession, cmd: &Value) -> Result<Option<Value>, String> {
    let entry_id = cmd["entryId"]
        .as_str()
        .ok_or("Invalid rewind command: \"entryId\" must be a string (see get_checkpoints)")?;
    let scope = match cmd.get("restore") {
        None | Some(Value::Null) => RewindScope::Both,
        Some(v) => v.as_str().and_then(RewindScope::parse).ok_or(
            "Invalid rewind command: \"restore\" must be \"code\", \"conversation\" or \"both\"",
        )?,
    };
    let result = if cmd["dryRun"].as_bool().unwrap_or(false) {
        RewindResult {
            preview: scope
                .code()
                .then(|| s.rewind_preview(entry_id))
                .transpose()?,
            restored: false,
            failed: Vec::new(),
            text: None,
        }
    } else {
        let outcome = s.rewind(entry_id, scope)?;
        RewindResult {
            preview: outcome.preview,
            restored: true,
            failed: outcome.failed,
            text: outcome.text,
        }
    };
    Ok(Some(serde_json::to_value(result).unwrap_or_default()))
}
