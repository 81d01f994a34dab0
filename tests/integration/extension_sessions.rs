//! Extensions and the session lifecycle in RPC mode: `session_before_fork` and
//! `session_before_compact` vetoes answer `{cancelled: true}` / "Compaction cancelled" and leave
//! the session alone; an allowed `new_session` is followed by `session_start` with reason
//! `new`.

use serde_json::Value;

use crate::support::mock::{MockServer, Reply};
use crate::support::pi::PiCommand;

const API: &str = "openai-completions";

/// An extension that vetoes forks and compactions and logs every event it sees to
/// `events.jsonl` in the working directory.
const VETO: &str = r#"#!/usr/bin/env python3
import json, sys
log = open("events.jsonl", "a")
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "register", "protocol": 1, "events": [
            "session_start", "session_before_fork", "session_before_compact",
            "session_before_switch"]}), flush=True)
    elif msg["type"] == "event":
        log.write(json.dumps({"event": msg["event"], "data": msg["data"]}) + "\n")
        log.flush()
        if msg.get("wait"):
            veto = msg["event"] in ("session_before_fork", "session_before_compact")
            print(json.dumps({"type": "reply", "id": msg["id"],
                              "result": {"cancel": True} if veto else None}), flush=True)
"#;

fn logged(pi: &PiCommand) -> Vec<Value> {
    std::fs::read_to_string(pi.cwd().join("events.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[test]
fn rpc_fork_and_compact_honour_an_extension_veto() {
    let mock = MockServer::with_replies([Reply::text(API, "an answer")]);
    let pi = PiCommand::for_mock(API, &mock)
        .args(["--mode", "rpc"])
        .write_file(".pi/veto.py", VETO);
    let ext = pi.cwd().join(".pi/veto.py");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&ext, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let pi = pi.args(["-e", ext.to_str().unwrap()]);
    let mut talk = pi.converse();
    talk.send(r#"{"type":"prompt","message":"first question"}"#);
    talk.expect("agent_end", |v| v["type"] == "agent_end");
    let state = loop {
        talk.send(r#"{"id":"s","type":"get_state"}"#);
        let state = talk.expect("state", |v| v["id"] == "s");
        if state["data"]["isStreaming"] == false {
            break state;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let file = state["data"]["sessionFile"].clone();

    talk.send(r#"{"id":"m","type":"get_fork_messages"}"#);
    let messages = talk.expect("fork messages", |v| v["id"] == "m");
    let entry = messages["data"]["messages"][0]["entryId"].clone();
    talk.send(&serde_json::json!({"id": "f", "type": "fork", "entryId": entry}).to_string());
    let fork = talk.expect("fork", |v| v["id"] == "f");
    assert_eq!(fork["data"]["cancelled"], true, "{fork}");

    talk.send(r#"{"id":"c","type":"compact"}"#);
    let compact = talk.expect("compact", |v| v["id"] == "c");
    assert_eq!(compact["success"], false);
    assert_eq!(compact["error"], "Compaction cancelled");

    talk.send(r#"{"id":"s2","type":"get_state"}"#);
    let after = talk.expect("state", |v| v["id"] == "s2");
    assert_eq!(after["data"]["sessionFile"], file, "still the same session");

    talk.send(r#"{"id":"n","type":"new_session"}"#);
    let new = talk.expect("new session", |v| v["id"] == "n");
    assert_eq!(new["data"]["cancelled"], false);
    let (code, _, stderr) = talk.finish();
    assert_eq!(code, Some(0), "{stderr}");

    let events = logged(&pi);
    let names: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    assert!(names.contains(&"session_before_fork"), "{names:?}");
    assert!(names.contains(&"session_before_compact"), "{names:?}");
    let fork_data = &events
        .iter()
        .find(|e| e["event"] == "session_before_fork")
        .unwrap()["data"];
    assert_eq!(fork_data["entryId"], entry);
    assert_eq!(fork_data["position"], "before");
    let switch = events
        .iter()
        .find(|e| e["event"] == "session_before_switch")
        .expect("asked before new_session");
    assert_eq!(switch["data"]["reason"], "new");
    let starts: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "session_start")
        .map(|e| &e["data"])
        .collect();
    assert_eq!(starts[0]["reason"], "startup");
    let last = starts.last().unwrap();
    assert_eq!(last["reason"], "new");
    assert_eq!(last["previousSessionFile"], file);
}

/// An extension whose `before_agent_start` handler waits for `go` to appear before answering.
const SLOW_START: &str = r#"#!/usr/bin/env python3
import json, os, sys, time
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "register", "protocol": 1, "events": ["before_agent_start"]}), flush=True)
    elif msg["type"] == "event" and msg.get("wait"):
        open("started", "w").close()
        while not os.path.exists("go"):
            time.sleep(0.01)
        print(json.dumps({"type": "reply", "id": msg["id"], "result": None}), flush=True)
"#;

/// pi 1.6.0: a prompt sent while a run is starting (its `before_agent_start` handlers still
/// running) counts as busy: it needs `streamingBehavior`, and with one it is queued.
#[test]
fn a_prompt_during_before_agent_start_counts_as_busy() {
    let mock = MockServer::with_replies([
        Reply::text(API, "first answer"),
        Reply::text(API, "follow-up answer"),
    ]);
    let pi = PiCommand::for_mock(API, &mock)
        .args(["--mode", "rpc"])
        .write_file(".pi/slow.py", SLOW_START);
    let ext = pi.cwd().join(".pi/slow.py");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&ext, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let pi = pi.args(["-e", ext.to_str().unwrap()]);
    let started = pi.cwd().join("started");
    let go = pi.cwd().join("go");
    let mut talk = pi.converse();
    talk.send(r#"{"id":"p1","type":"prompt","message":"first"}"#);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !started.exists() {
        assert!(std::time::Instant::now() < deadline, "hook never ran");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    talk.send(r#"{"id":"p2","type":"prompt","message":"second"}"#);
    talk.send(r#"{"id":"p3","type":"prompt","message":"third","streamingBehavior":"followUp"}"#);
    std::fs::write(&go, "").unwrap();
    let refused = talk.expect("p2", |v| v["id"] == "p2");
    assert_eq!(refused["success"], false, "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("Specify streamingBehavior"),
        "{refused}"
    );
    let queued = talk.expect("p3", |v| v["id"] == "p3");
    assert_eq!(queued["success"], true, "{queued}");
    talk.expect("agent_end", |v| v["type"] == "agent_end");
    let (code, _, stderr) = talk.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let bodies: Vec<String> = mock.requests().iter().map(|r| r.body.to_string()).collect();
    assert!(bodies.iter().any(|b| b.contains("third")), "{bodies:?}");
}
