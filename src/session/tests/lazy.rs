//! A lazily resumed session behaves exactly like one loaded eagerly.

use super::file::*;
use super::*;
use std::path::Path;

/// Lines that stress the scan: duplicate keys, odd types, non-objects, extra headers, shapes
/// that fail to parse, numbers out of range, bad escapes, a branch and two compactions.
const TRICKY: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"model_change","id":"m0","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","provider":"p","modelId":"x"}
{"type":"thinking_level_change","id":"t0","parentId":"m0","timestamp":"2025-01-01T00:00:01.000Z","thinkingLevel":"high"}
{"type":"thinking_level_change","id":"t1","parentId":"t0","timestamp":"2025-01-01T00:00:01.000Z","thinkingLevel":7}
{"type":"message","id":"u1","parentId":"t1","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"user","content":"hi \u00e9 \ud83d\ude42","timestamp":1}}
{"type":"message","id":"a1","parentId":"u1","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"yo"}],"api":"a","provider":"p1","model":"m1","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":2}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2025-01-01T00:00:04.000Z","message":{"role":"assistant","content":"broken"}}
[1,2,3]
42
{"type":"session","version":3,"id":"s2","timestamp":"x","cwd":"/"}
{"type":"message","type":"custom_message","id":"c1","parentId":"a2","timestamp":"2025-01-01T00:00:05.000Z","customType":"k","content":"ext","display":true}
{"type":"compaction","id":"k1","parentId":"c1","timestamp":"2025-01-01T00:00:06.000Z","summary":"S1","firstKeptEntryId":"a1","tokensBefore":10}
{"type":"message","id":"u2","parentId":"k1","timestamp":"2025-01-01T00:00:07.000Z","message":{"role":"user","content":"big 1e400","timestamp":1e400}}
{"type":"message","id":"u3","parentId":"k1","timestamp":"2025-01-01T00:00:07.000Z","message":{"role":"user","content":"lone \ud800","timestamp":3}}
{"type":"message","id":"u4","parentId":"k1","timestamp":"2025-01-01T00:00:08.000Z","message":{"role":"user","content":"ok","timestamp":4},"extraField":{"a":[1,{"b":null}]}}
{"type":"branch_summary","id":"b1","parentId":"u4","timestamp":"2025-01-01T00:00:09.000Z","fromId":"a1","summary":"went elsewhere"}
{"type":"branch_summary","id":"b2","parentId":"b1","timestamp":"2025-01-01T00:00:09.000Z","fromId":"a1","summary":""}
{"type":"weird","id":"w1","parentId":"b2","timestamp":"2025-01-01T00:00:10.000Z","message":{"role":"assistant"}}
{"type":"compaction","id":"k2","parentId":"w1","timestamp":"2025-01-01T00:00:11.000Z","summary":"S2","firstKeptEntryId":"u4","tokensBefore":20,"details":null}
{"type":"message","id":"a3","parentId":"k2","timestamp":"2025-01-01T00:00:12.000Z","message":{"role":"assistant","content":[],"api":"a","provider":"p3","model":"m3","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":5},"message":{"role":"user","content":"dup wins","timestamp":6}}
{"type":"label","id":"l1","parentId":"a3","timestamp":"2025-01-01T00:00:13.000Z","targetId":"u4","label":"L"}
{"type":"message","id":"u1","parentId":"l1","timestamp":"2025-01-01T00:00:14.000Z","message":{"role":"user","content":"dup id","timestamp":7}}
{"type":"message","id":"x1","parentId":"u1","timestamp":"2025-01-01T00:00:15.000Z","message":{"role":"user","content":"trunc"#;

fn eager(path: &Path) -> (SessionWriter, Vec<String>) {
    let l = load(path).unwrap();
    let w = l.warnings.clone();
    (SessionWriter::from_loaded(l), w)
}

fn same(a: &SessionWriter, b: &SessionWriter) {
    assert_eq!(a.leaf_id(), b.leaf_id());
    assert_eq!(a.build_context(), b.build_context());
    assert_eq!(a.latest_compaction(), b.latest_compaction());
    assert_eq!(a.header(), b.header());
    assert_eq!(a.entries(), b.entries());
    // After materializing, the eager code path gives the same again.
    assert_eq!(a.build_context(), b.build_context());
}

fn check(text: &str) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.jsonl");
    std::fs::write(&p, text).unwrap();
    let (e, ew) = eager(&p);
    let (l, lw) = SessionWriter::open(&p).unwrap();
    assert_eq!(ew, lw);
    // Context first, while the lazy writer has parsed nothing.
    assert_eq!(l.build_context(), e.build_context());
    assert_eq!(l.latest_compaction(), e.latest_compaction());
    same(&l, &e);
    // Every leaf, every time lazily.
    let ids: Vec<String> = e.entries().iter().map(|x| x.id().to_string()).collect();
    for id in ids.iter().map(Some).chain([None]) {
        let (mut l, _) = SessionWriter::open(&p).unwrap();
        let mut e = eager(&p).0;
        match id {
            Some(id) => {
                l.branch(id).unwrap();
                e.branch(id).unwrap();
            }
            None => {
                l.reset_leaf();
                e.reset_leaf();
            }
        }
        assert_eq!(l.build_context(), e.build_context(), "leaf {id:?}");
        assert_eq!(l.latest_compaction(), e.latest_compaction(), "leaf {id:?}");
        let n = e.build_context().messages.len();
        assert_eq!((l.context_len(), e.context_len()), (n, n), "leaf {id:?}");
    }
}

#[test]
fn lazy_resume_matches_eager_on_tricky_lines() {
    check(TRICKY);
    let warnings = eager_warnings(TRICKY);
    // Reported by line: the thinking level that is not text, the second header, 1e400 and the
    // truncated tail. The lone surrogate reads as U+FFFD, as JavaScript reads it.
    assert_eq!(
        warnings,
        [
            "line 4: a thinking level change without a level, left out of the conversation (kept in the file)",
            "line 10: ignored a second session header",
            "line 13: skipped malformed entry (number out of range at line 1 column 147)",
            "line 23: skipped malformed entry (EOF while parsing a string at line 1 column 124)",
        ]
    );
}

fn eager_warnings(text: &str) -> Vec<String> {
    parse_session(text.as_bytes()).unwrap().warnings
}

#[test]
fn lazy_resume_matches_eager_on_fixtures() {
    check(super::entries_tests::ALL_ENTRIES);
    // pi 1.x: system checkpoints, context edits, a compaction with a checkpoint, a branch.
    check(include_str!(
        "../../../fixtures/sessions/pi-0.87.1-rpc.jsonl"
    ));
    check(&TRICKY.replace('\n', "\r\n"));
    check(&format!("\n  \nnot json\n{TRICKY}\n\n"));
    for (name, text) in [
        ("v1", include_str!("../../../fixtures/sessions/ts-v1.jsonl")),
        ("v2", include_str!("../../../fixtures/sessions/ts-v2.jsonl")),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(format!("{name}.jsonl"));
        std::fs::write(&p, text).unwrap();
        let (l, _) = SessionWriter::open(&p).unwrap();
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "{name}: reading never writes"
        );
        assert_eq!(std::fs::read_to_string(&p).unwrap(), text);
        let e = eager(&p).0;
        same(&l, &e);
    }
}

#[test]
fn lazy_resume_appends_like_eager() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    std::fs::write(&a, TRICKY).unwrap();
    std::fs::write(&b, TRICKY).unwrap();
    let (mut l, _) = SessionWriter::open(&a).unwrap();
    let mut e = eager(&b).0;
    // Built once so both writers get identical timestamps.
    let (next, answer) = (
        super::files_tests::user("next"),
        super::files_tests::assistant("answer"),
    );
    for w in [&mut l, &mut e] {
        w.branch("u4").unwrap();
        w.append_label("a1", Some("x")).unwrap();
        w.append_message(next.clone()).unwrap();
        w.append_message(answer.clone()).unwrap();
    }
    assert_eq!(l.build_context(), e.build_context());
    assert!(l.entries().len() == e.entries().len());
    let after = super::files_tests::user("after");
    l.append_message(after.clone()).unwrap();
    e.append_message(after).unwrap();
    assert_eq!(l.build_context(), e.build_context());
    let (ra, rb) = (eager(&a).0, eager(&b).0);
    assert_eq!(ra.entries().len(), rb.entries().len());
    assert_eq!(
        ra.build_context().messages.len(),
        rb.build_context().messages.len()
    );
}

