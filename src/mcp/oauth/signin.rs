//! Signing in to an MCP server, pi's way: first a refresh with the stored refresh token (no
//! browser when it works, and not for a step-up), else the browser step: listen on the
//! loopback redirect (`oauth.callbackPort`/`callbackUrl`, the port of a client registered
//! before, or any free port), drop a client whose redirect no longer matches, build the
//! authorization request (scopes merged for a step-up so granted access is kept), show its URL
//! through the [`LoginUi`], and wait for the browser's callback or a pasted redirect URL; then
//! exchange the code. Every wait honours the abort flag (a timeout is the caller's abort).

use std::time::Duration;

use super::discovery::Challenge;
use super::flow::{self, AuthorizationResponse, Ctx, Refreshed};
use super::store::ServerStore;
use super::{merge_scopes, OAuthError, Registration, Settings};
use crate::ai::Abort;
use crate::mcp::url::Url;
use crate::resources::oauth::callback::{Callback, CallbackServer};
use crate::resources::oauth::{pkce, LoginUi};

pub struct SignIn<'a> {
    pub server_name: &'a str,
    pub server_url: &'a str,
    pub store: &'a ServerStore,
    pub settings: &'a Settings,
    /// The challenge that asked for the sign-in (resource metadata, scope, step-up).
    pub challenge: Option<&'a Challenge>,
    pub ui: &'a dyn LoginUi,
    pub abort: &'a Abort,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignedIn {
    /// The stored refresh token was enough.
    Refreshed,
    /// Through the browser.
    Authorized,
}

/// Reads a pasted redirect URL, checked against this sign-in.
pub fn response_from_redirect_url(
    input: &str,
    redirect_url: &str,
    state: &str,
) -> Result<AuthorizationResponse, OAuthError> {
    let fail = |m: &str| OAuthError::Other(m.to_string());
    let url = Url::parse(input.trim())
        .filter(|u| u.scheme == "http" || u.scheme == "https")
        .ok_or_else(|| fail("Expected the full redirect URL from the browser address bar"))?;
    let expected = Url::parse(redirect_url).ok_or_else(|| fail("Invalid redirect URI"))?;
    if url.origin() != expected.origin() || url.path != expected.path {
        return Err(fail(
            "The redirect URL does not match this sign-in's redirect URI",
        ));
    }
    let query = url.query.as_deref().unwrap_or("");
    let param = |k: &str| pkce::query_value(query, k).filter(|v| !v.is_empty());
    if let Some(error) = param("error") {
        return Err(OAuthError::Other(
            param("error_description").unwrap_or(error),
        ));
    }
    if param("state").as_deref() != Some(state) {
        return Err(fail("The redirect URL belongs to a different sign-in"));
    }
    let code = param("code")
        .ok_or_else(|| fail("The redirect URL does not contain an authorization code"))?;
    Ok(AuthorizationResponse {
        code,
        state: state.to_string(),
        iss: param("iss"),
    })
}

/// Runs the sign-in. `Err(Cancelled)` when `abort` was raised.
pub fn sign_in(s: &SignIn) -> Result<SignedIn, OAuthError> {
    if s.abort.is_aborted() {
        return Err(OAuthError::Cancelled);
    }
    let ctx = Ctx {
        server_url: s.server_url,
        store: s.store,
        settings: s.settings,
        abort: s.abort,
    };
    let step_up = s
        .challenge
        .is_some_and(|c| c.error.as_deref() == Some("insufficient_scope"));
    let stored = s.store.load()?;
    let loopback = flow::loopback(s.settings);
    let registered_port = stored
        .registered_redirect_urls()
        .first()
        .and_then(|u| Url::parse(u))
        .and_then(|u| u.port);
    let port = loopback.port.or(registered_port);
    let mut paths = vec![loopback.path.clone()];
    if flow::offers_document(s.settings, &loopback.url) {
        paths.push(flow::server_specific_path(&loopback.path, s.server_url));
    }
    let oauth_state = crate::util::encoding::hex(
        &crate::util::random::secure_bytes::<32>().map_err(String::from)?,
    );
    let label = format!("MCP server \"{}\"", s.server_name);
    let paths_ref: Vec<&str> = paths.iter().map(String::as_str).collect();
    let listen = |p: u16| {
        CallbackServer::start_with_paths(&loopback.bind_host, p, &paths_ref, &oauth_state, &label)
    };
    let server = match listen(port.unwrap_or(0)) {
        Ok(server) => Ok(server),
        // The old client's port is taken: any port will do (that client is replaced below).
        Err(_) if loopback.port.is_none() && port.is_some() => listen(0),
        Err(e) => Err(e),
    }
    .map_err(|e| {
        OAuthError::Other(format!(
            "Could not listen for the OAuth callback on {}:{}: {e}",
            loopback.bind_host,
            port.unwrap_or(0)
        ))
    })?;
    let redirect_url = loopback.fixed_redirect_url.clone().unwrap_or_else(|| {
        format!(
            "http://{}:{}{}",
            loopback.redirect_host,
            server.port(),
            loopback.path
        )
    });

    if !step_up && refresh_before_sign_in(&ctx, &redirect_url, s.challenge)? {
        return Ok(SignedIn::Refreshed);
    }

    s.ui.progress("Contacting the authorization server…");
    let keep_client = |state: &super::store::State| {
        s.settings.client_id.is_some()
            || match state.client() {
                Some(_) => {
                    s.settings.registration != Registration::Cimd
                        && state.registered_redirect_urls().contains(&redirect_url)
                }
                None => flow::offers_document(s.settings, &redirect_url),
            }
    };
    let state = s.store.update(|st| {
        st.0.remove("oauthState");
        if !keep_client(st) {
            for key in ["clientInformation", "tokens", "tokensExpireAt"] {
                st.0.remove(key);
            }
        }
    })?;
    let challenged = s.challenge.and_then(|c| c.scope.as_deref());
    let extra = if step_up {
        merge_scopes(&[state.granted_scope(), challenged])
    } else {
        challenged.map(str::to_string)
    };
    let scope = merge_scopes(&[s.settings.scope.as_deref(), extra.as_deref()]);
    let pending = flow::begin(
        &ctx,
        &redirect_url,
        scope.as_deref(),
        s.challenge,
        &oauth_state,
    )?;
    s.ui.on_auth(&pending.authorization_url, None);
    let response = wait_for_response(&server, s.ui, s.abort, &pending)?;
    s.ui.progress("Connecting…");
    flow::complete(&ctx, &pending, &response)?;
    Ok(SignedIn::Authorized)
}

