use std::path::PathBuf;

use super::super::common::test_support::*;
use super::*;

fn info(dir: &Path, id: &str, name: Option<&str>, first: &str, minutes_ago: i64) -> SessionInfo {
    let path = dir.join(format!("{id}.jsonl"));
    std::fs::write(&path, "{}\n").unwrap();
    SessionInfo {
        path,
        id: id.into(),
        cwd: "/work/project".into(),
        name: name.map(str::to_string),
        parent_session_path: None,
        created: String::new(),
        modified_ms: now_ms() - minutes_ago * 60_000,
        message_count: 3,
        first_message: first.into(),
        all_messages_text: format!("{first} more words"),
    }
}

fn picker(dir: &Path) -> SessionPicker {
    let mut child = info(dir, "child", None, "forked work", 5);
    let current = vec![
        info(dir, "old", None, "refactor the parser", 3 * 24 * 60),
        info(dir, "named", Some("Release prep"), "bump versions", 90),
    ];
    child.parent_session_path = Some(current[0].path.to_string_lossy().into_owned());
    let mut current = current;
    current.push(child);
    let other = info(dir, "elsewhere", None, "other folder task", 1);
    let mut all = current.clone();
    all.push(SessionInfo {
        cwd: "/tmp/other".into(),
        ..other
    });
    SessionPicker::new(current, Box::new(move || all.clone()), None, theme())
}

fn rows(s: &mut SessionPicker, width: usize) -> Vec<String> {
    let lines = screen(s, width);
    lines[9..lines.len() - 2].to_vec()
}

#[test]
fn threaded_rows_with_counts_and_ages() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = picker(dir.path());
    let lines = screen(&mut s, 100);
    assert!(
        lines[3].starts_with("Resume Session (Current Folder)"),
        "{lines:?}"
    );
    assert!(lines[3].ends_with("◉ Current Folder | ○ All  Name: All  Sort: Threaded"));
    assert_eq!(
        lines[4],
        "tab scope · re:<pattern> regex · \"phrase\" exact"
    );
    let rows = rows(&mut s, 100);
    assert!(
        rows[0].starts_with("› Release prep") && rows[0].ends_with("3 1h"),
        "{rows:?}"
    );
    assert!(rows[1].starts_with("  refactor the parser") && rows[1].ends_with("3 3d"));
    assert!(rows[2].starts_with("     └─ forked work") && rows[2].ends_with("3 5m"));
    assert_fits(&mut s);
}

#[test]
fn search_scope_sort_and_select() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = picker(dir.path());
    type_text(&mut s, "parser");
    assert_eq!(rows(&mut s, 100).len(), 1);
    for _ in 0..6 {
        s.handle_input(&key("backspace"));
    }
    s.handle_input(&key("tab"));
    let lines = screen(&mut s, 120);
    assert!(lines[3].starts_with("Resume Session (All)"));
    let all = rows(&mut s, 120);
    assert!(
        all[0].contains("other folder task") && all[0].ends_with("/tmp/other 3 1m"),
        "{all:?}"
    );
    assert_fits(&mut s);
    s.handle_input(&key("ctrl+n"));
    assert_eq!(rows(&mut s, 120).len(), 1);
    s.handle_input(&key("ctrl+n"));
    s.handle_input(&key("ctrl+s"));
    assert!(screen(&mut s, 120)[3].ends_with("Sort: Recent"));
    s.handle_input(&key("down"));
    s.handle_input(&key("enter"));
    assert_eq!(
        s.take_outcome(),
        Some(SessionOutcome::Selected(dir.path().join("child.jsonl")))
    );
    type_text(&mut s, "re:[");
    assert!(rows(&mut s, 120)[0].contains("No sessions found"));
    s.handle_input(&key("escape"));
    assert_eq!(s.take_outcome(), Some(SessionOutcome::Cancelled));
}

#[test]
fn delete_asks_first_and_spares_the_active_session() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = picker(dir.path());
    s.handle_input(&key("ctrl+d"));
    assert!(screen(&mut s, 100)[4].starts_with("Delete session? enter confirm"));
    s.handle_input(&key("escape"));
    assert_eq!(s.take_outcome(), None);
    assert!(dir.path().join("named.jsonl").exists());
    s.handle_input(&key("ctrl+d"));
    s.handle_input(&key("enter"));
    assert!(!dir.path().join("named.jsonl").exists());
    assert_eq!(screen(&mut s, 100)[4], "Session deleted");
    assert_eq!(rows(&mut s, 100).len(), 2);

    let active: PathBuf = dir.path().join("old.jsonl");
    let mut s = SessionPicker::new(
        vec![info(dir.path(), "old", None, "x", 1)],
        Box::new(Vec::new),
        Some(active),
        theme(),
    );
    s.handle_input(&key("ctrl+d"));
    assert_eq!(
        screen(&mut s, 100)[4],
        "Cannot delete the currently active session"
    );
    assert!(dir.path().join("old.jsonl").exists());
}

#[test]
fn ages() {
    let m = 60_000;
    assert_eq!(relative_age(0, 30_000), "now");
    assert_eq!(relative_age(0, 59 * m), "59m");
    assert_eq!(relative_age(0, 25 * 60 * m), "1d");
    assert_eq!(relative_age(0, 8 * 1440 * m), "1w");
    assert_eq!(relative_age(0, 40 * 1440 * m), "1mo");
    assert_eq!(relative_age(0, 800 * 1440 * m), "2y");
}

#[test]
fn ctrl_r_renames_the_highlighted_session_in_resume_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = picker(dir.path());
    assert!(!screen(&mut s, 100).join("\n").contains("rename"));
    s.handle_input(&key("ctrl+r"));
    assert!(s.take_outcome().is_none());
    assert!(!screen(&mut s, 100).join("\n").contains("Rename Session"));

    let mut s = picker(dir.path()).with_rename();
    assert_eq!(
        screen(&mut s, 100)[5],
        "ctrl+s sort · ctrl+n named · ctrl+d delete · ctrl+p path (off) · ctrl+r rename"
    );
    s.handle_input(&key("down"));
    s.handle_input(&key("ctrl+r"));
    let lines = screen(&mut s, 100);
    assert_eq!(
        lines[1..],
        [
            "─".repeat(100).as_str(),
            "",
            " Rename Session",
            "",
            ">",
            "",
            " enter to save · escape/ctrl+c to cancel",
            "",
            "─".repeat(100).as_str(),
        ]
    );
    type_text(&mut s, "  Parser work ");
    s.handle_input(&key("enter"));
    let renamed = dir.path().join("old.jsonl");
    assert_eq!(
        s.take_outcome(),
        Some(SessionOutcome::Renamed {
            path: renamed,
            name: "Parser work".into()
        })
    );
    let rows = rows(&mut s, 100);
    assert!(rows.iter().any(|r| r.contains("Parser work")), "{rows:?}");
    // Escape while renaming goes back to the list, keeping the picker open.
    s.handle_input(&key("ctrl+r"));
    s.handle_input(&key("escape"));
    assert!(s.take_outcome().is_none());
    assert!(screen(&mut s, 100).join("\n").contains("Resume Session"));
}
