//! Logging in from the shell, without a session: pi 1.x's `pi auth login <provider>
//! [--api-key] [--no-browser]` and `pi auth logout <provider>`, and our older
//! `pi --login <provider>`. OAuth providers run their flow on the terminal (URL and
//! instructions shown, the browser callback or a pasted code, whichever comes first); other
//! providers read an API key. Credentials go to `<agentDir>/auth.json`.
//!
//! `pi auth login` needs a terminal, as pi's does, and reads the key without echo. `--login`
//! is ours and works headless: everything for the user goes to stderr, and the key or code may
//! be piped on stdin.
//!
//! Test hook: `PI_OAUTH_TEST_BASE=<http://host:port>` points every OAuth endpoint at that server
//! (`/authorize`, `/token`, GitHub's real paths) and uses a free callback port.

use std::io::{BufRead, IsTerminal, Write};

use crossbeam_channel::Receiver;
use serde_json::json;

use crate::ai::catalog;
use crate::ai::stream::Abort;
use crate::resources::auth::AuthStorage;
use crate::resources::oauth::{self, LoginUi, OAuthProvider};
use crate::resources::provider_names::{api_key_providers, custom_providers, provider_name};
use crate::util::sort;

/// `pi auth login`'s usage line.
pub const LOGIN_USAGE: &str = "pi auth login <provider> [--api-key] [--no-browser]";
const LOGOUT_USAGE: &str = "pi auth logout <provider>";

fn auth_path() -> std::path::PathBuf {
    crate::resources::agent_dir().join("auth.json")
}

/// `pi --login <provider>`: the provider's account login if it has one, else an API key.
/// Returns the exit code.
pub fn run(provider: &str) -> i32 {
    let path = auth_path();
    let mut auth = AuthStorage::load(&path);
    if let Some(e) = auth.load_error() {
        eprintln!("Error: {e}");
        return 1;
    }
    let ui = TerminalUi {
        to_stdout: false,
        browser: true,
    };
    let result = match oauth_flow(provider) {
        Some(flow) => login_oauth(&*flow, &mut auth, &ui),
        None if catalog::is_builtin_provider(provider) => {
            login_api_key(provider, &mut auth, &ui).map(|_| provider.to_string())
        }
        None => Err(format!(
            "Unknown provider \"{provider}\". OAuth providers: {}; API-key providers: {}",
            oauth::providers()
                .iter()
                .map(|p| p.id())
                .collect::<Vec<_>>()
                .join(", "),
            catalog::providers().join(", ")
        )),
    };
    match result {
        Ok(name) => {
            eprintln!("Logged in to {name}. Saved to {}", path.display());
            0
        }
        Err(e) => {
            eprintln!("Error: {e}");
            1
        }
    }
}

/// Providers `pi auth login` knows: account (OAuth) logins, API-key logins, models.json ones.
fn login_providers(custom: &[(String, String)]) -> Vec<String> {
    let mut ids: Vec<String> = oauth::providers()
        .iter()
        .map(|p| p.id().to_string())
        .chain(api_key_providers().map(|(id, _)| id.to_string()))
        .chain(custom.iter().map(|(id, _)| id.clone()))
        .collect();
    sort::sort(&mut ids);
    ids.dedup();
    ids
}

/// Providers whose credentials come from their environment (AWS, Google Cloud), not a key.
fn ambient_method(provider: &str) -> Option<&'static str> {
    match provider {
        "amazon-bedrock" => Some("AWS credentials"),
        "google-vertex" => Some("Google Cloud application default credentials"),
        _ => None,
    }
}

