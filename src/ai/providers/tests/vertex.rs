//! Tests of the Vertex provider: URL shapes, key handling, and whole calls against one-shot
//! local servers with an API key and with application-default credentials.

use super::*;
use crate::ai::providers::anthropic::test_support::*;
use serde_json::{json, Value};
use std::collections::HashMap;

const CATALOG_BASE: &str = "https://{location}-aiplatform.googleapis.com";

fn model(id: &str, base: &str) -> Model {
    test_model(id, "google-vertex", "google-vertex", base)
}

fn shared(pairs: &[(&str, &str)]) -> SharedEnv {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Arc::new(move |k: &str| map.get(k).cloned())
}

fn user_only() -> Context {
    Context {
        system_prompt: Some("sys".into()),
        messages: vec![Message::user_text("hi")],
        tools: vec![],
    }
}

#[test]
fn urls_follow_the_genai_sdk() {
    let m = model("gemini-2.5-pro", CATALOG_BASE);
    let tail = "publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse";
    assert_eq!(
        request_url(&m, None),
        format!("https://aiplatform.googleapis.com/v1/{tail}")
    );
    assert_eq!(
        request_url(&m, Some(("proj", "us-central1"))),
        format!("https://us-central1-aiplatform.googleapis.com/v1/projects/proj/locations/us-central1/{tail}")
    );
    assert_eq!(
        request_url(&m, Some(("proj", "global"))),
        format!("https://aiplatform.googleapis.com/v1/projects/proj/locations/global/{tail}")
    );
    assert_eq!(
        request_url(&m, Some(("proj", "eu"))),
        format!("https://aiplatform.eu.rep.googleapis.com/v1/projects/proj/locations/eu/{tail}")
    );
    let custom = model("gemini-2.5-pro", "https://proxy.corp/vertex/");
    assert_eq!(
        request_url(&custom, Some(("proj", "us-central1"))),
        format!("https://proxy.corp/vertex/v1/{tail}")
    );
    let versioned = model("gemini-2.5-pro", "https://proxy.corp/v1beta1");
    assert_eq!(
        request_url(&versioned, None),
        format!("https://proxy.corp/v1beta1/{tail}")
    );
    assert_eq!(
        model_path("anthropic/claude"),
        "publishers/anthropic/models/claude"
    );
    assert_eq!(model_path("projects/p/x"), "projects/p/x");
}

#[test]
fn placeholder_keys_mean_adc() {
    let opts = |k: &str| StreamOptions {
        api_key: k.into(),
        ..Default::default()
    };
    let none = |_: &str| None;
    assert_eq!(api_key(&opts("<authenticated>"), &none), None);
    assert_eq!(api_key(&opts("gcp-vertex-credentials"), &none), None);
    assert_eq!(
        api_key(&opts(" AIza-key "), &none).as_deref(),
        Some("AIza-key")
    );
    let env = |k: &str| (k == "GOOGLE_CLOUD_API_KEY").then(|| "env-key".to_string());
    assert_eq!(api_key(&opts(""), &env).as_deref(), Some("env-key"));
}

#[test]
fn vertex_thinking_tables_differ_from_gemini_only_where_pi_does() {
    let m = model("gemini-2.5-flash-lite", CATALOG_BASE);
    let opts = StreamOptions {
        reasoning: Some(ThinkingLevel::Minimal),
        ..Default::default()
    };
    let vertex = build_body(&m, &user_only(), &opts, Dialect::Vertex);
    let gemini = build_body(&m, &user_only(), &opts, Dialect::Gemini);
    assert_eq!(
        vertex["generationConfig"]["thinkingConfig"],
        json!({"includeThoughts": true, "thinkingBudget": 128})
    );
    assert_eq!(
        gemini["generationConfig"]["thinkingConfig"],
        json!({"includeThoughts": true, "thinkingBudget": 512})
    );
    let gemma = model("gemma-4-27b-it", CATALOG_BASE);
    let off = StreamOptions::default();
    assert_eq!(
        build_body(&gemma, &user_only(), &off, Dialect::Vertex)["generationConfig"]
            ["thinkingConfig"],
        json!({"thinkingBudget": 0})
    );
}

