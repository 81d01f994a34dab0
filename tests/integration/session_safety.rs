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

fn recovery_of(file: &Path) -> PathBuf {
    let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
    file.with_file_name(format!("{stem}.recovered.jsonl"))
}

#[test]
fn a_second_pi_creating_the_same_new_session_file_never_replaces_the_first() {
    let mock = MockServer::with_replies([Reply::text(API, "answer of the rpc pi")]);
    let pi = PiCommand::for_mock(API, &mock);
    let file = pi.cwd().join("shared.jsonl");
    let pi = pi.args(["--mode", "rpc", "--session", file.to_str().unwrap()]);
    // The RPC pi opens the path while it does not exist yet ...
    let mut talk = pi.converse();
    talk.send(r#"{"id":"s","type":"get_state"}"#);
    talk.expect("state", |v| v["id"] == "s");
    assert!(!file.exists());
    // ... another pi that takes no lease (the TypeScript pi) creates it with its first turn
    // (a second pi here is refused at start: see the lease test) ...
    let theirs = exchange(pi.cwd());
    std::fs::write(&file, &theirs).unwrap();
    // ... and the RPC pi's first write leaves it alone, says so and keeps its own turn.
    talk.send(r#"{"id":"p","type":"prompt","message":"first terminal"}"#);
    let event = talk.expect("session_write_error", |v| {
        v["type"] == "session_write_error"
    });
    let error = event["error"].as_str().unwrap();
    let recovery = recovery_of(&file);
    assert!(error.contains("another pi process created"), "{error}");
    assert!(error.contains(recovery.to_str().unwrap()), "{error}");
    talk.expect("agent_end", |v| v["type"] == "agent_end");
    let (code, _, stderr) = talk.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), theirs);
    let ours = std::fs::read_to_string(&recovery).unwrap();
    assert!(ours.starts_with("{\"type\":\"session\""), "{ours}");
    for text in ["first terminal", "answer of the rpc pi"] {
        assert!(ours.contains(text), "{text} kept: {ours}");
    }
}

#[test]
fn a_session_file_replaced_or_truncated_under_pi_is_not_appended_to() {
    let mock = MockServer::with_replies([
        Reply::text(API, "one"),
        Reply::text(API, "two"),
        Reply::text(API, "three"),
    ]);
    let pi = PiCommand::for_mock(API, &mock);
    let file = pi.cwd().join("s.jsonl");
    let pi = pi.args(["--mode", "rpc", "--session", file.to_str().unwrap()]);
    let mut talk = pi.converse();
    talk.send(r#"{"id":"p1","type":"prompt","message":"first"}"#);
    talk.expect("agent_end", |v| v["type"] == "agent_end");
    // Another program puts a different session at the path.
    let foreign = exchange(pi.cwd());
    std::fs::write(pi.cwd().join("foreign.tmp"), &foreign).unwrap();
    std::fs::rename(pi.cwd().join("foreign.tmp"), &file).unwrap();
    talk.send(r#"{"id":"p2","type":"prompt","message":"second"}"#);
    let event = talk.expect("session_write_error", |v| {
        v["type"] == "session_write_error"
    });
    let error = event["error"].as_str().unwrap().to_string();
    let recovery = recovery_of(&file);
    assert!(error.contains("replaced"), "{error}");
    assert!(error.contains(recovery.to_str().unwrap()), "{error}");
    talk.expect("agent_end", |v| v["type"] == "agent_end");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), foreign);
    let ours = std::fs::read_to_string(&recovery).unwrap();
    for text in ["first", "one", "second", "two"] {
        assert!(ours.contains(&format!("\"{text}\"")), "{text} kept: {ours}");
    }
    // The recovery file, truncated in turn, is left as it is too.
    let header = ours.lines().next().unwrap().to_string() + "\n";
    std::fs::OpenOptions::new()
        .write(true)
        .open(&recovery)
        .unwrap()
        .set_len(header.len() as u64)
        .unwrap();
    talk.send(r#"{"id":"p3","type":"prompt","message":"third"}"#);
    let event = talk.expect("session_write_error", |v| {
        v["type"] == "session_write_error"
    });
    assert!(
        event["error"].as_str().unwrap().contains("truncated"),
        "{event}"
    );
    talk.expect("agent_end", |v| v["type"] == "agent_end");
    assert_eq!(std::fs::read_to_string(&recovery).unwrap(), header);
    let (code, _, stderr) = talk.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

/// `pi` run through `sh` with a file-size limit (SIGXFSZ ignored, so a write past it fails
/// with EFBIG as on a full disk).
fn with_file_size_limit(pi: &PiCommand, blocks_of_512: u64) -> std::process::Output {
    let inner = pi.command();
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f {blocks_of_512}; exec \"$0\" \"$@\""
        ))
        .arg(inner.get_program())
        .args(inner.get_args())
        .current_dir(inner.get_current_dir().unwrap())
        .env_clear()
        .stdin(std::process::Stdio::null());
    for (k, v) in inner.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    cmd.output().unwrap()
}

