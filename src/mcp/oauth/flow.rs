//! The OAuth steps between pi and an authorization server, as pi 1.x takes them: discovery
//! (cached in the store unless `authServerMetadataUrl` is configured), the client pi presents
//! (a configured `clientId`, a client registered before, pi's Client ID Metadata Document, or a
//! new dynamic registration, RFC 7591), the authorization URL with PKCE (S256), the code
//! exchange with the RFC 9207 `iss` check, and refreshing stored tokens.

use serde_json::{json, Map, Value};

use super::discovery::{self, Challenge, Discovered, ResourceMetadata, ServerMetadata};
use super::net;
use super::store::{ServerStore, State};
use super::{OAuthError, Registration, Settings};
use crate::ai::Abort;
use crate::mcp::url::Url;
use crate::resources::oauth::pkce;
use crate::util::encoding::base64_encode;

/// Where pi's Client ID Metadata Documents live.
pub const CLIENT_METADATA_BASE: &str = "https://pi.dev/oauth";
/// The redirect URI pi uses unless configured otherwise (the port is added when listening).
pub const DEFAULT_REDIRECT_URL: &str = "http://127.0.0.1/callback";
/// The client name pi registers with.
pub const CLIENT_NAME: &str = "pi";

/// What a flow works on: one server's URL, store entry and settings.
pub struct Ctx<'a> {
    pub server_url: &'a str,
    pub store: &'a ServerStore,
    pub settings: &'a Settings,
    pub abort: &'a Abort,
}

/// The loopback redirect a sign-in listens on.
#[derive(Debug, Clone, PartialEq)]
pub struct Loopback {
    /// `callbackUrl`, or pi's default.
    pub url: String,
    /// Where to listen (`localhost` listens on 127.0.0.1).
    pub bind_host: String,
    /// The host written in the redirect URI.
    pub redirect_host: String,
    pub port: Option<u16>,
    pub path: String,
    /// The redirect URI when the port is known before listening.
    pub fixed_redirect_url: Option<String>,
}

pub fn loopback(settings: &Settings) -> Loopback {
    let url = settings
        .callback_url
        .clone()
        .unwrap_or_else(|| DEFAULT_REDIRECT_URL.to_string());
    let parsed =
        Url::parse(&url).unwrap_or_else(|| Url::parse(DEFAULT_REDIRECT_URL).expect("valid"));
    let address = parsed
        .host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let port = parsed.port.or(settings.callback_port);
    let fixed_redirect_url = match (parsed.port, port) {
        (Some(_), _) => settings.callback_url.clone(),
        (None, Some(p)) => Some(
            Url {
                port: Some(p),
                ..parsed.clone()
            }
            .serialize(),
        ),
        (None, None) => None,
    };
    Loopback {
        bind_host: if address == "localhost" {
            "127.0.0.1".into()
        } else {
            address
        },
        redirect_host: parsed.host.clone(),
        port,
        path: parsed.path.clone(),
        fixed_redirect_url,
        url,
    }
}

/// pi's documents list `/callback` on `localhost` and `127.0.0.1` (any port).
pub fn lists_redirect_url(url: &str) -> bool {
    Url::parse(url).is_some_and(|u| u.host != "[::1]" && u.path == "/callback")
}

/// Whether the settings let pi present its Client ID Metadata Document for `redirect_url`.
pub fn offers_document(settings: &Settings, redirect_url: &str) -> bool {
    match settings.registration {
        Registration::Cimd => true,
        Registration::Dcr => false,
        Registration::Auto => {
            settings.client_id.is_none()
                && settings.client_name.is_none()
                && lists_redirect_url(redirect_url)
        }
    }
}

/// A short id of the server URL, for server-specific documents and callback paths.
pub fn callback_id(server_url: &str) -> String {
    let url = Url::parse(server_url).map_or_else(
        || server_url.to_string(),
        |u| u.without_fragment().serialize(),
    );
    let digest = ring::digest::digest(&ring::digest::SHA256, url.as_bytes());
    crate::util::encoding::base64url_encode(&digest.as_ref()[..9])
}

/// `<path>/<callback id>`.
pub fn server_specific_path(path: &str, server_url: &str) -> String {
    format!("{}/{}", path.trim_end_matches('/'), callback_id(server_url))
}

/// The document pi presents as its client id, and the redirect URI it lists.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientDocument {
    pub url: String,
    pub redirect_url: String,
}

