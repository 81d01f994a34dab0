use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::json;

use super::*;
use crate::ai::Abort;

fn text_of(out: &ToolOutput) -> String {
    out.content
        .iter()
        .map(|c| match c {
            Content::Text(t) => t.text.clone(),
            _ => String::new(),
        })
        .collect()
}

fn run_in(cwd: &Path, args: Value, abort: Abort) -> Result<ToolOutput, String> {
    let noop = |_: ToolOutput| {};
    let ctx = ToolContext {
        cwd: cwd.to_path_buf(),
        abort,
        on_update: &noop,
        nested: None,
    };
    BashTool::default().execute("call", args, &ctx)
}

fn run(command: &str) -> Result<ToolOutput, String> {
    let dir = tempfile::tempdir().unwrap();
    run_in(dir.path(), json!({ "command": command }), Abort::new())
}

fn alive(pid: i32) -> bool {
    // A zombie still answers kill(0); look at /proc state too.
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .trim_start()
        .chars()
        .next();
    // SAFETY: signal 0 only probes for existence.
    let exists = unsafe { libc::kill(pid, 0) == 0 };
    exists && state.is_some_and(|s| s != 'Z')
}

#[test]
fn echo_returns_output() {
    let out = run("echo hello").unwrap();
    assert_eq!(text_of(&out), "hello\n");
    assert!(out.details.is_none());
}

#[test]
fn runs_in_cwd_with_pi_env() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        json!({"command": "pwd; echo $PI_CODING_AGENT"}),
        Abort::new(),
    )
    .unwrap();
    let canon = dir.path().canonicalize().unwrap();
    assert_eq!(text_of(&out), format!("{}\ntrue\n", canon.display()));
}

#[test]
fn stdout_and_stderr_are_merged() {
    let out = run("echo out; sleep 0.05; echo err >&2; sleep 0.05; echo out2").unwrap();
    assert_eq!(text_of(&out), "out\nerr\nout2\n");
}

/// pi 1.6.0: a failed command is an error result that keeps its details (none here) and its
/// `structuredContent`, not a bare error message.
fn failed(command: &str) -> (String, ToolOutput) {
    let out = run(command).unwrap();
    assert!(out.is_error, "{out:?}");
    (text_of(&out), out)
}

#[test]
fn non_zero_exit_is_error_with_code() {
    let (text, out) = failed("echo out; sleep 0.05; echo err >&2; exit 3");
    assert_eq!(text, "out\nerr\n\n\nCommand exited with code 3");
    assert_eq!(out.details, None);
    let structured = out.structured_content.unwrap();
    assert_eq!(structured["exit_code"], 3);
    assert_eq!(structured["output"], "out\nerr\n");
    assert_eq!(
        failed("exit 7").0,
        "(no output)\n\nCommand exited with code 7"
    );
}

#[test]
fn a_shell_killed_by_a_signal_reports_128_plus_the_signal() {
    // pi 0.73.1 reported this as success; pi 1.x uses the shell convention.
    assert_eq!(
        failed("echo dying; kill -TERM $$").0,
        "dying\n\n\nCommand exited with code 143"
    );
}

#[test]
fn output_a_background_process_keeps_writing_after_the_shell_exits_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let err = run_in(
        dir.path(),
        // One process writing every 10 ms, already running when the shell exits (a `sleep`
        // forked per line can leave the pipe quiet past the 100 ms grace on a loaded machine).
        json!({
            "command": "perl -e '$|=1; while (1) { print \"tick\\n\"; select(undef, undef, undef, 0.01) }' & sleep 0.2; exit 3",
            "timeout": 0.5
        }),
        Abort::new(),
    )
    .unwrap_err();
    assert!(err.starts_with("tick\n"), "{err}");
    let status = err.rsplit("\n\n").next().unwrap();
    assert!(
        status.starts_with(
            "Command timed out after 0.5 seconds. The shell exited with code 3 after "
        ) && status.ends_with(
            " seconds, but background processes it started kept writing output until the timeout."
        ),
        "{status}"
    );
}

#[test]
fn empty_output_says_no_output() {
    assert_eq!(text_of(&run("true").unwrap()), "(no output)");
}

#[test]
fn command_prefix_is_prepended() {
    let dir = tempfile::tempdir().unwrap();
    let tool = BashTool {
        shell: None,
        command_prefix: Some("X=prefixed".into()),
        ..Default::default()
    };
    let noop = |_: ToolOutput| {};
    let ctx = ToolContext {
        cwd: dir.path().to_path_buf(),
        abort: Abort::new(),
        on_update: &noop,
        nested: None,
    };
    let out = tool
        .execute("c", json!({"command": "echo $X"}), &ctx)
        .unwrap();
    assert_eq!(text_of(&out), "prefixed\n");
}

