//! `pi auth …` (pi 1.x): `check`, `print-api-key`, `print-bearer-token` (refreshing an OAuth
//! login against the mock through `PI_OAUTH_TEST_BASE`), `logout`, and `login` (which needs a
//! terminal: driven on a pty).

use std::time::Duration;

use serde_json::{json, Value};

use crate::support::pty::PtyChild;
use crate::support::{MockServer, PiCommand, Reply};

const API: &str = "openai-completions";

fn auth_json(pi: &PiCommand) -> Value {
    let text = std::fs::read_to_string(pi.agent_dir().join("auth.json")).unwrap_or_default();
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

#[test]
fn help_and_unknown_commands() {
    for args in [
        &["auth"][..],
        &["auth", "help"],
        &["auth", "check", "--help"],
    ] {
        let out = PiCommand::new().args(args.iter().copied()).run();
        out.assert_code(0);
        assert!(
            out.stdout.contains("pi auth login <provider>"),
            "{}",
            out.stdout
        );
    }
    let out = PiCommand::new().args(["auth", "frob"]).run();
    out.assert_code(1);
    assert!(
        out.stderr.contains("Error: Unknown auth command \"frob\"."),
        "{}",
        out.stderr
    );
}

#[test]
fn check_reports_ready_not_ready_and_invalid() {
    let mock = MockServer::start();
    let pi = PiCommand::for_mock(API, &mock);
    let run = |args: &[&str]| {
        pi.again()
            .arg("auth")
            .arg("check")
            .args(args.iter().copied())
            .run()
    };
    let out = run(&["--provider", "mock"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "ready\n");
    let out = run(&["--provider", "mock", "--json", "--credentials"]);
    out.assert_code(0);
    let v: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(
        v,
        json!({"status": "ready", "provider": "mock", "authType": "api_key", "credentials": "test-key"})
    );
    let out = run(&["--model", "mock-model", "--credentials"]);
    assert_eq!((out.code, out.stdout.as_str()), (Some(0), "test-key\n"));
    let out = run(&["--provider", "openai", "--json"]);
    out.assert_code(1);
    let v: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(
        v,
        json!({"status": "not_ready", "provider": "openai", "reason": "credentials_not_configured"})
    );
    let out = run(&["--provider", "nope"]);
    assert_eq!((out.code, out.stdout.as_str()), (Some(1), "not_ready\n"));
    let out = run(&["--model", "no-such-model", "--json"]);
    out.assert_code(2);
    let v: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(
        v,
        json!({"status": "invalid", "provider": "no-such-model", "reason": "invalid_state"})
    );
    let out = run(&[]);
    out.assert_code(2);
    assert!(out
        .stderr
        .contains("Error: Auth checks require --provider <provider> or --model <model>"));
    let out = run(&["--provider", "mock", "hi"]);
    out.assert_code(2);
    assert!(out
        .stderr
        .contains("Auth commands only accept --provider and --model"));
    let out = run(&["--provider", "mock", "--frob"]);
    out.assert_code(1);
    assert!(
        out.stderr
            .contains("Unknown option --frob for \"auth check\"."),
        "{}",
        out.stderr
    );
    assert_eq!(mock.request_count(), 0);
}

#[test]
fn print_api_key_resolves_what_a_request_would_use() {
    let pi = PiCommand::new()
        .write_agent_file(
            "auth.json",
            r#"{"openai":{"type":"api_key","key":"sk-stored"},
                "anthropic":{"type":"oauth","access":"at","refresh":"rt","expires":9999999999999}}"#,
        )
        .env("GROQ_API_KEY", "gsk-env");
    let run = |args: &[&str]| pi.again().arg("auth").args(args.iter().copied()).run();
    let out = run(&["print-api-key", "--provider", "openai"]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (Some(0), "sk-stored\n"),
        "{}",
        out.stderr
    );
    let out = run(&["print-api-key", "--provider", "groq"]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (Some(0), "gsk-env\n"),
        "{}",
        out.stderr
    );
    for (args, error) in [
        (
            &["print-api-key", "--provider", "anthropic"][..],
            "Error: Provider \"anthropic\" is configured with OAuth, not an API key",
        ),
        (
            &["print-bearer-token", "--provider", "openai"],
            "Error: Provider \"openai\" is not configured with an OAuth bearer token",
        ),
        (
            &["print-api-key", "--provider", "nope"],
            "Error: Unknown provider \"nope\". Use --list-models to see available providers.",
        ),
        (
            &["print-api-key", "--provider", "mistral"],
            "Error: No usable API key is configured",
        ),
        (
            &["print-api-key"],
            "Error: Credential printing requires --provider <provider> or --model <model>",
        ),
        (
            &[
                "print-api-key",
                "--provider",
                "openai",
                "--min-expiry",
                "1h",
            ],
            "Error: --min-expiry is only supported by print-bearer-token",
        ),
        (
            &[
                "print-bearer-token",
                "--provider",
                "anthropic",
                "--min-expiry",
                "soon",
            ],
            "Error: --min-expiry must use a duration such as 30m or 1h",
        ),
    ] {
        let out = run(args);
        out.assert_code(1);
        assert!(out.stderr.contains(error), "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty());
    }
    let out = run(&["print-bearer-token", "--provider", "anthropic"]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (Some(0), "at\n"),
        "{}",
        out.stderr
    );
}

/// A token with less lifetime left than `--min-expiry` (default 30 min) is refreshed first and
/// the refreshed login is saved.
#[test]
fn print_bearer_token_refreshes_a_token_about_to_expire() {
    let token = json!({"access_token": "fresh", "refresh_token": "rt2", "expires_in": 7200});
    let mock = MockServer::with_replies([Reply::error(200, &token.to_string())]);
    let soon = now_ms() + 10 * 60_000;
    let pi = PiCommand::new()
        .env("PI_OFFLINE", "")
        .env("PI_OAUTH_TEST_BASE", mock.url())
        .write_agent_file(
            "auth.json",
            &json!({"anthropic": {"type": "oauth", "access": "old", "refresh": "rt",
                "expires": soon, "keep": 1}})
            .to_string(),
        );
    let out = pi
        .again()
        .args([
            "auth",
            "print-bearer-token",
            "--provider",
            "anthropic",
            "--min-expiry",
            "5m",
        ])
        .run();
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (Some(0), "old\n"),
        "{}",
        out.stderr
    );
    assert_eq!(mock.request_count(), 0);
    let out = pi
        .again()
        .args(["auth", "print-bearer-token", "--model", "claude-sonnet-4-5"])
        .run();
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (Some(0), "fresh\n"),
        "{}",
        out.stderr
    );
    assert_eq!(mock.single_request().path, "/token");
    let saved = auth_json(&pi);
    assert_eq!(saved["anthropic"]["access"], "fresh");
    assert_eq!(saved["anthropic"]["keep"], 1);
}

