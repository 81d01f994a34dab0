//! Where a Bedrock request gets its identity, region and endpoint, in the order pi (through the
//! AWS SDK's default chain) looks: a Bedrock bearer token; `AWS_BEDROCK_SKIP_AUTH` dummy keys
//! for auth-less proxies; static keys from the environment (skipped when `AWS_PROFILE` is set);
//! the shared `credentials`/`config` files for the profile (static keys, `credential_process`,
//! or a web-identity role); web identity from the environment (STS
//! `AssumeRoleWithWebIdentity`); container credentials. Temporary credentials are cached until
//! shortly before they expire. Everything reads through an injectable [`Env`].
//!
//! Endpoints can be redirected the way the AWS SDK allows: `AWS_ENDPOINT_URL_BEDROCK_RUNTIME`
//! (or `AWS_ENDPOINT_URL`) for Bedrock, `AWS_ENDPOINT_URL_STS` for STS — tests use these to
//! reach a local mock server.

use std::path::PathBuf;
use std::time::Duration;

use super::sigv4::Credentials;
use crate::ai::providers::cloud::{home_dir, now_secs, request, Env, ExpiringCache};
use crate::util::date::parse_iso_ms;
use crate::util::encoding::form_encode;
use crate::util::process;

/// How requests are authenticated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Auth {
    Bearer(String),
    SigV4(Credentials),
}

pub const MISSING_CREDENTIALS: &str = "No AWS credentials found for amazon-bedrock: set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, or AWS_BEARER_TOKEN_BEDROCK";

static TEMPORARY: ExpiringCache<Credentials> = ExpiringCache::new();

/// `bedrock-runtime[-fips].<region>.amazonaws.com[.cn]` → region.
fn standard_endpoint_region(base_url: &str) -> Option<String> {
    let rest = base_url.trim().split_once("://")?.1;
    let host = rest.split(['/', ':', '?']).next()?.to_ascii_lowercase();
    let host = host
        .strip_suffix(".amazonaws.com.cn")
        .or_else(|| host.strip_suffix(".amazonaws.com"))?;
    let region = host
        .strip_prefix("bedrock-runtime-fips.")
        .or_else(|| host.strip_prefix("bedrock-runtime."))?;
    (!region.is_empty()
        && region
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-'))
    .then(|| region.to_string())
}

/// The signing region and the endpoint (scheme + host, no path) for a model's `baseUrl`.
/// As pi: a custom `baseUrl` is always used; the catalog's standard endpoint is used only when
/// neither a region nor a profile is configured (otherwise the configured region picks it).
pub fn region_and_endpoint(base_url: &str, env: Env) -> (String, String) {
    let configured = env("AWS_REGION").or_else(|| env("AWS_DEFAULT_REGION"));
    let has_profile = env("AWS_PROFILE").is_some();
    let endpoint_region = standard_endpoint_region(base_url);
    let explicit = endpoint_region.is_none() || (configured.is_none() && !has_profile);
    let region = configured
        .or_else(|| endpoint_region.clone().filter(|_| explicit))
        .or_else(|| has_profile.then(|| profile_region(env)).flatten())
        .unwrap_or_else(|| "us-east-1".to_string());
    let custom = !base_url.trim().is_empty() && endpoint_region.is_none();
    let env_endpoint = env("AWS_ENDPOINT_URL_BEDROCK_RUNTIME").or_else(|| env("AWS_ENDPOINT_URL"));
    let endpoint = match env_endpoint {
        Some(e) if !custom => e,
        _ if explicit && !base_url.trim().is_empty() => base_url.trim().to_string(),
        _ => {
            let suffix = if region.starts_with("cn-") {
                "amazonaws.com.cn"
            } else {
                "amazonaws.com"
            };
            format!("https://bedrock-runtime.{region}.{suffix}")
        }
    };
    (region, endpoint.trim_end_matches('/').to_string())
}

fn profile_name(env: Env) -> String {
    env("AWS_PROFILE").unwrap_or_else(|| "default".to_string())
}

fn shared_file(env: Env, var: &str, name: &str) -> Option<PathBuf> {
    env(var)
        .map(PathBuf::from)
        .or_else(|| home_dir(env).map(|h| h.join(".aws").join(name)))
}

/// The `key = value` pairs of one INI section, if the section exists.
fn ini_section(text: &str, section: &str) -> Option<Vec<(String, String)>> {
    let mut found = false;
    let mut inside = false;
    let mut out = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') || t.starts_with(';') {
            continue;
        }
        if let Some(name) = t.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            inside = name.split_whitespace().collect::<Vec<_>>().join(" ") == section;
            found |= inside;
            continue;
        }
        if inside {
            if let Some((k, v)) = t.split_once('=') {
                out.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
        }
    }
    found.then_some(out)
}

