//! Session directories: naming, listing metadata, `-c`, id-prefix lookup and fork.

use super::dir::*;
use super::files_tests::{assistant, user};
use super::*;
use std::path::{Path, PathBuf};

#[test]
fn cwd_encoding_and_file_names() {
    assert_eq!(encode_cwd("/home/ada/proj"), "--home-ada-proj--");
    assert_eq!(encode_cwd("C:\\Users\\ada"), "--C--Users-ada--");
    assert_eq!(encode_cwd("\\\\srv\\share"), "---srv-share--");
    assert_eq!(encode_cwd("/"), "----");
    assert_eq!(
        session_dir(Path::new("/a"), "/tmp/gen/proj"),
        PathBuf::from("/a/sessions/--tmp-gen-proj--")
    );
    assert_eq!(
        session_file_name("2026-11-21T22:23:36.911Z", "01a2-x"),
        "2026-11-21T22-23-36-911Z_01a2-x.jsonl"
    );
    assert!(looks_like_path("a/b"));
    assert!(looks_like_path("x.jsonl"));
    assert!(!looks_like_path("01a2"));
}

fn write_session(dir: &Path, cwd: &str, first: &str) -> PathBuf {
    let mut w = SessionWriter::create(dir, cwd, None);
    w.append_message(user(first)).unwrap();
    w.append_message(assistant("ok")).unwrap();
    w.path().unwrap().to_path_buf()
}

#[test]
fn listing_metadata_of_a_ts_session() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("s.jsonl");
    std::fs::write(&p, super::entries_tests::ALL_ENTRIES).unwrap();
    let info = session_info(&p).unwrap();
    assert_eq!(info.id, "01a20080-bedf-7406-9017-36f72ffdce2c");
    assert_eq!(info.cwd, "/tmp/gen/proj");
    assert_eq!(info.name.as_deref(), Some("My Session"));
    assert_eq!(info.first_message, "list files");
    assert_eq!(info.message_count, 11);
    assert_eq!(info.modified_ms, 1_795_304_770_249);
    assert_eq!(info.created, "2026-11-21T23:46:07.199Z");
    assert!(info
        .all_messages_text
        .starts_with("list files Let me look. All done."));

    let empty = d.path().join("e.jsonl");
    std::fs::write(
        &empty,
        "{\"type\":\"session\",\"version\":3,\"id\":\"e\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/\"}\n",
    )
    .unwrap();
    let info = session_info(&empty).unwrap();
    assert_eq!(info.first_message, "(no messages)");
    assert_eq!(info.modified_ms, 1_767_225_600_000);
    std::fs::write(d.path().join("junk.jsonl"), "not a session\n").unwrap();
    assert!(session_info(&d.path().join("junk.jsonl")).is_none());
    let list = list_sessions(d.path());
    assert_eq!(list.len(), 2);
    assert_eq!(list[0].id, "01a20080-bedf-7406-9017-36f72ffdce2c");
}

#[test]
fn most_recent_and_id_prefix_lookup() {
    let agent = tempfile::tempdir().unwrap();
    let here = session_dir(agent.path(), "/work/here");
    let there = session_dir(agent.path(), "/work/there");
    let a = write_session(&here, "/work/here", "first");
    std::thread::sleep(std::time::Duration::from_millis(20));
    let b = write_session(&here, "/work/here", "second");
    let c = write_session(&there, "/work/there", "elsewhere");
    std::fs::write(here.join("broken.jsonl"), "{\"type\":\"message\"}\n").unwrap();
    assert_eq!(most_recent(&here), Some(b.clone()));
    assert_eq!(most_recent(&agent.path().join("none")), None);

    let id_of = |p: &Path| session_info(p).unwrap().id;
    let a_id = id_of(&a);
    match find_by_id_prefix(agent.path(), &here, &a_id[..30]) {
        Some(Found::Local(s)) => assert_eq!(s.path, a),
        other => panic!("{other:?}"),
    }
    let c_id = id_of(&c);
    match find_by_id_prefix(agent.path(), &here, &c_id) {
        Some(Found::Global(s)) => {
            assert_eq!(s.path, c);
            assert_eq!(s.cwd, "/work/there");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(find_by_id_prefix(agent.path(), &here, "zzzz"), None);
    assert_eq!(list_all_sessions(agent.path()).len(), 3);
}

#[test]
fn fork_copies_entries_under_a_new_header() {
    let agent = tempfile::tempdir().unwrap();
    let src = agent.path().join("src.jsonl");
    let mut text = super::entries_tests::ALL_ENTRIES.to_string();
    text.push_str("{\"type\":\"future\",\"id\":\"ffff0000\",\"parentId\":\"5ea2d42c\",\"timestamp\":\"t\",\"z\":1}\n");
    std::fs::write(&src, &text).unwrap();
    let target = session_dir(agent.path(), "/new/cwd");
    let forked = fork(&src, &target, "/new/cwd").unwrap();
    assert_eq!(forked.parent().unwrap(), target);
    let out = std::fs::read_to_string(&forked).unwrap();
    let mut lines = out.lines();
    let h: SessionHeader = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(h.cwd, "/new/cwd");
    assert_eq!(h.version, Some(CURRENT_VERSION));
    assert_eq!(h.parent_session.as_deref(), Some(src.to_str().unwrap()));
    assert_ne!(h.id, "01a20080-bedf-7406-9017-36f72ffdce2c");
    assert!(forked
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .ends_with(&format!("_{}.jsonl", h.id)));
    let rest: Vec<&str> = lines.collect();
    let src_rest: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(rest, src_rest);
    // The fork resumes like any session.
    let (w, warnings) = SessionWriter::open(&forked).unwrap();
    assert!(warnings.is_empty());
    assert_eq!(w.leaf_id(), Some("ffff0000"));
    assert!(fork(&agent.path().join("missing.jsonl"), &target, "/x").is_err());
}