#[test]
fn logout_removes_what_was_stored() {
    let pi = PiCommand::new().write_agent_file(
        "auth.json",
        r#"{"openai":{"type":"api_key","key":"k"},
            "anthropic":{"type":"oauth","access":"a","refresh":"r","expires":1},"other":{"x":1}}"#,
    );
    let run = |args: &[&str]| {
        pi.again()
            .args(["auth", "logout"])
            .args(args.iter().copied())
            .run()
    };
    let out = run(&["openai"]);
    out.assert_code(0);
    assert_eq!(
        out.stdout,
        "Removed stored API key for OpenAI. Environment variables and models.json config are unchanged.\n"
    );
    let out = run(&["anthropic"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "Logged out of Anthropic.\n");
    assert_eq!(auth_json(&pi), json!({"other": {"x": 1}}));
    let out = run(&["openai"]);
    out.assert_code(0);
    assert!(
        out.stdout.starts_with("No stored credentials for OpenAI."),
        "{}",
        out.stdout
    );
    let out = run(&["nope"]);
    out.assert_code(1);
    assert_eq!(
        out.stderr,
        "Unknown provider \"nope\".\nStored credentials: other\n"
    );
    let out = run(&[]);
    out.assert_code(1);
    assert_eq!(out.stderr, "Usage: pi auth logout <provider>\n");
}

#[test]
fn login_needs_a_terminal_and_saves_an_api_key_typed_there() {
    let pi = PiCommand::new();
    for (args, error) in [
        (&["openai"][..], "\"pi auth login <provider> [--api-key] [--no-browser]\" requires an interactive terminal"),
        (&[], "Usage: pi auth login <provider> [--api-key] [--no-browser]"),
        (&["openai", "--api-key", "--no-browser"], "--no-browser only applies to account sign-in; omit it with --api-key."),
        (&["nope"], "Unknown provider \"nope\".\nProviders: "),
    ] {
        let out = pi.again().args(["auth", "login"]).args(args.iter().copied()).run();
        out.assert_code(1);
        assert!(out.stderr.contains(error), "{args:?}: {}", out.stderr);
    }
    let mut child = PtyChild::spawn(
        pi.again().args(["auth", "login", "openai"]).command(),
        100,
        20,
    );
    child.wait_for("Paste your API key for openai", Duration::from_secs(10));
    child.send("sk-typed\r");
    let status = child.wait_exit(Duration::from_secs(10));
    assert!(status.success(), "{}", child.screen());
    assert!(
        !child.screen().contains("sk-typed"),
        "the key is not echoed: {}",
        child.screen()
    );
    assert!(
        child
            .screen()
            .contains("Saved API key for OpenAI. Credentials saved to"),
        "{}",
        child.screen()
    );
    assert_eq!(
        auth_json(&pi)["openai"],
        json!({"type": "api_key", "key": "sk-typed"})
    );
    // An account-only provider has no API key login.
    let mut child = PtyChild::spawn(
        pi.again()
            .args(["auth", "login", "openai-codex", "--api-key"])
            .command(),
        100,
        20,
    );
    let status = child.wait_exit(Duration::from_secs(10));
    assert_eq!(status.code(), Some(1));
    assert!(
        child
            .screen()
            .contains("has no API key login. Omit --api-key to sign in."),
        "{}",
        child.screen()
    );
}
