//! Extensions reach image and classifier models as pi 1.6.0's do, through
//! `ctx.modelRegistry` (`getModelsOfType`, `getModelOfType`, `getAvailableOfType`,
//! `generateImages`, `classify`), with the session's credentials, over the Node.js bridge.

use serde_json::json;

use super::ext_bridge::{have_node, module, with_ext};
use crate::support::mock::sse_tool_calls;
use crate::support::{base_url_for, MockServer, PiCommand, Reply};

const API: &str = "openai-completions";
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

#[test]
fn an_extension_generates_images_and_classifies_with_the_session_credentials() {
    if !have_node("an_extension_generates_images_and_classifies_with_the_session_credentials") {
        return;
    }
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("c1", "paint", json!({}))],
    )));
    mock.push(Reply::openrouter_images(None, &[("image/png", PNG)]));
    mock.push(Reply::system_one(
        json!({"ok": {"type": "noul", "noul": 0.9}}),
    ));
    mock.push(Reply::text(API, "done"));
    let models = json!({"providers": {
        "mock": {"baseUrl": base_url_for(API, mock.port()), "api": API, "apiKey": "test-key",
                 "models": [{"id": "mock-model"}]},
        "openrouter": {"baseUrl": format!("{}/openrouter/api/v1", mock.url())},
    }});
    let pi = PiCommand::new()
        .write_agent_file("models.json", &models.to_string())
        .env("OPENROUTER_API_KEY", "or-ext-key")
        .args(["--model", "mock/mock-model"]);
    let ext = module(
        &pi,
        "paint.mjs",
        r#"
import { Type } from "@earendil-works/pi-ai";
export default function (pi) {
  pi.registerTool({
    name: "paint", label: "Paint", description: "Paint and judge",
    parameters: Type.Object({}),
    async execute(id, params, signal, onUpdate, ctx) {
      const reg = ctx.modelRegistry;
      const painter = reg.getModelOfType("image", "openrouter", "black-forest-labs/flux.2-pro");
      const images = await reg.generateImages(painter, { input: [{ type: "text", text: "a fox" }] }, { signal });
      const judge = reg.findOfType("classifier", "openrouter", "typesafe/jev-1.14");
      const verdict = await reg.classify(judge, { state: { x: 1 }, questions: { ok: { type: "bool", instructions: "ok?", criteria: { true: "y", false: "n" } } } });
      const available = await reg.getAvailableOfType("image");
      const summary = [images.stopReason, images.output[0].mimeType, verdict.answers.ok.probability,
        reg.getModelsOfType("classifier").length, available.length, painter.baseUrl.endsWith("/openrouter/api/v1")];
      return { content: [{ type: "text", text: JSON.stringify(summary) }] };
    },
  });
}
"#,
    );
    let out = with_ext(pi, &ext).args(["-p", "paint"]).run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "done\n", "{}", out.stderr);
    let requests = mock.requests();
    let images = requests
        .iter()
        .find(|r| r.path == "/openrouter/api/v1/chat/completions")
        .expect("an images request");
    assert_eq!(images.header("authorization"), Some("Bearer or-ext-key"));
    assert_eq!(images.body["modalities"], json!(["image"]));
    let last = requests.last().unwrap().body_text();
    assert!(
        last.contains(r#"[\"stop\",\"image/png\",0.9,81,74,true]"#),
        "{last}"
    );
}

/// pi 1.6.0: a `tool_result` hook sees an MCP tool's call result as `structuredContent`.
#[test]
fn a_tool_result_hook_sees_an_mcp_call_result_as_structured_content() {
    use crate::support::mcp::{fake_entry, mcp_json};
    if !have_node("a_tool_result_hook_sees_an_mcp_call_result_as_structured_content") {
        return;
    }
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("c1", "mcp__fake__structured", json!({}))],
    )));
    mock.push(Reply::text(API, "done"));
    let pi = PiCommand::for_mock(API, &mock).write_agent_file(
        "mcp.json",
        &mcp_json(json!({"fake": fake_entry(json!({"exposure": "direct"}))})),
    );
    let ext = module(
        &pi,
        "hook.mjs",
        r#"
export default function (pi) {
  pi.on("tool_result", (event) => ({
    content: [{ type: "text", text: "seen " + JSON.stringify(event.structuredContent) }],
  }));
}
"#,
    );
    let out = with_ext(pi, &ext).args(["-p", "go"]).run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "done\n", "{}", out.stderr);
    let last = mock.requests().last().unwrap().body_text();
    assert!(
        last.contains(r#"seen {\"structuredContent\":{\"answer\":42},\"content\":[]}"#),
        "{last}"
    );
}
