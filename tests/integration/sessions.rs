//! Sessions on disk: pi's JSONL layout, resuming with -c / --session, --no-session, --fork,
//! and a damaged file that still loads.

use std::path::{Path, PathBuf};

use crate::support::{MockServer, PiCommand, Reply};

const API: &str = "openai-completions";

fn session_files(agent_dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(dirs) = std::fs::read_dir(agent_dir.join("sessions")) else {
        return out;
    };
    for d in dirs.flatten() {
        for f in std::fs::read_dir(d.path()).into_iter().flatten().flatten() {
            if f.path().extension().is_some_and(|e| e == "jsonl") {
                out.push(f.path());
            }
        }
    }
    out.sort();
    out
}

fn lines(p: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn print_mode_writes_a_pi_session_and_continue_resumes_it() {
    let mock = MockServer::with_replies([
        Reply::text(API, "first answer"),
        Reply::text(API, "second answer"),
    ]);
    let first = PiCommand::for_mock(API, &mock).args(["-p", "first question"]);
    let agent_dir = first.agent_dir().to_path_buf();
    let cwd = first.cwd().to_path_buf();
    let again = first.again();
    first.run().assert_code(0);

    let files = session_files(&agent_dir);
    assert_eq!(files.len(), 1, "one session file");
    let dir_name = files[0]
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let encoded = format!(
        "--{}--",
        cwd.to_string_lossy()
            .trim_start_matches('/')
            .replace('/', "-")
    );
    assert_eq!(dir_name, encoded);
    let l = lines(&files[0]);
    let types: Vec<&str> = l.iter().map(|v| v["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "session",
            "model_change",
            "thinking_level_change",
            "message",
            "message",
            "message"
        ]
    );
    assert_eq!(l[0]["version"], 3);
    assert_eq!(l[1]["parentId"], serde_json::Value::Null);
    assert_eq!(l[2]["parentId"], l[1]["id"]);
    assert_eq!(l[3]["message"]["role"], "system");
    assert_eq!(l[5]["message"]["role"], "assistant");
    assert!(files[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .ends_with(&format!("_{}.jsonl", l[0]["id"].as_str().unwrap())));

    // -c from the same project resumes: the model sees the earlier exchange.
    let second = again
        .args(["--model", "mock/mock-model", "-p", "-c", "second question"])
        .run();
    second.assert_code(0);
    assert_eq!(second.stdout, "second answer\n");
    let body = mock.requests()[1].body_text();
    assert!(
        body.contains("first question") && body.contains("first answer"),
        "{body}"
    );
    assert_eq!(
        session_files(&agent_dir).len(),
        1,
        "appended, not a new file"
    );
    assert_eq!(lines(&files[0]).len(), 8);
}

#[test]
fn no_session_writes_nothing_and_json_header_is_still_printed() {
    let mock = MockServer::with_replies([Reply::text(API, "hi")]);
    let pi = PiCommand::for_mock(API, &mock).args(["--mode", "json", "--no-session", "hello"]);
    let agent_dir = pi.agent_dir().to_path_buf();
    let out = pi.run();
    out.assert_code(0);
    assert_eq!(out.json_lines()[0]["type"], "session");
    assert!(session_files(&agent_dir).is_empty());
}

#[test]
fn unknown_session_id_is_an_error() {
    let mock = MockServer::start();
    let out = PiCommand::for_mock(API, &mock)
        .args(["-p", "--session", "deadbeef", "hi"])
        .run();
    out.assert_code(1).assert_no_panic();
    // Word for word pi's line, without an "Error:" prefix.
    assert_eq!(
        out.stderr.trim_end(),
        "No session found matching 'deadbeef'"
    );
    assert_eq!(mock.request_count(), 0);
}

#[test]
fn session_by_id_prefix_and_a_truncated_line_still_load() {
    let mock = MockServer::with_replies([Reply::text(API, "one"), Reply::text(API, "two")]);
    let first = PiCommand::for_mock(API, &mock).args(["-p", "remember ALPHA"]);
    let agent_dir = first.agent_dir().to_path_buf();
    let again = first.again();
    first.run().assert_code(0);
    let file = session_files(&agent_dir).remove(0);
    let id = lines(&file)[0]["id"].as_str().unwrap().to_string();
    // A crash mid-write leaves half a line at the end.
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("{\"type\":\"message\",\"id\":\"torn");
    std::fs::write(&file, text).unwrap();

    let out = again
        .args([
            "--model",
            "mock/mock-model",
            "-p",
            "--session",
            &id[..8],
            "what did I say?",
        ])
        .run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "two\n");
    assert!(
        out.stderr.contains("Warning"),
        "the torn line is reported: {}",
        out.stderr
    );
    assert!(mock.requests()[1].body_text().contains("remember ALPHA"));
    // The new entries start on a fresh line; every complete line still parses.
    let text = std::fs::read_to_string(&file).unwrap();
    let good = text
        .lines()
        .filter(|l| serde_json::from_str::<serde_json::Value>(l).is_ok())
        .count();
    assert_eq!(good, 8, "{text}");
}

#[test]
fn fork_copies_into_a_new_session() {
    let mock = MockServer::with_replies([Reply::text(API, "one"), Reply::text(API, "two")]);
    let first = PiCommand::for_mock(API, &mock).args(["-p", "original"]);
    let agent_dir = first.agent_dir().to_path_buf();
    let again = first.again();
    first.run().assert_code(0);
    let source = session_files(&agent_dir).remove(0);
    let out = again
        .args([
            "--model",
            "mock/mock-model",
            "-p",
            "--fork",
            source.to_str().unwrap(),
            "continue",
        ])
        .run();
    out.assert_code(0);
    let files = session_files(&agent_dir);
    assert_eq!(files.len(), 2);
    let forked = files.into_iter().find(|f| f != &source).unwrap();
    let l = lines(&forked);
    assert_eq!(l[0]["parentSession"], source.to_str().unwrap());
    assert_eq!(lines(&source).len(), 6, "the source is untouched");
    assert!(mock.requests()[1].body_text().contains("original"));
}

/// A small deterministic generator, so a failure can be replayed from its seed.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, bound: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % bound
    }
}

