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

/// `threaded` as it was before parents were looked up in an index (a linear `find` per
/// session), kept to prove the threading unchanged.
fn old_threaded(sessions: &[SessionInfo], candidates: &[usize]) -> Vec<Row> {
    let parent_of = |i: usize| {
        let parent = sessions[i].parent_session_path.as_deref()?;
        candidates
            .iter()
            .copied()
            .find(|c| same_file(&sessions[*c].path, Path::new(parent)))
    };
    let mut children: std::collections::HashMap<Option<usize>, Vec<usize>> = Default::default();
    for &i in candidates {
        children
            .entry(parent_of(i).filter(|p| *p != i))
            .or_default()
            .push(i);
    }
    for list in children.values_mut() {
        sort::sort_by(list, |a, b| {
            sessions[*b].modified_ms.cmp(&sessions[*a].modified_ms)
        });
    }
    let mut rows = Vec::new();
    let mut stack: Vec<(usize, usize, Vec<bool>, bool)> = Vec::new();
    let roots = children.get(&None).cloned().unwrap_or_default();
    for (k, &r) in roots.iter().enumerate().rev() {
        stack.push((r, 0, Vec::new(), k + 1 == roots.len()));
    }
    let mut seen = std::collections::HashSet::new();
    while let Some((i, depth, continues, last)) = stack.pop() {
        if !seen.insert(i) {
            continue;
        }
        let prefix = if depth == 0 {
            String::new()
        } else {
            let mut p: String = continues
                .iter()
                .map(|c| if *c { "│  " } else { "   " })
                .collect();
            p.push_str(if last { "└─ " } else { "├─ " });
            p
        };
        rows.push(Row { session: i, prefix });
        let kids = children.get(&Some(i)).cloned().unwrap_or_default();
        for (k, &c) in kids.iter().enumerate().rev() {
            let mut next = continues.clone();
            next.push(depth > 0 && !last);
            stack.push((c, depth + 1, next, k + 1 == kids.len()));
        }
    }
    rows
}

fn pairs(rows: Vec<Row>) -> Vec<(usize, String)> {
    rows.into_iter().map(|r| (r.session, r.prefix)).collect()
}

/// A session whose file need not exist, forked from `parent` (a path) if given.
fn bare(path: PathBuf, parent: Option<&Path>, modified_ms: i64) -> SessionInfo {
    SessionInfo {
        path,
        id: String::new(),
        cwd: String::new(),
        name: None,
        parent_session_path: parent.map(|p| p.to_string_lossy().into_owned()),
        created: String::new(),
        modified_ms,
        message_count: 0,
        first_message: String::new(),
        all_messages_text: String::new(),
    }
}

#[test]
fn threading_a_long_chain_and_a_wide_tree() {
    let dir = Path::new("/nonexistent/sessions");
    let path = |k: usize| dir.join(format!("{k}.jsonl"));

    // A chain of 2,000 forks, listed newest (deepest) first.
    let n = 2_000;
    let sessions: Vec<SessionInfo> = (0..n)
        .rev()
        .map(|k| bare(path(k), k.checked_sub(1).map(path).as_deref(), k as i64))
        .collect();
    let all: Vec<usize> = (0..n).collect();
    let rows = pairs(threaded(&sessions, &all));
    assert_eq!(rows.len(), n);
    for (depth, (session, prefix)) in rows.iter().enumerate() {
        assert_eq!(*session, n - 1 - depth);
        let expected = match depth {
            0 => String::new(),
            _ => "   ".repeat(depth) + "└─ ",
        };
        assert_eq!(*prefix, expected);
    }

    // One root with 1,000 forks, each forked once more; children listed before parents.
    let root = bare(path(0), None, 0);
    let mut sessions = Vec::new();
    for k in 1..=1_000 {
        let grandchild = path(10_000 + k);
        sessions.push(bare(grandchild, Some(&path(k)), k as i64));
        sessions.push(bare(path(k), Some(&path(0)), k as i64));
    }
    sessions.push(root);
    let all: Vec<usize> = (0..sessions.len()).collect();
    let rows = pairs(threaded(&sessions, &all));
    let mut expected = vec![(sessions.len() - 1, String::new())];
    for k in (1..=1_000).rev() {
        let last = k == 1;
        let child = 2 * (k - 1) + 1;
        expected.push((child, if last { "   └─ " } else { "   ├─ " }.to_string()));
        let under = if last {
            "      └─ "
        } else {
            "   │  └─ "
        };
        expected.push((child - 1, under.to_string()));
    }
    assert_eq!(rows, expected);
}

#[test]
fn threading_matches_the_linear_search_it_replaced() {
    // Real files, parents named through a symlinked folder, missing parents, self-parents,
    // cycles, equal times and a filtered candidate list.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sessions");
    std::fs::create_dir(&dir).unwrap();
    let alias = tmp.path().join("alias");
    std::os::unix::fs::symlink(&dir, &alias).unwrap();
    let n = 300;
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = |m: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % m
    };
    let sessions: Vec<SessionInfo> = (0..n)
        .map(|k| {
            let path = dir.join(format!("{k}.jsonl"));
            std::fs::write(&path, "{}\n").unwrap();
            let target = next(n as u64 + 40);
            let parent = match next(4) {
                0 => None,
                1 => Some(alias.join(format!("{target}.jsonl"))),
                _ => Some(dir.join(format!("{target}.jsonl"))),
            };
            bare(path, parent.as_deref(), next(50) as i64)
        })
        .collect();
    let all: Vec<usize> = (0..n).collect();
    let some: Vec<usize> = (0..n).filter(|k| k % 3 != 0).collect();
    for candidates in [&all, &some] {
        let rows = pairs(threaded(&sessions, candidates));
        assert!(rows.iter().any(|(_, prefix)| prefix.contains('─')));
        assert_eq!(rows, pairs(old_threaded(&sessions, candidates)));
    }
}
