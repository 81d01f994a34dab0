//! `--mode rpc`: JSON lines on stdin are commands, JSON lines on stdout are responses and
//! events, as pi's RPC protocol defines them. Records split on `\n` only (a trailing `\r` is
//! dropped), so U+2028/U+2029 inside strings never split a command.
//!
//! The session lives on its actor (`harness::actor`). This loop reads commands and hands each
//! to the actor in arrival order, as a closure that answers it on the actor's thread
//! ([`Op::Peek`] for most, [`Op::Run`] for those that read the session itself), so responses
//! and events leave in the order they happen. During a run the actor answers queries from
//! its view of the run, refuses commands that change the session, and keeps the ones that
//! read it for the run's end; between runs it answers from the session. `steer`,
//! `follow_up`, `clear_queue`, `abort` and `abort_retry` reach the run here at once (the
//! shared queues and abort flag); `abort` is answered once the run has ended, which never
//! takes long: no wait in the run is unbounded. A `bash` command runs beside all of this
//! (`rpc_bash.rs`); lines that come meanwhile wait here until it ends. EOF on stdin ends the
//! server with exit 0 once the work in hand is done.
//!
//! Files: `rpc_input.rs` reads records and parses them into commands, `rpc_commands.rs`
//! answers each command on the actor, `rpc_entries.rs` the entry and tree queries,
//! `rpc_bash.rs` the `bash` command, `rpc_session.rs` the commands that replace the session,
//! `rpc_ui.rs` extension dialogs, `rpc_out.rs` the shared stdout writer and the response line.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use crossbeam_channel::{select, Receiver};
use serde_json::{json, Value};

use crate::agent::{AgentEvent, MessageQueue};
use crate::ai::{Message, Model};
use crate::harness::actor::{self, SessionActor, SessionHandle};
use crate::harness::op::{ActorEnv, ActorOptions, SessionEvent};
use crate::harness::user_bash::BashUpdate;
use crate::harness::AgentSession;
use crate::resources::loader::Resources;
use crate::session::entry::BashExecutionMessage;
use crate::util::reply::ReplyRx;

pub(crate) use super::rpc_out::Out;

#[path = "rpc_bash.rs"]
mod bash;
#[path = "rpc_commands.rs"]
mod commands;
#[path = "rpc_entries.rs"]
mod entries;
#[path = "rpc_input.rs"]
pub mod input;
#[path = "rpc_kind.rs"]
mod kind;

pub use crate::harness::model_control::Credentials;
/// Lists the models whose provider has a key configured.
pub type ModelsFn = Arc<dyn Fn() -> Vec<Model> + Send + Sync>;
/// Looks up the credentials of a model, or says why there are none.
pub type CredentialsFn = Arc<dyn Fn(&Model) -> Result<Credentials, String> + Send + Sync>;

