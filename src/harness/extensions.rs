//! The session's side of extensions: wiring the host's hooks into the agent (`tool_call`,
//! `tool_result`, `context`), pi's prompt pipeline (`/command` → `input` → expansion →
//! `before_agent_start` → run), forwarding agent events, and applying the session changes
//! extensions ask for at safe points (between runs, or while a command waits).

use std::sync::Arc;

use serde_json::{json, Value};

use super::AgentSession;
use crate::agent::{AgentEvent, Tool};
use crate::ai::{now_ms, Content, Extra, Message, Model, ThinkingLevel, UserContent, UserMessage};
use crate::extensions::hooks::InputOutcome;
use crate::extensions::{Action, ExtensionHost, PendingAction};
use crate::harness::model_control::Credentials;
use crate::session::entry::CustomMessage;

/// Finds a model and its credentials for an extension's `setModel`.
pub type ModelLookup =
    Arc<dyn Fn(&str, &str) -> Result<(Model, Credentials), String> + Send + Sync>;

/// What a session keeps about its extensions.
pub struct ExtensionBinding {
    pub host: Arc<ExtensionHost>,
    /// Every tool that could be active (built-ins and extension tools), for `setActiveTools`.
    pub tool_registry: Vec<Arc<dyn Tool>>,
    /// The system prompt before any `before_agent_start` change.
    pub base_system_prompt: String,
    pub models: Option<ModelLookup>,
}

/// Where a prompt came from (pi's `input` event `source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputSource {
    Interactive,
    Rpc,
    Extension,
}

impl InputSource {
    pub fn as_str(self) -> &'static str {
        match self {
            InputSource::Interactive => "interactive",
            InputSource::Rpc => "rpc",
            InputSource::Extension => "extension",
        }
    }
}

/// A prompt as the user typed it.
pub struct UserInput {
    pub text: String,
    pub images: Vec<Content>,
    pub source: InputSource,
}

fn user_message(text: String, images: Vec<Content>) -> Message {
    let mut content = vec![Content::text(text)];
    content.extend(images);
    Message::User(UserMessage {
        content: UserContent::Blocks(content),
        timestamp: now_ms(),
        extra: Extra::new(),
    })
}

fn tool_info(t: &Arc<dyn Tool>) -> Value {
    json!({"name": t.name(), "description": t.description(), "parameters": t.parameters()})
}

impl AgentSession {
    /// Connects a loaded extension host: hooks into the agent (replacing those of a host
    /// attached before), the abort flag and queues into the host, the getters' view. The mode
    /// calls [`AgentSession::start_extensions`] once its UI is in place.
    pub fn attach_extensions(
        &mut self,
        host: Arc<ExtensionHost>,
        tool_registry: Vec<Arc<dyn Tool>>,
        models: Option<ModelLookup>,
    ) {
        let abort = self.abort.clone();
        let agent = self.agent_mut();
        host.bind_session(abort, agent.steering.clone(), agent.follow_up.clone());
        agent.before_tool_call = None;
        agent.after_tool_call = None;
        agent.transform_context = None;
        if !host.is_empty() {
            let h = Arc::clone(&host);
            agent.before_tool_call = Some(Arc::new(move |call, args| {
                if !h.has_subscribers("tool_call") {
                    return None;
                }
                h.tool_call(&call.name, &call.id, args, &h_abort(&h))
            }));
            let h = Arc::clone(&host);
            agent.after_tool_call = Some(Arc::new(move |call, output, is_error| {
                if h.has_subscribers("tool_result") {
                    h.tool_result(
                        &call.name,
                        &call.id,
                        &call.arguments,
                        output,
                        is_error,
                        &h_abort(&h),
                    );
                }
            }));
            let h = Arc::clone(&host);
            agent.transform_context =
                Some(Arc::new(move |messages, abort| h.context(messages, abort)));
        }
        let base_system_prompt = agent.system_prompt.clone();
        self.extensions = Some(ExtensionBinding {
            host: Arc::clone(&host),
            tool_registry,
            base_system_prompt,
            models,
        });
        self.refresh_extension_view();
    }

    /// `session_start` with pi's `reason` (`startup`, or `reload` after `/reload`). A mode
    /// sends it once the UI extensions talk to is installed, so nothing they show on start is
    /// lost.
    pub fn start_extensions(&self, reason: &str) {
        if let Some(host) = self.extension_host() {
            host.emit("session_start", json!({ "reason": reason }));
        }
    }

