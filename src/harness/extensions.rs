//! The session's side of extensions: wiring the host's hooks into the agent (`tool_call`,
//! `tool_result`, `context`, actionable `turn_end`, models an extension streams), pi's prompt
//! pipeline (`/command` → `input` → expansion → `before_agent_start` → run →
//! `agent_before_settle` → `agent_settled`), forwarding agent events, restarting extensions
//! when the session is replaced, and applying the session changes extensions ask for at safe
//! points (between runs, or while a command waits).
//! What the session keeps about its extensions is `extension_binding`'s.

use std::sync::Arc;

use serde_json::{json, Value};

pub use super::extension_binding::{ExtensionBinding, ModelLookup};
use super::AgentSession;
use crate::agent::{AgentEvent, Tool};
use crate::ai::{now_ms, Content, Extra, Message, ThinkingLevel, UserContent, UserMessage};
use crate::extensions::hooks::{BeforeAgentStart, InputOutcome};
use crate::extensions::{Action, ExtensionHost, PendingAction};
use crate::session::entry::CustomMessage;

/// How long a restarting extension has to register again after a session switch.
const RESTART_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// What became of a submitted prompt (today's pi reports it as the RPC `disposition`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    /// A run started with it.
    Started,
    /// Queued for a run in progress.
    Queued,
    /// An extension command or `input` hook took it; no run starts for it.
    Handled,
}

impl Disposition {
    pub fn as_str(self) -> &'static str {
        match self {
            Disposition::Started => "started",
            Disposition::Queued => "queued",
            Disposition::Handled => "handled",
        }
    }
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