/// `pi auth login <provider> [--api-key] [--no-browser]`: returns the exit code.
pub fn auth_login(args: &[String]) -> i32 {
    let mut provider = None;
    let (mut api_key, mut browser) = (false, true);
    for arg in args {
        match arg.as_str() {
            "--api-key" => api_key = true,
            "--no-browser" => browser = false,
            a if a.starts_with('-') || provider.is_some() => {
                eprintln!("Usage: {LOGIN_USAGE}");
                return 1;
            }
            a => provider = Some(a.to_string()),
        }
    }
    let Some(provider) = provider else {
        eprintln!("Usage: {LOGIN_USAGE}");
        return 1;
    };
    if api_key && !browser {
        eprintln!("--no-browser only applies to account sign-in; omit it with --api-key.");
        return 1;
    }
    let agent_dir = crate::resources::agent_dir();
    let custom = custom_providers(&agent_dir);
    let known = login_providers(&custom);
    if !known.contains(&provider) && ambient_method(&provider).is_none() {
        eprintln!("Unknown provider \"{}\".", visible(&provider));
        eprintln!("Providers: {}", known.join(", "));
        return 1;
    }
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        eprintln!("\"{LOGIN_USAGE}\" requires an interactive terminal");
        return 1;
    }
    let name = provider_name(&provider, &custom);
    let flow = oauth_flow(&provider);
    let key_login = ambient_method(&provider).is_none()
        && (api_key_providers().any(|(id, _)| id == provider)
            || custom.iter().any(|(id, _)| *id == provider));
    let use_oauth = if flow.is_some() && !api_key {
        true
    } else if key_login {
        false
    } else if flow.is_some() {
        eprintln!("{name} has no API key login. Omit --api-key to sign in.");
        return 1;
    } else {
        let method = ambient_method(&provider).unwrap_or("ambient credentials");
        eprintln!("{name} is configured outside pi ({method}).");
        return 1;
    };
    let path = auth_path();
    let mut auth = AuthStorage::load(&path);
    if let Some(e) = auth.load_error() {
        eprintln!("Error: {e}");
        return 1;
    }
    let ui = TerminalUi {
        to_stdout: true,
        browser,
    };
    let result = match flow.filter(|_| use_oauth) {
        Some(flow) => login_oauth(&*flow, &mut auth, &ui).map(|_| "Logged in to"),
        None => login_api_key(&provider, &mut auth, &ui).map(|_| "Saved API key for"),
    };
    match result {
        Ok(done) => {
            println!("{done} {name}. Credentials saved to {}", path.display());
            0
        }
        Err(e) if e == CANCELLED => {
            eprintln!("Login cancelled.");
            1
        }
        Err(e) => {
            eprintln!("Failed to log in to {name}: {e}");
            1
        }
    }
}

/// `pi auth logout <provider>`: removes what a login stored; returns the exit code.
pub fn auth_logout(args: &[String]) -> i32 {
    let [provider] = args else {
        eprintln!("Usage: {LOGOUT_USAGE}");
        return 1;
    };
    if provider.starts_with('-') {
        eprintln!("Usage: {LOGOUT_USAGE}");
        return 1;
    }
    let path = auth_path();
    let mut auth = AuthStorage::load(&path);
    if let Some(e) = auth.load_error() {
        eprintln!("Could not read stored credentials: {e}");
        return 1;
    }
    let custom = custom_providers(&crate::resources::agent_dir());
    let known = login_providers(&custom).contains(provider)
        || catalog::is_builtin_provider(provider)
        || ambient_method(provider).is_some();
    let stored = auth.get(provider).cloned();
    let name = provider_name(provider, &custom);
    match stored {
        None if !known => {
            eprintln!("Unknown provider \"{}\".", visible(provider));
            let mut ids = auth.list();
            sort::sort(&mut ids);
            let ids = if ids.is_empty() {
                "none".to_string()
            } else {
                ids.join(", ")
            };
            eprintln!("Stored credentials: {ids}");
            1
        }
        None => {
            println!("No stored credentials for {name}. Environment variables and models.json config are unchanged.");
            0
        }
        Some(credential) => match auth.remove(provider) {
            Ok(()) if credential["type"] == "oauth" => {
                println!("Logged out of {name}.");
                0
            }
            Ok(()) => {
                println!("Removed stored API key for {name}. Environment variables and models.json config are unchanged.");
                0
            }
            Err(e) => {
                eprintln!("Logout failed: {e}");
                1
            }
        },
    }
}

/// A name as typed, with control characters made harmless for the terminal.
fn visible(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect()
}

/// The OAuth flow of `provider`, pointed at `PI_OAUTH_TEST_BASE` when that is set.
pub(super) fn oauth_flow(provider: &str) -> Option<Box<dyn OAuthProvider>> {
    let Some(base) = std::env::var("PI_OAUTH_TEST_BASE")
        .ok()
        .filter(|b| !b.is_empty())
    else {
        return oauth::provider(provider);
    };
    let (authorize_url, token_url) = (format!("{base}/authorize"), format!("{base}/token"));
    Some(match provider {
        "anthropic" => Box::new(oauth::anthropic::Anthropic {
            authorize_url,
            token_url,
            callback_port: 0,
            ..Default::default()
        }),
        "openai-codex" => Box::new(oauth::openai_codex::OpenAiCodex {
            authorize_url,
            token_url,
            callback_port: 0,
            ..Default::default()
        }),
        "github-copilot" => Box::new(oauth::github_copilot::GithubCopilot {
            base_override: Some(base),
            second_ms: 10,
            model_ids: Vec::new(),
            ..Default::default()
        }),
        _ => return None,
    })
}

