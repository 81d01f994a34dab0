//! Compaction through the real binary: a conversation that crosses the threshold is
//! summarized, continues with the summary plus recent messages, and the file keeps every
//! original entry.

use serde_json::json;

use crate::support::{MockServer, PiCommand, Reply};

const API: &str = "openai-completions";

/// A Chat Completions stream answering `text` and reporting `prompt_tokens` of input.
fn reply_with_usage(text: &str, prompt_tokens: u64) -> Reply {
    let chunk = |v: serde_json::Value| format!("data: {v}\n\n");
    let mut body = String::new();
    body.push_str(&chunk(json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": null}]})));
    body.push_str(&chunk(json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})));
    body.push_str(&chunk(json!({"id": "c", "object": "chat.completion.chunk", "choices": [],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 50, "total_tokens": prompt_tokens + 50}})));
    body.push_str("data: [DONE]\n\n");
    Reply::sse(body)
}

#[test]
fn a_long_conversation_compacts_and_keeps_going() {
    let mock = MockServer::start();
    let long = |tag: &str| format!("{tag} {}", "lorem ipsum dolor sit amet ".repeat(40));
    mock.push(reply_with_usage(&long("ANSWER-ONE"), 300));
    mock.push(reply_with_usage(&long("ANSWER-TWO"), 900));
    // Crosses window (4000) - reserve (1000): compaction follows this reply.
    mock.push(reply_with_usage(&long("ANSWER-THREE"), 3500));
    mock.push(reply_with_usage("## Goal\nSUMMARY-OF-EARLIER-WORK", 100));
    mock.push(reply_with_usage("ANSWER-FOUR", 400));

    let models = json!({"providers": {"mock": {
        "baseUrl": format!("http://127.0.0.1:{}/v1", mock.port()),
        "api": API, "apiKey": "test-key",
        "models": [{"id": "small", "contextWindow": 4000, "maxTokens": 1000}]
    }}});
    let first = PiCommand::new()
        .write_agent_file("models.json", &models.to_string())
        .write_agent_file(
            "settings.json",
            r#"{"retry":{"baseDelayMs":20},"compaction":{"reserveTokens":1000,"keepRecentTokens":300}}"#,
        )
        .args(["--model", "mock/small", "-p"])
        .args([long("QUESTION-ONE"), long("QUESTION-TWO"), long("QUESTION-THREE")]);
    let agent_dir = first.agent_dir().to_path_buf();
    let again = first.again();
    let out = first.run();
    out.assert_code(0).assert_no_panic();
    assert!(out.stdout.starts_with("ANSWER-THREE"), "{}", out.stdout);

    let reqs = mock.requests();
    assert_eq!(reqs.len(), 4, "three answers and one summary request");
    let summary_request = reqs[3].body_text();
    assert!(
        summary_request.contains("QUESTION-ONE"),
        "the summarizer sees the old messages"
    );

    let out = again
        .args(["--model", "mock/small", "-p", "-c", "QUESTION-FOUR"])
        .run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "ANSWER-FOUR\n");
    let context = mock.requests()[4].body_text();
    assert!(
        context.contains("SUMMARY-OF-EARLIER-WORK"),
        "the summary leads the context: {context}"
    );
    assert!(
        !context.contains("QUESTION-ONE"),
        "compacted messages are gone from the context"
    );
    assert!(context.contains("ANSWER-THREE") && context.contains("QUESTION-FOUR"));

    let sessions = agent_dir.join("sessions");
    let dir = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let file = std::fs::read_dir(dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(file).unwrap();
    for tag in [
        "QUESTION-ONE",
        "ANSWER-ONE",
        "QUESTION-TWO",
        "ANSWER-TWO",
        "QUESTION-FOUR",
    ] {
        assert!(text.contains(tag), "the file still holds {tag}");
    }
    assert_eq!(text.matches("\"type\":\"compaction\"").count(), 1);
}