/// The document for this authorization server: the general one when it sends `iss` in its
/// authorization responses, else one specific to the MCP server (with its own callback path),
/// so a code can never be replayed to another server's sign-in. `None` when the server does
/// not accept documents for public clients.
pub fn client_document(
    server_url: &str,
    redirect_url: &str,
    metadata: Option<&ServerMetadata>,
) -> Option<ClientDocument> {
    let m = metadata?;
    if !m.client_id_metadata_document_supported
        || !m
            .token_endpoint_auth_methods_supported
            .iter()
            .any(|a| a == "none")
    {
        return None;
    }
    if m.authorization_response_iss_parameter_supported {
        return Some(ClientDocument {
            url: format!("{CLIENT_METADATA_BASE}/client.json"),
            redirect_url: redirect_url.to_string(),
        });
    }
    let mut redirect = Url::parse(redirect_url)?;
    redirect.path = server_specific_path(&redirect.path, server_url);
    Some(ClientDocument {
        url: format!(
            "{CLIENT_METADATA_BASE}/{}/client.json",
            callback_id(server_url)
        ),
        redirect_url: redirect.serialize(),
    })
}

/// The document to present, with the checks `cimd` adds; `Ok(None)` to register instead.
fn document_for(
    ctx: &Ctx,
    redirect_url: &str,
    metadata: Option<&ServerMetadata>,
) -> Result<Option<ClientDocument>, OAuthError> {
    if !offers_document(ctx.settings, redirect_url) {
        return Ok(None);
    }
    if !lists_redirect_url(redirect_url) {
        return Err(OAuthError::Other(format!(
            "oauth.clientRegistration \"cimd\" needs Client ID Metadata Documents that list the redirect URI {redirect_url}"
        )));
    }
    let document = client_document(ctx.server_url, redirect_url, metadata);
    if document.is_none() && ctx.settings.registration == Registration::Cimd {
        return Err(OAuthError::Other("The authorization server does not support Client ID Metadata Documents for public clients; remove oauth.clientRegistration \"cimd\"".into()));
    }
    if let Some(d) = &document {
        if !d.url.starts_with("https://") || Url::parse(&d.url).is_some_and(|u| u.path == "/") {
            return Err(OAuthError::Other(
                "Invalid OAuth client metadata URL".into(),
            ));
        }
    }
    Ok(document)
}

/// The configured client (`clientId`, `clientSecret`), which is never stored.
fn configured_client(settings: &Settings) -> Option<Map<String, Value>> {
    let id = settings.client_id.as_ref()?;
    let mut c = Map::new();
    c.insert("client_id".into(), json!(id));
    if let Some(secret) = &settings.client_secret {
        c.insert("client_secret".into(), json!(secret));
    }
    Some(c)
}

/// Discovery, from the store's cache when it has it (and saved there when it did not).
pub fn discovered(
    ctx: &Ctx,
    state: &State,
    resource_metadata_url: Option<&str>,
) -> Result<Discovered, OAuthError> {
    let configured = ctx.settings.auth_server_metadata_url.as_deref();
    if configured.is_none() {
        if let Some(cached) = state.discovery() {
            if let Some(url) = cached.get("authorizationServerUrl").and_then(Value::as_str) {
                let metadata = match cached.get("authorizationServerMetadata") {
                    Some(m) if m.is_object() => Some(ServerMetadata::parse(m)?),
                    _ => discovery::server_metadata(url, ctx.abort)?,
                };
                let resource = cached
                    .get("resourceMetadata")
                    .filter(|r| r.is_object())
                    .map(ResourceMetadata::parse)
                    .transpose()?;
                return Ok(Discovered {
                    authorization_server_url: url.to_string(),
                    metadata,
                    resource,
                });
            }
        }
    }
    let found = discovery::discover(ctx.server_url, resource_metadata_url, configured, ctx.abort)?;
    if configured.is_none() {
        let mut saved = Map::new();
        saved.insert(
            "authorizationServerUrl".into(),
            json!(found.authorization_server_url),
        );
        if let Some(m) = &found.metadata {
            saved.insert("authorizationServerMetadata".into(), m.raw.clone());
        }
        if let Some(r) = &found.resource {
            saved.insert("resourceMetadata".into(), r.raw.clone());
        }
        if let Some(u) = resource_metadata_url {
            saved.insert("resourceMetadataUrl".into(), json!(u));
        }
        ctx.store.update(|s| {
            s.0.insert("discovery".into(), Value::Object(saved));
        })?;
    }
    Ok(found)
}

