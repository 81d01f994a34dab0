//! The session's MCP servers: those of `mcp.json` and those extensions register, started in
//! the background when the session starts, their tools registered as `mcp__<server>__<tool>`
//! and declared by exposure (`direct` at once, `deferred` and `codemode` once `tool_search`
//! loads them, `hidden` never), the resource tools, the first prompt's wait for servers with
//! direct tools, the `mcp_servers` prompt section, the one start-up report of problems, and
//! stopping every server when pi ends. The set of servers changes during the session (`/mcp`,
//! `/reload`, extension registrations: see `manager_ops`).
//!
//! The agent asks [`McpManager`] (a [`ToolSource`]) for the declared tools before every model
//! call, so a server that connects mid-run or a `tool_search` load counts from the next call.
//! Locks: `state` before `registry`, never the other way; no connection is closed or waited
//! for while `state` is held (its threads call back into the manager).

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use super::config::{self, Exposure, LoadedConfig, ServerEntry};
use super::connection::{AuthContext, ConnState, Hooks, ServerConnection, Status};
use super::log::ServerLog;
use super::registry::ExtensionServers;
use super::resources::{resource_tools, RESOURCE_TOOLS};
use super::search::{Candidate, SearchHost, ToolSearch, TOOL_SEARCH};
use super::tools::{tool_name, McpTool, Namespace};
use crate::agent::tool::ToolSource;
use crate::agent::Tool;
use crate::ai::Abort;

/// How long the first prompt waits for servers with direct tools.
pub const STARTUP_WAIT: Duration = Duration::from_secs(10);

/// Shows a message to the user: `(text, kind)` with kind `info` or `warning`.
pub type Reporter = Arc<dyn Fn(&str, &str) + Send + Sync>;

pub struct McpOptions {
    pub agent_dir: PathBuf,
    pub cwd: PathBuf,
    pub project_trusted: bool,
    /// `--tools` entries, when one of them starts with `mcp__`: MCP tools are then declared
    /// only if an entry names or matches them.
    pub tool_filter: Option<Vec<String>>,
    /// `--exclude-tools`: MCP tools (and `tool_search`) matching an entry are never offered.
    pub tool_exclude: Option<Vec<String>>,
    pub reporter: Reporter,
    /// Interactive: problems point at `/mcp`; otherwise (print, JSON, RPC) at what a user can
    /// run from a shell.
    pub has_ui: bool,
    /// The servers extensions register (connected beside the configured ones).
    pub extension_servers: Option<Arc<ExtensionServers>>,
}

pub(super) struct Server {
    pub entry: ServerEntry,
    /// `None` for a disabled server.
    pub conn: Option<Arc<ServerConnection>>,
    /// The result of the last `/mcp` action on it.
    pub message: Option<String>,
    /// For a server an extension registered: the config as registered, to tell a new
    /// registration from the same one again.
    pub registered: Option<serde_json::Value>,
}

impl Server {
    pub fn enabled(&self) -> bool {
        self.entry.config.enabled
    }
}

#[derive(Default)]
pub(super) struct State {
    pub servers: Vec<Server>,
    pub config_errors: Vec<String>,
    /// Registrations a configured server of the same name overrides.
    pub overridden: Vec<String>,
    /// The trusted project's `mcp.json`, where project overrides are saved.
    pub project_config: Option<PathBuf>,
}

#[derive(Default)]
struct Registry {
    /// pi tool name → `(server, tool)` it was given to, so names stay unique and stable.
    owners: HashMap<String, (String, String)>,
    by_server: HashMap<String, Vec<Arc<McpTool>>>,
    /// Tools `tool_search` loaded.
    loaded: HashSet<String>,
}