#[test]
fn kill_9_at_random_moments_leaves_loadable_sessions() {
    let mut rng = Lcg(0x5eed);
    let mut killed_with_file = 0;
    for round in 0..200 {
        let mock = MockServer::with_replies([
            Reply::sse(crate::support::mock::sse_tool_calls(
                API,
                &[(
                    "c1",
                    "bash",
                    serde_json::json!({"command": "echo tool-output"}),
                )],
            ))
            .chunk_delay(2),
            Reply::text(API, "the final answer after the tool ran").chunk_delay(2),
        ]);
        let pi = PiCommand::for_mock(API, &mock).args(["-p", "run a tool"]);
        let agent_dir = pi.agent_dir().to_path_buf();
        let child = pi.spawn();
        // The random moment is counted from the first request, so start-up time on a loaded
        // machine does not decide whether the kill lands while the session is being written.
        mock.wait_for_requests(1, std::time::Duration::from_secs(10));
        std::thread::sleep(std::time::Duration::from_millis(rng.next(60)));
        child.signal(libc::SIGKILL);
        let _ = child.wait();
        for file in session_files(&agent_dir) {
            killed_with_file += 1;
            let loaded = pi::session::file::load(&file)
                .unwrap_or_else(|e| panic!("round {round}: {} does not load: {e}", file.display()));
            assert!(
                loaded.warnings.len() <= 1,
                "round {round}: at most the torn last line is lost: {:?}",
                loaded.warnings
            );
            // Every fifth file is also resumed for real.
            if round % 5 == 0 {
                let mock = MockServer::with_replies([Reply::text(API, "resumed")]);
                let out = PiCommand::for_mock(API, &mock)
                    .args(["-p", "--session", file.to_str().unwrap(), "go on"])
                    .run();
                out.assert_code(0).assert_no_panic();
                assert_eq!(out.stdout, "resumed\n");
                assert!(mock.requests()[0].body_text().contains("run a tool"));
            }
        }
    }
    assert!(
        killed_with_file > 20,
        "the kills should often land after the first write ({killed_with_file})"
    );
}

