//! `pi -p`: the streamed answer on stdout, the request on the wire, and how stdin, `@file`
//! arguments and several messages become prompts.

use crate::support::{MockServer, PiCommand, Reply};

/// The path the binary must hit for `api` with the base URLs from `models_json_for`.
fn expected_path(api: &str) -> &'static str {
    match api {
        "anthropic-messages" => "/v1/messages",
        "openai-completions" => "/v1/chat/completions",
        "openai-responses" => "/v1/responses",
        _ => "/v1beta/models/mock-model:streamGenerateContent?alt=sse",
    }
}

fn prints_streamed_text(api: &str) {
    let mock =
        MockServer::with_replies([Reply::text(api, "Hello from the mock, streamed in pieces.")]);
    let out = PiCommand::for_mock(api, &mock).args(["-p", "hello"]).run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "Hello from the mock, streamed in pieces.\n");

    let req = mock.single_request();
    assert_eq!(req.method, "POST");
    assert_eq!(req.path, expected_path(api));
    match api {
        "anthropic-messages" => assert_eq!(req.header("x-api-key"), Some("test-key")),
        "google-generative-ai" => assert_eq!(req.header("x-goog-api-key"), Some("test-key")),
        _ => assert_eq!(req.header("authorization"), Some("Bearer test-key")),
    }
    assert_eq!(
        req.last_user_text().as_deref(),
        Some("hello"),
        "body: {}",
        req.body
    );
}

#[test]
fn anthropic_messages_prints_streamed_text() {
    prints_streamed_text("anthropic-messages");
}

#[test]
fn openai_completions_prints_streamed_text() {
    prints_streamed_text("openai-completions");
}

#[test]
fn openai_responses_prints_streamed_text() {
    prints_streamed_text("openai-responses");
}

#[test]
fn google_generative_ai_prints_streamed_text() {
    prints_streamed_text("google-generative-ai");
}

/// Recorded mockllm.py streams (ids, usage and framing as the real APIs send them).
fn prints_fixture(api: &str, case: &str, expected: &str) {
    let mock = MockServer::with_replies([Reply::fixture(&format!("sse/{api}/{case}.sse"))]);
    let out = PiCommand::for_mock(api, &mock).args(["-p", "hello"]).run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, expected);
    assert_eq!(mock.request_count(), 1);
}

#[test]
fn recorded_text_streams_print_for_all_apis() {
    for api in crate::support::APIS {
        prints_fixture(api, "text", "Hello from the mock model.\n");
    }
}

#[test]
fn thinking_is_not_printed() {
    for api in crate::support::APIS {
        prints_fixture(api, "thinking", "Hi there!\n");
    }
}

#[test]
fn piped_stdin_is_folded_into_the_first_message() {
    let api = "openai-completions";
    let mock = MockServer::with_replies([Reply::text(api, "ok")]);
    let out = PiCommand::for_mock(api, &mock)
        .args(["-p", "q"])
        .stdin("ctx\n")
        .run();
    out.assert_code(0);
    assert_eq!(out.stdout, "ok\n");
    // stdin is trimmed, then stdin + message are joined with no separator
    assert_eq!(
        mock.single_request().last_user_text().as_deref(),
        Some("ctxq")
    );
}

#[test]
fn at_file_arguments_are_inlined_before_the_message() {
    let api = "anthropic-messages";
    let mock = MockServer::with_replies([Reply::text(api, "summary")]);
    let pi = PiCommand::for_mock(api, &mock)
        .write_file("notes.txt", "alpha beta")
        .args(["-p", "@notes.txt", "summarize"]);
    let abs = pi.cwd().join("notes.txt");
    let out = pi.run();
    out.assert_code(0);
    assert_eq!(out.stdout, "summary\n");
    let expected = format!(
        "<file name=\"{}\">\nalpha beta\n</file>\nsummarize",
        abs.display()
    );
    assert_eq!(mock.single_request().last_user_text(), Some(expected));
}

#[test]
fn two_messages_are_sent_as_two_prompts() {
    let api = "openai-completions";
    let mock = MockServer::with_replies([
        Reply::text(api, "first answer"),
        Reply::text(api, "second answer"),
    ]);
    let out = PiCommand::for_mock(api, &mock)
        .args(["-p", "one", "two"])
        .run();
    out.assert_code(0);
    // only the final assistant message is printed
    assert_eq!(out.stdout, "second answer\n");
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].user_texts(), vec!["one".to_string()]);
    assert_eq!(
        reqs[1].user_texts(),
        vec!["one".to_string(), "two".to_string()]
    );
    assert!(
        reqs[1].body_text().contains("first answer"),
        "history carries the first answer"
    );
}