/// The profile's settings: the credentials file first, then the config file
/// (`[profile name]`, or `[default]`).
fn profile(env: Env) -> Option<Vec<(String, String)>> {
    let name = profile_name(env);
    let read = |var: &str, file: &str| {
        shared_file(env, var, file).and_then(|p| {
            crate::util::files::read_limited_string(p, crate::util::files::Limit::CONFIG).ok()
        })
    };
    let creds =
        read("AWS_SHARED_CREDENTIALS_FILE", "credentials").and_then(|t| ini_section(&t, &name));
    let config_section = if name == "default" {
        "default".to_string()
    } else {
        format!("profile {name}")
    };
    let config = read("AWS_CONFIG_FILE", "config")
        .and_then(|t| ini_section(&t, &config_section).or_else(|| ini_section(&t, &name)));
    match (creds, config) {
        (None, None) => None,
        (a, b) => Some(
            a.into_iter()
                .flatten()
                .chain(b.into_iter().flatten())
                .collect(),
        ),
    }
}

fn get<'a>(settings: &'a [(String, String)], key: &str) -> Option<&'a str> {
    settings
        .iter()
        .find(|(k, v)| k == key && !v.is_empty())
        .map(|(_, v)| v.as_str())
}

fn profile_region(env: Env) -> Option<String> {
    profile(env).and_then(|s| get(&s, "region").map(str::to_string))
}

/// Resolves the identity for one request.
pub fn resolve_auth(env: Env) -> Result<Auth, String> {
    let skip_auth = env("AWS_BEDROCK_SKIP_AUTH").as_deref() == Some("1");
    if let Some(token) = env("AWS_BEARER_TOKEN_BEDROCK").filter(|_| !skip_auth) {
        return Ok(Auth::Bearer(token));
    }
    if skip_auth {
        return Ok(Auth::SigV4(Credentials {
            access_key_id: "dummy-access-key".into(),
            secret_access_key: "dummy-secret-key".into(),
            session_token: None,
        }));
    }
    if env("AWS_PROFILE").is_none() {
        if let (Some(id), Some(secret)) = (env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY")) {
            return Ok(Auth::SigV4(Credentials {
                access_key_id: id,
                secret_access_key: secret,
                session_token: env("AWS_SESSION_TOKEN"),
            }));
        }
    }
    if let Some(settings) = profile(env) {
        if let Some(creds) = from_profile(&settings, env)? {
            return Ok(Auth::SigV4(creds));
        }
    } else if let Some(name) = env("AWS_PROFILE") {
        return Err(format!(
            "AWS profile \"{name}\" not found in the shared credentials or config file"
        ));
    }
    if let (Some(token_file), Some(role)) =
        (env("AWS_WEB_IDENTITY_TOKEN_FILE"), env("AWS_ROLE_ARN"))
    {
        let session = env("AWS_ROLE_SESSION_NAME");
        return web_identity(&token_file, &role, session.as_deref(), env).map(Auth::SigV4);
    }
    if env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI").is_some()
        || env("AWS_CONTAINER_CREDENTIALS_FULL_URI").is_some()
    {
        return container(env).map(Auth::SigV4);
    }
    Err(MISSING_CREDENTIALS.to_string())
}