    /// The attached host, if any.
    pub fn extension_host(&self) -> Option<&Arc<ExtensionHost>> {
        self.extensions.as_ref().map(|b| &b.host)
    }

    /// Whether `/name …` names an extension command.
    pub fn is_extension_command(&self, text: &str) -> bool {
        let Some(host) = self.extension_host() else {
            return false;
        };
        let name = text.strip_prefix('/').and_then(|r| r.split(' ').next());
        name.is_some_and(|n| host.has_command(n))
    }

    /// Keeps what extension getters answer in step with the session.
    pub fn refresh_extension_view(&self) {
        let Some(b) = &self.extensions else { return };
        let agent = self.agent();
        b.host.update_view(|v| {
            v.active_tools = agent.tools.iter().map(|t| t.name().to_string()).collect();
            v.all_tools = b.tool_registry.iter().map(tool_info).collect();
            v.thinking_level = agent.thinking.as_str().to_string();
            v.session_name = self.session.name();
            v.model = json!({"provider": agent.model.provider, "id": agent.model.id});
            v.system_prompt = agent.system_prompt.clone();
        });
    }

    /// pi's prompt pipeline: an extension `/command` runs instead of a prompt; otherwise the
    /// `input` hooks may transform or handle the text, `expand` applies skills and templates,
    /// and the result runs as a prompt. Work extensions queue meanwhile runs afterwards.
    pub fn submit(
        &mut self,
        input: UserInput,
        expand: &dyn Fn(&str) -> String,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) {
        let UserInput {
            mut text,
            mut images,
            source,
        } = input;
        if let Some(host) = self.extension_host().cloned() {
            if text.starts_with('/') && self.is_extension_command(&text) {
                let abort = self.abort.clone();
                let mut deferred = Vec::new();
                host.run_command(&text, &abort, &mut || deferred.extend(host.take_actions()));
                // Session changes the command asked for are applied once it has finished.
                self.apply_actions(deferred, on_event);
                self.run_extension_work(on_event);
                return;
            }
            if host.has_subscribers("input") {
                match host.input(&text, images, source.as_str(), &self.abort) {
                    InputOutcome::Handled => return self.run_extension_work(on_event),
                    InputOutcome::Continue { text: t, images: i } => {
                        text = t;
                        images = i;
                    }
                }
            }
        }
        let message = user_message(expand(&text), images);
        self.prompt(vec![message], on_event);
    }

    /// `before_agent_start`: the system prompt for this run (the base one unless an extension
    /// changes it) and extension messages that join the prompt.
    pub(super) fn before_agent_start(&mut self, prompts: &mut Vec<Message>) {
        let Some(b) = &self.extensions else { return };
        let host = Arc::clone(&b.host);
        let base = b.base_system_prompt.clone();
        if !host.has_subscribers("before_agent_start") {
            return;
        }
        let prompt_text = prompts
            .iter()
            .find_map(|m| match m {
                Message::User(u) => Some(crate::session::ops::user_content_text(&u.content)),
                _ => None,
            })
            .unwrap_or_default();
        let result = host.before_agent_start(&prompt_text, &base, &self.abort);
        self.agent_mut().system_prompt = result.system_prompt.unwrap_or(base);
        for m in result.messages {
            let content = match &m["content"] {
                Value::String(s) => vec![Content::text(s.clone())],
                c => serde_json::from_value(c.clone()).unwrap_or_default(),
            };
            if !content.is_empty() {
                prompts.push(Message::User(UserMessage {
                    content: UserContent::Blocks(content),
                    timestamp: now_ms(),
                    extra: Extra::new(),
                }));
            }
        }
    }

    /// Forwards an agent event to subscribed extensions (never waits).
    pub(super) fn forward_event(&self, ev: &AgentEvent) {
        let Some(b) = &self.extensions else { return };
        // Checked before serializing: most events have no subscriber, and a streaming
        // update's JSON carries the whole partial message.
        let name = ev.type_name();
        if !b.host.has_subscribers(name) {
            return;
        }
        let mut data = ev.to_json();
        if let Some(m) = data.as_object_mut() {
            m.remove("type");
        }
        b.host.emit(name, data);
    }

