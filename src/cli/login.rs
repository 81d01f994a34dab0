//! `pi --login <provider>`: the headless login. (`pi login` stays a prompt, as in pi.) OAuth
//! providers run their flow on the terminal — URL and instructions on stderr, the browser
//! callback or a code pasted on stdin, whichever comes first — and any other known provider
//! reads an API key from stdin. Either way the credential is saved to `<agentDir>/auth.json`.
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

/// Runs the login for `provider`; returns the exit code.
pub fn run(provider: &str) -> i32 {
    let path = crate::resources::agent_dir().join("auth.json");
    let mut auth = AuthStorage::load(&path);
    if let Some(e) = auth.load_error() {
        eprintln!("Error: {e}");
        return 1;
    }
    let result = match oauth_flow(provider) {
        Some(flow) => login_oauth(&*flow, &mut auth),
        None if catalog::is_builtin_provider(provider) => login_api_key(provider, &mut auth),
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

fn login_oauth(flow: &dyn OAuthProvider, auth: &mut AuthStorage) -> Result<String, String> {
    eprintln!("Logging in to {}...", flow.name());
    let creds = flow.login(&TerminalUi, &Abort::new())?;
    auth.set(flow.id(), creds.to_json())?;
    Ok(flow.name().to_string())
}

fn login_api_key(provider: &str, auth: &mut AuthStorage) -> Result<String, String> {
    let env = catalog::env_key_vars(provider)
        .first()
        .map(|v| format!(" (the value you would put in {v})"))
        .unwrap_or_default();
    let key = TerminalUi.prompt(&format!("Paste your API key for {provider}{env}:"), None)?;
    let key = key.trim();
    if key.is_empty() {
        return Err("No API key given; nothing saved.".into());
    }
    auth.set(provider, json!({"type": "api_key", "key": key}))?;
    Ok(provider.to_string())
}

/// The terminal as a login UI: everything for the user goes to stderr, answers come from stdin.
struct TerminalUi;

fn read_stdin_line() -> Result<String, String> {
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| format!("could not read stdin: {e}"))?;
    Ok(line.trim().to_string())
}

impl LoginUi for TerminalUi {
    fn on_auth(&self, url: &str, instructions: Option<&str>) {
        eprintln!("\nOpen this URL in your browser:\n\n  {url}\n");
        if let Some(i) = instructions {
            eprintln!("{i}");
        }
        open_browser(url);
    }

    fn prompt(&self, message: &str, placeholder: Option<&str>) -> Result<String, String> {
        match placeholder {
            Some(p) => eprint!("{message} [{p}]: "),
            None => eprint!("{message} "),
        }
        let _ = std::io::stderr().flush();
        read_stdin_line()
    }

    fn progress(&self, message: &str) {
        eprintln!("{message}");
    }

    fn manual_input(&self) -> Option<Receiver<String>> {
        eprintln!(
            "Waiting for the browser... or paste the authorization code / redirect URL here:"
        );
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

/// Best effort: hand the URL to the desktop's opener when there is a desktop to open it on.
fn open_browser(url: &str) {
    if !std::io::stderr().is_terminal() {
        return;
    }
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some()
    {
        "xdg-open"
    } else {
        return;
    };
    let _ = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}
