//! One configured server's connection over its life: connecting in the background (HTTP
//! servers get two more tries after transient failures), its state for lists and reports, its
//! tools and whether it offers resources, reconnecting on the next call after the server
//! dropped or failed, refreshing tools on `notifications/tools/list_changed`, and closing.
//! Callers wait for a connection with the abort flag in hand; nobody waits without a bound.
//!
//! HTTP servers authenticate with OAuth unless their config has an `Authorization` header or
//! `auth.provider` (then the provider's `/login` token is sent). A server that rejects the
//! credentials it was given is shown as needing a sign-in (`needs-auth`) rather than failed.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Duration;

use serde_json::{json, Value};

use super::client::{Client, ClientOptions, RequestOptions};
use super::config::{ServerConfig, TransportConfig};
pub use super::credentials::{auth_provider, oauth_url, sign_in_required, AuthContext};
use super::http::{AuthProvider, HttpSpec};
use super::log::ServerLog;
use super::oauth::discovery::Challenge;
use super::oauth::provider::{OAuthAuth, ProviderTokenAuth};
use super::oauth::store::ServerStore;
use super::oauth::Settings as OAuthSettings;
use super::rpc::{McpError, Transport};
use super::stdio::StdioSpec;
use crate::ai::Abort;
use crate::resources::config_value::resolve_template_or_err;

/// Waits between connection attempts to an HTTP server that failed with a transient error.
const CONNECT_RETRY_DELAYS: [Duration; 2] =
    [Duration::from_millis(250), Duration::from_millis(1000)];
const POLL: Duration = Duration::from_millis(50);
/// Listings in a row at connect while the server keeps announcing changes.
const MAX_SETUP_LISTINGS: u32 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnState {
    Connecting,
    Connected,
    Failed,
    Disconnected,
    Closed,
    NeedsAuth,
}

impl ConnState {
    pub fn as_str(self) -> &'static str {
        match self {
            ConnState::Connecting => "connecting",
            ConnState::Connected => "connected",
            ConnState::Failed => "failed",
            ConnState::Disconnected => "disconnected",
            ConnState::Closed => "closed",
            ConnState::NeedsAuth => "needs-auth",
        }
    }
}

/// How long closing waits for a token refresh in progress (its rotated tokens must be saved).
const REFRESH_SETTLE: Duration = Duration::from_secs(15);

/// A snapshot for lists, reports and tool registration.
#[derive(Debug, Clone)]
pub struct Status {
    pub state: ConnState,
    pub error: Option<String>,
    pub tools: Vec<Value>,
    pub has_resources: bool,
    pub instructions: Option<String>,
}

struct Inner {
    status: Status,
    client: Option<Arc<Client>>,
    opening: bool,
    /// Connection attempts finished so far.
    attempts: u64,
}

/// Who hears about a connection's changes (the manager). Called from connection threads.
pub trait Hooks: Send + Sync {
    /// The server's tool list is new (connected, or refreshed after `list_changed`).
    fn tools_changed(&self, conn: &ServerConnection);
    /// A connection attempt ended, or the connection dropped or closed.
    fn state_changed(&self, conn: &ServerConnection);
}

pub struct ServerConnection {
    pub name: String,
    pub config: ServerConfig,
    cwd: PathBuf,
    log: Option<Arc<ServerLog>>,
    auth: Option<Arc<dyn AuthProvider>>,
    /// The OAuth side of `auth`, for sign-in and sign-out.
    oauth: Option<(Arc<OAuthAuth>, ServerStore)>,
    /// The last OAuth challenge (resource metadata URL, scope) for the next sign-in.
    challenge: Arc<Mutex<Option<Challenge>>>,
    inner: Mutex<Inner>,
    changed: Condvar,
    /// Raised by `close`: stops a connect in progress and every later one.
    shutdown: Abort,
    /// The transport of a connect under way, so `close` can stop it at once.
    connecting: Mutex<Option<Arc<dyn Transport>>>,
    hooks: Arc<dyn Hooks>,
    me: Weak<ServerConnection>,
    /// `notifications/tools/list_changed` heard so far: a listing that saw it move while it
    /// ran is out of date and is done again.
    tools_announced: AtomicU64,
}

