//! What changes the session's set of MCP servers, as `/mcp`, `/reload` and extensions ask:
//! enabling and disabling (saved to the `mcp.json` that defines the server, or as a project
//! override; for registered servers only in this session), changing exposure, reconnecting,
//! signing in and out, reloading the configuration (servers removed or changed are stopped,
//! new ones connected, unchanged ones kept), following extension registrations, and picking up
//! sign-ins made by another process. Plus the snapshots `/mcp` draws from.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::config::{self, Exposure, LoadedConfig, Scope, ServerEntry};
use super::connection::{ConnState, ServerConnection, Status};
use super::edit::{update_server, Patch};
use super::manager::{lock, McpManager, Server};
use super::oauth::signin::{sign_in, SignIn};
use super::oauth::OAuthError;
use super::registry::ExtensionServers;
use crate::ai::Abort;
use crate::resources::oauth::LoginUi;

/// One server as `/mcp` shows it.
#[derive(Debug, Clone)]
pub struct ServerView {
    pub entry: ServerEntry,
    /// `None` while disabled.
    pub status: Option<Status>,
    /// It signs in with MCP OAuth.
    pub oauth: bool,
    /// The result of the last action on it.
    pub message: Option<String>,
}

impl ServerView {
    pub fn enabled(&self) -> bool {
        self.entry.config.enabled
    }

    pub fn state(&self) -> Option<ConnState> {
        self.status.as_ref().map(|s| s.state)
    }
}

/// What a reload changed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reloaded {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub restarted: Vec<String>,
}

/// Closes connections off the caller's thread (a stdio server may take its kill grace time).
fn close_detached(conns: Vec<Arc<ServerConnection>>) {
    if conns.is_empty() {
        return;
    }
    let _ = std::thread::Builder::new()
        .name("pi-mcp-close".into())
        .spawn(move || {
            std::thread::scope(|scope| {
                for c in &conns {
                    scope.spawn(|| c.close());
                }
            })
        });
}

/// The config after an `enabled`/`exposure` change, written the way `edit::update_server`
/// writes it (defaults dropped from full entries, kept in overrides).
fn patched(
    entry: &ServerEntry,
    patch: &Patch,
    as_override: bool,
) -> Result<config::ServerConfig, String> {
    let mut raw: Map<String, Value> = entry.config.raw.clone();
    if let Some(enabled) = patch.enabled {
        if enabled && !as_override {
            raw.shift_remove("enabled");
        } else {
            raw.insert("enabled".into(), Value::Bool(enabled));
        }
    }
    if let Some(exposure) = patch.exposure {
        if exposure == Exposure::Codemode && !as_override {
            raw.shift_remove("exposure");
        } else {
            raw.insert("exposure".into(), Value::String(exposure.as_str().into()));
        }
    }
    config::validate(&entry.name, &Value::Object(raw))
}

impl McpManager {
    /// Registrations as server entries (minus those a configured server overrides), and the
    /// notes about the overridden ones.
    pub(super) fn registered_entries(
        &self,
        configured: &[(String, PathBuf)],
    ) -> (Vec<(ServerEntry, Value)>, Vec<String>) {
        let Some(registry) = lock(&self.extension_servers).clone() else {
            return (Vec::new(), Vec::new());
        };
        let configured_entries = configured;
        let mut entries = Vec::new();
        let mut overridden = Vec::new();
        for r in registry.list() {
            if let Some((name, source)) = configured_entries
                .iter()
                .find(|(n, _)| config::namespace(n) == config::namespace(&r.name))
            {
                overridden.push(format!(
                    "\"{}\" registered by {} is overridden by \"{name}\" in {}",
                    r.name,
                    r.extension_path,
                    source.display()
                ));
                continue;
            }
            let Ok(cfg) = config::validate(&r.name, &r.config) else {
                continue;
            };
            let entry = ServerEntry {
                name: r.name.clone(),
                config: cfg,
                source: PathBuf::from(&r.extension_path),
                scope: Scope::Extension,
                override_path: None,
            };
            entries.push((entry, r.config));
        }
        (entries, overridden)
    }

    /// Follows the registrations of `registry` from now on.
    pub(super) fn listen_to(&self, registry: &Arc<ExtensionServers>) {
        let weak = self.me.clone();
        registry.set_listener(Some(Arc::new(move || {
            if let Some(m) = weak.upgrade() {
                m.sync_registrations();
            }
        })));
    }

