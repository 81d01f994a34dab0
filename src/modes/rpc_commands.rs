//! RPC commands: parsing a line, checking its arguments, and answering it with pi's response
//! shape — from the idle session, or from the snapshot while a run holds it. Every response
//! carries the request's `id` when it had one (pi leaves it out of an unknown command's
//! error; a client waiting on the id would hang).

use serde_json::{json, Map, Value};

use super::{Server, Snapshot};
use crate::agent::{AgentEvent, QueueMode};
use crate::ai::{
    now_ms, Content, Extra, ImageContent, Message, ThinkingLevel, UserContent, UserMessage,
};
use crate::harness::extensions::{Disposition, InputSource, UserInput};
use crate::harness::AgentSession;
use crate::resources::loader::Resources;
use crate::session::{ops, AgentMessage};

use super::super::rpc_session;
use crate::modes::rpc_out::response;

/// `{disposition}` of a prompt, steer or follow-up response.
fn disposition(d: Disposition) -> Value {
    json!({"disposition": d.as_str()})
}

/// What a JSON value is, for an error message.
fn kind_of(v: Option<&Value>) -> &'static str {
    match v {
        None => "missing",
        Some(Value::Null) => "null",
        Some(Value::Bool(_)) => "a boolean",
        Some(Value::Number(_)) => "a number",
        Some(Value::String(_)) => "a string",
        Some(Value::Array(_)) => "an array",
        Some(Value::Object(_)) => "an object",
    }
}

/// The string field `field` of `cmd`, or an error naming it.
fn string_field<'a>(cmd: &'a Value, field: &str) -> Result<&'a str, String> {
    match cmd.get(field) {
        Some(Value::String(s)) => Ok(s),
        other => Err(format!(
            "Invalid {} command: \"{field}\" must be a string (it is {})",
            cmd["type"].as_str().unwrap_or(""),
            kind_of(other)
        )),
    }
}

fn user_message(cmd: &Value, text: String) -> Message {
    let mut content = vec![Content::text(text)];
    content.extend(images(cmd));
    Message::User(UserMessage {
        content: UserContent::Blocks(content),
        timestamp: now_ms(),
        extra: Extra::new(),
    })
}

/// The `images` of a command (`{data, mimeType}` objects; others are skipped).
fn images(cmd: &Value) -> Vec<Content> {
    let Some(list) = cmd.get("images").and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(
            |img| match (img["data"].as_str(), img["mimeType"].as_str()) {
                (Some(data), Some(mime)) => Some(Content::Image(ImageContent {
                    data: data.into(),
                    mime_type: mime.into(),
                })),
                _ => None,
            },
        )
        .collect()
}

fn mode_name(m: QueueMode) -> &'static str {
    match m {
        QueueMode::All => "all",
        QueueMode::OneAtATime => "one-at-a-time",
    }
}

/// Commands that change the session: answered only between runs.
const SESSION_COMMANDS: &[&str] = &[
    "set_thinking_level",
    "cycle_thinking_level",
    "set_steering_mode",
    "set_follow_up_mode",
    "set_auto_retry",
    "set_auto_compaction",
    "get_session_stats",
    "set_session_name",
    "get_fork_messages",
    "set_model",
    "export_html",
    "compact",
    "new_session",
    "cycle_model",
    "switch_session",
    "fork",
    "clone",
    "get_checkpoints",
    "rewind",
];

