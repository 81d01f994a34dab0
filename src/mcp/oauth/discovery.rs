//! Finding a server's authorization server: the `WWW-Authenticate` challenge of a 401, the
//! protected-resource metadata (RFC 9728: from the challenge's `resource_metadata`, else
//! `/.well-known/oauth-protected-resource<path>`, then at the root), and the authorization
//! server's metadata (RFC 8414 `/.well-known/oauth-authorization-server<path>`, then OpenID
//! `openid-configuration` in both placements), whose `issuer` must be the server asked for.
//! Metadata URLs must be `http:` or `https:`; a document that fails the checks is refused.

use serde_json::{Map, Value};

use super::net;
use super::OAuthError;
use crate::ai::Abort;
use crate::mcp::url::Url;

/// What a 401 or 403 said about the credentials it wants.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Challenge {
    pub resource_metadata_url: Option<String>,
    pub scope: Option<String>,
    pub error: Option<String>,
    pub error_description: Option<String>,
}

/// One `name=value` or `name="value"` parameter of a challenge (case-insensitive name).
fn challenge_field(header: &str, name: &str) -> Option<String> {
    let lower = header.to_ascii_lowercase();
    let needle = format!("{}=", name.to_ascii_lowercase());
    let mut from = 0;
    while let Some(i) = lower[from..].find(&needle) {
        let at = from + i;
        from = at + needle.len();
        let boundary = at == 0 || matches!(header.as_bytes()[at - 1], b',' | b' ' | b'\t');
        if !boundary {
            continue;
        }
        let rest = &header[at + needle.len()..];
        let value = match rest.strip_prefix('"') {
            Some(q) => q.split('"').next().unwrap_or(""),
            None => rest
                .split(|c: char| c == ',' || c.is_whitespace())
                .next()
                .unwrap_or(""),
        };
        return (!value.is_empty()).then(|| value.to_string());
    }
    None
}

/// Parses a `Bearer` (or `DPoP`) challenge; anything else says nothing.
pub fn parse_www_authenticate(header: Option<&str>) -> Challenge {
    let Some(header) = header else {
        return Challenge::default();
    };
    let scheme = header.split_whitespace().next().unwrap_or("");
    if !scheme.eq_ignore_ascii_case("bearer") && !scheme.eq_ignore_ascii_case("dpop") {
        return Challenge::default();
    }
    Challenge {
        resource_metadata_url: challenge_field(header, "resource_metadata")
            .filter(|u| Url::parse(u).is_some()),
        scope: challenge_field(header, "scope"),
        error: challenge_field(header, "error"),
        error_description: challenge_field(header, "error_description"),
    }
}

fn is_http_url(text: &str) -> bool {
    Url::parse(text).is_some_and(|u| u.scheme == "http" || u.scheme == "https")
}

fn invalid(what: &str) -> String {
    format!("Invalid {what}")
}

/// Null and `""` count as absent, as pi reads optional OAuth fields.
fn present<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    obj.get(key)
        .filter(|v| !v.is_null() && v.as_str() != Some(""))
}

fn url_field(obj: &Map<String, Value>, key: &str, what: &str) -> Result<String, String> {
    match obj.get(key).and_then(Value::as_str) {
        Some(u) if is_http_url(u) => Ok(u.to_string()),
        _ => Err(invalid(what)),
    }
}

fn optional_url(obj: &Map<String, Value>, key: &str, what: &str) -> Result<Option<String>, String> {
    match present(obj, key) {
        None => Ok(None),
        Some(_) => url_field(obj, key, what).map(Some),
    }
}

fn strings(obj: &Map<String, Value>, key: &str) -> Result<Option<Vec<String>>, String> {
    match present(obj, key) {
        None => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .map(Some)
            .ok_or_else(|| invalid(key)),
        Some(_) => Err(invalid(key)),
    }
}

/// RFC 9728 protected-resource metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceMetadata {
    pub resource: String,
    pub authorization_servers: Vec<String>,
    pub scopes_supported: Option<Vec<String>>,
    pub raw: Value,
}

