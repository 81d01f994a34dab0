//! `/export <file>.jsonl` as pi 1.x writes it: a fresh header (same session id, the export's
//! time, the session's cwd) and the entries of the current branch only, each re-parented onto
//! the one before it, so the file is a linear session any pi can open.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::session::ids::iso_timestamp;
use crate::session::json::to_js_string;
use crate::session::{SessionHeader, SessionWriter, CURRENT_VERSION};

/// The branch ending at the current leaf as JSONL text (newline-terminated lines), the
/// header stamped `timestamp`.
pub fn branch_jsonl(w: &SessionWriter, timestamp: &str) -> String {
    let h = w.header();
    let mut header = SessionHeader::new(&h.id, timestamp, &h.cwd, None);
    header.version = Some(CURRENT_VERSION);
    let mut out = to_js_string(&header);
    out.push('\n');
    let tree = w.tree();
    let path = w.leaf_id().map(|l| tree.path(l)).unwrap_or_default();
    let mut parent: Option<&str> = None;
    for e in path {
        let mut v = match w
            .line_of(e.id())
            .and_then(|l| serde_json::from_str::<Value>(&l).ok())
        {
            Some(v) => v,
            None => e.to_value(),
        };
        if let Some(obj) = v.as_object_mut() {
            obj.insert("parentId".into(), parent.map_or(Value::Null, Value::from));
        }
        out.push_str(&to_js_string(&v));
        out.push('\n');
        parent = Some(e.id());
    }
    out
}

/// Writes [`branch_jsonl`] to `out` (relative to the cwd; parent folders created), or to
/// `session-<time>.jsonl` as pi names it; returns the absolute path. Never over the session
/// file itself.
pub fn export_session_jsonl(w: &SessionWriter, out: Option<&Path>) -> Result<PathBuf, String> {
    let now = iso_timestamp(crate::ai::now_ms());
    let out = match out {
        Some(p) => p.to_path_buf(),
        None => PathBuf::from(format!("session-{}.jsonl", now.replace([':', '.'], "-"))),
    };
    // pi reports the resolved path.
    let out = std::path::absolute(&out).unwrap_or(out);
    if let Some(session) = w.path() {
        super::refuse_overwriting(session, &out)?;
    }
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("Cannot create {}: {e}", dir.display()))?;
    }
    let text = branch_jsonl(w, &now);
    crate::util::atomic::replace(&out, text.as_bytes(), Default::default())
        .map_err(|e| format!("Cannot write {}: {e}", out.display()))?;
    Ok(out)
}
