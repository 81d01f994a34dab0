use std::path::Path;

use serde_json::json;

use super::super::search_util::test_support::{run, text, write};
use super::*;

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".gitignore", "target/\n*.log\n");
    write(root, "Cargo.toml", "");
    write(root, "src/main.rs", "");
    write(root, "src/tools/grep.rs", "");
    write(root, "src/tools/README.md", "");
    write(root, "tests/it.rs", "");
    write(root, ".hidden.rs", "");
    write(root, "target/debug/build.rs", "");
    write(root, "debug.log", "");
    write(root, ".git/hooks/x.rs", "");
    dir
}

#[test]
fn basename_glob_sorted_hidden_included_gitignore_respected() {
    let dir = tree();
    let out = text(&FindTool, dir.path(), json!({"pattern": "*.rs"}));
    assert_eq!(
        out,
        ".hidden.rs\nsrc/main.rs\nsrc/tools/grep.rs\ntests/it.rs"
    );
}

#[test]
fn pattern_with_slash_matches_paths() {
    let dir = tree();
    let out = text(&FindTool, dir.path(), json!({"pattern": "src/**/*.rs"}));
    assert_eq!(out, "src/main.rs\nsrc/tools/grep.rs");
    let out = text(&FindTool, dir.path(), json!({"pattern": "src/*.rs"}));
    assert_eq!(out, "src/main.rs");
    let out = text(&FindTool, dir.path(), json!({"pattern": "**/tools/*"}));
    assert_eq!(out, "src/tools/README.md\nsrc/tools/grep.rs");
}

#[test]
fn path_patterns_are_anchored_at_the_searched_directory() {
    let dir = tree();
    // pi 1.6: `tools/*.rs` no longer reaches `src/tools/grep.rs`; `**/` matches at any depth.
    assert_eq!(
        text(&FindTool, dir.path(), json!({"pattern": "tools/*.rs"})),
        "No files found matching pattern"
    );
    assert_eq!(
        text(&FindTool, dir.path(), json!({"pattern": "**/tools/*.rs"})),
        "src/tools/grep.rs"
    );
    let sub = dir.path().join("src");
    assert_eq!(
        text(
            &FindTool,
            dir.path(),
            json!({"pattern": "tools/*.rs", "path": sub})
        ),
        "tools/grep.rs"
    );
    // A folder above the searched one is not part of the matched path.
    assert_eq!(
        text(
            &FindTool,
            dir.path(),
            json!({"pattern": "src/**/*.rs", "path": sub})
        ),
        "No files found matching pattern"
    );
}

#[test]
fn leading_dot_slash_is_dropped() {
    let dir = tree();
    assert_eq!(
        text(&FindTool, dir.path(), json!({"pattern": "./src/*.rs"})),
        "src/main.rs"
    );
    assert_eq!(
        text(&FindTool, dir.path(), json!({"pattern": "././*.toml"})),
        "Cargo.toml"
    );
}

#[test]
fn directories_get_trailing_slash() {
    let dir = tree();
    let out = text(&FindTool, dir.path(), json!({"pattern": "*o*"}));
    assert_eq!(out, ".gitignore\nCargo.toml\nsrc/tools/");
}

#[test]
fn smart_case() {
    let dir = tree();
    assert_eq!(
        text(&FindTool, dir.path(), json!({"pattern": "readme*"})),
        "src/tools/README.md"
    );
    assert_eq!(
        text(&FindTool, dir.path(), json!({"pattern": "Readme*"})),
        "No files found matching pattern"
    );
}

#[test]
fn search_path_and_limit_notice() {
    let dir = tree();
    let (out, details) = run(
        &FindTool,
        dir.path(),
        json!({"pattern": "*", "path": "src", "limit": 2}),
    )
    .unwrap();
    assert_eq!(
        out,
        "main.rs\ntools/\n\n[2 results limit reached. Use limit=4 for more, or refine pattern]"
    );
    assert_eq!(details, Some(json!({"resultLimitReached": 2})));
}

#[test]
fn limit_notice_only_when_more_paths_exist_and_limit_at_least_one() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "");
    write(dir.path(), "b.txt", "");
    let (out, details) = run(
        &FindTool,
        dir.path(),
        json!({"pattern": "*.txt", "limit": 2}),
    )
    .unwrap();
    assert_eq!(out, "a.txt\nb.txt");
    assert_eq!(details, None);
    for limit in [json!(0), json!(-1), json!(1.9)] {
        let (out, details) = run(
            &FindTool,
            dir.path(),
            json!({"pattern": "*.txt", "limit": limit}),
        )
        .unwrap();
        assert_eq!(
            out,
            "a.txt\n\n[1 results limit reached. Use limit=2 for more, or refine pattern]"
        );
        assert_eq!(details, Some(json!({"resultLimitReached": 1})));
    }
}

#[test]
fn gitignore_applies_in_subdir_search_without_git() {
    let dir = tree();
    write(dir.path(), "src/debug.log", "");
    assert_eq!(
        text(
            &FindTool,
            dir.path(),
            json!({"pattern": "*.log", "path": "src"})
        ),
        "No files found matching pattern"
    );
}

#[test]
fn errors() {
    let dir = tree();
    let err = run(
        &FindTool,
        dir.path(),
        json!({"pattern": "*", "path": "missing"}),
    )
    .unwrap_err();
    assert_eq!(
        err,
        format!("Path not found: {}", dir.path().join("missing").display())
    );
    let err = run(
        &FindTool,
        dir.path(),
        json!({"pattern": "*", "path": "Cargo.toml"}),
    )
    .unwrap_err();
    assert!(err.starts_with("Not a directory: "), "{err}");
    assert!(run(&FindTool, dir.path(), json!({})).is_err());
}

#[test]
fn aborted_before_start() {
    let dir = tree();
    let abort = crate::ai::Abort::new();
    abort.abort();
    let ctx = crate::agent::tool::ToolContext {
        cwd: dir.path().to_path_buf(),
        abort,
        on_update: &|_| {},
        nested: None,
    };
    let err = FindTool
        .execute("c", json!({"pattern": "*"}), &ctx)
        .unwrap_err();
    assert_eq!(err, "Operation aborted");
}

#[test]
fn hits_sort_in_path_order() {
    // Names around `/` in byte order (space, `-`, `.`, digits) and names that are prefixes of
    // others, so plain byte order of the whole path would differ from component order.
    let names = [
        "a", "a b", "a-b", "a.b", "a0", "ab", "a/b", "a/b/c", "a b/c", "a-b/c", "a.b/c", "é",
        "a/-", "a/ ", "b", "B", "a/b c",
    ];
    for root in ["/work/tree", "rel/./tree", "/", "/x//y/"] {
        let paths: Vec<(PathBuf, bool)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (Path::new(root).join(n), i % 3 == 0))
            .collect();
        let mut expected = paths.clone();
        #[allow(clippy::disallowed_methods)] // `Path`'s own order is the reference
        expected.sort();
        let mut found = paths;
        found.reverse();
        sort_in_path_order(&mut found);
        assert_eq!(found, expected, "under {root}");
    }
}
