//! What pi 1.x added to the extension API, through the Node.js bridge: MCP servers an
//! extension registers, `user_bash` for `!` commands, `project_trust` at startup, and message
//! renderers drawing an extension's messages in interactive mode.

use serde_json::json;

use crate::ext_bridge::{have_node, module, with_ext};
use crate::support::mcp::{fake_entry, marker, survivors};
use crate::support::mock::sse_tool_calls;
use crate::support::{MockServer, PiCommand, Reply};

const API: &str = "openai-completions";

#[test]
fn an_mcp_server_registered_while_loading_connects_and_serves_the_model() {
    if !have_node("an_mcp_server_registered_while_loading_connects_and_serves_the_model") {
        return;
    }
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        API,
        &[("e", "mcp__reg__echo", json!({"text": "through the bridge"}))],
    )));
    mock.push(Reply::text(API, "done"));
    let m = marker("ext-mcp");
    let pi = PiCommand::for_mock(API, &mock).env("PI_TEST_MARKER", &m);
    let config = fake_entry(json!({"exposure": "direct"}));
    let ext = module(
        &pi,
        "mcp.mjs",
        &r#"
export default function (pi) {
  const refused = [];
  for (const [name, config] of [["bad name", { command: "x" }], ["empty", {}]]) {
    try { pi.registerMcpServer(name, config); } catch (e) { refused.push(e.message); }
  }
  pi.registerMcpServer("reg", CONFIG);
  pi.registerMcpServer("gone", CONFIG);
  pi.unregisterMcpServer("gone");
  pi.on("before_agent_start", () => ({
    message: { customType: "mcp", display: false,
      content: `refused=${refused.join("|")} servers=${pi.getMcpServers().map((s) => s.name).join(",")}` },
  }));
}
"#
        .replace("CONFIG", &config.to_string()),
    );
    let out = with_ext(pi, &ext).args(["-p", "echo it"]).run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "done\n", "{}", out.stderr);
    let requests = mock.requests();
    let first = requests[0].body_text();
    assert!(first.contains("Invalid MCP server name \\\"bad name\\\""), "{first}");
    assert!(first.contains("needs a \\\"command\\\" or a \\\"url\\\""), "{first}");
    assert!(first.contains("servers=reg"), "{first}");
    assert!(first.contains("mcp__reg__echo"), "the server's tools are declared: {first}");
    assert!(!first.contains("mcp__gone__"), "{first}");
    assert!(requests[1].body_text().contains("through the bridge"));
    assert!(survivors(&m).is_empty(), "the registered server outlived pi");
}