    /// The extensions were restarted (`/reload`): their new registry replaces the old one and
    /// the servers follow it.
    pub fn attach_extension_servers(&self, registry: Arc<ExtensionServers>) {
        let old = lock(&self.extension_servers).replace(Arc::clone(&registry));
        if let Some(old) = old {
            old.set_listener(None);
        }
        self.listen_to(&registry);
        self.sync_registrations();
    }

    /// Follows the extension registrations: servers unregistered or registered again with
    /// another config are stopped, new ones connected (and reported if they need the user).
    pub fn sync_registrations(&self) {
        let configured: Vec<(String, PathBuf)> = lock(&self.state)
            .servers
            .iter()
            .filter(|s| s.entry.scope != Scope::Extension)
            .map(|s| (s.entry.name.clone(), s.entry.source.clone()))
            .collect();
        let (registered, overridden) = self.registered_entries(&configured);
        let (removed, added) = {
            let mut state = lock(&self.state);
            state.overridden = overridden;
            let (gone, kept): (Vec<Server>, Vec<Server>) = std::mem::take(&mut state.servers)
                .into_iter()
                .partition(|s| {
                    s.entry.scope == Scope::Extension
                        && registered
                            .iter()
                            .find(|(e, _)| e.name == s.entry.name)
                            .map(|(_, raw)| raw)
                            != s.registered.as_ref()
                });
            state.servers = kept;
            let mut added = Vec::new();
            for (entry, raw) in registered {
                if state.servers.iter().any(|s| s.entry.name == entry.name) {
                    continue;
                }
                let server = Server {
                    registered: Some(raw),
                    ..self.new_server(entry)
                };
                if let Some(c) = &server.conn {
                    added.push((server.entry.name.clone(), Arc::clone(c)));
                }
                state.servers.push(server);
            }
            (gone, added)
        };
        let mut closing = Vec::new();
        for s in removed {
            self.forget_tools(&s.entry.name);
            closing.extend(s.conn);
        }
        close_detached(closing);
        self.bump();
        self.start_and_report(added);
    }

    /// Starts new connections and reports, once they settled, those that need the user.
    fn start_and_report(&self, added: Vec<(String, Arc<ServerConnection>)>) {
        if added.is_empty() {
            return;
        }
        for (_, c) in &added {
            c.start();
        }
        let me = self.me.clone();
        let names: Vec<String> = added.iter().map(|(n, _)| n.clone()).collect();
        // Detached: each connect is bounded by its timeout; this only reports.
        let _ = std::thread::Builder::new()
            .name("pi-mcp-report".into())
            .spawn(move || {
                let Some(m) = me.upgrade() else { return };
                m.wait_for(&Abort::new(), None, |e| names.contains(&e.name));
                m.report_problems(Some(&names));
            });
    }

    /// Applies a new configuration (`/reload`): servers removed or changed are stopped, new
    /// and changed ones connected, unchanged ones kept as they are.
    pub fn reload(&self, loaded: LoadedConfig) -> Reloaded {
        let configured: Vec<(String, PathBuf)> = loaded
            .servers
            .iter()
            .map(|e| (e.name.clone(), e.source.clone()))
            .collect();
        let mut result = Reloaded::default();
        let (closing, starting) = {
            let mut state = lock(&self.state);
            state.config_errors = loaded.errors;
            state.project_config = loaded.project_config;
            let mut old = std::mem::take(&mut state.servers);
            drop(state);
            let (registered, overridden) = self.registered_entries(&configured);
            let mut next: Vec<Server> = Vec::new();
            let mut starting = Vec::new();
            let wanted = loaded
                .servers
                .into_iter()
                .map(|e| (e, None))
                .chain(registered.into_iter().map(|(e, raw)| (e, Some(raw))));
            for (entry, raw) in wanted {
                match old.iter().position(|s| s.entry == entry) {
                    Some(i) => next.push(old.remove(i)),
                    None => {
                        if old.iter().any(|s| s.entry.name == entry.name) {
                            result.restarted.push(entry.name.clone());
                        } else {
                            result.added.push(entry.name.clone());
                        }
                        let server = Server {
                            registered: raw,
                            ..self.new_server(entry)
                        };
                        if let Some(c) = &server.conn {
                            starting.push((server.entry.name.clone(), Arc::clone(c)));
                        }
                        next.push(server);
                    }
                }
            }
            let mut closing = Vec::new();
            for s in old {
                if !next.iter().any(|n| n.entry.name == s.entry.name) {
                    result.removed.push(s.entry.name.clone());
                }
                self.forget_tools(&s.entry.name);
                closing.extend(s.conn);
            }
            let mut state = lock(&self.state);
            state.servers = next;
            state.overridden = overridden;
            (closing, starting)
        };
        close_detached(closing);
        self.bump();
        self.start_and_report(starting);
        result
    }

