//! OpenAI Codex (ChatGPT Plus/Pro): authorization code + PKCE with a random `state`, callback
//! `http://localhost:1455/auth/callback`, form-encoded token requests. The ChatGPT account id
//! from the access token is stored as `accountId` (the Codex backend needs it per request).

use serde_json::Value;

use super::callback::{callback_host, CallbackServer};
use super::error::LoginError;
use super::flow::{expiry_from, obtain_code, post_form, Credentials, LoginUi, OAuthProvider};
use super::pkce;
use crate::ai::stream::Abort;

/// Endpoints and client of the flow (tests point them at a mock server).
#[derive(Debug, Clone)]
pub struct OpenAiCodex {
    pub client_id: String,
    pub authorize_url: String,
    pub token_url: String,
    /// Callback port; 0 picks a free one (tests).
    pub callback_port: u16,
    /// The `originator` authorize parameter.
    pub originator: String,
}

impl Default for OpenAiCodex {
    fn default() -> Self {
        OpenAiCodex {
            client_id: "app_EMoamEEZ73f0CkXaXp7hrann".into(),
            authorize_url: "https://auth.openai.com/oauth/authorize".into(),
            token_url: "https://auth.openai.com/oauth/token".into(),
            callback_port: 1455,
            originator: "pi".into(),
        }
    }
}

const SCOPE: &str = "openid profile email offline_access";

impl OpenAiCodex {
    fn credentials(&self, v: &Value, what: &str) -> Result<Credentials, LoginError> {
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let (Some(access), Some(refresh), Some(expires_in)) = (
            s("access_token"),
            s("refresh_token"),
            v.get("expires_in").and_then(Value::as_f64),
        ) else {
            return Err(LoginError::BadResponse(format!(
                "OpenAI Codex token {what} response missing fields: {v}"
            )));
        };
        let account_id = crate::ai::jwt::chatgpt_account_id(&access).ok_or_else(|| {
            LoginError::BadResponse("Failed to extract accountId from token".into())
        })?;
        let mut extra = serde_json::Map::new();
        extra.insert("accountId".into(), Value::String(account_id));
        Ok(Credentials {
            access,
            refresh,
            expires: expiry_from(Some(expires_in), 0)?,
            extra,
        })
    }
}

impl OAuthProvider for OpenAiCodex {
    fn id(&self) -> &'static str {
        "openai-codex"
    }

    fn name(&self) -> &'static str {
        "ChatGPT Plus/Pro (Codex Subscription)"
    }

    fn login(&self, ui: &dyn LoginUi, abort: &Abort) -> Result<Credentials, LoginError> {
        let pkce = pkce::generate()?;
        let state = pkce::random_state()?;
        let server = CallbackServer::start(
            &callback_host(),
            self.callback_port,
            "/auth/callback",
            &state,
            "OpenAI",
        );
        let port = server.as_ref().map_or(self.callback_port, |s| s.port());
        let redirect_uri = format!("http://localhost:{port}/auth/callback");
        let query = pkce::form_encode(&[
            ("response_type", "code"),
            ("client_id", &self.client_id),
            ("redirect_uri", &redirect_uri),
            ("scope", SCOPE),
            ("code_challenge", &pkce.challenge),
            ("code_challenge_method", "S256"),
            ("state", &state),
            ("id_token_add_organizations", "true"),
            ("codex_cli_simplified_flow", "true"),
            ("originator", &self.originator),
        ]);
        ui.on_auth(
            &format!("{}?{query}", self.authorize_url),
            Some("A browser window should open. Complete login to finish."),
        );
        let (code, _) = obtain_code(
            server.as_ref().ok(),
            ui,
            abort,
            &state,
            "Paste the authorization code (or full redirect URL):",
        )?;
        drop(server);
        ui.progress("Exchanging authorization code for tokens...");
        let answer = post_form(
            &self.token_url,
            &[
                ("grant_type", "authorization_code"),
                ("client_id", &self.client_id),
                ("code", &code),
                ("code_verifier", &pkce.verifier),
                ("redirect_uri", &redirect_uri),
            ],
            &[],
        )
        .map_err(|e| e.in_step("OpenAI Codex token exchange"))?;
        self.credentials(&answer, "exchange")
    }

    fn refresh(&self, creds: &Credentials) -> Result<Credentials, LoginError> {
        let answer = post_form(
            &self.token_url,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", &creds.refresh),
                ("client_id", &self.client_id),
            ],
            &[],
        )
        .map_err(|e| e.in_step("OpenAI Codex token refresh"))?;
        self.credentials(&answer, "refresh")
    }
}