#[test]
fn missing_custom_shell_is_error() {
    let dir = tempfile::tempdir().unwrap();
    let tool = BashTool {
        shell: Some("/nonexistent/shell".into()),
        command_prefix: None,
        ..Default::default()
    };
    let noop = |_: ToolOutput| {};
    let ctx = ToolContext {
        cwd: dir.path().to_path_buf(),
        abort: Abort::new(),
        on_update: &noop,
        nested: None,
    };
    let err = tool
        .execute("c", json!({"command": "true"}), &ctx)
        .unwrap_err();
    assert_eq!(err, "Custom shell path not found: /nonexistent/shell");
}

#[test]
fn timeout_kills_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let err = run_in(
        dir.path(),
        json!({"command": "echo before; sleep 5", "timeout": 0.2}),
        Abort::new(),
    )
    .unwrap_err();
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(err, "before\n\n\nCommand timed out after 0.2 seconds");
}

#[test]
fn abort_kills_the_whole_group_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let abort = Abort::new();
    let pids = Mutex::new(String::new());
    let on_update = |out: ToolOutput| {
        *pids.lock().unwrap() = text_of(&out);
    };
    let ctx = ToolContext {
        cwd: dir.path().to_path_buf(),
        abort: abort.clone(),
        on_update: &on_update,
        nested: None,
    };
    let cmd = "sleep 100 & echo $!; sleep 100 & echo $!; wait";
    let (res, elapsed) = std::thread::scope(|s| {
        let h = s.spawn(|| {
            let r = BashTool::default().execute("c", json!({ "command": cmd }), &ctx);
            (r, Instant::now())
        });
        let t0 = Instant::now();
        while pids.lock().unwrap().lines().count() < 2 {
            assert!(t0.elapsed() < Duration::from_secs(5), "no pids reported");
            std::thread::sleep(Duration::from_millis(10));
        }
        let aborted_at = Instant::now();
        abort.abort();
        let (r, done) = h.join().unwrap();
        (r, (done.duration_since(aborted_at), aborted_at))
    });
    let (elapsed, aborted_at) = elapsed;
    // The design's bar is 100 ms; a test must not time the machine, so it only proves the tool
    // returns (and the group dies) without waiting for the sleeps, with room for a loaded CI.
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    let err = res.unwrap_err();
    assert!(err.ends_with("\n\nCommand aborted"), "{err}");
    let pids: Vec<i32> = pids
        .lock()
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    while pids.iter().any(|&p| alive(p)) {
        assert!(
            aborted_at.elapsed() < Duration::from_secs(5),
            "sleeps survived 5 s after the abort: {pids:?}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn abort_returns_even_if_a_child_ignores_term() {
    let dir = tempfile::tempdir().unwrap();
    let abort = Abort::new();
    let a2 = abort.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        a2.abort();
    });
    let start = Instant::now();
    let err = run_in(
        dir.path(),
        json!({"command": "trap '' TERM; echo x; sleep 30"}),
        abort,
    )
    .unwrap_err();
    assert!(start.elapsed() < Duration::from_millis(600));
    assert_eq!(err, "x\n\n\nCommand aborted");
}

