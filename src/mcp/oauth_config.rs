//! Validation of an HTTP server's `oauth` block in `mcp.json`, with pi's rules and messages, so
//! a config pi rejects is rejected here too. Signing in is not this module's job.

use serde_json::Value;

use super::url::Url;

const REGISTRATIONS: [&str; 3] = ["auto", "dcr", "cimd"];

/// A loopback redirect: `http` on `localhost`, `127.0.0.1` or `[::1]`, no query or fragment.
fn is_loopback_redirect(value: &str) -> bool {
    Url::parse(value).is_some_and(|u| {
        u.scheme == "http"
            && u.is_loopback()
            && u.query.as_deref().unwrap_or("").is_empty()
            && u.fragment.as_deref().unwrap_or("").is_empty()
    })
}

/// pi's Client ID Metadata Documents list `/callback` on `localhost` and `127.0.0.1`.
fn is_metadata_document_callback(callback_url: Option<&str>) -> bool {
    match callback_url.and_then(Url::parse) {
        None => true,
        Some(u) => u.host != "[::1]" && u.path == "/callback",
    }
}

fn optional_string(oauth: &Value, key: &str) -> Result<Option<String>, String> {
    match oauth.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("oauth.{key} must be a string")),
    }
}

/// `Err` with pi's message when the block is invalid.
pub fn validate(oauth: Option<&Value>) -> Result<(), String> {
    let Some(oauth) = oauth else { return Ok(()) };
    if !oauth.is_object() {
        return Err("oauth must be an object".into());
    }
    let client_id = optional_string(oauth, "clientId")?;
    optional_string(oauth, "clientSecret")?;
    let port = match oauth.get("callbackPort") {
        None => None,
        Some(v) => match v.as_u64() {
            Some(p) if (1..=65535).contains(&p) && v.as_f64() == Some(p as f64) => Some(p),
            _ => return Err("oauth.callbackPort must be a port number".into()),
        },
    };
    let callback_url = match oauth.get("callbackUrl") {
        None => None,
        Some(Value::String(s)) if is_loopback_redirect(s) => {
            let url_port = Url::parse(s).and_then(|u| u.port);
            if let (Some(u), Some(p)) = (url_port, port) {
                if u64::from(u) != p {
                    return Err(
                        "oauth.callbackUrl and oauth.callbackPort name different ports".into(),
                    );
                }
            }
            Some(s.clone())
        }
        Some(_) => {
            return Err("oauth.callbackUrl must be an http URI on localhost, 127.0.0.1, or [::1] without query or fragment".into())
        }
    };
    optional_string(oauth, "scope")?;
    let client_name = match oauth.get("clientName") {
        None => None,
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
        Some(_) => return Err("oauth.clientName must be a non-empty string".into()),
    };
    match oauth.get("clientRegistration") {
        None => {}
        Some(v) => match v.as_str().filter(|r| REGISTRATIONS.contains(r)) {
            None => {
                return Err(
                    "oauth.clientRegistration must be \"auto\", \"dcr\", or \"cimd\"".into(),
                )
            }
            Some("cimd") => {
                if client_id.is_some() || client_name.is_some() {
                    return Err("oauth.clientRegistration \"cimd\" cannot be combined with oauth.clientId or oauth.clientName".into());
                }
                if !is_metadata_document_callback(callback_url.as_deref()) {
                    return Err("oauth.clientRegistration \"cimd\" requires oauth.callbackUrl on localhost or 127.0.0.1 with path /callback".into());
                }
            }
            Some(_) => {}
        },
    }
    if let Some(v) = oauth.get("authServerMetadataUrl") {
        let ok = v
            .as_str()
            .and_then(Url::parse)
            .is_some_and(|u| u.scheme == "https" || (u.scheme == "http" && u.is_loopback()));
        if !ok {
            return Err("oauth.authServerMetadataUrl must be an https URL, or http on localhost, 127.0.0.1, or [::1]".into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(v: Value) -> Result<(), String> {
        validate(Some(&v))
    }

    #[test]
    fn pi_rules() {
        assert!(check(json!({"clientId": "c", "callbackPort": 8765, "scope": "a b"})).is_ok());
        assert_eq!(
            check(json!({"callbackPort": 0})).unwrap_err(),
            "oauth.callbackPort must be a port number"
        );
        assert_eq!(
            check(json!({"callbackPort": 1.5})).unwrap_err(),
            "oauth.callbackPort must be a port number"
        );
        assert!(check(json!({"callbackUrl": "http://127.0.0.1:9/cb"})).is_ok());
        assert!(check(json!({"callbackUrl": "https://127.0.0.1/cb"})).is_err());
        assert!(check(json!({"callbackUrl": "http://127.0.0.1/cb?x=1"})).is_err());
        assert_eq!(
            check(json!({"callbackUrl": "http://localhost:9/cb", "callbackPort": 10})).unwrap_err(),
            "oauth.callbackUrl and oauth.callbackPort name different ports"
        );
        assert!(check(json!({"clientRegistration": "cimd"})).is_ok());
        assert!(check(json!({"clientRegistration": "cimd", "clientId": "x"})).is_err());
        assert!(check(
            json!({"clientRegistration": "cimd", "callbackUrl": "http://[::1]/callback"})
        )
        .is_err());
        assert!(check(json!({"clientRegistration": "nope"})).is_err());
        assert!(check(json!({"clientName": "  "})).is_err());
        assert!(check(json!({"authServerMetadataUrl": "http://example.com/x"})).is_err());
        assert!(check(json!({"authServerMetadataUrl": "http://localhost:1/x"})).is_ok());
        assert_eq!(check(json!("x")).unwrap_err(), "oauth must be an object");
    }
}
