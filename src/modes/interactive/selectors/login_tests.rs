use std::time::{Duration, Instant};

use serde_json::Map;

use super::super::common::test_support::*;
use super::*;

fn options() -> Vec<ProviderOption> {
    let opt = |id: &str, name: &str, kind, status: &str| ProviderOption {
        id: id.into(),
        name: name.into(),
        kind,
        status: status.into(),
    };
    vec![
        opt(
            "anthropic",
            "Anthropic (Claude Pro/Max)",
            AuthKind::OAuth,
            "✓ configured",
        ),
        opt(
            "github-copilot",
            "GitHub Copilot",
            AuthKind::OAuth,
            "• unconfigured",
        ),
        opt(
            "openai",
            "OpenAI",
            AuthKind::ApiKey,
            "✓ env: OPENAI_API_KEY",
        ),
    ]
}

/// Polls until the dialog reports an outcome (the flow runs on another thread).
fn wait_outcome(d: &mut LoginDialog) -> LoginOutcome {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(o) = d.take_outcome() {
            return o;
        }
        assert!(Instant::now() < deadline, "no outcome");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn wait_for(d: &mut LoginDialog, text: &str) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let lines = screen(d, 80);
        if lines.iter().any(|l| l.contains(text)) {
            return lines;
        }
        assert!(Instant::now() < deadline, "{text:?} never shown: {lines:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn picker_filters_and_selects() {
    let mut p = ProviderPicker::new(PickerMode::Login, options(), theme());
    let lines = screen(&mut p, 80);
    assert_eq!(lines[2], " Select provider to configure:");
    assert_eq!(lines[6], " → Anthropic (Claude Pro/Max) ✓ configured");
    assert_eq!(lines[7], "   GitHub Copilot • unconfigured");
    assert_fits(&mut p);
    type_text(&mut p, "openai");
    p.handle_input(&key("enter"));
    match p.take_outcome() {
        Some(ProviderOutcome::Selected(o)) => assert_eq!(o.id, "openai"),
        other => panic!("{other:?}"),
    }
    let mut empty = ProviderPicker::new(PickerMode::Logout, vec![], theme());
    assert!(screen(&mut empty, 80)
        .contains(&"   No providers logged in. Use /login first.".to_string()));
    empty.handle_input(&key("escape"));
    assert_eq!(empty.take_outcome(), Some(ProviderOutcome::Cancelled));
}

#[test]
fn api_key_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let auth = dir.path().join("auth.json");
    let mut d = LoginDialog::api_key("openai", "OpenAI", auth.clone(), theme());
    let lines = screen(&mut d, 80);
    assert_eq!(lines[1], " Login to OpenAI");
    assert_eq!(lines[3], " Enter API key:");
    assert_fits(&mut d);
    d.handle_input(&key("enter"));
    assert_eq!(
        d.take_outcome(),
        Some(LoginOutcome::Failed("API key cannot be empty.".into()))
    );
    assert!(!auth.exists());
    let mut d = LoginDialog::api_key("openai", "OpenAI", auth.clone(), theme());
    type_text(&mut d, " sk-test ");
    d.handle_input(&key("enter"));
    assert_eq!(
        d.take_outcome(),
        Some(LoginOutcome::LoggedIn("openai".into()))
    );
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&auth).unwrap()).unwrap();
    assert_eq!(
        stored["openai"],
        json!({"type": "api_key", "key": "sk-test"})
    );
}

#[test]
fn oauth_flow_runs_on_a_thread_and_stores_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let auth = dir.path().join("auth.json");
    let (mut d, ui) = LoginDialog::oauth("anthropic", "Anthropic", auth.clone(), theme());
    let abort = d.abort_handle();
    let flow = std::thread::spawn(move || {
        ui.on_auth(
            "https://example.test/authorize",
            Some("Log in and paste the code"),
        );
        let code = ui.prompt("Paste the authorization code:", Some("abc#xyz"));
        ui.progress("Exchanging authorization code for tokens...");
        let result = code.map(|code| Credentials {
            refresh: format!("r-{code}"),
            access: "a".into(),
            expires: 1,
            extra: Map::new(),
        });
        assert!(!abort.is_aborted());
        ui.finish(result);
    });
    let lines = wait_for(&mut d, "Paste the authorization code:");
    assert!(
        lines.contains(&" https://example.test/authorize".to_string()),
        "{lines:?}"
    );
    assert!(lines.contains(&" Log in and paste the code".to_string()));
    assert!(lines.contains(&" e.g., abc#xyz".to_string()));
    assert_fits(&mut d);
    type_text(&mut d, "CODE");
    d.handle_input(&key("enter"));
    assert_eq!(
        wait_outcome(&mut d),
        LoginOutcome::LoggedIn("anthropic".into())
    );
    flow.join().unwrap();
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&auth).unwrap()).unwrap();
    assert_eq!(stored["anthropic"]["refresh"], "r-CODE");
    assert_eq!(stored["anthropic"]["type"], "oauth");
}

#[test]
fn cancelling_an_oauth_prompt_aborts_the_flow() {
    let dir = tempfile::tempdir().unwrap();
    let (mut d, ui) = LoginDialog::oauth(
        "anthropic",
        "Anthropic",
        dir.path().join("auth.json"),
        theme(),
    );
    let abort = d.abort_handle();
    let flow = std::thread::spawn(move || {
        let manual = ui.manual_input().expect("manual input channel");
        let answer = ui.prompt("Code:", None);
        assert!(abort.is_aborted());
        drop(manual);
        ui.finish(answer.map(|_| unreachable!()));
    });
    wait_for(&mut d, "Code:");
    assert!(screen(&mut d, 80)
        .iter()
        .any(|l| l.contains("Paste redirect URL below")));
    d.handle_input(&key("escape"));
    assert_eq!(d.take_outcome(), Some(LoginOutcome::Cancelled));
    flow.join().unwrap();
}