impl Server {
    pub(super) fn handle_line(&mut self, line: &str) {
        let (id, kind, cmd) = match super::input::parse_command(line) {
            Ok(c) => (c.id, c.kind, c.value),
            Err(response) => return self.out.line(&response),
        };
        let result = match kind.as_str() {
            "prompt" => return self.prompt(&cmd, id),
            "bash" => return self.start_bash(&cmd, id),
            "abort" => match &self.running {
                Some(r) => {
                    // Answered when the run has ended (`session_back`).
                    r.abort.abort();
                    self.aborts.push(id);
                    return;
                }
                None => Ok(None),
            },
            "abort_bash" => {
                self.abort_bash();
                Ok(None)
            }
            "steer" | "follow_up" => self.queue(&cmd, &kind),
            "clear_queue" => self.clear_queue(),
            "get_available_thinking_levels" => Ok(Some(self.thinking_levels())),
            "abort_retry" => {
                if let Some(r) = &self.running {
                    r.abort.abort();
                }
                Ok(None)
            }
            "get_state" => Ok(Some(self.state())),
            "get_messages" => Ok(Some(json!({"messages": self.messages()}))),
            "get_last_assistant_text" => Ok(Some(self.last_assistant_text())),
            "get_available_models" => Ok(Some(json!({"models": (self.env.available_models)()}))),
            "get_commands" => Ok(Some(self.commands())),
            "get_entries" | "get_tree" => return self.entries(&cmd, id, &kind),
            k if SESSION_COMMANDS.contains(&k) => self.with_idle(&cmd, k),
            _ => Err(format!("Unknown command: {kind}")),
        };
        self.out.line(&response(&id, &kind, result));
        if kind == "get_messages" || kind == "get_state" {
            // The reply built the whole conversation (get_state to count its messages).
            crate::util::heap::release_free_memory();
        }
        // Writes the command made that failed (runs report theirs as events themselves).
        if let Some(s) = self.idle.as_mut() {
            for error in std::mem::take(&mut s.write_errors) {
                self.out
                    .text_line(AgentEvent::SessionWriteError { error }.to_json_line());
            }
        }
    }