#[test]
fn garbage_and_truncated_lines_load_with_a_warning() {
    let mock = MockServer::with_replies([Reply::text(API, "one"), Reply::text(API, "two")]);
    let first = PiCommand::for_mock(API, &mock).args(["-p", "remember BETA"]);
    let agent_dir = first.agent_dir().to_path_buf();
    let again = first.again();
    first.run().assert_code(0);
    let file = session_files(&agent_dir).remove(0);
    let mut lines: Vec<String> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    lines.insert(2, "this is not json at all".into());
    let mut text = lines.join("\n");
    text.push_str("\n{\"type\":\"message\",\"id\":\"half");
    std::fs::write(&file, text).unwrap();
    let out = again
        .args(["--model", "mock/mock-model", "-p", "-c", "and now?"])
        .run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "two\n");
    assert_eq!(out.stderr.matches("Warning").count(), 2, "{}", out.stderr);
    assert!(mock.requests()[1].body_text().contains("remember BETA"));
}

#[test]
fn a_session_written_by_the_typescript_pi_resumes_here() {
    let mock = MockServer::with_replies([Reply::text(API, "continuing")]);
    let pi = PiCommand::for_mock(API, &mock);
    let copy = pi.cwd().join("ts-session.jsonl");
    // Resumed where it was recorded: the fixture's directory is this run's.
    let original = include_str!("../../fixtures/sessions/ts-all-entries.jsonl")
        .replacen("/tmp/gen/proj", &pi.cwd().to_string_lossy(), 1)
        .into_bytes();
    std::fs::write(&copy, &original).unwrap();
    let pi = pi.args(["-p", "--session", copy.to_str().unwrap(), "next"]);
    let out = pi.run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "continuing\n");
    let body = mock.requests()[0].body_text();
    // The active branch: the branch summary, then the messages after it, then ours.
    assert!(
        body.contains("after nav") && body.contains("explored a different conversation"),
        "{body}"
    );
    assert!(
        body.contains("list files") && body.contains("bash"),
        "history before the branch point is sent: {body}"
    );
    let written = std::fs::read(&copy).unwrap();
    assert!(
        written.starts_with(&original),
        "existing lines are never rewritten"
    );
    let appended = String::from_utf8_lossy(&written[original.len()..]).into_owned();
    let roles: Vec<String> = appended
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter_map(|v| v["message"]["role"].as_str().map(String::from))
        .collect();
    // The TypeScript pi (0.73.1) wrote no prompt checkpoint: the first prompt here adds it.
    assert_eq!(roles, ["system", "user", "assistant"], "{appended}");
}

/// pi-mono's `large-session.jsonl` with its recorded directory made this run's.
fn large_session_in(dir: &Path) -> String {
    include_str!("../../fixtures/sessions/pi-mono-large-session.jsonl").replacen(
        "/Users/badlogic/workspaces/pi-mono",
        &dir.to_string_lossy(),
        1,
    )
}

