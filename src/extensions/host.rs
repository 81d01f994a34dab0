//! The extension host: the session's single door to its extensions (started by `load.rs`) —
//! events out, hook answers chained across extensions in load order (`hooks.rs`), the queues
//! of what they asked for (`requests.rs`; `calls.rs` fills them), what pi shares with them
//! (the session view, models, terminal width, the services of `services.rs`). An
//! extension that misses its handshake or an event deadline, crashes, or writes garbage is
//! reported once and disabled; the session carries on without it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver, Sender};
use serde_json::{json, Value};

use super::extension::Extension;
use super::process::{RequestError, SharedProcess};
use super::protocol::{FlagType, Registration};
use super::requests::{Action, ModeRequest, PendingAction, SessionView};
use super::ui::{DeferredUi, ExtensionUi, NoUi};
use crate::agent::{AgentMessage, CustomMessage, MessageQueue, StreamFn, Tool};
use crate::ai::{Abort, Model};

/// How long an extension has to answer `hello` with its registration.
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long pi waits for the answer to a blocking event.
pub const DEFAULT_EVENT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a shutting-down extension gets at each step (answer, exit after EOF, after TERM).
const SHUTDOWN_GRACE: Duration = Duration::from_millis(500);

/// A problem with one extension, as pi reports it (`extension_error` in RPC mode,
/// `Extension error (<path>): <error>` on stderr elsewhere).
#[derive(Debug, Clone, PartialEq)]
pub struct ExtensionError {
    pub extension_path: String,
    pub event: String,
    pub error: String,
}

pub type ErrorSink = Arc<dyn Fn(&ExtensionError) + Send + Sync>;
/// Receives an extension's stderr lines: `(extension name, line)`.
pub type StderrSink = Arc<dyn Fn(&str, &str) + Send + Sync>;

/// Prints errors the way pi's print and JSON modes do.
pub fn stderr_sink() -> ErrorSink {
    Arc::new(|e: &ExtensionError| {
        eprintln!("Extension error ({}): {}", e.extension_path, e.error);
    })
}

/// How the host starts its extensions.
pub struct HostOptions {
    pub cwd: std::path::PathBuf,
    /// pi's agent directory (extensions' `getAgentDir()`).
    pub agent_dir: std::path::PathBuf,
    /// Whether the project's own resources are trusted (`ctx.isProjectTrusted()`).
    pub project_trusted: bool,
    /// pi's built-in tools, for the tool factories extensions import (`createReadTool`, …).
    pub builtin_tools: Vec<Arc<dyn Tool>>,
    /// `print`, `json`, `rpc` or `interactive` (sent in `hello`).
    pub mode: String,
    /// Unknown `--flags` from the command line, for extensions to claim.
    pub cli_flags: Vec<(String, Option<String>)>,
    pub session_file: Option<String>,
    /// Whether a user can answer dialogs (pi's `ctx.hasUI`), sent in `hello`. The mode's UI
    /// itself may be attached later with `set_ui`.
    pub has_ui: bool,
    pub handshake_timeout: Duration,
    pub event_timeout: Duration,
    pub ui: Arc<dyn ExtensionUi>,
    pub errors: ErrorSink,
    /// Where extensions' stderr lines go, from the handshake on.
    pub stderr: StderrSink,
}

impl HostOptions {
    pub fn new(cwd: std::path::PathBuf, mode: &str) -> HostOptions {
        HostOptions {
            agent_dir: crate::resources::agent_dir(),
            cwd,
            project_trusted: false,
            builtin_tools: Vec::new(),
            mode: mode.into(),
            cli_flags: Vec::new(),
            session_file: None,
            has_ui: false,
            handshake_timeout: DEFAULT_HANDSHAKE_TIMEOUT,
            event_timeout: DEFAULT_EVENT_TIMEOUT,
            ui: Arc::new(NoUi),
            errors: stderr_sink(),
            stderr: Arc::new(|name: &str, line: &str| eprintln!("[{name}] {line}")),
        }
    }
}

/// Finds a model and its key and headers by provider and id.
pub type ModelLookup = Arc<
    dyn Fn(&str, &str) -> Result<(Model, (String, Vec<(String, String)>)), String> + Send + Sync,
>;