/// A finished handshake: the client and the tools it listed.
struct Connected {
    client: Arc<Client>,
    tools: Vec<Value>,
    /// [`ServerConnection::tools_announced`] when the listing began.
    listed_at: u64,
}

/// A failed attempt: why, and what a stdio server said on stderr.
struct Failure {
    error: McpError,
    stderr: Option<String>,
}

/// How a connect ended, for [`ServerConnection::finish_attempt`].
enum Attempt {
    Connected(Connected),
    Failed(String),
    /// The server wants credentials the user has to give.
    NeedsAuth,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// `~` and `~/…` name the home directory.
fn expand_home(value: &str) -> String {
    crate::util::home::expand_tilde(value)
}

impl ServerConnection {
    pub fn new(
        name: &str,
        config: ServerConfig,
        cwd: &Path,
        log: Option<Arc<ServerLog>>,
        auth: Option<&AuthContext>,
        hooks: Arc<dyn Hooks>,
    ) -> Arc<ServerConnection> {
        let shutdown = Abort::new();
        let challenge: Arc<Mutex<Option<Challenge>>> = Arc::new(Mutex::new(None));
        let oauth = match (auth, oauth_url(&config)) {
            (Some(a), Some(url)) => {
                let store = a.credentials.server(name, url);
                let sink = Arc::clone(&challenge);
                let provider = OAuthAuth::new(
                    url,
                    store.clone(),
                    OAuthSettings::from_config(name, config.raw.get("oauth")),
                    Arc::new(move |c| *lock(&sink) = Some(c)),
                    shutdown.clone(),
                );
                Some((Arc::new(provider), store))
            }
            _ => None,
        };
        let auth: Option<Arc<dyn AuthProvider>> = match (&oauth, auth, auth_provider(&config)) {
            (Some((o, _)), _, _) => Some(Arc::clone(o) as Arc<dyn AuthProvider>),
            (None, Some(a), Some(p)) => Some(Arc::new(ProviderTokenAuth {
                provider: p.to_string(),
                read: Arc::clone(&a.provider_token),
            })),
            _ => None,
        };
        Arc::new_cyclic(|me| ServerConnection {
            name: name.to_string(),
            config,
            cwd: cwd.to_path_buf(),
            log,
            auth,
            oauth,
            challenge,
            inner: Mutex::new(Inner {
                status: Status {
                    state: ConnState::Connecting,
                    error: None,
                    tools: Vec::new(),
                    has_resources: false,
                    instructions: None,
                },
                client: None,
                opening: false,
                attempts: 0,
            }),
            changed: Condvar::new(),
            shutdown,
            connecting: Mutex::new(None),
            hooks,
            me: me.clone(),
            tools_announced: AtomicU64::new(0),
        })
    }

    pub fn status(&self) -> Status {
        lock(&self.inner).status.clone()
    }

    pub fn state(&self) -> ConnState {
        lock(&self.inner).status.state
    }

    pub fn has_resources(&self) -> bool {
        lock(&self.inner).status.has_resources
    }

    pub fn instructions(&self) -> Option<String> {
        lock(&self.inner).status.instructions.clone()
    }

    /// No connect under way.
    pub fn is_settled(&self) -> bool {
        !lock(&self.inner).opening
    }

    pub fn timeout(&self) -> Duration {
        self.config.timeout()
    }

    /// The server URL when the server uses MCP OAuth.
    pub fn oauth_url(&self) -> Option<&str> {
        self.oauth.as_ref().and_then(|_| oauth_url(&self.config))
    }

    /// This server's entry in `mcp-auth.json` (OAuth servers only).
    pub fn credentials(&self) -> Option<&ServerStore> {
        self.oauth.as_ref().map(|(_, s)| s)
    }

    /// The `oauth` block, its secret resolved.
    pub fn oauth_settings(&self) -> Result<OAuthSettings, String> {
        OAuthSettings::from_config(&self.name, self.config.raw.get("oauth"))
    }

    /// The challenge that asked for a sign-in, if any.
    pub fn challenge(&self) -> Option<Challenge> {
        lock(&self.challenge).clone()
    }

    /// The sign-in answered the challenge.
    pub fn clear_challenge(&self) {
        *lock(&self.challenge) = None;
    }

    /// Whether an error means the user has to sign in.
    fn needs_sign_in(&self, error: &McpError) -> bool {
        self.auth.is_some() && matches!(error, McpError::AuthRequired { .. })
    }