pub struct McpManager {
    pub(super) state: Mutex<State>,
    registry: Mutex<Registry>,
    /// Notified whenever a connection attempt ends.
    settled: (Mutex<()>, Condvar),
    pub(super) agent_dir: PathBuf,
    pub(super) cwd: PathBuf,
    tool_filter: Option<Vec<String>>,
    tool_exclude: Vec<String>,
    waited_for_startup: AtomicBool,
    /// The start-up report was made (it is made once).
    reported: AtomicBool,
    pub(super) reporter: Reporter,
    has_ui: bool,
    pub(super) log: Arc<ServerLog>,
    pub(super) auth: AuthContext,
    hooks: Arc<ManagerHooks>,
    resource_tools: Vec<Arc<dyn Tool>>,
    search_tool: Arc<dyn Tool>,
    /// `tool_search` is in the fixed tool set (it was needed at start).
    search_at_start: AtomicBool,
    /// The registry of the extensions now loaded (replaced when `/reload` restarts them).
    pub(super) extension_servers: Mutex<Option<Arc<ExtensionServers>>>,
    /// Counts changes anything shows (states, tools, the server list), for screens to redraw.
    generation: AtomicU64,
    /// Stored tokens of servers waiting for a sign-in, as they were then: a sign-in made by
    /// another process (`pi mcp login`) changes them.
    pub(super) tokens_at_sign_in: Mutex<HashMap<String, String>>,
    pub(super) me: Weak<McpManager>,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Forwards connection events to the manager without keeping it alive.
struct ManagerHooks(Mutex<Weak<McpManager>>);

impl Hooks for ManagerHooks {
    fn tools_changed(&self, conn: &ServerConnection) {
        if let Some(m) = lock(&self.0).upgrade() {
            m.register_tools(conn);
            m.bump();
        }
    }
    fn state_changed(&self, conn: &ServerConnection) {
        if let Some(m) = lock(&self.0).upgrade() {
            m.note_sign_in_state(conn);
            m.bump();
            let _guard = lock(&m.settled.0);
            m.settled.1.notify_all();
        }
    }
}

/// Short state for lists and reports, as pi words it.
pub fn describe_state(enabled: bool, status: Option<&Status>) -> String {
    if !enabled {
        return "disabled".into();
    }
    let Some(s) = status else {
        return "starting".into();
    };
    match s.state {
        ConnState::NeedsAuth => "needs sign-in".into(),
        ConnState::Failed => format!(
            "failed: {}",
            s.error
                .as_deref()
                .unwrap_or("unknown error")
                .lines()
                .next()
                .unwrap_or("")
        ),
        ConnState::Connected => format!(
            "connected · {} tool{}{}",
            s.tools.len(),
            if s.tools.len() == 1 { "" } else { "s" },
            if s.has_resources { " · resources" } else { "" }
        ),
        ConnState::Connecting => "connecting…".into(),
        other => other.as_str().into(),
    }
}

impl McpManager {
    /// Reads the configuration and starts every enabled server in the background. Without an
    /// `mcp.json` nothing is read (a stat per file) and no thread starts.
    pub fn start(options: McpOptions) -> Arc<McpManager> {
        let loaded =
            if config::any_config_exists(&options.agent_dir, &options.cwd, options.project_trusted)
            {
                config::load(&options.agent_dir, &options.cwd, options.project_trusted)
            } else {
                LoadedConfig {
                    project_config: options
                        .project_trusted
                        .then(|| config::project_path(&options.cwd)),
                    ..LoadedConfig::default()
                }
            };
        Self::from_config(loaded, options)
    }