/// `origin + path` of the authorization server, for servers without metadata.
fn fallback_endpoint(as_url: &str, path: &str) -> String {
    Url::parse(as_url).map_or_else(
        || format!("{as_url}{path}"),
        |u| format!("{}{path}", u.origin()),
    )
}

/// Reads an OAuth error body (any status), else the status.
fn oauth_answer(resp: &net::Response) -> Result<Value, OAuthError> {
    let value = resp.json();
    if let Some(code) = value
        .as_ref()
        .and_then(|v| v.get("error"))
        .and_then(Value::as_str)
    {
        let description = value
            .as_ref()
            .and_then(|v| v.get("error_description"))
            .and_then(Value::as_str)
            .unwrap_or(code);
        return Err(OAuthError::Server {
            code: code.to_string(),
            description: description.to_string(),
        });
    }
    if !resp.ok() {
        return Err(OAuthError::Server {
            code: "server_error".into(),
            description: format!("HTTP {}: {}", resp.status, resp.body),
        });
    }
    value.ok_or_else(|| OAuthError::Other("Invalid OAuth token response".into()))
}

/// A token response, its optional fields dropped when empty.
fn parse_tokens(v: &Value) -> Result<Map<String, Value>, OAuthError> {
    let bad = |f: &str| OAuthError::Other(format!("Invalid {f}"));
    let obj = v.as_object().ok_or_else(|| bad("OAuth token response"))?;
    let required = |k: &str| {
        obj.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .ok_or_else(|| bad(k))
    };
    let mut out = Map::new();
    out.insert("access_token".into(), json!(required("access_token")?));
    out.insert("token_type".into(), json!(required("token_type")?));
    match obj.get("expires_in") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s.is_empty() => {}
        Some(v) => {
            let secs = v
                .as_f64()
                .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
                .filter(|f: &f64| f.is_finite())
                .ok_or_else(|| bad("expires_in"))?;
            out.insert("expires_in".into(), json!(secs));
        }
    }
    for k in ["scope", "refresh_token", "id_token"] {
        match obj.get(k) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) if s.is_empty() => {}
            Some(Value::String(s)) => {
                out.insert(k.into(), json!(s));
            }
            Some(_) => return Err(bad(k)),
        }
    }
    Ok(out)
}

/// How the client authenticates at the token endpoint (pi's choice).
fn auth_method(client: &Map<String, Value>, supported: &[String]) -> &'static str {
    let has_secret = client
        .get("client_secret")
        .and_then(Value::as_str)
        .is_some();
    let hinted = client
        .get("token_endpoint_auth_method")
        .and_then(Value::as_str);
    for m in ["client_secret_basic", "client_secret_post", "none"] {
        if hinted == Some(m) && (supported.is_empty() || supported.iter().any(|s| s == m)) {
            return m;
        }
    }
    let supports = |m: &str| supported.iter().any(|s| s == m);
    if supported.is_empty() {
        return if has_secret {
            "client_secret_basic"
        } else {
            "none"
        };
    }
    if has_secret && supports("client_secret_basic") {
        return "client_secret_basic";
    }
    if has_secret && supports("client_secret_post") {
        return "client_secret_post";
    }
    if supports("none") {
        return "none";
    }
    if has_secret {
        "client_secret_post"
    } else {
        "none"
    }
}

/// POSTs a token request with the client's authentication.
fn token_request(
    ctx: &Ctx,
    d: &Discovered,
    client: &Map<String, Value>,
    resource: Option<&str>,
    mut params: Vec<(&str, String)>,
) -> Result<Map<String, Value>, OAuthError> {
    let url = d
        .metadata
        .as_ref()
        .map(|m| m.token_endpoint.clone())
        .unwrap_or_else(|| fallback_endpoint(&d.authorization_server_url, "/token"));
    discovery::secure_endpoint(&url)?;
    if let Some(r) = resource {
        params.push(("resource", r.to_string()));
    }
    let supported = d
        .metadata
        .as_ref()
        .map(|m| m.token_endpoint_auth_methods_supported.clone())
        .unwrap_or_default();
    let id = client
        .get("client_id")
        .and_then(Value::as_str)
        .unwrap_or("");
    let secret = client.get("client_secret").and_then(Value::as_str);
    let mut headers = vec![
        ("accept", "application/json".to_string()),
        (
            "content-type",
            "application/x-www-form-urlencoded".to_string(),
        ),
    ];
    match auth_method(client, &supported) {
        "client_secret_basic" => {
            let secret = secret.ok_or_else(|| {
                OAuthError::Other("client_secret_basic requires a client secret".into())
            })?;
            let raw = format!("{id}:{secret}");
            headers.push((
                "authorization",
                format!("Basic {}", base64_encode(raw.as_bytes())),
            ));
        }
        method => {
            params.push(("client_id", id.to_string()));
            if let (Some(s), "client_secret_post") = (secret, method) {
                params.push(("client_secret", s.to_string()));
            }
        }
    }
    let pairs: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let body = pkce::form_encode(&pairs);
    let resp = net::send("POST", &url, &headers, Some(body), ctx.abort)?;
    parse_tokens(&oauth_answer(&resp)?)
}

