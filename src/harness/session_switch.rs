//! Replacing the session a harness runs on (new, resumed, forked, cloned or imported). pi
//! tears its runtime down and builds a new one on the target session; here the agent stays and
//! takes over the new session's messages, model and thinking level the way pi's
//! `createAgentSession` restores them. The RPC and interactive modes both switch through
//! [`AgentSession::adopt_session`]; each asks extensions first (`session_before_*`, see
//! `session_hooks`) and has them told afterwards (`session_start`).

use std::path::{Path, PathBuf};

use super::model_control::Credentials;
use super::AgentSession;
use crate::ai::{Model, ThinkingLevel};
use crate::resources::model_resolve::clamp_thinking;
use crate::session::SessionWriter;

/// What a session switch needs from the mode: the models that can be used and their
/// credentials (model lookup lives with the CLI), and where new session files go.
pub struct SwitchEnv<'a> {
    /// Models whose provider has a key configured.
    pub available_models: &'a dyn Fn() -> Vec<Model>,
    pub credentials: &'a dyn Fn(&Model) -> Result<Credentials, String>,
    /// False while the session runs on a placeholder model; set once a restored model has
    /// credentials.
    pub has_model: &'a mut bool,
    /// Where new sessions go when the current one has no file (pi's per-cwd directory).
    pub session_dir: &'a Path,
}

impl AgentSession {
    /// Where new session files go: next to the current one, else `env`'s directory.
    pub fn new_session_dir(&self, env: &SwitchEnv) -> PathBuf {
        self.session
            .path()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_else(|| env.session_dir.to_path_buf())
    }

    /// An empty session in the current one's working directory: a file in
    /// [`new_session_dir`](Self::new_session_dir) when the current session is persisted, in
    /// memory otherwise.
    pub fn fresh_session(&self, env: &SwitchEnv, parent: Option<String>) -> SessionWriter {
        let cwd = self.session.header().cwd.clone();
        if self.session.is_persisted() {
            SessionWriter::create(&self.new_session_dir(env), &cwd, parent)
        } else {
            SessionWriter::new(&cwd, None, parent)
        }
    }

    /// Makes `writer` the current session. As pi's `createAgentSession`: a session with
    /// messages restores its model (when it is available with credentials) and its thinking
    /// level; an empty one records the model and thinking level it starts with. Where pi would
    /// fall back to the settings' defaults, the current model and thinking level are kept. The
    /// old session's queued steering and follow-up messages go with it. Extensions are not
    /// told: see [`switch_session`](Self::switch_session).
    pub fn adopt_session(
        &mut self,
        mut writer: SessionWriter,
        env: &mut SwitchEnv,
    ) -> Result<(), String> {
        let mut ctx = writer.build_context();
        let existing = !ctx.messages.is_empty();
        if existing {
            if let Some((provider, id)) = &ctx.model {
                let found = (env.available_models)()
                    .into_iter()
                    .find(|m| &m.provider == provider && &m.id == id);
                if let Some(model) = found {
                    if let Ok((key, headers)) = (env.credentials)(&model) {
                        let agent = self.agent_mut();
                        agent.options.api_key = key;
                        agent.options.headers = headers;
                        agent.model = model;
                        *env.has_model = true;
                    }
                }
            }
        }
        let mut thinking = self.agent().thinking;
        if existing {
            if let Some(level) = ctx.thinking_level.as_deref().and_then(ThinkingLevel::parse) {
                thinking = level;
            }
        }
        let thinking = if *env.has_model {
            clamp_thinking(&self.agent().model, thinking)
        } else {
            ThinkingLevel::Off
        };
        if *env.has_model {
            let io = |e: std::io::Error| format!("Could not write session: {e}");
            let model = self.agent().model.clone();
            // Written just before the first entry something says, never by merely opening.
            writer.hold_writes(true);
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
            writer.hold_writes(false);
        }
        let agent = self.agent_mut();
        agent.thinking = thinking;
        agent.messages = crate::agent::into_llm_messages(std::mem::take(&mut ctx.messages));
        agent.options.session_id = Some(writer.session_id().to_string());
        // pi disposes the old agent, and its queues with it.
        agent.steering.clear();
        agent.follow_up.clear();
        self.session = writer;
        Ok(())
    }