    /// Starts connecting on a background thread unless a connect is under way or done.
    /// Returns the number of attempts finished before, for [`ServerConnection::wait_attempt`].
    pub fn start(&self) -> u64 {
        let mut inner = lock(&self.inner);
        let before = inner.attempts;
        let live = inner.client.as_ref().is_some_and(|c| !c.is_closed());
        if self.shutdown.is_aborted() || inner.opening || live {
            return before;
        }
        inner.opening = true;
        inner.status.state = ConnState::Connecting;
        drop(inner);
        let me = self
            .me
            .upgrade()
            .expect("a connection is always held in an Arc");
        let spawned = std::thread::Builder::new()
            .name("pi-mcp-connect".into())
            .spawn(move || me.open());
        if spawned.is_err() {
            self.finish_attempt(Attempt::Failed("could not start a thread".into()));
        }
        before
    }

    /// Waits until no connect is under way (or `abort`); `false` when aborted.
    pub fn wait_settled(&self, abort: Option<&Abort>) -> bool {
        let mut inner = lock(&self.inner);
        while inner.opening {
            if abort.is_some_and(Abort::is_aborted) {
                return false;
            }
            inner = self
                .changed
                .wait_timeout(inner, POLL)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        true
    }

    /// The connected client, connecting (again) first if needed. Errors read as pi's.
    pub fn client(&self, abort: &Abort) -> Result<Arc<Client>, String> {
        if let Some(c) = self.live_client() {
            return Ok(c);
        }
        if self.shutdown.is_aborted() {
            return Err(format!("MCP server \"{}\" is shut down", self.name));
        }
        self.start();
        if !self.wait_settled(Some(abort)) {
            return Err(McpError::Aborted.to_string());
        }
        if let Some(c) = self.live_client() {
            return Ok(c);
        }
        let status = self.status();
        if status.state == ConnState::NeedsAuth {
            return Err(sign_in_required(&self.name, &self.config));
        }
        Err(format!(
            "MCP server \"{}\" failed to connect: {}",
            self.name,
            status.error.unwrap_or_else(|| "unknown error".into())
        ))
    }

    fn live_client(&self) -> Option<Arc<Client>> {
        let inner = lock(&self.inner);
        inner.client.clone().filter(|c| !c.is_closed())
    }

    fn open(&self) {
        let retries: &[Duration] = if self.config.is_http() {
            &CONNECT_RETRY_DELAYS
        } else {
            &[]
        };
        let mut attempt = 0;
        let result = loop {
            match self.connect_once() {
                Ok(client) => break Attempt::Connected(client),
                Err(f) if self.shutdown.is_aborted() => break Attempt::Failed(f.error.to_string()),
                Err(f) if self.needs_sign_in(&f.error) => break Attempt::NeedsAuth,
                Err(f) => match retries.get(attempt) {
                    Some(delay) if f.error.is_transient() => {
                        attempt += 1;
                        sleep_unless(*delay, &self.shutdown);
                    }
                    _ => {
                        let mut why = match f.stderr {
                            Some(t) => format!("{}\n{t}", f.error),
                            None => f.error.to_string(),
                        };
                        if let Some(hint) = self.offline_hint() {
                            why.push('\n');
                            why.push_str(&hint);
                        }
                        break Attempt::Failed(why);
                    }
                },
            }
        };
        self.finish_attempt(result);
    }

    /// Offline, a server started through a package runner may fail only because what it runs
    /// is not in the runner's cache: say so beside the runner's own words.
    fn offline_hint(&self) -> Option<String> {
        let TransportConfig::Stdio { command, .. } = &self.config.transport else {
            return None;
        };
        let program = Path::new(command).file_name()?.to_str()?;
        let runner = ["npx", "npm", "pnpm", "pnpx", "bunx", "uvx", "uv", "pipx"].contains(&program);
        (runner && crate::util::offline::offline()).then(|| {
            format!(
                "pi is offline (PI_OFFLINE or --offline), so {program} may use only what its cache \
                 holds. Run it once while online, or start pi without PI_OFFLINE."
            )
        })
    }

    fn finish_attempt(&self, result: Attempt) {
        let mut inner = lock(&self.inner);
        let tools_changed = match result {
            Attempt::Connected(Connected {
                client,
                tools,
                listed_at,
            }) if !self.shutdown.is_aborted() => {
                // Announced after the last listing but before the client was here to
                // refresh: list again now that it is.
                if self.tools_announced.load(Ordering::SeqCst) != listed_at {
                    self.refresh_tools_in_background();
                }
                inner.status.state = ConnState::Connected;
                inner.status.error = None;
                inner.status.tools = tools;
                inner.status.has_resources = client.has_capability("resources");
                inner.status.instructions = client
                    .info
                    .instructions
                    .as_deref()
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string);
                inner.client = Some(client);
                true
            }
            Attempt::Connected(Connected { client, .. }) => {
                inner.status.state = ConnState::Closed;
                inner.opening = false;
                inner.attempts += 1;
                drop(inner);
                client.close();
                self.changed.notify_all();
                self.hooks.state_changed(self);
                return;
            }
            Attempt::NeedsAuth if !self.shutdown.is_aborted() => {
                inner.status.state = ConnState::NeedsAuth;
                inner.status.error = None;
                false
            }
            Attempt::NeedsAuth => {
                inner.status.state = ConnState::Closed;
                false
            }
            Attempt::Failed(e) => {
                inner.status.state = if self.shutdown.is_aborted() {
                    ConnState::Closed
                } else {
                    ConnState::Failed
                };
                inner.status.error = Some(e);
                false
            }
        };
        drop(inner);
        if tools_changed {
            self.hooks.tools_changed(self);
        }
        // Settled only now that the tools are registered: whoever waits for the server (the
        // first prompt's tool list, `wait_attempt`) never sees it connected without its tools.
        let mut inner = lock(&self.inner);
        inner.opening = false;
        inner.attempts += 1;
        drop(inner);
        self.changed.notify_all();
        self.hooks.state_changed(self);
    }

