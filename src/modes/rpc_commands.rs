//! RPC commands: dispatching a line, checking its arguments, and answering it with pi's
//! response shape. Commands that reach the run (`steer`, `follow_up`, `clear_queue`, `abort`,
//! `abort_retry`, `abort_bash`, `bash`) are handled by the server's loop; every other one is
//! answered on the session actor, in order: from the idle session, or from the actor's view
//! of the run while one streams. Every response carries the request's `id` when it had one
//! (pi leaves it out of an unknown command's error; a client waiting on the id would hang).

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::kind::{Change, Command, Loop, Peekable, Query, Read};
use super::{Ctx, Server};
use crate::agent::{AgentEvent, MessageQueue, QueueMode};
use crate::ai::{
    now_ms, Content, Extra, ImageContent, Message, ThinkingLevel, UserContent, UserMessage,
};
use crate::harness::extensions::{Disposition, InputSource, UserInput};
use crate::harness::inbox::Conversation;
use crate::harness::op::{Idle, Op, Peek, RunView};
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

impl Server {
    /// The actor handles what extensions queued, and the session changes they asked for.
    pub(super) fn extension_work(&self) {
        self.handle.send(Op::RunExtensionWork);
    }

    pub(super) fn handle_line(&mut self, line: &str) {
        let (id, kind, cmd) = match super::input::parse_command(line) {
            Ok(c) => (c.id, c.kind, c.value),
            Err(response) => {
                // In order with the responses before it.
                let out = self.ctx.out.clone();
                self.handle
                    .send(Op::Peek(Box::new(move |_| out.line(&response))));
                return;
            }
        };
        let Some(command) = Command::parse(&kind) else {
            let out = self.ctx.out.clone();
            let e = format!("Unknown command: {kind}");
            self.handle.send(Op::Peek(Box::new(move |_| {
                out.line(&response(&id, &kind, Err(e)))
            })));
            return;
        };
        let loop_command = match command {
            Command::Loop(l) => l,
            Command::Read(read) => {
                let ctx = Arc::clone(&self.ctx);
                self.handle
                    .run(move |idle| read_idle(&ctx, idle, id, &kind, read, &cmd));
                return;
            }
            Command::Peek(command) => {
                let ctx = Arc::clone(&self.ctx);
                self.handle.send(Op::Peek(Box::new(move |peek| match peek {
                    Peek::Idle(idle) => answer_idle(&ctx, idle, id, &kind, command, &cmd),
                    Peek::Running(view, conversation) => {
                        answer_running(&ctx, view, conversation, id, &kind, command, &cmd)
                    }
                })));
                return;
            }
        };
        let result = match loop_command {
            Loop::Bash => return self.queue_bash(cmd, id),
            Loop::Abort => {
                // The flag now; answered once the run has ended, before what came after it.
                self.handle.abort();
                self.handle.send(Op::Abort { done: None });
                let out = self.ctx.out.clone();
                self.handle.send(Op::Peek(Box::new(move |_| {
                    out.line(&response(&id, "abort", Ok(None)))
                })));
                return;
            }
            Loop::AbortBash => {
                self.abort_bash();
                Ok(None)
            }
            Loop::AbortRetry => {
                self.handle.abort();
                self.handle.send(Op::Abort { done: None });
                Ok(None)
            }
            Loop::Steer => queue(&self.ctx, &cmd, true),
            Loop::FollowUp => queue(&self.ctx, &cmd, false),
            Loop::ClearQueue => clear_queue(&self.ctx),
        };
        self.ctx.out.line(&response(&id, &kind, result));
    }
}