    /// [`adopt_session`](Self::adopt_session), then extensions get a fresh start and
    /// `session_start` with `reason` (`new`, `resume` or `fork`) and the previous file.
    pub fn switch_session(
        &mut self,
        writer: SessionWriter,
        env: &mut SwitchEnv,
        reason: &str,
    ) -> Result<(), String> {
        let previous = self
            .session
            .path()
            .map(|p| p.to_string_lossy().into_owned());
        self.adopt_session(writer, env)?;
        self.session_replaced(reason, previous);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{Agent, AgentMessage};
    use crate::ai::{Abort, Message, ModelCost};
    use crate::resources::settings::RetrySettings;
    use crate::session::Entry;

    fn model(id: &str, reasoning: bool) -> Model {
        Model {
            id: id.into(),
            name: id.into(),
            api: "scripted".into(),
            provider: "test".into(),
            base_url: String::new(),
            reasoning,
            input: vec!["text".into()],
            cost: ModelCost::default(),
            context_window: 1000,
            max_tokens: 100,
            thinking_level_map: None,
            headers: None,
            compat: None,
        }
    }

    fn harness(current: Model, thinking: ThinkingLevel) -> AgentSession {
        let mut agent = Agent::new(current, String::new(), Default::default());
        agent.thinking = thinking;
        agent.messages = vec![Message::user_text("old")];
        agent.steering.push(Message::user_text("queued"));
        AgentSession::new(agent, RetrySettings::default(), Abort::new())
    }

    /// Runs `f` with a switch environment offering `models`, each with key `key-<id>`.
    fn with_env<R>(
        models: Vec<Model>,
        has_model: &mut bool,
        f: impl FnOnce(&mut SwitchEnv) -> R,
    ) -> R {
        let available = move || models.clone();
        let credentials = |m: &Model| Ok((format!("key-{}", m.id), Vec::new()));
        let mut env = SwitchEnv {
            available_models: &available,
            credentials: &credentials,
            has_model,
            session_dir: Path::new("/nonexistent"),
        };
        f(&mut env)
    }

    fn kinds(w: &SessionWriter) -> Vec<String> {
        w.entries().iter().map(|e| e.kind().to_string()).collect()
    }

    #[test]
    fn a_session_with_messages_restores_its_model_and_thinking_level() {
        let mut target = SessionWriter::in_memory("/tmp");
        target.append_model_change("test", "stored").unwrap();
        target.append_thinking_level_change("high").unwrap();
        target
            .append_message(AgentMessage::user(crate::ai::UserMessage {
                content: crate::ai::UserContent::Text("hello".into()),
                timestamp: 1,
                extra: Default::default(),
            }))
            .unwrap();
        let mut s = harness(model("current", true), ThinkingLevel::Low);
        let mut has_model = false;
        let stored = model("stored", true);
        with_env(vec![stored], &mut has_model, |env| {
            s.adopt_session(target, env)
        })
        .unwrap();
        assert!(has_model);
        let agent = s.agent();
        assert_eq!(agent.model.id, "stored");
        assert_eq!(agent.options.api_key, "key-stored");
        assert_eq!(agent.thinking, ThinkingLevel::High);
        assert_eq!(agent.messages.len(), 1);
        assert!(agent.steering.peek().is_empty(), "the old queues go");
        assert_eq!(
            agent.options.session_id.as_deref(),
            Some(s.session.session_id())
        );
        // Nothing new is written to a session that had its level.
        assert_eq!(
            kinds(&s.session),
            ["model_change", "thinking_level_change", "message"]
        );
    }

    #[test]
    fn an_empty_session_records_the_model_and_clamped_level_it_starts_with() {
        let mut s = harness(model("plain", false), ThinkingLevel::High);
        let mut has_model = true;
        let target = SessionWriter::in_memory("/tmp");
        with_env(Vec::new(), &mut has_model, |env| {
            s.adopt_session(target, env)
        })
        .unwrap();
        assert!(s.agent().messages.is_empty());
        assert_eq!(s.agent().thinking, ThinkingLevel::Off);
        let entries = s.session.entries();
        assert!(matches!(&entries[0], Entry::ModelChange(m) if m.model_id == "plain"));
        assert!(matches!(&entries[1], Entry::ThinkingLevelChange(t) if t.thinking_level == "off"));
    }

    #[test]
    fn an_unavailable_model_keeps_the_current_one_and_writes_nothing_without_a_model() {
        let mut target = SessionWriter::in_memory("/tmp");
        target.append_model_change("test", "gone").unwrap();
        target
            .append_message(AgentMessage::user(crate::ai::UserMessage {
                content: crate::ai::UserContent::Text("hello".into()),
                timestamp: 1,
                extra: Default::default(),
            }))
            .unwrap();
        let mut s = harness(model("placeholder", true), ThinkingLevel::Medium);
        let mut has_model = false;
        with_env(Vec::new(), &mut has_model, |env| {
            s.adopt_session(target, env)
        })
        .unwrap();
        assert!(!has_model);
        assert_eq!(s.agent().model.id, "placeholder");
        assert_eq!(s.agent().thinking, ThinkingLevel::Off);
        assert_eq!(kinds(&s.session), ["model_change", "message"]);
    }

    #[test]
    fn new_sessions_go_beside_the_current_file_else_to_the_default_directory() {
        let s = harness(model("m", false), ThinkingLevel::Off);
        let mut has_model = true;
        let dir = with_env(Vec::new(), &mut has_model, |env| s.new_session_dir(env));
        assert_eq!(dir, Path::new("/nonexistent"));
        let fresh = with_env(Vec::new(), &mut has_model, |env| {
            s.fresh_session(env, Some("/p.jsonl".into()))
        });
        assert!(!fresh.is_persisted());
        assert_eq!(fresh.header().parent_session.as_deref(), Some("/p.jsonl"));
    }
}