pub(crate) fn user_message(text: String, images: Vec<Content>) -> Message {
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
        let non_chat = self.tool_env.models().get();
        let base_stream = match &self.extensions {
            Some(b) => Arc::clone(&b.base_stream),
            None => Arc::clone(&self.agent().stream_fn),
        };
        let agent = self.agent_mut();
        host.bind_session(abort, agent.steering.clone(), agent.follow_up.clone());
        let gate = agent.tool_gate.clone();
        host.set_services(|s| {
            s.stream = Some(Arc::clone(&base_stream));
            s.lookup = models.clone();
            s.gate = gate;
            s.models = non_chat;
        });
        agent.before_tool_call = None;
        agent.after_tool_call = None;
        agent.transform_context = None;
        agent.turn_end = None;
        agent.stream_fn = Arc::clone(&base_stream);
        if !host.is_empty() {
            agent.stream_fn = host.stream_fn(Arc::clone(&base_stream));
            let h = Arc::clone(&host);
            agent.turn_end = Some(Arc::new(move |assistant, results, abort| {
                if !h.has_subscribers("turn_end") {
                    return (Vec::new(), false);
                }
                let data = json!({
                    "message": crate::ai::assistant_json(assistant),
                    "toolResults": results,
                    "outcome": "completed",
                });
                let proposal = h.boundary("turn_end", data, abort);
                (draft_entries(&h, proposal.entries), proposal.continue_run)
            }));
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
            tools_generation: host.generation(),
            host: Arc::clone(&host),
            tool_registry,
            base_system_prompt,
            models,
            base_stream,
            settle_pending: false,
            events: Default::default(),
        });
        self.refresh_extension_view();
    }

    /// Tools extensions registered after loading join the registry and the active set.
    fn refresh_extension_tools(&mut self) {
        let Some(b) = &self.extensions else { return };
        let generation = b.host.generation();
        if generation == b.tools_generation {
            return;
        }
        let host = Arc::clone(&b.host);
        let mut added = Vec::new();
        for tool in host.tools() {
            let known = b.tool_registry.iter().any(|t| t.name() == tool.name());
            if !known {
                added.push(tool);
            }
        }
        if let Some(b) = self.extensions.as_mut() {
            b.tools_generation = generation;
            b.tool_registry.extend(added.iter().cloned());
        }
        let agent = self.agent_mut();
        for tool in added {
            if !agent.tools.iter().any(|t| t.name() == tool.name()) {
                agent.tools.push(tool);
            }
        }
        self.refresh_extension_view();
    }

    /// After the session was replaced (`/new`, `/resume`, `/fork`, …), pi restarts its
    /// extensions: `session_shutdown` with the reason, then a fresh instance of each (the
    /// Node.js bridge re-imports its modules); protocol-1 programs keep running.
    pub fn restart_extensions(&mut self, reason: &str) {
        let Some(host) = self.extension_host().cloned() else {
            return;
        };
        host.restart(reason, RESTART_TIMEOUT);
        self.refresh_extension_tools();
    }

    /// `session_start` with pi's `reason` (`startup`, or `reload` after `/reload`). A mode
    /// sends it once the UI extensions talk to is installed, so nothing they show on start is
    /// lost.
    pub fn start_extensions(&self, reason: &str) {
        if let Some(host) = self.extension_host() {
            host.emit_and_wait("session_start", json!({ "reason": reason }));
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
            super::mcp::add_mcp_tools(self.mcp.as_ref(), &mut v.active_tools, &mut v.all_tools);
            v.thinking_level = agent.thinking.as_str().to_string();
            v.session_name = self.session.name();
            v.model = json!({"provider": agent.model.provider, "id": agent.model.id});
            v.system_prompt = agent.system_prompt.clone();
            v.session_file = self
                .session
                .path()
                .map(|p| p.to_string_lossy().into_owned());
            v.session_id = self.session.session_id().to_string();
            v.leaf_id = self.session.leaf_id().map(str::to_string);
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
        self.submit_reporting(input, expand, on_event, &mut |_| {});
    }

    /// [`submit`](Self::submit), telling `on_preflight` what became of the prompt as soon as
    /// that is known, as pi does: `handled` once an extension command has run or an `input`
    /// hook took it, `started` when the run is about to make its first request.
    pub fn submit_reporting(
        &mut self,
        input: UserInput,
        expand: &dyn Fn(&str) -> String,
        on_event: &mut dyn FnMut(&AgentEvent),
        on_preflight: &mut dyn FnMut(Disposition),
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
                on_preflight(Disposition::Handled);
                // Session changes the command asked for are applied once it has finished.
                self.apply_actions(deferred, on_event);
                self.run_extension_work(on_event);
                return;
            }
            if host.has_subscribers("input") {
                match host.input(&text, images, source.as_str(), &self.abort) {
                    InputOutcome::Handled => {
                        on_preflight(Disposition::Handled);
                        return self.run_extension_work(on_event);
                    }
                    InputOutcome::Continue { text: t, images: i } => {
                        text = t;
                        images = i;
                    }
                }
            }
        }
        let message = user_message(expand(&text), images);
        self.prompt_reporting(vec![message], on_event, &mut || {
            on_preflight(Disposition::Started)
        });
    }

    /// `before_agent_start`: the system prompt for this run (the base one unless an extension
    /// changes it) and extension messages that join the prompt.
    pub(super) fn before_agent_start(&mut self, prompts: &[Message]) {
        self.refresh_extension_tools();
        let Some(b) = self.extensions.as_mut() else {
            return;
        };
        b.settle_pending = true;
        let host = Arc::clone(&b.host);
        let base = b.base_system_prompt.clone();
        if !host.has_subscribers("before_agent_start") {
            return;
        }
        let user = prompts.iter().find_map(|m| match m {
            Message::User(u) => Some(u),
            _ => None,
        });
        let prompt_text = user
            .map(|u| crate::session::ops::user_content_text(&u.content))
            .unwrap_or_default();
        let images: Vec<&Content> = match user.map(|u| &u.content) {
            Some(UserContent::Blocks(blocks)) => blocks
                .iter()
                .filter(|c| matches!(c, Content::Image { .. }))
                .collect(),
            _ => Vec::new(),
        };
        let mut trigger = json!({"messageType": "user", "prompt": prompt_text, "images": images});
        self.add_prompt_options(&mut trigger);
        let result = host.before_agent_start(trigger, &base, &self.abort);
        self.apply_before_agent_start(result, base);
    }

    /// `before_agent_start`'s `systemPromptOptions`: what the base prompt is built from.
    fn add_prompt_options(&self, trigger: &mut Value) {
        if let Some(source) = &self.prompt_source {
            trigger["systemPromptOptions"] = source.options(&self.agent().tools);
        }
    }

    /// The run gets the chained system prompt, and the returned messages join its prompt as
    /// extension (custom) messages, recorded as `custom_message` entries as pi does.
    fn apply_before_agent_start(&mut self, result: BeforeAgentStart, base: String) {
        self.forced_prompt = result.system_prompt.clone();
        let agent = self.agent_mut();
        agent.system_prompt = result.system_prompt.unwrap_or(base);
        agent.prompt_customs = result
            .messages
            .iter()
            .filter_map(custom_message_of)
            .collect();
    }

    /// Forwards an agent event to subscribed extensions (never waits).
    pub(super) fn forward_event(&mut self, ev: &AgentEvent) {
        let Some(b) = &mut self.extensions else {
            return;
        };
        // Checked before serializing: most events have no subscriber, and a streaming
        // update's JSON carries the whole partial message.
        let name = ev.type_name();
        if !b.host.has_subscribers(name) {
            b.events.observe(ev);
            return;
        }
        let mut data = b.events.value(ev);
        if let Some(m) = data.as_object_mut() {
            m.remove("type");
        }
        if name == "agent_end" {
            b.host.emit_and_wait(name, data);
        } else {
            b.host.emit(name, data);
        }
    }

    /// After a run: `agent_before_settle` (extensions may add entries and ask for one more
    /// request, as often as they keep asking), then `agent_settled`.
    pub(super) fn settle(&mut self, on_event: &mut dyn FnMut(&AgentEvent)) {
        loop {
            let Some(b) = self.extensions.as_mut() else {
                return;
            };
            if !b.settle_pending {
                return;
            }
            let host = Arc::clone(&b.host);
            let aborted = self.abort.is_aborted();
            if aborted || !host.has_subscribers("agent_before_settle") {
                break;
            }
            let proposal = host.boundary("agent_before_settle", json!({}), &self.abort);
            let messages = draft_entries(&host, proposal.entries);
            for message in messages {
                self.add_custom_message(message, on_event);
            }
            if !proposal.continue_run || self.abort.is_aborted() {
                break;
            }
            self.continue_for_extension(on_event);
        }
        if let Some(b) = self.extensions.as_mut() {
            b.settle_pending = false;
            let host = Arc::clone(&b.host);
            host.emit(
                "agent_settled",
                json!({ "aborted": self.abort.is_aborted() }),
            );
        }
    }

    /// Records an extension message and puts it in the model's context.
    fn add_custom_message(
        &mut self,
        message: CustomMessage,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) {
        if let Err(e) = self.session.append_custom_message(
            &message.custom_type,
            message.content.clone(),
            message.display,
            message.details.clone(),
        ) {
            self.write_errors
                .push(format!("Could not write session: {e}"));
        }
        let custom = crate::session::entry::AgentMessage::Custom(message.clone());
        self.agent_mut()
            .messages
            .extend(crate::session::to_llm_messages(&[custom]));
        on_event(&AgentEvent::CustomMessageStart {
            message: message.clone(),
        });
        on_event(&AgentEvent::CustomMessageEnd { message });
    }

    /// Applies queued extension actions and runs the prompts they start, until none are left.
    pub fn run_extension_work(&mut self, on_event: &mut dyn FnMut(&AgentEvent)) {
        self.settle(on_event);
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
        } else if trigger && self.continue_for_extension(on_event) {
            self.settle_run(on_event);
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
                let message = CustomMessage {
                    custom_type,
                    content,
                    display,
                    details,
                    timestamp: now_ms(),
                    extra: Extra::new(),
                };
                // The model sees it as a user message (as the session's context does).
                let custom = crate::session::entry::AgentMessage::Custom(message.clone());
                self.agent_mut()
                    .messages
                    .extend(crate::session::to_llm_messages(&[custom]));
                on_event(&AgentEvent::CustomMessageStart {
                    message: message.clone(),
                });
                on_event(&AgentEvent::CustomMessageEnd { message });
                *trigger |= trigger_turn;
                Ok(Value::Null)
            }
            Action::AppendEntry { custom_type, data } => {
                let id = self
                    .session
                    .append_custom(&custom_type, data)
                    .map_err(|e| format!("Could not write session: {e}"))?;
                let entry = self
                    .session
                    .line_of(&id)
                    .and_then(|l| serde_json::from_str(&l).ok());
                if let Some(entry) = entry {
                    on_event(&AgentEvent::EntryAppended { entry });
                }
                Ok(Value::Null)
            }
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
                // The prompt lists the active tools (and their guidelines), as pi rebuilds it.
                if let Some(source) = &self.prompt_source {
                    let prompt = source.build(&self.agent().tools);
                    if let Some(b) = self.extensions.as_mut() {
                        b.base_system_prompt = prompt.clone();
                    }
                    self.agent_mut().system_prompt = prompt;
                }
                Ok(Value::Null)
            }
            Action::SetSessionName(name) => crate::session::ops::set_name(&mut self.session, &name)
                .map(Value::String)
                .map_err(String::from),
            Action::Compact(instructions) => self
                .compact_with_events(instructions.as_deref(), on_event)
                .map(|r| self.compaction_json(&r)),
            Action::SetLabel { entry_id, label } => {
                crate::session::ops::set_label(&mut self.session, &entry_id, label.as_deref())
                    .map(|_| Value::Null)
                    .map_err(String::from)
            }
            Action::WaitForIdle => Ok(Value::Null),
        }
    }

    /// Runs the agent on what is already in its transcript (an extension message with
    /// `triggerTurn`).
    /// Returns whether a run happened.
    fn continue_for_extension(&mut self, on_event: &mut dyn FnMut(&AgentEvent)) -> bool {
        self.before_custom_run();
        let Some(agent) = self.agent.take() else {
            return false;
        };
        self.refresh_tool_env(&agent);
        match agent.continue_run(self.abort.clone()) {
            Ok(run) => {
                self.drive(run, on_event);
                true
            }
            Err(refused) => {
                self.agent = Some(refused.0);
                false
            }
        }
    }
}