/// Dynamic client registration (RFC 7591).
fn register(
    ctx: &Ctx,
    d: &Discovered,
    redirect_url: &str,
    scope: Option<&str>,
) -> Result<Map<String, Value>, OAuthError> {
    let endpoint = match &d.metadata {
        Some(m) => m.registration_endpoint.clone().ok_or_else(|| {
            OAuthError::Other(
                "Authorization server does not support dynamic client registration".into(),
            )
        })?,
        None => fallback_endpoint(&d.authorization_server_url, "/register"),
    };
    let native = Url::parse(redirect_url)
        .is_some_and(|u| !(u.scheme == "http" || u.scheme == "https") || u.is_loopback());
    let mut body = json!({
        "client_name": ctx.settings.client_name.as_deref().unwrap_or(CLIENT_NAME),
        "redirect_uris": [redirect_url],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": if ctx.settings.client_secret.is_some() { "client_secret_post" } else { "none" },
        "application_type": if native { "native" } else { "web" },
    });
    if let Some(s) = scope {
        body["scope"] = json!(s);
    }
    let headers = [
        ("accept", "application/json".to_string()),
        ("content-type", "application/json".to_string()),
    ];
    let resp = net::send(
        "POST",
        &endpoint,
        &headers,
        Some(body.to_string()),
        ctx.abort,
    )?;
    if !resp.ok() {
        return Err(OAuthError::Registration {
            status: resp.status,
            body: resp.body,
        });
    }
    let mut info = resp
        .json()
        .and_then(|v| v.as_object().cloned())
        .ok_or_else(|| OAuthError::Other("Invalid OAuth client registration response".into()))?;
    if info
        .get("client_id")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return Err(OAuthError::Other("Invalid client_id".into()));
    }
    if !info.get("redirect_uris").is_some_and(Value::is_array) {
        info.insert("redirect_uris".into(), json!([]));
    }
    Ok(info)
}

/// Keeps the granted scope when a token response does not restate it.
fn with_scope(mut tokens: Map<String, Value>, scope: Option<&str>) -> Map<String, Value> {
    if let (false, Some(s)) = (tokens.contains_key("scope"), scope) {
        tokens.insert("scope".into(), json!(s));
    }
    tokens
}

/// Whether a refresh reached the server and stored new tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refreshed {
    Yes,
    /// The user has to sign in.
    NeedsSignIn,
}

/// The redirect URI a refresh presents a document for (only its form matters).
pub fn refresh_redirect_url(settings: &Settings, state: &State, hint: Option<&str>) -> String {
    let fixed = loopback(settings).fixed_redirect_url;
    let registered = state.registered_redirect_urls().into_iter().next();
    [hint.map(str::to_string), fixed, registered]
        .into_iter()
        .flatten()
        .find(|u| lists_redirect_url(u))
        .unwrap_or_else(|| DEFAULT_REDIRECT_URL.to_string())
}