    /// Applies queued extension actions and runs the prompts they start, until none are left.
    pub fn run_extension_work(&mut self, on_event: &mut dyn FnMut(&AgentEvent)) {
        loop {
            let Some(host) = self.extension_host().cloned() else {
                return;
            };
            let actions = host.take_actions();
            if actions.is_empty() {
                return;
            }
            self.apply_actions(actions, on_event);
        }
    }

    fn apply_actions(
        &mut self,
        actions: Vec<PendingAction>,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) {
        let mut prompts = Vec::new();
        let mut trigger = false;
        for PendingAction { action, reply } in actions {
            let result = self.apply_action(action, &mut prompts, &mut trigger, on_event);
            if let Some(to) = reply {
                to.send(result);
            }
        }
        self.refresh_extension_view();
        if !prompts.is_empty() {
            self.prompt(prompts, on_event);
        } else if trigger {
            self.continue_for_extension(on_event);
        }
    }

    fn apply_action(
        &mut self,
        action: Action,
        prompts: &mut Vec<Message>,
        trigger: &mut bool,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<Value, String> {
        match action {
            Action::Prompt(m) => {
                prompts.push(*m);
                Ok(Value::Null)
            }
            Action::CustomMessage {
                custom_type,
                content,
                display,
                details,
                trigger_turn,
            } => {
                self.session
                    .append_custom_message(&custom_type, content.clone(), display, details.clone())
                    .map_err(|e| format!("Could not write session: {e}"))?;
                let timestamp = now_ms();
                // The model sees it as a user message (as the session's context does).
                self.agent_mut().messages.push(Message::User(UserMessage {
                    content: content.clone(),
                    timestamp,
                    extra: Extra::new(),
                }));
                let message = CustomMessage {
                    custom_type,
                    content,
                    display,
                    details,
                    timestamp,
                    extra: Extra::new(),
                };
                on_event(&AgentEvent::CustomMessageStart {
                    message: message.clone(),
                });
                on_event(&AgentEvent::CustomMessageEnd { message });
                *trigger |= trigger_turn;
                Ok(Value::Null)
            }
            Action::AppendEntry { custom_type, data } => self
                .session
                .append_custom(&custom_type, data)
                .map(|_| Value::Null)
                .map_err(|e| format!("Could not write session: {e}")),
            Action::SetModel { provider, model_id } => {
                let lookup = self.extensions.as_ref().and_then(|b| b.models.clone());
                let Some(lookup) = lookup else {
                    return Ok(Value::Bool(false));
                };
                match lookup(&provider, &model_id) {
                    Ok((model, credentials)) => {
                        self.set_model(model, credentials)?;
                        Ok(Value::Bool(true))
                    }
                    Err(_) => Ok(Value::Bool(false)),
                }
            }
            Action::SetThinkingLevel(level) => {
                let level = ThinkingLevel::parse(&level)
                    .ok_or_else(|| format!("Invalid thinking level \"{level}\""))?;
                self.set_thinking_level(level);
                Ok(Value::Null)
            }
            Action::SetActiveTools(names) => {
                let registry = self
                    .extensions
                    .as_ref()
                    .map(|b| b.tool_registry.clone())
                    .unwrap_or_default();
                self.agent_mut().tools = registry
                    .into_iter()
                    .filter(|t| names.iter().any(|n| n == t.name()))
                    .collect();
                Ok(Value::Null)
            }
            Action::SetSessionName(name) => {
                crate::session::ops::set_name(&mut self.session, &name).map(Value::String)
            }
            Action::Compact(instructions) => self
                .compact_with_events(instructions.as_deref(), on_event)
                .map(|r| r.to_json()),
        }
    }

    /// Runs the agent on what is already in its transcript (an extension message with
    /// `triggerTurn`).
    fn continue_for_extension(&mut self, on_event: &mut dyn FnMut(&AgentEvent)) {
        let Some(agent) = self.agent.take() else {
            return;
        };
        self.refresh_tool_env(&agent);
        match agent.continue_run(self.abort.clone()) {
            Ok(run) => self.drive(run, on_event),
            Err(refused) => self.agent = Some(refused.0),
        }
    }
}

fn h_abort(host: &ExtensionHost) -> crate::ai::Abort {
    host.session_abort()
}