    /// Reads `mcp.json` again (project trust as decided now) and applies it.
    pub fn reload_config(&self, project_trusted: bool) -> Reloaded {
        self.reload(config::load(&self.agent_dir, &self.cwd, project_trusted))
    }

    /// Every server as `/mcp` shows it.
    pub fn snapshot(&self) -> Vec<ServerView> {
        lock(&self.state)
            .servers
            .iter()
            .map(|s| ServerView {
                entry: s.entry.clone(),
                status: s.conn.as_ref().map(|c| c.status()),
                oauth: s.conn.as_ref().is_some_and(|c| c.oauth_url().is_some())
                    || (!s.enabled() && super::connection::oauth_url(&s.entry.config).is_some()),
                message: s.message.clone(),
            })
            .collect()
    }

    /// Configuration errors and overridden registrations, as `/mcp` lists them.
    pub fn notices(&self) -> Vec<String> {
        let state = lock(&self.state);
        state
            .config_errors
            .iter()
            .map(|e| format!("config: {e}"))
            .chain(state.overridden.iter().map(|o| format!("overridden: {o}")))
            .collect()
    }

    /// The trusted project's `mcp.json` (where "in this project" changes go).
    pub fn project_config(&self) -> Option<PathBuf> {
        lock(&self.state).project_config.clone()
    }

    /// Notes the message of the last action on a server.
    pub fn set_message(&self, name: &str, message: Option<String>) {
        if let Some(s) = lock(&self.state)
            .servers
            .iter_mut()
            .find(|s| s.entry.name == name)
        {
            s.message = message;
        }
        self.bump();
    }

    fn connection(&self, name: &str) -> Option<Arc<ServerConnection>> {
        lock(&self.state)
            .servers
            .iter()
            .find(|s| s.entry.name == name)
            .and_then(|s| s.conn.clone())
    }

    /// Saves a change and applies it to the server's entry. `in_project` adds (or updates) a
    /// project override. Registered servers change for this session only.
    fn save(&self, name: &str, patch: &Patch, in_project: bool) -> Result<(), String> {
        let mut state = lock(&self.state);
        let project_config = state.project_config.clone();
        let server = state
            .servers
            .iter_mut()
            .find(|s| s.entry.name == name)
            .ok_or_else(|| format!("No MCP server named \"{name}\"."))?;
        let override_path = if in_project {
            project_config
        } else {
            server.entry.override_path.clone()
        };
        let as_override = override_path.is_some();
        if server.entry.scope != Scope::Extension {
            let path = override_path
                .clone()
                .unwrap_or_else(|| server.entry.source.clone());
            update_server(&path, name, patch, as_override)
                .map_err(|e| format!("Could not update {}: {e}", path.display()))?;
        }
        server.entry.config = patched(
            &server.entry,
            patch,
            as_override && server.entry.scope != Scope::Extension,
        )?;
        if server.entry.scope != Scope::Extension {
            server.entry.override_path = override_path;
        }
        Ok(())
    }

    /// Enables or disables a server and connects or stops it. `Err` when the file could not be
    /// saved; connection problems show in its state.
    pub fn set_enabled(&self, name: &str, enabled: bool, in_project: bool) -> Result<(), String> {
        let patch = Patch {
            enabled: Some(enabled),
            exposure: None,
        };
        self.save(name, &patch, in_project)?;
        let (closing, starting) = {
            let mut state = lock(&self.state);
            let Some(server) = state.servers.iter_mut().find(|s| s.entry.name == name) else {
                return Ok(());
            };
            if enabled {
                if server.conn.is_none() {
                    let conn = self.connection_for(&server.entry);
                    server.conn = Some(Arc::clone(&conn));
                    (None, Some(conn))
                } else {
                    (None, None)
                }
            } else {
                (server.conn.take(), None)
            }
        };
        if let Some(c) = closing {
            self.forget_tools(name);
            close_detached(vec![c]);
        }
        if let Some(c) = starting {
            self.start_and_report(vec![(name.to_string(), c)]);
        }
        self.bump();
        Ok(())
    }

