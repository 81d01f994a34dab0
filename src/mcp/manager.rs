//! The session's MCP servers: started in the background when the session starts, their tools
//! registered as `mcp__<server>__<tool>` and declared by exposure (`direct` at once, `deferred`
//! and `codemode` once `tool_search` loads them, `hidden` never), the resource tools, the first
//! prompt's wait for servers with direct tools, the `mcp_servers` prompt section, the one
//! start-up report of problems, and stopping every server when pi ends.
//!
//! The agent asks [`McpManager`] (a [`ToolSource`]) for the declared tools before every model
//! call, so a server that connects mid-run or a `tool_search` load counts from the next call.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use super::config::{self, Exposure, LoadedConfig, ServerEntry};
use super::connection::{AuthContext, ConnState, Hooks, ServerConnection, Status};
use super::log::ServerLog;
use super::resources::{resource_tools, RESOURCE_TOOLS};
use super::search::{Candidate, SearchHost, ToolSearch};
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
}

struct Server {
    entry: ServerEntry,
    /// `None` for a disabled server.
    conn: Option<Arc<ServerConnection>>,
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
    servers: Vec<Server>,
    config_errors: Vec<String>,
    registry: Mutex<Registry>,
    /// Notified whenever a connection attempt ends.
    settled: (Mutex<()>, Condvar),
    tool_filter: Option<Vec<String>>,
    tool_exclude: Vec<String>,
    waited_for_startup: AtomicBool,
    /// The start-up report was made (it is made once).
    reported: AtomicBool,
    reporter: Reporter,
    resource_tools: Vec<Arc<dyn Tool>>,
    search_tool: Option<Arc<dyn Tool>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Forwards connection events to the manager without keeping it alive.
struct ManagerHooks(Mutex<Weak<McpManager>>);

impl Hooks for ManagerHooks {
    fn tools_changed(&self, conn: &ServerConnection) {
        if let Some(m) = lock(&self.0).upgrade() {
            m.register_tools(conn);
        }
    }
    fn state_changed(&self, _conn: &ServerConnection) {
        if let Some(m) = lock(&self.0).upgrade() {
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
    /// Reads the configuration and starts every enabled server in the background. `None` when
    /// no `mcp.json` exists (checked with a stat; nothing else is done then).
    pub fn start(options: McpOptions) -> Option<Arc<McpManager>> {
        if !config::any_config_exists(&options.agent_dir, &options.cwd, options.project_trusted) {
            return None;
        }
        let loaded = config::load(&options.agent_dir, &options.cwd, options.project_trusted);
        Some(Self::from_config(loaded, options))
    }

    pub fn from_config(loaded: LoadedConfig, options: McpOptions) -> Arc<McpManager> {
        let log = Arc::new(ServerLog::new(options.agent_dir.join("mcp.log")));
        let auth = AuthContext::for_agent_dir(&options.agent_dir);
        let hooks = Arc::new(ManagerHooks(Mutex::new(Weak::new())));
        let servers: Vec<Server> = loaded
            .servers
            .into_iter()
            .map(|entry| {
                let conn = entry.config.enabled.then(|| {
                    ServerConnection::new(
                        &entry.name,
                        entry.config.clone(),
                        &options.cwd,
                        Some(Arc::clone(&log)),
                        Some(&auth),
                        hooks.clone() as Arc<dyn Hooks>,
                    )
                });
                Server { entry, conn }
            })
            .collect();
        let tool_exclude = options.tool_exclude.unwrap_or_default();
        let needs_search = servers.iter().any(|s| {
            s.conn.is_some()
                && s.entry
                    .config
                    .configured_exposures()
                    .iter()
                    .any(|e| e.is_indirect())
        }) && !tool_exclude
            .iter()
            .any(|e| config::pattern_matches(e, super::search::TOOL_SEARCH));
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
            let search_tool = needs_search.then(|| {
                Arc::new(ToolSearch::new(Arc::new(SearchView(me.clone())))) as Arc<dyn Tool>
            });
            McpManager {
                servers,
                config_errors: loaded.errors,
                registry: Mutex::new(Registry::default()),
                settled: (Mutex::new(()), Condvar::new()),
                tool_filter: options.tool_filter,
                tool_exclude,
                waited_for_startup: AtomicBool::new(false),
                reported: AtomicBool::new(false),
                reporter: options.reporter,
                resource_tools,
                search_tool,
            }
        });
        *lock(&hooks.0) = Arc::downgrade(&manager);
        manager.announce_codemode();
        for conn in manager.connections() {
            conn.start();
        }
        let watcher = Arc::downgrade(&manager);
        // Detached: it ends once the start-up connections settled (each is bounded by its
        // timeout) and only reports.
        let _ = std::thread::Builder::new()
            .name("pi-mcp-report".into())
            .spawn(move || {
                if let Some(m) = watcher.upgrade() {
                    m.wait_for(&Abort::new(), None, |_| true);
                    m.report_problems();
                }
            });
        manager
    }

    fn connections(&self) -> Vec<Arc<ServerConnection>> {
        self.servers.iter().filter_map(|s| s.conn.clone()).collect()
    }

    /// The tools to add to the fixed tool set at start: `tool_search` when some server's tools
    /// are reached through it.
    pub fn static_tools(&self) -> Vec<Arc<dyn Tool>> {
        self.search_tool.iter().cloned().collect()
    }