impl ResourceMetadata {
    pub fn parse(v: &Value) -> Result<ResourceMetadata, String> {
        let obj = v
            .as_object()
            .ok_or_else(|| invalid("OAuth protected resource metadata"))?;
        let resource = url_field(
            obj,
            "resource",
            "OAuth protected resource metadata resource",
        )?;
        let authorization_servers = strings(obj, "authorization_servers")?.unwrap_or_default();
        if authorization_servers.iter().any(|u| !is_http_url(u)) {
            return Err(invalid("authorization server URL"));
        }
        Ok(ResourceMetadata {
            resource,
            authorization_servers,
            scopes_supported: strings(obj, "scopes_supported")?,
            raw: v.clone(),
        })
    }
}

/// RFC 8414 authorization-server metadata (or an OpenID configuration).
#[derive(Debug, Clone, PartialEq)]
pub struct ServerMetadata {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub registration_endpoint: Option<String>,
    pub response_types_supported: Vec<String>,
    pub token_endpoint_auth_methods_supported: Vec<String>,
    pub code_challenge_methods_supported: Option<Vec<String>>,
    pub client_id_metadata_document_supported: bool,
    pub authorization_response_iss_parameter_supported: bool,
    pub raw: Value,
}

impl ServerMetadata {
    pub fn parse(v: &Value) -> Result<ServerMetadata, String> {
        let obj = v
            .as_object()
            .ok_or_else(|| invalid("authorization server metadata"))?;
        let response_types_supported = strings(obj, "response_types_supported")?
            .ok_or_else(|| invalid("response_types_supported"))?;
        let flag = |k: &str| obj.get(k).and_then(Value::as_bool).unwrap_or(false);
        Ok(ServerMetadata {
            issuer: url_field(obj, "issuer", "authorization server issuer")?,
            authorization_endpoint: url_field(
                obj,
                "authorization_endpoint",
                "authorization endpoint",
            )?,
            token_endpoint: url_field(obj, "token_endpoint", "token endpoint")?,
            registration_endpoint: optional_url(
                obj,
                "registration_endpoint",
                "registration endpoint",
            )?,
            response_types_supported,
            token_endpoint_auth_methods_supported: strings(
                obj,
                "token_endpoint_auth_methods_supported",
            )?
            .unwrap_or_default(),
            code_challenge_methods_supported: strings(obj, "code_challenge_methods_supported")?,
            client_id_metadata_document_supported: flag("client_id_metadata_document_supported"),
            authorization_response_iss_parameter_supported: flag(
                "authorization_response_iss_parameter_supported",
            ),
            raw: v.clone(),
        })
    }
}

/// 4xx and 502 mean "not here": discovery tries the next place.
fn is_miss(status: u16) -> bool {
    (400..500).contains(&status) || status == 502
}

/// The path for `/.well-known/<kind><path>`: empty for the root.
fn path_suffix(path: &str) -> &str {
    path.strip_suffix('/').unwrap_or(path)
}

/// Reads the protected-resource metadata. `Err(Other)` for a missing or invalid document;
/// a request that got no answer is passed on as such.
fn protected_resource(
    server_url: &str,
    metadata_url: Option<&str>,
    abort: &Abort,
) -> Result<Result<ResourceMetadata, String>, OAuthError> {
    let server =
        Url::parse(server_url).ok_or_else(|| OAuthError::Other(invalid("MCP server URL")))?;
    let first = match metadata_url {
        Some(u) => u.to_string(),
        None => format!(
            "{}/.well-known/oauth-protected-resource{}",
            server.origin(),
            path_suffix(&server.path)
        ),
    };
    let mut resp = net::get_metadata(&first, abort)?;
    if metadata_url.is_none() && server.path != "/" && is_miss(resp.status) {
        let root = format!("{}/.well-known/oauth-protected-resource", server.origin());
        resp = net::get_metadata(&root, abort)?;
    }
    if !resp.ok() {
        return Ok(Err(format!(
            "HTTP {} loading OAuth protected resource metadata",
            resp.status
        )));
    }
    Ok(resp
        .json()
        .ok_or_else(|| invalid("OAuth protected resource metadata"))
        .and_then(|v| ResourceMetadata::parse(&v)))
}