    /// One attempt: start the transport, `initialize`, list the tools. On failure, the error
    /// and the stdio server's stderr tail.
    fn connect_once(&self) -> Result<Connected, Box<Failure>> {
        let me = self.me.clone();
        let on_notification = Arc::new(move |method: &str, params: &Value| {
            if let Some(conn) = me.upgrade() {
                conn.notification(method, params);
            }
        });
        // The client is not known yet when the transport may already report its end, so the
        // close handler finds the client that closed by its identity later.
        let me = self.me.clone();
        let closed_client: Arc<Mutex<Option<Weak<Client>>>> = Arc::new(Mutex::new(None));
        let closed_for_handler = Arc::clone(&closed_client);
        let on_close = Arc::new(move |why: Option<String>| {
            let which = lock(&closed_for_handler).clone();
            if let (Some(conn), Some(which)) = (me.upgrade(), which) {
                conn.dropped(&which, why);
            }
        });
        let options = ClientOptions {
            timeout: self.timeout(),
            roots: vec![json!({
                "uri": super::url::file_url(&self.cwd),
                "name": self.cwd.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            })],
            on_notification,
            on_close,
        };
        let result = Client::connect(options, Some(&self.shutdown), |sink| {
            let t = self.make_transport(sink)?;
            *lock(&self.connecting) = Some(Arc::clone(&t));
            if self.shutdown.is_aborted() {
                // `close` came between the start and the line above.
                t.close();
            }
            Ok(t)
        });
        let transport = lock(&self.connecting).take();
        let client = match result {
            Ok(c) => Arc::new(c),
            Err(e) => {
                let stderr = transport.and_then(|t| t.stderr_tail());
                return Err(Box::new(Failure { error: e, stderr }));
            }
        };
        *lock(&closed_client) = Some(Arc::downgrade(&client));
        // Servers without the tools capability (prompts or resources only) do not list tools.
        let mut listed_at = self.tools_announced.load(Ordering::SeqCst);
        let mut tools = Vec::new();
        let mut listings = 0;
        while client.has_capability("tools") && listings < MAX_SETUP_LISTINGS {
            listings += 1;
            tools = match client.list_tools(Some(&self.shutdown)) {
                Ok(t) => t,
                Err(error) => {
                    let stderr = client.stderr_tail();
                    client.close();
                    return Err(Box::new(Failure { error, stderr }));
                }
            };
            // A `list_changed` while listing: the answer may predate it.
            let now = self.tools_announced.load(Ordering::SeqCst);
            if now == listed_at {
                break;
            }
            listed_at = now;
        }
        if client.is_closed() {
            return Err(Box::new(Failure {
                error: McpError::Other("connection closed during setup".into()),
                stderr: client.stderr_tail(),
            }));
        }
        Ok(Connected {
            client,
            tools,
            listed_at,
        })
    }