/// A refresh with the stored refresh token under the refresh lock; `Ok(true)` when it worked.
/// A lock held by another process for the whole wait falls through to the browser.
fn refresh_before_sign_in(
    ctx: &Ctx,
    redirect_url: &str,
    challenge: Option<&Challenge>,
) -> Result<bool, OAuthError> {
    let result = ctx.store.with_refresh_lock(ctx.abort, || {
        let state = ctx.store.load()?;
        let document_client =
            ctx.settings.registration == Registration::Cimd && ctx.settings.client_id.is_none();
        if state.refresh_token().is_none() || (document_client && state.client().is_some()) {
            return Ok(Refreshed::NeedsSignIn);
        }
        flow::refresh_stored(ctx, Some(redirect_url), challenge)
    });
    match result {
        Ok(r) => Ok(r == Refreshed::Yes),
        Err(OAuthError::RefreshLockBusy) => Ok(false),
        Err(e) => Err(e),
    }
}

/// The browser's callback or a pasted redirect URL, whichever comes first.
fn wait_for_response(
    server: &CallbackServer,
    ui: &dyn LoginUi,
    abort: &Abort,
    pending: &flow::Pending,
) -> Result<AuthorizationResponse, OAuthError> {
    let expected_path = Url::parse(&pending.redirect_url)
        .map(|u| u.path)
        .unwrap_or_default();
    let never = crossbeam_channel::never();
    let mut manual = ui.manual_input();
    loop {
        if abort.is_aborted() {
            return Err(OAuthError::Cancelled);
        }
        crossbeam_channel::select! {
            recv(server.receiver()) -> cb => {
                let Ok(Callback { code, state, iss, path }) = cb else {
                    return Err(OAuthError::Other("OAuth callback server closed".into()));
                };
                if path != expected_path {
                    return Err(OAuthError::Other("The authorization response arrived on another redirect URI".into()));
                }
                return Ok(AuthorizationResponse { code, state, iss });
            }
            recv(server.failures()) -> refusal => {
                return Err(OAuthError::Other(refusal.unwrap_or_else(|_| "Authorization failed".into())));
            }
            recv(manual.as_ref().unwrap_or(&never)) -> input => match input {
                Ok(text) if text.trim().is_empty() => return Err(OAuthError::Cancelled),
                Ok(text) => {
                    return response_from_redirect_url(&text, &pending.redirect_url, &pending.state)
                }
                // The paste side closed (stdin at EOF): only the browser can finish.
                Err(_) => manual = None,
            },
            default(Duration::from_millis(100)) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_redirect_urls_are_checked() {
        let redirect = "http://127.0.0.1:5000/callback";
        let ok = response_from_redirect_url(
            " http://127.0.0.1:5000/callback?code=c1&state=s&iss=https%3A%2F%2Fas ",
            redirect,
            "s",
        )
        .unwrap();
        assert_eq!(ok.code, "c1");
        assert_eq!(ok.iss.as_deref(), Some("https://as"));
        let err = |input: &str| {
            response_from_redirect_url(input, redirect, "s")
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err("c1"),
            "Expected the full redirect URL from the browser address bar"
        );
        assert_eq!(
            err("http://127.0.0.1:5001/callback?code=c&state=s"),
            "The redirect URL does not match this sign-in's redirect URI"
        );
        assert_eq!(
            err("http://127.0.0.1:5000/callback?code=c&state=t"),
            "The redirect URL belongs to a different sign-in"
        );
        assert_eq!(
            err("http://127.0.0.1:5000/callback?error=access_denied&error_description=Denied"),
            "Denied"
        );
        assert_eq!(
            err("http://127.0.0.1:5000/callback?state=s"),
            "The redirect URL does not contain an authorization code"
        );
    }
}

#[cfg(test)]
#[path = "../tests/oauth_signin.rs"]
mod against_a_server;
