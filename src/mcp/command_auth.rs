//! `pi mcp login <server>` and `pi mcp logout <server>`: sign in to an OAuth server from the
//! shell (an agent can start it through bash; the user only approves in the browser) and
//! delete its stored credentials, with pi's messages and exit codes. `login` first connects:
//! a server that works needs no sign-in. The authorization URL is printed (and opened when
//! there is a desktop); on a terminal the redirected URL can also be pasted. `--timeout`
//! (default 300 s) limits the whole sign-in.

use std::cell::RefCell;
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;

use super::command_args::{parse, shell_config, Io, Kind, NoHooks, HELP_HINT};
use super::config::Scope;
use super::connection::{auth_provider, AuthContext, ConnState, ServerConnection};
use super::oauth::signin::{sign_in, SignIn};
use super::oauth::OAuthError;
use crate::ai::Abort;
use crate::resources::oauth::LoginUi;

const DEFAULT_LOGIN_TIMEOUT_SECS: f64 = 300.0;

/// Levenshtein distance, to suggest a configured name for a mistyped one.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            current.push(
                (previous[j + 1] + 1)
                    .min(current[j] + 1)
                    .min(previous[j] + cost),
            );
        }
        previous = current;
    }
    previous[b.len()]
}

pub(super) fn run(
    command: &str,
    args: &[String],
    agent_dir: &Path,
    cwd: &Path,
    io: &mut Io,
) -> i32 {
    let login = command == "login";
    let known: &[(&str, Kind)] = if login {
        &[("local", Kind::Flag), ("timeout", Kind::Value)]
    } else {
        &[("local", Kind::Flag)]
    };
    let Some(p) = parse(args, known, usize::MAX, io) else {
        return 1;
    };
    let [name] = p.positional.as_slice() else {
        let _ = writeln!(io.err, "Usage: pi mcp {command} <server> [-l]\n{HELP_HINT}");
        return 1;
    };
    let (loaded, untrusted_note) = shell_config(agent_dir, cwd);
    let Some(entry) = loaded.servers.iter().find(|s| s.name == *name) else {
        let names: Vec<&str> = loaded.servers.iter().map(|s| s.name.as_str()).collect();
        let suggestion = names
            .iter()
            .find(|n| edit_distance(n, name) <= 2)
            .map_or(String::new(), |n| format!(" Did you mean \"{n}\"?"));
        let note = untrusted_note.map_or(String::new(), |n| format!(" {n}"));
        let configured = if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        };
        let _ = writeln!(
            io.err,
            "No MCP server named \"{name}\".{suggestion}{note} Configured: {configured}."
        );
        return 1;
    };
    if p.has("local") && entry.scope != Scope::Project {
        let _ = writeln!(
            io.err,
            "MCP server \"{name}\" is defined in {}, not in the project; omit --local.",
            entry.source.display()
        );
        return 1;
    }
    if let Some(provider) = auth_provider(&entry.config) {
        let _ = writeln!(
            io.err,
            "MCP server \"{name}\" uses the credentials of provider \"{provider}\". Run \"pi auth {command} {provider}\"."
        );
        return 1;
    }
    let auth = AuthContext::for_agent_dir(agent_dir);
    let log = Arc::new(super::log::ServerLog::new(agent_dir.join("mcp.log")));
    let conn = ServerConnection::new(
        name,
        entry.config.clone(),
        cwd,
        Some(log),
        Some(&auth),
        Arc::new(NoHooks),
    );
    let Some(url) = conn.oauth_url().map(str::to_string) else {
        let _ = writeln!(
            io.err,
            "MCP server \"{name}\" does not use OAuth. Only HTTP servers without an Authorization header do."
        );
        return 1;
    };
    if !login {
        return match auth.credentials.remove(name, &url) {
            Ok(removed) => {
                let _ = if removed {
                    writeln!(io.out, "Signed out of MCP server \"{name}\".")
                } else {
                    writeln!(io.out, "No stored credentials for MCP server \"{name}\".")
                };
                0
            }
            Err(e) => {
                let _ = writeln!(
                    io.err,
                    "Could not update {}: {e}",
                    auth.credentials.path().display()
                );
                1
            }
        };
    }
    let timeout = match p.value("timeout") {
        None => DEFAULT_LOGIN_TIMEOUT_SECS,
        Some(t) => match t.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => v,
            _ => {
                let _ = writeln!(io.err, "--timeout must be a positive number of seconds.");
                return 1;
            }
        },
    };
    let code = sign_in_to(&conn, name, Duration::from_secs_f64(timeout), io);
    conn.close();
    code
}

fn tool_count(conn: &ServerConnection) -> usize {
    conn.status().tools.len()
}