/// What the server needs from layers above it (model credentials live with the CLI).
pub struct RpcEnv {
    pub available_models: ModelsFn,
    pub credentials: CredentialsFn,
    pub resources: Resources,
    /// False when the session started on a placeholder model.
    pub has_model: bool,
    /// Where new sessions go when the current one has no file (pi's per-cwd directory).
    pub session_dir: std::path::PathBuf,
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

/// A `bash` command about to start.
struct NextBash {
    cmd: Value,
    id: Option<Value>,
    /// Answered by the actor once the session is idle or in a run's loop.
    go: ReplyRx<()>,
    /// `abort_bash` came first: it starts cancelled.
    aborted: bool,
}

/// What the commands answered on the actor's thread share with this loop.
pub(super) struct Ctx {
    out: Out,
    resources: Resources,
    available_models: ModelsFn,
    queue_report: QueueReport,
    /// The session's extensions (also reachable while a run holds the session).
    extensions: Option<Arc<crate::extensions::ExtensionHost>>,
    /// The agent's steering and follow-up queues.
    steering: MessageQueue,
    follow_up: MessageQueue,
}

struct Server {
    ctx: Arc<Ctx>,
    handle: SessionHandle,
    bash: bash::BashState,
    /// A `bash` command waiting for the session to be free of work outside a run (as the
    /// actor says on this channel).
    bash_next: Option<NextBash>,
    /// Lines that wait for the running `bash` command, in arrival order.
    waiting: VecDeque<String>,
    /// Extension dialogs waiting for the client's `extension_ui_response`.
    ui: Arc<super::rpc_ui::RpcUi>,
}

/// Reads stdin on its own thread: dialog answers go straight to the waiting dialog (the actor
/// may itself be waiting on an extension that waits on this answer), every other line to the
/// main loop; the channel disconnects at EOF (after the last line). Detached on purpose: it
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
    // Approval rules (issue 34) ask the client with a `confirm` request, as the sandbox does.
    if let Some(approvals) = &session.approvals {
        approvals.set_asker(Some(crate::harness::approval::Asker {
            ui: Arc::clone(&ui) as Arc<dyn crate::extensions::ui::ExtensionUi>,
            timeout: Some(std::time::Duration::from_secs(120)),
            menu: false,
        }));
    }
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
    let ctx = Arc::new(Ctx {
        out: out.clone(),
        resources: env.resources,
        available_models: Arc::clone(&env.available_models),
        queue_report: QueueReport::default(),
        extensions: extensions.clone(),
        steering: session.agent().steering.clone(),
        follow_up: session.agent().follow_up.clone(),
    });
    let bash = bash::BashState::new(session.agent().cwd.clone());
    let (models, credentials) = (env.available_models, env.credentials);
    let actor_env = ActorEnv {
        available_models: Box::new(move || models()),
        credentials: Box::new(move |m| credentials(m)),
        has_model: env.has_model,
        session_dir: env.session_dir,
    };
    let options = ActorOptions {
        apply_session_requests: true,
    };
    let spawned = actor::spawn(session, actor_env, options, listener(&ctx));
    let (handle, actor) = match spawned {
        Ok(started) => started,
        Err(e) => {
            eprintln!("Error: {e}");
            return 1;
        }
    };
    let mut server = Server {
        ctx,
        handle,
        bash,
        bash_next: None,
        waiting: VecDeque::new(),
        ui,
    };
    let abort = server.handle.abort_flag();
    crate::util::shutdown::take_over(move || abort.abort());
    let shutdown = crate::util::shutdown::notice();
    let never = crossbeam_channel::never::<()>();
    let never_bash = crossbeam_channel::never::<BashUpdate>();
    let never_go = ReplyRx::<()>::never();
    let actions = extensions
        .as_ref()
        .map(|h| h.action_signal())
        .unwrap_or_else(|| never.clone());
    loop {
        let bash_done = server.bash.done().unwrap_or_else(|| never_bash.clone());
        let bash_go = match &server.bash_next {
            Some(next) => next.go.clone(),
            None => never_go.clone(),
        };
        select! {
            recv(bash_go.raw()) -> _ => server.start_bash(),
            recv(lines) -> line => match line {
                // Empty lines too: pi answers them with a parse error.
                Ok(l) => server.on_line(l),
                Err(_) => break,
            },
            recv(bash_done) -> r => server.bash_done(r),
            // Session changes extensions ask for are applied (and their prompts run) on the
            // actor; during a run, once it ends.
            recv(actions) -> _ => server.extension_work(),
            // A signal: commands are already killed and the run aborted; what is left is
            // to let the run end (its last lines reach the session) and stop extensions.
            recv(shutdown) -> _ => break,
        }
    }
    if crate::util::shutdown::signal().is_none() {
        // EOF: let a running command and prompt finish (and the lines waiting for them), as
        // pi does on graceful shutdown.
        server.finish_bash();
        server.handle.shutdown();
    } else {
        // A signal: the command is killed and answered, the run aborted; their last lines
        // still reach the session. Nothing queued behind them starts.
        match server.answer_killed_bash() {
            Some(message) => server
                .handle
                .halt_then(move |idle| crate::harness::user_bash::record(idle.session, message)),
            None => server.handle.halt(),
        }
    }
    drop(server);
    finish(actor);
    if let Some(host) = extensions {
        host.shutdown();
    }
    0
}

/// Waits for the actor to end.
fn finish(actor: SessionActor) {
    if actor.join().is_err() {
        // The session file keeps every entry written so far.
        eprintln!("Error: the agent run failed unexpectedly; restart pi to continue the session.");
        std::process::exit(1);
    }
}

