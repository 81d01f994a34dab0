//! RPC commands that replace the session: `new_session`, `switch_session`, `fork` and
//! `clone`, each reading its arguments and answering in pi's shape around the harness's
//! [`AgentSession::switch_to`]. No events are emitted (pi emits none either).

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::harness::op::{SessionTarget, Switched};
use crate::harness::session_switch::SwitchEnv;
use crate::harness::AgentSession;

/// `{cancelled}`, or `{text, cancelled}` after a fork.
pub fn switched_json(s: Switched) -> Value {
    match s.text {
        Some(text) if !s.cancelled => json!({"text": text, "cancelled": false}),
        _ => json!({"cancelled": s.cancelled}),
    }
}

/// The session an RPC command goes to.
pub fn target(kind: &str, cmd: &Value) -> Option<SessionTarget> {
    Some(match kind {
        "new_session" => SessionTarget::New {
            parent: cmd["parentSession"].as_str().map(str::to_string),
        },
        "switch_session" => {
            SessionTarget::Resume(PathBuf::from(cmd["sessionPath"].as_str().unwrap_or("")))
        }
        "fork" => SessionTarget::Fork {
            entry_id: cmd["entryId"].as_str().unwrap_or("").to_string(),
        },
        "clone" => SessionTarget::Clone,
        _ => return None,
    })
}

fn switch(
    s: &mut AgentSession,
    env: &mut SwitchEnv,
    kind: &str,
    cmd: &Value,
) -> Result<Option<Value>, String> {
    let Some(to) = target(kind, cmd) else {
        return Err(format!("Unknown command: {kind}"));
    };
    s.switch_to(&to, env).map(|r| Some(switched_json(r)))
}

/// `new_session {parentSession?}` → `{cancelled}`.
pub fn new_session(
    s: &mut AgentSession,
    env: &mut SwitchEnv,
    cmd: &Value,
) -> Result<Option<Value>, String> {
    switch(s, env, "new_session", cmd)
}

/// `switch_session {sessionPath}` → `{cancelled}`.
pub fn switch_session(
    s: &mut AgentSession,
    env: &mut SwitchEnv,
    cmd: &Value,
) -> Result<Option<Value>, String> {
    switch(s, env, "switch_session", cmd)
}

/// `fork {entryId}` → `{text, cancelled}`: a new session with what came before that user
/// message.
pub fn fork(
    s: &mut AgentSession,
    env: &mut SwitchEnv,
    cmd: &Value,
) -> Result<Option<Value>, String> {
    switch(s, env, "fork", cmd)
}

/// `clone` → `{cancelled}`: a new session holding the active branch.
pub fn clone(
    s: &mut AgentSession,
    env: &mut SwitchEnv,
    cmd: &Value,
) -> Result<Option<Value>, String> {
    switch(s, env, "clone", cmd)
}
