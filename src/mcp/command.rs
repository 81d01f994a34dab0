//! `pi mcp add|remove|list|login|logout`: configure and check MCP servers and sign in to them
//! without a session, with pi's options, messages and exit codes (so agents can run them
//! through bash). `list` connects to every enabled server and exits 1 when an entry is
//! invalid or an enabled server is not connected. `login` and `logout` live in
//! `command_auth`.

use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Map, Value};

pub use super::command_args::Io;

use super::command_args::{parse, shell_config, Kind, NoHooks, HELP_HINT};
use super::config::{self, Scope, ServerEntry};
use super::connection::{AuthContext, ConnState, ServerConnection};
use super::log::ServerLog;
use crate::ai::Abort;
use crate::resources::trust;

const HELP: &str = "Usage:
  pi mcp add <server> [options] -- <command> [args...]
  pi mcp add <server> [options] --url <url>
  pi mcp remove <server> [-l]
  pi mcp list [--json]
  pi mcp login <server> [-l] [--timeout <seconds>]
  pi mcp logout <server> [-l]

Configure and check MCP servers and sign in to OAuth servers without starting a session.
Reads ~/.pi/agent/mcp.json and, in trusted projects, .pi/mcp.json.

Commands:
  add <server>            Add or replace a server in mcp.json
  remove <server>         Remove a server from mcp.json
  list                    Show state, tools, and errors (exits 1 on failure)
  login <server>          Sign in through the browser
  logout <server>         Delete the stored OAuth credentials

Options for add, remove, login, and logout:
  -l, --local             Use .pi/mcp.json in the current project instead of the global file

Options for add:
  --url <url>             Streamable HTTP server URL (instead of a command)
  --env <KEY=VALUE>       Environment variable for a stdio server (repeatable)
  --cwd <dir>             Working directory for a stdio server
  --header <KEY=VALUE>    HTTP header (repeatable)
  --bearer-token-env-var <NAME>
                          Send \"Authorization: Bearer ${NAME}\"
  --oauth-client-id <id>  Pre-registered OAuth client id
  --oauth-client-secret <secret>
                          OAuth client secret (may be ${NAME} or !command)
  --oauth-callback-port <port>
                          Fixed OAuth callback port
  --oauth-client-name <name>
                          Client name sent when registering with the OAuth server
  --oauth-client-registration <mode>
                          auto (default), cimd, or dcr
  --exposure <mode>       codemode (default), deferred, direct, or hidden
  --description <text>    What the server offers, shown in the system prompt

Other options:
  --json                  Print the list as JSON
  --timeout <seconds>     Time limit for the whole sign-in (default: 300)";

/// Runs `pi mcp <args>` and returns the exit code.
pub fn run(args: &[String], agent_dir: &Path, cwd: &Path, io: &mut Io) -> i32 {
    let Some(command) = args.first() else {
        let _ = writeln!(io.out, "{HELP}");
        return 0;
    };
    if command == "help" || args.iter().any(|a| a == "--help" || a == "-h") {
        let _ = writeln!(io.out, "{HELP}");
        return 0;
    }
    let rest = &args[1..];
    match command.as_str() {
        "add" => add(rest, agent_dir, cwd, io),
        "remove" => remove(rest, agent_dir, cwd, io),
        "list" => {
            let Some(p) = parse(rest, &[("json", Kind::Flag)], usize::MAX, io) else {
                return 1;
            };
            if !p.positional.is_empty() {
                let _ = writeln!(io.err, "Usage: pi mcp list [--json]\n{HELP_HINT}");
                return 1;
            }
            list(agent_dir, cwd, p.has("json"), io)
        }
        "login" | "logout" => super::command_auth::run(command, rest, agent_dir, cwd, io),
        _ => {
            let _ = writeln!(io.err, "Unknown mcp command \"{command}\".\n{HELP_HINT}");
            1
        }
    }
}

/// `KEY=VALUE` pairs of a repeatable option.
fn pairs(option: &str, values: Option<&Vec<String>>, io: &mut Io) -> Option<Map<String, Value>> {
    let mut out = Map::new();
    for pair in values.into_iter().flatten() {
        match pair.split_once('=') {
            Some((k, v)) if !k.is_empty() => {
                out.insert(k.to_string(), json!(v));
            }
            _ => {
                let _ = writeln!(io.err, "--{option} expects KEY=VALUE, got \"{pair}\".");
                return None;
            }
        }
    }
    Some(out)
}

