//! Command-line surface: --help, --list-models, unknown flags, system prompt flags and tool
//! set flags as the model sees them.

use crate::support::{MockServer, PiCommand, Reply};

const API: &str = "openai-completions";

#[test]
fn help_lists_the_flags_and_unknown_flags_are_errors() {
    let out = PiCommand::new().args(["--help"]).run();
    out.assert_code(0);
    let text = format!("{}{}", out.stdout, out.stderr);
    for flag in [
        "--model <pattern>",
        "--print, -p",
        "--no-tools, -nt",
        "--list-models [search]",
        "--approve",
    ] {
        assert!(text.contains(flag), "--help mentions {flag}");
    }
    let out = PiCommand::new().args(["-x"]).run();
    out.assert_code(1);
    assert!(
        out.stderr.contains("Error: Unknown option: -x"),
        "{}",
        out.stderr
    );
    let out = PiCommand::new().args(["--frobnicate", "-p", "hi"]).run();
    out.assert_code(1);
    assert!(
        out.stderr.contains("Unknown option: --frobnicate"),
        "{}",
        out.stderr
    );
}

#[test]
fn list_models_shows_configured_models_with_pis_columns() {
    let mock = MockServer::start();
    let pi = PiCommand::for_mock(API, &mock);
    let out = pi.again().args(["--list-models"]).run();
    out.assert_code(0);
    let text = format!("{}{}", out.stdout, out.stderr);
    let header = text.lines().next().unwrap_or_default();
    for col in [
        "provider", "model", "context", "max-out", "thinking", "images",
    ] {
        assert!(header.contains(col), "{header}");
    }
    assert!(
        text.contains("mock") && text.contains("mock-model") && text.contains("128K"),
        "{text}"
    );
    let filtered = pi
        .again()
        .args(["--list-models", "nothing-like-this"])
        .run();
    assert!(!format!("{}{}", filtered.stdout, filtered.stderr).contains("mock-model"));
    assert_eq!(mock.request_count(), 0);
}

#[test]
fn system_prompt_flags_and_tool_sets_reach_the_request() {
    let mock = MockServer::with_replies([Reply::text(API, "a"), Reply::text(API, "b")]);
    PiCommand::for_mock(API, &mock)
        .args([
            "-p",
            "--system-prompt",
            "You are TESTBOT.",
            "--append-system-prompt",
            "EXTRA RULE",
            "--no-tools",
            "hi",
        ])
        .run()
        .assert_code(0);
    let body = &mock.requests()[0].body;
    let system = body["messages"][0]["content"].as_str().unwrap_or_default();
    assert!(system.starts_with("You are TESTBOT."), "{system}");
    assert!(
        system.contains("EXTRA RULE") && system.contains("Current working directory:"),
        "{system}"
    );
    assert!(
        body.get("tools").is_none() || body["tools"] == serde_json::json!([]),
        "no tools: {body}"
    );

    let out = PiCommand::for_mock(API, &mock)
        .args(["-p", "--thinking", "enormous", "hi"])
        .run();
    out.assert_code(0);
    assert!(
        out.stderr.contains("Invalid thinking level \"enormous\""),
        "{}",
        out.stderr
    );
    let tools: Vec<String> = mock.requests()[1].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        tools,
        ["read", "bash", "edit", "write"],
        "pi's default tool set"
    );
}