fn sign_in_to(conn: &ServerConnection, name: &str, timeout: Duration, io: &mut Io) -> i32 {
    let abort = Abort::new();
    // Connecting first answers whether a sign-in is needed and records the server's challenge.
    match conn.client(&abort) {
        Ok(_) => {
            let _ = writeln!(
                io.out,
                "Already signed in to MCP server \"{name}\" ({} tools).",
                tool_count(conn)
            );
            return 0;
        }
        Err(_) if conn.state() == ConnState::NeedsAuth => {}
        Err(_) => {
            let error = conn
                .status()
                .error
                .unwrap_or_else(|| "unknown error".into());
            let _ = writeln!(io.err, "MCP server \"{name}\" failed to connect: {error}");
            return 1;
        }
    }
    let (Some(store), Ok(settings)) = (conn.credentials(), conn.oauth_settings()) else {
        let error = conn.oauth_settings().err().unwrap_or_default();
        let _ = writeln!(io.err, "Sign-in to MCP server \"{name}\" failed: {error}");
        return 1;
    };
    let url = conn.oauth_url().unwrap_or_default().to_string();
    let deadline = Deadline::start(timeout, abort.clone());
    let challenge = conn.challenge();
    let result = {
        let ui = TerminalUi {
            name,
            out: RefCell::new(&mut *io.out),
            interactive: std::io::stdin().is_terminal(),
        };
        sign_in(&SignIn {
            server_name: name,
            server_url: &url,
            store,
            settings: &settings,
            challenge: challenge.as_ref(),
            ui: &ui,
            abort: &abort,
        })
    };
    drop(deadline);
    if let Err(e) = result {
        let _ = match e {
            OAuthError::Cancelled => writeln!(
                io.err,
                "Sign-in to MCP server \"{name}\" was cancelled or not completed within {} seconds.",
                timeout.as_secs_f64().round()
            ),
            other => writeln!(io.err, "Sign-in to MCP server \"{name}\" failed: {other}"),
        };
        return 1;
    }
    conn.clear_challenge();
    if let Err(e) = conn.reconnect(&Abort::new()) {
        let _ = writeln!(io.err, "Signed in, but {e}");
        return 1;
    }
    let _ = writeln!(
        io.out,
        "Signed in to MCP server \"{name}\" ({} tools).",
        tool_count(conn)
    );
    0
}

/// Raises the abort flag once the time is up (unless dropped first).
struct Deadline {
    done: Arc<AtomicBool>,
}

impl Deadline {
    fn start(limit: Duration, abort: Abort) -> Deadline {
        let done = Arc::new(AtomicBool::new(false));
        let watching = Arc::clone(&done);
        // Detached: it ends at the deadline or within 50 ms of the sign-in ending.
        let _ = std::thread::Builder::new()
            .name("pi-mcp-login-timeout".into())
            .spawn(move || {
                let until = Instant::now() + limit;
                while Instant::now() < until {
                    if watching.load(Ordering::SeqCst) {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                abort.abort();
            });
        Deadline { done }
    }
}

impl Drop for Deadline {
    fn drop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
    }
}

/// The sign-in's side of the terminal: the URL on stdout, a pasted redirect URL from a
/// terminal's stdin.
struct TerminalUi<'a> {
    name: &'a str,
    out: RefCell<&'a mut dyn Write>,
    interactive: bool,
}

impl LoginUi for TerminalUi<'_> {
    fn on_auth(&self, url: &str, _instructions: Option<&str>) {
        let mut out = self.out.borrow_mut();
        let _ = writeln!(
            out,
            "Sign in to MCP server \"{}\" in your browser:\n{url}",
            self.name
        );
        let _ = out.flush();
        crate::util::browser::open(url);
    }

    fn prompt(&self, _message: &str, _placeholder: Option<&str>) -> Result<String, String> {
        Err("Sign-in cancelled".into())
    }

    fn progress(&self, _message: &str) {}

    fn manual_input(&self) -> Option<Receiver<String>> {
        if !self.interactive {
            return None;
        }
        eprint!("If the browser cannot reach this machine, paste the URL it was redirected to: ");
        let _ = std::io::stderr().flush();
        let (tx, rx) = crossbeam_channel::bounded(1);
        // Detached: a terminal read cannot be interrupted; the line, if any, is dropped.
        std::thread::Builder::new()
            .name("pi-mcp-login-paste".into())
            .spawn(move || {
                let mut line = String::new();
                if std::io::stdin()
                    .lock()
                    .read_line(&mut line)
                    .is_ok_and(|n| n > 0)
                {
                    let _ = tx.send(line);
                }
            })
            .ok()?;
        Some(rx)
    }
}

#[cfg(test)]
mod tests {
    use super::edit_distance;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("sentry", "sentyr"), 2);
        assert_eq!(edit_distance("docs", "docs"), 0);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
