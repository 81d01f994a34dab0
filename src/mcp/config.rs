//! `mcp.json` as pi 1.x reads it: the user file `<agent dir>/mcp.json`, then, in a trusted
//! project, `<cwd>/.pi/mcp.json`, whose entries replace user entries of the same name. A project
//! entry without `command`, `url` or `type` only overrides `enabled`, `exposure` and
//! `toolExposure` of the user entry. Every entry is validated with pi's rules and messages; an
//! invalid one is reported and skipped, the others still load. Reading never writes.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// How a server's tools reach the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Exposure {
    /// pi's default: callable from codemode scripts. This build has no codemode, so such tools
    /// are reached like `Deferred` ones (see `docs/compat.md`).
    Codemode,
    /// Declared once `tool_search` loads them.
    Deferred,
    /// Declared to the model like a built-in tool.
    Direct,
    /// Registered but unreachable.
    Hidden,
}

pub const EXPOSURES: [&str; 4] = ["codemode", "deferred", "direct", "hidden"];

impl Exposure {
    pub fn parse(s: &str) -> Option<Exposure> {
        Some(match s {
            "codemode" => Exposure::Codemode,
            "deferred" => Exposure::Deferred,
            "direct" => Exposure::Direct,
            "hidden" => Exposure::Hidden,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Exposure::Codemode => "codemode",
            Exposure::Deferred => "deferred",
            Exposure::Direct => "direct",
            Exposure::Hidden => "hidden",
        }
    }

    /// Reached through `tool_search` (codemode acts as deferred here).
    pub fn is_indirect(self) -> bool {
        matches!(self, Exposure::Codemode | Exposure::Deferred)
    }
}

/// How pi connects to the server.
#[derive(Debug, Clone, PartialEq)]
pub enum TransportConfig {
    Stdio {
        command: String,
        args: Vec<String>,
        /// Values are templates (`${VAR}`, `!command`), resolved when the server starts.
        env: Vec<(String, String)>,
        cwd: Option<String>,
    },
    Http {
        url: String,
        /// Values are templates, resolved when the server connects.
        headers: Vec<(String, String)>,
        /// `auth.provider`: send the token of a `/login` provider.
        auth_provider: Option<String>,
    },
}

/// One validated server entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    pub transport: TransportConfig,
    pub enabled: bool,
    pub timeout_secs: Option<f64>,
    pub description: Option<String>,
    /// `None` means pi's default, `codemode`.
    pub exposure: Option<Exposure>,
    /// `toolExposure` in file order: exact names or `*` patterns.
    pub tool_exposure: Vec<(String, Exposure)>,
    /// The entry as written (exposure aliases resolved), unknown keys included.
    pub raw: Map<String, Value>,
}

/// pi's default request timeout.
pub const DEFAULT_TIMEOUT_SECS: f64 = 60.0;

impl ServerConfig {
    pub fn exposure(&self) -> Exposure {
        self.exposure.unwrap_or(Exposure::Codemode)
    }

    /// The exposure of one of the server's tools: an exact `toolExposure` key, else the first
    /// matching pattern, else the server's.
    pub fn tool_exposure(&self, tool: &str) -> Exposure {
        if let Some((_, e)) = self.tool_exposure.iter().find(|(k, _)| k == tool) {
            return *e;
        }
        self.tool_exposure
            .iter()
            .find(|(k, _)| k.contains('*') && pattern_matches(k, tool))
            .map_or(self.exposure(), |(_, e)| *e)
    }

    /// Every exposure the server's tools can have, known before it connects.
    pub fn configured_exposures(&self) -> Vec<Exposure> {
        let mut all = vec![self.exposure()];
        for (_, e) in &self.tool_exposure {
            if !all.contains(e) {
                all.push(*e);
            }
        }
        all
    }

