//! Memory against the length of a session (issue 35): one RPC process over many prompts with
//! large tool results, and resuming a large uncompacted session, hold the conversation about
//! once. Memory bounds read from /proc, no timing; `scripts/long_session.py` measures the same
//! at bench scale.

use std::io::Write;
use std::path::Path;

use serde_json::json;

use crate::support::mock::sse_tool_calls;
use crate::support::{MockServer, PiCommand, Reply};

const API: &str = "openai-completions";

/// (VmRSS, VmHWM) of a live process, in bytes.
fn memory(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    let field = |name: &str| -> u64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .expect("VmRSS/VmHWM in /proc status")
    };
    (field("VmRSS:") * 1024, field("VmHWM:") * 1024)
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

#[test]
fn rss_grows_with_the_session_file_not_several_times_faster() {
    const WARM_UP: usize = 5;
    const PROMPTS: usize = 60;
    let mock = MockServer::start();
    // Each prompt: a bash call printing ~40 KB (under the tool's line and byte limits), then
    // a short answer. Lines differ per turn so nothing is shared by accident.
    for i in 0..PROMPTS {
        let command =
            format!("yes 'turn {i:04} of the memory test: a line of tool output' | head -c 40000");
        mock.push(Reply::sse(sse_tool_calls(
            API,
            &[(&format!("call_{i}"), "bash", json!({ "command": command }))],
        )));
        mock.push(Reply::text(API, &format!("done {i}")));
    }
    let cmd = PiCommand::for_mock(API, &mock);
    let file = cmd.cwd().join("long.jsonl");
    let mut pi = cmd
        .again()
        .args(["--model", "mock/mock-model", "--mode", "rpc", "--session"])
        .arg(file.to_string_lossy())
        .converse();
    let mut at = Vec::new();
    for i in 0..PROMPTS {
        pi.send(&json!({"type": "prompt", "message": format!("turn {i}")}).to_string());
        pi.expect("agent_end", |v| v["type"] == "agent_end");
        if i + 1 == WARM_UP || i + 1 == PROMPTS {
            // The worker hands the session back just after agent_end: a query is answered
            // only once it has.
            pi.send(r#"{"id":"s","type":"get_state"}"#);
            pi.expect("get_state", |v| v["id"] == "s");
            at.push((memory(pi.pid()).0, size(&file)));
        }
    }
    let (code, _, stderr) = pi.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let (rss_growth, file_growth) = (at[1].0.saturating_sub(at[0].0), at[1].1 - at[0].1);
    assert!(
        file_growth > 2_000_000,
        "the session grew by {file_growth} bytes only"
    );
    assert!(
        rss_growth < 4 * file_growth,
        "RSS grew by {rss_growth} bytes while the session file grew by {file_growth}: the \
         conversation is held several times"
    );
}

/// A linear session of about `bytes`: user prompt, bash call, a 30 KB result, answer.
fn write_big_session(path: &Path, bytes: u64) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(
        f,
        r#"{{"type":"session","version":3,"id":"019a0000-0000-7000-8000-000000000035","timestamp":"2026-11-21T00:00:00.000Z","cwd":"/tmp"}}"#
    )
    .unwrap();
    let usage = json!({"input": 100, "output": 50, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 150,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}});
    let (mut written, mut n, mut parent) = (0u64, 0u64, serde_json::Value::Null);
    let mut entry = |f: &mut dyn Write, message: serde_json::Value, written: &mut u64| {
        n += 1;
        let id = format!("{n:08x}");
        let line = json!({"type": "message", "id": id, "parentId": parent,
            "timestamp": "2026-11-21T00:00:01.000Z", "message": message})
        .to_string();
        writeln!(f, "{line}").unwrap();
        *written += line.len() as u64 + 1;
        parent = json!(id);
    };
    let mut turn = 0;
    while written < bytes {
        turn += 1;
        let call = format!("call_{turn}");
        let output: String = (0..600)
            .map(|l| format!("turn {turn:06} line {l:04}: some output of the command\n"))
            .collect();
        entry(
            &mut f,
            json!({"role": "user", "content": format!("turn {turn}"), "timestamp": turn}),
            &mut written,
        );
        entry(
            &mut f,
            json!({"role": "assistant", "content": [{"type": "toolCall", "id": call, "name": "bash",
            "arguments": {"command": "cat log"}}], "api": API, "provider": "mock", "model": "mock-model",
            "usage": usage, "stopReason": "toolUse", "timestamp": turn}),
            &mut written,
        );
        entry(
            &mut f,
            json!({"role": "toolResult", "toolCallId": call, "toolName": "bash",
            "content": [{"type": "text", "text": output}], "isError": false, "timestamp": turn}),
            &mut written,
        );
        entry(
            &mut f,
            json!({"role": "assistant", "content": [{"type": "text", "text": "done"}], "api": API,
            "provider": "mock", "model": "mock-model", "usage": usage, "stopReason": "stop",
            "timestamp": turn}),
            &mut written,
        );
    }
}

#[test]
fn resuming_a_large_session_holds_it_about_once() {
    let mock = MockServer::start();
    let cmd = PiCommand::for_mock(API, &mock);
    let file = cmd.cwd().join("big.jsonl");
    write_big_session(&file, 50_000_000);
    let bytes = size(&file);
    let mut pi = cmd
        .again()
        .args(["--model", "mock/mock-model", "--mode", "rpc", "--session"])
        .arg(file.to_string_lossy())
        .converse();
    pi.send(r#"{"id":"s","type":"get_state"}"#);
    let state = pi.expect("get_state", |v| v["id"] == "s");
    assert!(
        state["data"]["messageCount"].as_u64().unwrap() > 1000,
        "{state}"
    );
    // pi returns freed memory after answering; a second answer means the first is done.
    pi.send(r#"{"id":"t","type":"get_state"}"#);
    pi.expect("get_state", |v| v["id"] == "t");
    let (rss, _) = memory(pi.pid());
    // A client replaying the conversation (pi-acp after session/load) asks for every message:
    // they are read and written one at a time, never all held at once beside the agent's.
    pi.send(r#"{"id":"m","type":"get_messages"}"#);
    let messages = pi.expect("get_messages", |v| v["id"] == "m");
    let count = messages["data"]["messages"].as_array().map_or(0, Vec::len) as u64;
    assert_eq!(count, state["data"]["messageCount"].as_u64().unwrap());
    let (_, peak) = memory(pi.pid());
    let (code, _, stderr) = pi.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        rss < 2 * bytes,
        "resuming a {bytes}-byte session left pi at {rss} bytes of RSS"
    );
    assert!(
        peak < 2 * bytes,
        "answering get_messages for a {bytes}-byte session took pi to {peak} bytes of RSS"
    );
}