/// A command answered while a run holds the session: queries from the actor's view of the
/// run, session changes refused.
fn answer_running(
    ctx: &Ctx,
    view: &RunView,
    conversation: Conversation<'_>,
    id: Option<Value>,
    kind: &str,
    command: Peekable,
    cmd: &Value,
) {
    let query = match command {
        Peekable::Query(q) => q,
        Peekable::Change(_) => {
            let e = format!(
                "Cannot {kind} while the agent is processing; wait for agent_end or abort first"
            );
            return ctx.out.line(&response(&id, kind, Err(e)));
        }
    };
    let result = match query {
        Query::Prompt => {
            let result = match string_field(cmd, "message") {
                Err(e) => Err(e),
                Ok(_) => match cmd.get("streamingBehavior").and_then(Value::as_str) {
                    Some("steer") => queue(ctx, cmd, true),
                    Some("followUp") => queue(ctx, cmd, false),
                    _ => Err("Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.".into()),
                },
            };
            return ctx.out.line(&response(&id, "prompt", result));
        }
        Query::GetAvailableThinkingLevels => Ok(Some(thinking_levels(
            Some(&view.model).filter(|_| view.has_model),
        ))),
        Query::GetState => {
            let mut v = state(view, true, conversation.len());
            v["model"] = serde_json::to_value(&view.model).unwrap_or_default();
            Ok(Some(v))
        }
        Query::GetMessages => {
            stream_messages(&ctx.out, id, &mut |one| {
                conversation.for_each(&mut |m| one(&m))
            });
            return crate::util::heap::release_free_memory();
        }
        Query::GetLastAssistantText => {
            let text = ops::last_reply_text_of(&mut |each| conversation.for_each(each));
            Ok(Some(last_assistant_text(text)))
        }
        Query::GetAvailableModels => Ok(Some(json!({"models": (ctx.available_models)()}))),
        Query::GetCommands => Ok(Some(commands(ctx, ctx.extensions.clone()))),
    };
    ctx.out.line(&response(&id, kind, result));
    if matches!(query, Query::GetMessages | Query::GetState) {
        // The reply built the whole conversation (get_state to count its messages).
        crate::util::heap::release_free_memory();
    }
}

/// Where [`stream_messages`]'s source hands each message.
type EachMessage<'a> = &'a mut dyn FnMut(&AgentMessage);