    fn make_transport(&self, sink: super::rpc::Sink) -> Result<Arc<dyn Transport>, McpError> {
        let what = format!("MCP server \"{}\"", self.name);
        match &self.config.transport {
            TransportConfig::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let env = env
                    .iter()
                    .map(|(k, v)| {
                        resolve_template_or_err(v, &format!("{what} env \"{k}\""))
                            .map(|v| (k.clone(), v))
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(McpError::Other)?;
                let spec = StdioSpec {
                    command: expand_home(command),
                    args: args.iter().map(|a| expand_home(a)).collect(),
                    env,
                    cwd: self.cwd.join(expand_home(cwd.as_deref().unwrap_or("."))),
                };
                super::stdio::start(&spec, sink)
            }
            TransportConfig::Http { url, headers, .. } => {
                let headers = headers
                    .iter()
                    .map(|(k, v)| {
                        resolve_template_or_err(v, &format!("{what} header \"{k}\""))
                            .map(|v| (k.clone(), v))
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(McpError::Other)?;
                super::http::start(
                    HttpSpec {
                        url: url.clone(),
                        headers,
                        auth: self.auth.clone(),
                        timeout: self.timeout(),
                    },
                    sink,
                )
            }
        }
    }

    fn notification(&self, method: &str, params: &Value) {
        match method {
            "notifications/message" => {
                if let Some(log) = &self.log {
                    log.write(&self.name, params);
                }
            }
            "notifications/tools/list_changed" => {
                // Counted first: a connect still listing sees it and lists again.
                self.tools_announced.fetch_add(1, Ordering::SeqCst);
                self.refresh_tools_in_background();
            }
            _ => {}
        }
    }

    fn refresh_tools_in_background(&self) {
        let Some(me) = self.me.upgrade() else { return };
        let _ = std::thread::Builder::new()
            .name("pi-mcp-tools".into())
            .spawn(move || me.refresh_tools());
    }

    fn refresh_tools(&self) {
        let Some(client) = self.live_client() else {
            return;
        };
        let result = client.list_tools(Some(&self.shutdown));
        let mut inner = lock(&self.inner);
        let current = inner
            .client
            .as_ref()
            .is_some_and(|c| Arc::ptr_eq(c, &client));
        if !current || self.shutdown.is_aborted() {
            return;
        }
        match result {
            Ok(tools) => {
                inner.status.tools = tools;
                drop(inner);
                self.hooks.tools_changed(self);
            }
            Err(e) => inner.status.error = Some(format!("Failed to refresh tools: {e}")),
        }
    }

    /// The transport of `which` ended by itself: shown as disconnected until the next call
    /// reconnects.
    fn dropped(&self, which: &Weak<Client>, _why: Option<String>) {
        let mut inner = lock(&self.inner);
        let Some(client) = inner.client.clone() else {
            return;
        };
        if !std::ptr::eq(Arc::as_ptr(&client), which.as_ptr()) || self.shutdown.is_aborted() {
            return;
        }
        inner.client = None;
        inner.status.state = ConnState::Disconnected;
        inner.status.error = Some("Connection closed".into());
        drop(inner);
        self.changed.notify_all();
        self.hooks.state_changed(self);
        // Off this thread and without the lock (reading the rest of stderr may take a moment):
        // the stderr tail for the status, then the reaping of the exited server.
        let me = self.me.clone();
        let _ = std::thread::Builder::new()
            .name("pi-mcp-reap".into())
            .spawn(move || {
                if let (Some(tail), Some(conn)) = (client.stderr_tail(), me.upgrade()) {
                    let mut inner = lock(&conn.inner);
                    if inner.status.state == ConnState::Disconnected {
                        inner.status.error = Some(format!("Connection closed\n{tail}"));
                    }
                }
                client.close();
            });
    }

    /// Runs `f` with the client, reconnecting once when the server forgot the HTTP session
    /// (it did not run the request). `read_only` requests are also retried once after a
    /// transient HTTP error; tool calls are not, since they may have run.
    pub fn with_client<T>(
        &self,
        abort: &Abort,
        read_only: bool,
        f: impl Fn(&Client) -> Result<T, McpError>,
    ) -> Result<T, String> {
        let mut attempt = 1;
        loop {
            let client = self.client(abort)?;
            match f(&client) {
                Ok(v) => return Ok(v),
                Err(e)
                    if attempt == 1
                        && read_only
                        && matches!(e, McpError::Http { .. })
                        && e.is_transient() =>
                {
                    sleep_unless(CONNECT_RETRY_DELAYS[0], abort);
                }
                Err(McpError::SessionExpired) if attempt == 1 => {
                    let mut inner = lock(&self.inner);
                    if inner
                        .client
                        .as_ref()
                        .is_some_and(|c| Arc::ptr_eq(c, &client))
                    {
                        inner.client = None;
                    }
                }
                Err(e) if self.needs_sign_in(&e) => {
                    self.drop_client(&client);
                    self.mark_needs_auth();
                    return Err(sign_in_required(&self.name, &self.config));
                }
                Err(e) => return Err(e.to_string()),
            }
            attempt += 1;
        }
    }

    pub fn call_tool(
        &self,
        tool: &str,
        arguments: Value,
        abort: &Abort,
        on_progress: &(dyn Fn(&Value) + Sync),
    ) -> Result<Value, String> {
        let timeout = self.timeout();
        self.with_client(abort, false, |c| {
            c.call_tool(
                tool,
                arguments.clone(),
                RequestOptions {
                    timeout,
                    abort: Some(abort),
                    on_progress: Some(on_progress),
                },
            )
        })
    }

    /// Detaches `client` if it is the current one and closes it (off this thread: a stdio
    /// server may take its kill grace time).
    fn drop_client(&self, client: &Arc<Client>) {
        let mut inner = lock(&self.inner);
        if inner
            .client
            .as_ref()
            .is_some_and(|c| Arc::ptr_eq(c, client))
        {
            inner.client = None;
        }
        drop(inner);
        let client = Arc::clone(client);
        let _ = std::thread::Builder::new()
            .name("pi-mcp-close".into())
            .spawn(move || client.close());
    }

    fn mark_needs_auth(&self) {
        if self.shutdown.is_aborted() {
            return;
        }
        let mut inner = lock(&self.inner);
        inner.status.state = ConnState::NeedsAuth;
        inner.status.error = None;
        drop(inner);
        self.changed.notify_all();
        self.hooks.state_changed(self);
    }

    /// Connects again (after a sign-in, or on request): the current connection is closed
    /// first. Errors read as [`ServerConnection::client`]'s.
    pub fn reconnect(&self, abort: &Abort) -> Result<(), String> {
        if !self.wait_settled(Some(abort)) {
            return Err(McpError::Aborted.to_string());
        }
        let old = lock(&self.inner).client.take();
        if let Some(c) = old {
            c.close();
        }
        self.client(abort).map(|_| ())
    }

    /// After the stored credentials were removed: disconnects and shows the server as needing
    /// a sign-in.
    pub fn sign_out(&self, abort: &Abort) {
        self.wait_settled(Some(abort));
        let old = lock(&self.inner).client.take();
        if let Some(c) = old {
            c.close();
        }
        self.mark_needs_auth();
    }

    /// Stops the server: a connect in progress is abandoned, the transport closed (for stdio
    /// this may take the kill grace time).
    pub fn close(&self) {
        self.shutdown.abort();
        let client = {
            let mut inner = lock(&self.inner);
            inner.status.state = ConnState::Closed;
            inner.client.take()
        };
        self.changed.notify_all();
        if let Some(t) = lock(&self.connecting).clone() {
            t.close();
        }
        if let Some(c) = client {
            c.close();
        }
        if let Some((o, _)) = &self.oauth {
            o.settled(REFRESH_SETTLE);
        }
    }
}

fn sleep_unless(d: Duration, abort: &Abort) {
    let until = std::time::Instant::now() + d;
    while std::time::Instant::now() < until && !abort.is_aborted() {
        std::thread::sleep(POLL.min(until.saturating_duration_since(std::time::Instant::now())));
    }
}
