//! Diagnostics: missing keys, unknown models, broken config, missing files, broken streams.
//! Every failure exits 1 with a readable message on stderr and never panics.

use std::time::Duration;

use crate::support::{
    models_json_without_key, sse_malformed, MockServer, PiCommand, Reply, NO_RETRY_SETTINGS,
};

#[test]
fn version_prints_the_pi_version_we_follow_and_a_person_sees_ours() {
    let out = PiCommand::new().arg("--version").run();
    out.assert_code(0);
    // On stdout even when redirected (stdin is /dev/null here), as pi 1.x prints it: programs
    // (pi-acp's update notice) read the pi release whose behaviour we follow, alone.
    assert_eq!(out.stdout, "1.6.0\n");
    assert_eq!(out.stderr, "");
    // At a terminal, ours too.
    // The command is kept until pi is done: dropping it removes pi's working directory.
    let at_terminal = PiCommand::new().arg("--version");
    let mut child = crate::support::pty::PtyChild::spawn(at_terminal.command(), 80, 24);
    let status = child.wait_exit(std::time::Duration::from_secs(10));
    assert_eq!(status.code(), Some(0), "{}", child.screen());
    let expected = format!("1.6.0 (pi in Rust {})", env!("CARGO_PKG_VERSION"));
    assert!(child.screen().contains(&expected), "{}", child.screen());
}

#[test]
fn custom_provider_without_key_is_an_error() {
    let api = "openai-completions";
    let mock = MockServer::start();
    let out = PiCommand::new()
        .write_agent_file("models.json", &models_json_without_key(api, mock.port()))
        .args(["-p", "--model", "mock/mock-model", "hello"])
        .run();
    out.assert_code(1).assert_no_panic();
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr.contains("mock"),
        "names the provider: {}",
        out.stderr
    );
    assert!(
        out.stderr.contains("auth.json")
            || out.stderr.contains("\"apiKey\" is required")
            || out.stderr.contains("API_KEY")
            || out.stderr.contains("--api-key"),
        "says how to add a key: {}",
        out.stderr
    );
    assert_eq!(mock.request_count(), 0);
}

#[test]
fn builtin_provider_without_key_is_an_error() {
    let out = PiCommand::new()
        .args(["-p", "--model", "anthropic/claude-sonnet-4-5", "hello"])
        .run();
    out.assert_code(1).assert_no_panic();
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr.contains("anthropic"),
        "names the provider: {}",
        out.stderr
    );
    assert!(
        out.stderr.contains("ANTHROPIC_API_KEY") || out.stderr.contains("auth.json"),
        "says how to add a key: {}",
        out.stderr
    );
}

#[test]
fn unknown_model_is_an_error() {
    let out = PiCommand::new()
        .args(["-p", "--model", "nope-xyz", "hello"])
        .run();
    out.assert_code(1).assert_no_panic();
    assert!(
        out.stderr.contains("Model \"nope-xyz\" not found"),
        "stderr: {}",
        out.stderr
    );
}

#[test]
fn malformed_models_json_names_file_and_line() {
    // line 3 lacks the comma between the two providers
    let broken = "{\n  \"providers\": {\n    \"mock\": {\"baseUrl\": \"http://127.0.0.1:9/v1\"} \"other\": {}\n  }\n}\n";
    let pi = PiCommand::new()
        .write_agent_file("models.json", broken)
        .args(["-p", "--model", "mock/mock-model", "hello"]);
    let path = pi.agent_dir().join("models.json");
    let out = pi.run();
    out.assert_code(1).assert_no_panic();
    assert!(
        out.stderr.contains(path.to_str().unwrap()),
        "names the file: {}",
        out.stderr
    );
    assert!(
        out.stderr.contains("line 3"),
        "names the line: {}",
        out.stderr
    );
}

#[test]
fn missing_at_file_is_an_error() {
    let api = "openai-completions";
    let mock = MockServer::start();
    let out = PiCommand::for_mock(api, &mock)
        .args(["-p", "@does-not-exist.txt", "hello"])
        .run();
    out.assert_code(1).assert_no_panic();
    assert!(
        out.stderr.contains("File not found"),
        "stderr: {}",
        out.stderr
    );
    assert_eq!(mock.request_count(), 0);
}

