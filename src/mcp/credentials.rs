//! How a server's connection authenticates: HTTP servers use MCP OAuth unless their config has
//! an `Authorization` header or `auth.provider` (then the provider's `/login` token is sent),
//! and pi's message when the user has to sign in.

use std::path::Path;
use std::sync::Arc;

use super::config::{ServerConfig, TransportConfig};
use super::oauth::provider::ProviderToken;
use super::oauth::store::CredentialStore;

/// Where credentials come from: the MCP OAuth store and the `/login` tokens of providers.
#[derive(Clone)]
pub struct AuthContext {
    pub credentials: Arc<CredentialStore>,
    pub provider_token: ProviderToken,
}

impl AuthContext {
    /// The agent dir's `mcp-auth.json` and `auth.json`.
    pub fn for_agent_dir(agent_dir: &Path) -> AuthContext {
        AuthContext {
            credentials: CredentialStore::new(agent_dir),
            provider_token: super::oauth::provider::auth_json_tokens(agent_dir.to_path_buf()),
        }
    }
}

/// The URL of an HTTP server that authenticates with MCP OAuth: no `Authorization` header and
/// no `auth.provider` in its config.
pub fn oauth_url(config: &ServerConfig) -> Option<&str> {
    match &config.transport {
        TransportConfig::Http {
            url,
            headers,
            auth_provider: None,
        } if !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("authorization")) =>
        {
            Some(url)
        }
        _ => None,
    }
}

/// `auth.provider` of an HTTP server.
pub fn auth_provider(config: &ServerConfig) -> Option<&str> {
    match &config.transport {
        TransportConfig::Http {
            auth_provider: Some(p),
            ..
        } => Some(p),
        _ => None,
    }
}

/// pi's message for a server that needs the user to sign in.
pub fn sign_in_required(name: &str, config: &ServerConfig) -> String {
    let how = auth_provider(config).map_or_else(|| "/mcp".to_string(), |p| format!("/login {p}"));
    format!("MCP server \"{name}\" requires sign-in. Run {how} to sign in.")
}
