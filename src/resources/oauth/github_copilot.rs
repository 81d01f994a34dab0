//! GitHub Copilot: the device-code flow against github.com or a GitHub Enterprise domain, then
//! the exchange of the GitHub token for a short-lived Copilot token. The GitHub token is kept as
//! `refresh` and the Copilot token as `access` (expiry five minutes early, as pi does); an
//! enterprise login also stores `enterpriseUrl`. The Copilot API base URL is read from the
//! token's `proxy-ep` field.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::error::LoginError;
use super::flow::{get_json, post_form, Credentials, LoginUi, OAuthProvider, FIVE_MINUTES_MS};
use crate::ai::stream::Abort;

/// The editor identity Copilot's token endpoint expects.
const COPILOT_HEADERS: [(&str, &str); 4] = [
    ("user-agent", "GitHubCopilotChat/0.35.0"),
    ("editor-version", "vscode/1.107.0"),
    ("editor-plugin-version", "copilot-chat/0.35.0"),
    ("copilot-integration-id", "vscode-chat"),
];

#[derive(Debug, Clone)]
pub struct GithubCopilot {
    pub client_id: String,
    /// Tests: one `scheme://host:port` standing in for the GitHub, GitHub API and Copilot
    /// hosts (all paths stay the real ones).
    pub base_override: Option<String>,
    /// Milliseconds per second of polling interval (tests shrink time).
    pub second_ms: u64,
    /// Models to enable after login (Copilot asks for policy acceptance for some).
    pub model_ids: Vec<String>,
}

impl Default for GithubCopilot {
    fn default() -> Self {
        GithubCopilot {
            client_id: "Iv1.b507a08c87ecfe98".into(),
            base_override: None,
            second_ms: 1000,
            model_ids: crate::ai::catalog::provider_specs("github-copilot")
                .iter()
                .map(|s| s.id.to_string())
                .collect(),
        }
    }
}

/// The host of a GitHub Enterprise URL or domain; `None` when blank or not a host.
pub fn normalize_domain(input: &str) -> Option<String> {
    let t = input.trim();
    let rest = t.split_once("://").map_or(t, |(_, r)| r);
    let host = rest.split(['/', '?', '#']).next()?.rsplit('@').next()?;
    let host = host.split(':').next()?.to_ascii_lowercase();
    let ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
    ok.then_some(host)
}

/// The Copilot API base URL: `proxy-ep=proxy.X` in the token means `https://api.X`; otherwise
/// the enterprise default, else the individual endpoint.
pub fn copilot_base_url(token: &str, enterprise_domain: Option<&str>) -> String {
    let proxy = token
        .split(';')
        .find_map(|part| part.trim().strip_prefix("proxy-ep="))
        .filter(|h| !h.is_empty());
    if let Some(host) = proxy {
        let host = host
            .strip_prefix("proxy.")
            .map_or(host.to_string(), |h| format!("api.{h}"));
        return format!("https://{host}");
    }
    match enterprise_domain {
        Some(d) => format!("https://copilot-api.{d}"),
        None => "https://api.individual.githubcopilot.com".into(),
    }
}

/// The base URL requests for a stored Copilot credential go to.
pub fn base_url_for(creds: &Credentials) -> String {
    let domain = creds.extra_str("enterpriseUrl").and_then(normalize_domain);
    copilot_base_url(&creds.access, domain.as_deref())
}

struct Urls {
    device_code: String,
    access_token: String,
    copilot_token: String,
}

impl GithubCopilot {
    fn urls(&self, domain: &str) -> Urls {
        let (web, api) = match &self.base_override {
            Some(b) => (b.clone(), b.clone()),
            None => (format!("https://{domain}"), format!("https://api.{domain}")),
        };
        Urls {
            device_code: format!("{web}/login/device/code"),
            access_token: format!("{web}/login/oauth/access_token"),
            copilot_token: format!("{api}/copilot_internal/v2/token"),
        }
    }

    /// Polls for the GitHub token, honouring `interval` and `slow_down` like pi does.
    fn poll(
        &self,
        ui: &dyn LoginUi,
        abort: &Abort,
        domain: &str,
        device: &Value,
    ) -> Result<String, LoginError> {
        let num = |k: &str| device.get(k).and_then(Value::as_f64);
        let device_code = device
            .get("device_code")
            .and_then(Value::as_str)
            .ok_or_else(bad_device_code)?;
        let (Some(interval), Some(expires_in)) = (num("interval"), num("expires_in")) else {
            return Err(bad_device_code());
        };
        let sec = self.second_ms as f64;
        let deadline = Instant::now() + Duration::from_millis((expires_in * sec) as u64);
        let mut interval_ms = (interval * sec).max(sec);
        let mut multiplier = 1.2;
        let mut slow_downs = 0;
        let url = self.urls(domain).access_token;
        while Instant::now() < deadline {
            let remaining = deadline.saturating_duration_since(Instant::now());
            let wait =
                Duration::from_millis((interval_ms * multiplier).ceil() as u64).min(remaining);
            sleep_abortable(wait, abort)?;
            let answer = post_form(
                &url,
                &[
                    ("client_id", &self.client_id),
                    ("device_code", device_code),
                    ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
                ],
                &[COPILOT_HEADERS[0]],
            )?;
            if let Some(token) = answer.get("access_token").and_then(Value::as_str) {
                return Ok(token.to_string());
            }
            match answer.get("error").and_then(Value::as_str) {
                Some("authorization_pending") => {}
                Some("slow_down") => {
                    slow_downs += 1;
                    interval_ms = match answer.get("interval").and_then(Value::as_f64) {
                        Some(i) if i > 0.0 => i * sec,
                        _ => (interval_ms + 5.0 * sec).max(sec),
                    };
                    multiplier = 1.4;
                    ui.progress("GitHub asked to slow down polling; waiting longer.");
                }
                Some(error) => {
                    let description = answer
                        .get("error_description")
                        .and_then(Value::as_str)
                        .map(String::from);
                    return Err(LoginError::DeviceFlow {
                        error: error.to_string(),
                        description,
                    });
                }
                None => {}
            }
        }
        Err(LoginError::TimedOut {
            slowed_down: slow_downs > 0,
        })
    }