const HTTP_ONLY: [&str; 7] = [
    "header",
    "bearer-token-env-var",
    "oauth-client-id",
    "oauth-client-secret",
    "oauth-callback-port",
    "oauth-client-name",
    "oauth-client-registration",
];
const STDIO_ONLY: [&str; 2] = ["env", "cwd"];

fn add(args: &[String], agent_dir: &Path, cwd: &Path, io: &mut Io) -> i32 {
    use Kind::{Flag, List, Value as Val};
    let known = [
        ("local", Flag),
        ("url", Val),
        ("env", List),
        ("cwd", Val),
        ("header", List),
        ("bearer-token-env-var", Val),
        ("oauth-client-id", Val),
        ("oauth-client-secret", Val),
        ("oauth-callback-port", Val),
        ("oauth-client-name", Val),
        ("oauth-client-registration", Val),
        ("exposure", Val),
        ("description", Val),
    ];
    let Some(p) = parse(args, &known, 2, io) else {
        return 1;
    };
    let (name, command) = match p.positional.split_first() {
        Some((n, c)) => (n.clone(), c.to_vec()),
        None => (String::new(), Vec::new()),
    };
    let url = p.value("url").map(str::to_string);
    if name.is_empty() || url.is_none() == command.is_empty() {
        let _ = writeln!(
            io.err,
            "Usage: pi mcp add <server> [options] (--url <url> | -- <command> [args...])\n{HELP_HINT}"
        );
        return 1;
    }
    let misplaced: &[&str] = if url.is_none() {
        &HTTP_ONLY
    } else {
        &STDIO_ONLY
    };
    if let Some(opt) = misplaced.iter().find(|o| p.has(o)) {
        let target = if url.is_none() {
            "HTTP servers (--url)"
        } else {
            "stdio servers"
        };
        let _ = writeln!(io.err, "--{opt} only applies to {target}.");
        return 1;
    }
    let mut entry = Map::new();
    if let Some(url) = &url {
        let Some(mut headers) = pairs("header", p.list("header"), io) else {
            return 1;
        };
        if let Some(var) = p.value("bearer-token-env-var") {
            headers.insert("Authorization".into(), json!(format!("Bearer ${{{var}}}")));
        }
        let mut oauth = Map::new();
        for (opt, key) in [
            ("oauth-client-id", "clientId"),
            ("oauth-client-secret", "clientSecret"),
        ] {
            if let Some(v) = p.value(opt) {
                oauth.insert(key.into(), json!(v));
            }
        }
        if let Some(port) = p.value("oauth-callback-port") {
            let number = port
                .trim()
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64);
            let number = number.map(|n| match n.as_f64() {
                Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => json!(f as i64),
                _ => Value::Number(n),
            });
            oauth.insert("callbackPort".into(), number.unwrap_or(Value::Null));
        }
        for (opt, key) in [
            ("oauth-client-name", "clientName"),
            ("oauth-client-registration", "clientRegistration"),
        ] {
            if let Some(v) = p.value(opt) {
                oauth.insert(key.into(), json!(v));
            }
        }
        entry.insert("url".into(), json!(url));
        if !headers.is_empty() {
            entry.insert("headers".into(), Value::Object(headers));
        }
        if !oauth.is_empty() {
            entry.insert("oauth".into(), Value::Object(oauth));
        }
    } else {
        let Some(env) = pairs("env", p.list("env"), io) else {
            return 1;
        };
        entry.insert("command".into(), json!(command[0]));
        if command.len() > 1 {
            entry.insert("args".into(), json!(command[1..]));
        }
        if !env.is_empty() {
            entry.insert("env".into(), Value::Object(env));
        }
        if let Some(dir) = p.value("cwd") {
            entry.insert("cwd".into(), json!(dir));
        }
    }
    if let Some(e) = p.value("exposure") {
        entry.insert("exposure".into(), json!(e));
    }
    if let Some(d) = p.value("description") {
        entry.insert("description".into(), json!(d));
    }
    let validated = match config::validate(&name, &Value::Object(entry)) {
        Ok(c) => c,
        Err(e) => {
            let _ = writeln!(io.err, "{e}");
            return 1;
        }
    };
    let project = p.has("local");
    let (path, scope) = if project {
        (config::project_path(cwd), "project")
    } else {
        (config::global_path(agent_dir), "global")
    };
    let replaced = match super::edit::add_server(&path, &name, validated.raw.clone()) {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(io.err, "Could not update {}: {e}", path.display());
            return 1;
        }
    };
    let verb = if replaced { "Replaced" } else { "Added" };
    let _ = writeln!(
        io.out,
        "{verb} {scope} MCP server \"{name}\" in {}.",
        path.display()
    );
    if project && trust::TrustStore::load(agent_dir).decision(cwd) != Some(true) {
        let _ = writeln!(
            io.out,
            "The project is not trusted, so {} is ignored until you start pi in the project and trust it.",
            path.display()
        );
    }
    let may_need_sign_in = match &validated.transport {
        config::TransportConfig::Http { headers, .. } => !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("authorization")),
        _ => false,
    };
    if may_need_sign_in {
        let _ = writeln!(
            io.out,
            "Check it with: pi mcp list. If it requires sign-in: pi mcp login {name}"
        );
    } else {
        let _ = writeln!(io.out, "Check it with: pi mcp list");
    }
    0
}

