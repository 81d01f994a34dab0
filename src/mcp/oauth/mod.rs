//! OAuth for HTTP MCP servers, as pi 1.x does it. Connections never open a browser: they send
//! the stored access token, refresh it when it expires or the server rejects it (once across
//! processes), and otherwise report that the server needs a sign-in. The user signs in through
//! `/mcp` or `pi mcp login`, which runs the authorization-code flow with PKCE against a
//! loopback callback (or a pasted redirect URL).
//!
//! Floors: `store` (`mcp-auth.json`, locked, 0600) and `discovery` (RFC 9728 protected-resource
//! and RFC 8414 authorization-server metadata, the `WWW-Authenticate` challenge) → `flow`
//! (client identity: pi's Client ID Metadata Document, dynamic registration or a configured
//! client; token requests) → `provider` (the transport's [`super::http::AuthProvider`]) and
//! `signin` (the browser step).

pub mod discovery;
pub mod flow;
mod net;
pub mod provider;
pub mod signin;
pub mod store;
#[cfg(test)]
pub mod test_server;

use serde_json::Value;

use crate::resources::config_value::resolve_template_or_err;

/// Why an OAuth step failed, worded as pi words it.
#[derive(Debug, Clone, PartialEq)]
pub enum OAuthError {
    /// The authorization server answered with an OAuth `error`.
    Server {
        code: String,
        description: String,
    },
    IssuerMismatch {
        expected: Option<String>,
        received: Option<String>,
    },
    Insecure(String),
    Registration {
        status: u16,
        body: String,
    },
    /// The user has to sign in (again).
    AuthorizationRequired,
    /// Another process held the refresh lock for the whole wait.
    RefreshLockBusy,
    Cancelled,
    Other(String),
}

impl std::fmt::Display for OAuthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let quote = |v: &Option<String>| {
            v.as_ref()
                .map_or_else(|| "none".to_string(), |s| format!("{s:?}"))
        };
        match self {
            OAuthError::Server { code, description } if description.is_empty() => f.write_str(code),
            OAuthError::Server { description, .. } => f.write_str(description),
            OAuthError::IssuerMismatch { expected, received } => write!(
                f,
                "OAuth issuer mismatch: expected {}, received {}",
                quote(expected),
                quote(received)
            ),
            OAuthError::Insecure(url) => write!(
                f,
                "Refusing to send OAuth credentials to non-HTTPS endpoint {url}"
            ),
            OAuthError::Registration { status, body } => write!(
                f,
                "OAuth dynamic client registration failed with status {status}: {body}"
            ),
            OAuthError::AuthorizationRequired => {
                f.write_str("MCP OAuth authorization requires user interaction")
            }
            OAuthError::RefreshLockBusy => {
                f.write_str("Another process is refreshing the MCP server's tokens")
            }
            OAuthError::Cancelled => f.write_str("Sign-in cancelled"),
            OAuthError::Other(m) => f.write_str(m),
        }
    }
}

impl From<String> for OAuthError {
    fn from(s: String) -> Self {
        OAuthError::Other(s)
    }
}

/// `oauth.clientRegistration`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Registration {
    /// pi's Client ID Metadata Document when the authorization server supports it, else DCR.
    #[default]
    Auto,
    Dcr,
    Cimd,
}

/// A server's `oauth` block, its `clientSecret` resolved.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    pub callback_port: Option<u16>,
    pub callback_url: Option<String>,
    pub scope: Option<String>,
    pub client_name: Option<String>,
    pub registration: Registration,
    pub auth_server_metadata_url: Option<String>,
}

impl Settings {
    /// Reads a validated `oauth` block (see `oauth_config`); `server` names it in errors.
    pub fn from_config(server: &str, oauth: Option<&Value>) -> Result<Settings, String> {
        let Some(o) = oauth else {
            return Ok(Settings::default());
        };
        let s = |k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
        let client_secret = match s("clientSecret") {
            Some(v) => Some(resolve_template_or_err(
                &v,
                &format!("MCP server \"{server}\" oauth.clientSecret"),
            )?),
            None => None,
        };
        Ok(Settings {
            client_id: s("clientId"),
            client_secret,
            callback_port: o
                .get("callbackPort")
                .and_then(Value::as_u64)
                .and_then(|p| u16::try_from(p).ok()),
            callback_url: s("callbackUrl"),
            scope: s("scope"),
            client_name: s("clientName"),
            registration: match s("clientRegistration").as_deref() {
                Some("dcr") => Registration::Dcr,
                Some("cimd") => Registration::Cimd,
                _ => Registration::Auto,
            },
            auth_server_metadata_url: s("authServerMetadataUrl"),
        })
    }
}

/// Space-separated scopes merged in order, without duplicates; `None` when empty.
pub fn merge_scopes(scopes: &[Option<&str>]) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for s in scopes.iter().flatten() {
        for part in s.split_whitespace() {
            if !out.contains(&part) {
                out.push(part);
            }
        }
    }
    (!out.is_empty()).then(|| out.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn settings_from_the_oauth_block() {
        std::env::set_var("PI_TEST_MCP_SECRET", "s3cret");
        let s = Settings::from_config(
            "x",
            Some(&json!({
                "clientId": "c", "clientSecret": "${PI_TEST_MCP_SECRET}", "callbackPort": 8765,
                "clientRegistration": "dcr", "scope": "a b"
            })),
        )
        .unwrap();
        assert_eq!(s.client_id.as_deref(), Some("c"));
        assert_eq!(s.client_secret.as_deref(), Some("s3cret"));
        assert_eq!(s.callback_port, Some(8765));
        assert_eq!(s.registration, Registration::Dcr);
        assert_eq!(
            Settings::from_config("x", None).unwrap(),
            Settings::default()
        );
    }

    #[test]
    fn scopes_merge_in_order() {
        assert_eq!(
            merge_scopes(&[Some("a b"), None, Some("b  c")]).as_deref(),
            Some("a b c")
        );
        assert_eq!(merge_scopes(&[None, Some(" ")]), None);
    }

    #[test]
    fn errors_read_like_pi() {
        let e = OAuthError::IssuerMismatch {
            expected: Some("https://a".into()),
            received: None,
        };
        assert_eq!(
            e.to_string(),
            "OAuth issuer mismatch: expected \"https://a\", received none"
        );
    }
}