    pub fn from_config(loaded: LoadedConfig, options: McpOptions) -> Arc<McpManager> {
        let hooks = Arc::new(ManagerHooks(Mutex::new(Weak::new())));
        let tool_exclude = options.tool_exclude.unwrap_or_default();
        let manager = Arc::new_cyclic(|me: &Weak<McpManager>| {
            let for_resources = me.clone();
            let resource_tools = resource_tools(Arc::new(move |abort: &Abort| {
                for_resources
                    .upgrade()
                    .map(|m| {
                        m.wait_for(abort, None, |_| true);
                        m.resource_servers()
                    })
                    .unwrap_or_default()
            }));
            McpManager {
                state: Mutex::new(State {
                    project_config: loaded.project_config.clone(),
                    ..State::default()
                }),
                registry: Mutex::new(Registry::default()),
                settled: (Mutex::new(()), Condvar::new()),
                agent_dir: options.agent_dir.clone(),
                cwd: options.cwd.clone(),
                tool_filter: options.tool_filter,
                tool_exclude,
                waited_for_startup: AtomicBool::new(false),
                reported: AtomicBool::new(false),
                reporter: options.reporter,
                has_ui: options.has_ui,
                log: Arc::new(ServerLog::new(options.agent_dir.join("mcp.log"))),
                auth: AuthContext::for_agent_dir(&options.agent_dir),
                hooks: Arc::clone(&hooks),
                resource_tools,
                search_tool: Arc::new(ToolSearch::new(Arc::new(SearchView(me.clone())))),
                search_at_start: AtomicBool::new(false),
                extension_servers: Mutex::new(options.extension_servers.clone()),
                generation: AtomicU64::new(0),
                tokens_at_sign_in: Mutex::new(HashMap::new()),
                me: me.clone(),
            }
        });
        *lock(&hooks.0) = Arc::downgrade(&manager);
        let servers = manager.servers_from(loaded);
        manager.install(servers);
        if let Some(registry) = &options.extension_servers {
            manager.listen_to(registry);
        }
        manager.announce_codemode();
        let starting = manager.connections();
        for conn in &starting {
            conn.start();
        }
        if !starting.is_empty() || !lock(&manager.state).config_errors.is_empty() {
            let watcher = Arc::downgrade(&manager);
            // Detached: it ends once the start-up connections settled (each is bounded by
            // its timeout) and only reports.
            let _ = std::thread::Builder::new()
                .name("pi-mcp-report".into())
                .spawn(move || {
                    if let Some(m) = watcher.upgrade() {
                        m.wait_for(&Abort::new(), None, |_| true);
                        m.report_problems(None);
                    }
                });
        }
        manager
    }

    /// The servers a configuration and the current registrations describe (not started).
    pub(super) fn servers_from(&self, loaded: LoadedConfig) -> Vec<Server> {
        let mut state = lock(&self.state);
        state.config_errors = loaded.errors;
        state.project_config = loaded.project_config;
        drop(state);
        let mut servers: Vec<Server> = loaded
            .servers
            .into_iter()
            .map(|entry| self.new_server(entry))
            .collect();
        let configured: Vec<(String, PathBuf)> = servers
            .iter()
            .map(|s| (s.entry.name.clone(), s.entry.source.clone()))
            .collect();
        let (registered, overridden) = self.registered_entries(&configured);
        lock(&self.state).overridden = overridden;
        servers.extend(registered.into_iter().map(|(entry, raw)| Server {
            registered: Some(raw),
            ..self.new_server(entry)
        }));
        servers
    }

    /// A server with its connection (not started) when enabled.
    pub(super) fn new_server(&self, entry: ServerEntry) -> Server {
        let conn = entry.config.enabled.then(|| self.connection_for(&entry));
        Server {
            entry,
            conn,
            message: None,
            registered: None,
        }
    }

    pub(super) fn connection_for(&self, entry: &ServerEntry) -> Arc<ServerConnection> {
        ServerConnection::new(
            &entry.name,
            entry.config.clone(),
            &self.cwd,
            Some(Arc::clone(&self.log)),
            Some(&self.auth),
            Arc::clone(&self.hooks) as Arc<dyn Hooks>,
        )
    }

    /// Adds servers to the list.
    pub(super) fn install(&self, servers: Vec<Server>) {
        lock(&self.state).servers.extend(servers);
        self.bump();
    }

    pub(super) fn bump(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// The agent dir (where `mcp.json` and `mcp-auth.json` live).
    pub fn agent_dir(&self) -> &std::path::Path {
        &self.agent_dir
    }

    /// Shows a message the way start-up reports are shown.
    pub fn notify(&self, message: &str, kind: &str) {
        (self.reporter)(message, kind);
    }

    /// Changes whenever something a server list shows changed.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    pub(super) fn connections(&self) -> Vec<Arc<ServerConnection>> {
        lock(&self.state)
            .servers
            .iter()
            .filter_map(|s| s.conn.clone())
            .collect()
    }

