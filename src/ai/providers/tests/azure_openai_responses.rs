//! Tests of the azure_openai_responses provider: endpoint and deployment resolution from the
//! environment, headers, the request body, configuration errors, and one stream end to end.

use std::collections::HashMap;

use super::*;
use crate::ai::providers::anthropic::test_support::{serve_once, summary};
use crate::ai::providers::openai_compat::test_support::{run_all_chunkings, test_model};

const API: &str = "azure-openai-responses";

fn model() -> Model {
    let mut m = test_model(API);
    m.provider = API.into();
    m.id = "gpt-5".into();
    m.base_url = String::new();
    m
}

/// An environment holding exactly `vars`.
fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k: &str| map.get(k).cloned()
}

fn opts() -> StreamOptions {
    StreamOptions {
        api_key: "az-key".into(),
        ..Default::default()
    }
}

fn ctx() -> Context {
    Context {
        messages: vec![Message::user_text("hi")],
        ..Default::default()
    }
}

fn fixture(name: &str) -> Vec<u8> {
    let p = format!(
        "{}/fixtures/openai-responses/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

#[test]
fn url_from_resource_name() {
    let env = env_of(&[("AZURE_OPENAI_RESOURCE_NAME", "my-res")]);
    let (url, _, _) = build_request_with(&model(), &ctx(), &opts(), &env).unwrap();
    assert_eq!(
        url,
        "https://my-res.openai.azure.com/openai/v1/responses?api-version=v1"
    );
}

#[test]
fn base_url_wins_over_resource_name_and_model_base_url() {
    let env = env_of(&[
        (
            "AZURE_OPENAI_BASE_URL",
            " https://proxy.example.com/azure/ ",
        ),
        ("AZURE_OPENAI_RESOURCE_NAME", "my-res"),
    ]);
    let mut m = model();
    m.base_url = "https://model.example.com/v1".into();
    let (url, _, _) = build_request_with(&m, &ctx(), &opts(), &env).unwrap();
    assert_eq!(
        url,
        "https://proxy.example.com/azure/responses?api-version=v1"
    );
    // Without either variable, the model's baseUrl is used.
    let (url, _, _) = build_request_with(&m, &ctx(), &opts(), &env_of(&[])).unwrap();
    assert_eq!(url, "https://model.example.com/v1/responses?api-version=v1");
}

#[test]
fn azure_hosts_without_a_path_get_openai_v1() {
    for raw in [
        "https://r.openai.azure.com",
        "https://r.openai.azure.com/",
        "https://r.openai.azure.com/openai/",
        "https://r.openai.azure.com/openai?x=1",
    ] {
        assert_eq!(
            normalize_base_url(raw).unwrap(),
            "https://r.openai.azure.com/openai/v1",
            "{raw}"
        );
    }
    assert_eq!(
        normalize_base_url("https://r.cognitiveservices.azure.com").unwrap(),
        "https://r.cognitiveservices.azure.com/openai/v1"
    );
    // Explicit paths and other hosts are kept (minus trailing slashes).
    assert_eq!(
        normalize_base_url("https://r.openai.azure.com/openai/deployments/d//").unwrap(),
        "https://r.openai.azure.com/openai/deployments/d"
    );
    assert_eq!(
        normalize_base_url("http://localhost:8080").unwrap(),
        "http://localhost:8080"
    );
    assert_eq!(
        normalize_base_url("r.openai.azure.com").unwrap_err(),
        "Invalid Azure OpenAI base URL: r.openai.azure.com"
    );
}

#[test]
fn api_version_from_env_defaults_to_v1() {
    let m = model();
    let env = env_of(&[("AZURE_OPENAI_RESOURCE_NAME", "r")]);
    assert_eq!(resolve_config(&m, &env).unwrap().api_version, "v1");
    let env = env_of(&[
        ("AZURE_OPENAI_RESOURCE_NAME", "r"),
        ("AZURE_OPENAI_API_VERSION", "2025-04-01-preview"),
    ]);
    let (url, _, _) = build_request_with(&m, &ctx(), &opts(), &env).unwrap();
    assert_eq!(
        url,
        "https://r.openai.azure.com/openai/v1/responses?api-version=2025-04-01-preview"
    );
    let env = env_of(&[
        (
            "AZURE_OPENAI_BASE_URL",
            "https://r.openai.azure.com/openai/v1?old=1",
        ),
        ("AZURE_OPENAI_API_VERSION", "a b"),
    ]);
    let cfg = resolve_config(&m, &env).unwrap();
    assert_eq!(
        cfg.responses_url(),
        "https://r.openai.azure.com/openai/v1/responses?api-version=a%20b"
    );
}

#[test]
fn deployment_map_names_the_model_field() {
    assert_eq!(
        parse_deployment_map(" gpt-5 = prod-gpt5 ,bad,,=x,y=,gpt-4o=a=b,gpt-5=later"),
        vec![
            ("gpt-4o".to_string(), "a".to_string()),
            ("gpt-5".to_string(), "later".to_string()),
        ]
    );
    let env = env_of(&[
        ("AZURE_OPENAI_RESOURCE_NAME", "r"),
        (
            "AZURE_OPENAI_DEPLOYMENT_NAME_MAP",
            "gpt-4o=four,gpt-5=five-prod",
        ),
    ]);
    let (_, _, body) = build_request_with(&model(), &ctx(), &opts(), &env).unwrap();
    assert_eq!(body["model"], "five-prod");
    // Unmapped models use their own id.
    let mut m = model();
    m.id = "gpt-4.1".into();
    let (_, _, body) = build_request_with(&m, &ctx(), &opts(), &env).unwrap();
    assert_eq!(body["model"], "gpt-4.1");
}

#[test]
fn headers_use_api_key_not_bearer() {
    let mut m = model();
    let mut mh = Map::new();
    mh.insert("x-model".into(), json!("m"));
    mh.insert("x-over".into(), json!("model"));
    m.headers = Some(mh);
    let o = StreamOptions {
        headers: vec![("x-over".into(), "request".into())],
        session_id: Some("s1".into()),
        ..opts()
    };
    let env = env_of(&[("AZURE_OPENAI_RESOURCE_NAME", "r")]);
    let (_, headers, _) = build_request_with(&m, &ctx(), &o, &env).unwrap();
    assert_eq!(
        headers,
        vec![
            ("api-key".to_string(), "az-key".to_string()),
            ("x-model".to_string(), "m".to_string()),
            ("x-over".to_string(), "request".to_string()),
        ]
    );
    // With no key in the options, AZURE_OPENAI_API_KEY is used.
    let env = env_of(&[
        ("AZURE_OPENAI_RESOURCE_NAME", "r"),
        ("AZURE_OPENAI_API_KEY", "from-env"),
    ]);
    let (_, headers, _) =
        build_request_with(&model(), &ctx(), &StreamOptions::default(), &env).unwrap();
    assert_eq!(headers[0], ("api-key".to_string(), "from-env".to_string()));
}

#[test]
fn missing_configuration_errors_name_the_variables() {
    let err = build_request_with(&model(), &ctx(), &opts(), &env_of(&[])).unwrap_err();
    assert!(
        err.starts_with("Azure OpenAI base URL is required."),
        "{err}"
    );
    assert!(err.contains("AZURE_OPENAI_BASE_URL"), "{err}");
    assert!(err.contains("AZURE_OPENAI_RESOURCE_NAME"), "{err}");
    // Blank values count as unset.
    let env = env_of(&[
        ("AZURE_OPENAI_BASE_URL", "  "),
        ("AZURE_OPENAI_RESOURCE_NAME", ""),
    ]);
    assert!(build_request_with(&model(), &ctx(), &opts(), &env).is_err());
    let env = env_of(&[("AZURE_OPENAI_RESOURCE_NAME", "r")]);
    let err = build_request_with(&model(), &ctx(), &StreamOptions::default(), &env).unwrap_err();
    assert!(err.contains("AZURE_OPENAI_API_KEY"), "{err}");
}

#[test]
fn missing_configuration_is_an_error_event() {
    let events: Vec<AssistantEvent> =
        stream_with(&model(), &ctx(), &opts(), Abort::new(), &env_of(&[]))
            .iter()
            .collect();
    assert_eq!(events.len(), 1);
    let line = &summary(&events)[0];
    assert!(
        line.starts_with("error error Azure OpenAI base URL is required."),
        "{line}"
    );
}

#[test]
fn request_body_is_responses_without_store() {
    let mut m = model();
    m.reasoning = true;
    let mut a = AssistantMessage::empty(&m);
    a.content = vec![Content::ToolCall(ToolCall {
        id: "call_1|fc_1".into(),
        name: "read".into(),
        arguments: json!({"path": "a.txt"}),
        thought_signature: None,
    })];
    a.stop_reason = StopReason::ToolUse;
    let context = Context {
        system_prompt: Some("sys".into()),
        messages: vec![Message::user_text("read a.txt"), Message::Assistant(a)],
        tools: vec![ToolSpec {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object"}),
        }],
    };
    let o = StreamOptions {
        session_id: Some("sess-1".into()),
        max_tokens: Some(1000),
        ..opts()
    };
    let env = env_of(&[("AZURE_OPENAI_RESOURCE_NAME", "r")]);
    let (_, _, body) = build_request_with(&m, &context, &o, &env).unwrap();
    let expected = json!({
        "model": "gpt-5",
        "input": [
            {"role": "developer", "content": "sys"},
            {"role": "user", "content": [{"type": "input_text", "text": "read a.txt"}]},
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read",
             "arguments": "{\"path\":\"a.txt\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "No result provided"},
        ],
        "stream": true,
        "prompt_cache_key": "sess-1",
        "max_output_tokens": 1000,
        "tools": [{"type": "function", "name": "read", "description": "Read a file",
                   "parameters": {"type": "object"}, "strict": false}],
        "reasoning": {"effort": "none"},
    });
    assert_eq!(body, expected);
    assert!(body.get("store").is_none());
}

#[test]
fn azure_keeps_item_ids_of_its_own_tool_calls() {
    // Azure is among the providers whose `|item_id` survives replay of another provider's
    // tool call (re-hashed); without that, the whole id is flattened into `call_id`.
    let m = model();
    let mut a = AssistantMessage::empty(&m);
    a.provider = "openai".into();
    a.api = "openai-responses".into();
    a.content = vec![Content::ToolCall(ToolCall {
        id: "call_1|fc_1".into(),
        name: "read".into(),
        arguments: json!({}),
        thought_signature: None,
    })];
    let context = Context {
        messages: vec![Message::user_text("x"), Message::Assistant(a)],
        ..Default::default()
    };
    let env = env_of(&[("AZURE_OPENAI_RESOURCE_NAME", "r")]);
    let (_, _, body) = build_request_with(&m, &context, &opts(), &env).unwrap();
    let item = &body["input"][1];
    assert_eq!(item["call_id"], "call_1");
    let id = item["id"].as_str().unwrap();
    assert!(id.starts_with("fc_") && id != "fc_1", "{item}");
    let plain = openai_responses::convert_input(&m, &context);
    assert_eq!(plain[1]["call_id"], "call_1_fc_1");
    assert!(plain[1].get("id").is_none(), "{}", plain[1]);
}

#[test]
fn fixtures_parse_through_the_shared_responses_parser() {
    let r = run_all_chunkings(
        &fixture("tool_call.sse"),
        &model(),
        openai_responses::parse_stream,
    );
    assert_eq!(r.trace.last().unwrap(), "done toolUse");
}

#[test]
fn stream_end_to_end_against_a_local_server() {
    let (base, server) = serve_once("200 OK", "", fixture("text.sse"));
    let env = env_of(&[
        ("AZURE_OPENAI_BASE_URL", base.as_str()),
        ("AZURE_OPENAI_API_VERSION", "2025-04-01-preview"),
        ("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", "gpt-5=my-deploy"),
    ]);
    let events: Vec<AssistantEvent> = stream_with(&model(), &ctx(), &opts(), Abort::new(), &env)
        .iter()
        .collect();
    assert_eq!(
        summary(&events),
        [
            "start",
            "text_start 0",
            "text_delta 0 Hello, w",
            "text_delta 0 orld! ✓",
            "text_end 0 Hello, world! ✓",
            "done stop",
        ]
    );
    match events.last() {
        Some(AssistantEvent::Done { message, .. }) => {
            assert_eq!(message.api, API);
            assert_eq!(message.model, "gpt-5");
            assert_eq!(
                message.response_id.as_deref(),
                Some("resp_0123456789abcdef")
            );
        }
        other => panic!("{other:?}"),
    }
    let req = server.join().unwrap();
    let lower = req.to_ascii_lowercase();
    assert!(
        req.starts_with("POST /responses?api-version=2025-04-01-preview "),
        "{req}"
    );
    assert!(lower.contains("api-key: az-key"), "{req}");
    assert!(!lower.contains("authorization:"), "{req}");
    assert!(req.contains("\"model\":\"my-deploy\""), "{req}");
}
