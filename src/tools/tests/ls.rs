use serde_json::json;

use super::super::search_util::test_support::{run, text, write};
use super::*;

#[test]
fn sorts_case_insensitively_with_dirs_and_dotfiles() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for f in ["b.txt", "A.md", "c", ".env", "_x", "10", "2"] {
        write(root, f, "");
    }
    std::fs::create_dir(root.join("Zeta")).unwrap();
    std::fs::create_dir(root.join("alpha")).unwrap();
    let out = text(&LsTool, root, json!({}));
    assert_eq!(out, "_x\n.env\n10\n2\nA.md\nalpha/\nb.txt\nc\nZeta/");
}

#[test]
fn skips_dangling_symlinks() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "real", "");
    std::os::unix::fs::symlink(dir.path().join("gone"), dir.path().join("dangling")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("real"), dir.path().join("link")).unwrap();
    assert_eq!(
        text(&LsTool, dir.path(), json!({"path": "."})),
        "link\nreal"
    );
}

#[test]
fn empty_directory() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(text(&LsTool, dir.path(), json!({})), "(empty directory)");
}

#[test]
fn limit_notice() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["a", "b", "c"] {
        write(dir.path(), f, "");
    }
    let (out, details) = run(&LsTool, dir.path(), json!({"limit": 2})).unwrap();
    assert_eq!(
        out,
        "a\nb\n\n[2 entries limit reached. Use limit=4 for more]"
    );
    assert_eq!(details, Some(json!({"entryLimitReached": 2})));
    let (out, details) = run(&LsTool, dir.path(), json!({"limit": 3})).unwrap();
    assert_eq!(out, "a\nb\nc");
    assert_eq!(details, None);
    // pi 1.x: a limit below one means one, fractions are cut off.
    for limit in [json!(0), json!(-2), json!(1.5)] {
        let (out, details) = run(&LsTool, dir.path(), json!({"limit": limit})).unwrap();
        assert_eq!(out, "a\n\n[1 entries limit reached. Use limit=2 for more]");
        assert_eq!(details, Some(json!({"entryLimitReached": 1})));
    }
}

#[test]
fn errors() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "file", "");
    let err = run(&LsTool, dir.path(), json!({"path": "nope"})).unwrap_err();
    assert_eq!(
        err,
        format!("Path not found: {}", dir.path().join("nope").display())
    );
    let err = run(&LsTool, dir.path(), json!({"path": "file"})).unwrap_err();
    assert_eq!(
        err,
        format!("Not a directory: {}", dir.path().join("file").display())
    );
}

#[test]
fn locale_order_matches_node() {
    // Expected order produced by Node's `a.toLowerCase().localeCompare(b.toLowerCase())`.
    // Ties (equal when lowercased) keep their input order: the sort is stable.
    let mut names = vec![
        "ab", "a-b", "a_b", "A", "a", "b", "B", "é", "f", "a.txt", "a b", "aB", "Ab",
    ];
    #[allow(clippy::disallowed_methods)] // std's stable sort is the reference
    names.sort_by(|a, b| locale_compare(&a.to_lowercase(), &b.to_lowercase()));
    assert_eq!(
        names,
        ["A", "a", "a b", "a_b", "a-b", "a.txt", "ab", "aB", "Ab", "b", "B", "é", "f"]
    );
}