#[test]
fn lazy_resume_writes_only_after_an_assistant_message_like_eager() {
    let header =
        "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"/\"}\n";
    for message in [
        "{\"role\":\"assistant\"}",
        "{\"role\":\"assistant\",\"content\":7}",
        "{}",
    ] {
        let text = format!(
            "{header}{{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"t\",\"message\":{message}}}\n"
        );
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
        std::fs::write(&a, &text).unwrap();
        std::fs::write(&b, &text).unwrap();
        let (mut l, _) = SessionWriter::open(&a).unwrap();
        let mut e = eager(&b).0;
        let lines = |p: &Path| std::fs::read_to_string(p).unwrap().lines().count();
        l.append_message(super::files_tests::user("u")).unwrap();
        e.append_message(super::files_tests::user("u")).unwrap();
        assert_eq!(lines(&a), lines(&b), "{message}");
        l.append_message(super::files_tests::assistant("a"))
            .unwrap();
        e.append_message(super::files_tests::assistant("a"))
            .unwrap();
        assert_eq!(lines(&a), 4);
        assert_eq!(lines(&b), 4);
    }
}

#[test]
fn lazy_resume_of_a_big_file_scanned_in_two_halves_matches_eager() {
    let mut lines = TRICKY.lines();
    let mut text = format!("not json\n{}\n", lines.next().unwrap());
    let body: Vec<&str> = lines.collect();
    let pad = "x".repeat(4000);
    let mut round = 0;
    while text.len() < 9 << 20 {
        for l in &body[..body.len() - 1] {
            // Fresh ids each round keep a long chain; the pad makes the file big.
            let l = l.replace("\"id\":\"", &format!("\"pad\":\"{pad}\",\"id\":\"r{round}"));
            let l = l.replace("\"parentId\":\"", &format!("\"parentId\":\"r{round}"));
            text.push_str(&l);
            text.push('\n');
        }
        text.push_str("{\"broken\": \n");
        round += 1;
    }
    text.push_str(body[body.len() - 1]);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.jsonl");
    std::fs::write(&p, &text).unwrap();
    let (e, ew) = eager(&p);
    let (l, lw) = SessionWriter::open(&p).unwrap();
    assert!(ew.len() > 3 * round, "{}", ew.len());
    assert_eq!(ew, lw);
    assert_eq!(l.build_context(), e.build_context());
    assert_eq!(l.latest_compaction(), e.latest_compaction());
    same(&l, &e);
}