fn refresh_once(
    ctx: &Ctx,
    redirect_url: &str,
    challenge: Option<&Challenge>,
) -> Result<Refreshed, OAuthError> {
    let state = ctx.store.load()?;
    let rm_url = challenge.and_then(|c| c.resource_metadata_url.as_deref());
    let d = discovered(ctx, &state, rm_url)?;
    let resource = discovery::select_resource(ctx.server_url, d.resource.as_ref())?;
    let client = match configured_client(ctx.settings).or_else(|| state.client().cloned()) {
        Some(c) => c,
        None => match document_for(ctx, redirect_url, d.metadata.as_ref())? {
            Some(doc) => json!({"client_id": doc.url})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            None => return Ok(Refreshed::NeedsSignIn),
        },
    };
    let Some(refresh) = state.refresh_token().map(str::to_string) else {
        return Ok(Refreshed::NeedsSignIn);
    };
    let params = vec![
        ("grant_type", "refresh_token".to_string()),
        ("refresh_token", refresh.clone()),
    ];
    match token_request(ctx, &d, &client, resource.as_deref(), params) {
        Ok(mut tokens) => {
            if !tokens.contains_key("refresh_token") {
                tokens.insert("refresh_token".into(), json!(refresh));
            }
            let tokens = with_scope(tokens, state.granted_scope());
            ctx.store.update(|s| s.set_tokens(tokens))?;
            Ok(Refreshed::Yes)
        }
        Err(_) if ctx.abort.is_aborted() => Err(OAuthError::Cancelled),
        Err(e @ OAuthError::Insecure(_)) => Err(e),
        Err(e @ OAuthError::Server { .. }) if !matches!(&e, OAuthError::Server { code, .. } if code == "server_error") => {
            Err(e)
        }
        Err(_) => Ok(Refreshed::NeedsSignIn),
    }
}

/// Refreshes the stored tokens (the caller holds the refresh lock). A rejected client or
/// grant is forgotten, which leaves the server needing a sign-in.
pub fn refresh_stored(
    ctx: &Ctx,
    redirect_hint: Option<&str>,
    challenge: Option<&Challenge>,
) -> Result<Refreshed, OAuthError> {
    let state = ctx.store.load()?;
    let redirect_url = refresh_redirect_url(ctx.settings, &state, redirect_hint);
    let client_before = state.client_id().map(str::to_string);
    match refresh_once(ctx, &redirect_url, challenge) {
        Err(OAuthError::Server { code, .. })
            if code == "invalid_client" || code == "unauthorized_client" =>
        {
            ctx.store.update(|s| {
                if s.client_id().map(str::to_string) == client_before {
                    for what in ["client", "tokens", "discovery"] {
                        s.invalidate(what);
                    }
                }
            })?;
            refresh_once(ctx, &redirect_url, challenge)
        }
        Err(OAuthError::Server { code, .. }) if code == "invalid_grant" => {
            ctx.store.update(|s| s.invalidate("tokens"))?;
            refresh_once(ctx, &redirect_url, challenge)
        }
        other => other,
    }
}

/// An authorization request sent to the browser, and what its completion needs.
#[derive(Debug, Clone)]
pub struct Pending {
    pub authorization_url: String,
    pub redirect_url: String,
    pub state: String,
    /// The scope requested (`None` when none was).
    pub scope: Option<String>,
    verifier: String,
    client: Map<String, Value>,
    discovered: Discovered,
    resource: Option<String>,
}