/// Where an issuer's metadata may be, in pi's order.
pub fn server_metadata_urls(issuer: &str) -> Vec<String> {
    let Some(u) = Url::parse(issuer) else {
        return Vec::new();
    };
    let path = path_suffix(&u.path);
    let origin = u.origin();
    let mut urls = vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
    ];
    if !path.is_empty() {
        urls.push(format!("{origin}{path}/.well-known/openid-configuration"));
    }
    urls
}

/// The issuer's metadata, its `issuer` checked; `Ok(None)` when no place has it.
pub fn server_metadata(issuer: &str, abort: &Abort) -> Result<Option<ServerMetadata>, OAuthError> {
    for url in server_metadata_urls(issuer) {
        let resp = net::get_metadata(&url, abort)?;
        if !resp.ok() {
            if is_miss(resp.status) {
                continue;
            }
            return Err(OAuthError::Other(format!(
                "HTTP {} loading authorization server metadata from {url}",
                resp.status
            )));
        }
        let metadata = resp
            .json()
            .ok_or_else(|| invalid("authorization server metadata"))
            .and_then(|v| ServerMetadata::parse(&v))?;
        let trim = |s: &str| s.strip_suffix('/').unwrap_or(s).to_string();
        if trim(&metadata.issuer) != trim(issuer) {
            return Err(OAuthError::IssuerMismatch {
                expected: Some(issuer.to_string()),
                received: Some(metadata.issuer),
            });
        }
        return Ok(Some(metadata));
    }
    Ok(None)
}

/// What discovery found for a server.
#[derive(Debug, Clone, PartialEq)]
pub struct Discovered {
    pub authorization_server_url: String,
    pub metadata: Option<ServerMetadata>,
    pub resource: Option<ResourceMetadata>,
}

/// Full discovery. `configured_metadata_url` (`oauth.authServerMetadataUrl`) replaces the
/// authorization-server part and is trusted as configured.
pub fn discover(
    server_url: &str,
    resource_metadata_url: Option<&str>,
    configured_metadata_url: Option<&str>,
    abort: &Abort,
) -> Result<Discovered, OAuthError> {
    // A missing or broken resource document only means no resource indicator; pi goes on.
    let resource = protected_resource(server_url, resource_metadata_url, abort)?.ok();
    if let Some(url) = configured_metadata_url {
        secure_endpoint(url)?;
        let resp = net::get_metadata(url, abort)?;
        if !resp.ok() {
            return Err(OAuthError::Other(format!(
                "HTTP {} loading authorization server metadata from {url}",
                resp.status
            )));
        }
        let metadata = resp
            .json()
            .ok_or_else(|| invalid("authorization server metadata"))
            .and_then(|v| ServerMetadata::parse(&v))?;
        return Ok(Discovered {
            authorization_server_url: metadata.issuer.clone(),
            metadata: Some(metadata),
            resource,
        });
    }
    let authorization_server_url = match resource
        .as_ref()
        .and_then(|r| r.authorization_servers.first())
    {
        Some(u) => u.clone(),
        None => Url::parse(server_url)
            .map(|u| format!("{}/", u.origin()))
            .ok_or_else(|| OAuthError::Other(invalid("MCP server URL")))?,
    };
    let metadata = server_metadata(&authorization_server_url, abort)?;
    Ok(Discovered {
        authorization_server_url,
        metadata,
        resource,
    })
}