#[test]
fn huge_output_spills_to_file_and_keeps_tail() {
    let out =
        run("head -c 100000000 /dev/zero | tr '\\0' 'a' | fold -w 100; echo; echo LAST").unwrap();
    let text = text_of(&out);
    let details = out.details.expect("details");
    let path = details["fullOutputPath"].as_str().unwrap().to_string();
    let name = Path::new(&path).file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with("pi-bash-") && name.ends_with(".log") && name.len() == 28);
    // 1,000,000 lines of 100 'a's (the last without a newline), then "\n", "LAST\n".
    let expected_size = 100_000_000 + 999_999 + 1 + 5;
    assert_eq!(std::fs::metadata(&path).unwrap().len(), expected_size);
    let t = &details["truncation"];
    assert_eq!(t["truncated"], true);
    // pi 1.x: the final newline ends the last line, it does not count one.
    assert_eq!(t["totalLines"], 1_000_001);
    assert_eq!(t["totalBytes"], expected_size);
    let (body, notice) = text.rsplit_once("\n\n").unwrap();
    assert!(body.ends_with(&format!("{}\nLAST", "a".repeat(100))));
    assert!(body.len() <= DEFAULT_MAX_BYTES);
    let lines = t["outputLines"].as_u64().unwrap();
    assert_eq!(
        notice,
        format!(
            "[Showing lines {}-1000001 of 1000001 (50.0KB limit). Full output: {path}]",
            1_000_001 - lines + 1
        )
    );
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn line_limit_notice() {
    let out = run("seq 1 3000").unwrap();
    let text = text_of(&out);
    let path = out.details.as_ref().unwrap()["fullOutputPath"]
        .as_str()
        .unwrap()
        .to_string();
    // As pi 1.x counts: the final newline ends line 3000 (0.73.1 showed 1002-3001 of 3001).
    assert!(text.starts_with("1001\n1002\n"), "{}", &text[..20]);
    assert!(text.ends_with(&format!(
        "3000\n\n[Showing lines 1001-3000 of 3000. Full output: {path}]"
    )));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap().lines().count(),
        3000
    );
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn partial_last_line_notice() {
    let out = run("head -c 60000 /dev/zero | tr '\\0' 'b'").unwrap();
    let text = text_of(&out);
    let path = out.details.as_ref().unwrap()["fullOutputPath"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.ends_with(&format!(
        "\n\n[Showing last 50.0KB of line 1 (line is 58.6KB). Full output: {path}]"
    )));
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn updates_are_throttled() {
    let dir = tempfile::tempdir().unwrap();
    let count = AtomicUsize::new(0);
    let first_empty = Mutex::new(None);
    let on_update = |out: ToolOutput| {
        if count.fetch_add(1, Ordering::SeqCst) == 0 {
            *first_empty.lock().unwrap() = Some(out.content.is_empty() && out.details.is_none());
        }
    };
    let ctx = ToolContext {
        cwd: dir.path().to_path_buf(),
        abort: Abort::new(),
        on_update: &on_update,
        nested: None,
    };
    let cmd = "for i in $(seq 1 100); do echo $i; sleep 0.01; done";
    let started = std::time::Instant::now();
    let out = BashTool::default()
        .execute("c", json!({ "command": cmd }), &ctx)
        .unwrap();
    let took = started.elapsed();
    assert!(text_of(&out).ends_with("99\n100\n"));
    // One empty update at the start, at most one per 100 ms however slow the machine, and a
    // last one for the final output: a bound from the run's own length, not a timing
    // assertion. Output over a second long gives more than one.
    let n = count.load(Ordering::SeqCst);
    let most = 3 + (took.as_millis() / 100) as usize;
    assert!((3..=most).contains(&n), "{n} updates in {took:?}");
    assert_eq!(*first_empty.lock().unwrap(), Some(true));
}

#[test]
fn invalid_utf8_is_replaced() {
    let out = run("printf 'a\\377b\\342\\202c\\n'").unwrap();
    assert_eq!(text_of(&out), "a\u{FFFD}b\u{FFFD}c\n");
}

#[test]
fn utf8_split_across_chunks_decodes() {
    let mut acc = Accumulator::new(10, 100);
    let euro = "€".as_bytes();
    acc.append(&euro[..1]);
    acc.append(&euro[1..]);
    acc.append(&euro[..2]);
    acc.finish();
    assert_eq!(acc.snapshot(false).truncation.content, "€\u{FFFD}");
}

#[test]
fn missing_cwd_is_error() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("gone");
    let err = run_in(&gone, json!({"command": "echo hi"}), Abort::new()).unwrap_err();
    assert_eq!(
        err,
        format!(
            "Working directory does not exist: {}\nCannot execute bash commands.",
            gone.display()
        )
    );
}

#[test]
fn background_grandchild_does_not_block() {
    let start = Instant::now();
    let out = run("sleep 3 & echo started").unwrap();
    assert_eq!(text_of(&out), "started\n");
    assert!(start.elapsed() < Duration::from_secs(1));
}

#[test]
fn sigpipe_is_default_in_the_child() {
    let start = Instant::now();
    assert_eq!(text_of(&run("yes | head -n 1").unwrap()), "y\n");
    assert!(start.elapsed() < Duration::from_secs(2));
}

#[test]
fn agent_bin_dir_is_first_on_path() {
    let bin = crate::resources::agent_dir().join("bin");
    let out = run("echo \"$PATH\"").unwrap();
    assert!(text_of(&out).starts_with(&format!("{}:", bin.display())));
}

#[test]
fn js_number_formatting() {
    assert_eq!(js_number(5.0), "5");
    assert_eq!(js_number(0.2), "0.2");
    assert_eq!(js_number(1.5), "1.5");
}

#[test]
fn output_keeps_the_order_it_was_written_in() {
    // One pipe for both streams: stderr can no longer overtake stdout written before it.
    let cmd = "i=0; while [ $i -lt 200 ]; do echo out$i; echo err$i >&2; i=$((i+1)); done";
    let out = run(cmd).unwrap();
    let expected: String = (0..200).map(|i| format!("out{i}\nerr{i}\n")).collect();
    assert_eq!(text_of(&out), expected);
}