    /// Commands that change the session: only between runs.
    fn with_idle(&mut self, cmd: &Value, kind: &str) -> Result<Option<Value>, String> {
        if self.running.is_some() {
            return Err(format!(
                "Cannot {kind} while the agent is processing; wait for agent_end or abort first"
            ));
        }
        let s = self.idle.as_mut().expect("idle when not running");
        match kind {
            "set_thinking_level" => {
                let level = cmd["level"]
                    .as_str()
                    .and_then(ThinkingLevel::parse)
                    .ok_or("Invalid thinking level")?;
                announce_thinking(s.set_thinking_level(level), &self.out);
                Ok(None)
            }
            "cycle_thinking_level" => match s.cycle_thinking_level() {
                Some(level) => {
                    self.out
                        .line(&json!({"type": "thinking_level_changed", "level": level}));
                    Ok(Some(json!({"level": level})))
                }
                None => Ok(Some(Value::Null)),
            },
            "set_steering_mode" | "set_follow_up_mode" => {
                let mode = cmd["mode"]
                    .as_str()
                    .and_then(QueueMode::parse)
                    .ok_or("Invalid mode")?;
                s.set_queue_mode(kind == "set_steering_mode", mode);
                Ok(None)
            }
            "set_auto_retry" => {
                s.set_auto_retry(cmd["enabled"].as_bool().unwrap_or(true));
                Ok(None)
            }
            "set_auto_compaction" => {
                s.set_auto_compaction(cmd["enabled"].as_bool().unwrap_or(true));
                Ok(None)
            }
            "get_session_stats" => {
                let window = s.agent().model.context_window;
                Ok(Some(
                    serde_json::to_value(ops::stats(&s.session, window)).unwrap_or_default(),
                ))
            }
            "set_session_name" => {
                let name = string_field(cmd, "name")?;
                ops::set_name(&mut s.session, name)?;
                let name = s.session.name().unwrap_or_else(|| name.trim().to_string());
                self.out
                    .line(&json!({"type": "session_info_changed", "name": name}));
                Ok(None)
            }
            "get_fork_messages" => {
                let msgs: Vec<Value> = ops::user_messages_for_fork(&s.session)
                    .into_iter()
                    .map(|(entry_id, text)| json!({"entryId": entry_id, "text": text}))
                    .collect();
                Ok(Some(json!({"messages": msgs})))
            }
            "set_model" => {
                let (provider, id) = (
                    cmd["provider"].as_str().unwrap_or(""),
                    cmd["modelId"].as_str().unwrap_or(""),
                );
                let model = (self.env.available_models)()
                    .into_iter()
                    .find(|m| m.provider == provider && m.id == id)
                    .ok_or_else(|| format!("Model not found: {provider}/{id}"))?;
                let credentials = (self.env.credentials)(&model)?;
                let changed = s.set_model(model.clone(), credentials)?;
                self.env.has_model = true;
                announce_thinking(changed, &self.out);
                Ok(Some(serde_json::to_value(&model).unwrap_or_default()))
            }
            "export_html" => {
                let out = cmd["outputPath"].as_str().map(std::path::Path::new);
                let path = s.export_html(out, None)?;
                Ok(Some(json!({"path": path.to_string_lossy()})))
            }
            "compact" => {
                let out = self.out.clone();
                let r = s.compact_with_events(cmd["customInstructions"].as_str(), &mut |e| {
                    out.line(&e.to_json())
                })?;
                Ok(Some(s.compaction_json(&r)))
            }
            "new_session" => rpc_session::new_session(s, &mut self.env.switch_env(), cmd),
            "switch_session" => rpc_session::switch_session(s, &mut self.env.switch_env(), cmd),
            "fork" => rpc_session::fork(s, &mut self.env.switch_env(), cmd),
            "clone" => rpc_session::clone(s, &mut self.env.switch_env(), cmd),
            "get_checkpoints" => Ok(Some(crate::modes::rpc_rewind::get_checkpoints(s))),
            "rewind" => crate::modes::rpc_rewind::rewind(s, cmd),
            "cycle_model" => {
                let available = (self.env.available_models)();
                let before = s.agent().thinking;
                let credentials = &self.env.credentials;
                match s.cycle_model(true, &available, &|m| credentials(m))? {
                    None => Ok(Some(Value::Null)),
                    Some(c) => {
                        self.env.has_model = true;
                        announce_thinking((c.thinking != before).then_some(c.thinking), &self.out);
                        Ok(Some(json!({"model": c.model, "thinkingLevel": c.thinking,
                            "isScoped": c.scoped})))
                    }
                }
            }
            other => Err(format!("{other} is not available in this build yet")),
        }
    }

    /// `steer` / `follow_up`: the message joins its queue (the running agent's, or the idle
    /// session's for the next run).
    fn queue(&mut self, cmd: &Value, kind: &str) -> Result<Option<Value>, String> {
        let text = string_field(cmd, "message")?;
        let message = user_message(cmd, self.env.resources.expand_input(text));
        let (steering, follow_up) = match (&self.running, &self.idle) {
            (Some(r), _) => (r.steering.clone(), r.follow_up.clone()),
            (None, Some(s)) => (s.agent().steering.clone(), s.agent().follow_up.clone()),
            (None, None) => return Err("no session".into()),
        };
        if kind == "steer" {
            &steering
        } else {
            &follow_up
        }
        .push(message);
        self.queue_report
            .update(&self.out, &steering, &follow_up, true);
        Ok(Some(disposition(Disposition::Queued)))
    }

    /// `clear_queue`: empties both queues and returns their texts.
    fn clear_queue(&mut self) -> Result<Option<Value>, String> {
        let (steering, follow_up) = match (&self.running, &self.idle) {
            (Some(r), _) => (r.steering.clone(), r.follow_up.clone()),
            (None, Some(s)) => (s.agent().steering.clone(), s.agent().follow_up.clone()),
            (None, None) => return Err("no session".into()),
        };
        let texts = |q: &crate::agent::MessageQueue| -> Vec<String> {
            q.clear()
                .iter()
                .map(|m| match m {
                    Message::User(u) => ops::user_content_text(&u.content),
                    _ => String::new(),
                })
                .collect()
        };
        let data = json!({"steering": texts(&steering), "followUp": texts(&follow_up)});
        self.queue_report
            .update(&self.out, &steering, &follow_up, true);
        Ok(Some(data))
    }

