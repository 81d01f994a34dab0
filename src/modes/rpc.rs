//! `--mode rpc`: JSON lines on stdin are commands, JSON lines on stdout are responses and
//! events, as pi's RPC protocol defines them. Records split on `\n` only (a trailing `\r` is
//! dropped), so U+2028/U+2029 inside strings never split a command.
//!
//! A prompt runs on a worker thread that owns the session while it runs and hands it back over
//! a channel when done. Meanwhile queries are answered from a snapshot the worker keeps
//! current, and `steer`/`follow_up`/`abort` reach the run through the agent's shared queues and
//! abort flag. A command that needs the session while the worker holds it outside its agent
//! loop (running an extension command, or wrapping up after `agent_end`) waits in line: it is
//! handled the moment the session comes back or the loop starts, so a client that sends its
//! next prompt right after `agent_end` finds the server idle. `abort` is answered once the run
//! has ended, which never takes long: no wait in the run is unbounded. EOF on stdin ends the
//! server with exit 0 once the work in hand is done.
//!
//! Files: `rpc_input.rs` reads records and parses them into commands, `rpc_commands.rs`
//! handles each command, `rpc_entries.rs` the entry and tree queries, `rpc_bash.rs` the `bash`
//! command (its thread and results, driven from here), `rpc_session.rs` the commands that
//! replace the session, `rpc_ui.rs` extension dialogs, `rpc_out.rs` the shared stdout writer
//! and the response line.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crossbeam_channel::{select, Receiver};
use serde_json::{json, Value};

use crate::agent::{AgentEvent, MessageQueue};
use crate::ai::{Message, Model, ThinkingLevel};
use crate::harness::user_bash::BashUpdate;
use crate::harness::AgentSession;
use crate::resources::loader::Resources;
use crate::session::AgentMessage;
use crate::util::reply::{self, ReplyRx};

use super::rpc_out::response;
pub(crate) use super::rpc_out::Out;
use super::rpc_session;
use crate::harness::session_switch::SwitchEnv;

#[path = "rpc_bash.rs"]
mod bash;
#[path = "rpc_commands.rs"]
mod commands;
#[path = "rpc_entries.rs"]
mod entries;
#[path = "rpc_input.rs"]
pub mod input;

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

impl RpcEnv {
    /// What a session switch needs of this environment.
    fn switch_env(&mut self) -> SwitchEnv<'_> {
        SwitchEnv {
            available_models: &*self.available_models,
            credentials: &*self.credentials,
            has_model: &mut self.has_model,
            session_dir: &self.session_dir,
        }
    }
}

/// What queries see while a run holds the session.
#[derive(Default)]
struct Snapshot {
    messages: Vec<AgentMessage>,
}

/// The steering and follow-up texts last reported in a `queue_update`, so a delivered
/// message (which leaves its queue) is reported once.
#[derive(Clone, Default)]
struct QueueReport(Arc<Mutex<(Vec<String>, Vec<String>)>>);

impl QueueReport {
    /// Writes `queue_update` if the queues differ from what was last reported (or `force`).
    fn update(&self, out: &Out, steering: &MessageQueue, follow_up: &MessageQueue, force: bool) {
        let now = (queue_texts(steering), queue_texts(follow_up));
        let mut last = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if force || *last != now {
            out.line(&json!({"type": "queue_update", "steering": now.0, "followUp": now.1}));
            *last = now;
        }
    }
}

fn queue_texts(q: &MessageQueue) -> Vec<String> {
    q.peek()
        .iter()
        .map(|m| match m {
            Message::User(u) => crate::session::ops::user_content_text(&u.content),
            _ => String::new(),
        })
        .collect()
}

/// A run holding the session on its worker thread.
struct Running {
    /// The session, handed back when the work is done; disconnected if the worker died.
    done: ReplyRx<AgentSession>,
    /// A message each time the run's agent loop starts.
    loop_started: Receiver<()>,
    /// Whether the agent loop is between `agent_start` and `agent_end`. Outside of that the
    /// run is a command, a preflight, a retry wait or wrapping up.
    in_loop: Arc<AtomicBool>,
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
    queue_report: QueueReport,
    bash: bash::BashState,
    /// Lines that wait for the session (see the module doc), in arrival order.
    waiting: VecDeque<String>,
    /// Ids of `abort` commands to answer once the run has ended.
    aborts: Vec<Option<Value>>,
    /// Extension dialogs waiting for the client's `extension_ui_response`.
    ui: Arc<super::rpc_ui::RpcUi>,
    /// The session's extensions (also reachable while a run holds the session).
    extensions: Option<Arc<crate::extensions::ExtensionHost>>,
}

