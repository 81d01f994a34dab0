//! The ACP methods: setup (`initialize`, `authenticate`), sessions (`session/new`,
//! `session/load`, `session/list`), a turn (`session/prompt`, `session/cancel`) and the
//! session's settings (`session/set_mode`, `session/set_model`, `session/set_config_option`).
//! One session is live at a time (pi's sandbox and working folder belong to the process); a
//! request for another session of this process reopens it from its file.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use crate::ai::ThinkingLevel;
use crate::harness::extensions::{InputSource, UserInput};
use crate::resources::loader::Resources;
use crate::util::sandbox::Mode as SandboxMode;

use super::env::{AcpEnv, OpenRequest, Opened};
use super::prompt::{mcp_servers, prompt_input};
use super::slot::{RunEnd, SessionSlot};
use super::updates::{branch_messages, replay};
use super::wire::{Incoming, RpcError, Wire, AUTH_REQUIRED, METHOD_NOT_FOUND, NOT_FOUND};
use crate::harness::op::ActorEnv;

pub const PROTOCOL_VERSION: u64 = 1;

/// The session the client works in.
pub struct Live {
    pub id: String,
    pub cwd: PathBuf,
    pub slot: SessionSlot,
    resources: Resources,
    sandbox: SandboxMode,
    /// The `session/prompt` request waiting for the run to end.
    prompt_id: Option<Value>,
}

pub struct Server {
    pub wire: Wire,
    env: AcpEnv,
    pub live: Option<Live>,
    /// The id of the live session, for permission requests made from a run's threads.
    pub live_id: Arc<Mutex<String>>,
    /// The mode the client picked last: sessions opened later start in it.
    sandbox: Option<SandboxMode>,
    /// A session was opened: its commands follow the answer.
    announce_commands: bool,
    /// Extension dialogs of every session opened go to the editor.
    ui: Option<std::sync::Arc<dyn crate::extensions::ui::ExtensionUi>>,
}

type Answer = Result<Value, RpcError>;

fn str_param<'a>(params: &'a Value, key: &str) -> Result<&'a str, RpcError> {
    params[key]
        .as_str()
        .ok_or_else(|| RpcError::invalid_params(format!("\"{key}\" (a string) is required")))
}

const MODES: [(SandboxMode, &str, &str); 3] = [
    (
        SandboxMode::ReadOnly,
        "Read only",
        "Commands run sandboxed and cannot change files",
    ),
    (
        SandboxMode::WorkspaceWrite,
        "Workspace write",
        "Commands run sandboxed and may change files in the project only",
    ),
    (
        SandboxMode::Off,
        "Full access",
        "Commands run without a sandbox",
    ),
];

impl Server {
    pub fn new(wire: Wire, env: AcpEnv) -> Server {
        Server {
            wire,
            env,
            live: None,
            live_id: Arc::default(),
            sandbox: None,
            announce_commands: false,
            ui: None,
        }
    }

    pub fn set_ui(&mut self, ui: std::sync::Arc<dyn crate::extensions::ui::ExtensionUi>) {
        self.ui = Some(ui);
    }

    pub fn handle(&mut self, msg: Incoming) {
        match msg {
            Incoming::Request { id, method, params } => {
                let answer = match method.as_str() {
                    "initialize" => {
                        let buffers = super::files::EditorBuffers::offered(
                            &self.wire,
                            &self.live_id,
                            &params["clientCapabilities"],
                        );
                        crate::tools::editor_files::set(buffers.map(|b| {
                            std::sync::Arc::new(b)
                                as std::sync::Arc<dyn crate::tools::editor_files::EditorFiles>
                        }));
                        let terminals = super::terminals::ClientTerminals::offered(
                            &self.wire,
                            &self.live_id,
                            &params["clientCapabilities"],
                        );
                        crate::tools::editor_terminal::set(terminals.map(|t| {
                            std::sync::Arc::new(t)
                                as std::sync::Arc<dyn crate::tools::editor_terminal::EditorTerminal>
                        }));
                        Ok(self.initialize())
                    }
                    "authenticate" => self.authenticate(&params),
                    "session/new" => self.new_session(&params),
                    "session/load" => self.load_session(&params, true),
                    "session/resume" => self.load_session(&params, false),
                    "session/list" => Ok(self.list_sessions(&params)),
                    "session/prompt" => match self.prompt(&params, &id) {
                        // Answered when the run ends.
                        Ok(()) => return,
                        Err(e) => Err(e),
                    },
                    "session/set_mode" => self.set_mode(&params),
                    "session/set_model" => self.set_model(&params),
                    "session/set_config_option" => self.set_config_option(&params),
                    _ => Err(RpcError::new(
                        METHOD_NOT_FOUND,
                        format!("Method not found: {method}"),
                    )),
                };
                self.wire.respond(&id, answer);
                if std::mem::take(&mut self.announce_commands) {
                    self.announce_commands();
                }
            }
            Incoming::Notification { method, params } => {
                if method == "session/cancel" {
                    if let Some(live) = &self.live {
                        if params["sessionId"].as_str() == Some(&live.id) {
                            live.slot.cancel();
                        }
                    }
                }
                // Other notifications (unknown ones, `$/` extensions) need no answer.
            }
        }
    }