/// The session name of a lazily resumed file (read from its latest `session_info` entry
/// alone) is what the eagerly loaded tree says, before and after a rename.
#[test]
fn lazy_session_name_matches_the_eager_tree() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.jsonl");
    let info = |id: &str, parent: &str, name: &str| {
        format!(
            r#"{{"type":"session_info","id":"{id}","parentId":"{parent}","timestamp":"2025-01-01T00:00:01.000Z","name":{name}}}"#
        )
    };
    let text = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}"#.to_string(),
        info("i1", "", "\"  first  \"").replace(r#""parentId":"""#, r#""parentId":null"#),
        info("i2", "i1", "\"second\""),
        // A session_info line whose name is not text is skipped (and reported), as the tree
        // skips it.
        info("i3", "i2", "42"),
    ]
    .join("\n")
        + "\n";
    std::fs::write(&p, &text).unwrap();
    let (lazy, _) = SessionWriter::open(&p).unwrap();
    let (loaded, _) = eager(&p);
    assert_eq!(lazy.name(), loaded.tree().name().map(str::to_string));
    assert_eq!(lazy.name().as_deref(), Some("second"));
    let (mut lazy, _) = SessionWriter::open(&p).unwrap();
    crate::session::ops::set_name(&mut lazy, "third").unwrap();
    assert_eq!(lazy.name().as_deref(), Some("third"));
}

#[test]
fn written_entries_are_read_back_from_the_file_and_counted_as_they_come() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("new.jsonl");
    let mut w = SessionWriter::new("/w", Some(p.clone()), None);
    let mut count_checks = 0;
    for turn in 0..5 {
        w.append_message(super::files_tests::user(&format!("q{turn}")))
            .unwrap();
        w.append_message(super::files_tests::assistant(&format!("a{turn}")))
            .unwrap();
        if turn == 2 {
            let kept = w.entries()[2].id().to_string();
            w.append_compaction("S", &kept, 10, None, None, None)
                .unwrap();
        }
        let context = w.build_context().messages;
        assert_eq!(w.context_len(), context.len(), "turn {turn}");
        assert_eq!(
            w.entries_held(),
            0,
            "turn {turn}: written entries are not held"
        );
        count_checks += 1;
    }
    assert_eq!(count_checks, 5);
    // Everything written is read back from the file: the same entries, lines and context as
    // a fresh load of it.
    let loaded = eager(&p).0;
    assert_eq!(w.entries(), loaded.entries());
    assert_eq!(w.build_context(), loaded.build_context());
    let lines: Vec<String> = w.entry_lines().collect();
    let on_disk: Vec<String> = std::fs::read_to_string(&p)
        .unwrap()
        .lines()
        .skip(1)
        .map(str::to_string)
        .collect();
    assert_eq!(lines, on_disk);
    // Moving the leaf and appending there counts again from the file.
    let first = w.entries()[1].id().to_string();
    w.branch(&first).unwrap();
    w.append_message(super::files_tests::user("fork")).unwrap();
    assert_eq!(w.context_len(), w.build_context().messages.len());
    assert_eq!(w.context_len(), 3);
}

#[test]
fn entries_lost_to_a_file_cut_short_under_pi_are_reported_not_written_as_garbage() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cut.jsonl");
    let mut w = SessionWriter::new("/w", Some(p.clone()), None);
    w.append_message(super::files_tests::user("q")).unwrap();
    w.append_message(super::files_tests::assistant("a"))
        .unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    let header_len = text.lines().next().unwrap().len() as u64 + 1;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(header_len)
        .unwrap();
    let err = w
        .append_message(super::files_tests::user("again"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("truncated"), "{err}");
    assert!(err.contains("2 entries"), "{err}");
    let recovery = dir.path().join("cut.recovered.jsonl");
    let saved = std::fs::read_to_string(&recovery).unwrap();
    assert!(saved.contains("\"again\""), "{saved}");
    assert!(!saved.lines().any(|l| l == "null"), "{saved}");
    assert_eq!(saved.lines().count(), 2, "{saved}");
}