/// Credentials a profile defines, `None` if it defines none (so the chain goes on).
fn from_profile(settings: &[(String, String)], env: Env) -> Result<Option<Credentials>, String> {
    if let (Some(id), Some(secret)) = (
        get(settings, "aws_access_key_id"),
        get(settings, "aws_secret_access_key"),
    ) {
        return Ok(Some(Credentials {
            access_key_id: id.to_string(),
            secret_access_key: secret.to_string(),
            session_token: get(settings, "aws_session_token").map(str::to_string),
        }));
    }
    if let Some(cmd) = get(settings, "credential_process") {
        return credential_process(cmd).map(Some);
    }
    if let Some(role) = get(settings, "role_arn") {
        if let Some(token_file) = get(settings, "web_identity_token_file") {
            let session = get(settings, "role_session_name");
            return web_identity(token_file, role, session, env).map(Some);
        }
        return Err(format!(
            "AWS profile \"{}\" assumes a role through a source profile, which pi cannot do yet; \
             export temporary keys (aws configure export-credentials --format env)",
            profile_name(env)
        ));
    }
    if get(settings, "sso_session").is_some() || get(settings, "sso_start_url").is_some() {
        return Err(format!(
            "AWS profile \"{}\" uses SSO, which pi cannot read yet; export temporary keys \
             (aws configure export-credentials --format env)",
            profile_name(env)
        ));
    }
    Ok(None)
}

fn json_credentials(body: &str, source: &str) -> Result<(Credentials, i64), String> {
    let v: serde_json::Value = serde_json::from_str(body)
        .map_err(|e| format!("{source}: credentials are not JSON ({e})"))?;
    let s = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
    let (Some(id), Some(secret)) = (s("AccessKeyId"), s("SecretAccessKey")) else {
        return Err(format!(
            "{source}: no AccessKeyId/SecretAccessKey in the answer"
        ));
    };
    let expires = s("Expiration")
        .and_then(|e| parse_iso_ms(&e))
        .map(|ms| ms.div_euclid(1000))
        .unwrap_or(now_secs() + 3600);
    Ok((
        Credentials {
            access_key_id: id,
            secret_access_key: secret,
            session_token: s("SessionToken").or_else(|| s("Token")),
        },
        expires,
    ))
}

/// How long a `credential_process` may take before it is stopped.
const CREDENTIAL_PROCESS_TIMEOUT: Duration = Duration::from_secs(60);
/// Output kept of a `credential_process` (a credentials document is well under 1 KiB).
const CREDENTIAL_PROCESS_MAX_OUTPUT: usize = 1 << 20;

fn credential_process(cmd: &str) -> Result<Credentials, String> {
    credential_process_within(cmd, CREDENTIAL_PROCESS_TIMEOUT)
}