    fn initialize(&self) -> Value {
        let auth: Vec<Value> = self
            .env
            .logins
            .iter()
            .map(|l| json!({"id": l.provider, "name": l.name,
                "description": format!("Run `pi auth login {}` in a terminal, or set the provider's API key in the environment", l.provider)}))
            .collect();
        json!({
            "protocolVersion": PROTOCOL_VERSION,
            "agentCapabilities": {
                "loadSession": true,
                "promptCapabilities": {"image": true, "audio": false, "embeddedContext": true},
                "mcpCapabilities": {"http": true, "sse": false},
                "sessionCapabilities": {"list": {}, "resume": {}},
            },
            "authMethods": auth,
            "agentInfo": {"name": "pi", "title": "pi", "version": crate::PI_VERSION},
        })
    }

    fn authenticate(&self, params: &Value) -> Answer {
        let method = str_param(params, "methodId")?;
        if !self.env.logins.iter().any(|l| l.provider == method) {
            return Err(RpcError::invalid_params(format!(
                "unknown auth method \"{method}\"; initialize lists the ones pi has"
            )));
        }
        if (self.env.signed_in)(method) {
            Ok(json!({}))
        } else {
            Err(RpcError::new(
                AUTH_REQUIRED,
                format!("Not signed in to {method}: run `pi auth login {method}` in a terminal, then try again"),
            ))
        }
    }

    fn cwd_param(params: &Value) -> Result<PathBuf, RpcError> {
        let cwd = PathBuf::from(str_param(params, "cwd")?);
        if !cwd.is_absolute() {
            return Err(RpcError::invalid_params("\"cwd\" must be an absolute path"));
        }
        if !cwd.is_dir() {
            return Err(RpcError::invalid_params(format!(
                "\"cwd\" is not a folder: {}",
                cwd.display()
            )));
        }
        Ok(cwd)
    }

    /// Opens a session (closing the live one) and makes it live.
    fn open(
        &mut self,
        cwd: PathBuf,
        file: Option<PathBuf>,
        params: &Value,
    ) -> Result<(), RpcError> {
        if let Some(live) = &self.live {
            if live.slot.is_running() {
                return Err(RpcError::invalid_params(format!(
                    "a prompt is still running in session {}; cancel it first",
                    live.id
                )));
            }
        }
        let servers = mcp_servers(&params["mcpServers"])?;
        if let Some(old) = self.live.take() {
            old.slot.close();
        }
        let Opened {
            session,
            resources,
            has_model,
            available_models,
            credentials,
            sandbox,
            warnings,
        } = (self.env.open)(OpenRequest {
            cwd: cwd.clone(),
            file,
            mcp_servers: servers,
            sandbox: self.sandbox,
        })
        .map_err(RpcError::internal)?;
        for w in warnings {
            eprintln!("Warning: {w}");
        }
        let id = session.session.session_id().to_string();
        *self.live_id.lock().unwrap_or_else(|p| p.into_inner()) = id.clone();
        if let (Some(host), Some(ui)) = (session.extension_host(), &self.ui) {
            host.set_ui(std::sync::Arc::clone(ui));
        }
        // Approval rules (issue 34) ask the editor's user, as a sandboxed command does; no
        // answer in two minutes is a no. "Always" is remembered as in the terminal.
        if let (Some(approvals), Some(ui)) = (&session.approvals, &self.ui) {
            approvals.set_asker(Some(crate::harness::approval::Asker {
                ui: std::sync::Arc::clone(ui),
                timeout: Some(std::time::Duration::from_secs(120)),
                // Allow once, always (this session or saved) and reject, as in the terminal.
                menu: true,
            }));
        }
        let actor_env = ActorEnv {
            available_models,
            credentials,
            has_model,
            session_dir: crate::session::dir::session_dir(
                &self.env.agent_dir,
                &cwd.to_string_lossy(),
            ),
        };
        let slot = SessionSlot::new(session, actor_env).map_err(RpcError::internal)?;
        self.live = Some(Live {
            id,
            cwd,
            slot,
            resources,
            sandbox,
            prompt_id: None,
        });
        Ok(())
    }

