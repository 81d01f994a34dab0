//! RPC commands that replace the session: `new_session`, `switch_session`, `fork` and
//! `clone`. pi tears its runtime down and builds a new one on the target session; here the
//! agent stays and takes over the new session's messages, model and thinking level the way
//! pi's `createAgentSession` restores them. No events are emitted (pi emits none either).
//! Extensions are asked first (`session_before_switch` / `session_before_fork`; a cancel
//! answers `{cancelled: true}`) and told afterwards (`session_start`).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::rpc::RpcEnv;
use crate::ai::ThinkingLevel;
use crate::harness::AgentSession;
use crate::resources::model_resolve::clamp_thinking;
use crate::session::{ops, to_llm_messages, SessionWriter};

/// Where new session files go: next to the current one, else the default directory.
fn session_dir(s: &AgentSession, env: &RpcEnv) -> PathBuf {
    s.session
        .path()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| env.session_dir.clone())
}

/// `new_session {parentSession?}` → `{cancelled}`.
pub fn new_session(
    s: &mut AgentSession,
    env: &mut RpcEnv,
    cmd: &Value,
) -> Result<Option<Value>, String> {
    if s.before_switch("new", None).is_some_and(|g| g.cancelled()) {
        return Ok(Some(json!({"cancelled": true})));
    }
    let cwd = s.session.header().cwd.clone();
    let parent = cmd["parentSession"]
        .as_str()
        .filter(|p| !p.is_empty())
        .map(str::to_string);
    let writer = if s.session.is_persisted() {
        SessionWriter::create(&session_dir(s, env), &cwd, parent)
    } else {
        SessionWriter::new(&cwd, None, parent)
    };
    adopt(s, env, writer, "new")?;
    Ok(Some(json!({"cancelled": false})))
}

/// `switch_session {sessionPath}` → `{cancelled}`.
pub fn switch_session(
    s: &mut AgentSession,
    env: &mut RpcEnv,
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
    let session_cwd = &writer.header().cwd;
    if !session_cwd.is_empty() && !Path::new(session_cwd).exists() {
        return Err(format!(
            "Stored session working directory does not exist: {session_cwd}\nSession file: {}\nCurrent working directory: {}",
            path.display(),
            s.agent().cwd.display()
        ));
    }
    adopt(s, env, writer, "resume")?;
    Ok(Some(json!({"cancelled": false})))
}

/// `fork {entryId}` → `{text, cancelled}`: a new session with what came before that user
/// message.
pub fn fork(s: &mut AgentSession, env: &mut RpcEnv, cmd: &Value) -> Result<Option<Value>, String> {
    let entry_id = cmd["entryId"].as_str().unwrap_or("");
    if s.before_fork(entry_id, "before")
        .is_some_and(|g| g.cancelled())
    {
        return Ok(Some(json!({"cancelled": true})));
    }
    let (writer, text) = ops::fork_at(&s.session, entry_id, &session_dir(s, env))?;
    adopt(s, env, writer, "fork")?;
    Ok(Some(json!({"text": text, "cancelled": false})))
}

/// `clone` → `{cancelled}`: a new session holding the active branch.
pub fn clone(
    s: &mut AgentSession,
    env: &mut RpcEnv,
    _cmd: &Value,
) -> Result<Option<Value>, String> {
    let leaf = s.session.leaf_id().unwrap_or("").to_string();
    if s.before_fork(&leaf, "at").is_some_and(|g| g.cancelled()) {
        return Ok(Some(json!({"cancelled": true})));
    }
    let writer = ops::clone_branch(&s.session, &session_dir(s, env))?;
    adopt(s, env, writer, "fork")?;
    Ok(Some(json!({"cancelled": false})))
}

/// Makes `writer` the current session. As pi's `createAgentSession`: a session with messages
/// restores its model (when it is available with credentials) and its thinking level; an
/// empty one records the model and thinking level it starts with. Where pi would fall back to
/// the settings' defaults, the current model and thinking level are kept. Extensions then get
/// `session_start` with `reason`.
fn adopt(
    s: &mut AgentSession,
    env: &mut RpcEnv,
    mut writer: SessionWriter,
    reason: &str,
) -> Result<(), String> {
    let previous = s.session.path().map(|p| p.to_string_lossy().into_owned());
    let ctx = writer.build_context();
    let existing = !ctx.messages.is_empty();
    if existing {
        if let Some((provider, id)) = &ctx.model {
            let found = (env.available_models)()
                .into_iter()
                .find(|m| &m.provider == provider && &m.id == id);
            if let Some(model) = found {
                if let Ok((key, headers)) = (env.credentials)(&model) {
                    let agent = s.agent_mut();
                    agent.options.api_key = key;
                    agent.options.headers = headers;
                    agent.model = model;
                    env.has_model = true;
                }
            }
        }
    }
    let mut thinking = s.agent().thinking;
    if existing {
        if let Some(level) = ctx.thinking_level.as_deref().and_then(ThinkingLevel::parse) {
            thinking = level;
        }
    }
    let thinking = if env.has_model {
        clamp_thinking(&s.agent().model, thinking)
    } else {
        ThinkingLevel::Off
    };
    if env.has_model {
        let io = |e: std::io::Error| format!("Could not write session: {e}");
        let model = s.agent().model.clone();
        if !existing {
            writer
                .append_model_change(&model.provider, &model.id)
                .map_err(io)?;
            writer
                .append_thinking_level_change(thinking.as_str())
                .map_err(io)?;
        } else if ctx.thinking_level.is_none() {
            writer
                .append_thinking_level_change(thinking.as_str())
                .map_err(io)?;
        }
    }
    let agent = s.agent_mut();
    agent.thinking = thinking;
    agent.messages = to_llm_messages(&ctx.messages);
    agent.options.session_id = Some(writer.session_id().to_string());
    // pi disposes the old agent, and its queues with it.
    agent.steering.clear();
    agent.follow_up.clear();
    s.session = writer;
    s.session_replaced(reason, previous);
    Ok(())
}