    /// Changes a server's exposure; its tools are declared anew.
    pub fn set_exposure(&self, name: &str, exposure: Exposure) -> Result<(), String> {
        let patch = Patch {
            enabled: None,
            exposure: Some(exposure),
        };
        self.save(name, &patch, false)?;
        if let Some(conn) = self.connection(name) {
            if conn.state() == ConnState::Connected {
                self.register_tools(&conn);
            }
        }
        self.bump();
        Ok(())
    }

    /// Connects a server again. `Err` with the reason when it does not connect.
    pub fn reconnect(&self, name: &str, abort: &Abort) -> Result<(), String> {
        let conn = self
            .connection(name)
            .ok_or_else(|| format!("MCP server \"{name}\" is disabled."))?;
        conn.reconnect(abort)
    }

    /// Deletes a server's stored credentials and disconnects it; `Ok(true)` when there were
    /// credentials.
    pub fn sign_out(&self, name: &str) -> Result<bool, String> {
        let conn = self
            .connection(name)
            .filter(|c| c.oauth_url().is_some())
            .ok_or_else(|| format!("MCP server \"{name}\" does not use OAuth."))?;
        let url = conn.oauth_url().unwrap_or_default().to_string();
        let removed = self.auth.credentials.remove(name, &url)?;
        conn.sign_out(&Abort::new());
        Ok(removed)
    }

    /// Signs in through `ui` (the browser or a pasted redirect URL), then reconnects. `Err`
    /// with pi's message: `Sign-in cancelled.`, `Sign-in failed: …`, `Signed in, but …`.
    pub fn sign_in(&self, name: &str, ui: &dyn LoginUi, abort: &Abort) -> Result<(), String> {
        let conn = self
            .connection(name)
            .filter(|c| c.oauth_url().is_some())
            .ok_or_else(|| format!("MCP server \"{name}\" does not use OAuth."))?;
        let url = conn.oauth_url().unwrap_or_default().to_string();
        let settings = conn
            .oauth_settings()
            .map_err(|e| format!("Sign-in failed: {e}"))?;
        let challenge = conn.challenge();
        let store = conn.credentials().expect("an OAuth connection has a store");
        let result = sign_in(&SignIn {
            server_name: name,
            server_url: &url,
            store,
            settings: &settings,
            challenge: challenge.as_ref(),
            ui,
            abort,
        });
        match result {
            Ok(_) => {}
            Err(OAuthError::Cancelled) => return Err("Sign-in cancelled.".into()),
            Err(e) => return Err(format!("Sign-in failed: {e}")),
        }
        conn.clear_challenge();
        conn.reconnect(abort)
            .map_err(|e| format!("Signed in, but {e}"))
    }

    /// Remembers the stored tokens of a server that starts needing a sign-in (to notice a
    /// sign-in made elsewhere); forgets them once it no longer does.
    pub(super) fn note_sign_in_state(&self, conn: &ServerConnection) {
        let mut waiting = lock(&self.tokens_at_sign_in);
        if conn.state() != ConnState::NeedsAuth {
            waiting.remove(&conn.name);
            return;
        }
        if let (Some(url), false) = (conn.oauth_url(), waiting.contains_key(&conn.name)) {
            let tokens = self.auth.credentials.tokens(&conn.name, url);
            waiting.insert(
                conn.name.clone(),
                tokens.map(|t| t.to_string()).unwrap_or_default(),
            );
        }
    }

    /// Reconnects servers waiting for a sign-in whose credentials were stored since (by `pi
    /// mcp login` in another process, say). Called as a prompt starts; does not wait.
    pub fn reconnect_signed_in(&self) {
        let changed: Vec<String> = {
            let mut waiting = lock(&self.tokens_at_sign_in);
            let changed: Vec<String> = waiting
                .iter()
                .filter(|(name, before)| {
                    self.connection(name)
                        .and_then(|c| c.oauth_url().map(str::to_string))
                        .map(|url| {
                            self.auth
                                .credentials
                                .tokens(name, &url)
                                .map(|t| t.to_string())
                                .unwrap_or_default()
                        })
                        .is_some_and(|now| now != **before)
                })
                .map(|(n, _)| n.clone())
                .collect();
            for n in &changed {
                waiting.remove(n);
            }
            changed
        };
        for name in changed {
            if let Some(conn) = self.connection(&name) {
                let _ = std::thread::Builder::new()
                    .name("pi-mcp-reconnect".into())
                    .spawn(move || {
                        let _ = conn.reconnect(&Abort::new());
                    });
            }
        }
    }
}

#[cfg(test)]
#[path = "tests/manager_ops.rs"]
mod tests;