#[test]
fn the_full_output_file_is_readable_by_the_user_only() {
    use std::os::unix::fs::PermissionsExt;
    let out = run("seq 1 3000").unwrap();
    let path = out.details.as_ref().unwrap()["fullOutputPath"]
        .as_str()
        .unwrap()
        .to_string();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(mode & 0o777, 0o600, "{path}");
}

#[test]
fn a_timeout_it_cannot_honour_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let cmd = format!("touch {}", marker.display());
    for (timeout, message) in [
        (
            json!(0),
            "Invalid timeout: must be a finite number of seconds",
        ),
        (
            json!(-1.5),
            "Invalid timeout: must be a finite number of seconds",
        ),
        (
            json!(2147484),
            "Invalid timeout: maximum is 2147483.647 seconds",
        ),
    ] {
        let err = run_in(
            dir.path(),
            json!({"command": cmd, "timeout": timeout}),
            Abort::new(),
        )
        .unwrap_err();
        assert_eq!(err, message);
    }
    assert!(!marker.exists(), "a refused command must not run");
    // The largest allowed timeout runs the command.
    run_in(
        dir.path(),
        json!({"command": cmd, "timeout": 2147483.647}),
        Abort::new(),
    )
    .unwrap();
    assert!(marker.exists());
}

#[test]
fn the_models_commands_get_the_session_variables() {
    let dir = tempfile::tempdir().unwrap();
    let env = SessionEnv::default();
    env.set(vec![
        ("PI_SESSION_ID", "abc".into()),
        ("PI_SESSION_FILE", "/s/abc.jsonl".into()),
        ("PI_PROVIDER", "anthropic".into()),
        ("PI_MODEL", "claude".into()),
        ("PI_REASONING_LEVEL", "high".into()),
    ]);
    let tool = BashTool {
        session_env: Some(env.clone()),
        ..Default::default()
    };
    let noop = |_: ToolOutput| {};
    let ctx = ToolContext {
        cwd: dir.path().to_path_buf(),
        abort: Abort::new(),
        on_update: &noop,
        nested: None,
    };
    let cmd = "echo $PI_SESSION_ID $PI_SESSION_FILE $PI_PROVIDER $PI_MODEL $PI_REASONING_LEVEL $AI_AGENT $PI_CODING_AGENT";
    let out = tool.execute("c", json!({ "command": cmd }), &ctx).unwrap();
    assert_eq!(
        text_of(&out),
        "abc /s/abc.jsonl anthropic claude high pi true\n"
    );
    // An in-memory session has no file: the variable is absent.
    env.set(vec![("PI_SESSION_ID", "mem".into())]);
    let out = tool
        .execute(
            "c",
            json!({"command": "echo ${PI_SESSION_FILE-unset}"}),
            &ctx,
        )
        .unwrap();
    assert_eq!(text_of(&out), "unset\n");
    // The user's own commands get none of them.
    let run = BashTool::default()
        .run_user("echo ${PI_MODEL-unset}", dir.path(), Abort::new(), &|_| {})
        .unwrap();
    assert_eq!(run.tail, "unset\n");
}

#[test]
fn user_runs_stream_their_output_as_it_arrives() {
    let dir = tempfile::tempdir().unwrap();
    let seen = Mutex::new(String::new());
    let run = BashTool::default()
        .run_user(
            "echo one; sleep 0.05; printf 't\\342\\202'; printf '\\254wo\\n'",
            dir.path(),
            Abort::new(),
            &|t| seen.lock().unwrap().push_str(t),
        )
        .unwrap();
    assert_eq!(run.tail, "one\nt€wo\n");
    assert_eq!(*seen.lock().unwrap(), run.tail);
}

/// pi 1.6.0 (#12062): output that ends in one line longer than ~100KB (a grep match in a
/// minified file) shows the end of that line, not an empty "lines 3-2 of 2". "line is" names
/// the size of the line still open, as pi's does: 0B after the final newline.
#[test]
fn a_very_long_last_line_shows_its_end() {
    let out = run("echo first; head -c 150000 /dev/zero | tr '\\0' 'm'; echo").unwrap();
    let text = text_of(&out);
    let path = out.details.as_ref().unwrap()["fullOutputPath"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.starts_with("mmmm"), "{}", &text[..40.min(text.len())]);
    assert!(
        text.ends_with(&format!(
            "\n\n[Showing last 50.0KB of line 2 (line is 0B). Full output: {path}]"
        )),
        "{}",
        &text[text.len().saturating_sub(200)..]
    );
    std::fs::remove_file(&path).unwrap();
}