/// Builds the authorization request: the client (registering one if needed), PKCE, `scope`
/// and `resource`. `redirect_url` is where pi listens; `oauth_state` the request's `state`.
pub fn begin(
    ctx: &Ctx,
    redirect_url: &str,
    scope: Option<&str>,
    challenge: Option<&Challenge>,
    oauth_state: &str,
) -> Result<Pending, OAuthError> {
    let state = ctx.store.load()?;
    let rm_url = challenge.and_then(|c| c.resource_metadata_url.as_deref());
    let d = discovered(ctx, &state, rm_url)?;
    let resource = discovery::select_resource(ctx.server_url, d.resource.as_ref())?;
    let advertised = d
        .resource
        .as_ref()
        .and_then(|r| r.scopes_supported.as_ref())
        .map(|s| s.join(" "))
        .filter(|s| !s.is_empty());
    let scope = scope
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .or(advertised);
    let stored = configured_client(ctx.settings).or_else(|| state.client().cloned());
    let document = match &stored {
        Some(_) => None,
        None => document_for(ctx, redirect_url, d.metadata.as_ref())?,
    };
    let redirect = document
        .as_ref()
        .map_or_else(|| redirect_url.to_string(), |doc| doc.redirect_url.clone());
    let client = match (stored, &document) {
        (Some(c), _) => c,
        (None, Some(doc)) => json!({"client_id": doc.url})
            .as_object()
            .cloned()
            .unwrap_or_default(),
        (None, None) => {
            let registered = register(ctx, &d, &redirect, scope.as_deref())?;
            if ctx.settings.client_id.is_none() {
                ctx.store.update(|s| s.set_client(registered.clone()))?;
            }
            registered
        }
    };
    if let Some(m) = &d.metadata {
        if !m.response_types_supported.iter().any(|r| r == "code") {
            return Err(OAuthError::Other(
                "Authorization server does not support authorization codes".into(),
            ));
        }
        if m.code_challenge_methods_supported
            .as_ref()
            .is_some_and(|c| !c.iter().any(|m| m == "S256"))
        {
            return Err(OAuthError::Other(
                "Authorization server does not support PKCE S256".into(),
            ));
        }
    }
    let endpoint = d
        .metadata
        .as_ref()
        .map(|m| m.authorization_endpoint.clone())
        .unwrap_or_else(|| fallback_endpoint(&d.authorization_server_url, "/authorize"));
    if !Url::parse(&endpoint).is_some_and(|u| u.scheme == "http" || u.scheme == "https") {
        return Err(OAuthError::Other(format!(
            "Invalid authorization endpoint {endpoint}"
        )));
    }
    let verifier = pkce::generate().map_err(String::from)?;
    let client_id = client
        .get("client_id")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let mut params: Vec<(&str, &str)> = vec![
        ("response_type", "code"),
        ("client_id", &client_id),
        ("code_challenge", &verifier.challenge),
        ("code_challenge_method", "S256"),
        ("redirect_uri", &redirect),
        ("state", oauth_state),
    ];
    if let Some(s) = &scope {
        params.push(("scope", s));
        if s.split_whitespace().any(|p| p == "offline_access") {
            params.push(("prompt", "consent"));
        }
    }
    if let Some(r) = &resource {
        params.push(("resource", r));
    }
    let separator = if endpoint.contains('?') { '&' } else { '?' };
    let authorization_url = format!("{endpoint}{separator}{}", pkce::form_encode(&params));
    ctx.store.update(|s| {
        s.0.insert("codeVerifier".into(), json!(verifier.verifier));
        s.0.insert("oauthState".into(), json!(oauth_state));
    })?;
    Ok(Pending {
        authorization_url,
        redirect_url: redirect,
        state: oauth_state.to_string(),
        scope,
        verifier: verifier.verifier,
        client,
        discovered: d,
        resource,
    })
}

/// What came back from the browser.
#[derive(Debug, Clone, PartialEq)]
pub struct AuthorizationResponse {
    pub code: String,
    pub state: String,
    pub iss: Option<String>,
}

/// Exchanges the code for tokens and stores them.
pub fn complete(
    ctx: &Ctx,
    pending: &Pending,
    response: &AuthorizationResponse,
) -> Result<(), OAuthError> {
    if response.state != pending.state {
        return Err(OAuthError::Other(
            "The authorization response belongs to a different sign-in".into(),
        ));
    }
    if ctx.store.load()?.oauth_state() != Some(pending.state.as_str()) {
        return Err(OAuthError::Other(
            "Another sign-in to this MCP server started since; sign in again".into(),
        ));
    }
    let metadata = pending.discovered.metadata.as_ref();
    let expected = metadata.map(|m| m.issuer.clone());
    let iss_supported = metadata.is_some_and(|m| m.authorization_response_iss_parameter_supported);
    if (response.iss.is_some() || iss_supported) && response.iss != expected {
        return Err(OAuthError::IssuerMismatch {
            expected,
            received: response.iss.clone(),
        });
    }
    let params = vec![
        ("grant_type", "authorization_code".to_string()),
        ("code", response.code.clone()),
        ("code_verifier", pending.verifier.clone()),
        ("redirect_uri", pending.redirect_url.clone()),
    ];
    let tokens = match token_request(
        ctx,
        &pending.discovered,
        &pending.client,
        pending.resource.as_deref(),
        params,
    ) {
        Ok(t) => t,
        Err(e) => {
            let what = match &e {
                OAuthError::Server { code, .. }
                    if code == "invalid_client" || code == "unauthorized_client" =>
                {
                    "all"
                }
                OAuthError::Server { code, .. } if code == "invalid_grant" => "tokens",
                _ => return Err(e),
            };
            ctx.store.update(|s| s.invalidate(what))?;
            return Err(e);
        }
    };
    let tokens = with_scope(tokens, pending.scope.as_deref());
    ctx.store.update(|s| s.set_tokens(tokens))?;
    Ok(())
}

#[cfg(test)]
#[path = "../tests/oauth_flow.rs"]
mod tests;