    /// What `session/new` and `session/load` answer besides the id: modes, models, options.
    fn session_state(&mut self) -> Value {
        let live = self.live.as_mut().expect("a live session");
        let modes: Vec<Value> = MODES
            .iter()
            .map(|(m, name, description)| json!({"id": m.as_str(), "name": name, "description": description}))
            .collect();
        let facts = SessionFacts::of(&live.slot);
        let models = json!({
            "currentModelId": facts.current_model,
            "availableModels": facts.models.iter()
                .map(|(id, name)| json!({"modelId": id, "name": name}))
                .collect::<Vec<_>>(),
        });
        json!({
            "modes": {"currentModeId": live.sandbox.as_str(), "availableModes": modes},
            "models": models,
            "configOptions": facts.config_options(),
        })
    }

    fn new_session(&mut self, params: &Value) -> Answer {
        let cwd = Self::cwd_param(params)?;
        self.open(cwd, None, params)?;
        let mut state = self.session_state();
        state["sessionId"] = json!(self.live.as_ref().map(|l| l.id.clone()));
        self.after_open();
        Ok(state)
    }

    /// A session file of this agent by its id.
    fn find_session(&self, id: &str) -> Option<PathBuf> {
        crate::session::dir::list_all_sessions(&self.env.agent_dir)
            .into_iter()
            .find(|s| s.id == id)
            .map(|s| s.path)
    }

    /// `session/load` (`replay`: the conversation first) and `session/resume` (without it).
    fn load_session(&mut self, params: &Value, replay_first: bool) -> Answer {
        let id = str_param(params, "sessionId")?;
        let cwd = Self::cwd_param(params)?;
        let file = self
            .find_session(id)
            .ok_or_else(|| RpcError::new(NOT_FOUND, format!("Session not found: {id}")))?;
        self.open(cwd, Some(file), params)?;
        let live = self.live.as_mut().expect("just opened");
        let cwd = live.cwd.clone();
        let updates = if replay_first {
            live.slot
                .query(move |s, _| replay(&branch_messages(&s.session), &cwd))
                .map_err(RpcError::internal)?
        } else {
            Vec::new()
        };
        for u in updates {
            self.notify_update(u);
        }
        let state = self.session_state();
        self.after_open();
        Ok(state)
    }

    /// Once the open is answered (the client knows the session id by then), tells the
    /// client the session's slash commands.
    fn after_open(&mut self) {
        self.announce_commands = true;
    }

    fn announce_commands(&mut self) {
        let Some(live) = self.live.as_mut() else {
            return;
        };
        let mut commands = Vec::new();
        let host = live
            .slot
            .query(|s, _| s.extension_host().cloned())
            .ok()
            .flatten();
        if let Some(host) = host {
            for c in host.commands() {
                commands.push(json!({"name": c.name, "description": c.description,
                    "input": {"hint": "arguments"}}));
            }
        }
        for (name, description) in super::builtin::BUILTINS {
            let taken = |n: &str| commands.iter().any(|c: &Value| c["name"] == n);
            if !taken(name) && !live.resources.templates.iter().any(|t| t.name == name) {
                commands.push(json!({"name": name, "description": description}));
            }
        }
        for t in &live.resources.templates {
            commands.push(json!({"name": t.name, "description": t.description,
                "input": {"hint": "arguments"}}));
        }
        for sk in &live.resources.skills {
            commands.push(
                json!({"name": format!("skill:{}", sk.name), "description": sk.description,
                "input": {"hint": "what to do"}}),
            );
        }
        self.notify_update(json!({"sessionUpdate": "available_commands_update",
            "availableCommands": commands}));
    }

    fn list_sessions(&self, params: &Value) -> Value {
        let cwd = params["cwd"].as_str();
        let sessions: Vec<Value> = crate::session::dir::list_all_sessions(&self.env.agent_dir)
            .into_iter()
            .filter(|s| cwd.is_none_or(|c| s.cwd == c))
            .map(|s| {
                let title = s.name.clone().unwrap_or_else(|| s.first_message.clone());
                json!({"sessionId": s.id, "cwd": s.cwd, "title": title,
                    "updatedAt": crate::util::date::iso_timestamp(s.modified_ms)})
            })
            .collect();
        json!({"sessions": sessions})
    }

