//! `pi auth …`: credentials from the shell, as pi 1.x has them. `login` and `logout` live in
//! [`super::login`]; this file has the commands other programs call: `check` (prints `ready`,
//! `not_ready` or `invalid`, exit 0/1/2), `print-api-key` and `print-bearer-token` (print the
//! resolved credential, refreshing an OAuth login first). Their options are read with the main
//! command line parser, so `--provider`/`--model` mean what they mean everywhere.

use serde_json::{json, Map, Value};

use crate::resources::model_registry::ModelRegistry;
use crate::resources::oauth;
use crate::util::sort;

const HELP: &str = "Usage:
  pi auth login <provider> [--api-key] [--no-browser]
  pi auth logout <provider>
  pi auth print-api-key [--provider <provider>] [--model <model>]
  pi auth print-bearer-token [--provider <provider>] [--model <model>] [--min-expiry <duration>]
  pi auth check [--provider <provider>] [--model <model>] [--json] [--credentials] [--no-refresh]

Sign in to model providers and out again, print their credentials for other programs, or
check that they are ready. Credentials are stored in ~/.pi/agent/auth.json.

Commands:
  login <provider>        Sign in with an account (or save an API key), then exit
  logout <provider>       Remove stored credentials (environment variables and models.json stay)
  print-api-key           Print the resolved API key
  print-bearer-token      Print a resolved OAuth bearer token (refreshed if it expires soon)
  check                   Print ready, not_ready or invalid; exit with 0, 1 or 2

Options of print-api-key, print-bearer-token and check (one of the two is required):
  --provider <provider>   Resolve the credentials of a provider
  --model <model>         Resolve the credentials of a model's provider

Options of login:
  --api-key               Save an API key instead of signing in with an account
  --no-browser            Do not open a browser (paste the code, or use a device code)

Other options:
  --min-expiry <duration> Least token lifetime for print-bearer-token (default 30m), e.g. 1h
  --json                  Print the check result as JSON
  --credentials           Also print the credential when check finds it ready
  --no-refresh            Do not refresh an expired OAuth login during check
";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Check,
    ApiKey,
    BearerToken,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Check => "auth check",
            Kind::ApiKey => "auth print-api-key",
            Kind::BearerToken => "auth print-bearer-token",
        }
    }

    fn usage(self) -> &'static str {
        match self {
            Kind::Check => {
                "pi auth check --provider <provider> [--json] [--credentials] [--no-refresh]"
            }
            Kind::ApiKey => "pi auth print-api-key --provider <provider> [--model <model>]",
            Kind::BearerToken => "pi auth print-bearer-token --provider <provider> [--model <model>] [--min-expiry <duration>]",
        }
    }

    /// The exit code of a failed command.
    fn failure(self) -> i32 {
        if self == Kind::Check {
            2
        } else {
            1
        }
    }
}

#[derive(Debug, Default)]
struct Options {
    json: bool,
    credentials: bool,
    no_refresh: bool,
    min_expiry_ms: Option<i64>,
    rest: Vec<String>,
}

/// `pi auth <args>`: returns the exit code.
pub fn run(args: &[String]) -> i32 {
    let first = args.first().map(String::as_str);
    if matches!(first, None | Some("help")) || args.iter().any(|a| a == "--help" || a == "-h") {
        print!("{HELP}");
        return 0;
    }
    let rest: Vec<String> = args[1..]
        .iter()
        .filter(|a| *a != "--offline")
        .cloned()
        .collect();
    let kind = match first {
        Some("login") => return super::login::auth_login(&rest),
        Some("logout") => return super::login::auth_logout(&rest),
        Some("check") => Kind::Check,
        Some("print-api-key") => Kind::ApiKey,
        Some("print-bearer-token") => Kind::BearerToken,
        other => {
            eprintln!(
                "Error: Unknown auth command \"{}\". Use \"pi auth login\", \"pi auth logout\", \"pi auth print-api-key\", \"pi auth print-bearer-token\", or \"pi auth check\".",
                other.unwrap_or("")
            );
            return 1;
        }
    };
    let options = match parse_options(kind, &args[1..]) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("Error: {e}");
            return 1;
        }
    };
    let parsed = super::args::parse(&options.rest);
    if let Some((flag, _)) = parsed.unknown_flags.first() {
        eprintln!("Unknown option --{flag} for \"{}\".", kind.name());
        eprintln!("Use \"pi --help\" or \"{}\".", kind.usage());
        return 1;
    }
    let result = if parsed.errors.is_empty() {
        match kind {
            Kind::Check => check(&parsed, &options),
            _ => print_credential(kind, &parsed, &options),
        }
    } else {
        Err(parsed.errors.join("\n"))
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("Error: {e}");
            kind.failure()
        }
    }
}

/// `30m`, `1h`, `90s`, `500ms`.
fn parse_duration_ms(v: &str) -> Option<i64> {
    let digits = v.find(|c: char| !c.is_ascii_digit())?;
    let (amount, unit) = v.split_at(digits);
    let amount: i64 = amount.parse().ok()?;
    let unit_ms = match unit.to_ascii_lowercase().as_str() {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return None,
    };
    amount.checked_mul(unit_ms)
}