/// Reads stdin on its own thread: dialog answers go straight to the waiting dialog (the main
/// loop may itself be waiting on an extension that waits on this answer), every other line to
/// the main loop; the channel disconnects at EOF (after the last line). Detached on purpose: it
/// ends at stdin EOF, or with the process.
fn spawn_stdin_reader(answers: Arc<super::rpc_ui::RpcUi>) -> Receiver<String> {
    let (tx, lines) = crossbeam_channel::unbounded::<String>();
    let _ = std::thread::Builder::new()
        .name("pi-rpc-stdin".into())
        .spawn(move || {
            input::read_records(std::io::stdin().lock(), |record| {
                if let Some(v) = input::ui_response(&record) {
                    answers.resolve(&v);
                    return true;
                }
                tx.send(record).is_ok()
            });
        });
    lines
}

/// Runs the server until stdin closes; returns the exit code.
pub fn run(session: AgentSession, env: RpcEnv) -> i32 {
    let out = Out::new(Box::new(std::io::stdout()));
    let ui = Arc::new(super::rpc_ui::RpcUi::new(out.clone()));
    // Sandbox (issue 16): "run once without the sandbox?" is a confirm request to the client;
    // one that does not answer within two minutes has said no.
    crate::tools::sandbox::set_asker(Some(super::sandbox_asker(
        Arc::clone(&ui) as Arc<dyn crate::extensions::ui::ExtensionUi>,
        Some(std::time::Duration::from_secs(120)),
    )));
    let lines = spawn_stdin_reader(Arc::clone(&ui));
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
    // Resuming parsed the transcript through a few transient copies (issue 35).
    crate::util::heap::release_free_memory();
    let mut server = Server {
        ui,
        out,
        bash: bash::BashState::new(session.agent().cwd.clone()),
        env,
        idle: Some(session),
        running: None,
        snapshot: Arc::new(Mutex::new(Snapshot::default())),
        queue_report: QueueReport::default(),
        waiting: VecDeque::new(),
        aborts: Vec::new(),
        extensions: extensions.clone(),
    };
    let never = crossbeam_channel::never::<()>();
    let never_done = ReplyRx::<AgentSession>::never();
    let never_bash = crossbeam_channel::never::<BashUpdate>();
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
        let (done, loop_started) = match &server.running {
            Some(r) => (r.done.clone(), r.loop_started.clone()),
            None => (never_done.clone(), never.clone()),
        };
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
                // Empty lines too: pi answers them with a parse error.
                Ok(l) => server.on_line(l),
                Err(_) => break,
            },
            recv(done.raw()) -> session => server.session_back(session.ok().map(reply::open)),
            recv(loop_started) -> _ => server.handle_waiting(),
            recv(bash_done) -> r => server.bash_done(r),
            recv(idle_actions) -> _ => server.start_run(|s, on_event| s.run_extension_work(on_event)),
            // A signal: commands are already killed and the run aborted; what is left is
            // to let the run end (its last lines reach the session) and stop extensions.
            recv(shutdown) -> _ => break,
        }
    }
    if crate::util::shutdown::signal().is_none() {
        // EOF: let a running command and prompt finish (and the lines waiting for them), as
        // pi does on graceful shutdown.
        server.finish();
    } else {
        // A signal: the command is killed and answered, the run aborted; their last lines
        // still reach the session.
        server.answer_killed_bash();
        server.stop_run();
    }
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
            let env = &mut self.env.switch_env();
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

    /// Commands meant for a running agent: they never wait for the session.
    fn reaches_the_run(kind: &str) -> bool {
        matches!(
            kind,
            "abort" | "abort_retry" | "steer" | "follow_up" | "clear_queue"
        )
    }

    /// Queries answered from the session itself, which wait while a run holds it.
    fn reads_the_session(kind: &str) -> bool {
        matches!(
            kind,
            "get_entries"
                | "get_tree"
                | "get_session_stats"
                | "get_fork_messages"
                | "export_html"
                | "get_checkpoints"
        )
    }

    /// Whether a command of `kind` must wait now (ignoring the lines already waiting).
    fn must_wait(&self, kind: &str) -> bool {
        if kind == "abort_bash" {
            return false;
        }
        if self.bash.is_running() {
            return true;
        }
        if Self::reaches_the_run(kind) {
            return false;
        }
        // After an `abort`, later commands see the session it leaves behind.
        if !self.aborts.is_empty() {
            return true;
        }
        self.running
            .as_ref()
            .is_some_and(|r| !r.in_loop.load(Ordering::SeqCst) || Self::reads_the_session(kind))
    }

    /// A line from stdin: handled now, or put in line behind the ones waiting.
    fn on_line(&mut self, line: String) {
        let kind = input::command_kind(&line);
        if kind == "extension_ui_response" {
            // Answers reach a waiting dialog whatever else is going on; no response line.
            if let Ok(v) = serde_json::from_str::<Value>(&line) {
                self.ui.resolve(&v);
            }
            return;
        }
        // Behind lines already waiting, everything waits too (order is kept), except what
        // stops or steers the work in hand.
        let overtakes =
            kind == "abort_bash" || (Self::reaches_the_run(&kind) && !self.bash.is_running());
        if (!self.waiting.is_empty() && !overtakes) || self.must_wait(&kind) {
            self.waiting.push_back(line);
            return;
        }
        self.handle_line(&line);
    }

    /// Handles the waiting lines that no longer need to wait, in order.
    fn handle_waiting(&mut self) {
        while let Some(line) = self.waiting.front() {
            if self.must_wait(&input::command_kind(line)) {
                return;
            }
            let line = self.waiting.pop_front().expect("front exists");
            self.handle_line(&line);
        }
    }

    /// The worker handed the session back (or died).
    fn session_back(&mut self, session: Option<AgentSession>) {
        let Some(r) = self.running.take() else { return };
        let Some(session) = session else {
            // The run's thread died; the session file keeps every entry written so far,
            // but there is no session left to serve.
            eprintln!(
                "Error: the agent run failed unexpectedly; restart pi to continue the session."
            );
            std::process::exit(1);
        };
        r.abort.reset();
        // The snapshot answered queries while the run held the session; idle, they read the
        // session itself, so the copy of the conversation goes (issue 35: held once).
        std::mem::take(
            &mut self
                .snapshot
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .messages,
        );
        crate::util::heap::release_free_memory();
        self.idle = Some(session);
        self.flush_bash();
        self.perform_mode_requests();
        for id in std::mem::take(&mut self.aborts) {
            self.out.line(&response(&id, "abort", Ok(None)));
        }
        self.handle_waiting();
    }

    fn start_bash(&mut self, cmd: &Value, id: Option<Value>) {
        let session_cwd = self.idle.as_ref().map(|s| s.agent().cwd.clone());
        let host = self.extensions.clone();
        self.bash.start(cmd, id, session_cwd, &self.out, host);
    }

    fn abort_bash(&mut self) {
        self.bash.abort();
    }

    /// The running command ended: record it, answer, then handle the lines that waited.
    fn bash_done(&mut self, done: Result<BashUpdate, crossbeam_channel::RecvError>) {
        if let Some(line) = self.bash.finished(done, self.idle.as_mut()) {
            self.out.line(&line);
        }
        self.handle_waiting();
    }

    /// At stdin EOF: let running commands (and the lines behind them) finish.
    fn finish_bash(&mut self) {
        while let Some(done) = self.bash.done() {
            let r = done.recv();
            self.bash_done(r);
        }
    }

    /// Moves recorded bash results into the session and the agent's context, once idle.
    fn flush_bash(&mut self) {
        if let Some(s) = self.idle.as_mut() {
            self.bash.flush(s);
        }
    }

    /// After a signal: answers the running command, already killed, so a client waiting on
    /// its id is not left hanging. Nothing queued behind it starts.
    fn answer_killed_bash(&mut self) {
        let Some(done) = self.bash.done() else {
            return;
        };
        // Its reader returns within the abort's bound even if an escaped process holds the
        // pipes open.
        self.bash.abort();
        let r = done.recv();
        if let Some(line) = self.bash.finished(r, self.idle.as_mut()) {
            self.out.line(&line);
        }
    }

    /// After a signal: aborts the run and waits for it to hand the session back (no wait in a
    /// run is unbounded), handling nothing more.
    fn stop_run(&mut self) {
        if let Some(r) = self.running.take() {
            r.abort.abort();
            let _ = r.done.recv();
        }
    }

    /// At EOF: lets the work in hand and the lines waiting for it finish.
    fn finish(&mut self) {
        loop {
            self.finish_bash();
            if let Some(r) = &self.running {
                let (done, started) = (r.done.clone(), r.loop_started.clone());
                select! {
                    recv(done.raw()) -> s => self.session_back(s.ok().map(reply::open)),
                    recv(started) -> _ => self.handle_waiting(),
                }
            } else if !self.waiting.is_empty() {
                self.handle_waiting();
            } else {
                return;
            }
        }
    }

    /// Hands the idle session to a worker thread that runs `work` on it, streaming its events,
    /// and sends the session back when done.
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
        self.snapshot
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .messages = session.agent_messages();
        let (done_tx, done) = reply::reply();
        let (started_tx, loop_started) = crossbeam_channel::unbounded();
        let in_loop = Arc::new(AtomicBool::new(false));
        let mut listener = RunListener {
            out: self.out.clone(),
            snapshot: Arc::clone(&self.snapshot),
            queues: (steering.clone(), follow_up.clone()),
            queue_report: self.queue_report.clone(),
            in_loop: Arc::clone(&in_loop),
            loop_started: started_tx,
        };
        // Detached on purpose: it hands the session back over `done`; if it dies, `done`
        // disconnects and the main loop reports it.
        let spawned = std::thread::Builder::new()
            .name("pi-rpc-run".into())
            .spawn(move || {
                work(&mut session, &mut |ev| listener.on_event(ev));
                listener.in_loop.store(false, Ordering::SeqCst);
                let _ = done_tx.send(session);
            });
        if let Err(e) = spawned {
            eprintln!("Error: could not start the agent run: {e}");
            std::process::exit(1);
        }
        self.running = Some(Running {
            done,
            loop_started,
            in_loop,
            steering,
            follow_up,
            abort,
            model,
            thinking,
            state,
        });
    }
}

