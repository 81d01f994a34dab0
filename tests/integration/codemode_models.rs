//! `models` in codemode scripts through the real binary (pi 1.6.0): image generation over the
//! mock's OpenRouter images endpoint and classification over its System One endpoint, with the
//! session's credentials, the script's model resolved by provider and id only; bad contexts
//! reject with the shape pi names; a stalled provider is cut off by the script's deadline.

use serde_json::json;

use crate::support::mock::{sse_tool_calls, MockServer, Reply, Request};
use crate::support::pi::{base_url_for, PiCommand};
use crate::support::session::tool_results;

const API: &str = "openai-completions";
/// A 1×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/// The mock chat model sends `code` as one `codemode` call; `non_chat` are the replies the
/// script's model calls get. OpenRouter is moved onto the mock by models.json, and has a key.
fn run(code: &str, non_chat: Vec<Reply>) -> (String, bool, Vec<Request>) {
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("cm_1", "codemode", json!({ "code": code }))],
    )));
    for r in non_chat {
        mock.push(r);
    }
    mock.push(Reply::text(API, "done"));
    let models = json!({"providers": {
        "mock": {"baseUrl": base_url_for(API, mock.port()), "api": API, "apiKey": "test-key",
                 "models": [{"id": "mock-model"}]},
        "openrouter": {"baseUrl": format!("{}/openrouter/api/v1", mock.url())},
    }});
    let cmd = PiCommand::for_mock(API, &mock)
        .write_agent_file("models.json", &models.to_string())
        .env("OPENROUTER_API_KEY", "or-test-key")
        .args(["--tools", "+codemode", "-p", "go"]);
    let out = cmd.run();
    out.assert_code(0).assert_no_panic();
    let results = tool_results(cmd.agent_dir());
    assert_eq!(results.len(), 1, "{results:?}\nstderr: {}", out.stderr);
    let (_, text, is_error) = results.into_iter().next().unwrap();
    let model_requests = mock
        .requests()
        .into_iter()
        .filter(|r| r.path.starts_with("/openrouter/"))
        .collect();
    (text, is_error, model_requests)
}

#[test]
fn a_script_generates_images_with_the_session_key_and_shows_them() {
    let code = r#"
const painter = await models.getModelOfType("image", "openrouter", "google/gemini-2.5-flash-image");
const result = await models.generateImages(
  { ...painter, baseUrl: "http://evil.invalid", headers: { x: "y" } },
  { input: [{ type: "text", text: "A red fox in the snow" }] },
);
if (result.stopReason !== "stop") return result.errorMessage;
for (const block of result.output) {
  if (block.type === "image") image(block);
  else text(block.text);
}
return [result.provider, result.model, result.usage.totalTokens, painter.baseUrl.endsWith("/openrouter/api/v1")];
"#;
    let (text, is_error, requests) = run(
        code,
        vec![Reply::openrouter_images(
            Some("A fox"),
            &[("image/png", PNG)],
        )],
    );
    assert!(!is_error, "{text}");
    assert!(text.contains("A fox\n[Image saved to "), "{text}");
    assert!(text.contains("(image/png, "), "{text}");
    assert!(
        text.ends_with(r#"["openrouter","google/gemini-2.5-flash-image",1300,true]"#),
        "{text}"
    );
    assert_eq!(requests.len(), 1);
    let r = &requests[0];
    assert_eq!(r.path, "/openrouter/api/v1/chat/completions");
    assert_eq!(r.header("authorization"), Some("Bearer or-test-key"));
    assert_eq!(
        r.body,
        json!({
            "model": "google/gemini-2.5-flash-image",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "A red fox in the snow"}]}],
            "stream": false,
            "modalities": ["image", "text"],
        })
    );
}

