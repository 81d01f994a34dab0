//! `--mode rpc`: JSON lines on stdin are commands, JSON lines on stdout are responses and
//! events, as pi's RPC protocol defines them. Records split on `\n` only (a trailing `\r` is
//! dropped), so U+2028/U+2029 inside strings never split a command. A prompt runs on a worker
//! thread that owns the session while it runs; meanwhile queries are answered from a snapshot
//! the worker keeps current, and `steer`/`follow_up`/`abort` reach the run through the agent's
//! shared queues and abort flag. EOF on stdin ends the server with exit 0 once the run ends.

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crossbeam_channel::{select, Receiver};
use serde_json::{json, Map, Value};

use crate::agent::{AgentEvent, MessageQueue, QueueMode};
use crate::ai::{
    now_ms, Content, Extra, ImageContent, Message, Model, ThinkingLevel, UserContent, UserMessage,
};
use crate::harness::extensions::{InputSource, UserInput};
use crate::harness::AgentSession;
use crate::resources::loader::Resources;
use crate::session::json::to_js_string;
use crate::session::{export_html, ops};

use super::rpc_session;
#[path = "rpc_bash.rs"]
mod bash;

pub use crate::harness::model_control::Credentials;
/// Looks up the credentials of a model, or says why there are none.
pub type CredentialsFn = Box<dyn Fn(&Model) -> Result<Credentials, String>>;

/// What the server needs from layers above it (model credentials live with the CLI).
pub struct RpcEnv {
    pub available_models: Box<dyn Fn() -> Vec<Model>>,
    pub credentials: CredentialsFn,
    pub resources: Resources,
    /// False when the session started on a placeholder model.
    pub has_model: bool,
    /// Where new sessions go when the current one has no file (pi's per-cwd directory).
    pub session_dir: std::path::PathBuf,
}

/// Serialized writes of whole lines to stdout, shared by the main loop, the worker and
/// extension UI.
#[derive(Clone)]
pub(crate) struct Out(Arc<Mutex<Box<dyn Write + Send>>>);

impl Out {
    pub(crate) fn new(w: Box<dyn Write + Send>) -> Out {
        Out(Arc::new(Mutex::new(w)))
    }

    pub(crate) fn line(&self, v: &Value) {
        self.text_line(to_js_string(v));
    }

    /// Writes one already serialized JSON line.
    pub(crate) fn text_line(&self, mut text: String) {
        text.push('\n');
        let mut out = self.0.lock().unwrap_or_else(|p| p.into_inner());
        // A closed stdout means the client is gone; stdin EOF will end us.
        let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
    }
}

/// What queries see while a run holds the session.
#[derive(Default)]
struct Snapshot {
    messages: Vec<Message>,
}

struct Running {
    handle: JoinHandle<AgentSession>,
    done: Receiver<()>,
    /// Whether the agent loop is between `agent_start` and `agent_end`. Outside of that the
    /// run is a command, a preflight or wrapping up, and hands the session back in moments.
    in_loop: Arc<std::sync::atomic::AtomicBool>,
    steering: MessageQueue,
    follow_up: MessageQueue,
    abort: crate::ai::Abort,
    model: Model,
    thinking: ThinkingLevel,
    state: Value,
}

struct Server {
    out: Out,
    env: RpcEnv,
    idle: Option<AgentSession>,
    running: Option<Running>,
    snapshot: Arc<Mutex<Snapshot>>,
    bash: bash::BashState,
    /// Extension dialogs waiting for the client's `extension_ui_response`.
    ui: Arc<super::rpc_ui::RpcUi>,
    /// The session's extensions (also reachable while a run holds the session).
    extensions: Option<Arc<crate::extensions::ExtensionHost>>,
}

fn response(id: &Option<Value>, command: &str, result: Result<Option<Value>, String>) -> Value {
    let mut m = Map::new();
    if let Some(id) = id {
        m.insert("id".into(), id.clone());
    }
    m.insert("type".into(), "response".into());
    m.insert("command".into(), command.into());
    match result {
        Ok(data) => {
            m.insert("success".into(), true.into());
            if let Some(d) = data {
                m.insert("data".into(), d);
            }
        }
        Err(e) => {
            m.insert("success".into(), false.into());
            m.insert("error".into(), e.into());
        }
    }
    Value::Object(m)
}

