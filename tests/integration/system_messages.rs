//! pi 1.x's system messages in session files: the checkpoint before the first prompt, patches
//! when the prompt or tools change, older sessions getting theirs on the next prompt, the
//! request built from the replayed state, and the events JSON mode prints for them.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::support::{MockServer, PiCommand, Reply};

const API: &str = "openai-completions";

fn only_session(agent_dir: &Path) -> PathBuf {
    let mut found = Vec::new();
    for d in std::fs::read_dir(agent_dir.join("sessions"))
        .unwrap()
        .flatten()
    {
        for f in std::fs::read_dir(d.path()).unwrap().flatten() {
            found.push(f.path());
        }
    }
    assert_eq!(found.len(), 1, "{found:?}");
    found.remove(0)
}

fn lines(p: &Path) -> Vec<Value> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn role(entry: &Value) -> &str {
    entry["message"]["role"].as_str().unwrap_or("")
}

fn system_prompt(body: &Value) -> String {
    assert!(
        ["system", "developer"].contains(&body["messages"][0]["role"].as_str().unwrap()),
        "{body}"
    );
    body["messages"][0]["content"].as_str().unwrap().to_string()
}

fn request_tools(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

#[test]
fn the_first_prompt_records_a_checkpoint_and_later_changes_a_patch() {
    let mock = MockServer::with_replies([
        Reply::text(API, "one"),
        Reply::text(API, "two"),
        Reply::text(API, "three"),
    ]);
    let pi = PiCommand::for_mock(API, &mock);
    pi.again()
        .args(["--tools", "read,bash", "-p", "hi"])
        .run()
        .assert_code(0);
    let file = only_session(pi.agent_dir());
    let entries = lines(&file);
    let kinds: Vec<String> = entries[1..]
        .iter()
        .map(|e| format!("{}:{}", e["type"].as_str().unwrap(), role(e)))
        .collect();
    assert_eq!(
        kinds,
        [
            "model_change:",
            "thinking_level_change:",
            "message:system",
            "message:user",
            "message:assistant"
        ]
    );
    // Before the user message, in the parent chain, with pi's key order.
    let (system, user) = (&entries[3], &entries[4]);
    assert_eq!(system["parentId"], entries[2]["id"]);
    assert_eq!(user["parentId"], system["id"]);
    let keys: Vec<&str> = system["message"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["role", "content", "sections", "timestamp", "toolsAdded"]
    );
    let sections = system["message"]["sections"].as_object().unwrap();
    let section_names: Vec<&str> = sections.keys().map(String::as_str).collect();
    assert_eq!(section_names, ["preamble", "tools", "rules", "cwd"]);
    assert_eq!(
        sections["cwd"],
        format!("<cwd>\n{}\n</cwd>", pi.cwd().display())
    );
    assert_eq!(names(&system["message"]["toolsAdded"]), ["read", "bash"]);
    assert!(system["message"]["toolsAdded"][0]["parameters"]["properties"]["path"].is_object());
    // The request sends exactly what the checkpoint replays to: no date line.
    let requests = mock.requests();
    let joined: Vec<&str> = sections.values().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(system_prompt(&requests[0].body), joined.join("\n\n"));
    assert!(!system_prompt(&requests[0].body).contains("Current date"));

    // Same prompt and tools: nothing new is declared.
    pi.again()
        .args(["--tools", "read,bash", "-c", "-p", "again"])
        .run()
        .assert_code(0);
    let after = lines(&file);
    assert_eq!(after.len(), entries.len() + 2);
    assert_eq!(role(&after[entries.len()]), "user");
    assert_eq!(system_prompt(&mock.requests()[1].body), joined.join("\n\n"));

    // Fewer tools: a patch with the changed sections and the tool taken away.
    pi.again()
        .args(["--tools", "read", "-c", "-p", "less"])
        .run()
        .assert_code(0);
    let last = lines(&file);
    let patch = &last[after.len()];
    assert_eq!(role(patch), "system");
    assert_eq!(role(&last[after.len() + 1]), "user");
    let changed: Vec<&str> = patch["message"]["sections"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(changed, ["tools", "rules"]);
    assert_eq!(patch["message"]["toolsRemoved"], json!([{"name": "bash"}]));
    assert!(patch["message"].get("toolsAdded").is_none());
    let body = &mock.requests()[2].body;
    assert_eq!(request_tools(body), ["read"]);
    assert!(!system_prompt(body).contains("- bash:"), "{body}");
}

#[test]
fn an_older_session_gets_its_checkpoint_and_a_recorded_one_is_replayed() {
    let mock = MockServer::with_replies([Reply::text(API, "a"), Reply::text(API, "b")]);
    let pi = PiCommand::for_mock(API, &mock);
    let header = json!({"type":"session","version":3,"id":"11111111-2222-4333-8444-555555555555",
        "timestamp":"2025-01-01T00:00:00.000Z","cwd": pi.cwd().to_str().unwrap()});
    let user = r#"{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"q"}],"timestamp":1735689601000}}"#;
    let file = pi.cwd().join("old.jsonl");
    std::fs::write(&file, format!("{header}\n{user}\n")).unwrap();
    let path = file.to_str().unwrap();
    pi.again()
        .args(["--tools", "read", "--session", path, "-p", "next"])
        .run()
        .assert_code(0);
    let entries = lines(&file);
    let system = entries
        .iter()
        .position(|e| role(e) == "system")
        .expect("a checkpoint");
    assert!(system > 1, "after the old entries");
    assert_eq!(role(&entries[system + 1]), "user");
    assert!(entries[system]["message"]["sections"]["preamble"].is_string());
    assert_eq!(names(&entries[system]["message"]["toolsAdded"]), ["read"]);

    // A checkpoint another pi wrote (its own prose in `content`, a section we do not write,
    // a tool we do not have) is replayed: the next request carries what it still declares
    // and a patch takes away what we no longer want.
    let foreign = json!({"type":"message","id":"f00df00d","parentId": entries.last().unwrap()["id"],
        "timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"system","content":"Recorded base.",
        "sections":{"extra_rules":"<extra_rules>\nBe brief.\n</extra_rules>"},"timestamp":1_735_689_602_000_i64,
        "toolsAdded":[{"name":"fetch_url","description":"d","parameters":{"type":"object"}}]}});
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str(&format!("{foreign}\n"));
    std::fs::write(&file, text).unwrap();
    pi.again()
        .args(["--tools", "read", "--session", path, "-p", "more"])
        .run()
        .assert_code(0);
    let entries = lines(&file);
    let patch = &entries[entries.len() - 3];
    assert_eq!(role(patch), "system");
    assert_eq!(patch["message"]["sections"]["extra_rules"], Value::Null);
    assert_eq!(
        patch["message"]["toolsRemoved"],
        json!([{"name": "fetch_url"}])
    );
    let prompt = system_prompt(&mock.requests()[1].body);
    assert!(prompt.starts_with("Recorded base.\n\n"), "{prompt}");
    assert!(!prompt.contains("Be brief."), "{prompt}");
    assert_eq!(request_tools(&mock.requests()[1].body), ["read"]);
}

#[test]
fn json_mode_prints_the_system_message_before_the_user_message() {
    let mock = MockServer::with_replies([Reply::text(API, "ok")]);
    let out = PiCommand::for_mock(API, &mock)
        .args(["--mode", "json", "--tools", "read", "hi"])
        .run();
    out.assert_code(0);
    let events = out.json_lines();
    let shown: Vec<String> = events
        .iter()
        .filter(|e| e["type"] == "message_start" || e["type"] == "message_end")
        .map(|e| {
            format!(
                "{}:{}",
                e["type"].as_str().unwrap(),
                e["message"]["role"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        &shown[..4],
        [
            "message_start:system",
            "message_end:system",
            "message_start:user",
            "message_end:user"
        ]
    );
    let system = events
        .iter()
        .find(|e| e["type"] == "message_end" && e["message"]["role"] == "system")
        .unwrap();
    assert_eq!(names(&system["message"]["toolsAdded"]), ["read"]);
    // agent_end lists the run's messages, the system message first.
    let end = events.iter().find(|e| e["type"] == "agent_end").unwrap();
    let roles: Vec<&str> = end["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant"]);
}