/// What the worker does with each event: keep the query snapshot current, report delivered
/// queue messages, and write the event line (flushed before the run goes on).
struct RunListener {
    out: Out,
    snapshot: Arc<Mutex<Snapshot>>,
    queues: (MessageQueue, MessageQueue),
    queue_report: QueueReport,
    in_loop: Arc<AtomicBool>,
    loop_started: crossbeam_channel::Sender<()>,
}

impl RunListener {
    fn on_event(&mut self, ev: &AgentEvent) {
        match ev {
            AgentEvent::AgentStart => {
                self.in_loop.store(true, Ordering::SeqCst);
                let _ = self.loop_started.send(());
            }
            AgentEvent::AgentEnd { .. } => self.in_loop.store(false, Ordering::SeqCst),
            // A queued message being delivered has left its queue: pi reports the queues
            // before the message starts.
            AgentEvent::MessageStart {
                message: Message::User(_),
            } => self
                .queue_report
                .update(&self.out, &self.queues.0, &self.queues.1, false),
            _ => {}
        }
        let snap = || self.snapshot.lock().unwrap_or_else(|p| p.into_inner());
        match ev {
            AgentEvent::MessageEnd { message } => {
                snap().messages.push(AgentMessage::Llm(message.clone()))
            }
            AgentEvent::CustomMessageEnd { message } => {
                snap().messages.push(AgentMessage::Custom(message.clone()))
            }
            // The failed reply leaves the live context for the retry.
            AgentEvent::AutoRetryStart { .. } => {
                let mut snap = snap();
                if matches!(
                    snap.messages.last(),
                    Some(AgentMessage::Llm(Message::Assistant(_)))
                ) {
                    snap.messages.pop();
                }
            }
            _ => {}
        }
        self.out.text_line(ev.to_json_line());
        // The tool waits for this to return (see `agent::execute`): a client that snapshots a
        // file when an `edit`/`write` starts, to show a diff when it ends (pi-acp does), gets
        // a moment to read it first. Without it the native tool often wins the race (1 run in
        // 10 in a release build); pi's own tools are slow enough that clients always win.
        if let AgentEvent::ToolExecutionStart { name, .. } = ev {
            if matches!(name.as_str(), "edit" | "write") {
                std::thread::sleep(CLIENT_READ_WINDOW);
            }
        }
    }
}

/// How long a file-changing tool waits after its start line, for clients that read the file
/// then. Far below the abort budget (100 ms).
const CLIENT_READ_WINDOW: std::time::Duration = std::time::Duration::from_millis(20);