#[test]
fn api_key_call_against_a_local_server() {
    let (base, server) = serve_once("200 OK", "", fixture("google", "thinking.sse"));
    let m = model("gemini-2.5-pro", &base);
    let opts = StreamOptions {
        api_key: "vertex-key".into(),
        ..Default::default()
    };
    let rx = stream_with_env(&m, &user_only(), &opts, Abort::new(), shared(&[]));
    let events: Vec<_> = rx.iter().collect();
    assert_eq!(
        summary(&events),
        [
            "start",
            "thinking_start 0",
            "thinking_delta 0 Let me think",
            "thinking_delta 0  about it.",
            "thinking_end 0 Let me think about it.",
            "text_start 1",
            "text_delta 1 The answer",
            "text_delta 1  is 42.",
            "text_end 1 The answer is 42.",
            "done length",
        ]
    );
    assert_eq!(final_message(&events).api, "google-vertex");
    let req = server.join().unwrap();
    assert!(
        req.starts_with(
            "POST /v1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse "
        ),
        "{req}"
    );
    assert!(req
        .to_ascii_lowercase()
        .contains("x-goog-api-key: vertex-key\r\n"));
    let body: Value = serde_json::from_str(req.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(
        body["contents"],
        json!([{"role": "user", "parts": [{"text": "hi"}]}])
    );
}

#[test]
fn adc_call_uses_a_bearer_token_and_the_quota_project() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("adc.json");
    std::fs::write(
        &file,
        r#"{"type":"authorized_user","client_id":"cid","client_secret":"cs","refresh_token":"1//rt-call","quota_project_id":"billing"}"#,
    )
    .unwrap();
    let (token_base, token_server) = serve_once(
        "200 OK",
        "",
        br#"{"access_token":"ya29.user","expires_in":3599}"#.to_vec(),
    );
    let (base, server) = serve_once("200 OK", "", fixture("google", "text.sse"));
    let env = shared(&[
        ("GOOGLE_APPLICATION_CREDENTIALS", file.to_str().unwrap()),
        ("GOOGLE_CLOUD_PROJECT", "proj"),
        ("GOOGLE_CLOUD_LOCATION", "us-central1"),
        ("PI_GOOGLE_TOKEN_URL", &token_base),
    ]);
    let opts = StreamOptions {
        api_key: "<authenticated>".into(),
        ..Default::default()
    };
    let m = model("gemini-2.5-flash", &base);
    let events: Vec<_> = stream_with_env(&m, &user_only(), &opts, Abort::new(), env)
        .iter()
        .collect();
    assert_eq!(summary(&events).last().unwrap(), "done stop");
    let token_req = token_server.join().unwrap();
    assert!(token_req.split("\r\n\r\n").nth(1).unwrap().starts_with(
        "grant_type=refresh_token&client_id=cid&client_secret=cs&refresh_token=1%2F%2Frt-call"
    ));
    let req = server.join().unwrap().to_ascii_lowercase();
    assert!(req.contains("authorization: bearer ya29.user\r\n"), "{req}");
    assert!(req.contains("x-goog-user-project: billing\r\n"), "{req}");
}

#[test]
fn adc_errors_are_specific() {
    let opts = StreamOptions::default();
    let m = model("gemini-2.5-flash", CATALOG_BASE);
    let run = |env: SharedEnv| {
        summary(
            &stream_with_env(&m, &user_only(), &opts, Abort::new(), env)
                .iter()
                .collect::<Vec<_>>(),
        )
    };
    assert_eq!(
        run(shared(&[("HOME", "/nonexistent")])),
        [format!("error error {MISSING_CREDENTIALS}")]
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("adc.json");
    std::fs::write(
        &file,
        r#"{"type":"authorized_user","client_id":"c","client_secret":"s","refresh_token":"1//rt-noloc"}"#,
    )
    .unwrap();
    let (token_base, _t) = serve_once("200 OK", "", br#"{"access_token":"ya29.x"}"#.to_vec());
    let env = shared(&[
        ("GOOGLE_APPLICATION_CREDENTIALS", file.to_str().unwrap()),
        ("GOOGLE_CLOUD_PROJECT", "proj"),
        ("PI_GOOGLE_TOKEN_URL", &token_base),
    ]);
    assert_eq!(
        run(env),
        ["error error Vertex AI requires a location. Set GOOGLE_CLOUD_LOCATION."]
    );
}

#[test]
fn http_errors_carry_the_server_message() {
    let (base, _server) = serve_once(
        "403 Forbidden",
        "",
        br#"{"error":{"code":403,"message":"Permission 'aiplatform.endpoints.predict' denied","status":"PERMISSION_DENIED"}}"#.to_vec(),
    );
    let opts = StreamOptions {
        api_key: "k".into(),
        ..Default::default()
    };
    let events: Vec<_> = stream_with_env(
        &model("gemini-2.5-pro", &base),
        &user_only(),
        &opts,
        Abort::new(),
        shared(&[]),
    )
    .iter()
    .collect();
    assert_eq!(
        summary(&events),
        ["error error 403 Permission 'aiplatform.endpoints.predict' denied"]
    );
}