fn user_message(cmd: &Value, text: String) -> Message {
    let mut content = vec![Content::text(text)];
    if let Some(images) = cmd.get("images").and_then(Value::as_array) {
        for img in images {
            if let (Some(data), Some(mime)) = (img["data"].as_str(), img["mimeType"].as_str()) {
                content.push(Content::Image(ImageContent {
                    data: data.into(),
                    mime_type: mime.into(),
                }));
            }
        }
    }
    Message::User(UserMessage {
        content: UserContent::Blocks(content),
        timestamp: now_ms(),
        extra: Extra::new(),
    })
}

fn queue_texts(q: &MessageQueue) -> Vec<String> {
    q.peek()
        .iter()
        .map(|m| match m {
            Message::User(u) => ops::user_content_text(&u.content),
            _ => String::new(),
        })
        .collect()
}

fn mode_name(m: QueueMode) -> &'static str {
    match m {
        QueueMode::All => "all",
        QueueMode::OneAtATime => "one-at-a-time",
    }
}

/// An `extension_ui_response` line, parsed.
fn ui_response(line: &[u8]) -> Option<Value> {
    let text = std::str::from_utf8(line).ok()?;
    if !text.contains("extension_ui_response") {
        return None;
    }
    serde_json::from_str::<Value>(text)
        .ok()
        .filter(|v| v["type"] == "extension_ui_response")
}

/// Runs the server until stdin closes; returns the exit code.
pub fn run(session: AgentSession, env: RpcEnv) -> i32 {
    let (tx, lines) = crossbeam_channel::unbounded::<Option<String>>();
    let out = Out::new(Box::new(std::io::stdout()));
    let ui = Arc::new(super::rpc_ui::RpcUi::new(out.clone()));
    // Sandbox (issue 16): "run once without the sandbox?" is a confirm request to the client;
    // one that does not answer within two minutes has said no.
    crate::tools::sandbox::set_asker(Some(super::sandbox_asker(
        Arc::clone(&ui) as Arc<dyn crate::extensions::ui::ExtensionUi>,
        Some(std::time::Duration::from_secs(120)),
    )));
    let answers = Arc::clone(&ui);
    // Detached on purpose: it ends at stdin EOF, or with the process.
    let _ = std::thread::Builder::new()
        .name("pi-rpc-stdin".into())
        .spawn(move || {
            let stdin = std::io::stdin();
            let mut reader = stdin.lock();
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if buf.last() == Some(&b'\n') {
                            buf.pop();
                        }
                        if buf.last() == Some(&b'\r') {
                            buf.pop();
                        }
                        // Dialog answers go straight to the waiting dialog: the main loop may
                        // itself be waiting on an extension that waits on this answer.
                        if let Some(v) = ui_response(&buf) {
                            answers.resolve(&v);
                            continue;
                        }
                        if tx
                            .send(Some(String::from_utf8_lossy(&buf).into_owned()))
                            .is_err()
                        {
                            return;
                        }
                    }
                }
            }
            let _ = tx.send(None);
        });
    let extensions = session.extension_host().cloned();
    if let Some(host) = &extensions {
        host.set_ui(Arc::clone(&ui) as Arc<dyn crate::extensions::ui::ExtensionUi>);
        let errors = out.clone();
        host.set_error_sink(Arc::new(move |e: &crate::extensions::ExtensionError| {
            errors.line(
                &json!({"type": "extension_error", "extensionPath": e.extension_path,
                "event": e.event, "error": e.error}),
            );
        }));
    }
    session.start_extensions("startup");
    let mut server = Server {
        ui,
        out,
        bash: bash::BashState::new(session.agent().cwd.clone()),
        env,
        idle: Some(session),
        running: None,
        snapshot: Arc::new(Mutex::new(Snapshot::default())),
        extensions: extensions.clone(),
    };
    let never = crossbeam_channel::never::<()>();
    let never_bash = crossbeam_channel::never::<bash::BashDone>();
    let abort = server.idle.as_ref().map(|s| s.abort.clone());
    crate::util::shutdown::take_over(move || {
        if let Some(a) = &abort {
            a.abort();
        }
    });
    let shutdown = crate::util::shutdown::notice();
    let actions = extensions
        .as_ref()
        .map(|h| h.action_signal())
        .unwrap_or_else(|| never.clone());
    loop {
        let done = server
            .running
            .as_ref()
            .map(|r| r.done.clone())
            .unwrap_or_else(|| never.clone());
        // Session changes extensions ask for while idle are applied (and their prompts run)
        // on a worker; during a run the worker applies them when the run ends.
        let idle_actions = if server.running.is_none() {
            actions.clone()
        } else {
            never.clone()
        };
        let bash_done = server.bash.done().unwrap_or_else(|| never_bash.clone());
        select! {
            recv(lines) -> line => match line {
                Ok(Some(l)) if l.trim().is_empty() => {}
                Ok(Some(l)) => server.on_line(l),
                _ => break,
            },
            recv(done) -> _ => server.reap(),
            recv(bash_done) -> r => server.bash_done(r),
            recv(idle_actions) -> _ => server.start_run(|s, on_event| s.run_extension_work(on_event)),
            // A signal: commands are already killed and the run aborted; what is left is
            // to let the run end (its last lines reach the session) and stop extensions.
            recv(shutdown) -> _ => break,
        }
    }
    if crate::util::shutdown::signal().is_none() {
        // EOF: let a running command and prompt finish, as pi does on graceful shutdown.
        server.finish_bash();
    } else if let Some(r) = &server.running {
        r.abort.abort();
    }
    server.wait_idle();
    if let Some(host) = extensions {
        host.shutdown();
    }
    0
}