fn remove(args: &[String], agent_dir: &Path, cwd: &Path, io: &mut Io) -> i32 {
    let Some(p) = parse(args, &[("local", Kind::Flag)], usize::MAX, io) else {
        return 1;
    };
    let [name] = p.positional.as_slice() else {
        let _ = writeln!(io.err, "Usage: pi mcp remove <server> [-l]\n{HELP_HINT}");
        return 1;
    };
    let project = p.has("local");
    let (path, scope) = if project {
        (config::project_path(cwd), Scope::Project)
    } else {
        (config::global_path(agent_dir), Scope::Global)
    };
    match super::edit::remove_server(&path, name) {
        Ok(true) => {
            let _ = writeln!(
                io.out,
                "Removed {} MCP server \"{name}\" from {}.",
                scope.as_str(),
                path.display()
            );
            0
        }
        Ok(false) => {
            let other = config::load(agent_dir, cwd, true)
                .servers
                .into_iter()
                .find(|s| s.name == *name && s.scope != scope);
            let hint = other.map_or(String::new(), |o| {
                let fix = if o.scope == Scope::Project {
                    "; use --local"
                } else {
                    "; omit --local"
                };
                format!(" It is defined in {}{fix}.", o.source.display())
            });
            let _ = writeln!(
                io.err,
                "No {} MCP server named \"{name}\" in {}.{hint}",
                scope.as_str(),
                path.display()
            );
            1
        }
        Err(e) => {
            let _ = writeln!(io.err, "Could not update {}: {e}", path.display());
            1
        }
    }
}

/// One server's line in `list`.
fn report(entry: &ServerEntry, conn: Option<&Arc<ServerConnection>>) -> Map<String, Value> {
    let c = &entry.config;
    let mut r = Map::new();
    r.insert("name".into(), json!(entry.name));
    r.insert("scope".into(), json!(entry.scope.as_str()));
    r.insert("source".into(), json!(entry.source.display().to_string()));
    if let Some(o) = &entry.override_path {
        r.insert("override".into(), json!(o.display().to_string()));
    }
    r.insert("enabled".into(), json!(c.enabled));
    r.insert("exposure".into(), json!(c.exposure().as_str()));
    r.insert("transport".into(), json!(c.describe_transport()));
    if let config::TransportConfig::Http {
        auth_provider: Some(p),
        ..
    } = &c.transport
    {
        r.insert("authProvider".into(), json!(p));
    }
    let Some(conn) = conn else {
        r.insert("state".into(), json!("disabled"));
        r.insert("tools".into(), json!([]));
        return r;
    };
    let status = conn.status();
    r.insert("state".into(), json!(status.state.as_str()));
    let names: Vec<&str> = status
        .tools
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    r.insert("tools".into(), json!(names));
    let overrides: Map<String, Value> = names
        .iter()
        .filter_map(|t| {
            let e = c.tool_exposure(t);
            (e != c.exposure()).then(|| (t.to_string(), json!(e.as_str())))
        })
        .collect();
    if !overrides.is_empty() {
        r.insert("toolExposure".into(), Value::Object(overrides));
    }
    if status.has_resources {
        r.insert("resources".into(), json!(true));
    }
    if status.state != ConnState::Connected {
        if let Some(e) = status.error {
            r.insert("error".into(), json!(e));
        }
    }
    r
}