#[test]
fn an_old_session_without_total_tokens_is_sent_whole_and_left_as_it_was() {
    let mock = MockServer::with_replies([Reply::text(API, "resumed")]);
    let pi = PiCommand::for_mock(API, &mock)
        .write_agent_file("settings.json", r#"{"compaction":{"enabled":false}}"#);
    let text = large_session_in(pi.cwd());
    let file = pi.cwd().join("large.jsonl");
    std::fs::write(&file, &text).unwrap();
    let pi = pi.args(["-p", "--session", file.to_str().unwrap(), "go on"]);
    let out = pi.run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "resumed\n");
    let body = &mock.requests()[0].body;
    let messages = body["messages"].as_array().unwrap();
    let count = |role: &str| messages.iter().filter(|m| m["role"] == role).count();
    // 914 stored messages (453 assistant, 373 tool results, 88 user) plus the prompt, after the
    // system prompt; every tool result follows the call it answers. Failed replies are not
    // sent back to a provider (pi's transform drops them too).
    let failed = text.matches(r#""stopReason":"error""#).count()
        + text.matches(r#""stopReason":"aborted""#).count();
    assert_eq!(failed, 22);
    assert_eq!(count("assistant"), 453 - failed);
    assert_eq!(count("tool"), 373);
    assert_eq!(count("user"), 89);
    let mut called = std::collections::HashSet::new();
    for m in messages {
        for c in m["tool_calls"].as_array().into_iter().flatten() {
            called.insert(c["id"].as_str().unwrap().to_string());
        }
        if m["role"] == "tool" {
            assert!(called.contains(m["tool_call_id"].as_str().unwrap()));
        }
    }
    // The v1 file is migrated on the first write, with the original kept beside it.
    let backup = std::fs::read_to_string(format!("{}.bak", file.display())).unwrap();
    assert_eq!(backup, text);
    let now = std::fs::read_to_string(&file).unwrap();
    let added: Vec<&str> = now.lines().skip(text.lines().count()).collect();
    // The prompt checkpoint (an old session gets one on its next prompt, as 1.x does), the
    // prompt and the reply: like pi, a resumed session records no `model_change` for the
    // `--model` of this run, and no thinking level when its branch already has one.
    assert_eq!(added.len(), 3, "{added:?}");
    assert!(added[0].contains(r#""role":"system""#));
    assert!(added[1].contains(r#""text":"go on""#));
    assert!(added[2].contains(r#""text":"resumed""#));
}

#[test]
fn a_session_whose_directory_is_gone_stops_like_pi() {
    let mock = MockServer::start();
    let pi = PiCommand::for_mock(API, &mock);
    let file = pi.cwd().join("s.jsonl");
    let text = include_str!("../../fixtures/sessions/ts-all-entries.jsonl").replacen(
        "/tmp/gen/proj",
        "/nonexistent/pi-test-dir",
        1,
    );
    std::fs::write(&file, &text).unwrap();
    let pi = pi.args(["-p", "--session", file.to_str().unwrap(), "hi"]);
    let out = pi.run();
    out.assert_code(1).assert_no_panic();
    let want = format!(
        "Stored session working directory does not exist: /nonexistent/pi-test-dir\nSession file: {}\nCurrent working directory: {}",
        file.display(),
        out_cwd(&file).display()
    );
    assert!(out.stderr.contains(&want), "{}", out.stderr);
    assert_eq!(mock.request_count(), 0);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

fn out_cwd(file: &Path) -> PathBuf {
    file.parent().unwrap().to_path_buf()
}

#[test]
fn a_device_or_a_fifo_given_as_session_is_refused_at_once() {
    let mock = MockServer::start();
    let pi = PiCommand::for_mock(API, &mock);
    let fifo = pi.cwd().join("pipe.jsonl");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let again = pi.again();
    let out = pi.args(["-p", "--session", "/dev/zero", "hi"]).run();
    out.assert_code(1).assert_no_panic();
    assert!(
        out.stderr
            .contains("/dev/zero is a character device, not a regular file"),
        "{}",
        out.stderr
    );
    let out = again
        .args([
            "--model",
            "mock/mock-model",
            "-p",
            "--session",
            fifo.to_str().unwrap(),
            "hi",
        ])
        .run();
    out.assert_code(1).assert_no_panic();
    assert!(out.stderr.contains("FIFO"), "{}", out.stderr);
    assert_eq!(mock.request_count(), 0);
}

/// A session path that cannot be created: its parent is a regular file (root or not, the
/// write fails with "Not a directory").
fn unwritable_session(pi: &PiCommand) -> PathBuf {
    std::fs::write(pi.cwd().join("blocker"), "a file, not a directory").unwrap();
    pi.cwd().join("blocker").join("s.jsonl")
}

#[test]
fn a_failed_session_write_is_an_event_in_json_mode_and_a_warning_in_print_mode() {
    let mock = MockServer::with_replies([Reply::text(API, "one"), Reply::text(API, "two")]);
    let pi = PiCommand::for_mock(API, &mock);
    let file = unwritable_session(&pi);
    let again = pi.again();
    let pi = pi.args(["--mode", "json", "--session", file.to_str().unwrap(), "hi"]);
    let out = pi.run();
    // The session could not be saved: the run is not a success (issue 35).
    out.assert_code(1).assert_no_panic();
    let events = out.json_lines();
    let failure = events
        .iter()
        .position(|e| e["type"] == "session_write_error")
        .unwrap_or_else(|| panic!("no session_write_error: {}", out.stdout));
    let error = events[failure]["error"].as_str().unwrap();
    assert!(error.starts_with("Could not write session file"), "{error}");
    assert!(error.contains(file.to_str().unwrap()), "{error}");
    // Reported at the first entry it could not save, not at the end: the prompt, since the
    // file is created at the first user message (pi 1.6.0).
    assert_eq!(events[failure + 1]["type"], "message_end");
    assert_eq!(events[failure + 1]["message"]["role"], "user");

    let out = again
        .args([
            "--model",
            "mock/mock-model",
            "-p",
            "--session",
            file.to_str().unwrap(),
            "hi",
        ])
        .run();
    // The session could not be saved: the run is not a success (issue 35).
    out.assert_code(1).assert_no_panic();
    assert_eq!(out.stdout, "two\n");
    assert!(
        out.stderr.contains("Warning: Could not write session file"),
        "{}",
        out.stderr
    );
}

#[test]
fn rpc_reports_failed_and_repaired_session_writes_as_events() {
    let mock = MockServer::with_replies([
        Reply::text(API, "one"),
        Reply::text(API, "two"),
        Reply::text(API, "three"),
    ]);
    // A reasoning model, so a thinking level change is a write too.
    let models = crate::support::models_json_for(API, mock.port()).replace(
        r#""id": "mock-model""#,
        r#""id": "mock-model", "reasoning": true"#,
    );
    assert!(models.contains("reasoning"));
    let pi = PiCommand::for_mock(API, &mock)
        .write_agent_file("models.json", &models)
        .args(["--mode", "rpc"]);
    let agent_dir = pi.agent_dir().to_path_buf();
    let mut talk = pi.converse();
    talk.send(r#"{"id":"p1","type":"prompt","message":"first"}"#);
    talk.expect("agent_end", |v| v["type"] == "agent_end");
    let file = session_files(&agent_dir).remove(0);
    // The session file is deleted while pi runs: the next write notices, writes the whole
    // session again and says so.
    std::fs::remove_file(&file).unwrap();
    talk.send(r#"{"id":"p2","type":"prompt","message":"second"}"#);
    let event = talk.expect("session_write_error", |v| {
        v["type"] == "session_write_error"
    });
    assert!(
        event["error"].as_str().unwrap().contains("deleted"),
        "{event}"
    );
    talk.expect("agent_end", |v| v["type"] == "agent_end");
    let text = std::fs::read_to_string(&file).unwrap();
    for tag in ["first", "one", "second", "two"] {
        assert!(
            text.contains(&format!("\"{tag}\"")),
            "{tag} is saved: {text}"
        );
    }
    // A failure outside a run fails the command that wrote, naming the file.
    let dir = file.parent().unwrap().to_path_buf();
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::write(&dir, "now a file").unwrap();
    talk.send(r#"{"id":"n","type":"set_session_name","name":"renamed"}"#);
    let response = talk.expect("response", |v| v["id"] == "n");
    assert_eq!(response["success"], false, "{response}");
    let error = response["error"].as_str().unwrap();
    assert!(
        error.starts_with(&format!("Could not write session file {}", file.display())),
        "{error}"
    );
    // A thinking level change while idle writes too; its failure comes as an event.
    talk.send(r#"{"id":"t","type":"set_thinking_level","level":"high"}"#);
    talk.expect("response", |v| v["id"] == "t");
    let event = talk.expect("session_write_error", |v| {
        v["type"] == "session_write_error"
    });
    assert!(event["error"]
        .as_str()
        .unwrap()
        .contains("Could not write session file"));
    let (code, _, stderr) = talk.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

/// A session folder written by pi 0.87.1 (tool call, compaction with a system checkpoint,
/// context edits, a branch with a summary, a rename) resumes with the context pi 0.87.1 itself
/// sent for it, and is only appended to.
#[test]
fn a_session_written_by_pi_0_87_resumes_here_with_the_context_pi_sends() {
    let mock = MockServer::with_replies([Reply::text(API, "resumed by rust")]);
    let pi = PiCommand::for_mock(API, &mock);
    let dir = pi.cwd().to_string_lossy().into_owned();
    let text = include_str!("../../fixtures/sessions/pi-0.87.1-rpc.jsonl").replacen(
        r#""cwd":"/tmp/g87/proj""#,
        &format!(r#""cwd":{}"#, serde_json::to_string(&dir).unwrap()),
        1,
    );
    let sessions = pi.agent_dir().join("sessions").join(format!(
        "--{}--",
        dir.trim_start_matches('/').replace('/', "-")
    ));
    std::fs::create_dir_all(&sessions).unwrap();
    let file = sessions.join("2026-11-24T09-49-28-850Z_01a20cf5-db92-72fa-b03d-52f1624bc86a.jsonl");
    std::fs::write(&file, &text).unwrap();
    let pi = pi.args(["-p", "-c", "next from rust"]);
    let out = pi.run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "resumed by rust\n");
    let expected: serde_json::Value = serde_json::from_str(include_str!(
        "../../fixtures/sessions/pi-0.87.1-rpc.expected.json"
    ))
    .unwrap();
    let body = &mock.requests()[0].body;
    let text_of = |c: &serde_json::Value| match c {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(b) => b.iter().filter_map(|b| b["text"].as_str()).collect(),
        _ => String::new(),
    };
    let sent: Vec<(String, String)> = body["messages"].as_array().unwrap()[1..]
        .iter()
        .map(|m| (m["role"].as_str().unwrap().into(), text_of(&m["content"])))
        .collect();
    let mut want: Vec<(String, String)> = expected["lastRequest"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["role"].as_str().unwrap().into(), text_of(&m["content"])))
        .collect();
    want.push(("assistant".into(), "Final answer.".into()));
    want.push(("user".into(), "next from rust".into()));
    assert_eq!(sent, want);
    let now = std::fs::read_to_string(&file).unwrap();
    assert!(now.starts_with(&text), "only appended to");
}

/// The other branch of the same 0.87.1 folder: cut after its leaf (the rename that follows
/// "Third answer."), the file resumes on that branch — past the compaction, before the branch
/// summary — with the messages pi 0.87.1 itself sends for it (recorded side by side).
#[test]
fn the_other_branch_of_a_pi_0_87_session_resumes_with_its_own_messages() {
    let mock = MockServer::with_replies([Reply::text(API, "resumed on the old branch")]);
    let pi = PiCommand::for_mock(API, &mock);
    let dir = pi.cwd().to_string_lossy().into_owned();
    let full = include_str!("../../fixtures/sessions/pi-0.87.1-rpc.jsonl");
    let leaf = full.find(r#""id":"20bbfaf5""#).expect("the rename entry");
    let end = leaf + full[leaf..].find('\n').unwrap() + 1;
    let text = full[..end].replacen(
        r#""cwd":"/tmp/g87/proj""#,
        &format!(r#""cwd":{}"#, serde_json::to_string(&dir).unwrap()),
        1,
    );
    let file = pi.cwd().join("old-branch.jsonl");
    std::fs::write(&file, &text).unwrap();
    let pi = pi.args(["-p", "--session", file.to_str().unwrap(), "next"]);
    let out = pi.run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "resumed on the old branch\n");
    let body = &mock.requests()[0].body;
    let sent: Vec<(String, String)> = body["messages"].as_array().unwrap()[1..]
        .iter()
        .map(|m| {
            let text = match &m["content"] {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Array(b) => {
                    b.iter().filter_map(|b| b["text"].as_str()).collect()
                }
                _ => String::new(),
            };
            (m["role"].as_str().unwrap().to_string(), text)
        })
        .collect();
    let roles: Vec<&str> = sent.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(
        roles,
        ["user", "user", "assistant", "user", "assistant", "user"],
        "{sent:?}"
    );
    assert!(sent[0]
        .1
        .starts_with("The conversation history before this point was compacted"));
    let rest: Vec<&str> = sent[1..].iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(
        rest,
        [
            "second question",
            "Second answer.",
            "after compaction",
            "Third answer.",
            "next"
        ]
    );
    assert!(std::fs::read_to_string(&file).unwrap().starts_with(&text));
}

#[test]
fn an_empty_session_file_becomes_a_new_session_like_pi() {
    let mock = MockServer::with_replies([Reply::text(API, "fresh")]);
    let pi = PiCommand::for_mock(API, &mock);
    let file = pi.cwd().join("empty.jsonl");
    std::fs::write(&file, "").unwrap();
    let pi = pi.args(["-p", "--session", file.to_str().unwrap(), "hi"]);
    let out = pi.run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout, "fresh\n");
    let written = lines(&file);
    assert_eq!(written[0]["type"], "session");
    assert_eq!(written.iter().filter(|l| l["type"] == "session").count(), 1);
    assert!(written.iter().any(|l| l["message"]["role"] == "assistant"));
}

#[test]
fn a_resumed_session_runs_in_the_directory_it_recorded() {
    let mock = MockServer::with_replies([Reply::text(API, "ok")]);
    let pi = PiCommand::for_mock(API, &mock);
    let elsewhere = pi.cwd().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let file = pi.cwd().join("s.jsonl");
    let header = serde_json::json!({"type":"session","version":3,"id":"11111111-2222-4333-8444-555555555555",
        "timestamp":"2025-01-01T00:00:00.000Z","cwd": elsewhere.to_str().unwrap()});
    let user = r#"{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"q"}],"timestamp":1735689601000}}"#;
    std::fs::write(&file, format!("{header}\n{user}\n")).unwrap();
    let out = pi
        .args(["-p", "--session", file.to_str().unwrap(), "where"])
        .run();
    out.assert_code(0).assert_no_panic();
    let system = mock.requests()[0].body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    let want = format!("<cwd>\n{}\n</cwd>", elsewhere.display());
    assert!(system.contains(&want), "{system}");
}

#[test]
fn a_resumed_session_keeps_its_recorded_thinking_level_when_the_model_is_given() {
    let mock = MockServer::start();
    let models = r#"{"providers":{"mock":{"baseUrl":"http://127.0.0.1:9/v1","api":"openai-completions",
        "apiKey":"k","models":[{"id":"thinker","reasoning":true}]}}}"#;
    let pi = PiCommand::for_mock(API, &mock).write_agent_file("models.json", models);
    let file = pi.cwd().join("s.jsonl");
    let header = serde_json::json!({"type":"session","version":3,"id":"11111111-2222-4333-8444-555555555555",
        "timestamp":"2025-01-01T00:00:00.000Z","cwd": pi.cwd().to_str().unwrap()});
    let user = r#"{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"q"}],"timestamp":1735689601000}}"#;
    let level = r#"{"type":"thinking_level_change","id":"b1b2c3d4","parentId":"a1b2c3d4","timestamp":"2025-01-01T00:00:02.000Z","thinkingLevel":"low"}"#;
    std::fs::write(&file, format!("{header}\n{user}\n{level}\n")).unwrap();
    let pi = pi
        .args([
            "--mode",
            "rpc",
            "--model",
            "mock/thinker",
            "--session",
            file.to_str().unwrap(),
        ])
        .stdin("{\"id\":\"s\",\"type\":\"get_state\"}\n");
    let out = pi.run();
    out.assert_code(0).assert_no_panic();
    // As in pi: `--model` alone picks the model; the thinking level stays the session's.
    assert_eq!(out.json_lines()[0]["data"]["thinkingLevel"], "low");
}

/// A file whose first line is not a session header is refused with pi 1.x's words, and left
/// as it was.
#[test]
fn a_file_without_a_session_header_is_not_a_valid_pi_session() {
    let mock = MockServer::with_replies([Reply::text(API, "never")]);
    let pi = PiCommand::for_mock(API, &mock);
    std::fs::create_dir_all(pi.cwd()).unwrap();
    let file = pi.cwd().join("bad.jsonl");
    let text = "{\"type\":\"message\",\"id\":\"a\",\"parentId\":null}\n";
    std::fs::write(&file, text).unwrap();
    let cmd = pi
        .args(["-p", "hi", "--session"])
        .arg(file.to_string_lossy());
    let out = cmd.run();
    out.assert_code(1).assert_no_panic();
    assert_eq!(
        out.stderr,
        format!(
            "Error: Session file is not a valid pi session: {}\n",
            file.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    assert_eq!(mock.request_count(), 0);
}

#[test]
fn resuming_a_session_whose_model_is_gone_warns_and_says_what_is_used_instead() {
    let mock = MockServer::with_replies([Reply::text(API, "fine")]);
    let cmd = PiCommand::new()
        .write_agent_file(
            "models.json",
            &crate::support::models_json_for(API, mock.port()),
        )
        .write_agent_file(
            "settings.json",
            r#"{"defaultProvider":"mock","defaultModel":"mock-model"}"#,
        );
    let file = cmd.home().join("old.jsonl");
    let cwd = cmd.cwd().to_string_lossy().into_owned();
    let lines = [
        serde_json::json!({"type":"session","version":3,"id":"0190b0c0-0000-7000-8000-000000000001",
            "timestamp":"2025-01-01T00:00:00.000Z","cwd":cwd}),
        serde_json::json!({"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z",
            "message":{"role":"user","content":[{"type":"text","text":"q"}],"timestamp":1}}),
        serde_json::json!({"type":"model_change","id":"a2","parentId":"a1","timestamp":"2025-01-01T00:00:02.000Z",
            "provider":"gone","modelId":"vanished"}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let out = cmd
        .args(["--session", file.to_str().unwrap(), "-p", "continue"])
        .run();
    out.assert_code(0);
    assert!(
        out.stderr
            .contains("Warning: Could not restore model gone/vanished. Using mock/mock-model"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stdout.trim(), "fine");
}