/// Lent by the session once it is set up (`ExtensionHost::set_services`).
#[derive(Default, Clone)]
pub struct HostServices {
    pub builtin_tools: Vec<Arc<dyn Tool>>,
    /// How the session streams a model's reply (pi's providers, OAuth refresh included).
    pub stream: Option<StreamFn>,
    pub lookup: Option<ModelLookup>,
    /// Approval rules the built-in tools an extension runs (`tools.run`) pass, as the
    /// model's calls do.
    pub gate: Option<crate::agent::ToolGate>,
    /// Image and classifier models with the session's credentials
    /// (`ctx.modelRegistry.generateImages()` / `classify()`).
    pub models: Option<crate::ai::images::Models>,
}

/// A command an extension registered, as listed by `get_commands` and autocomplete.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandInfo {
    pub name: String,
    pub description: Option<String>,
    pub extension_path: String,
    /// Where the extension comes from (`-e` is `temporary`).
    pub scope: super::discovery::Scope,
    /// Whether the extension completes the command's arguments.
    pub completions: bool,
}

pub struct ExtensionHost {
    pub(super) extensions: Vec<Arc<Extension>>,
    pub(super) ui: RwLock<Arc<dyn ExtensionUi>>,
    /// Holds notices until the mode installs its UI (only for modes that have one).
    deferred: Option<Arc<DeferredUi>>,
    errors: RwLock<ErrorSink>,
    /// Where extensions' stderr lines go: `(extension name, line)`.
    stderr: RwLock<StderrSink>,
    pub(super) event_timeout: Duration,
    /// The session's abort flag (dialogs and blocking hooks give up when it is raised).
    pub(super) abort: RwLock<Abort>,
    pub(super) view: Mutex<SessionView>,
    actions: Mutex<Vec<PendingAction>>,
    /// Session switches and the like that extension commands asked the mode for.
    mode_requests: Mutex<Vec<ModeRequest>>,
    /// The session's working directory (where `exec` runs by default).
    pub(super) cwd: std::path::PathBuf,
    wake_tx: Sender<()>,
    wake_rx: Receiver<()>,
    /// The agent's steering and follow-up queues, for messages sent while a run is active.
    pub(super) queues: Mutex<Option<(MessageQueue, MessageQueue)>>,
    pub(super) running: AtomicBool,
    /// The Node.js bridge process every TypeScript/JavaScript extension runs in.
    pub(super) node: Option<SharedProcess>,
    /// The session view as last sent to the bridge (only changes are sent).
    view_sent: Mutex<Value>,
    /// What the session lends extensions: model calls, built-in tools, model lookup.
    pub(super) services: RwLock<HostServices>,
    /// Bumped whenever an extension registers something new after loading.
    generation: AtomicU64,
    /// Problems already reported that would otherwise repeat (a tool name taken twice).
    noted: Mutex<std::collections::HashSet<String>>,
    /// The MCP servers extensions register (`pi.registerMcpServer`).
    mcp_servers: Arc<crate::mcp::ExtensionServers>,
}

/// What loading produced: the host, plus problems to show (`errors` are fatal for the run,
/// such as an unknown CLI flag; `warnings` are not).
pub struct Loaded {
    pub host: Arc<ExtensionHost>,
    pub errors: Vec<String>,
}

impl ExtensionHost {
    /// A host with no extensions (what `--no-extensions` without `-e` amounts to).
    pub fn empty() -> Arc<ExtensionHost> {
        Self::build(Vec::new(), &HostOptions::new(".".into(), "print"), None)
    }

    pub(super) fn build(
        extensions: Vec<Arc<Extension>>,
        opts: &HostOptions,
        node: Option<SharedProcess>,
    ) -> Arc<ExtensionHost> {
        let (wake_tx, wake_rx) = unbounded();
        // A mode with a UI installs it after the extensions have started (and may already
        // have set a status on `session_start`): keep their notices until then.
        let deferred = (opts.has_ui && !opts.ui.has_ui()).then(|| Arc::new(DeferredUi::default()));
        let ui = match &deferred {
            Some(d) => Arc::clone(d) as Arc<dyn ExtensionUi>,
            None => Arc::clone(&opts.ui),
        };
        Arc::new(ExtensionHost {
            extensions,
            ui: RwLock::new(ui),
            deferred,
            errors: RwLock::new(Arc::clone(&opts.errors)),
            stderr: RwLock::new(Arc::clone(&opts.stderr)),
            event_timeout: opts.event_timeout,
            abort: RwLock::new(Abort::new()),
            view: Mutex::new(SessionView::default()),
            actions: Mutex::new(Vec::new()),
            mode_requests: Mutex::new(Vec::new()),
            cwd: opts.cwd.clone(),
            wake_tx,
            wake_rx,
            queues: Mutex::new(None),
            running: AtomicBool::new(false),
            node,
            view_sent: Mutex::new(Value::Null),
            services: RwLock::new(HostServices {
                builtin_tools: opts.builtin_tools.clone(),
                ..Default::default()
            }),
            generation: AtomicU64::new(0),
            noted: Mutex::new(Default::default()),
            mcp_servers: crate::mcp::ExtensionServers::new(),
        })
    }