    fn search_excluded(&self) -> bool {
        self.tool_exclude
            .iter()
            .any(|e| config::pattern_matches(e, TOOL_SEARCH))
    }

    /// The tools to add to the fixed tool set (at start, and when `/reload` rebuilds it):
    /// `tool_search` when some server's tools are reached through it. Servers that need it
    /// later get it from [`ToolSource::tools`].
    pub fn static_tools(&self) -> Vec<Arc<dyn Tool>> {
        let needed = self.search_needed(&lock(&self.state));
        self.search_at_start.store(needed, Ordering::SeqCst);
        if needed {
            vec![Arc::clone(&self.search_tool)]
        } else {
            Vec::new()
        }
    }

    /// pi says nothing of codemode (it has it); this build says once that such servers act as
    /// `deferred`.
    fn announce_codemode(&self) {
        let names: Vec<String> = lock(&self.state)
            .servers
            .iter()
            .filter(|s| {
                s.enabled()
                    && s.entry
                        .config
                        .configured_exposures()
                        .contains(&Exposure::Codemode)
            })
            .map(|s| s.entry.name.clone())
            .collect();
        if names.is_empty() {
            return;
        }
        (self.reporter)(
            &format!(
                "MCP: the codemode tools of {} are callable from codemode scripts when the codemode tool is on (--tools +codemode), and are also reached through tool_search (as with \"exposure\": \"deferred\").",
                names.join(", ")
            ),
            "info",
        );
    }

    /// One message for everything that needs the user: after start-up (once, config errors
    /// included), or for `only` the servers that were added later.
    pub(super) fn report_problems(&self, only: Option<&[String]>) {
        if only.is_none() && self.reported.swap(true, Ordering::SeqCst) {
            return;
        }
        let state = lock(&self.state);
        let mut lines: Vec<String> = match only {
            Some(_) => Vec::new(),
            None => state
                .config_errors
                .iter()
                .map(|e| format!("config: {e}"))
                .collect(),
        };
        for s in &state.servers {
            if only.is_some_and(|names| !names.contains(&s.entry.name)) {
                continue;
            }
            if let Some(conn) = &s.conn {
                let status = conn.status();
                if matches!(status.state, ConnState::Failed | ConnState::NeedsAuth) {
                    lines.push(format!(
                        "{}: {}",
                        s.entry.name,
                        describe_state(true, Some(&status))
                    ));
                }
            }
        }
        drop(state);
        if lines.is_empty() {
            return;
        }
        let body: Vec<String> = lines.iter().map(|l| format!("  {l}")).collect();
        (self.reporter)(
            &format!(
                "MCP servers need attention:\n{}\n{}",
                body.join("\n"),
                self.how_to_fix()
            ),
            "warning",
        );
    }

    /// The last line of the start-up report. `/mcp` exists only in the interactive mode; a
    /// print or RPC user gets commands and files they can act on from a shell.
    fn how_to_fix(&self) -> String {
        if self.has_ui {
            return "Run /mcp to fix.".into();
        }
        let global = super::config::global_path(&self.agent_dir);
        let project = lock(&self.state).project_config.clone();
        let files = match project {
            Some(p) => format!("{} or {}", global.display(), p.display()),
            None => global.display().to_string(),
        };
        format!(
            "Run `pi mcp list` to check them and `pi mcp login <server>` to sign in; the servers are configured in {files}."
        )
    }

