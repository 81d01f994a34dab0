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

fn alive(pid: i32) -> bool {
    // A zombie still answers kill(0); only count processes that are not zombies.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

#[test]
fn sigint_during_bash_kills_the_whole_process_group() {
    let api = "openai-completions";
    let mock = MockServer::start();
    let cmd = "sleep 100 & echo $! > pids; sleep 100 & echo $! >> pids; wait";
    mock.push(Reply::sse(sse_tool_calls(
        api,
        &[("b", "bash", json!({"command": cmd}))],
    )));
    let pi = PiCommand::for_mock(api, &mock).args(["-p", "run it"]);
    let pids_file = pi.cwd().join("pids");
    let child = pi.spawn();
    let t = std::time::Instant::now();
    let pids = loop {
        let text = std::fs::read_to_string(&pids_file).unwrap_or_default();
        let pids: Vec<i32> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
        if pids.len() == 2 {
            break pids;
        }
        assert!(
            t.elapsed() < std::time::Duration::from_secs(10),
            "bash never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    child.signal(libc::SIGINT);
    let out = child.wait();
    out.assert_code(130).assert_no_panic();
    assert!(
        out.elapsed < std::time::Duration::from_secs(1),
        "took {:?}",
        out.elapsed
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(500);
    while pids.iter().any(|p| alive(*p)) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    for p in pids {
        assert!(!alive(p), "sleep {p} survived the abort");
    }
}

#[test]
fn bad_tool_input_gets_clear_errors_and_changes_nothing() {
    let api = "anthropic-messages";
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        api,
        &[
            ("r", "read", json!({"path": "missing.txt"})),
            (
                "e1",
                "edit",
                json!({"path": "f.txt", "edits": [{"oldText": "absent", "newText": "x"}]}),
            ),
            (
                "e2",
                "edit",
                json!({"path": "f.txt", "edits": [{"oldText": "dup", "newText": "x"}]}),
            ),
            ("b", "bash", json!({"cmd": "ls"})),
            ("n", "nonexistent_tool", json!({})),
        ],
    )));
    mock.push(Reply::text(api, "ok"));
    let pi = PiCommand::for_mock(api, &mock)
        .write_file("f.txt", "dup\ndup\n")
        .args(["-p", "try"]);
    let cwd = pi.cwd().to_path_buf();
    let out = pi.run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(
        std::fs::read_to_string(cwd.join("f.txt")).unwrap(),
        "dup\ndup\n",
        "file untouched"
    );
    let back = mock.requests()[1].body_text();
    for expected in [
        "ENOENT: no such file or directory",
        "Could not find the exact text in f.txt",
        "Found 2 occurrences of the text in f.txt",
        "Validation failed for tool \\\"bash\\\"",
        "Tool nonexistent_tool not found",
    ] {
        assert!(back.contains(expected), "missing {expected:?} in {back}");
    }
}

/// pi 1.6: `find`'s path patterns are relative to the searched directory (`sub/*.txt` no
/// longer reaches `pkg/sub/`), and a leading `./` is dropped instead of matching nothing.
#[test]
fn find_path_patterns_are_relative_to_the_searched_directory() {
    let api = "openai-completions";
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        api,
        &[
            ("anchored", "find", json!({"pattern": "sub/*.txt"})),
            ("dot", "find", json!({"pattern": "./pkg/*/*.txt"})),
        ],
    )));
    mock.push(Reply::text(api, "done"));
    let out = PiCommand::for_mock(api, &mock)
        .write_file("sub/a.txt", "")
        .write_file("pkg/sub/c.txt", "")
        .args(["-p", "--tools", "find", "find them"])
        .run();
    out.assert_code(0).assert_no_panic();
    let body = &mock.requests()[1].body;
    let results: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(results, ["sub/a.txt", "pkg/sub/c.txt"], "{body}");
}

/// pi 1.6.0: a tool-result message carries `durationMs` (how long the tool ran), so it reaches
/// the session file; a call that never ran has none.
#[test]
fn tool_result_messages_carry_their_duration_into_the_session() {
    let api = "openai-completions";
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        api,
        &[
            ("ran", "bash", json!({"command": "echo hi"})),
            ("bad", "nope", json!({})),
        ],
    )));
    mock.push(Reply::text(api, "done"));
    let cmd = PiCommand::for_mock(api, &mock).args(["-p", "go"]);
    let agent_dir = cmd.agent_dir().to_path_buf();
    cmd.run().assert_code(0).assert_no_panic();
    let file = crate::support::session::the_session_file(&agent_dir);
    let results: Vec<serde_json::Value> = std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|e| e["message"]["role"] == "toolResult")
        .map(|e| e["message"].clone())
        .collect();
    assert_eq!(results.len(), 2);
    assert!(results[0]["durationMs"].is_u64(), "{}", results[0]);
    let keys: Vec<&str> = results[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "role",
            "toolCallId",
            "toolName",
            "content",
            "isError",
            "durationMs",
            "timestamp"
        ]
    );
    assert!(results[1].get("durationMs").is_none(), "{}", results[1]);
}

/// pi 1.6.0: `read` and `bash` results carry `structuredContent` for programmatic callers,
/// shown in `tool_execution_end`, neither sent to the model nor stored in the session.
#[test]
fn read_and_bash_results_carry_structured_content() {
    let api = "openai-completions";
    let mock = MockServer::start();
    mock.push(Reply::sse(sse_tool_calls(
        api,
        &[
            ("r", "read", json!({"path": "a.txt"})),
            ("b", "bash", json!({"command": "echo hi"})),
        ],
    )));
    mock.push(Reply::text(api, "done"));
    let cmd = PiCommand::for_mock(api, &mock)
        .write_file("a.txt", "alpha\n")
        .args(["--mode", "json", "-p", "go"]);
    let agent_dir = cmd.agent_dir().to_path_buf();
    let out = cmd.run();
    out.assert_code(0).assert_no_panic();
    let ends: Vec<serde_json::Value> = out
        .json_lines()
        .into_iter()
        .filter(|e| e["type"] == "tool_execution_end")
        .collect();
    let by_id = |id: &str| ends.iter().find(|e| e["toolCallId"] == id).unwrap().clone();
    assert_eq!(by_id("r")["result"]["structuredContent"], json!("alpha\n"));
    let sc = &by_id("b")["result"]["structuredContent"];
    assert_eq!(sc["output"], "hi\n");
    assert_eq!(sc["truncated"], false);
    assert_eq!(sc["exit_code"], 0);
    assert!(sc["wall_time_seconds"].is_number(), "{sc}");
    assert!(sc.get("full_output_path").is_none(), "{sc}");
    assert!(!mock.requests()[1].body_text().contains("structuredContent"));
    let file = crate::support::session::the_session_file(&agent_dir);
    let text = std::fs::read_to_string(file).unwrap();
    assert!(!text.contains("structuredContent"), "{text}");
}
