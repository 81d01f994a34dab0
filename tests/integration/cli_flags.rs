//! pi 1.x's session and tool flags end to end: `-n/--name`, `--session-id` (create, reopen,
//! in memory, fork, errors), `--tools` patterns and `+`/`-` lists, `-xt/--exclude-tools`, and
//! the `defaultTools` setting as the model sees them.

use serde_json::Value;

use crate::support::{MockServer, PiCommand, Reply};

const API: &str = "openai-completions";

/// Every session file under the agent dir, parsed line by line.
fn sessions(pi: &PiCommand) -> Vec<(std::path::PathBuf, Vec<Value>)> {
    let root = pi.agent_dir().join("sessions");
    let mut out = Vec::new();
    for dir in std::fs::read_dir(root).into_iter().flatten().flatten() {
        for f in std::fs::read_dir(dir.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let text = std::fs::read_to_string(f.path()).unwrap();
            let lines = text
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            out.push((f.path(), lines));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn names(lines: &[Value]) -> Vec<&str> {
    lines
        .iter()
        .filter(|l| l["type"] == "session_info")
        .filter_map(|l| l["name"].as_str())
        .collect()
}

#[test]
fn name_is_recorded_in_print_and_rpc_mode() {
    let mock = MockServer::with_replies([Reply::text(API, "ok")]);
    let pi = PiCommand::for_mock(API, &mock);
    pi.again()
        .args([
            "--model",
            "mock/mock-model",
            "-n",
            "  Refactor auth  ",
            "-p",
            "hi",
        ])
        .run()
        .assert_code(0);
    let files = sessions(&pi);
    assert_eq!(files.len(), 1);
    assert_eq!(names(&files[0].1), ["Refactor auth"]);

    mock.push(Reply::text(API, "ok"));
    let mut rpc = pi
        .again()
        .args([
            "--model",
            "mock/mock-model",
            "--mode",
            "rpc",
            "--name",
            "From RPC",
        ])
        .converse();
    rpc.send(r#"{"type":"prompt","message":"hi","id":"p"}"#);
    rpc.expect("agent_end", |v| v["type"] == "agent_end");
    let (code, _, stderr) = rpc.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let files = sessions(&pi);
    assert_eq!(files.len(), 2);
    assert!(
        files.iter().any(|(_, lines)| names(lines) == ["From RPC"]),
        "{files:?}"
    );

    let out = pi.again().args(["--name", " ", "-p", "hi"]).run();
    out.assert_code(1);
    assert!(
        out.stderr
            .contains("Error: --name requires a non-empty value"),
        "{}",
        out.stderr
    );
}

#[test]
fn session_id_creates_then_reopens_the_exact_session() {
    let mock = MockServer::with_replies([Reply::text(API, "one"), Reply::text(API, "two")]);
    let pi = PiCommand::for_mock(API, &mock);
    let out = pi
        .again()
        .args([
            "--model",
            "mock/mock-model",
            "--session-id",
            "run-42",
            "-p",
            "first",
        ])
        .run();
    out.assert_code(0);
    assert!(
        out.stderr.contains(
            "Warning: No project session found with id 'run-42'; creating a new session with that id."
        ),
        "{}",
        out.stderr
    );
    let files = sessions(&pi);
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].1[0]["id"], "run-42");
    assert!(files[0].0.to_string_lossy().ends_with("_run-42.jsonl"));

    let out = pi
        .again()
        .args([
            "--model",
            "mock/mock-model",
            "--session-id",
            "run-42",
            "-p",
            "second",
        ])
        .run();
    out.assert_code(0);
    assert!(!out.stderr.contains("Warning"), "{}", out.stderr);
    let files = sessions(&pi);
    assert_eq!(files.len(), 1, "reopened, not created again");
    let texts = mock.requests()[1].user_texts();
    assert_eq!(texts, ["first", "second"]);
}

#[test]
fn session_id_with_no_session_fork_and_the_errors() {
    let mock = MockServer::with_replies([
        Reply::text(API, "a"),
        Reply::text(API, "b"),
        Reply::text(API, "c"),
    ]);
    let pi = PiCommand::for_mock(API, &mock);
    let out = pi
        .again()
        .args([
            "--model",
            "mock/mock-model",
            "--mode",
            "json",
            "--no-session",
        ])
        .args(["--session-id", "ephemeral.1", "hi"])
        .run();
    out.assert_code(0);
    assert_eq!(out.json_lines()[0]["id"], "ephemeral.1");
    assert!(sessions(&pi).is_empty());

    // --fork with --session-id names the copy.
    pi.again()
        .args([
            "--model",
            "mock/mock-model",
            "--session-id",
            "source",
            "-p",
            "hi",
        ])
        .run()
        .assert_code(0);
    pi.again()
        .args([
            "--model",
            "mock/mock-model",
            "--fork",
            "source",
            "--session-id",
            "copy",
        ])
        .args(["-p", "again"])
        .run()
        .assert_code(0);
    let files = sessions(&pi);
    let ids: Vec<&str> = files
        .iter()
        .filter_map(|(_, l)| l[0]["id"].as_str())
        .collect();
    assert_eq!(ids.len(), 2);
    assert!(ids.contains(&"copy") && ids.contains(&"source"), "{ids:?}");
    let out = pi
        .again()
        .args(["--fork", "source", "--session-id", "copy", "-p", "x"])
        .run();
    out.assert_code(1);
    assert!(
        out.stderr.contains("Session already exists with id 'copy'"),
        "{}",
        out.stderr
    );

    for (args, error) in [
        (
            &["--session-id", "a", "-c"][..],
            "Error: --session-id cannot be combined with --continue",
        ),
        (
            &["--session-id", "a", "--session", "b"],
            "Error: --session-id cannot be combined with --session",
        ),
        (
            &["--session-id", "bad id"],
            "Error: Session id must be non-empty, contain only alphanumeric characters",
        ),
        (&["--session-id", "-dash"], "Error: Session id must"),
    ] {
        let out = pi
            .again()
            .args(args.iter().copied())
            .args(["-p", "x"])
            .run();
        out.assert_code(1);
        assert!(out.stderr.contains(error), "{args:?}: {}", out.stderr);
    }
    assert_eq!(mock.request_count(), 3);
}

/// The tool names one request declared.
fn tools_sent(mock: &MockServer, index: usize) -> Vec<String> {
    mock.requests()[index].body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn tool_patterns_deltas_exclusions_and_default_tools() {
    let mock = MockServer::start();
    let pi = PiCommand::for_mock(API, &mock);
    let runs: [(&[&str], &[&str]); 5] = [
        (&["--tools", "r*,*s"], &["read", "ls"]),
        (&["-t", "+grep,-write,-bash"], &["read", "edit", "grep"]),
        (&["-xt", "b*,write"], &["read", "edit"]),
        (&["--exclude-tools", "read", "--tools", "read,ls"], &["ls"]),
        (&["-nt", "-t", "+find"], &["find"]),
    ];
    for (i, (flags, expected)) in runs.iter().enumerate() {
        mock.push(Reply::text(API, "ok"));
        pi.again()
            .args(flags.iter().copied())
            .args(["-p", "hi"])
            .run()
            .assert_code(0);
        assert_eq!(tools_sent(&mock, i), *expected, "{flags:?}");
    }
    // defaultTools (global), edited by the project's +/- list, then by --tools deltas.
    let pi = pi
        .write_agent_file(
            "settings.json",
            r#"{"retry":{"baseDelayMs":20},"defaultTools":["read","grep","bash"]}"#,
        )
        .write_file(".pi/settings.json", r#"{"defaultTools":["-bash","+ls"]}"#);
    let runs: [(&[&str], &[&str]); 3] = [
        (&["-na"], &["read", "grep", "bash"]),
        (&["-a"], &["read", "grep", "ls"]),
        (&["-a", "-t", "+write,-read"], &["grep", "ls", "write"]),
    ];
    for (i, (flags, expected)) in runs.iter().enumerate() {
        mock.push(Reply::text(API, "ok"));
        pi.again()
            .args(["--model", "mock/mock-model"])
            .args(flags.iter().copied())
            .args(["-p", "hi"])
            .run()
            .assert_code(0);
        assert_eq!(tools_sent(&mock, 5 + i), *expected, "{flags:?}");
    }
}