    pub fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS))
    }

    pub fn is_http(&self) -> bool {
        matches!(self.transport, TransportConfig::Http { .. })
    }

    /// `url`, or the command line.
    pub fn describe_transport(&self) -> String {
        match &self.transport {
            TransportConfig::Http { url, .. } => url.clone(),
            TransportConfig::Stdio { command, args, .. } => {
                let mut parts = vec![command.as_str()];
                parts.extend(args.iter().map(String::as_str));
                parts.join(" ")
            }
        }
    }
}

/// `*` matches any characters; everything else literally.
pub fn pattern_matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    true
}

/// Which file an entry came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Global,
    Project,
    /// Registered by an extension (`source` is its path).
    Extension,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Global => "global",
            Scope::Project => "project",
            Scope::Extension => "extension",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ServerEntry {
    pub name: String,
    pub config: ServerConfig,
    /// The file that defines the server.
    pub source: PathBuf,
    pub scope: Scope,
    /// The project file that overrides `enabled`/`exposure`/`toolExposure`, if any.
    pub override_path: Option<PathBuf>,
}

#[derive(Debug, Clone, Default)]
pub struct LoadedConfig {
    pub servers: Vec<ServerEntry>,
    pub errors: Vec<String>,
    pub auto_enable_codemode: Option<bool>,
    /// The trusted project's `.pi/mcp.json` (read or not).
    pub project_config: Option<PathBuf>,
}

pub fn global_path(agent_dir: &Path) -> PathBuf {
    agent_dir.join("mcp.json")
}

pub fn project_path(cwd: &Path) -> PathBuf {
    cwd.join(".pi").join("mcp.json")
}

/// Whether any file could configure servers: a stat per file, nothing read. Start-up asks this
/// first so runs without MCP pay nothing more.
pub fn any_config_exists(agent_dir: &Path, cwd: &Path, project_trusted: bool) -> bool {
    global_path(agent_dir).exists() || (project_trusted && project_path(cwd).exists())
}

/// Reads the user file and, when trusted, the project file.
pub fn load(agent_dir: &Path, cwd: &Path, project_trusted: bool) -> LoadedConfig {
    let mut loaded = LoadedConfig::default();
    read_file(&global_path(agent_dir), Scope::Global, &mut loaded);
    if project_trusted {
        let project = project_path(cwd);
        read_file(&project, Scope::Project, &mut loaded);
        loaded.project_config = Some(project);
    }
    loaded
}

const OVERRIDE_KEYS: [&str; 3] = ["enabled", "exposure", "toolExposure"];

/// An entry that names no transport only overrides a user entry.
pub fn is_override(entry: &Map<String, Value>) -> bool {
    !entry.contains_key("command") && !entry.contains_key("url") && !entry.contains_key("type")
}

/// Names that differ only in `-` and `_` share a namespace (`mcp__dev_radius`).
pub fn namespace(server: &str) -> String {
    format!("mcp__{}", server.replace('-', "_"))
}

/// Parses a file's text: `Ok(None)` when it has no `mcpServers`.
pub fn parse_document(text: &str) -> Result<Value, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let parsed: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    match &parsed {
        Value::Object(m) if m.get("mcpServers").is_none_or(Value::is_object) => Ok(parsed),
        _ => Err("expected an object with an \"mcpServers\" object".into()),
    }
}