/// The `resource` parameter: the metadata's resource, which must cover the server URL.
pub fn select_resource(
    server_url: &str,
    metadata: Option<&ResourceMetadata>,
) -> Result<Option<String>, OAuthError> {
    let Some(m) = metadata else { return Ok(None) };
    let mismatch = || {
        OAuthError::Other(format!(
            "Protected resource {} does not match MCP server {}",
            m.resource,
            crate::mcp::url::normalize(server_url)
        ))
    };
    let (Some(requested), Some(configured)) = (Url::parse(server_url), Url::parse(&m.resource))
    else {
        return Err(mismatch());
    };
    if requested.origin() != configured.origin() {
        return Err(mismatch());
    }
    let with_slash = |p: &str| {
        if p.ends_with('/') {
            p.to_string()
        } else {
            format!("{p}/")
        }
    };
    if !with_slash(&requested.path).starts_with(&with_slash(&configured.path)) {
        return Err(mismatch());
    }
    Ok(Some(m.resource.clone()))
}

/// OAuth credentials go only to `https:` or loopback endpoints.
pub fn secure_endpoint(url: &str) -> Result<(), OAuthError> {
    match Url::parse(url) {
        Some(u) if u.scheme == "https" || (u.scheme == "http" && u.is_loopback()) => Ok(()),
        _ => Err(OAuthError::Insecure(url.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn challenges() {
        let c = parse_www_authenticate(Some(
            r#"Bearer error="insufficient_scope", scope="read write", resource_metadata="https://h/.well-known/oauth-protected-resource/mcp""#,
        ));
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(c.scope.as_deref(), Some("read write"));
        assert_eq!(
            c.resource_metadata_url.as_deref(),
            Some("https://h/.well-known/oauth-protected-resource/mcp")
        );
        let bare = parse_www_authenticate(Some("bearer realm=x,error=invalid_token"));
        assert_eq!(bare.error.as_deref(), Some("invalid_token"));
        assert_eq!(
            parse_www_authenticate(Some("Basic realm=x")),
            Challenge::default()
        );
        assert_eq!(parse_www_authenticate(None), Challenge::default());
        // `xscope=` is not `scope=`.
        assert_eq!(parse_www_authenticate(Some("Bearer xscope=a")).scope, None);
    }

    #[test]
    fn metadata_urls_in_pis_order() {
        assert_eq!(
            server_metadata_urls("https://as.example/tenant/"),
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant",
                "https://as.example/.well-known/openid-configuration/tenant",
                "https://as.example/tenant/.well-known/openid-configuration",
            ]
        );
        assert_eq!(server_metadata_urls("https://as.example").len(), 2);
    }

    #[test]
    fn metadata_must_use_web_urls() {
        let good = json!({
            "issuer": "https://as", "authorization_endpoint": "https://as/a",
            "token_endpoint": "https://as/t", "response_types_supported": ["code"],
            "registration_endpoint": "", "scopes_supported": null
        });
        let m = ServerMetadata::parse(&good).unwrap();
        assert_eq!(m.registration_endpoint, None);
        let mut bad = good.clone();
        bad["authorization_endpoint"] = json!("file:///etc/passwd");
        assert_eq!(
            ServerMetadata::parse(&bad).unwrap_err(),
            "Invalid authorization endpoint"
        );
        assert!(ResourceMetadata::parse(&json!({"resource": "javascript:x"})).is_err());
    }

    #[test]
    fn the_resource_must_cover_the_server() {
        let m = ResourceMetadata::parse(&json!({"resource": "https://h/mcp"})).unwrap();
        assert_eq!(
            select_resource("https://h/mcp/sub", Some(&m))
                .unwrap()
                .as_deref(),
            Some("https://h/mcp")
        );
        assert!(select_resource("https://h/other", Some(&m)).is_err());
        assert!(select_resource("https://other/mcp", Some(&m)).is_err());
        assert_eq!(select_resource("https://h/mcp", None).unwrap(), None);
    }

    #[test]
    fn only_https_or_loopback_gets_credentials() {
        assert!(secure_endpoint("https://as/t").is_ok());
        assert!(secure_endpoint("http://127.0.0.1:9/t").is_ok());
        assert_eq!(
            secure_endpoint("http://as/t").unwrap_err().to_string(),
            "Refusing to send OAuth credentials to non-HTTPS endpoint http://as/t"
        );
    }
}
