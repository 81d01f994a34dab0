//! The credentials an HTTP connection sends, through the transport's [`AuthProvider`] hook:
//!
//! * [`OAuthAuth`] for servers that use MCP OAuth: the stored access token, refreshed 30 s
//!   before it expires and after a 401 (under the store's refresh lock, so one process
//!   refreshes and the others pick up its tokens). When no refresh is possible, or the server
//!   asks for more scope (`insufficient_scope`), the connection learns that a sign-in is
//!   needed; the challenge is kept so the sign-in can use its resource metadata and scope.
//! * [`ProviderTokenAuth`] for `"auth": {"provider": "<id>"}`: the provider's current `/login`
//!   token, read from `auth.json` on every request (refreshed there as requests to the model
//!   refresh it), never copied.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::discovery::{parse_www_authenticate, Challenge};
use super::flow::{self, Ctx, Refreshed};
use super::store::ServerStore;
use super::{OAuthError, Settings};
use crate::ai::Abort;
use crate::mcp::http::AuthProvider;
use crate::mcp::rpc::McpError;

/// Tokens this close to their expiry are refreshed before use.
const REFRESH_SKEW_MS: i64 = 30_000;

/// Where a connection's OAuth challenge goes (the sign-in reads it later).
pub type ChallengeSink = Arc<dyn Fn(Challenge) + Send + Sync>;

pub struct OAuthAuth {
    server_url: String,
    store: ServerStore,
    settings: Result<Settings, String>,
    on_challenge: ChallengeSink,
    /// Stops a refresh waiting for another process when the connection closes.
    abort: Abort,
    /// One refresh at a time in this process; a second caller finds the new token.
    refreshing: Mutex<()>,
}

fn to_mcp(e: OAuthError) -> McpError {
    match e {
        OAuthError::AuthorizationRequired => McpError::AuthRequired {
            www_authenticate: None,
        },
        OAuthError::Cancelled => McpError::Aborted,
        other => McpError::Other(other.to_string()),
    }
}

impl OAuthAuth {
    pub fn new(
        server_url: &str,
        store: ServerStore,
        settings: Result<Settings, String>,
        on_challenge: ChallengeSink,
        abort: Abort,
    ) -> OAuthAuth {
        OAuthAuth {
            server_url: server_url.to_string(),
            store,
            settings,
            on_challenge,
            abort,
            refreshing: Mutex::new(()),
        }
    }

    /// Refreshes unless the token in use (`stale`) was replaced meanwhile.
    fn refresh(
        &self,
        stale: Option<&str>,
        challenge: Option<&Challenge>,
    ) -> Result<(), OAuthError> {
        let settings = self.settings.clone().map_err(OAuthError::Other)?;
        let _one = self.refreshing.lock().unwrap_or_else(|p| p.into_inner());
        self.store.with_refresh_lock(&self.abort, || {
            let state = self.store.load()?;
            if state.access_token() != stale {
                return Ok(());
            }
            if state.refresh_token().is_none() {
                return Err(OAuthError::AuthorizationRequired);
            }
            let ctx = Ctx {
                server_url: &self.server_url,
                store: &self.store,
                settings: &settings,
                abort: &self.abort,
            };
            match flow::refresh_stored(&ctx, None, challenge)? {
                Refreshed::Yes => Ok(()),
                Refreshed::NeedsSignIn => Err(OAuthError::AuthorizationRequired),
            }
        })
    }

    /// Waits (up to `limit`) for a refresh in progress, so its rotated tokens are saved
    /// before pi exits.
    pub fn settled(&self, limit: Duration) {
        let until = std::time::Instant::now() + limit;
        while std::time::Instant::now() < until {
            if self.refreshing.try_lock().is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl AuthProvider for OAuthAuth {
    fn token(&self) -> Option<String> {
        // A refresh under way: wait for its token.
        drop(self.refreshing.lock().unwrap_or_else(|p| p.into_inner()));
        let state = self.store.load().ok()?;
        let token = state.access_token().map(str::to_string);
        let expiring = state
            .expires_at()
            .is_some_and(|at| at - REFRESH_SKEW_MS <= crate::ai::types::now_ms());
        if !expiring || state.refresh_token().is_none() {
            return token;
        }
        // A failed refresh leaves the old token: the server's answer decides.
        let _ = self.refresh(token.as_deref(), None);
        self.store
            .load()
            .ok()
            .and_then(|s| s.access_token().map(str::to_string))
    }

    fn current_token(&self) -> Option<String> {
        let state = self.store.load().ok()?;
        state.access_token().map(str::to_string)
    }

    fn on_unauthorized(
        &self,
        www_authenticate: Option<&str>,
        token: Option<&str>,
    ) -> Result<bool, McpError> {
        let challenge = parse_www_authenticate(www_authenticate);
        (self.on_challenge)(challenge.clone());
        if challenge.error.as_deref() == Some("insufficient_scope") {
            return Err(McpError::AuthRequired {
                www_authenticate: www_authenticate.map(str::to_string),
            });
        }
        self.refresh(token, Some(&challenge)).map_err(to_mcp)?;
        Ok(true)
    }
}

/// Reads a provider's `/login` token: `None` when there is none (the server's 401 then says
/// a sign-in is needed).
pub type ProviderToken = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// The token reader of the agent dir's `auth.json`, refreshing expired OAuth logins.
pub fn auth_json_tokens(agent_dir: PathBuf) -> ProviderToken {
    Arc::new(move |provider: &str| {
        crate::resources::auth::AuthStorage::load(agent_dir.join("auth.json"))
            .resolve_api_key(provider)
            .ok()
            .flatten()
    })
}

pub struct ProviderTokenAuth {
    pub provider: String,
    pub read: ProviderToken,
}

impl AuthProvider for ProviderTokenAuth {
    fn token(&self) -> Option<String> {
        (self.read)(&self.provider)
    }

    fn on_unauthorized(&self, _: Option<&str>, _: Option<&str>) -> Result<bool, McpError> {
        Ok(false)
    }
}