#[test]
fn provider_errors_are_results_and_mistakes_reject_with_the_expected_shape() {
    let code = r#"
const painter = { provider: "openrouter", id: "black-forest-labs/flux.2-pro" };
const failed = await models.generateImages(painter, { input: [{ type: "text", text: "x" }] });
const errors = [];
for (const call of [
  () => models.generateImages(painter, { prompt: "x" }),
  () => models.generateImages({ provider: "openrouter", id: "typesafe/jev-1.14" }, { input: [{ type: "text", text: "x" }] }),
  () => models.generateImages(undefined, {}),
  () => models.getModelsOfType("video"),
]) {
  try { await call(); } catch (e) { errors.push(e.message.split(". Expected")[0]); }
}
text(JSON.stringify([failed.stopReason, failed.errorMessage]));
text(errors.join("\n"));
const unknown = await models.getModelOfType("image", "openrouter", "nope");
const listed = await models.getAvailableOfType("image");
return [unknown === undefined, listed.length, listed.every((m) => m.headers === undefined)];
"#;
    let (text, is_error, requests) = run(
        code,
        vec![Reply::api_error(API, 402, "Insufficient credits")],
    );
    assert!(!is_error, "{text}");
    assert!(
        text.contains(r#"["error","402 Insufficient credits"]"#),
        "{text}"
    );
    assert!(
        text.contains("models.generateImages() context.input must be a non-empty array of blocks, got undefined\n"),
        "{text}"
    );
    assert!(
        text.contains("\"openrouter/typesafe/jev-1.14\" is a classifier model, not an image model. List the image models you can use with models.getAvailableOfType(\"image\").\n"),
        "{text}"
    );
    assert!(
        text.contains("models.generateImages() expects an image model as its first argument, got undefined. models.getModelOfType() returns undefined for an unknown provider or id."),
        "{text}"
    );
    assert!(
        text.contains("Unknown model type \"video\". Use \"chat\", \"image\", or \"classifier\"."),
        "{text}"
    );
    assert!(text.ends_with("[true,74,true]"), "{text}");
    assert_eq!(
        requests.len(),
        1,
        "only the well-formed call reaches the provider"
    );
    assert_eq!(requests[0].body["modalities"], json!(["image"]));
}

#[test]
fn a_script_classifies_over_system_one() {
    let code = r#"
const jev = await models.getModelOfType("classifier", "openrouter", "typesafe/jev-1.14");
const result = await models.classify(jev, {
  state: { message: "The app crashes every time" },
  questions: {
    sentiment: { type: "choice", instructions: "Mood?", criteria: { positive: "happy", negative: "unhappy" } },
    bug: { type: "bool", instructions: "A bug report?", criteria: { true: "yes", false: "no" } },
  },
});
return [result.stopReason, result.answers.sentiment.choice, result.answers.bug, result.usage.input];
"#;
    let answers = json!({
        "sentiment": {"type": "choice", "choice": "negative", "probabilities": {"positive": 0.1, "negative": 0.9}, "confidence": 0.8},
        "bug": {"type": "noul", "noul": 0.97},
    });
    let (text, is_error, requests) = run(code, vec![Reply::system_one(answers)]);
    assert!(!is_error, "{text}");
    assert!(
        text.ends_with(r#"["stop","negative",{"type":"bool","probability":0.97},120]"#),
        "{text}"
    );
    let r = &requests[0];
    assert_eq!(r.path, "/openrouter/api/v1/systemone");
    assert_eq!(r.header("authorization"), Some("Bearer or-test-key"));
    assert_eq!(r.body["model"], "typesafe/jev-1.14");
    assert_eq!(r.body["questions"]["bug"]["type"], "noul");
    assert_eq!(
        r.body["state"],
        json!({"message": "The app crashes every time"})
    );
}

#[test]
fn the_deadline_cuts_off_a_stalled_image_request_and_unshown_images_get_a_note() {
    let stalled = "// @options: {\"timeout_ms\": 700}\nawait models.generateImages({ provider: \"openrouter\", id: \"google/gemini-2.5-flash-image\" }, { input: [{ type: \"text\", text: \"x\" }] });";
    let reply = Reply::openrouter_images(None, &[("image/png", PNG)]).stall_after(0, 20_000);
    let (text, is_error, _) = run(stalled, vec![reply]);
    assert!(is_error);
    assert!(
        text.contains("Script timed out: Execution timed out after 700 ms\n\nTool calls made before the failure (they are not undone): models.generateImages (cancelled)"),
        "{text}"
    );
    let unshown = "const r = await models.generateImages({ provider: \"openrouter\", id: \"google/gemini-2.5-flash-image\" }, { input: [{ type: \"text\", text: \"x\" }] }); return r.output.length;";
    let (text, is_error, _) = run(
        unshown,
        vec![Reply::openrouter_images(None, &[("image/png", PNG)])],
    );
    assert!(!is_error, "{text}");
    assert!(
        text.ends_with("1\nNote: models.generateImages() returned 1 image that the script did not show. Show each image block of result.output with image(block)."),
        "{text}"
    );
}

/// pi 1.6.0: an MCP tool resolves to the server's call result less `_meta` — its
/// `structuredContent`, and its own content blocks rather than the model's rendering of them —
/// error results included.
#[test]
fn an_mcp_tool_resolves_to_its_call_result_with_structured_content() {
    use crate::support::mcp::{fake_entry, mcp_json};
    let code = r#"
const s = await tools.mcp__fake__structured({});
const img = await tools.mcp__fake__image({});
const bad = await tools.mcp__fake__fail({});
return [s, img.content[1].type, img.content[1].mimeType, bad];
"#;
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("cm_1", "codemode", json!({ "code": code }))],
    )));
    mock.push(Reply::text(API, "done"));
    let cmd = PiCommand::for_mock(API, &mock)
        .write_agent_file(
            "mcp.json",
            &mcp_json(json!({"fake": fake_entry(json!({}))})),
        )
        .args(["--tools", "+codemode", "-p", "go"]);
    let out = cmd.run();
    out.assert_code(0).assert_no_panic();
    let (_, text, is_error) = tool_results(cmd.agent_dir()).remove(0);
    assert!(!is_error, "{text}");
    assert!(
        text.ends_with(r#"[{"structuredContent":{"answer":42},"content":[]},"image","image/png",{"content":[{"type":"text","text":"it broke"}],"isError":true}]"#),
        "{text}"
    );
}
