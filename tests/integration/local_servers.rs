//! With no key, pi finds a model server on this machine. Stub servers answer as llama.cpp's
//! server, Ollama and LM Studio document their APIs; the real engine is `make local-check`.

use crate::support::{MockServer, PiCommand, Reply};

const API: &str = "openai-completions";

/// llama.cpp's `llama-server` started with `-c 4096`.
fn llama_cpp(replies: impl IntoIterator<Item = Reply>) -> MockServer {
    let mock = MockServer::with_replies(replies);
    mock.serve(
        "/v1/models",
        200,
        r#"{"object":"list","data":[{"id":"tiny.gguf","object":"model","owned_by":"llamacpp",
            "meta":{"n_ctx_train":8192,"n_vocab":3000}}],
            "models":[{"name":"tiny.gguf","model":"tiny.gguf"}]}"#,
    )
    .serve(
        "/props",
        200,
        r#"{"default_generation_settings":{"n_ctx":4096,"params":{}},"total_slots":1,
            "modalities":{"vision":false},"chat_template_caps":{"supports_tools":true}}"#,
    );
    mock
}

fn local(mock: &MockServer) -> PiCommand {
    PiCommand::new().env("PI_LOCAL_SERVER_PORTS", format!("1,{}", mock.port()))
}

/// `--list-models` prints its table on stderr, as pi does.
fn listing(out: &crate::support::Output) -> String {
    format!("{}{}", out.stdout, out.stderr)
}

fn chat_requests(mock: &MockServer) -> Vec<serde_json::Value> {
    mock.requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/chat/completions"))
        .map(|r| r.body)
        .collect()
}

#[test]
fn llama_cpp_window_comes_from_props_and_one_reply_is_one_request() {
    let mock = llama_cpp([Reply::text(API, "hi there")]);
    let out = local(&mock).args(["-p", "hello"]).run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "hi there\n");
    assert!(out.stderr.contains("4096-token window"), "{}", out.stderr);
    // No summary request follows the reply: pi's 16,384-token reserve exceeds this window.
    let chats = chat_requests(&mock);
    assert_eq!(chats.len(), 1, "{chats:#?}");
    // llama.cpp reads `max_tokens` (and ignores `max_completion_tokens`).
    assert_eq!(chats[0]["max_tokens"], 1024);
    assert!(chats[0].get("max_completion_tokens").is_none());
    assert_eq!(chats[0]["model"], "tiny.gguf");
}

#[test]
fn a_prompt_longer_than_the_window_fails_at_once_with_the_servers_words() {
    // llama.cpp's answer when the prompt does not fit its slot.
    let mock = llama_cpp([Reply::error(
        400,
        r#"{"error":{"code":400,"message":"request (12023 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":12023,"n_ctx":4096}}"#,
    )]);
    let out = local(&mock).args(["-p", &"word ".repeat(6000)]).run();
    out.assert_code(1).assert_no_panic();
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr
            .contains("exceeds the available context size (4096 tokens)"),
        "{}",
        out.stderr
    );
    // Nothing to compact in a one-prompt session, and nothing retried.
    assert_eq!(chat_requests(&mock).len(), 1);
}

#[test]
fn rpc_get_state_reports_the_servers_window() {
    let mock = llama_cpp([]);
    let out = local(&mock)
        .args(["--mode", "rpc", "--no-session"])
        .stdin("{\"id\":\"s\",\"type\":\"get_state\"}\n")
        .run();
    out.assert_code(0).assert_no_panic();
    let state = out
        .json_lines()
        .into_iter()
        .find(|v| v["id"] == "s")
        .expect("get_state answered");
    assert_eq!(state["data"]["model"]["contextWindow"], 4096, "{state}");
    assert_eq!(state["data"]["model"]["provider"], "llama.cpp");
}

#[test]
fn list_models_without_a_key_shows_the_local_models() {
    let mock = llama_cpp([]);
    let out = local(&mock).arg("--list-models").run();
    out.assert_code(0).assert_no_panic();
    let text = listing(&out);
    let row = text
        .lines()
        .find(|l| l.contains("tiny.gguf"))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        row.split_whitespace().collect::<Vec<_>>(),
        [
            "llama.cpp",
            "(local)",
            "tiny.gguf",
            "4.1K",
            "1.0K",
            "no",
            "no"
        ]
    );
    assert!(text.contains("found on local servers"), "{text}");
}