    /// Exchanges a GitHub token for a Copilot token.
    fn exchange(
        &self,
        github_token: &str,
        enterprise: Option<&str>,
    ) -> Result<Credentials, LoginError> {
        let url = self.urls(enterprise.unwrap_or("github.com")).copilot_token;
        let auth = format!("Bearer {github_token}");
        let mut headers = vec![
            ("accept", "application/json"),
            ("authorization", auth.as_str()),
        ];
        headers.extend_from_slice(&COPILOT_HEADERS);
        let answer = get_json(&url, &headers)?;
        let (Some(token), Some(expires_at)) = (
            answer.get("token").and_then(Value::as_str),
            answer.get("expires_at").and_then(Value::as_f64),
        ) else {
            return Err(LoginError::BadResponse(
                "Invalid Copilot token response fields".into(),
            ));
        };
        let mut extra = serde_json::Map::new();
        if let Some(d) = enterprise {
            extra.insert("enterpriseUrl".into(), Value::String(d.to_string()));
        }
        Ok(Credentials {
            refresh: github_token.to_string(),
            access: token.to_string(),
            expires: (expires_at * 1000.0) as i64 - FIVE_MINUTES_MS,
            extra,
        })
    }

    /// Accepts the model policies (failures are reported, never fatal).
    fn enable_models(&self, ui: &dyn LoginUi, creds: &Credentials, enterprise: Option<&str>) {
        let base = self
            .base_override
            .clone()
            .unwrap_or_else(|| copilot_base_url(&creds.access, enterprise));
        let auth = format!("Bearer {}", creds.access);
        let mut headers = vec![
            ("content-type", "application/json"),
            ("authorization", auth.as_str()),
            ("openai-intent", "chat-policy"),
            ("x-interaction-type", "chat-policy"),
        ];
        headers.extend_from_slice(&COPILOT_HEADERS);
        let failed: Vec<&str> = self
            .model_ids
            .iter()
            .filter(|id| {
                let url = format!("{base}/models/{id}/policy");
                let r = crate::ai::http::request(
                    "POST",
                    &url,
                    &headers,
                    Some(r#"{"state":"enabled"}"#),
                );
                !matches!(r, Ok((200..=299, _)))
            })
            .map(String::as_str)
            .collect();
        if !failed.is_empty() {
            ui.progress(&format!(
                "Could not enable some models: {}",
                failed.join(", ")
            ));
        }
    }
}

fn bad_device_code() -> LoginError {
    LoginError::BadResponse("Invalid device code response fields".into())
}

fn sleep_abortable(total: Duration, abort: &Abort) -> Result<(), LoginError> {
    let end = Instant::now() + total;
    loop {
        if abort.is_aborted() {
            return Err(LoginError::Cancelled);
        }
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}

impl OAuthProvider for GithubCopilot {
    fn id(&self) -> &'static str {
        "github-copilot"
    }

    fn name(&self) -> &'static str {
        "GitHub Copilot"
    }

    fn login(&self, ui: &dyn LoginUi, abort: &Abort) -> Result<Credentials, LoginError> {
        let input = ui
            .prompt(
                "GitHub Enterprise URL/domain (blank for github.com)",
                Some("company.ghe.com"),
            )
            .map_err(LoginError::Prompt)?;
        if abort.is_aborted() {
            return Err(LoginError::Cancelled);
        }
        let enterprise = normalize_domain(&input);
        if !input.trim().is_empty() && enterprise.is_none() {
            return Err(LoginError::InvalidEnterpriseDomain);
        }
        let domain = enterprise.clone().unwrap_or_else(|| "github.com".into());
        let device = post_form(
            &self.urls(&domain).device_code,
            &[("client_id", &self.client_id), ("scope", "read:user")],
            &[COPILOT_HEADERS[0]],
        )?;
        let field = |k: &str| device.get(k).and_then(Value::as_str);
        let (Some(uri), Some(code)) = (field("verification_uri"), field("user_code")) else {
            return Err(bad_device_code());
        };
        ui.on_auth(uri, Some(&format!("Enter code: {code}")));
        let github_token = self.poll(ui, abort, &domain, &device)?;
        let creds = self.exchange(&github_token, enterprise.as_deref())?;
        ui.progress("Enabling models...");
        self.enable_models(ui, &creds, enterprise.as_deref());
        Ok(creds)
    }

    fn refresh(&self, creds: &Credentials) -> Result<Credentials, LoginError> {
        let enterprise = creds.extra_str("enterpriseUrl").and_then(normalize_domain);
        let mut fresh = self
            .exchange(&creds.refresh, enterprise.as_deref())
            .map_err(|e| e.in_step("GitHub Copilot token refresh"))?;
        // Keep the stored enterprise value verbatim (pi writes back what it read).
        if let Some(v) = creds.extra.get("enterpriseUrl") {
            fresh.extra.insert("enterpriseUrl".into(), v.clone());
        }
        Ok(fresh)
    }
}