fn malformed_chunk_fails_cleanly(api: &str) {
    let mock =
        MockServer::with_replies([Reply::sse(sse_malformed(api, "Hello from the mock model."))]);
    let out = PiCommand::for_mock(api, &mock).args(["-p", "hello"]).run();
    out.assert_code(1).assert_no_panic();
    let err = out.stderr.to_lowercase();
    assert!(
        ["json", "parse", "invalid", "malformed", "unexpected"]
            .iter()
            .any(|w| err.contains(w)),
        "a clear error: {}",
        out.stderr
    );
}

#[test]
fn malformed_chunk_anthropic() {
    malformed_chunk_fails_cleanly("anthropic-messages");
}

#[test]
fn malformed_chunk_openai_completions() {
    malformed_chunk_fails_cleanly("openai-completions");
}

#[test]
fn malformed_chunk_openai_responses() {
    malformed_chunk_fails_cleanly("openai-responses");
}

#[test]
fn malformed_chunk_google() {
    malformed_chunk_fails_cleanly("google-generative-ai");
}

#[test]
fn stalled_stream_times_out() {
    let api = "openai-completions";
    let mock = MockServer::with_replies([
        Reply::text(api, "this answer stalls midway").stall_after(2, 20_000)
    ]);
    let out = PiCommand::for_mock(api, &mock)
        .write_agent_file("settings.json", NO_RETRY_SETTINGS)
        .env("PI_STREAM_IDLE_TIMEOUT_MS", "300")
        .args(["-p", "hello"])
        .run();
    out.assert_code(1).assert_no_panic();
    assert!(
        out.elapsed < Duration::from_secs(5),
        "took {:?}",
        out.elapsed
    );
    assert!(
        out.stderr.to_lowercase().contains("timed out"),
        "stderr: {}",
        out.stderr
    );
    assert_eq!(mock.request_count(), 1, "retries are disabled");
}

/// pi 1.6.0's `httpIdleTimeoutMs` in settings.json sets the limit a silent stream gets.
#[test]
fn the_idle_timeout_comes_from_settings() {
    let api = "openai-completions";
    let mock = MockServer::with_replies([
        Reply::text(api, "this answer stalls midway").stall_after(2, 20_000)
    ]);
    let out = PiCommand::for_mock(api, &mock)
        .write_agent_file(
            "settings.json",
            r#"{"retry":{"enabled":false},"httpIdleTimeoutMs":"300"}"#,
        )
        .args(["-p", "hello"])
        .run();
    out.assert_code(1).assert_no_panic();
    assert!(
        out.stderr.contains("no data from the server for 0.3 s")
            && out.stderr.contains("httpIdleTimeoutMs"),
        "stderr: {}",
        out.stderr
    );
}

#[test]
fn with_no_key_a_local_openai_compatible_server_is_used() {
    let api = "openai-completions";
    let mock = MockServer::with_replies([Reply::text(api, "hello from the local model")]);
    let out = PiCommand::new()
        .env("PI_LOCAL_SERVER_PORTS", format!("1,{}", mock.port()))
        .args(["-p", "hi"])
        .run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "hello from the local model\n");
    assert!(
        out.stderr.contains("using the local server at"),
        "{}",
        out.stderr
    );
    let reqs = mock.requests();
    assert!(reqs[0].path.ends_with("/v1/models"));
    let chat = reqs.iter().find(|r| r.path.ends_with("/chat/completions"));
    assert_eq!(chat.expect("a chat request").body["model"], "mock-model");
}

#[test]
fn with_no_key_and_no_local_server_the_error_says_how_to_add_one() {
    let out = PiCommand::new()
        .env("PI_LOCAL_SERVER_PORTS", "1")
        .args(["-p", "hi"])
        .run();
    out.assert_code(1).assert_no_panic();
    assert_eq!(out.stdout, "");
    assert!(out.stderr.contains("No API key found"), "{}", out.stderr);
}
