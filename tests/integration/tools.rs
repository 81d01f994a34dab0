//! The agent doing real work through the built-in tools: a scripted multi-turn coding task
//! over two wire formats, and read-only search without ripgrep or fd.

use serde_json::json;

use crate::support::mock::{sse_tool_calls, MockServer, Reply};
use crate::support::pi::PiCommand;

/// Text of every tool result the client sent back in a request body, whatever the API.
fn tool_results_in(body: &serde_json::Value) -> String {
    body.to_string()
}

fn fix_the_bug(api: &str) {
    let mock = MockServer::start();
    let script = "a=1\nb=1\necho $((a + b + 1))\n";
    mock.push(Reply::sse(sse_tool_calls(
        api,
        &[(
            "call_1",
            "write",
            json!({"path": "sum.sh", "content": script}),
        )],
    )));
    mock.push(Reply::sse(sse_tool_calls(
        api,
        &[("call_2", "bash", json!({"command": "sh sum.sh"}))],
    )));
    mock.push(Reply::sse(sse_tool_calls(
        api,
        &[(
            "call_3",
            "edit",
            json!({"path": "sum.sh", "edits": [{"oldText": "a + b + 1", "newText": "a + b"}]}),
        )],
    )));
    mock.push(Reply::sse(sse_tool_calls(
        api,
        &[("call_4", "bash", json!({"command": "sh sum.sh"}))],
    )));
    mock.push(Reply::text(api, "Fixed: sum.sh now prints 2."));

    let cmd = PiCommand::for_mock(api, &mock).args(["-p", "fix the sum script"]);
    let cwd = cmd.cwd().to_path_buf();
    let out = cmd.run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(
        out.stdout, "Fixed: sum.sh now prints 2.\n",
        "stderr: {}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_to_string(cwd.join("sum.sh")).unwrap(),
        "a=1\nb=1\necho $((a + b))\n"
    );

    let reqs = mock.requests();
    assert_eq!(reqs.len(), 5);
    let first = reqs[0].body_text();
    for tool in ["\"read\"", "\"bash\"", "\"edit\"", "\"write\""] {
        assert!(first.contains(tool), "tool {tool} offered to the model");
    }
    assert!(
        tool_results_in(&reqs[1].body).contains("Successfully wrote"),
        "{}",
        reqs[1].body_text()
    );
    assert!(tool_results_in(&reqs[2].body).contains("3"));
    assert!(
        tool_results_in(&reqs[3].body).contains("Successfully replaced 1 block(s) in sum.sh."),
        "{}",
        reqs[3].body_text()
    );
    let last = reqs[4].body_text();
    assert!(last.contains("call_4"), "the last tool result is sent back");
}

#[test]
fn scripted_fix_over_anthropic_messages() {
    fix_the_bug("anthropic-messages");
}

#[test]
fn scripted_fix_over_openai_completions() {
    fix_the_bug("openai-completions");
}

#[test]
fn read_only_tools_search_a_tree_without_rg_or_fd() {
    let api = "openai-completions";
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        api,
        &[
            ("g", "grep", json!({"pattern": "needle"})),
            ("f", "find", json!({"pattern": "*.txt"})),
            ("l", "ls", json!({})),
            ("r", "read", json!({"path": "src/a.txt"})),
        ],
    )));
    mock.push(Reply::text(api, "found it"));
    let out = PiCommand::for_mock(api, &mock)
        .env("PATH", "/usr/bin/does-not-exist")
        .write_file("src/a.txt", "hay\nneedle here\n")
        .write_file("b.md", "nothing\n")
        .args(["-p", "--tools", "read,grep,find,ls", "where is the needle?"])
        .run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "found it\n");
    let reqs = mock.requests();
    let offered = reqs[0].body_text();
    assert!(
        offered.contains("\"grep\"") && !offered.contains("\"bash\""),
        "only the listed tools are offered"
    );
    let back = reqs[1].body_text();
    assert!(back.contains("src/a.txt:2: needle here"), "{back}");
    assert!(
        back.contains("src/a.txt") && back.contains("b.md"),
        "{back}"
    );
    assert!(back.contains("hay\\nneedle here"), "{back}");
}