fn read_file(path: &Path, scope: Scope, loaded: &mut LoadedConfig) {
    let text =
        match crate::util::files::read_limited_string(path, crate::util::files::Limit::CONFIG) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(e) => {
                loaded.errors.push(format!("{}: {e}", path.display()));
                return;
            }
        };
    let doc = match parse_document(&text) {
        Ok(d) => d,
        Err(e) => {
            loaded.errors.push(format!("{}: {e}", path.display()));
            return;
        }
    };
    let at = path.display();
    match doc.get("autoEnableCodemode") {
        Some(Value::Bool(b)) => loaded.auto_enable_codemode = Some(*b),
        Some(_) => loaded
            .errors
            .push(format!("{at}: autoEnableCodemode must be a boolean")),
        None => {}
    }
    let Some(servers) = doc.get("mcpServers").and_then(Value::as_object) else {
        return;
    };
    for (name, value) in servers {
        if scope == Scope::Project {
            if let Some(entry) = value.as_object().filter(|m| is_override(m)) {
                apply_override(path, name, entry, loaded);
                continue;
            }
        }
        let config = match validate(name, value) {
            Ok(c) => c,
            Err(e) => {
                loaded.errors.push(format!("{at}: {e}"));
                continue;
            }
        };
        let ns = namespace(name);
        if let Some(clash) = loaded
            .servers
            .iter()
            .find(|s| s.name != *name && namespace(&s.name) == ns)
        {
            loaded.errors.push(format!(
                "{at}: server \"{name}\" conflicts with \"{}\"",
                clash.name
            ));
            continue;
        }
        if scope == Scope::Project {
            if let TransportConfig::Http {
                auth_provider: Some(_),
                ..
            } = &config.transport
            {
                loaded.errors.push(format!(
                    "{at}: server \"{name}\": auth is only allowed in the global mcp.json"
                ));
                continue;
            }
        }
        let entry = ServerEntry {
            name: name.clone(),
            config,
            source: path.to_path_buf(),
            scope,
            override_path: None,
        };
        match loaded.servers.iter_mut().find(|s| s.name == *name) {
            Some(existing) => *existing = entry,
            None => loaded.servers.push(entry),
        }
    }
}

fn apply_override(path: &Path, name: &str, value: &Map<String, Value>, loaded: &mut LoadedConfig) {
    let at = path.display();
    let Some(base) = loaded.servers.iter_mut().find(|s| s.name == name) else {
        loaded.errors.push(format!(
            "{at}: server \"{name}\" needs \"command\" or \"url\", or a global server to override"
        ));
        return;
    };
    if value.keys().any(|k| !OVERRIDE_KEYS.contains(&k.as_str())) {
        loaded.errors.push(format!(
            "{at}: server \"{name}\": an override can only set {}",
            OVERRIDE_KEYS.join(", ")
        ));
        return;
    }
    let mut merged = base.config.raw.clone();
    for (k, v) in value {
        merged.insert(k.clone(), v.clone());
    }
    match validate(name, &Value::Object(merged)) {
        Ok(config) => {
            base.config = config;
            base.override_path = Some(path.to_path_buf());
        }
        Err(e) => loaded.errors.push(format!("{at}: {e}")),
    }
}

fn is_server_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn resolve_alias(v: &Value) -> Value {
    match v.as_str() {
        Some("codemode-deferred") => Value::String("codemode".into()),
        _ => v.clone(),
    }
}

fn string_map(v: Option<&Value>, what: &str) -> Result<Vec<(String, String)>, String> {
    match v {
        None => Ok(Vec::new()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                _ => Err(format!("{what} must map names to strings")),
            })
            .collect(),
        Some(_) => Err(format!("{what} must map names to strings")),
    }
}

