//! Session identity and files. For now: ids and timestamps in pi's formats, and the session
//! header line that `--mode json` prints first. The JSONL tree comes with the sessions issue.

pub mod ids;

use serde_json::{json, Value};

/// pi's current session file format version.
pub const CURRENT_VERSION: u64 = 3;

/// The header object that starts a session file (and `--mode json` output).
pub fn header(id: &str, timestamp: &str, cwd: &str) -> Value {
    json!({"type": "session", "version": CURRENT_VERSION, "id": id, "timestamp": timestamp, "cwd": cwd})
}
