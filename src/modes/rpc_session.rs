//! RPC commands that replace the session: `new_session`, `switch_session`, `fork` and
//! `clone`, each a thin wrapper over the harness's switch (`harness::session_switch`). No
//! events are emitted (pi emits none either). Extensions are asked first
//! (`session_before_switch` / `session_before_fork`; a cancel answers `{cancelled: true}`)
//! and told afterwards (`session_start`).

use std::path::Path;

use serde_json::{json, Value};

use crate::harness::session_switch::SwitchEnv;
use crate::harness::AgentSession;
use crate::session::{ops, SessionWriter};

/// `new_session {parentSession?}` → `{cancelled}`.
pub fn new_session(
    s: &mut AgentSession,
    env: &mut SwitchEnv,
    cmd: &Value,
) -> Result<Option<Value>, String> {
    if s.before_switch("new", None).is_some_and(|g| g.cancelled()) {
        return Ok(Some(json!({"cancelled": true})));
    }
    let parent = cmd["parentSession"]
        .as_str()
        .filter(|p| !p.is_empty())
        .map(str::to_string);
    let writer = s.fresh_session(env, parent);
    s.switch_session(writer, env, "new")?;
    Ok(Some(json!({"cancelled": false})))
}

/// `switch_session {sessionPath}` → `{cancelled}`.
pub fn switch_session(
    s: &mut AgentSession,
    env: &mut SwitchEnv,
    cmd: &Value,
) -> Result<Option<Value>, String> {
    let arg = cmd["sessionPath"].as_str().unwrap_or("");
    let path = crate::resources::expand_tilde(arg);
    let path = if path.is_absolute() {
        path
    } else {
        s.agent().cwd.join(path)
    };
    let target = path.to_string_lossy().into_owned();
    if s.before_switch("resume", Some(&target))
        .is_some_and(|g| g.cancelled())
    {
        return Ok(Some(json!({"cancelled": true})));
    }
    let writer = if path.exists() {
        SessionWriter::open(&path)
            .map_err(|e| format!("Could not open session {}: {e}", path.display()))?
            .0
    } else {
        // pi starts a new session at exactly that path.
        let cwd = s.agent().cwd.to_string_lossy().into_owned();
        SessionWriter::new(&cwd, Some(path.clone()), None)
    };
    let mut writer = writer;
    writer.adopt_lease_from(&mut s.session);
    writer.take_lease().map_err(|e| e.to_string())?;
    let session_cwd = &writer.header().cwd;
    if !session_cwd.is_empty() && !Path::new(session_cwd).exists() {
        return Err(format!(
            "Stored session working directory does not exist: {session_cwd}\nSession file: {}\nCurrent working directory: {}",
            path.display(),
            s.agent().cwd.display()
        ));
    }
    s.switch_session(writer, env, "resume")?;
    Ok(Some(json!({"cancelled": false})))
}

/// `fork {entryId}` → `{text, cancelled}`: a new session with what came before that user
/// message.
pub fn fork(
    s: &mut AgentSession,
    env: &mut SwitchEnv,
    cmd: &Value,
) -> Result<Option<Value>, String> {
    let entry_id = cmd["entryId"].as_str().unwrap_or("");
    if s.before_fork(entry_id, "before")
        .is_some_and(|g| g.cancelled())
    {
        return Ok(Some(json!({"cancelled": true})));
    }
    let (writer, text) = ops::fork_at(&s.session, entry_id, &s.new_session_dir(env))?;
    s.switch_session(writer, env, "fork")?;
    Ok(Some(json!({"text": text, "cancelled": false})))
}

/// `clone` → `{cancelled}`: a new session holding the active branch.
pub fn clone(
    s: &mut AgentSession,
    env: &mut SwitchEnv,
    _cmd: &Value,
) -> Result<Option<Value>, String> {
    let leaf = s.session.leaf_id().unwrap_or("").to_string();
    if s.before_fork(&leaf, "at").is_some_and(|g| g.cancelled()) {
        return Ok(Some(json!({"cancelled": true})));
    }
    let writer = ops::clone_branch(&s.session, &s.new_session_dir(env))?;
    s.switch_session(writer, env, "fork")?;
    Ok(Some(json!({"cancelled": false})))
}
