//! [`AgentSession::switch_to`]: replacing the session with a new, resumed, forked or cloned
//! one, as the RPC commands (`new_session`, `switch_session`, `fork`, `clone`) and the
//! actor's [`Op::Switch`](super::op::Op::Switch) ask for it. Extensions are asked first
//! (`session_before_switch` / `session_before_fork`; a cancel leaves everything as it was) and
//! told afterwards (`session_start`). No events are emitted (pi emits none either).

use std::path::Path;

use super::op::{SessionTarget, Switched};
use super::session_switch::SwitchEnv;
use super::AgentSession;
use crate::session::{ops, SessionWriter};

const CANCELLED: Switched = Switched {
    cancelled: true,
    text: None,
};
const DONE: Switched = Switched {
    cancelled: false,
    text: None,
};

impl AgentSession {
    /// Makes `target` the current session.
    pub fn switch_to(
        &mut self,
        target: &SessionTarget,
        env: &mut SwitchEnv,
    ) -> Result<Switched, String> {
        match target {
            SessionTarget::New { parent } => self.switch_to_new(env, parent.clone()),
            SessionTarget::Resume(path) => self.switch_to_file(env, path),
            SessionTarget::Fork { entry_id } => self.switch_to_fork(env, entry_id),
            SessionTarget::Clone => self.switch_to_clone(env),
        }
    }

    fn switch_to_new(
        &mut self,
        env: &mut SwitchEnv,
        parent: Option<String>,
    ) -> Result<Switched, String> {
        if self
            .before_switch("new", None)
            .is_some_and(|g| g.cancelled())
        {
            return Ok(CANCELLED);
        }
        let parent = parent.filter(|p| !p.is_empty());
        let writer = self.fresh_session(env, parent);
        self.switch_session(writer, env, "new")?;
        Ok(DONE)
    }

    /// `path` relative to the session's working directory, `~` expanded.
    fn switch_to_file(&mut self, env: &mut SwitchEnv, path: &Path) -> Result<Switched, String> {
        let path = crate::resources::expand_tilde(&path.to_string_lossy());
        let path = if path.is_absolute() {
            path
        } else {
            self.agent().cwd.join(path)
        };
        let target = path.to_string_lossy().into_owned();
        if self
            .before_switch("resume", Some(&target))
            .is_some_and(|g| g.cancelled())
        {
            return Ok(CANCELLED);
        }
        let mut writer = if path.exists() {
            SessionWriter::open(&path)
                .map_err(|e| format!("Could not open session {}: {e}", path.display()))?
                .0
        } else {
            // pi starts a new session at exactly that path.
            let cwd = self.agent().cwd.to_string_lossy().into_owned();
            SessionWriter::new(&cwd, Some(path.clone()), None)
        };
        writer.adopt_lease_from(&mut self.session);
        writer.take_lease().map_err(|e| e.to_string())?;
        let session_cwd = &writer.header().cwd;
        if !session_cwd.is_empty() && !Path::new(session_cwd).exists() {
            return Err(format!(
                "Stored session working directory does not exist: {session_cwd}\nSession file: {}\nCurrent working directory: {}",
                path.display(),
                self.agent().cwd.display()
            ));
        }
        self.switch_session(writer, env, "resume")?;
        Ok(DONE)
    }

    fn switch_to_fork(&mut self, env: &mut SwitchEnv, entry_id: &str) -> Result<Switched, String> {
        if self
            .before_fork(entry_id, "before")
            .is_some_and(|g| g.cancelled())
        {
            return Ok(CANCELLED);
        }
        let (writer, text) = ops::fork_at(&self.session, entry_id, &self.new_session_dir(env))?;
        self.switch_session(writer, env, "fork")?;
        Ok(Switched {
            cancelled: false,
            text: Some(text),
        })
    }

    fn switch_to_clone(&mut self, env: &mut SwitchEnv) -> Result<Switched, String> {
        let leaf = self.session.leaf_id().unwrap_or("").to_string();
        if self.before_fork(&leaf, "at").is_some_and(|g| g.cancelled()) {
            return Ok(CANCELLED);
        }
        let writer = ops::clone_branch(&self.session, &self.new_session_dir(env))?;
        self.switch_session(writer, env, "fork")?;
        Ok(DONE)
    }
}