fn credential_process_within(cmd: &str, timeout: Duration) -> Result<Credentials, String> {
    if let Some(c) = TEMPORARY.get(&format!("process:{cmd}")) {
        return Ok(c);
    }
    let out = process::run(
        std::process::Command::new("sh").arg("-c").arg(cmd),
        &process::RunOptions {
            timeout: Some(timeout),
            cancelled: &|| crate::util::shutdown::signal().is_some(),
            max_output: CREDENTIAL_PROCESS_MAX_OUTPUT,
            ..process::RunOptions::default()
        },
    )
    .map_err(|e| format!("credential_process could not start: {e}"))?;
    if out.timed_out {
        return Err(format!(
            "credential_process did not finish within {}s and was stopped: {cmd} \
             (fix the command in the AWS config, or use other credentials)",
            timeout.as_secs_f64()
        ));
    }
    // A shutdown may kill the group before `cancelled` is polled.
    if out.cancelled || crate::util::shutdown::signal().is_some() {
        return Err("credential_process was stopped: pi is shutting down".to_string());
    }
    if !out.status.is_some_and(|s| s.success()) {
        let status = out
            .status
            .map_or("unknown status".to_string(), |s| s.to_string());
        return Err(format!(
            "credential_process failed ({status}): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let (c, expires) =
        json_credentials(&String::from_utf8_lossy(&out.stdout), "credential_process")?;
    TEMPORARY.put(&format!("process:{cmd}"), c.clone(), expires);
    Ok(c)
}

fn container(env: Env) -> Result<Credentials, String> {
    let url = match env("AWS_CONTAINER_CREDENTIALS_FULL_URI") {
        Some(full) if env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI").is_none() => full,
        _ => format!(
            "http://169.254.170.2{}",
            env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI").unwrap_or_default()
        ),
    };
    if let Some(c) = TEMPORARY.get(&format!("container:{url}")) {
        return Ok(c);
    }
    let token = match env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE") {
        Some(f) => Some(
            crate::util::files::read_limited_string(&f, crate::util::files::Limit::CONFIG)
                .map_err(|e| format!("reading AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE {f}: {e}"))?
                .trim()
                .to_string(),
        ),
        None => env("AWS_CONTAINER_AUTHORIZATION_TOKEN"),
    };
    let headers: Vec<(String, String)> = token
        .map(|t| vec![("Authorization".to_string(), t)])
        .unwrap_or_default();
    let (status, body) =
        request("GET", &url, &headers, None).map_err(|e| format!("Container credentials: {e}"))?;
    if !(200..300).contains(&status) {
        return Err(format!("Container credentials: {status} {}", body.trim()));
    }
    let (c, expires) = json_credentials(&body, "Container credentials")?;
    TEMPORARY.put(&format!("container:{url}"), c.clone(), expires);
    Ok(c)
}

/// The text of the first `<tag>…</tag>`, with XML's predefined entities decoded.
fn xml_text(xml: &str, tag: &str) -> Option<String> {
    let start = xml.find(&format!("<{tag}>"))? + tag.len() + 2;
    let end = start + xml[start..].find(&format!("</{tag}>"))?;
    Some(
        xml[start..end]
            .trim()
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&apos;", "'")
            .replace("&amp;", "&"),
    )
}

/// STS `AssumeRoleWithWebIdentity` (an unsigned call: the token is the proof).
fn web_identity(
    token_file: &str,
    role_arn: &str,
    session: Option<&str>,
    env: Env,
) -> Result<Credentials, String> {
    let key = format!("web:{role_arn}:{token_file}");
    if let Some(c) = TEMPORARY.get(&key) {
        return Ok(c);
    }
    let token =
        crate::util::files::read_limited_string(token_file, crate::util::files::Limit::CONFIG)
            .map_err(|e| format!("reading web identity token file {token_file}: {e}"))?;
    let region = env("AWS_REGION")
        .or_else(|| env("AWS_DEFAULT_REGION"))
        .unwrap_or_else(|| "us-east-1".into());
    let url = env("AWS_ENDPOINT_URL_STS")
        .unwrap_or_else(|| format!("https://sts.{region}.amazonaws.com"));
    let session_name = session
        .map(str::to_string)
        .unwrap_or_else(|| format!("pi-session-{}", now_secs()));
    let body = form_encode(&[
        ("Action", "AssumeRoleWithWebIdentity"),
        ("Version", "2011-06-15"),
        ("RoleArn", role_arn),
        ("RoleSessionName", &session_name),
        ("WebIdentityToken", token.trim()),
    ]);
    let headers = vec![(
        "content-type".to_string(),
        "application/x-www-form-urlencoded".to_string(),
    )];
    let (status, xml) = request(
        "POST",
        &format!("{}/", url.trim_end_matches('/')),
        &headers,
        Some(&body),
    )
    .map_err(|e| format!("STS AssumeRoleWithWebIdentity: {e}"))?;
    if !(200..300).contains(&status) {
        let detail = match (xml_text(&xml, "Code"), xml_text(&xml, "Message")) {
            (Some(c), Some(m)) => format!("{c}: {m}"),
            _ => xml.trim().chars().take(300).collect(),
        };
        return Err(format!(
            "STS AssumeRoleWithWebIdentity failed ({status}): {detail}"
        ));
    }
    let (Some(id), Some(secret)) = (
        xml_text(&xml, "AccessKeyId"),
        xml_text(&xml, "SecretAccessKey"),
    ) else {
        return Err("STS AssumeRoleWithWebIdentity: no credentials in the answer".into());
    };
    let c = Credentials {
        access_key_id: id,
        secret_access_key: secret,
        session_token: xml_text(&xml, "SessionToken"),
    };
    let expires = xml_text(&xml, "Expiration")
        .and_then(|e| parse_iso_ms(&e))
        .map(|ms| ms.div_euclid(1000))
        .unwrap_or(now_secs() + 3600);
    TEMPORARY.put(&key, c.clone(), expires);
    Ok(c)
}

#[cfg(test)]
#[path = "../tests/bedrock_credentials.rs"]
mod tests;
