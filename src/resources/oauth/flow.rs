//! What every OAuth login flow shares: the [`LoginUi`] it talks to its user through, the
//! [`Credentials`] it produces, the [`OAuthProvider`] trait each provider implements, and the
//! steps the flows have in common (reading a pasted code or the browser callback, the token
//! endpoint's JSON and form posts, expiry times).

use std::time::Duration;

use crossbeam_channel::Receiver;
use serde_json::{json, Map, Value};

use super::callback::{Callback, CallbackServer};
use super::error::LoginError;
use super::pkce;
use crate::ai::http;
use crate::ai::stream::Abort;

/// How a login flow talks to its user.
pub trait LoginUi {
    /// Show the URL to open (and try to open it), with optional instructions.
    fn on_auth(&self, url: &str, instructions: Option<&str>);
    /// Ask for one line of input; `Err` cancels the login.
    fn prompt(&self, message: &str, placeholder: Option<&str>) -> Result<String, String>;
    /// A progress note ("Exchanging authorization code for tokens...").
    fn progress(&self, message: &str);
    /// A channel on which a pasted code or redirect URL may arrive *while* the callback server
    /// waits (whichever comes first wins). `None`: only the callback, then [`LoginUi::prompt`].
    fn manual_input(&self) -> Option<Receiver<String>> {
        None
    }
}

/// OAuth credentials as stored in auth.json (minus `"type":"oauth"`).
#[derive(Debug, Clone, PartialEq)]
pub struct Credentials {
    pub refresh: String,
    pub access: String,
    /// Expiry in milliseconds since the epoch (already shortened by a safety margin where pi
    /// does so).
    pub expires: i64,
    /// Provider extras (`accountId`, `enterpriseUrl`, or fields written by other tools).
    pub extra: Map<String, Value>,
}

impl Credentials {
    /// Reads a stored `{"type":"oauth",...}` entry.
    pub fn from_json(v: &Value) -> Option<Self> {
        let obj = v.as_object()?;
        if obj.get("type").and_then(Value::as_str) != Some("oauth") {
            return None;
        }
        let s = |k: &str| obj.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let expires = obj.get("expires").and_then(Value::as_f64).unwrap_or(0.0) as i64;
        let mut extra = obj.clone();
        for k in ["type", "refresh", "access", "expires"] {
            extra.remove(k);
        }
        Some(Credentials {
            refresh: s("refresh"),
            access: s("access"),
            expires,
            extra,
        })
    }

    /// The auth.json entry.
    pub fn to_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("type".into(), json!("oauth"));
        obj.insert("refresh".into(), json!(self.refresh));
        obj.insert("access".into(), json!(self.access));
        obj.insert("expires".into(), json!(self.expires));
        for (k, v) in &self.extra {
            obj.insert(k.clone(), v.clone());
        }
        Value::Object(obj)
    }

    /// pi refreshes once `now >= expires` (the margin is baked into `expires`).
    pub fn is_expired(&self) -> bool {
        self.expires_within(0)
    }

    /// Whether less than `ms` milliseconds of validity are left.
    pub fn expires_within(&self, ms: i64) -> bool {
        crate::ai::types::now_ms().saturating_add(ms) >= self.expires
    }

    pub fn extra_str(&self, key: &str) -> Option<&str> {
        self.extra.get(key).and_then(Value::as_str)
    }
}

/// One OAuth provider: how to log in, refresh, and turn credentials into an API key.
pub trait OAuthProvider: Send + Sync {
    fn id(&self) -> &'static str;
    /// The display name pi shows in `/login`.
    fn name(&self) -> &'static str;
    fn login(&self, ui: &dyn LoginUi, abort: &Abort) -> Result<Credentials, LoginError>;
    fn refresh(&self, creds: &Credentials) -> Result<Credentials, LoginError>;
    fn api_key(&self, creds: &Credentials) -> String {
        creds.access.clone()
    }
}

/// `code` and `state` from what a user pasted: a full redirect URL, `code#state`, a query
/// string, or a bare code.
pub fn parse_authorization_input(input: &str) -> (Option<String>, Option<String>) {
    let value = input.trim();
    if value.is_empty() {
        return (None, None);
    }
    let non_empty = |s: Option<String>| s.filter(|s| !s.is_empty());
    if let Some((scheme, rest)) = value.split_once("://") {
        if !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphanumeric()) {
            let query = rest
                .split_once('?')
                .map(|(_, q)| q.split('#').next().unwrap_or(""))
                .unwrap_or("");
            return (
                non_empty(pkce::query_value(query, "code")),
                non_empty(pkce::query_value(query, "state")),
            );
        }
    }
    if let Some((code, state)) = value.split_once('#') {
        return (non_empty(Some(code.into())), non_empty(Some(state.into())));
    }
    if value.contains("code=") {
        return (
            non_empty(pkce::query_value(value, "code")),
            non_empty(pkce::query_value(value, "state")),
        );
    }
    (Some(value.to_string()), None)
}