impl Server {
    /// Session switches an extension command asked for (`ctx.newSession()`, …), once the
    /// session is back.
    fn perform_mode_requests(&mut self) {
        use crate::extensions::ModeRequest;
        let Some(host) = self.extensions.clone() else {
            return;
        };
        for request in host.take_mode_requests() {
            let Some(s) = self.idle.as_mut() else { return };
            let env = &mut self.env;
            let result = match request {
                ModeRequest::NewSession => rpc_session::new_session(s, env, &json!({})),
                ModeRequest::SwitchSession(path) => {
                    rpc_session::switch_session(s, env, &json!({ "sessionPath": path }))
                }
                ModeRequest::Fork {
                    entry_id,
                    at: false,
                } => rpc_session::fork(s, env, &json!({ "entryId": entry_id })),
                ModeRequest::Fork { at: true, .. } => rpc_session::clone(s, env, &json!({})),
                // Tree navigation, reloads and quitting belong to the terminal UI.
                _ => Ok(None),
            };
            if let Err(e) = result {
                host.report("extensions", "session", e);
            }
        }
    }

    fn reap(&mut self) {
        if let Some(r) = self.running.take() {
            let Ok(session) = r.handle.join() else {
                // The run's thread died; the session file keeps every entry written so far,
                // but there is no session left to serve.
                eprintln!(
                    "Error: the agent run failed unexpectedly; restart pi to continue the session."
                );
                std::process::exit(1);
            };
            r.abort.reset();
            self.idle = Some(session);
            self.flush_bash();
            self.perform_mode_requests();
        }
    }

    fn wait_idle(&mut self) {
        if let Some(r) = &self.running {
            let _ = r.done.recv();
        }
        self.reap();
    }