/// A session resumed already over the threshold is compacted before the prompt goes out, as
/// pi does: the first request is the summary, the second carries the summary and the prompt.
#[test]
fn a_resumed_session_over_the_threshold_is_compacted_before_the_prompt() {
    let mock = MockServer::start();
    let long = |tag: &str| format!("{tag} {}", "lorem ipsum dolor sit amet ".repeat(40));
    mock.push(reply_with_usage(&long("ANSWER-ONE"), 300));
    mock.push(reply_with_usage(&long("ANSWER-TWO"), 3500));
    mock.push(reply_with_usage("## Goal\nSUMMARY-BEFORE-PROMPT", 100));
    mock.push(reply_with_usage("ANSWER-THREE", 400));
    let models = json!({"providers": {"mock": {
        "baseUrl": format!("http://127.0.0.1:{}/v1", mock.port()),
        "api": API, "apiKey": "test-key",
        "models": [{"id": "small", "contextWindow": 4000, "maxTokens": 1000}]
    }}});
    let first = PiCommand::new()
        .write_agent_file("models.json", &models.to_string())
        .write_agent_file(
            "settings.json",
            r#"{"compaction":{"enabled":false,"reserveTokens":1000,"keepRecentTokens":300}}"#,
        )
        .args(["--model", "mock/small", "-p"])
        .args([long("QUESTION-ONE"), long("QUESTION-TWO")]);
    first.run().assert_code(0).assert_no_panic();
    assert_eq!(mock.request_count(), 2, "no compaction while it is off");
    let again = first
        .again()
        .write_agent_file(
            "settings.json",
            r#"{"compaction":{"reserveTokens":1000,"keepRecentTokens":300}}"#,
        )
        .args(["--model", "mock/small", "-p", "-c", "QUESTION-THREE"]);

    let out = again.run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "ANSWER-THREE\n");
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 4);
    assert!(
        reqs[2].body_text().contains("QUESTION-ONE"),
        "summarized first"
    );
    assert!(!reqs[2].body_text().contains("QUESTION-THREE"));
    let sent = reqs[3].body_text();
    assert!(sent.contains("SUMMARY-BEFORE-PROMPT") && sent.contains("QUESTION-THREE"));
    assert!(
        !sent.contains("QUESTION-ONE"),
        "the prompt goes out compacted"
    );
}

/// A context overflow as `api` reports it.
fn overflow_reply(api: &str) -> Reply {
    match api {
        // OpenAI's code, with words pi's patterns do not know: only the type tells.
        "openai-completions" | "openai-responses" => Reply::error(
            400,
            &json!({"error": {"message": "Your request is too big for this model.",
                "type": "invalid_request_error", "param": "messages",
                "code": "context_length_exceeded"}})
            .to_string(),
        ),
        // Anthropic's own error type, inside the stream.
        "anthropic-messages" => Reply::sse(
            "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"request_too_large\",\
             \"message\":\"Request exceeds the maximum size\"}}\n\n",
        ),
        // Google has no code for it: its words, which pi matches.
        _ => Reply::api_error(
            api,
            400,
            "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
        ),
    }
}

#[test]
fn an_overflow_error_from_each_provider_compacts_and_retries_the_prompt() {
    let long = |tag: &str| format!("{tag} {}", "lorem ipsum dolor sit amet ".repeat(40));
    for api in [
        "anthropic-messages",
        "openai-completions",
        "openai-responses",
        "google-generative-ai",
    ] {
        let mock = MockServer::start();
        mock.push(Reply::text(api, &long("ANSWER-ONE")));
        mock.push(Reply::text(api, &long("ANSWER-TWO")));
        mock.push(overflow_reply(api));
        mock.push(Reply::text(api, "## Goal\nSUMMARY-OF-EARLIER-WORK"));
        mock.push(Reply::text(api, "ANSWER-THREE"));
        let out = PiCommand::for_mock(api, &mock)
            .write_agent_file(
                "settings.json",
                r#"{"retry":{"baseDelayMs":20},"compaction":{"keepRecentTokens":300}}"#,
            )
            .args(["-p"])
            .args([
                long("QUESTION-ONE"),
                long("QUESTION-TWO"),
                "QUESTION-THREE".into(),
            ])
            .run();
        out.assert_code(0).assert_no_panic();
        assert!(
            out.stdout.contains("ANSWER-THREE"),
            "{api}: {} / {}",
            out.stdout,
            out.stderr
        );
        let reqs = mock.requests();
        assert_eq!(reqs.len(), 5, "{api}: the overflow, a summary, the retry");
        let retried = reqs[4].body_text();
        assert!(
            retried.contains("SUMMARY-OF-EARLIER-WORK") && retried.contains("QUESTION-THREE"),
            "{api}: the prompt goes again after the summary: {retried}"
        );
    }
}