/// What the actor's thread does with each event: report delivered queue messages and write
/// the event line (flushed before the run goes on).
fn listener(ctx: &Arc<Ctx>) -> crate::harness::op::Listener {
    let ctx = Arc::clone(ctx);
    Box::new(move |ev| {
        let SessionEvent::Agent(ev) = ev else {
            return;
        };
        // A queued message being delivered has left its queue: pi reports the queues before
        // the message starts.
        if let AgentEvent::MessageStart {
            message: Message::User(_),
        } = ev
        {
            ctx.queue_report
                .update(&ctx.out, &ctx.steering, &ctx.follow_up, false);
        }
        ctx.out.text_line(ev.to_json_line());
        // The tool waits for this to return (see `agent::execute`): a client that snapshots a
        // file when an `edit`/`write` starts, to show a diff when it ends (pi-acp does), gets
        // a moment to read it first. Without it the native tool often wins the race (1 run in
        // 10 in a release build); pi's own tools are slow enough that clients always win.
        if let AgentEvent::ToolExecutionStart {
            name,
            parent_id: None,
            ..
        } = ev
        {
            if matches!(name.as_str(), "edit" | "write") {
                std::thread::sleep(CLIENT_READ_WINDOW);
            }
        }
    })
}

/// How long a file-changing tool waits after its start line, for clients that read the file
/// then. Far below the abort budget (100 ms).
const CLIENT_READ_WINDOW: std::time::Duration = std::time::Duration::from_millis(20);

impl Server {
    /// A line from stdin: handled now, or put in line behind the ones waiting for `bash`.
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
        let command = kind::Command::parse(&kind);
        let abort_bash = command == Some(kind::Command::Loop(kind::Loop::AbortBash));
        let reaches_the_run =
            matches!(command, Some(kind::Command::Loop(l)) if l.reaches_the_run());
        let overtakes = abort_bash || (reaches_the_run && !self.bash.is_running());
        let must_wait = !abort_bash && self.bash_busy();
        if (!self.waiting.is_empty() && !overtakes) || must_wait {
            self.waiting.push_back(line);
            return;
        }
        self.handle_line(&line);
    }

    /// Whether a `bash` command runs or is about to.
    fn bash_busy(&self) -> bool {
        self.bash.is_running() || self.bash_next.is_some()
    }

    /// Handles the lines that waited for `bash`, in order (until one starts another).
    fn handle_waiting(&mut self) {
        while !self.bash_busy() {
            let Some(line) = self.waiting.pop_front() else {
                return;
            };
            self.handle_line(&line);
        }
    }

    /// A `bash` command starts once the session is in a run's loop or idle (not while it
    /// runs an extension command or wraps a run up), as a prompt sent before it would see.
    fn queue_bash(&mut self, cmd: Value, id: Option<Value>) {
        let go = self.handle.peek(|_| ());
        self.bash_next = Some(NextBash {
            cmd,
            id,
            go,
            aborted: false,
        });
    }

    fn start_bash(&mut self) {
        let Some(next) = self.bash_next.take() else {
            return;
        };
        let host = self.ctx.extensions.clone();
        self.bash
            .start(&next.cmd, next.id, None, &self.ctx.out, host);
        if next.aborted {
            self.bash.abort();
        }
    }

    /// `abort_bash`: stops the running command, or the one about to start.
    pub(super) fn abort_bash(&mut self) {
        match &mut self.bash_next {
            Some(next) => next.aborted = true,
            None => self.bash.abort(),
        }
    }

    /// The running command ended: its result goes to the session (once no run holds it),
    /// its response is written, then the lines that waited are handled.
    fn bash_done(&mut self, done: Result<BashUpdate, crossbeam_channel::RecvError>) {
        if let Some((line, message)) = self.bash.finished(done) {
            if let Some(message) = message {
                self.handle
                    .run(move |idle| crate::harness::user_bash::record(idle.session, message));
            }
            self.ctx.out.line(&line);
        }
        self.handle_waiting();
    }

    /// At EOF: lets the running command (and the lines behind it) finish.
    fn finish_bash(&mut self) {
        loop {
            if let Some(next) = &self.bash_next {
                let _ = next.go.recv();
                self.start_bash();
            }
            if let Some(done) = self.bash.done() {
                let r = done.recv();
                self.bash_done(r);
                continue;
            }
            self.handle_waiting();
            if !self.bash_busy() {
                return;
            }
        }
    }

    /// After a signal: answers the running command, already killed, so a client waiting on
    /// its id is not left hanging; returns its result for the session. Nothing queued behind
    /// it starts.
    fn answer_killed_bash(&mut self) -> Option<BashExecutionMessage> {
        let done = self.bash.done()?;
        // Its reader returns within the abort's bound even if an escaped process holds the
        // pipes open.
        self.bash.abort();
        let r = done.recv();
        let (line, message) = self.bash.finished(r)?;
        self.ctx.out.line(&line);
        message
    }
}