fn login_oauth(
    flow: &dyn OAuthProvider,
    auth: &mut AuthStorage,
    ui: &TerminalUi,
) -> Result<String, String> {
    ui.say(&format!("Logging in to {}...", flow.name()));
    let creds = flow.login(ui, &Abort::new())?;
    auth.set(flow.id(), creds.to_json())?;
    Ok(flow.name().to_string())
}

fn login_api_key(provider: &str, auth: &mut AuthStorage, ui: &TerminalUi) -> Result<(), String> {
    let env = catalog::env_key_vars(provider)
        .first()
        .map(|v| format!(" (the value you would put in {v})"))
        .unwrap_or_default();
    let message = format!("Paste your API key for {provider}{env}:");
    let key = if ui.to_stdout && std::io::stdin().is_terminal() {
        ui.secret(&message)?
    } else {
        ui.prompt(&message, None)?
    };
    let key = key.trim();
    if key.is_empty() {
        return Err("No API key given; nothing saved.".into());
    }
    auth.set(provider, json!({"type": "api_key", "key": key}))
}

/// What a cancelled prompt (end of input) reports.
const CANCELLED: &str = "Login cancelled";

/// The terminal as a login UI: messages to stdout (`pi auth login`) or stderr (`--login`),
/// answers from stdin.
struct TerminalUi {
    to_stdout: bool,
    /// Whether to open the sign-in page in a browser.
    browser: bool,
}

impl TerminalUi {
    fn say(&self, line: &str) {
        if self.to_stdout {
            println!("{line}");
        } else {
            eprintln!("{line}");
        }
    }

    fn ask(&self, text: &str) {
        if self.to_stdout {
            print!("{text}");
            let _ = std::io::stdout().flush();
        } else {
            eprint!("{text}");
            let _ = std::io::stderr().flush();
        }
    }

    /// One line read without echo.
    fn secret(&self, message: &str) -> Result<String, String> {
        use termion::input::TermRead;
        use termion::raw::IntoRawMode;
        // Echo goes off before the prompt shows: a key typed or pasted the moment the prompt
        // appears must not reach the screen.
        let quiet = std::io::stdout()
            .into_raw_mode()
            .map_err(|e| format!("could not read stdin: {e}"))?;
        self.ask(&format!("{message} "));
        let line = TermRead::read_line(&mut std::io::stdin().lock())
            .map_err(|e| format!("could not read stdin: {e}"));
        drop(quiet);
        let line = line?;
        self.say("");
        line.ok_or_else(|| CANCELLED.to_string())
    }
}

fn read_stdin_line() -> Result<String, String> {
    let mut line = String::new();
    let n = std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| format!("could not read stdin: {e}"))?;
    if n == 0 && std::io::stdin().is_terminal() {
        return Err(CANCELLED.into());
    }
    Ok(line.trim().to_string())
}

impl LoginUi for TerminalUi {
    fn on_auth(&self, url: &str, instructions: Option<&str>) {
        if self.to_stdout {
            self.say(&format!("Open this URL to sign in:\n  {url}"));
        } else {
            self.say(&format!("\nOpen this URL in your browser:\n\n  {url}\n"));
        }
        if let Some(i) = instructions {
            self.say(i);
        }
        if self.browser {
            crate::util::browser::open(url);
        }
    }

    fn prompt(&self, message: &str, placeholder: Option<&str>) -> Result<String, String> {
        match placeholder {
            Some(p) => self.ask(&format!("{message} [{p}]: ")),
            None => self.ask(&format!("{message} ")),
        }
        read_stdin_line()
    }

    fn progress(&self, message: &str) {
        self.say(message);
    }

    fn manual_input(&self) -> Option<Receiver<String>> {
        self.say("Waiting for the browser... or paste the authorization code / redirect URL here:");
        let (tx, rx) = crossbeam_channel::bounded(1);
        // Detached on purpose: if the browser callback wins, this thread stays blocked on stdin
        // until the process exits a moment later.
        let spawned = std::thread::Builder::new()
            .name("pi-login-stdin".into())
            .spawn(move || {
                if let Ok(line) = read_stdin_line() {
                    if !line.is_empty() {
                        let _ = tx.send(line);
                    }
                }
            });
        spawned.ok().map(|_| rx)
    }
}
