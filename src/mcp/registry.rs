//! The MCP servers extensions register for the session (`pi.registerMcpServer(name, config)`),
//! with pi's rules: the config is an `mcpServers` entry, validated like one (`auth.provider`
//! included); a name belongs to the extension that registered it first, registering it again
//! replaces that registration, and names that differ only in `-`/`_` clash; unregistering is
//! up to the owner. Registrations are kept in order and never saved. Whoever connects them (the
//! session's [`super::McpManager`]) listens for changes.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use super::config::{namespace, validate};

/// One registration.
#[derive(Debug, Clone, PartialEq)]
pub struct RegisteredServer {
    pub name: String,
    /// The validated entry (exposure aliases resolved).
    pub config: Value,
    pub extension_path: String,
}

type Listener = Arc<dyn Fn() + Send + Sync>;

#[derive(Default)]
pub struct ExtensionServers {
    servers: Mutex<Vec<RegisteredServer>>,
    listener: Mutex<Option<Listener>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl ExtensionServers {
    pub fn new() -> Arc<ExtensionServers> {
        Arc::new(ExtensionServers::default())
    }

    /// Registers (or replaces) a server; `Err` with pi's message.
    pub fn register(&self, extension_path: &str, name: &str, config: &Value) -> Result<(), String> {
        let validated = validate(name, config).map_err(|e| {
            format!("Invalid MCP server registered by extension \"{extension_path}\": {e}")
        })?;
        {
            let mut servers = lock(&self.servers);
            if let Some(owner) = servers.iter().find(|s| s.name == name) {
                if owner.extension_path != extension_path {
                    return Err(format!(
                        "MCP server \"{name}\" is already registered by extension \"{}\"",
                        owner.extension_path
                    ));
                }
            }
            if let Some(clash) = servers
                .iter()
                .find(|s| s.name != name && namespace(&s.name) == namespace(name))
            {
                return Err(format!(
                    "MCP server \"{name}\" conflicts with registered server \"{}\"",
                    clash.name
                ));
            }
            let server = RegisteredServer {
                name: name.to_string(),
                config: Value::Object(validated.raw),
                extension_path: extension_path.to_string(),
            };
            match servers.iter_mut().find(|s| s.name == name) {
                Some(existing) => *existing = server,
                None => servers.push(server),
            }
        }
        self.changed();
        Ok(())
    }

    /// Removes a server this extension registered; anything else is left alone.
    pub fn unregister(&self, extension_path: &str, name: &str) {
        let removed = {
            let mut servers = lock(&self.servers);
            let before = servers.len();
            servers.retain(|s| !(s.name == name && s.extension_path == extension_path));
            servers.len() != before
        };
        if removed {
            self.changed();
        }
    }

    /// Every registration, in order.
    pub fn list(&self) -> Vec<RegisteredServer> {
        lock(&self.servers).clone()
    }

    /// What `pi.getMcpServers()` answers and `mcp_servers_change` carries.
    pub fn to_json(&self) -> Value {
        Value::Array(
            self.list()
                .into_iter()
                .map(|s| json!({"name": s.name, "config": s.config, "extensionPath": s.extension_path}))
                .collect(),
        )
    }

    /// Called after every change (the manager connects and disconnects).
    pub fn set_listener(&self, listener: Option<Listener>) {
        *lock(&self.listener) = listener;
    }

    fn changed(&self) {
        let listener = lock(&self.listener).clone();
        if let Some(l) = listener {
            l();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn pi_rules_for_registrations() {
        let r = ExtensionServers::new();
        let changes = Arc::new(AtomicUsize::new(0));
        let c = Arc::clone(&changes);
        r.set_listener(Some(Arc::new(move || {
            c.fetch_add(1, Ordering::SeqCst);
        })));
        r.register(
            "/ext/a.ts",
            "jira",
            &json!({"url": "https://x/mcp", "exposure": "codemode-deferred"}),
        )
        .unwrap();
        assert_eq!(r.list()[0].config["exposure"], "codemode");
        assert_eq!(
            r.register("/ext/b.ts", "jira", &json!({"url": "https://y/mcp"}))
                .unwrap_err(),
            "MCP server \"jira\" is already registered by extension \"/ext/a.ts\""
        );
        assert_eq!(
            r.register("/ext/b.ts", "my-db", &json!({"command": "db"}))
                .map(|_| ()),
            Ok(())
        );
        assert_eq!(
            r.register("/ext/b.ts", "my_db", &json!({"command": "db"}))
                .unwrap_err(),
            "MCP server \"my_db\" conflicts with registered server \"my-db\""
        );
        let bad = r.register("/ext/b.ts", "bad name", &json!({"command": "x"}));
        assert!(bad.unwrap_err().starts_with(
            "Invalid MCP server registered by extension \"/ext/b.ts\": invalid server name"
        ));
        // Replacing keeps the position; only the owner unregisters.
        r.register("/ext/a.ts", "jira", &json!({"url": "https://z/mcp"}))
            .unwrap();
        assert_eq!(r.list()[0].config["url"], "https://z/mcp");
        r.unregister("/ext/b.ts", "jira");
        assert_eq!(r.list().len(), 2);
        r.unregister("/ext/a.ts", "jira");
        assert_eq!(
            r.to_json(),
            json!([{"name": "my-db", "config": {"command": "db"}, "extensionPath": "/ext/b.ts"}])
        );
        assert_eq!(changes.load(Ordering::SeqCst), 4);
    }
}