    /// The MCP servers extensions registered; the session's MCP manager connects them.
    pub fn mcp_servers(&self) -> Arc<crate::mcp::ExtensionServers> {
        Arc::clone(&self.mcp_servers)
    }

    /// Extensions still running.
    pub fn active(&self) -> impl Iterator<Item = &Arc<Extension>> {
        self.extensions.iter().filter(|e| e.process.is_alive())
    }

    /// Every extension that registered, dead or alive.
    pub fn extensions(&self) -> &[Arc<Extension>] {
        &self.extensions
    }

    pub fn is_empty(&self) -> bool {
        self.extensions.is_empty()
    }

    /// Replaces the UI dialogs and notices go to (the interactive mode registers its own).
    pub fn set_ui(&self, ui: Arc<dyn ExtensionUi>) {
        *self.ui.write().unwrap_or_else(|p| p.into_inner()) = Arc::clone(&ui);
        if let Some(d) = &self.deferred {
            d.activate(ui);
        }
    }

    pub fn ui(&self) -> Arc<dyn ExtensionUi> {
        Arc::clone(&self.ui.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// Replaces where extension errors are reported (RPC emits `extension_error`).
    pub fn set_error_sink(&self, sink: ErrorSink) {
        *self.errors.write().unwrap_or_else(|p| p.into_inner()) = sink;
    }

    pub fn report(&self, extension_path: &str, event: &str, error: impl Into<String>) {
        let sink = Arc::clone(&self.errors.read().unwrap_or_else(|p| p.into_inner()));
        sink(&ExtensionError {
            extension_path: extension_path.into(),
            event: event.into(),
            error: error.into(),
        });
    }

    /// Binds the session's abort flag and message queues.
    pub fn bind_session(&self, abort: Abort, steering: MessageQueue, follow_up: MessageQueue) {
        *self.abort.write().unwrap_or_else(|p| p.into_inner()) = abort;
        *self.queues.lock().unwrap_or_else(|p| p.into_inner()) = Some((steering, follow_up));
    }

    pub fn session_abort(&self) -> Abort {
        self.abort.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Tells the host whether a run is active (calls that need the session are then deferred
    /// or routed to the run's queues).
    pub fn set_running(&self, running: bool) {
        self.running.store(running, Ordering::SeqCst);
        self.push_view();
    }

    pub fn is_running(&self) -> bool {
        self.running.load(Ordering::SeqCst)
    }

    /// Updates what getters (`getActiveTools`, `getThinkingLevel`, …) answer.
    pub fn update_view(&self, f: impl FnOnce(&mut SessionView)) {
        f(&mut self.view.lock().unwrap_or_else(|p| p.into_inner()));
        self.push_view();
    }

    fn push_view(&self) {
        if self.node.is_some() {
            let view = self
                .view
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .to_json(!self.is_running());
            self.share_view(view);
        }
    }

    /// Records a `custom` session entry at the next safe point (no one waits for it).
    pub fn queue_entry(&self, custom_type: &str, data: Option<Value>) {
        self.push_action(PendingAction {
            action: Action::AppendEntry {
                custom_type: custom_type.to_string(),
                data,
            },
            reply: None,
        });
    }

    pub(super) fn push_action(&self, action: PendingAction) {
        self.actions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(action);
        let _ = self.wake_tx.send(());
    }

    pub(super) fn push_mode_request(&self, request: ModeRequest) {
        self.mode_requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(request);
        let _ = self.wake_tx.send(());
    }

    /// What extension commands asked the mode to do, oldest first.
    pub fn take_mode_requests(&self) -> Vec<ModeRequest> {
        std::mem::take(&mut *self.mode_requests.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Session changes extensions asked for, oldest first.
    pub fn take_actions(&self) -> Vec<PendingAction> {
        while self.wake_rx.try_recv().is_ok() {}
        std::mem::take(&mut *self.actions.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Whether session changes are waiting to be applied.
    pub fn has_actions(&self) -> bool {
        !self
            .actions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_empty()
    }

    /// Ticks whenever an action is queued; a mode's idle loop selects on it.
    pub fn action_signal(&self) -> Receiver<()> {
        self.wake_rx.clone()
    }

    /// Every registered command, in load order (first registration of a name wins).
    pub fn commands(&self) -> Vec<CommandInfo> {
        let mut out: Vec<CommandInfo> = Vec::new();
        for ext in &self.extensions {
            for c in &ext.registration().commands {
                if !out.iter().any(|o| o.name == c.name) {
                    out.push(CommandInfo {
                        name: c.name.clone(),
                        description: c.description.clone(),
                        extension_path: ext.display_path(),
                        scope: ext.source.scope,
                        completions: c.completions,
                    });
                }
            }
        }
        out
    }

    /// Keyboard shortcuts extensions registered: `(key, description, extension path)`.
    pub fn shortcuts(&self) -> Vec<(String, Option<String>, String)> {
        self.extensions
            .iter()
            .flat_map(|e| {
                e.registration()
                    .shortcuts
                    .iter()
                    .map(|s| (s.key.clone(), s.description.clone(), e.display_path()))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Every flag extensions registered, for `--help`: `(name, kind, description, path)`.
    pub fn flags(&self) -> Vec<(String, FlagType, Option<String>, String)> {
        self.extensions
            .iter()
            .flat_map(|e| {
                e.registration()
                    .flags
                    .iter()
                    .map(|f| {
                        (
                            f.name.clone(),
                            f.kind,
                            f.description.clone(),
                            e.display_path(),
                        )
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// The value of an extension flag (from the command line, else its default).
    pub fn flag_value(&self, name: &str) -> Option<Value> {
        self.extensions
            .iter()
            .find_map(|e| e.flag_values.get(name).cloned())
    }

    /// Sends a notification event to every live subscriber; never waits. `turn_end` reaches
    /// only protocol-1 extensions this way: protocol-2 ones answer it as a boundary.
    pub fn emit(&self, event: &str, data: Value) {
        for ext in self.active() {
            if event == "turn_end" && ext.protocol() >= 2 {
                continue;
            }
            if ext.subscribes(event) {
                let id = ext.process.next_id();
                ext.process.send(ext.event(id, event, data.clone()));
            }
        }
    }

    /// A notification pi awaits the handlers of before going on (`session_start` before the
    /// first prompt, `agent_end` before the run is over): extensions speaking protocol 2 are
    /// waited for (up to the event timeout; a slow one is not disabled) and what they asked
    /// for meanwhile (entries, messages, names, labels, active tools) is queued before this
    /// returns; protocol-1 extensions are only told.
    pub fn emit_and_wait(&self, event: &str, data: Value) {
        let mut waits = Vec::new();
        for ext in self.active().filter(|e| e.subscribes(event)) {
            let id = ext.process.next_id();
            let mut msg = ext.event(id, event, data.clone());
            if ext.protocol() >= 2 {
                if let Ok(rx) = ext.process.expect(id) {
                    msg["wait"] = Value::Bool(true);
                    waits.push((Arc::clone(ext), rx));
                }
            }
            ext.process.send(msg);
        }
        let deadline = Instant::now() + self.event_timeout;
        for (ext, rx) in waits {
            if rx
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .is_ok()
            {
                ext.process.settle(self.event_timeout);
            }
        }
    }

    pub fn has_subscribers(&self, event: &str) -> bool {
        self.active().any(|e| e.subscribes(event))
    }

    /// Sends a blocking event to one extension and waits for its answer. A timeout or a
    /// garbled answer disables the extension; any failure is reported and comes back as `Err`.
    pub(super) fn ask(
        &self,
        ext: &Extension,
        event: &str,
        data: Value,
        abort: Option<&Abort>,
    ) -> Result<Value, RequestError> {
        let id = ext.process.next_id();
        let msg = ext.event(id, event, data);
        let result = ext
            .process
            .request(id, msg, Some(self.event_timeout), abort, &mut |_| {});
        match &result {
            Ok(_) | Err(RequestError::Aborted) => {}
            Err(RequestError::Timeout(_)) => {
                let reason = format!(
                    "did not answer \"{event}\" within {} ms; extension disabled",
                    self.event_timeout.as_millis()
                );
                self.report(&ext.display_path(), event, reason.clone());
                ext.process.disable(reason);
            }
            // Reported by the dispatcher when the process died.
            Err(RequestError::Dead(_)) => {}
            Err(RequestError::Failed(e)) => self.report(&ext.display_path(), event, e.clone()),
        }
        result
    }

    /// Live extensions subscribed to `event`, in load order.
    pub(super) fn subscribers(&self, event: &str) -> Vec<Arc<Extension>> {
        self.active()
            .filter(|e| e.subscribes(event))
            .cloned()
            .collect()
    }

    /// Sends `session_shutdown` to subscribers (briefly waiting for their answer), then closes
    /// every extension's stdin and escalates to TERM and KILL.
    pub fn shutdown(&self) {
        self.shutdown_for("quit");
    }

    /// Tells subscribers the session is being replaced (`session_shutdown` with `reason`,
    /// briefly waiting for their answers), then gives every extension of the Node.js bridge a
    /// fresh instance, waiting up to `limit` for them to register again.
    pub fn restart(&self, reason: &str, limit: Duration) {
        self.notify_shutdown(reason);
        let mut waits = Vec::new();
        for ext in self.active().filter(|e| e.process.ext().is_some()) {
            let id = ext.process.next_id();
            if let Ok(rx) = ext.process.expect(id) {
                ext.process
                    .send(json!({"type": "restart", "id": id, "reason": reason}));
                waits.push((Arc::clone(ext), rx));
            }
        }
        let deadline = Instant::now() + limit;
        for (ext, rx) in waits {
            match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(super::process::Incoming::Reply(_)) => {
                    // Its new registration arrived before the reply; let it be applied.
                    ext.process.settle(limit);
                }
                Ok(_) | Err(_) => self.report(
                    &ext.display_path(),
                    "session_start",
                    format!("did not restart within {} ms", limit.as_millis()),
                ),
            }
        }
    }

    /// `session_shutdown {reason}` to subscribers, waiting briefly for their answers.
    fn notify_shutdown(&self, reason: &str) {
        let deadline = Instant::now() + SHUTDOWN_GRACE;
        let mut waits = Vec::new();
        for ext in self.active() {
            if ext.subscribes("session_shutdown") {
                let id = ext.process.next_id();
                if let Ok(rx) = ext.process.expect(id) {
                    ext.process
                        .send(ext.event(id, "session_shutdown", json!({"reason": reason})));
                    waits.push(rx);
                }
            }
        }
        for rx in waits {
            let _ = rx.recv_timeout(deadline.saturating_duration_since(Instant::now()));
        }
    }

    /// [`ExtensionHost::shutdown`] with the `session_shutdown` reason pi gives (`quit`, or
    /// `reload` when `/reload` restarts the extensions).
    pub fn shutdown_for(&self, reason: &str) {
        self.notify_shutdown(reason);
        // Each extension is stopped on its own thread so slow ones stop together.
        std::thread::scope(|scope| {
            for ext in &self.extensions {
                scope.spawn(move || ext.process.shutdown(SHUTDOWN_GRACE));
            }
        });
    }
}

impl ExtensionHost {
    /// An extension's stderr: by default shown on pi's stderr prefixed with its name.
    pub(super) fn forward_stderr(&self, ext: &Extension, line: &str) {
        let sink = Arc::clone(&self.stderr.read().unwrap_or_else(|p| p.into_inner()));
        sink(&ext.source.name(), line);
    }

    /// Replaces where extensions' stderr lines go (a TUI must not let them hit the screen).
    pub fn set_stderr_sink(&self, sink: StderrSink) {
        *self.stderr.write().unwrap_or_else(|p| p.into_inner()) = sink;
    }

    /// A registration sent again after loading (protocol 2): what the extension registers from
    /// then on. Tools already handed to the agent keep their names.
    pub(super) fn registration_update(&self, ext: &Extension, msg: &Value) {
        match Registration::parse(msg) {
            Ok(mut reg) => {
                {
                    let mut current = ext.registration.write().unwrap_or_else(|p| p.into_inner());
                    reg.protocol = current.protocol;
                    if *current != reg {
                        *current = reg;
                        self.generation.fetch_add(1, Ordering::SeqCst);
                    }
                }
                // A fresh instance (a restart) registers its servers again; an update after
                // loading repeats the list the instance loaded with.
                if msg["update"] != true {
                    self.register_load_mcp_servers(ext);
                }
            }
            Err(e) => self.report(
                &ext.display_path(),
                "register",
                format!("invalid registration: {e}"),
            ),
        }
    }

    /// The MCP servers an extension registered while loading: they replace whatever this
    /// extension registered before (an earlier instance's servers are dropped).
    pub(super) fn register_load_mcp_servers(&self, ext: &Extension) {
        let path = ext.display_path();
        let wanted = ext
            .registration
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .mcp_servers
            .clone();
        for old in self.mcp_servers.list() {
            if old.extension_path == path && !wanted.iter().any(|(n, _)| *n == old.name) {
                self.mcp_servers.unregister(&path, &old.name);
            }
        }
        for (name, config) in wanted {
            if let Err(e) = self.mcp_servers.register(&path, &name, &config) {
                self.report(&path, "registerMcpServer", e);
            }
        }
    }

    /// True the first time `key` is noted.
    pub(super) fn note_once(&self, key: String) -> bool {
        self.noted
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key)
    }

    /// Changes whenever an extension's registration changes after loading.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// A line for the Node.js bridge process as a whole (not for one extension).
    pub(super) fn send_bridge(&self, msg: Value) {
        if let Some(node) = &self.node {
            node.send(msg);
        }
    }

    /// Tells the bridge what its extensions' getters answer (`ctx.model`, `isIdle()`, …),
    /// when it changed since the last time.
    pub(super) fn share_view(&self, view: Value) {
        if self.node.is_none() {
            return;
        }
        let mut sent = self.view_sent.lock().unwrap_or_else(|p| p.into_inner());
        if *sent != view {
            self.send_bridge(json!({"type": "view", "view": view}));
            *sent = view;
        }
    }

    /// Tells the bridge which models exist and which can be used (`ctx.modelRegistry`,
    /// `getModel`).
    pub fn share_models(&self, registry: &crate::resources::model_registry::ModelRegistry) {
        if self.node.is_some() {
            self.send_bridge(super::node_bridge::models_message(registry));
        }
    }

    /// Tells the bridge the terminal's width, so components render to fit.
    pub fn share_columns(&self, columns: u16) {
        self.send_bridge(json!({"type": "resize", "columns": columns}));
    }

    /// Tells the bridge the theme's colours (`ctx.ui.theme.fg("accent", …)`).
    pub fn share_theme(&self, theme: Value) {
        self.send_bridge(theme);
    }
}

impl ExtensionHost {
    /// Lends the session's services (after the host was built).
    pub fn set_services(&self, f: impl FnOnce(&mut HostServices)) {
        f(&mut self.services.write().unwrap_or_else(|p| p.into_inner()));
    }

    pub(super) fn services(&self) -> HostServices {
        self.services
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// How long drawing an extension's message may take before pi's default look is used.
const RENDER_TIMEOUT: Duration = Duration::from_millis(1500);

impl ExtensionHost {
    /// Whether an extension draws custom messages of this type (`registerMessageRenderer`).
    pub fn renders_messages(&self, custom_type: &str) -> bool {
        self.active().any(|e| {
            e.registration()
                .message_renderers
                .iter()
                .any(|t| t == custom_type)
        })
    }

    /// The lines the first extension with a renderer for the message's type draws at `width`
    /// (already styled); `None` when none does, it answers nothing, fails or is too slow, and
    /// pi's default look is used.
    pub fn render_message(
        &self,
        message: &CustomMessage,
        width: usize,
        expanded: bool,
    ) -> Option<Vec<String>> {
        let ext = self.active().find(|e| {
            e.registration()
                .message_renderers
                .contains(&message.custom_type)
        })?;
        let id = ext.process.next_id();
        let custom = AgentMessage::Custom(message.clone());
        let msg = json!({"type": "render", "id": id, "customType": message.custom_type,
            "message": serde_json::to_value(&custom).unwrap_or_default(), "expanded": expanded, "width": width});
        let reply = ext
            .process
            .request(id, msg, Some(RENDER_TIMEOUT), None, &mut |_| {})
            .ok()?;
        let lines = reply["lines"].as_array()?;
        Some(
            lines
                .iter()
                .map(|l| l.as_str().unwrap_or_default().to_string())
                .collect(),
        )
    }
}
