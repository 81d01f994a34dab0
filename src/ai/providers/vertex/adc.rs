//! Google application-default credentials for Vertex AI: finds the credentials file
//! (`GOOGLE_APPLICATION_CREDENTIALS`, else gcloud's
//! `~/.config/gcloud/application_default_credentials.json`) and turns it into an OAuth access
//! token — a refresh-token exchange for `authorized_user`, an RS256-signed JWT assertion (ring)
//! for `service_account`. Tokens are cached per credential until five minutes before expiry.
//!
//! `PI_GOOGLE_TOKEN_URL` overrides the token endpoint for both kinds (a test hook; a service
//! account's own `token_uri` is honoured otherwise).

use std::path::PathBuf;

use serde_json::Value;

use crate::ai::providers::cloud::{home_dir, now_secs, request, Env, ExpiringCache};
use crate::util::encoding::{base64_decode, base64url_encode as b64url, form_encode};

const DEFAULT_TOKEN_URL: &str = "https://oauth2.googleapis.com/token";
const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";

static TOKENS: ExpiringCache<String> = ExpiringCache::new();

/// An access token and what else the credentials file says about the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessToken {
    pub token: String,
    /// The project to bill (`x-goog-user-project`), for user credentials that name one.
    pub quota_project: Option<String>,
    /// The project the credentials belong to, used when no project is configured.
    pub project: Option<String>,
}

pub fn credentials_path(env: Env) -> Option<PathBuf> {
    env("GOOGLE_APPLICATION_CREDENTIALS")
        .map(PathBuf::from)
        .or_else(|| {
            home_dir(env).map(|h| h.join(".config/gcloud/application_default_credentials.json"))
        })
}

/// A token for the application-default credentials.
pub fn access_token(env: Env) -> Result<AccessToken, String> {
    let path = credentials_path(env).ok_or(
        "No Google application-default credentials: set GOOGLE_APPLICATION_CREDENTIALS or run `gcloud auth application-default login`",
    )?;
    let text = crate::util::files::read_limited_string(&path, crate::util::files::Limit::CONFIG)
        .map_err(|e| {
            format!(
            "Could not read Google credentials {}: {e}. Set GOOGLE_APPLICATION_CREDENTIALS or run \
             `gcloud auth application-default login`",
            path.display()
        )
        })?;
    let creds: Value = serde_json::from_str(&text)
        .map_err(|e| format!("Google credentials {} are not JSON: {e}", path.display()))?;
    let field = |k: &str| creds.get(k).and_then(Value::as_str).map(str::to_string);
    let kind = field("type").unwrap_or_default();
    let (cache_key, form, token_url) = match kind.as_str() {
        "authorized_user" => {
            let (Some(id), Some(secret), Some(refresh)) = (
                field("client_id"),
                field("client_secret"),
                field("refresh_token"),
            ) else {
                return Err(format!(
                    "Google credentials {}: authorized_user needs client_id, client_secret and refresh_token",
                    path.display()
                ));
            };
            let form = form_encode(&[
                ("grant_type", "refresh_token"),
                ("client_id", &id),
                ("client_secret", &secret),
                ("refresh_token", &refresh),
            ]);
            (
                format!("user:{id}:{refresh}"),
                form,
                DEFAULT_TOKEN_URL.to_string(),
            )
        }
        "service_account" => {
            let (Some(email), Some(key)) = (field("client_email"), field("private_key")) else {
                return Err(format!(
                    "Google credentials {}: service_account needs client_email and private_key",
                    path.display()
                ));
            };
            let token_url = field("token_uri").unwrap_or_else(|| DEFAULT_TOKEN_URL.to_string());
            let aud = env("PI_GOOGLE_TOKEN_URL").unwrap_or_else(|| token_url.clone());
            let key_id = field("private_key_id");
            let cache_key = format!("sa:{email}:{}", key_id.clone().unwrap_or_default());
            if let Some(t) = TOKENS.get(&cache_key) {
                return Ok(with_token(t, &creds));
            }
            let jwt = service_account_jwt(&email, &key, key_id.as_deref(), &aud, now_secs())?;
            let form = form_encode(&[
                ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
                ("assertion", &jwt),
            ]);
            (cache_key, form, token_url)
        }
        other => {
            return Err(format!(
                "Google credentials {}: type {other:?} is not supported (use `gcloud auth \
                 application-default login` or a service-account key)",
                path.display()
            ))
        }
    };
    if let Some(t) = TOKENS.get(&cache_key) {
        return Ok(with_token(t, &creds));
    }
    let url = env("PI_GOOGLE_TOKEN_URL").unwrap_or(token_url);
    let headers = vec![(
        "content-type".to_string(),
        "application/x-www-form-urlencoded".to_string(),
    )];
    let (status, body) = request("POST", &url, &headers, Some(&form))
        .map_err(|e| format!("Google token request failed: {e}"))?;
    let answer: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let s = |k: &str| answer.get(k).and_then(Value::as_str);
    if !(200..300).contains(&status) {
        let detail = match (s("error"), s("error_description")) {
            (Some(e), Some(d)) => format!("{e}: {d}"),
            (Some(e), None) => e.to_string(),
            _ => body.trim().chars().take(300).collect(),
        };
        return Err(format!(
            "Google token refresh failed ({status}): {detail} (run `gcloud auth application-default login` if the credentials expired)"
        ));
    }
    let token = s("access_token")
        .ok_or("Google token response has no access_token")?
        .to_string();
    let expires_in = answer
        .get("expires_in")
        .and_then(Value::as_i64)
        .unwrap_or(3600);
    TOKENS.put(&cache_key, token.clone(), now_secs() + expires_in);
    Ok(with_token(token, &creds))
}