    pub fn notify_update(&self, update: Value) {
        let id = self.live.as_ref().map(|l| l.id.clone()).unwrap_or_default();
        self.wire
            .notify("session/update", json!({"sessionId": id, "update": update}));
    }

    /// The live session for a request naming `sessionId`, reopened from its file if it is
    /// another session of this agent.
    fn live_for(&mut self, params: &Value) -> Result<&mut Live, RpcError> {
        let id = str_param(params, "sessionId")?.to_string();
        if self.live.as_ref().map(|l| l.id.as_str()) != Some(id.as_str()) {
            let file = self
                .find_session(&id)
                .ok_or_else(|| RpcError::new(NOT_FOUND, format!("Session not found: {id}")))?;
            let cwd = self
                .live
                .as_ref()
                .map(|l| l.cwd.clone())
                .or_else(|| std::env::current_dir().ok())
                .unwrap_or_else(|| PathBuf::from("/"));
            self.open(cwd, Some(file), &json!({}))?;
        }
        Ok(self.live.as_mut().expect("live"))
    }

    fn prompt(&mut self, params: &Value, id: &Value) -> Result<(), RpcError> {
        let (text, images) = prompt_input(&params["prompt"])?;
        let wire = self.wire.clone();
        let live = self.live_for(params)?;
        if live.slot.is_running() {
            return Err(RpcError::invalid_params(
                "a prompt is already running in this session; wait for it or cancel it",
            ));
        }
        let probe = text.clone();
        let (is_command, no_key, has_model) = live
            .slot
            .query(move |s, env| {
                (
                    s.is_extension_command(&probe),
                    s.agent().options.api_key.is_empty(),
                    env.has_model,
                )
            })
            .map_err(RpcError::internal)?;
        let builtin = super::builtin::parse(&text).filter(|b| {
            !is_command && !live.resources.templates.iter().any(|t| t.name == b.name())
        });
        if let Some(builtin) = builtin {
            let session_id = live.id.clone();
            live.slot
                .command(
                    live.cwd.clone(),
                    builtin,
                    Box::new(move |update| {
                        wire.notify(
                            "session/update",
                            json!({"sessionId": session_id, "update": update}),
                        )
                    }),
                )
                .map_err(RpcError::internal)?;
            live.prompt_id = Some(id.clone());
            return Ok(());
        }
        if !is_command && (!has_model || no_key) {
            return Err(RpcError::new(AUTH_REQUIRED,
                "No API key found for the selected model: sign in with `pi auth login <provider>` in a terminal, or set a provider key (for example ANTHROPIC_API_KEY) in the environment pi starts with"));
        }
        let expander = Resources {
            skills: live.resources.skills.clone(),
            templates: live.resources.templates.clone(),
            ..Default::default()
        };
        let session_id = live.id.clone();
        let input = UserInput {
            text,
            images,
            source: InputSource::Rpc,
        };
        live.slot
            .prompt(
                live.cwd.clone(),
                input,
                std::sync::Arc::new(move |t: &str| expander.expand_input(t)),
                Box::new(move |update| {
                    wire.notify(
                        "session/update",
                        json!({"sessionId": session_id, "update": update}),
                    )
                }),
            )
            .map_err(RpcError::internal)?;
        live.prompt_id = Some(id.clone());
        Ok(())
    }

    /// The running prompt ended: answer it with its stop reason.
    pub fn prompt_done(&mut self, end: RunEnd) {
        let Some(live) = self.live.as_mut() else {
            return;
        };
        let end = live.slot.finish(end);
        let id = live.prompt_id.take().unwrap_or(Value::Null);
        self.wire.respond(
            &id,
            end.map(|stop| json!({"stopReason": stop}))
                .map_err(RpcError::internal),
        );
    }

    fn idle_live(&mut self, params: &Value) -> Result<&mut Live, RpcError> {
        let live = self.live_for(params)?;
        if live.slot.is_running() {
            return Err(RpcError::invalid_params(
                "cannot change the session while a prompt runs; wait for it or cancel it",
            ));
        }
        Ok(live)
    }