    /// Waits until every server `pick` selects has no connect under way, `abort` is raised, or
    /// `limit` passed. True when they all settled.
    pub(super) fn wait_for(
        &self,
        abort: &Abort,
        limit: Option<Duration>,
        pick: impl Fn(&ServerEntry) -> bool,
    ) -> bool {
        let deadline = limit.map(|l| Instant::now() + l);
        let waiting: Vec<Arc<ServerConnection>> = lock(&self.state)
            .servers
            .iter()
            .filter(|s| pick(&s.entry))
            .filter_map(|s| s.conn.clone())
            .collect();
        let mut guard = lock(&self.settled.0);
        loop {
            if waiting.iter().all(|c| c.is_settled()) {
                return true;
            }
            if abort.is_aborted() || deadline.is_some_and(|d| Instant::now() >= d) {
                return false;
            }
            guard = self
                .settled
                .1
                .wait_timeout(guard, Duration::from_millis(50))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Waits (up to `limit`) until no server is connecting; true when none is.
    pub fn wait_until_settled(&self, limit: Duration) -> bool {
        self.wait_for(&Abort::new(), Some(limit), |_| true)
    }

    /// Before the first prompt: waits up to [`STARTUP_WAIT`] for servers with `direct` tools,
    /// so they are declared in its first request. Later prompts do not wait.
    pub fn wait_for_direct_servers(&self, abort: &Abort) {
        if self.waited_for_startup.swap(true, Ordering::SeqCst) {
            return;
        }
        let direct = |e: &ServerEntry| e.config.configured_exposures().contains(&Exposure::Direct);
        let any = lock(&self.state)
            .servers
            .iter()
            .any(|s| s.conn.is_some() && direct(&s.entry));
        if !any {
            return;
        }
        if !self.wait_for(abort, Some(STARTUP_WAIT), direct) && !abort.is_aborted() {
            (self.reporter)(
                "MCP servers are still connecting; their tools become available once connected.",
                "info",
            );
        }
        // Everything settled while we waited: report now, before the prompt's output.
        if self.connections().iter().all(|c| c.is_settled()) {
            self.report_problems(None);
        }
    }

    /// The `mcp_servers` prompt section (tags included), as the servers are now.
    pub fn servers_section(&self) -> Option<String> {
        let state = lock(&self.state);
        let instructions: Vec<Option<String>> = state
            .servers
            .iter()
            .map(|s| s.conn.as_ref().and_then(|c| c.instructions()))
            .collect();
        let listed: Vec<super::prompt::Listed> = state
            .servers
            .iter()
            .zip(&instructions)
            .map(|(s, i)| super::prompt::Listed {
                name: &s.entry.name,
                config: &s.entry.config,
                instructions: i.as_deref(),
            })
            .collect();
        super::prompt::render(&listed).map(|c| super::prompt::wrap(&c))
    }

    /// (Re)registers a server's tools after it connected, its list changed or its exposure
    /// changed. Tools it no longer offers disappear; names already given keep their owner.
    pub(super) fn register_tools(&self, conn: &ServerConnection) {
        let state = lock(&self.state);
        let Some(server) = state
            .servers
            .iter()
            .find(|s| s.conn.as_deref().is_some_and(|c| std::ptr::eq(c, conn)))
        else {
            return;
        };
        let conn = server.conn.clone().expect("found by its connection");
        let entry = server.entry.clone();
        drop(state);
        let status = conn.status();
        let server = entry.name.clone();
        let namespace = Namespace {
            name: config::namespace(&server),
            description: entry
                .config
                .description
                .as_deref()
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(str::to_string),
            instructions: status.instructions.clone(),
        };
        let mut unique: Vec<&str> = Vec::new();
        for n in status.tools.iter().filter_map(|t| t["name"].as_str()) {
            if !unique.contains(&n) {
                unique.push(n);
            }
        }
        // Like Codex, every tool whose sanitised name collides gets the hash, so which one
        // keeps the plain name does not depend on the order of the list.
        let plain: Vec<String> = unique
            .iter()
            .map(|t| tool_name(&server, t, &|_| false))
            .collect();
        let mut registry = lock(&self.registry);
        let mut current: HashSet<String> = HashSet::new();
        let mut tools = Vec::new();
        for tool in &status.tools {
            let Some(tool_id) = tool["name"].as_str() else {
                continue;
            };
            let owner = (server.clone(), tool_id.to_string());
            let name = tool_name(&server, tool_id, &|candidate| {
                registry.owners.get(candidate).is_some_and(|o| *o != owner)
                    || current.contains(candidate)
                    || plain.iter().filter(|p| p.as_str() == candidate).count() > 1
            });
            registry.owners.insert(name.clone(), owner);
            current.insert(name.clone());
            let exposure = entry.config.tool_exposure(tool_id);
            tools.push(Arc::new(McpTool::new(
                name,
                &conn,
                tool,
                exposure,
                namespace.clone(),
            )));
        }
        registry.by_server.insert(server, tools);
    }

    /// Makes a server's tools unreachable (it was disabled or removed).
    pub(super) fn forget_tools(&self, server: &str) {
        lock(&self.registry).by_server.remove(server);
    }

    /// `--exclude-tools` names or matches it.
    fn excluded(&self, name: &str) -> bool {
        self.tool_exclude
            .iter()
            .any(|e| config::pattern_matches(e, name))
    }

    fn allowed_directly(&self, name: &str) -> bool {
        !self.excluded(name)
            && match &self.tool_filter {
                None => true,
                Some(entries) => entries.iter().any(|e| config::pattern_matches(e, name)),
            }
    }

    /// Enabled, connected servers with resources whose exposure is not `hidden`.
    fn resource_servers(&self) -> Vec<Arc<ServerConnection>> {
        lock(&self.state)
            .servers
            .iter()
            .filter(|s| s.entry.config.exposure() != Exposure::Hidden)
            .filter_map(|s| s.conn.clone())
            .filter(|c| c.has_resources() && c.state() == ConnState::Connected)
            .collect()
    }

    /// The resource tools' exposure: the widest of the servers they reach.
    fn resource_exposure(&self, state: &State) -> Option<Exposure> {
        let exposures: Vec<Exposure> = state
            .servers
            .iter()
            .filter(|s| {
                s.entry.config.exposure() != Exposure::Hidden
                    && s.conn.as_ref().is_some_and(|c| c.has_resources())
            })
            .map(|s| s.entry.config.exposure())
            .collect();
        [Exposure::Direct, Exposure::Codemode, Exposure::Deferred]
            .into_iter()
            .find(|e| exposures.contains(e))
    }

    /// Whether `tool_search` is needed now (an enabled server has indirect tools).
    fn search_needed(&self, state: &State) -> bool {
        !self.search_excluded()
            && state
                .servers
                .iter()
                .any(|s| s.enabled() && needs_search(&s.entry))
    }

    /// Stops every server, those still starting included (in parallel; each may take its
    /// kill grace time).
    pub fn shutdown(&self) {
        if let Some(r) = lock(&self.extension_servers).as_ref() {
            r.set_listener(None);
        }
        let conns = self.connections();
        std::thread::scope(|scope| {
            for c in &conns {
                scope.spawn(|| c.close());
            }
        });
    }

    /// The configured servers with their connection state, for lists.
    pub fn server_states(&self) -> Vec<(ServerEntry, Option<Status>)> {
        lock(&self.state)
            .servers
            .iter()
            .map(|s| (s.entry.clone(), s.conn.as_ref().map(|c| c.status())))
            .collect()
    }

    /// Every MCP tool known now (`{name, description, parameters}` plus the server's
    /// annotations), and the names of those declared to the model: what extensions'
    /// `getAllTools`/`getActiveTools` report.
    pub fn tool_infos(&self) -> (Vec<serde_json::Value>, Vec<String>) {
        let active: Vec<String> = self.tools().iter().map(|t| t.name().to_string()).collect();
        let state = lock(&self.state);
        let registry = lock(&self.registry);
        let mut all = Vec::new();
        for s in state.servers.iter().filter(|s| s.conn.is_some()) {
            for t in registry.by_server.get(&s.entry.name).into_iter().flatten() {
                if t.exposure != Exposure::Hidden {
                    all.push(t.info());
                }
            }
        }
        if self.resource_exposure(&state).is_some() {
            for t in &self.resource_tools {
                all.push(serde_json::json!({
                    "name": t.name(), "description": t.description(), "parameters": t.parameters(),
                    "annotations": {"readOnlyHint": true},
                }));
            }
        }
        (all, active)
    }
}

/// Whether some of a server's tools are reached through `tool_search`.
fn needs_search(entry: &ServerEntry) -> bool {
    entry
        .config
        .configured_exposures()
        .iter()
        .any(|e| e.is_indirect())
}

impl ToolSource for McpManager {
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        let state = lock(&self.state);
        let registry = lock(&self.registry);
        let mut out: Vec<Arc<dyn Tool>> = Vec::new();
        if !self.search_at_start.load(Ordering::SeqCst) && self.search_needed(&state) {
            out.push(Arc::clone(&self.search_tool));
        }
        for s in state.servers.iter().filter(|s| s.conn.is_some()) {
            for t in registry.by_server.get(&s.entry.name).into_iter().flatten() {
                let declared = match t.exposure {
                    Exposure::Direct => self.allowed_directly(&t.name),
                    Exposure::Codemode | Exposure::Deferred => {
                        registry.loaded.contains(&t.name) && !self.excluded(&t.name)
                    }
                    Exposure::Hidden => false,
                };
                if declared {
                    out.push(Arc::clone(t) as Arc<dyn Tool>);
                }
            }
        }
        match self.resource_exposure(&state) {
            Some(Exposure::Direct) => out.extend(
                self.resource_tools
                    .iter()
                    .filter(|t| self.allowed_directly(t.name()))
                    .cloned(),
            ),
            Some(_) => out.extend(
                self.resource_tools
                    .iter()
                    .filter(|t| registry.loaded.contains(t.name()) && !self.excluded(t.name()))
                    .cloned(),
            ),
            None => {}
        }
        out
    }

    fn script_tools(&self, abort: &Abort) -> Vec<Arc<dyn Tool>> {
        self.wait_for(abort, None, |_| true);
        let state = lock(&self.state);
        let registry = lock(&self.registry);
        let mut out: Vec<Arc<dyn Tool>> = Vec::new();
        for s in state.servers.iter().filter(|s| s.conn.is_some()) {
            for t in registry.by_server.get(&s.entry.name).into_iter().flatten() {
                if t.exposure.is_indirect() && !self.excluded(&t.name) {
                    out.push(Arc::clone(t) as Arc<dyn Tool>);
                }
            }
        }
        out
    }
}

/// `tool_search`'s view of the manager.
struct SearchView(Weak<McpManager>);

impl SearchHost for SearchView {
    fn candidates(&self, abort: &Abort) -> Vec<Candidate> {
        let Some(m) = self.0.upgrade() else {
            return Vec::new();
        };
        m.wait_for(abort, None, |_| true);
        let state = lock(&m.state);
        let registry = lock(&m.registry);
        let mut out = Vec::new();
        for s in state.servers.iter().filter(|s| s.conn.is_some()) {
            for t in registry.by_server.get(&s.entry.name).into_iter().flatten() {
                if t.exposure.is_indirect()
                    && !registry.loaded.contains(&t.name)
                    && !m.excluded(&t.name)
                {
                    out.push(Candidate {
                        name: t.name.clone(),
                        description: t.description().to_string(),
                        parameters: t.parameters(),
                        namespace: Some(t.namespace.clone()),
                    });
                }
            }
        }
        if m.resource_exposure(&state)
            .is_some_and(Exposure::is_indirect)
        {
            for t in &m.resource_tools {
                if !registry.loaded.contains(t.name()) && !m.excluded(t.name()) {
                    out.push(Candidate {
                        name: t.name().to_string(),
                        description: t.description().to_string(),
                        parameters: t.parameters(),
                        namespace: None,
                    });
                }
            }
        }
        out
    }

    fn load(&self, names: &[String]) {
        if let Some(m) = self.0.upgrade() {
            lock(&m.registry).loaded.extend(names.iter().cloned());
        }
    }
}

/// Whether a tool name belongs to MCP (a server tool or a resource tool).
pub fn is_mcp_tool_name(name: &str) -> bool {
    name.starts_with("mcp__") || RESOURCE_TOOLS.contains(&name)
}

#[cfg(test)]
#[path = "tests/manager.rs"]
mod tests;