#[test]
fn a_write_on_a_full_disk_is_cut_back_to_the_last_whole_line_and_print_mode_fails() {
    let mock = MockServer::with_replies([Reply::text(API, "an answer that cannot be saved")]);
    let pi = PiCommand::for_mock(API, &mock);
    std::fs::create_dir_all(pi.cwd()).unwrap();
    let file = pi.cwd().join("s.jsonl");
    // A session 40 bytes short of the limit (8 blocks of 512): the next entry cannot fit.
    let mut text = exchange(pi.cwd());
    let pad = 4096 - 40 - text.len() - 1;
    text.push_str(&format!(
        "{{\"type\":\"custom\",\"customType\":\"pad\",\"data\":\"{}\",\"id\":\"c1c2c3c4\",\"parentId\":\"b1b2c3d4\",\"timestamp\":\"2025-01-01T00:00:03.000Z\"}}\n",
        "x".repeat(pad - 125)
    ));
    std::fs::write(&file, &text).unwrap();
    assert!(text.len() < 4096 && text.len() > 4000, "{}", text.len());
    let pi = pi.args(["-p", "--session", file.to_str().unwrap(), "hi"]);
    let out = with_file_size_limit(&pi, 8);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains("Could not write session file"), "{stderr}");
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    // Not a byte of the line that did not fit stays behind.
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

#[test]
fn a_session_another_pi_is_writing_is_refused_with_the_ways_out() {
    let mock = MockServer::with_replies([Reply::text(API, "one"), Reply::text(API, "two")]);
    let pi = PiCommand::for_mock(API, &mock);
    std::fs::create_dir_all(pi.cwd()).unwrap();
    let file = pi.cwd().join("s.jsonl");
    let text = exchange(pi.cwd());
    std::fs::write(&file, &text).unwrap();
    let session = file.to_str().unwrap();
    let second = pi.again().args([
        "--model",
        "mock/mock-model",
        "-p",
        "--session",
        session,
        "hi",
    ]);
    let third = pi
        .again()
        .args(["--model", "mock/mock-model", "--mode", "rpc"]);
    let fourth = pi.again().args([
        "--model",
        "mock/mock-model",
        "-p",
        "--session",
        session,
        "hi",
    ]);
    let pi = pi.args(["--mode", "rpc", "--session", session]);
    let mut talk = pi.converse();
    talk.send(r#"{"id":"s","type":"get_state"}"#);
    talk.expect("state", |v| v["id"] == "s");
    // A second pi in print mode: exits 1 naming the ways out, writes nothing.
    let out = second.run();
    out.assert_code(1).assert_no_panic();
    assert!(
        out.stderr.contains("in use by another pi process"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(&format!("--fork {session}")),
        "{}",
        out.stderr
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    // An RPC client switching to it gets an error it can show.
    let switch = serde_json::json!({"id":"w","type":"switch_session","sessionPath": session});
    let third = third.stdin(format!("{switch}\n"));
    let out = third.run();
    out.assert_code(0).assert_no_panic();
    let answer = &out.json_lines()[0];
    assert_eq!(answer["success"], false, "{answer}");
    assert!(
        answer["error"].as_str().unwrap().contains("in use"),
        "{answer}"
    );
    // The holder dies without a word (kill -9): the lease dies with it.
    talk.signal(9);
    let _ = talk.wait_exit();
    let out = fourth.run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(mock.request_count(), 1);
    assert!(std::fs::read_to_string(&file).unwrap().starts_with(&text));
}

#[test]
fn the_terminal_offers_to_fork_or_open_read_only_a_session_another_pi_is_writing() {
    use crate::support::pty::PtyChild;
    use std::time::Duration;
    let mock = MockServer::with_replies([Reply::text(API, "read-only answer")]);
    let pi = PiCommand::for_mock(API, &mock);
    std::fs::create_dir_all(pi.cwd()).unwrap();
    let file = pi.cwd().join("s.jsonl");
    let text = exchange(pi.cwd());
    std::fs::write(&file, &text).unwrap();
    let session = file.to_str().unwrap().to_string();
    let open = || {
        pi.again()
            .args(["--model", "mock/mock-model", "--session", &session])
    };
    let mut holder = pi
        .again()
        .args(["--mode", "rpc", "--session", &session])
        .converse();
    holder.send(r#"{"id":"s","type":"get_state"}"#);
    holder.expect("state", |v| v["id"] == "s");
    let sessions = session_dir_of(pi.agent_dir(), pi.cwd());

    // Cancel: nothing opened, nothing written.
    let mut child = PtyChild::spawn(open().command(), 100, 30);
    child.wait_for("in use by another pi process", Duration::from_secs(10));
    child.wait_for("Read-only", Duration::from_secs(5));
    child.send("\x1b");
    assert!(child.wait_exit(Duration::from_secs(10)).success());

    // Read-only: the conversation is there and goes on, but the file is the holder's alone.
    let mut child = PtyChild::spawn(open().command(), 100, 30);
    child.wait_for("Read-only", Duration::from_secs(10));
    child.send("\x1b[B");
    child.send("\r");
    child.wait_for("nothing in this session is saved", Duration::from_secs(10));
    child.send("hello there");
    child.send("\r");
    child.wait_for("read-only answer", Duration::from_secs(10));
    child.send("\x04");
    child.wait_exit(Duration::from_secs(10));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    assert!(!sessions.exists() || std::fs::read_dir(&sessions).unwrap().next().is_none());

    // Fork: a copy in this folder's sessions, the original untouched.
    let mut child = PtyChild::spawn(open().command(), 100, 30);
    child.wait_for("Fork", Duration::from_secs(10));
    child.send("\r");
    child.wait_for("mock-model", Duration::from_secs(10));
    child.send("\x04");
    child.wait_exit(Duration::from_secs(10));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    let forks: Vec<_> = std::fs::read_dir(&sessions)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .collect();
    assert_eq!(forks.len(), 1, "{forks:?}");
    let copy = std::fs::read_to_string(forks[0].path()).unwrap();
    assert!(copy.contains("\"parentSession\""), "{copy}");
    holder.finish();
}
