//! Catalog models of the cloud providers (`amazon-bedrock`, `google-vertex`): they resolve with
//! `--model provider/id`, say which credentials are missing, and a Bedrock run streams from the
//! mock through the SDK's endpoint override (`AWS_ENDPOINT_URL_BEDROCK_RUNTIME`).

use pi::ai::providers::bedrock::eventstream::encode_event;

use crate::support::{MockServer, PiCommand, Reply, NO_RETRY_SETTINGS};

#[test]
fn bedrock_without_credentials_names_the_aws_options() {
    let out = PiCommand::new()
        .args([
            "-p",
            "--model",
            "amazon-bedrock/us.anthropic.claude-opus-4-6-v1",
            "hi",
        ])
        .run();
    out.assert_code(1).assert_no_panic();
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr.contains(
            "No AWS credentials found for amazon-bedrock: set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, or AWS_BEARER_TOKEN_BEDROCK"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn vertex_without_credentials_names_the_google_options() {
    let out = PiCommand::new()
        .args(["-p", "--model", "google-vertex/gemini-2.5-pro", "hi"])
        .run();
    out.assert_code(1).assert_no_panic();
    assert!(
        out.stderr
            .contains("No Google Cloud credentials found for google-vertex"),
        "{}",
        out.stderr
    );
}

#[test]
fn bedrock_streams_from_the_endpoint_override_with_signed_requests() {
    let mut body = Vec::new();
    for (event, json) in [
        ("messageStart", r#"{"role":"assistant"}"#),
        (
            "contentBlockDelta",
            r#"{"contentBlockIndex":0,"delta":{"text":"hello from bedrock"}}"#,
        ),
        ("contentBlockStop", r#"{"contentBlockIndex":0}"#),
        ("messageStop", r#"{"stopReason":"end_turn"}"#),
        (
            "metadata",
            r#"{"usage":{"inputTokens":3,"outputTokens":4,"totalTokens":7}}"#,
        ),
    ] {
        body.extend(encode_event(event, json));
    }
    let mock = MockServer::with_replies([Reply::sse(body)]);
    let out = PiCommand::new()
        .write_agent_file("settings.json", NO_RETRY_SETTINGS)
        .env("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
        .env("AWS_SECRET_ACCESS_KEY", "secret")
        .env("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", mock.url())
        .args([
            "-p",
            "--model",
            "amazon-bedrock/us.anthropic.claude-opus-4-6-v1",
            "hi",
        ])
        .run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "hello from bedrock\n");
    let req = mock.single_request();
    assert_eq!(
        req.path,
        "/model/us.anthropic.claude-opus-4-6-v1/converse-stream"
    );
    let auth = req.header("authorization").unwrap_or_default();
    assert!(
        auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
            && auth.contains("/us-east-1/bedrock/aws4_request"),
        "{auth}"
    );
    assert_eq!(req.body["messages"][0]["content"][0]["text"], "hi");
}

/// Every provider pi's catalog lists: its default model resolves with `--model provider/id`,
/// and without credentials the run stops with a message that names the provider and how to
/// configure it — never a panic, a network call or a generic error.
#[test]
fn every_catalog_provider_resolves_and_names_its_missing_credentials() {
    for (provider, id) in pi::ai::catalog::DEFAULT_MODEL_PER_PROVIDER {
        let out = PiCommand::new()
            .args(["-p", "--model", &format!("{provider}/{id}"), "hi"])
            .run();
        out.assert_code(1).assert_no_panic();
        assert!(
            !out.stderr.contains("not found"),
            "{provider}/{id} did not resolve: {}",
            out.stderr
        );
        assert!(
            out.stderr.contains(provider),
            "{provider}: message does not name the provider: {}",
            out.stderr
        );
        let names_a_fix = ["set ", "auth login", "AWS_", "GOOGLE_"]
            .iter()
            .any(|hint| out.stderr.contains(hint));
        assert!(names_a_fix, "{provider}: no fix suggested: {}", out.stderr);
    }
}

#[test]
fn cloudflare_needs_its_account_id_in_the_url() {
    let out = PiCommand::new()
        .env("CLOUDFLARE_API_KEY", "k")
        .args([
            "-p",
            "--model",
            "cloudflare-workers-ai/@cf/moonshotai/kimi-k2.6",
            "hi",
        ])
        .run();
    out.assert_no_panic();
    assert!(
        out.stderr.contains(
            "CLOUDFLARE_ACCOUNT_ID is required for provider cloudflare-workers-ai but is not set."
        ),
        "{}",
        out.stderr
    );
}

/// A settings.json written by pi 1.6.0 names its default model (`openai/gpt-6.2-sol`, new in
/// 1.6.0's catalog); we start with it, at a level that model offers, and the new providers'
/// keys come from their own variables (here Qwen Token Plan Individual's per-plan key).
#[test]
fn settings_written_by_pi_1_6_0_name_a_model_we_know() {
    let mock = MockServer::with_replies([Reply::text("openai-responses", "sol here")]);
    let models =
        serde_json::json!({"providers": {"openai": {"baseUrl": format!("{}/v1", mock.url())}}});
    let settings = serde_json::json!({
        "defaultProvider": "openai", "defaultModel": "gpt-6.2-sol", "defaultThinkingLevel": "minimal",
        "retry": {"enabled": false},
    });
    let out = PiCommand::new()
        .env("OPENAI_API_KEY", "sk-test")
        .write_agent_file("models.json", &models.to_string())
        .write_agent_file("settings.json", &settings.to_string())
        .args(["-p", "hi"])
        .run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "sol here\n", "{}", out.stderr);
    let req = mock.single_request();
    assert_eq!(req.body["model"], "gpt-6.2-sol");
    // GPT-6.2 rejects `minimal`: the level is raised to the lowest one it has.
    assert_eq!(req.body["reasoning"]["effort"], "low", "{}", req.body);

    let qwen = PiCommand::new()
        .env("QWEN_TOKEN_PLAN_INDIVIDUAL_API_KEY", "k")
        .args(["--list-models", "qwen-token-plan-individual"])
        .run();
    qwen.assert_code(0);
    assert!(qwen.stdout.contains("qwen4-max-preview"), "{}", qwen.stdout);
}