/// Takes out the options only `auth` commands have; the rest goes to the main parser.
fn parse_options(kind: Kind, args: &[String]) -> Result<Options, String> {
    let mut o = Options::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--min-expiry" => {
                if kind != Kind::BearerToken {
                    return Err("--min-expiry is only supported by print-bearer-token".into());
                }
                o.min_expiry_ms = Some(
                    it.next()
                        .and_then(|v| parse_duration_ms(v))
                        .ok_or("--min-expiry must use a duration such as 30m or 1h")?,
                );
            }
            "--json" | "--credentials" | "--no-refresh" => {
                if kind != Kind::Check {
                    return Err(format!("{arg} is only supported by auth check"));
                }
                match arg.as_str() {
                    "--json" => o.json = true,
                    "--credentials" => o.credentials = true,
                    _ => o.no_refresh = true,
                }
            }
            _ => o.rest.push(arg.clone()),
        }
    }
    Ok(o)
}

/// `--provider` and `--model`, trimmed, and nothing else that would be ignored.
fn requested(
    kind: Kind,
    args: &super::args::Args,
) -> Result<(Option<String>, Option<String>), String> {
    let clean = |v: &Option<String>| {
        v.as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let (provider, model) = (clean(&args.provider), clean(&args.model));
    if args.api_key.is_some() || !args.messages.is_empty() || !args.file_args.is_empty() {
        return Err("Auth commands only accept --provider and --model".into());
    }
    if provider.is_none() && model.is_none() {
        return Err(match kind {
            Kind::Check => "Auth checks require --provider <provider> or --model <model>",
            _ => "Credential printing requires --provider <provider> or --model <model>",
        }
        .into());
    }
    Ok((provider, model))
}

fn registry() -> ModelRegistry {
    ModelRegistry::load(&crate::resources::agent_dir())
}

fn provider_exists(registry: &ModelRegistry, provider: &str) -> bool {
    registry.entries().iter().any(|e| e.provider() == provider)
        || oauth::provider(provider).is_some()
        || crate::ai::catalog::is_builtin_provider(provider)
}

fn auth_path() -> std::path::PathBuf {
    crate::resources::agent_dir().join("auth.json")
}

/// The credential a request to `provider` would use (`model` for its headers), refreshing an
/// OAuth login with less than `min_valid_ms` left (unless `refresh` is off).
fn credential(
    registry: &ModelRegistry,
    provider: &str,
    refresh: bool,
    min_valid_ms: i64,
) -> Result<Option<String>, String> {
    if registry.auth().is_oauth(provider) {
        let stored = registry
            .auth()
            .get(provider)
            .and_then(oauth::Credentials::from_json);
        let (Some(flow), Some(stored)) = (super::login::oauth_flow(provider), stored) else {
            return Ok(None);
        };
        if !refresh {
            return Ok(Some(stored.access));
        }
        let fresh = oauth::refresh::fresh_credentials_within(&auth_path(), &*flow, min_valid_ms)?;
        return Ok(fresh.map(|c| flow.api_key(&c)));
    }
    let model = registry
        .entries()
        .iter()
        .find(|e| e.provider() == provider)
        .map(|e| e.to_model());
    match model {
        Some(model) => Ok(registry.request_auth(&model)?.api_key),
        None => Ok(registry.api_key_for(provider)),
    }
}

fn check(args: &super::args::Args, o: &Options) -> Result<i32, String> {
    let (provider, model) = requested(Kind::Check, args)?;
    let registry = registry();
    let invalid = |p: &str| json!({"status": "invalid", "provider": p, "reason": "invalid_state"});
    let provider = match &model {
        Some(m) => match registry.resolve_cli_model(provider.as_deref(), m) {
            Ok(r) => r.model.provider,
            Err(_) => return Ok(report(o, invalid(provider.as_deref().unwrap_or(m)), None)),
        },
        None => provider.unwrap_or_default(),
    };
    let result = if registry.load_error().is_some() {
        invalid(&provider)
    } else if !provider_exists(&registry, &provider) {
        json!({"status": "not_ready", "provider": provider, "reason": "provider_not_found"})
    } else if !registry.has_configured_auth(&provider) {
        json!({"status": "not_ready", "provider": provider, "reason": "credentials_not_configured"})
    } else {
        match credential(&registry, &provider, !o.no_refresh, 0) {
            Err(_) => invalid(&provider),
            Ok(None) if !o.no_refresh => json!({"status": "not_ready", "provider": provider,
                "reason": "credentials_not_configured"}),
            Ok(found) => {
                let auth_type = if registry.auth().is_oauth(&provider) {
                    "oauth"
                } else {
                    "api_key"
                };
                let ready = json!({"status": "ready", "provider": provider, "authType": auth_type});
                if !o.credentials {
                    return Ok(report(o, ready, None));
                }
                return Ok(match found {
                    Some(c) => report(o, ready, Some(c)),
                    None => report(
                        o,
                        json!({"status": "not_ready", "provider": provider,
                            "reason": "credential_not_available"}),
                        None,
                    ),
                });
            }
        }
    };
    Ok(report(o, result, None))
}

/// Prints a check result (with the credential when asked) and returns its exit code.
fn report(o: &Options, result: Value, credential: Option<String>) -> i32 {
    let status = result["status"].as_str().unwrap_or("invalid").to_string();
    if o.json {
        let mut out: Map<String, Value> = result.as_object().cloned().unwrap_or_default();
        if let Some(c) = &credential {
            out.insert("credentials".into(), json!(c));
        }
        println!("{}", Value::Object(out));
    } else {
        println!("{}", credential.unwrap_or_else(|| status.clone()));
    }
    match status.as_str() {
        "ready" => 0,
        "not_ready" => 1,
        _ => 2,
    }
}

/// `print-api-key` / `print-bearer-token`.
fn print_credential(kind: Kind, args: &super::args::Args, o: &Options) -> Result<i32, String> {
    let (provider, model) = requested(kind, args)?;
    let registry = registry();
    let stored_type = |p: &str| -> Option<String> {
        Some(registry.auth().get(p)?.get("type")?.as_str()?.to_string())
    };
    let candidates: Vec<String> = match (&provider, &model) {
        (Some(p), model) => {
            if !provider_exists(&registry, p) {
                return Err(format!(
                    "Unknown provider \"{p}\". Use --list-models to see available providers."
                ));
            }
            if let Some(m) = model {
                registry.resolve_cli_model(Some(p), m)?;
            }
            vec![p.clone()]
        }
        (None, Some(m)) => {
            let mut stored = registry.auth().list();
            sort::sort(&mut stored);
            let found: Vec<String> = stored
                .into_iter()
                .filter(|p| {
                    registry
                        .resolve_cli_model(Some(p), m)
                        .is_ok_and(|r| r.warning.is_none())
                })
                .collect();
            if found.is_empty() {
                return Err(format!(
                    "Model \"{m}\" not found. Use --list-models to see available models."
                ));
            }
            found
        }
        (None, None) => unreachable!("requested() demands one"),
    };
    let min_valid = o.min_expiry_ms.unwrap_or(30 * 60_000);
    let mut values = Vec::new();
    for p in &candidates {
        let oauth = stored_type(p).as_deref() == Some("oauth");
        if (kind == Kind::ApiKey && oauth) || (kind == Kind::BearerToken && !oauth) {
            continue;
        }
        let margin = if kind == Kind::BearerToken {
            min_valid
        } else {
            0
        };
        if let Some(v) = credential(&registry, p, true, margin)? {
            values.push((p.clone(), v));
        }
    }
    match values.as_slice() {
        [(_, v)] => {
            println!("{v}");
            Ok(0)
        }
        [] => {
            let first = &candidates[0];
            let oauth = stored_type(first).as_deref() == Some("oauth");
            Err(match (provider.is_some(), kind) {
                (true, Kind::ApiKey) if oauth => {
                    format!("Provider \"{first}\" is configured with OAuth, not an API key")
                }
                (true, Kind::BearerToken) if !oauth => {
                    format!("Provider \"{first}\" is not configured with an OAuth bearer token")
                }
                (_, Kind::BearerToken) => "No usable OAuth bearer token is configured".into(),
                _ => "No usable API key is configured".into(),
            })
        }
        many => Err(format!(
            "Multiple configured providers matched ({}). Specify --provider.",
            many.iter()
                .map(|(p, _)| p.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ms("30m"), Some(1_800_000));
        assert_eq!(parse_duration_ms("1H"), Some(3_600_000));
        assert_eq!(parse_duration_ms("90s"), Some(90_000));
        assert_eq!(parse_duration_ms("500ms"), Some(500));
        for bad in ["", "m", "3x", "1.5h", "-1m", "30 m"] {
            assert_eq!(parse_duration_ms(bad), None, "{bad}");
        }
    }

    #[test]
    fn options_belong_to_their_command() {
        let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        assert_eq!(
            parse_options(Kind::ApiKey, &s(&["--min-expiry", "3m"])).unwrap_err(),
            "--min-expiry is only supported by print-bearer-token"
        );
        assert_eq!(
            parse_options(Kind::ApiKey, &s(&["--json"])).unwrap_err(),
            "--json is only supported by auth check"
        );
        let o = parse_options(
            Kind::Check,
            &s(&["--json", "--provider", "x", "--no-refresh"]),
        )
        .unwrap();
        assert!(o.json && o.no_refresh && !o.credentials);
        assert_eq!(o.rest, ["--provider", "x"]);
        let o = parse_options(Kind::BearerToken, &s(&["--min-expiry", "1h"])).unwrap();
        assert_eq!(o.min_expiry_ms, Some(3_600_000));
    }
}