#[test]
fn ollama_models_get_num_ctx_and_capabilities_from_api_show() {
    let mock = MockServer::start();
    mock.serve(
        "/v1/models",
        200,
        r#"{"object":"list","data":[
            {"id":"qwen2.5-coder:7b","object":"model","created":1,"owned_by":"library"},
            {"id":"llava:7b","object":"model","created":1,"owned_by":"library"}]}"#,
    )
    .serve("/api/version", 200, r#"{"version":"0.12.3"}"#)
    .serve("/api/ps", 200, r#"{"models":[]}"#)
    .serve(
        "/api/show",
        200,
        r#"{"parameters":"num_ctx                        8192\nstop \"<|im_end|>\"",
            "model_info":{"general.architecture":"qwen2","qwen2.context_length":32768},
            "capabilities":["completion","tools","vision"],"details":{"format":"gguf"}}"#,
    );
    let out = local(&mock).arg("--list-models").run();
    out.assert_code(0).assert_no_panic();
    let text = listing(&out);
    for id in ["qwen2.5-coder:7b", "llava:7b"] {
        let row = text
            .lines()
            .find(|l| l.contains(id))
            .unwrap_or_else(|| panic!("{id} missing: {text}"));
        assert_eq!(
            row.split_whitespace().collect::<Vec<_>>(),
            ["ollama", "(local)", id, "8.2K", "2.0K", "no", "yes"]
        );
    }
    let shows: Vec<_> = mock
        .requests()
        .into_iter()
        .filter(|r| r.path == "/api/show")
        .map(|r| r.body["model"].clone())
        .collect();
    assert_eq!(shows, ["qwen2.5-coder:7b", "llava:7b"]);
}

#[test]
fn ollama_without_num_ctx_gets_its_default_window_not_the_trained_one() {
    let mock = MockServer::with_replies([Reply::text(API, "ok")]);
    mock.serve(
        "/v1/models",
        200,
        r#"{"object":"list","data":[{"id":"llama3.2:3b","object":"model","owned_by":"library"}]}"#,
    )
    .serve("/api/version", 200, r#"{"version":"0.12.3"}"#)
    .serve(
        "/api/show",
        200,
        r#"{"parameters":"","model_info":{"llama.context_length":131072},
            "capabilities":["completion","tools"]}"#,
    );
    let out = local(&mock).args(["-p", "hi"]).run();
    out.assert_code(0).assert_no_panic();
    assert!(out.stderr.contains("4096-token window"), "{}", out.stderr);
}

#[test]
fn lm_studio_listing_gives_loaded_context_and_hides_embedding_models() {
    let mock = MockServer::start();
    mock.serve(
        "/v1/models",
        200,
        r#"{"object":"list","data":[
            {"id":"qwen2-vl-2b-instruct","object":"model","owned_by":"organization_owner"},
            {"id":"text-embedding-nomic-embed-text-v1.5","object":"model","owned_by":"organization_owner"},
            {"id":"deepseek-r1-distill-qwen-7b","object":"model","owned_by":"organization_owner"}]}"#,
    )
    .serve(
        "/api/v0/models",
        200,
        r#"{"object":"list","data":[
            {"id":"qwen2-vl-2b-instruct","object":"model","type":"vlm","state":"loaded",
             "max_context_length":32768,"loaded_context_length":8192},
            {"id":"text-embedding-nomic-embed-text-v1.5","object":"model","type":"embeddings",
             "state":"not-loaded","max_context_length":2048},
            {"id":"deepseek-r1-distill-qwen-7b","object":"model","type":"llm","state":"not-loaded",
             "max_context_length":131072,"capabilities":["tool_use"]}]}"#,
    );
    let out = local(&mock).arg("--list-models").run();
    out.assert_code(0).assert_no_panic();
    let text = listing(&out);
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| l.starts_with("lmstudio"))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows,
        [
            vec![
                "lmstudio",
                "(local)",
                "qwen2-vl-2b-instruct",
                "8.2K",
                "2.0K",
                "no",
                "yes"
            ],
            vec![
                "lmstudio",
                "(local)",
                "deepseek-r1-distill-qwen-7b",
                "131.1K",
                "16.4K",
                "no",
                "no"
            ],
        ],
        "{text}"
    );
}

#[test]
fn a_server_on_ipv6_loopback_only_is_found() {
    let mock = MockServer::start_on("[::1]:0");
    mock.push(Reply::text(API, "from ::1"));
    let out = local(&mock).args(["-p", "hi"]).run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "from ::1\n");
    assert!(out.stderr.contains("http://[::1]:"), "{}", out.stderr);
}

#[test]
fn a_server_slower_than_the_connect_probe_is_still_found() {
    let mock = MockServer::with_replies([Reply::text(API, "slow but here")]);
    // Connected at once, the listing's body takes a second (a server busy loading a model).
    let listing = r#"{"object":"list","data":[{"id":"slow-model","object":"model"}]}"#;
    mock.serve_reply(
        "/v1/models",
        Reply::error(200, listing).stall_after(0, 1000),
    );
    let out = local(&mock).args(["-p", "hi"]).run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "slow but here\n");
}

#[test]
fn with_no_key_and_no_server_the_error_names_what_was_tried() {
    let out = PiCommand::new()
        .env("PI_LOCAL_SERVER_PORTS", "1")
        .args(["-p", "hi"])
        .run();
    out.assert_code(1).assert_no_panic();
    for part in [
        "no local model server answered",
        "Tried port 1 on 127.0.0.1 and ::1",
        "PI_LOCAL_SERVER_PORTS",
        "models.json",
    ] {
        assert!(out.stderr.contains(part), "{part}: {}", out.stderr);
    }
}