    /// The thinking levels the current model supports (`["off"]` without reasoning; every
    /// level when no model is selected).
    fn thinking_levels(&self) -> Value {
        let model = match (&self.running, &self.idle) {
            (Some(r), _) => Some(&r.model),
            (None, Some(s)) => Some(&s.agent().model),
            (None, None) => None,
        }
        .filter(|_| self.env.has_model);
        let levels = match model {
            Some(m) => crate::resources::model_resolve::supported_thinking_levels(m),
            None => ThinkingLevel::ALL.to_vec(),
        };
        json!({"levels": levels})
    }

    fn prompt(&mut self, cmd: &Value, id: Option<Value>) {
        let text = match string_field(cmd, "message") {
            Ok(t) => t.to_string(),
            Err(e) => return self.out.line(&response(&id, "prompt", Err(e))),
        };
        if self.running.is_some() {
            let result = match cmd.get("streamingBehavior").and_then(Value::as_str) {
                Some("steer") => self.queue(cmd, "steer"),
                Some("followUp") => self.queue(cmd, "follow_up"),
                _ => Err("Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.".into()),
            };
            self.out.line(&response(&id, "prompt", result));
            return;
        }
        let session = self.idle.as_ref().expect("idle when not running");
        let is_command = session.is_extension_command(&text);
        if !is_command && (!self.env.has_model || session.agent().options.api_key.is_empty()) {
            self.out.line(&response(&id, "prompt", Err(
                "No API key found for the selected model.\n\nSet a provider key (for example ANTHROPIC_API_KEY or OPENAI_API_KEY), add one to ~/.pi/agent/auth.json, or use set_model.".into(),
            )));
            return;
        }
        let expander = Resources {
            skills: self.env.resources.skills.clone(),
            templates: self.env.resources.templates.clone(),
            ..Default::default()
        };
        let input = UserInput {
            text,
            images: images(cmd),
            source: InputSource::Rpc,
        };
        // Answered from the run once pi would: when the run is about to start, or when an
        // extension command or `input` hook has taken the prompt.
        let out = self.out.clone();
        self.start_run(move |s, on_event| {
            let mut answered = false;
            let mut answer = |d: Disposition| {
                if !std::mem::replace(&mut answered, true) {
                    out.line(&response(&id, "prompt", Ok(Some(disposition(d)))));
                }
            };
            s.submit_reporting(input, &|t| expander.expand_input(t), on_event, &mut answer);
            answer(Disposition::Handled);
        });
    }

    /// The conversation as pi's `get_messages` returns it.
    fn messages(&self) -> Vec<AgentMessage> {
        match (&self.running, &self.idle) {
            (Some(_), _) => self.snapshot().messages.clone(),
            (None, Some(s)) => s.agent_messages(),
            (None, None) => Vec::new(),
        }
    }

    fn snapshot(&self) -> std::sync::MutexGuard<'_, Snapshot> {
        self.snapshot.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// pi's `getLastAssistantText`: `{text}`, or `{}` when there is none.
    fn last_assistant_text(&self) -> Value {
        let text = match (&self.running, &self.idle) {
            (None, Some(s)) => ops::last_assistant_text(&s.session),
            _ => self.snapshot().messages.iter().rev().find_map(|m| match m {
                AgentMessage::Llm(Message::Assistant(a)) => Some(a.text().trim().to_string()),
                _ => None,
            }),
        };
        match text.filter(|t| !t.is_empty()) {
            Some(t) => json!({"text": t}),
            None => json!({}),
        }
    }