fn list(agent_dir: &Path, cwd: &Path, as_json: bool, io: &mut Io) -> i32 {
    let (loaded, untrusted_note) = shell_config(agent_dir, cwd);
    let log = Arc::new(ServerLog::new(agent_dir.join("mcp.log")));
    let auth = AuthContext::for_agent_dir(agent_dir);
    let conns: Vec<Option<Arc<ServerConnection>>> = loaded
        .servers
        .iter()
        .map(|e| {
            e.config.enabled.then(|| {
                let conn = ServerConnection::new(
                    &e.name,
                    e.config.clone(),
                    cwd,
                    Some(Arc::clone(&log)),
                    Some(&auth),
                    Arc::new(NoHooks),
                );
                conn.start();
                conn
            })
        })
        .collect();
    let abort = Abort::new();
    for c in conns.iter().flatten() {
        c.wait_settled(Some(&abort));
    }
    let reports: Vec<Map<String, Value>> = loaded
        .servers
        .iter()
        .zip(&conns)
        .map(|(e, c)| report(e, c.as_ref()))
        .collect();
    std::thread::scope(|s| {
        for c in conns.iter().flatten() {
            s.spawn(|| c.close());
        }
    });
    let failed = !loaded.errors.is_empty()
        || reports
            .iter()
            .any(|r| r["enabled"] == json!(true) && r["state"] != json!("connected"));
    let code = i32::from(failed);
    if as_json {
        let mut doc = json!({"servers": reports, "errors": loaded.errors});
        if let Some(n) = &untrusted_note {
            doc["note"] = json!(n);
        }
        let _ = writeln!(
            io.out,
            "{}",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        );
        return code;
    }
    if reports.is_empty() && loaded.errors.is_empty() {
        let _ = writeln!(
            io.out,
            "No MCP servers configured. Add them to {} or .pi/mcp.json.",
            config::global_path(agent_dir).display()
        );
    }
    for r in &reports {
        let s = |k: &str| {
            r.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let tools: Vec<&str> = r["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let state = match s("state").as_str() {
            "connected" => format!(
                "connected, {} tool{}",
                tools.len(),
                if tools.len() == 1 { "" } else { "s" }
            ),
            "needs-auth" => "needs sign-in".into(),
            other => other.to_string(),
        };
        let _ = writeln!(
            io.out,
            "{}: {state} ({}, {})",
            s("name"),
            s("exposure"),
            s("scope")
        );
        let _ = writeln!(io.out, "  {}", s("transport"));
        if r.contains_key("override") {
            let _ = writeln!(io.out, "  project override: {}", s("override"));
        }
        if s("state") == "needs-auth" {
            let _ = match r.get("authProvider").and_then(Value::as_str) {
                Some(p) => writeln!(io.out, "  sign in with: /login {p} in pi"),
                None => writeln!(io.out, "  sign in with: pi mcp login {}", s("name")),
            };
        }
        if !tools.is_empty() {
            let listed: Vec<String> = tools
                .iter()
                .map(|t| {
                    match r
                        .get("toolExposure")
                        .and_then(|o| o.get(*t))
                        .and_then(Value::as_str)
                    {
                        Some(e) => format!("{t} [{e}]"),
                        None => t.to_string(),
                    }
                })
                .collect();
            let _ = writeln!(io.out, "  tools: {}", listed.join(", "));
        }
        if r.contains_key("resources") {
            let _ = writeln!(io.out, "  offers resources");
        }
        if r.contains_key("error") {
            let _ = writeln!(io.out, "  {}", s("error").replace('\n', "\n  "));
        }
    }
    for e in &loaded.errors {
        let _ = writeln!(io.out, "config error: {e}");
    }
    if let Some(n) = &untrusted_note {
        let _ = writeln!(io.out, "{n}");
    }
    code
}

#[cfg(test)]
#[path = "tests/command.rs"]
mod tests;