fn with_token(token: String, creds: &Value) -> AccessToken {
    let field = |k: &str| creds.get(k).and_then(Value::as_str).map(str::to_string);
    AccessToken {
        token,
        quota_project: field("quota_project_id"),
        project: field("project_id").or_else(|| field("quota_project_id")),
    }
}

/// The DER inside a PEM `PRIVATE KEY` block (PKCS#8, as Google issues them).
fn pem_to_der(pem: &str) -> Result<Vec<u8>, String> {
    let body: String = pem
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("-----") && !l.is_empty())
        .collect();
    base64_decode(&body)
        .ok_or_else(|| "service account private_key is not valid PEM: bad base64".to_string())
}

/// The signed JWT a service account exchanges for an access token.
pub fn service_account_jwt(
    email: &str,
    private_key_pem: &str,
    key_id: Option<&str>,
    audience: &str,
    now: i64,
) -> Result<String, String> {
    use ring::signature::{RsaKeyPair, RSA_PKCS1_SHA256};
    let mut header = serde_json::json!({"alg": "RS256", "typ": "JWT"});
    if let Some(k) = key_id {
        header["kid"] = Value::from(k);
    }
    let claims = serde_json::json!({
        "iss": email,
        "scope": SCOPE,
        "aud": audience,
        "iat": now,
        "exp": now + 3600,
    });
    let signing_input = format!(
        "{}.{}",
        b64url(header.to_string().as_bytes()),
        b64url(claims.to_string().as_bytes())
    );
    let der = pem_to_der(private_key_pem)?;
    let key = RsaKeyPair::from_pkcs8(&der)
        .map_err(|e| format!("service account private_key is not a PKCS#8 RSA key: {e}"))?;
    let mut sig = vec![0u8; key.public().modulus_len()];
    key.sign(
        &RSA_PKCS1_SHA256,
        &ring::rand::SystemRandom::new(),
        signing_input.as_bytes(),
        &mut sig,
    )
    .map_err(|_| "could not sign the service account assertion".to_string())?;
    Ok(format!("{signing_input}.{}", b64url(&sig)))
}

#[cfg(test)]
#[path = "../tests/vertex_adc.rs"]
mod tests;