/// Answers `get_messages` with the messages `each` gives, each serialized as it comes (a long
/// session's conversation is never held twice, nor its whole JSON at once).
fn stream_messages(
    out: &crate::modes::rpc_out::Out,
    id: Option<Value>,
    each: &mut dyn FnMut(EachMessage<'_>),
) {
    let empty = json!({"messages": []});
    let line = crate::util::json::to_js_string(&response(&id, "get_messages", Ok(Some(empty))));
    let (head, tail) = line.rsplit_once("[]").unwrap_or((&line, ""));
    out.streamed_line(&mut |put| {
        put(head.as_bytes());
        put(b"[");
        let mut first = true;
        let mut piece = Vec::new();
        each(&mut |m| {
            piece.clear();
            if !std::mem::take(&mut first) {
                piece.push(b',');
            }
            let _ = crate::util::json::write_js(&mut piece, m);
            put(&piece);
        });
        put(b"]");
        put(tail.as_bytes());
    });
}

/// A command answered from the idle session.
fn answer_idle(
    ctx: &Ctx,
    idle: Idle<'_>,
    id: Option<Value>,
    kind: &str,
    command: Peekable,
    cmd: &Value,
) {
    let Idle {
        session: s,
        env,
        emit,
    } = idle;
    let result = match command {
        Peekable::Query(Query::Prompt) => {
            return prompt(
                ctx,
                Idle {
                    session: s,
                    env,
                    emit,
                },
                cmd,
                id,
            )
        }
        Peekable::Change(change) => change_session(ctx, s, env, cmd, kind, change),
        Peekable::Query(Query::GetAvailableThinkingLevels) => Ok(Some(thinking_levels(
            Some(&s.agent().model).filter(|_| env.has_model),
        ))),
        Peekable::Query(Query::GetState) => {
            let view = RunView::of(s, env.has_model);
            Ok(Some(state(&view, false, s.message_count())))
        }
        Peekable::Query(Query::GetMessages) => {
            stream_messages(&ctx.out, id, &mut |one| {
                s.for_each_agent_message(&mut |m| one(&m))
            });
            return crate::util::heap::release_free_memory();
        }
        Peekable::Query(Query::GetLastAssistantText) => Ok(Some(last_assistant_text(
            ops::last_assistant_text(&s.session),
        ))),
        Peekable::Query(Query::GetAvailableModels) => {
            Ok(Some(json!({"models": (ctx.available_models)()})))
        }
        Peekable::Query(Query::GetCommands) => Ok(Some(commands(ctx, s.extension_host().cloned()))),
    };
    respond(ctx, s, &id, kind, result);
    if matches!(
        command,
        Peekable::Query(Query::GetMessages | Query::GetState)
    ) {
        crate::util::heap::release_free_memory();
    }
}

/// A command that reads the session itself, once no run holds it.
fn read_idle(ctx: &Ctx, idle: Idle<'_>, id: Option<Value>, kind: &str, read: Read, cmd: &Value) {
    let s = idle.session;
    let result = match read {
        Read::GetEntries | Read::GetTree => {
            return super::entries::entries(s, &ctx.out, cmd, id, kind)
        }
        Read::GetSessionStats => {
            let window = s.agent().model.context_window;
            Ok(Some(
                serde_json::to_value(ops::stats(&s.session, window)).unwrap_or_default(),
            ))
        }
        Read::GetForkMessages => {
            let msgs: Vec<Value> = ops::user_messages_for_fork(&s.session)
                .into_iter()
                .map(|(entry_id, text)| json!({"entryId": entry_id, "text": text}))
                .collect();
            Ok(Some(json!({"messages": msgs})))
        }
        Read::ExportHtml => {
            let path = cmd["outputPath"].as_str().map(std::path::Path::new);
            s.export_html(path, None)
                .map(|path| Some(json!({"path": path.to_string_lossy()})))
        }
        Read::GetCheckpoints => Ok(Some(crate::modes::rpc_rewind::get_checkpoints(s))),
    };
    respond(ctx, s, &id, kind, result);
}

/// Writes the response, then the session writes the command made that failed (runs report
/// theirs as events themselves).
fn respond(
    ctx: &Ctx,
    s: &mut crate::harness::AgentSession,
    id: &Option<Value>,
    kind: &str,
    result: Result<Option<Value>, String>,
) {
    ctx.out.line(&response(id, kind, result));
    for error in std::mem::take(&mut s.write_errors) {
        ctx.out
            .text_line(AgentEvent::SessionWriteError { error }.to_json_line());
    }
}

/// Commands that change the session: only between runs.
fn change_session(
    ctx: &Ctx,
    s: &mut crate::harness::AgentSession,
    env: &mut crate::harness::op::ActorEnv,
    cmd: &Value,
    kind: &str,
    change: Change,
) -> Result<Option<Value>, String> {
    let out = &ctx.out;
    match change {
        Change::SetThinkingLevel => {
            let level = cmd["level"]
                .as_str()
                .and_then(ThinkingLevel::parse)
                .ok_or("Invalid thinking level")?;
            announce_thinking(s.set_thinking_level(level), out);
            Ok(None)
        }
        Change::CycleThinkingLevel => match s.cycle_thinking_level() {
            Some(level) => {
                out.line(&json!({"type": "thinking_level_changed", "level": level}));
                Ok(Some(json!({"level": level})))
            }
            None => Ok(Some(Value::Null)),
        },
        Change::SetSteeringMode | Change::SetFollowUpMode => {
            let mode = cmd["mode"]
                .as_str()
                .and_then(QueueMode::parse)
                .ok_or("Invalid mode")?;
            s.set_queue_mode(change == Change::SetSteeringMode, mode);
            Ok(None)
        }
        Change::SetAutoRetry => {
            s.set_auto_retry(cmd["enabled"].as_bool().unwrap_or(true));
            Ok(None)
        }
        Change::SetAutoCompaction => {
            s.set_auto_compaction(cmd["enabled"].as_bool().unwrap_or(true));
            Ok(None)
        }
        Change::SetSessionName => {
            let name = string_field(cmd, "name")?;
            ops::set_name(&mut s.session, name)?;
            let name = s.session.name().unwrap_or_else(|| name.trim().to_string());
            out.line(&json!({"type": "session_info_changed", "name": name}));
            Ok(None)
        }
        Change::SetModel => {
            let (provider, id) = (
                cmd["provider"].as_str().unwrap_or(""),
                cmd["modelId"].as_str().unwrap_or(""),
            );
            let model = (env.available_models)()
                .into_iter()
                .find(|m| m.provider == provider && m.id == id)
                .ok_or_else(|| format!("Model not found: {provider}/{id}"))?;
            let credentials = (env.credentials)(&model)?;
            let changed = s.set_model(model.clone(), credentials)?;
            env.has_model = true;
            announce_thinking(changed, out);
            Ok(Some(serde_json::to_value(&model).unwrap_or_default()))
        }
        Change::Compact => {
            let r = s.compact_with_events(cmd["customInstructions"].as_str(), &mut |e| {
                out.line(&e.to_json())
            })?;
            Ok(Some(s.compaction_json(&r)))
        }
        Change::NewSession | Change::SwitchSession | Change::Fork | Change::Clone => {
            match rpc_session::target(kind, cmd) {
                Some(to) => s
                    .switch_to(&to, &mut env.switch_env())
                    .map(|r| Some(rpc_session::switched_json(r))),
                None => Err(format!("Unknown command: {kind}")),
            }
        }
        Change::Rewind => crate::modes::rpc_rewind::rewind(s, cmd),
        Change::CycleModel => {
            let available = (env.available_models)();
            let before = s.agent().thinking;
            let credentials = &env.credentials;
            match s.cycle_model(true, &available, &|m| credentials(m))? {
                None => Ok(Some(Value::Null)),
                Some(c) => {
                    env.has_model = true;
                    announce_thinking((c.thinking != before).then_some(c.thinking), out);
                    Ok(Some(json!({"model": c.model, "thinkingLevel": c.thinking,
                        "isScoped": c.scoped})))
                }
            }
        }
    }
}

/// A prompt on the idle session: checked, then run on the actor, answered once pi would
/// (when the run is about to start, or when an extension command or `input` hook took it).
fn prompt(ctx: &Ctx, idle: Idle<'_>, cmd: &Value, id: Option<Value>) {
    let Idle {
        session: s,
        env,
        emit,
    } = idle;
    let text = match string_field(cmd, "message") {
        Ok(t) => t.to_string(),
        Err(e) => return ctx.out.line(&response(&id, "prompt", Err(e))),
    };
    let is_command = s.is_extension_command(&text);
    if !is_command && (!env.has_model || s.agent().options.api_key.is_empty()) {
        ctx.out.line(&response(&id, "prompt", Err(
            "No API key found for the selected model.\n\nSet a provider key (for example ANTHROPIC_API_KEY or OPENAI_API_KEY), add one to ~/.pi/agent/auth.json, or use set_model.".into(),
        )));
        return;
    }
    let input = UserInput {
        text,
        images: images(cmd),
        source: InputSource::Rpc,
    };
    let mut answered = false;
    let mut answer = |d: Disposition| {
        if !std::mem::replace(&mut answered, true) {
            ctx.out
                .line(&response(&id, "prompt", Ok(Some(disposition(d)))));
        }
    };
    let expand = |t: &str| ctx.resources.expand_input(t);
    s.submit_reporting(input, &expand, emit, &mut answer);
    answer(Disposition::Handled);
}

/// `steer` / `follow_up`: the message joins its queue (the running agent's, or the idle
/// session's for the next run).
fn queue(ctx: &Ctx, cmd: &Value, steer: bool) -> Result<Option<Value>, String> {
    let text = string_field(cmd, "message")?;
    let message = user_message(cmd, ctx.resources.expand_input(text));
    if steer { &ctx.steering } else { &ctx.follow_up }.push(message);
    ctx.queue_report
        .update(&ctx.out, &ctx.steering, &ctx.follow_up, true);
    Ok(Some(disposition(Disposition::Queued)))
}

/// `clear_queue`: empties both queues and returns their texts.
fn clear_queue(ctx: &Ctx) -> Result<Option<Value>, String> {
    let texts = |q: &MessageQueue| -> Vec<String> {
        q.clear()
            .iter()
            .map(|m| match m {
                Message::User(u) => ops::user_content_text(&u.content),
                _ => String::new(),
            })
            .collect()
    };
    let data = json!({"steering": texts(&ctx.steering), "followUp": texts(&ctx.follow_up)});
    ctx.queue_report
        .update(&ctx.out, &ctx.steering, &ctx.follow_up, true);
    Ok(Some(data))
}

/// The thinking levels `model` supports (`["off"]` without reasoning; every level when no
/// model is selected).
fn thinking_levels(model: Option<&crate::ai::Model>) -> Value {
    let levels = match model {
        Some(m) => crate::resources::model_resolve::supported_thinking_levels(m),
        None => ThinkingLevel::ALL.to_vec(),
    };
    json!({"levels": levels})
}

/// pi's `getLastAssistantText`: `{text}`, or `{}` when there is none.
fn last_assistant_text(text: Option<String>) -> Value {
    match text.filter(|t| !t.is_empty()) {
        Some(t) => json!({"text": t}),
        None => json!({}),
    }
}

/// `get_state`'s answer from what is known of the session.
fn state(view: &RunView, streaming: bool, message_count: usize) -> Value {
    let mut m = Map::new();
    if view.has_model {
        m.insert(
            "model".into(),
            serde_json::to_value(&view.model).unwrap_or_default(),
        );
    }
    m.insert("thinkingLevel".into(), view.thinking.as_str().into());
    m.insert("isStreaming".into(), streaming.into());
    m.insert("isCompacting".into(), false.into());
    m.insert("steeringMode".into(), mode_name(view.steering_mode).into());
    m.insert("followUpMode".into(), mode_name(view.follow_up_mode).into());
    if let Some(p) = &view.session_file {
        m.insert("sessionFile".into(), p.to_string_lossy().into());
    }
    m.insert("sessionId".into(), view.session_id.clone().into());
    if let Some(name) = &view.session_name {
        m.insert("sessionName".into(), name.clone().into());
    }
    m.insert("autoCompactionEnabled".into(), view.auto_compaction.into());
    // Sandbox (issue 16): ours only, and only when on, so the state stays pi's otherwise.
    let sandbox = crate::util::sandbox::active_mode();
    if sandbox != crate::util::sandbox::Mode::Off {
        m.insert("sandbox".into(), sandbox.as_str().into());
    }
    // pi counts its agent messages: system checkpoints and `!!` bash runs included, as the
    // running count (the run's view of those messages) does.
    m.insert("messageCount".into(), message_count.into());
    m.insert(
        "pendingMessageCount".into(),
        (view.steering.len() + view.follow_up.len()).into(),
    );
    Value::Object(m)
}

/// `get_commands`: extension commands (of `host`), prompt templates and skills.
fn commands(ctx: &Ctx, host: Option<Arc<crate::extensions::ExtensionHost>>) -> Value {
    let resources = &ctx.resources;
    let mut list = Vec::new();
    for c in host.iter().flat_map(|h| h.commands()) {
        // `-e` extensions are pi's `cli` source with `temporary` scope.
        let source_info = match c.scope {
            crate::extensions::Scope::Temporary => json!({"path": c.extension_path,
                "source": "cli", "scope": "temporary", "origin": "top-level"}),
            scope => {
                let mut info = resources.source_info(std::path::Path::new(&c.extension_path), None);
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
    for t in &resources.templates {
        list.push(
            json!({"name": t.name, "description": t.description, "source": "prompt",
            "sourceInfo": resources.source_info(&t.file_path, None)}),
        );
    }
    for sk in &resources.skills {
        list.push(json!({"name": format!("skill:{}", sk.name), "description": sk.description, "source": "skill",
            "sourceInfo": resources.source_info(&sk.file_path, Some(&sk.base_dir))}));
    }
    json!({"commands": list})
}

fn announce_thinking(changed: Option<ThinkingLevel>, out: &super::Out) {
    if let Some(level) = changed {
        out.line(&json!({"type": "thinking_level_changed", "level": level}));
    }
}
