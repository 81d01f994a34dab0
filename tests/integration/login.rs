//! `pi --login <provider>`: API keys read from stdin, an OAuth flow completed with a pasted
//! code against the mock (through `PI_OAUTH_TEST_BASE`), unknown providers refused. Whatever
//! is saved lands in the agent dir's auth.json with mode 0600.

use std::os::unix::fs::PermissionsExt;

use serde_json::Value;

use crate::support::{MockServer, PiCommand, Reply};

fn auth_json(pi: &PiCommand) -> (Value, u32) {
    let path = pi.agent_dir().join("auth.json");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    (
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap(),
        mode,
    )
}

#[test]
fn an_api_key_from_stdin_is_saved() {
    let pi = PiCommand::new()
        .write_agent_file(
            "auth.json",
            r#"{"other":{"type":"api_key","key":"k","x":1}}"#,
        )
        .args(["--login", "openai"])
        .stdin("sk-from-stdin\n");
    let res = pi.run();
    res.assert_code(0).assert_no_panic();
    assert!(
        res.stderr.contains("Paste your API key for openai"),
        "{}",
        res.stderr
    );
    let (auth, mode) = auth_json(&pi);
    assert_eq!(
        auth["openai"],
        serde_json::json!({"type": "api_key", "key": "sk-from-stdin"})
    );
    assert_eq!(auth["other"]["x"], 1);
    assert_eq!(mode, 0o600);
}

#[test]
fn codex_oauth_with_a_pasted_code() {
    let claims = r#"{"https://api.openai.com/auth":{"chatgpt_account_id":"acct-9"}}"#;
    let payload = pi::util::encoding::base64url_encode(claims.as_bytes());
    let access = format!("h.{payload}.s");
    let token =
        serde_json::json!({"access_token": access, "refresh_token": "rt", "expires_in": 60});
    let mock = MockServer::with_replies([Reply::error(200, &token.to_string())]);
    let pi = PiCommand::new()
        .env("PI_OAUTH_TEST_BASE", mock.url())
        .args(["--login", "openai-codex"])
        .stdin("the-code\n");
    let res = pi.run();
    res.assert_code(0).assert_no_panic();
    assert!(
        res.stderr
            .contains(&format!("{}/authorize?response_type=code", mock.url())),
        "{}",
        res.stderr
    );
    let req = mock.single_request();
    assert_eq!((req.path.as_str(), req.api), ("/token", Some("oauth")));
    let form = String::from_utf8_lossy(&req.raw_body).into_owned();
    assert!(form.contains("grant_type=authorization_code"), "{form}");
    assert!(form.contains("code=the-code"), "{form}");
    let (auth, mode) = auth_json(&pi);
    let cred = &auth["openai-codex"];
    assert_eq!(cred["type"], "oauth");
    assert_eq!(cred["access"], access.as_str());
    assert_eq!(cred["refresh"], "rt");
    assert_eq!(cred["accountId"], "acct-9");
    assert!(cred["expires"].as_i64().unwrap() > 0);
    assert_eq!(mode, 0o600);
}

#[test]
fn unknown_providers_and_failed_exchanges_are_errors() {
    let res = PiCommand::new().args(["--login", "nope"]).run();
    res.assert_code(1).assert_no_panic();
    assert!(
        res.stderr.contains("Unknown provider \"nope\""),
        "{}",
        res.stderr
    );
    let mock = MockServer::with_replies([Reply::error(400, r#"{"error":"invalid_grant"}"#)]);
    let pi = PiCommand::new()
        .env("PI_OAUTH_TEST_BASE", mock.url())
        .args(["--login", "anthropic"])
        .stdin("bad-code\n");
    let res = pi.run();
    res.assert_code(1).assert_no_panic();
    assert!(
        res.stderr.contains("Anthropic token exchange failed"),
        "{}",
        res.stderr
    );
    assert!(!pi.agent_dir().join("auth.json").exists());
}
