use super::*;
use crossbeam_channel::Receiver;
use serde_json::json;
use std::time::Instant;

fn spec(script: &str) -> StdioSpec {
    StdioSpec {
        command: "sh".into(),
        args: vec!["-c".into(), script.into()],
        env: vec![("PI_STDIO_TEST".into(), "yes".into())],
        cwd: std::env::temp_dir(),
    }
}

fn start_collecting(script: &str) -> (Arc<dyn Transport>, Receiver<Incoming>) {
    let (tx, rx) = unbounded();
    let sink: Sink = Arc::new(move |i| {
        let _ = tx.send(i);
    });
    (start(&spec(script), sink).unwrap(), rx)
}

fn next(rx: &Receiver<Incoming>) -> Incoming {
    rx.recv_timeout(Duration::from_secs(10)).expect("a message")
}

#[test]
fn lines_are_framed_whatever_the_writes() {
    let (t, rx) = start_collecting(
        r#"printf '{"a":1}\n\n{"b":'; sleep 0.05; printf '2}\r\n{"c":"'"$PI_STDIO_TEST"'"}\nnot json\n'; read x"#,
    );
    assert!(matches!(next(&rx), Incoming::Message(v) if v == json!({"a": 1})));
    assert!(matches!(next(&rx), Incoming::Message(v) if v == json!({"b": 2})));
    assert!(matches!(next(&rx), Incoming::Message(v) if v == json!({"c": "yes"})));
    assert!(matches!(next(&rx), Incoming::Garbage { id: None, .. }));
    t.close();
    assert!(matches!(next(&rx), Incoming::Closed(None)));
}

#[test]
fn an_oversized_line_is_skipped_and_names_its_request() {
    let (t, rx) = start_collecting(
        r#"printf '{"jsonrpc":"2.0","id":5,"result":"'; head -c 17000000 /dev/zero | tr '\0' x; printf '"}\n{"ok":true}\n'; read x"#,
    );
    match next(&rx) {
        Incoming::Garbage { id, error } => {
            assert_eq!(id, Some(json!(5)), "{error}");
            assert_eq!(error, "MCP stdio message exceeds 16777216 bytes");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(next(&rx), Incoming::Message(v) if v == json!({"ok": true})));
    t.close();
}

#[test]
fn stdin_carries_messages_and_stderr_is_kept() {
    let (t, rx) = start_collecting(r#"echo 'starting up' >&2; read line; echo "$line"; read x"#);
    t.send(json!({"jsonrpc": "2.0", "method": "x"})).unwrap();
    assert!(matches!(next(&rx), Incoming::Message(v) if v["method"] == "x"));
    // The stderr reader is its own thread: give it the moment it may need.
    let deadline = Instant::now() + Duration::from_secs(10);
    while t.stderr_tail().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(t.stderr_tail().as_deref(), Some("starting up"));
    t.close();
    assert_eq!(t.send(json!({})).unwrap_err(), McpError::Closed(None));
}

#[test]
fn closing_stops_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    // The shell ignores its closed stdin and waits on a grandchild, as npx does.
    let script = format!("sleep 1000 & echo $! > {}; wait", pidfile.display());
    let (t, _rx) = start_collecting(&script);
    let deadline = Instant::now() + Duration::from_secs(10);
    let grandchild = loop {
        if let Some(pid) = std::fs::read_to_string(&pidfile)
            .ok()
            .and_then(|s| s.trim().parse::<i32>().ok())
        {
            break pid;
        }
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(10));
    };
    t.close();
    // SAFETY: signal 0 only probes whether the process exists.
    let alive = |pid: i32| unsafe { libc::kill(pid, 0) == 0 };
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(grandchild) {
        // A zombie waiting for its (dead) parent's reaper still answers; give init a moment.
        assert!(Instant::now() < deadline, "the grandchild survived");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_missing_command_reads_like_node() {
    let sink: Sink = Arc::new(|_| {});
    let mut s = spec("");
    s.command = "/nonexistent/mcp-server".into();
    let e = start(&s, sink).err().unwrap();
    assert_eq!(e.to_string(), "spawn /nonexistent/mcp-server ENOENT");
}

#[test]
fn tails_count_characters() {
    assert_eq!(tail_chars("héllo", 3), "llo");
    assert_eq!(tail_chars("hé", 5), "hé");
    assert_eq!(tail_chars("abc", 0), "");
}