    /// pi says nothing of codemode (it has it); this build says once that such servers act as
    /// `deferred`.
    fn announce_codemode(&self) {
        let names: Vec<&str> = self
            .servers
            .iter()
            .filter(|s| {
                s.conn.is_some()
                    && s.entry
                        .config
                        .configured_exposures()
                        .contains(&Exposure::Codemode)
            })
            .map(|s| s.entry.name.as_str())
            .collect();
        if names.is_empty() {
            return;
        }
        (self.reporter)(
            &format!(
                "MCP: this build has no codemode yet, so the codemode tools of {} are reached through tool_search instead (as with \"exposure\": \"deferred\").",
                names.join(", ")
            ),
            "info",
        );
    }

    /// One message for everything that needs the user after start-up, once.
    fn report_problems(&self) {
        if self.reported.swap(true, Ordering::SeqCst) {
            return;
        }
        let mut lines: Vec<String> = self
            .config_errors
            .iter()
            .map(|e| format!("config: {e}"))
            .collect();
        for s in &self.servers {
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
        if lines.is_empty() {
            return;
        }
        let body: Vec<String> = lines.iter().map(|l| format!("  {l}")).collect();
        (self.reporter)(
            &format!(
                "MCP servers need attention:\n{}\nRun /mcp to fix.",
                body.join("\n")
            ),
            "warning",
        );
    }

    /// Waits until every server `pick` selects has no connect under way, `abort` is raised, or
    /// `limit` passed. True when they all settled.
    fn wait_for(
        &self,
        abort: &Abort,
        limit: Option<Duration>,
        pick: impl Fn(&Server) -> bool,
    ) -> bool {
        let deadline = limit.map(|l| Instant::now() + l);
        let waiting: Vec<Arc<ServerConnection>> = self
            .servers
            .iter()
            .filter(|s| pick(s))
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

    /// Before the first prompt: waits up to [`STARTUP_WAIT`] for servers with `direct` tools,
    /// so they are declared in its first request. Later prompts do not wait.
    pub fn wait_for_direct_servers(&self, abort: &Abort) {
        if self.waited_for_startup.swap(true, Ordering::SeqCst) {
            return;
        }
        let direct = |s: &Server| {
            s.entry
                .config
                .configured_exposures()
                .contains(&Exposure::Direct)
        };
        if !self.servers.iter().any(|s| s.conn.is_some() && direct(s)) {
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
            self.report_problems();
        }
    }

    /// The `mcp_servers` prompt section (tags included), as the servers are now.
    pub fn servers_section(&self) -> Option<String> {
        let instructions: Vec<Option<String>> = self
            .servers
            .iter()
            .map(|s| s.conn.as_ref().and_then(|c| c.instructions()))
            .collect();
        let listed: Vec<super::prompt::Listed> = self
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

    /// (Re)registers a server's tools after it connected or its list changed. Tools it no
    /// longer offers disappear; names already given keep their owner.
    fn register_tools(&self, conn: &ServerConnection) {
        let Some(conn) = self
            .servers
            .iter()
            .filter_map(|s| s.conn.as_ref())
            .find(|c| std::ptr::eq(c.as_ref(), conn))
        else {
            return;
        };
        let status = conn.status();
        let server = conn.name.clone();
        let namespace = Namespace {
            name: config::namespace(&server),
            description: conn
                .config
                .description
                .as_deref()
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(str::to_string),
            instructions: status.instructions.clone(),
        };
        let names: Vec<String> = status
            .tools
            .iter()
            .filter_map(|t| t["name"].as_str().map(str::to_string))
            .collect();
        let mut unique: Vec<&String> = Vec::new();
        for n in &names {
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
            let exposure = conn.config.tool_exposure(tool_id);
            tools.push(Arc::new(McpTool::new(
                name,
                conn,
                tool,
                exposure,
                namespace.clone(),
            )));
        }
        registry.by_server.insert(server, tools);
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
        self.servers
            .iter()
            .filter(|s| s.entry.config.exposure() != Exposure::Hidden)
            .filter_map(|s| s.conn.clone())
            .filter(|c| c.has_resources() && c.state() == ConnState::Connected)
            .collect()
    }

    /// The resource tools' exposure: the widest of the servers they reach.
    fn resource_exposure(&self) -> Option<Exposure> {
        let exposures: Vec<Exposure> = self
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

    /// Stops every server, those still starting included (in parallel; each may take its
    /// kill grace time).
    pub fn shutdown(&self) {
        let conns = self.connections();
        std::thread::scope(|scope| {
            for c in &conns {
                scope.spawn(|| c.close());
            }
        });
    }

    /// The configured servers with their connection state, for lists.
    pub fn server_states(&self) -> Vec<(ServerEntry, Option<Status>)> {
        self.servers
            .iter()
            .map(|s| (s.entry.clone(), s.conn.as_ref().map(|c| c.status())))
            .collect()
    }
}

impl ToolSource for McpManager {
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        let registry = lock(&self.registry);
        let mut out: Vec<Arc<dyn Tool>> = Vec::new();
        for s in &self.servers {
            if s.conn.is_none() {
                continue;
            }
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
        match self.resource_exposure() {
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
}

/// `tool_search`'s view of the manager.
struct SearchView(Weak<McpManager>);

impl SearchHost for SearchView {
    fn candidates(&self, abort: &Abort) -> Vec<Candidate> {
        let Some(m) = self.0.upgrade() else {
            return Vec::new();
        };
        m.wait_for(abort, None, |_| true);
        let registry = lock(&m.registry);
        let mut out = Vec::new();
        for s in m.servers.iter().filter(|s| s.conn.is_some()) {
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
        if m.resource_exposure().is_some_and(Exposure::is_indirect) {
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