/// Validates one entry with pi's rules; the error reads `server "<name>": …` as pi's does.
pub fn validate(name: &str, raw: &Value) -> Result<ServerConfig, String> {
    if !is_server_name(name) {
        return Err(format!(
            "invalid server name \"{name}\" (use letters, digits, \"_\" and \"-\")"
        ));
    }
    let Some(obj) = raw.as_object() else {
        return Err(format!("server \"{name}\" must be an object"));
    };
    let mut obj = obj.clone();
    if let Some(e) = obj.get("exposure").map(resolve_alias) {
        obj.insert("exposure".into(), e);
    }
    if let Some(Value::Object(t)) = obj.get("toolExposure") {
        let resolved: Map<String, Value> = t
            .iter()
            .map(|(k, v)| (k.clone(), resolve_alias(v)))
            .collect();
        obj.insert("toolExposure".into(), Value::Object(resolved));
    }
    let fail = |e: String| format!("server \"{name}\": {e}");
    let enabled = match obj.get("enabled") {
        None => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(fail("enabled must be a boolean".into())),
    };
    let description = match obj.get("description") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(fail("description must be a string".into())),
    };
    let timeout_secs = match obj.get("timeout") {
        None => None,
        Some(v) => match v.as_f64() {
            Some(t) if t > 0.0 => Some(t),
            _ => return Err(fail("timeout must be a positive number of seconds".into())),
        },
    };
    let ty = obj.get("type");
    if ty.and_then(Value::as_str) == Some("sse") {
        return Err(fail(
            "legacy SSE transport is not supported; use the streamable HTTP URL".into(),
        ));
    }
    let type_is = |allowed: &[&str]| match ty {
        None => true,
        Some(t) => t.as_str().is_some_and(|t| allowed.contains(&t)),
    };
    let transport = match (obj.get("url"), obj.get("command")) {
        (Some(Value::String(url)), _) if type_is(&["http", "streamable-http"]) => {
            http_fields(&obj, url).map_err(fail)?
        }
        (_, Some(Value::String(command))) if type_is(&["stdio"]) => {
            stdio_fields(&obj, command).map_err(fail)?
        }
        _ => {
            return Err(format!(
                "server \"{name}\" needs either \"command\" (stdio) or \"url\" (streamable HTTP)"
            ))
        }
    };
    let exposure = match obj.get("exposure") {
        None => None,
        Some(v) => Some(
            v.as_str()
                .and_then(Exposure::parse)
                .ok_or_else(|| fail(format!("exposure must be one of {}", exposure_list())))?,
        ),
    };
    let tool_exposure = match obj.get("toolExposure") {
        None => Vec::new(),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(tool, v)| {
                v.as_str()
                    .and_then(Exposure::parse)
                    .map(|e| (tool.clone(), e))
                    .ok_or_else(|| {
                        fail(format!(
                            "toolExposure \"{tool}\" must be one of {}",
                            exposure_list()
                        ))
                    })
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(fail("toolExposure must map tool names to exposures".into())),
    };
    if let (TransportConfig::Http { url, .. }, Some(auth)) = (&transport, obj.get("auth")) {
        if auth
            .get("provider")
            .and_then(Value::as_str)
            .is_none_or(|p| p.is_empty())
        {
            return Err(fail("auth.provider must be a provider name".into()));
        }
        let u = super::url::Url::parse(url);
        if !u
            .as_ref()
            .is_some_and(|u| u.scheme == "https" || u.is_loopback())
        {
            return Err(fail(
                "auth requires an https URL, or http on localhost, 127.0.0.1, or [::1]".into(),
            ));
        }
    }
    Ok(ServerConfig {
        transport,
        enabled,
        timeout_secs,
        description,
        exposure,
        tool_exposure,
        raw: obj,
    })
}

fn exposure_list() -> String {
    EXPOSURES
        .iter()
        .map(|e| format!("\"{e}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

fn http_fields(obj: &Map<String, Value>, url: &str) -> Result<TransportConfig, String> {
    if !super::url::Url::parse(url).is_some_and(|u| u.scheme == "http" || u.scheme == "https") {
        return Err("url must be an http or https URL".into());
    }
    let headers = string_map(obj.get("headers"), "headers")?;
    super::oauth_config::validate(obj.get("oauth"))?;
    // Checked after the exposures, as pi does.
    let auth_provider = obj
        .get("auth")
        .and_then(|a| a.get("provider"))
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok(TransportConfig::Http {
        url: url.to_string(),
        headers,
        auth_provider,
    })
}

fn stdio_fields(obj: &Map<String, Value>, command: &str) -> Result<TransportConfig, String> {
    let args = match obj.get("args") {
        None => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or("args must be an array of strings")?,
        Some(_) => return Err("args must be an array of strings".into()),
    };
    let env = string_map(obj.get("env"), "env")?;
    let cwd = match obj.get("cwd") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err("cwd must be a string".into()),
    };
    Ok(TransportConfig::Stdio {
        command: command.to_string(),
        args,
        env,
        cwd,
    })
}

#[cfg(test)]
#[path = "tests/config.rs"]
mod tests;