    /// A run outside its agent loop (an extension command, or just after `agent_end`) is
    /// moments from handing the session back; waiting for that (briefly) lets a command sent
    /// right after `agent_end` or a command's output find the server idle instead of "already
    /// processing". A run that enters its loop meanwhile is left alone.
    fn settle_finishing_run(&mut self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_millis(250);
        loop {
            let Some(r) = &self.running else { return };
            if r.in_loop.load(std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            if r.done.try_recv().is_ok() {
                self.reap();
                return;
            }
            if std::time::Instant::now() >= deadline {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    fn handle_line(&mut self, line: &str) {
        let cmd: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                self.out.line(
                    &json!({"type": "response", "command": "parse", "success": false,
                    "error": format!("Failed to parse command: {e}")}),
                );
                return;
            }
        };
        let id = cmd.get("id").cloned();
        let kind = cmd
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        // Commands meant for a running agent go straight to it.
        if !matches!(
            kind.as_str(),
            "abort" | "abort_retry" | "steer" | "follow_up" | "abort_bash"
        ) {
            self.settle_finishing_run();
        }
        let result = match kind.as_str() {
            "prompt" => return self.prompt(&cmd, id),
            "bash" => return self.start_bash(&cmd, id),
            "abort_bash" => {
                self.abort_bash();
                Ok(None)
            }
            "steer" | "follow_up" => self.queue(&cmd, &kind),
            "abort" => {
                if let Some(r) = &self.running {
                    r.abort.abort();
                }
                self.wait_idle();
                Ok(None)
            }
            "abort_retry" => {
                if let Some(r) = &self.running {
                    r.abort.abort();
                }
                Ok(None)
            }
            "get_state" => Ok(Some(self.state())),
            "get_messages" => Ok(Some(json!({"messages": self.messages()}))),
            "get_last_assistant_text" => {
                let text = self.messages().iter().rev().find_map(|m| match m {
                    Message::Assistant(a) => Some(a.text()),
                    _ => None,
                });
                Ok(Some(match text {
                    Some(t) => json!({"text": t}),
                    None => json!({}),
                }))
            }
            "get_available_models" => Ok(Some(json!({"models": (self.env.available_models)()}))),
            "get_commands" => Ok(Some(self.commands())),
            _ => self.with_idle(&cmd, &kind),
        };
        if result
            .as_ref()
            .is_err_and(|e| e.starts_with("Unknown command"))
        {
            // pi does not echo the id for an unknown command.
            self.out.line(&response(&None, &kind, result));
        } else {
            self.out.line(&response(&id, &kind, result));
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
        const KNOWN: &[&str] = &[
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
        ];
        if !KNOWN.contains(&kind) {
            return Err(format!("Unknown command: {kind}"));
        }
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
                set_thinking(s, level, &self.out);
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
                let name = ops::set_name(&mut s.session, cmd["name"].as_str().unwrap_or(""))?;
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
                let path = export_html::export_session_html(&s.session, out)?;
                Ok(Some(json!({"path": path.to_string_lossy()})))
            }
            "compact" => {
                let out = self.out.clone();
                let r = s.compact_with_events(cmd["customInstructions"].as_str(), &mut |e| {
                    out.line(&e.to_json())
                })?;
                Ok(Some(r.to_json()))
            }
            "new_session" => rpc_session::new_session(s, &mut self.env, cmd),
            "switch_session" => rpc_session::switch_session(s, &mut self.env, cmd),
            "fork" => rpc_session::fork(s, &mut self.env, cmd),
            "clone" => rpc_session::clone(s, &mut self.env, cmd),
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

    fn queue(&mut self, cmd: &Value, kind: &str) -> Result<Option<Value>, String> {
        let text = cmd["message"].as_str().unwrap_or("").to_string();
        let message = user_message(cmd, self.env.resources.expand_input(&text));
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
        self.out.line(&json!({"type": "queue_update", "steering": queue_texts(&steering), "followUp": queue_texts(&follow_up)}));
        Ok(None)
    }

    fn prompt(&mut self, cmd: &Value, id: Option<Value>) {
        if self.running.is_some() {
            let result = match cmd.get("streamingBehavior").and_then(Value::as_str) {
                Some("steer") => self.queue(cmd, "steer"),
                Some("followUp") => self.queue(cmd, "follow_up"),
                _ => Err("Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.".into()),
            };
            self.out.line(&response(&id, "prompt", result));
            return;
        }
        let session = self.idle.take().expect("idle when not running");
        let text = cmd["message"].as_str().unwrap_or("").to_string();
        let is_command = session.is_extension_command(&text);
        if !is_command && (!self.env.has_model || session.agent().options.api_key.is_empty()) {
            self.idle = Some(session);
            self.out.line(&response(&id, "prompt", Err(
                "No API key found for the selected model.\n\nSet a provider key (for example ANTHROPIC_API_KEY or OPENAI_API_KEY), add one to ~/.pi/agent/auth.json, or use set_model.".into(),
            )));
            return;
        }
        self.idle = Some(session);
        let images = match user_message(cmd, String::new()) {
            Message::User(UserMessage {
                content: UserContent::Blocks(mut blocks),
                ..
            }) => blocks.split_off(1),
            _ => Vec::new(),
        };
        self.out.line(&response(&id, "prompt", Ok(None)));
        let expander = Resources {
            skills: self.env.resources.skills.clone(),
            templates: self.env.resources.templates.clone(),
            ..Default::default()
        };
        let input = UserInput {
            text,
            images,
            source: InputSource::Rpc,
        };
        self.start_run(move |s, on_event| s.submit(input, &|t| expander.expand_input(t), on_event));
    }

    /// Hands the idle session to a worker thread that runs `work` on it, streaming its events.
    fn start_run<F>(&mut self, work: F)
    where
        F: FnOnce(&mut AgentSession, &mut dyn FnMut(&AgentEvent)) + Send + 'static,
    {
        let Some(mut session) = self.idle.take() else {
            return;
        };
        let agent = session.agent();
        let state = self.state_of(&session, true);
        let (steering, follow_up, model, thinking) = (
            agent.steering.clone(),
            agent.follow_up.clone(),
            agent.model.clone(),
            agent.thinking,
        );
        let abort = session.abort.clone();
        {
            let mut snap = self.snapshot.lock().unwrap_or_else(|p| p.into_inner());
            snap.messages = session.messages().to_vec();
        }
        let (done_tx, done) = crossbeam_channel::bounded(1);
        let out = self.out.clone();
        let snapshot = Arc::clone(&self.snapshot);
        let in_loop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let run_in_loop = Arc::clone(&in_loop);
        let handle = std::thread::Builder::new()
            .name("pi-rpc-run".into())
            .spawn(move || {
                work(&mut session, &mut |ev| {
                    match ev {
                        AgentEvent::AgentStart => {
                            run_in_loop.store(true, std::sync::atomic::Ordering::SeqCst)
                        }
                        AgentEvent::AgentEnd { .. } => {
                            run_in_loop.store(false, std::sync::atomic::Ordering::SeqCst)
                        }
                        _ => {}
                    }
                    if let AgentEvent::MessageEnd { message } = ev {
                        snapshot
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .messages
                            .push(message.clone());
                    }
                    out.text_line(ev.to_json_line());
                });
                let _ = done_tx.send(());
                session
            })
            .expect("failed to start the prompt thread");
        self.running = Some(Running {
            handle,
            done,
            in_loop,
            steering,
            follow_up,
            abort,
            model,
            thinking,
            state,
        });
    }

    fn messages(&self) -> Vec<Message> {
        match (&self.running, &self.idle) {
            (Some(_), _) => self
                .snapshot
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .messages
                .clone(),
            (None, Some(s)) => s.messages().to_vec(),
            (None, None) => Vec::new(),
        }
    }

    fn state(&self) -> Value {
        match (&self.running, &self.idle) {
            (Some(r), _) => {
                let mut v = r.state.clone();
                v["model"] = serde_json::to_value(&r.model).unwrap_or_default();
                v["thinkingLevel"] = r.thinking.as_str().into();
                v["messageCount"] = self.messages().len().into();
                v["pendingMessageCount"] = (r.steering.len() + r.follow_up.len()).into();
                v
            }
            (None, Some(s)) => self.state_of(s, false),
            (None, None) => Value::Null,
        }
    }

    fn state_of(&self, s: &AgentSession, streaming: bool) -> Value {
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
        m.insert("messageCount".into(), s.messages().len().into());
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
            list.push(json!({"name": c.name, "description": c.description, "source": "extension",
                "sourceInfo": {"path": c.extension_path, "source": "local", "scope": "user", "origin": "top-level"}}));
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

fn set_thinking(s: &mut AgentSession, level: ThinkingLevel, out: &Out) {
    announce_thinking(s.set_thinking_level(level), out);
}

fn announce_thinking(changed: Option<ThinkingLevel>, out: &Out) {
    if let Some(level) = changed {
        out.line(&json!({"type": "thinking_level_changed", "level": level}));
    }
}