fn h_abort(host: &ExtensionHost) -> crate::ai::Abort {
    host.session_abort()
}

impl AgentSession {
    /// `before_agent_start` for a run an extension message starts (pi 1.x: `messageType`
    /// `custom`, with the message that triggered it).
    fn before_custom_run(&mut self) {
        self.refresh_extension_tools();
        let Some(b) = self.extensions.as_mut() else {
            return;
        };
        b.settle_pending = true;
        let host = Arc::clone(&b.host);
        let base = b.base_system_prompt.clone();
        if !host.has_subscribers("before_agent_start") {
            return;
        }
        let message = self.agent().messages.last().cloned();
        let mut trigger = json!({"messageType": "custom", "message": message});
        self.add_prompt_options(&mut trigger);
        let result = host.before_agent_start(trigger, &base, &self.abort);
        self.apply_before_agent_start(result, base);
    }
}

/// An extension message (`{customType, content, display?, details?}`) as pi records it; a
/// missing content is empty (pi's default), content of the wrong shape is refused.
fn custom_message_of(e: &Value) -> Option<CustomMessage> {
    let content = match &e["content"] {
        Value::String(s) => UserContent::Text(s.clone()),
        Value::Null => UserContent::Blocks(Vec::new()),
        c => UserContent::Blocks(serde_json::from_value::<Vec<Content>>(c.clone()).ok()?),
    };
    Some(CustomMessage {
        custom_type: e["customType"].as_str().unwrap_or("extension").into(),
        content,
        display: e["display"].as_bool().unwrap_or(true),
        details: e.get("details").filter(|d| !d.is_null()).cloned(),
        timestamp: now_ms(),
        extra: Extra::new(),
    })
}

/// The extension messages of a boundary proposal (`custom_message` drafts); `custom` drafts
/// are recorded after the run; other kinds are reported as not supported.
fn draft_entries(host: &ExtensionHost, entries: Vec<Value>) -> Vec<CustomMessage> {
    let mut messages = Vec::new();
    for e in entries {
        match e["type"].as_str() {
            Some("custom_message") => messages.extend(custom_message_of(&e)),
            Some("custom") => host.queue_entry(
                e["customType"].as_str().unwrap_or("extension"),
                e.get("data").filter(|d| !d.is_null()).cloned(),
            ),
            other => host.report(
                "extensions",
                "turn_end",
                format!(
                    "entries of type {:?} are not supported yet; skipped",
                    other.unwrap_or("?")
                ),
            ),
        }
    }
    messages
}
