//! Anthropic (Claude Pro/Max): authorization code + PKCE. The browser is sent to claude.ai with
//! the callback `http://localhost:53692/callback`; the PKCE verifier doubles as the `state`.
//! Tokens come from a JSON POST; pi stores the expiry five minutes early.

use serde_json::{json, Value};

use super::callback::{callback_host, CallbackServer};
use super::error::LoginError;
use super::flow::{
    expiry_from, obtain_code, post_json, Credentials, LoginUi, OAuthProvider, FIVE_MINUTES_MS,
};
use super::pkce;
use crate::ai::stream::Abort;

/// Endpoints and client of the flow (tests point them at a mock server).
#[derive(Debug, Clone)]
pub struct Anthropic {
    pub client_id: String,
    pub authorize_url: String,
    pub token_url: String,
    /// Callback port; 0 picks a free one (tests).
    pub callback_port: u16,
}

impl Default for Anthropic {
    fn default() -> Self {
        Anthropic {
            client_id: "9d1c250a-e61b-44d9-88ed-5944d1962f5e".into(),
            authorize_url: "https://claude.ai/oauth/authorize".into(),
            token_url: "https://platform.claude.com/v1/oauth/token".into(),
            callback_port: 53692,
        }
    }
}

const SCOPES: &str = "org:create_api_key user:profile user:inference user:sessions:claude_code \
                      user:mcp_servers user:file_upload";

impl Anthropic {
    fn credentials(&self, v: &Value) -> Result<Credentials, LoginError> {
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        Ok(Credentials {
            access: s("access_token").ok_or_else(|| missing("access_token"))?,
            refresh: s("refresh_token").ok_or_else(|| missing("refresh_token"))?,
            expires: expiry_from(v.get("expires_in").and_then(Value::as_f64), FIVE_MINUTES_MS)?,
            extra: Default::default(),
        })
    }
}

fn missing(field: &str) -> LoginError {
    LoginError::BadResponse(format!("Anthropic token response has no {field}"))
}

impl OAuthProvider for Anthropic {
    fn id(&self) -> &'static str {
        "anthropic"
    }

    fn name(&self) -> &'static str {
        "Anthropic (Claude Pro/Max)"
    }

    fn login(&self, ui: &dyn LoginUi, abort: &Abort) -> Result<Credentials, LoginError> {
        let pkce = pkce::generate()?;
        let server = CallbackServer::start(
            &callback_host(),
            self.callback_port,
            "/callback",
            &pkce.verifier,
            "Anthropic",
        );
        let port = server.as_ref().map_or(self.callback_port, |s| s.port());
        let redirect_uri = format!("http://localhost:{port}/callback");
        let query = pkce::form_encode(&[
            ("code", "true"),
            ("client_id", &self.client_id),
            ("response_type", "code"),
            ("redirect_uri", &redirect_uri),
            ("scope", SCOPES),
            ("code_challenge", &pkce.challenge),
            ("code_challenge_method", "S256"),
            ("state", &pkce.verifier),
        ]);
        if let Err(e) = &server {
            ui.progress(&format!(
                "Could not listen on port {port} for the browser callback ({e}); paste the code instead."
            ));
        }
        ui.on_auth(
            &format!("{}?{query}", self.authorize_url),
            Some(
                "Complete login in your browser. If the browser is on another machine, paste \
                 the final redirect URL here.",
            ),
        );
        let (code, state) = obtain_code(
            server.as_ref().ok(),
            ui,
            abort,
            &pkce.verifier,
            "Paste the authorization code or full redirect URL:",
        )?;
        drop(server);
        ui.progress("Exchanging authorization code for tokens...");
        let answer = post_json(
            &self.token_url,
            &json!({
                "grant_type": "authorization_code",
                "client_id": self.client_id,
                "code": code,
                "state": state,
                "redirect_uri": redirect_uri,
                "code_verifier": pkce.verifier,
            }),
        )
        .map_err(|e| e.in_step("Anthropic token exchange"))?;
        self.credentials(&answer)
    }

    fn refresh(&self, creds: &Credentials) -> Result<Credentials, LoginError> {
        let answer = post_json(
            &self.token_url,
            &json!({
                "grant_type": "refresh_token",
                "client_id": self.client_id,
                "refresh_token": creds.refresh,
            }),
        )
        .map_err(|e| e.in_step("Anthropic token refresh"))?;
        self.credentials(&answer)
    }
}
