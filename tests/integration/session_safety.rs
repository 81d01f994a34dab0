//! Session files on users' bad days (issue 35): a read writes nothing, two pi processes never
//! overwrite each other's file, a full disk leaves no torn line, a file replaced under pi is
//! not appended to.

use std::path::{Path, PathBuf};

use crate::support::{MockServer, PiCommand, Reply};

const API: &str = "openai-completions";

/// A reasoning model that the mock serves, so a thinking level is something to record.
fn thinker_models(mock: &MockServer) -> String {
    crate::support::models_json_for(API, mock.port()).replace(
        r#""id": "mock-model""#,
        r#""id": "mock-model", "reasoning": true"#,
    )
}

/// A finished exchange written by pi, with no thinking level recorded (an older session).
fn exchange(cwd: &Path) -> String {
    let header = serde_json::json!({"type":"session","version":3,"id":"11111111-2222-4333-8444-555555555555",
        "timestamp":"2025-01-01T00:00:00.000Z","cwd": cwd.to_str().unwrap()});
    let user = r#"{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"q"}],"timestamp":1735689601000}}"#;
    let assistant = r#"{"type":"message","id":"b1b2c3d4","parentId":"a1b2c3d4","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"a"}],"api":"openai-completions","provider":"mock","model":"mock-model","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1735689602000}}"#;
    format!("{header}\n{user}\n{assistant}\n")
}

/// Where `-c` looks for the sessions of `cwd`.
fn session_dir_of(agent_dir: &Path, cwd: &Path) -> PathBuf {
    let encoded = format!(
        "--{}--",
        cwd.to_string_lossy()
            .trim_start_matches('/')
            .replace('/', "-")
    );
    agent_dir.join("sessions").join(encoded)
}

const READS: &str = concat!(
    "{\"id\":\"s\",\"type\":\"get_state\"}\n",
    "{\"id\":\"m\",\"type\":\"get_messages\"}\n",
    "{\"id\":\"t\",\"type\":\"get_session_stats\"}\n",
);

#[test]
fn opening_a_session_with_any_flag_and_only_reading_writes_nothing() {
    let mock = MockServer::start();
    let flag_sets: [&[&str]; 5] = [
        &["--model", "mock/mock-model"],
        &["--model", "mock/mock-model", "--thinking", "high"],
        &["--provider", "mock", "--model", "mock-model"],
        &["--model", "mock/mock-model", "--tools", "read"],
        &[],
    ];
    for flags in flag_sets {
        for how in ["--session", "-c", "switch_session"] {
            let pi = PiCommand::for_mock(API, &mock)
                .write_agent_file("models.json", &thinker_models(&mock));
            let text = exchange(pi.cwd());
            let file = match how {
                "-c" => session_dir_of(pi.agent_dir(), pi.cwd())
                    .join("2025-01-01T00-00-00-000Z_s.jsonl"),
                _ => pi.cwd().join("s.jsonl"),
            };
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, &text).unwrap();
            let mut args: Vec<String> = vec!["--mode".into(), "rpc".into()];
            args.extend(flags.iter().map(|s| s.to_string()));
            let mut stdin = String::new();
            match how {
                "--session" => args.extend(["--session".into(), file.display().to_string()]),
                "-c" => args.push("-c".into()),
                _ => {
                    let switch =
                        serde_json::json!({"id":"w","type":"switch_session","sessionPath": file});
                    stdin.push_str(&format!("{switch}\n"));
                }
            }
            stdin.push_str(READS);
            let pi = pi.args(args).stdin(stdin);
            let out = pi.run();
            out.assert_code(0).assert_no_panic();
            let answers = out.json_lines();
            assert!(
                answers
                    .iter()
                    .filter(|v| v["type"] == "response")
                    .all(|v| v["success"] == true),
                "{flags:?} {how}: {}",
                out.stdout
            );
            assert_eq!(
                std::fs::read_to_string(&file).unwrap(),
                text,
                "{flags:?} {how}: a read wrote to the session"
            );
        }
    }
    assert_eq!(mock.request_count(), 0);
}

#[test]
fn what_start_up_implied_is_written_just_before_the_next_prompt() {
    let mock = MockServer::with_replies([Reply::text(API, "second answer")]);
    let pi =
        PiCommand::for_mock(API, &mock).write_agent_file("models.json", &thinker_models(&mock));
    let file = pi.cwd().join("s.jsonl");
    std::fs::create_dir_all(pi.cwd()).unwrap();
    let text = exchange(pi.cwd());
    std::fs::write(&file, &text).unwrap();
    let pi = pi
        .args(["--model", "mock/mock-model", "-p", "--session"])
        .arg(file.display().to_string())
        .arg("again");
    let out = pi.run();
    out.assert_code(0).assert_no_panic();
    let after = std::fs::read_to_string(&file).unwrap();
    assert!(after.starts_with(&text), "{after}");
    let added: Vec<serde_json::Value> = after[text.len()..]
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // As pi writes it: the session's thinking level first, parented on the old leaf.
    assert_eq!(added[0]["type"], "thinking_level_change", "{after}");
    assert_eq!(added[0]["parentId"], "b1b2c3d4");
    assert_eq!(added[1]["type"], "message");
    assert_eq!(added[1]["parentId"], added[0]["id"]);
    assert!(
        added.iter().any(|e| e["message"]["role"] == "user"),
        "{after}"
    );
}