/// Waits for the browser callback or a pasted answer (whichever first), then falls back to
/// asking. Returns `(code, state)`; a pasted state must match `expected_state`.
pub(crate) fn obtain_code(
    server: Option<&CallbackServer>,
    ui: &dyn LoginUi,
    abort: &Abort,
    expected_state: &str,
    prompt: &str,
) -> Result<(String, String), LoginError> {
    let from_paste = |input: &str| -> Result<Option<(String, String)>, LoginError> {
        let (code, state) = parse_authorization_input(input);
        if state.as_deref().is_some_and(|s| s != expected_state) {
            return Err(LoginError::StateMismatch);
        }
        Ok(code.map(|c| (c, state.unwrap_or_else(|| expected_state.to_string()))))
    };
    if let Some(server) = server {
        let never = crossbeam_channel::never();
        let mut manual = ui.manual_input();
        loop {
            if abort.is_aborted() {
                return Err(LoginError::Cancelled);
            }
            crossbeam_channel::select! {
                recv(server.receiver()) -> cb => {
                    if let Ok(Callback { code, state, .. }) = cb {
                        return Ok((code, state));
                    }
                    break;
                }
                recv(manual.as_ref().unwrap_or(&never)) -> input => match input {
                    Ok(text) => {
                        if let Some(found) = from_paste(&text)? {
                            return Ok(found);
                        }
                        break;
                    }
                    // The paste side closed (stdin at EOF): keep waiting for the browser.
                    Err(_) => manual = None,
                },
                default(Duration::from_millis(100)) => {}
            }
        }
    }
    let input = ui.prompt(prompt, None).map_err(LoginError::Prompt)?;
    from_paste(&input)?.ok_or(LoginError::MissingCode)
}

/// POSTs a JSON body and returns the JSON answer; non-2xx statuses are errors with the body.
pub(crate) fn post_json(url: &str, body: &Value) -> Result<Value, LoginError> {
    let headers = [
        ("content-type", "application/json"),
        ("accept", "application/json"),
    ];
    answer(
        url,
        http::request("POST", url, &headers, Some(&body.to_string())),
    )
}

/// POSTs a form body and returns the JSON answer.
pub(crate) fn post_form(
    url: &str,
    pairs: &[(&str, &str)],
    extra: &[(&str, &str)],
) -> Result<Value, LoginError> {
    let mut headers = vec![
        ("content-type", "application/x-www-form-urlencoded"),
        ("accept", "application/json"),
    ];
    headers.extend_from_slice(extra);
    let body = pkce::form_encode(pairs);
    answer(url, http::request("POST", url, &headers, Some(&body)))
}

/// GETs a JSON document.
pub(crate) fn get_json(url: &str, headers: &[(&str, &str)]) -> Result<Value, LoginError> {
    answer(url, http::request("GET", url, headers, None))
}

fn answer(url: &str, r: Result<(u16, String), String>) -> Result<Value, LoginError> {
    let url = url.to_string();
    let (status, text) = match r {
        Ok(answer) => answer,
        Err(detail) => return Err(LoginError::Request { url, detail }),
    };
    if !(200..300).contains(&status) {
        let body = text.trim().to_string();
        return Err(LoginError::Http { url, status, body });
    }
    serde_json::from_str(&text).map_err(|source| LoginError::InvalidJson { url, source })
}

/// `now + expires_in seconds - margin`, in milliseconds.
pub(crate) fn expiry_from(expires_in: Option<f64>, margin_ms: i64) -> Result<i64, LoginError> {
    let secs = expires_in
        .ok_or_else(|| LoginError::BadResponse("token response has no expires_in".into()))?;
    Ok(crate::ai::types::now_ms() + (secs * 1000.0) as i64 - margin_ms)
}

/// pi subtracts five minutes from Anthropic and Copilot expiries.
pub(crate) const FIVE_MINUTES_MS: i64 = 5 * 60 * 1000;