    fn set_mode(&mut self, params: &Value) -> Answer {
        let mode_id = str_param(params, "modeId")?;
        let mode = SandboxMode::parse(mode_id).ok_or_else(|| {
            RpcError::invalid_params(format!(
                "unknown mode \"{mode_id}\"; the modes are {}",
                SandboxMode::NAMES
            ))
        })?;
        let cwd = self.idle_live(params)?.cwd.clone();
        (self.env.set_sandbox)(&cwd, mode).map_err(RpcError::internal)?;
        self.sandbox = Some(mode);
        if let Some(live) = self.live.as_mut() {
            live.sandbox = mode;
        }
        self.notify_update(
            json!({"sessionUpdate": "current_mode_update", "currentModeId": mode.as_str()}),
        );
        Ok(json!({}))
    }

    fn switch_model(live: &mut Live, value: &str) -> Result<(), RpcError> {
        let value = value.to_string();
        live.slot
            .query(move |s, env| {
                let model = (env.available_models)()
                    .into_iter()
                    .find(|m| format!("{}/{}", m.provider, m.id) == value)
                    .ok_or_else(|| {
                        RpcError::invalid_params(format!(
                            "unknown model \"{value}\"; session/new lists the available ones"
                        ))
                    })?;
                let credentials =
                    (env.credentials)(&model).map_err(|e| RpcError::new(AUTH_REQUIRED, e))?;
                s.set_model(model, credentials)
                    .map_err(RpcError::internal)?;
                env.has_model = true;
                Ok(())
            })
            .map_err(RpcError::internal)?
    }

    fn set_model(&mut self, params: &Value) -> Answer {
        let model = str_param(params, "modelId")?.to_string();
        let live = self.idle_live(params)?;
        Self::switch_model(live, &model)?;
        Ok(json!({}))
    }

    fn set_config_option(&mut self, params: &Value) -> Answer {
        let config = str_param(params, "configId")?.to_string();
        let value = str_param(params, "value")?.to_string();
        let live = self.idle_live(params)?;
        match config.as_str() {
            "model" => Self::switch_model(live, &value)?,
            "thought_level" => {
                let level = ThinkingLevel::parse(&value).ok_or_else(|| {
                    RpcError::invalid_params(format!("unknown thinking level \"{value}\""))
                })?;
                live.slot
                    .query(move |s, _| s.set_thinking_level(level))
                    .map_err(RpcError::internal)?;
            }
            other => {
                return Err(RpcError::invalid_params(format!(
                    "unknown config option \"{other}\"; the options are model and thought_level"
                )))
            }
        }
        let options = SessionFacts::of(&live.slot).config_options();
        // Told as an update too (as pi-acp does), for the views that follow updates only.
        self.notify_update(
            json!({"sessionUpdate": "config_option_update", "configOptions": options}),
        );
        Ok(json!({"configOptions": options}))
    }

    /// At the end: stops the live session and everything it started.
    pub fn close(&mut self) {
        if let Some(live) = self.live.take() {
            live.slot.close();
        }
    }
}

/// What the client is shown of a session's model and thinking level.
struct SessionFacts {
    current_model: String,
    /// `provider/id` and name of each available model.
    models: Vec<(String, String)>,
    thinking: String,
    levels: Vec<String>,
}

impl SessionFacts {
    fn of(slot: &SessionSlot) -> SessionFacts {
        slot.query(|s, env| {
            let model = s.agent().model.clone();
            SessionFacts {
                current_model: if env.has_model {
                    format!("{}/{}", model.provider, model.id)
                } else {
                    String::new()
                },
                models: (env.available_models)()
                    .iter()
                    .map(|m| (format!("{}/{}", m.provider, m.id), m.name.clone()))
                    .collect(),
                thinking: s.agent().thinking.as_str().to_string(),
                levels: crate::resources::model_resolve::supported_thinking_levels(&model)
                    .into_iter()
                    .map(|l| l.as_str().to_string())
                    .collect(),
            }
        })
        .unwrap_or(SessionFacts {
            current_model: String::new(),
            models: Vec::new(),
            thinking: "off".into(),
            levels: Vec::new(),
        })
    }

    /// The model and thinking level as ACP session config options.
    fn config_options(&self) -> Value {
        let models: Vec<Value> = self
            .models
            .iter()
            .map(|(id, name)| json!({"value": id, "name": name}))
            .collect();
        let levels: Vec<Value> = self
            .levels
            .iter()
            .map(|l| json!({"value": l, "name": l}))
            .collect();
        json!([
            {"id": "model", "name": "Model", "description": "Select the model for this session",
                "category": "model", "type": "select",
                "currentValue": self.current_model, "options": models},
            {"id": "thought_level", "name": "Thinking",
                "description": "Set the reasoning effort for this session",
                "category": "thought_level", "type": "select",
                "currentValue": self.thinking, "options": levels},
        ])
    }
}