    fn state(&self) -> Value {
        match (&self.running, &self.idle) {
            (Some(r), _) => {
                let mut v = r.state.clone();
                v["model"] = serde_json::to_value(&r.model).unwrap_or_default();
                v["thinkingLevel"] = r.thinking.as_str().into();
                v["messageCount"] = self.snapshot().messages.len().into();
                v["pendingMessageCount"] = (r.steering.len() + r.follow_up.len()).into();
                v
            }
            (None, Some(s)) => self.state_of(s, false),
            (None, None) => Value::Null,
        }
    }

    pub(super) fn state_of(&self, s: &AgentSession, streaming: bool) -> Value {
        let agent = s.agent();
        let mut m = Map::new();
        if self.env.has_model {
            m.insert(
                "model".into(),
                serde_json::to_value(&agent.model).unwrap_or_default(),
            );
        }
        m.insert("thinkingLevel".into(), agent.thinking.as_str().into());
        m.insert("isStreaming".into(), streaming.into());
        m.insert("isCompacting".into(), false.into());
        m.insert(
            "steeringMode".into(),
            mode_name(agent.steering.mode()).into(),
        );
        m.insert(
            "followUpMode".into(),
            mode_name(agent.follow_up.mode()).into(),
        );
        if let Some(p) = s.session.path() {
            m.insert("sessionFile".into(), p.to_string_lossy().into());
        }
        m.insert("sessionId".into(), s.session.session_id().into());
        if let Some(name) = s.session.name() {
            m.insert("sessionName".into(), name.into());
        }
        m.insert("autoCompactionEnabled".into(), s.compaction.enabled.into());
        // Sandbox (issue 16): ours only, and only when on, so the state stays pi's otherwise.
        let sandbox = crate::util::sandbox::active_mode();
        if sandbox != crate::util::sandbox::Mode::Off {
            m.insert("sandbox".into(), sandbox.as_str().into());
        }
        // pi counts its agent messages: system checkpoints and `!!` bash runs included, as the
        // running count (the snapshot of those messages) does.
        m.insert("messageCount".into(), s.agent_messages().len().into());
        m.insert(
            "pendingMessageCount".into(),
            (agent.steering.len() + agent.follow_up.len()).into(),
        );
        Value::Object(m)
    }

    fn commands(&self) -> Value {
        let mut list = Vec::new();
        let host = match (&self.running, &self.idle) {
            (None, Some(s)) => s.extension_host().cloned(),
            _ => self.extensions.clone(),
        };
        for c in host.iter().flat_map(|h| h.commands()) {
            // `-e` extensions are pi's `cli` source with `temporary` scope.
            let source_info = match c.scope {
                crate::extensions::Scope::Temporary => json!({"path": c.extension_path,
                    "source": "cli", "scope": "temporary", "origin": "top-level"}),
                scope => {
                    let mut info = self
                        .env
                        .resources
                        .source_info(std::path::Path::new(&c.extension_path), None);
                    if scope == crate::extensions::Scope::Project && info["origin"] == "top-level" {
                        info["scope"] = json!("project");
                    }
                    info
                }
            };
            list.push(
                json!({"name": c.name, "description": c.description, "source": "extension",
                "sourceInfo": source_info}),
            );
        }
        for t in &self.env.resources.templates {
            list.push(
                json!({"name": t.name, "description": t.description, "source": "prompt",
                "sourceInfo": self.env.resources.source_info(&t.file_path, None)}),
            );
        }
        for sk in &self.env.resources.skills {
            list.push(json!({"name": format!("skill:{}", sk.name), "description": sk.description, "source": "skill",
                "sourceInfo": self.env.resources.source_info(&sk.file_path, Some(&sk.base_dir))}));
        }
        json!({"commands": list})
    }
}

fn announce_thinking(changed: Option<ThinkingLevel>, out: &super::Out) {
    if let Some(level) = changed {
        out.line(&json!({"type": "thinking_level_changed", "level": level}));
    }
}
