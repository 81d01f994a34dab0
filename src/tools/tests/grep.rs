use serde_json::json;

use super::super::search_util::test_support::{run, text, write};
use super::*;
use crate::agent::tool::ToolContext;
use crate::ai::Abort;

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".gitignore", "ignored.txt\nbuild/\n");
    write(root, "a.txt", "hello world\nsecond line\nHello again\n");
    write(
        root,
        "src/main.rs",
        "fn main() {\n    println!(\"hello\");\n}\n",
    );
    write(root, "src/lib/util.rs", "pub fn hello() {}\n");
    write(root, ".hidden/secret.txt", "hello from hidden\n");
    write(root, "ignored.txt", "hello ignored\n");
    write(root, "build/out.txt", "hello build\n");
    write(root, ".git/config", "hello git\n");
    write(root, "bin.dat", b"hello\0binary\n");
    dir
}

#[test]
fn finds_matches_sorted_and_respects_gitignore_hidden_binary() {
    let dir = tree();
    let out = text(&GrepTool, dir.path(), json!({"pattern": "hello"}));
    assert_eq!(
        out,
        ".hidden/secret.txt:1: hello from hidden\n\
         a.txt:1: hello world\n\
         src/lib/util.rs:1: pub fn hello() {}\n\
         src/main.rs:2:     println!(\"hello\");"
    );
}

#[test]
fn ignore_case_and_glob_filter() {
    let dir = tree();
    let out = text(
        &GrepTool,
        dir.path(),
        json!({"pattern": "HELLO", "ignoreCase": true, "glob": "*.txt"}),
    );
    // As with ripgrep's --glob, a matching glob overrides .gitignore for files it names
    // (ignored.txt), but ignored directories (build/) stay unvisited.
    assert_eq!(
        out,
        ".hidden/secret.txt:1: hello from hidden\na.txt:1: hello world\na.txt:3: Hello again\n\
         ignored.txt:1: hello ignored"
    );
    let out = text(
        &GrepTool,
        dir.path(),
        json!({"pattern": "hello", "glob": "src/**/*.rs"}),
    );
    assert_eq!(
        out,
        "src/lib/util.rs:1: pub fn hello() {}\nsrc/main.rs:2:     println!(\"hello\");"
    );
}

#[test]
fn gitignore_applies_only_inside_a_git_repository() {
    // pi runs ripgrep, which reads .gitignore only in a repository; .ignore always.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".gitignore", "a.txt\n");
    write(dir.path(), ".ignore", "b.txt\n");
    write(dir.path(), "a.txt", "hit\n");
    write(dir.path(), "b.txt", "hit\n");
    let out = text(&GrepTool, dir.path(), json!({"pattern": "hit"}));
    assert_eq!(out, "a.txt:1: hit");
    write(dir.path(), ".git/HEAD", "ref: refs/heads/main\n");
    let out = text(&GrepTool, dir.path(), json!({"pattern": "hit"}));
    assert_eq!(out, "No matches found");
}

#[test]
fn literal_escapes_regex_metacharacters() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", "a.b(c)*\naxb(c)\n");
    let out = text(
        &GrepTool,
        dir.path(),
        json!({"pattern": "a.b(c)*", "literal": true}),
    );
    assert_eq!(out, "f.txt:1: a.b(c)*");
    let out = text(&GrepTool, dir.path(), json!({"pattern": "a.b\\(c\\)"}));
    assert_eq!(out, "f.txt:1: a.b(c)*\nf.txt:2: axb(c)");
}

#[test]
fn context_lines_use_dash_separators() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", "one\ntwo\nthree\nfour\nfive\n");
    let out = text(
        &GrepTool,
        dir.path(),
        json!({"pattern": "three", "context": 1}),
    );
    assert_eq!(out, "f.txt-2- two\nf.txt:3: three\nf.txt-4- four");
    // Overlapping windows are merged, each line shown once, as ripgrep reports them (pi 1.x).
    let out = text(
        &GrepTool,
        dir.path(),
        json!({"pattern": "^t", "context": 1}),
    );
    assert_eq!(
        out,
        "f.txt-1- one\nf.txt:2: two\nf.txt:3: three\nf.txt-4- four"
    );
    // Separate windows leave the lines between out; a fractional context counts whole lines.
    write(dir.path(), "f.txt", "a\nm1\nb\nc\nd\nm2\ne\n");
    let out = text(
        &GrepTool,
        dir.path(),
        json!({"pattern": "^m", "context": 1.9}),
    );
    assert_eq!(
        out,
        "f.txt-1- a\nf.txt:2: m1\nf.txt-3- b\nf.txt-5- d\nf.txt:6: m2\nf.txt-7- e"
    );
}

#[test]
fn limit_notice_only_when_more_matches_exist() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "x1\nx2\n");
    let (out, details) = run(&GrepTool, dir.path(), json!({"pattern": "x", "limit": 2})).unwrap();
    assert_eq!(out, "a.txt:1: x1\na.txt:2: x2");
    assert_eq!(details, None);
    // A limit below one means one; fractions are cut off.
    for limit in [json!(0), json!(-3), json!(1.7)] {
        let (out, details) = run(
            &GrepTool,
            dir.path(),
            json!({"pattern": "x", "limit": limit}),
        )
        .unwrap();
        assert_eq!(
            out,
            "a.txt:1: x1\n\n[1 matches limit reached. Use limit=2 for more, or refine pattern]"
        );
        assert_eq!(details, Some(json!({"matchLimitReached": 1})));
    }
}

#[test]
fn context_after_the_last_match_shown_includes_later_matches_as_context() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "m1\nm2\nctx\nm3\n");
    let out = text(
        &GrepTool,
        dir.path(),
        json!({"pattern": "^m", "limit": 1, "context": 2}),
    );
    assert_eq!(
        out,
        "a.txt:1: m1\na.txt-2- m2\na.txt-3- ctx\n\n\
         [1 matches limit reached. Use limit=2 for more, or refine pattern]"
    );
}

#[test]
fn glob_is_relative_to_path_and_ignores_leading_dot_slash() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "sub/inner/a.txt", "x\n");
    write(dir.path(), "sub/a.txt", "x\n");
    for glob in ["inner/*.txt", "./inner/*.txt", "././inner/*.txt"] {
        let out = text(
            &GrepTool,
            dir.path(),
            json!({"pattern": "x", "path": "sub", "glob": glob}),
        );
        assert_eq!(out, "inner/a.txt:1: x", "{glob}");
    }
    let out = text(
        &GrepTool,
        dir.path(),
        json!({"pattern": "x", "path": "sub", "glob": "!./inner/*"}),
    );
    assert_eq!(out, "a.txt:1: x");
}

#[test]
fn match_limit_notice_and_details() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "x1\nx2\n");
    write(dir.path(), "b.txt", "x3\nx4\n");
    // The notice needs a fourth match (x4), which is not shown.
    let (out, details) = run(&GrepTool, dir.path(), json!({"pattern": "x", "limit": 3})).unwrap();
    assert_eq!(
        out,
        "a.txt:1: x1\na.txt:2: x2\nb.txt:1: x3\n\n\
         [3 matches limit reached. Use limit=6 for more, or refine pattern]"
    );
    assert_eq!(details, Some(json!({"matchLimitReached": 3})));
}

#[test]
fn long_lines_are_cut_with_notice() {
    let dir = tempfile::tempdir().unwrap();
    let long = format!("needle{}", "x".repeat(600));
    write(dir.path(), "f.txt", format!("{long}\n"));
    let (out, details) = run(&GrepTool, dir.path(), json!({"pattern": "needle"})).unwrap();
    let expected = format!(
        "f.txt:1: {}... [truncated]\n\n[Some lines truncated to 500 chars. Use read tool to see full lines]",
        &long[..500]
    );
    assert_eq!(out, expected);
    assert_eq!(details, Some(json!({"linesTruncated": true})));
}

#[test]
fn byte_cap_notice() {
    let dir = tempfile::tempdir().unwrap();
    let body: String = (0..300)
        .map(|i| format!("match {i} {}\n", "y".repeat(400)))
        .collect();
    write(dir.path(), "f.txt", body);
    let (out, details) = run(
        &GrepTool,
        dir.path(),
        json!({"pattern": "match", "limit": 1000}),
    )
    .unwrap();
    assert!(
        out.ends_with("\n\n[50.0KB limit reached]"),
        "{}",
        &out[out.len() - 100..]
    );
    let details = details.unwrap();
    assert_eq!(details["truncation"]["truncatedBy"], "bytes");
    assert_eq!(details["truncation"]["maxBytes"], 51200);
    assert!(details.get("matchLimitReached").is_none());
}

#[test]
fn single_file_search_shows_basename() {
    let dir = tree();
    let out = text(
        &GrepTool,
        dir.path(),
        json!({"pattern": "hello", "path": "src/main.rs"}),
    );
    assert_eq!(out, "main.rs:2:     println!(\"hello\");");
    // An explicitly named file is searched even if .gitignore lists it.
    let out = text(
        &GrepTool,
        dir.path(),
        json!({"pattern": "hello", "path": "ignored.txt"}),
    );
    assert_eq!(out, "ignored.txt:1: hello ignored");
}

#[test]
fn subdirectory_paths_are_relative_to_it() {
    let dir = tree();
    let out = text(
        &GrepTool,
        dir.path(),
        json!({"pattern": "hello", "path": "src"}),
    );
    assert_eq!(
        out,
        "lib/util.rs:1: pub fn hello() {}\nmain.rs:2:     println!(\"hello\");"
    );
}

#[test]
fn no_matches_missing_path_and_bad_regex() {
    let dir = tree();
    assert_eq!(
        text(&GrepTool, dir.path(), json!({"pattern": "zzz-nothing"})),
        "No matches found"
    );
    let err = run(
        &GrepTool,
        dir.path(),
        json!({"pattern": "x", "path": "nope"}),
    )
    .unwrap_err();
    assert_eq!(
        err,
        format!("Path not found: {}", dir.path().join("nope").display())
    );
    let err = run(&GrepTool, dir.path(), json!({"pattern": "(unclosed"})).unwrap_err();
    assert_eq!(
        err,
        "rg: regex parse error:\n    (?:(unclosed)\n    ^\nerror: unclosed group"
    );
}

#[test]
fn crlf_and_patterns_that_could_span_lines() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", "foo\r\nbar baz\nqux");
    let out = text(&GrepTool, dir.path(), json!({"pattern": "foo\\s+bar"}));
    assert_eq!(out, "No matches found");
    let out = text(&GrepTool, dir.path(), json!({"pattern": "\\s"}));
    assert_eq!(out, "f.txt:1: foo\nf.txt:2: bar baz");
    let out = text(&GrepTool, dir.path(), json!({"pattern": "qux$"}));
    assert_eq!(out, "f.txt:3: qux");
    let out = text(&GrepTool, dir.path(), json!({"pattern": ""}));
    assert_eq!(out, "f.txt:1: foo\nf.txt:2: bar baz\nf.txt:3: qux");
}

#[test]
fn limit_keeps_first_paths_in_order_across_many_files() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..200 {
        write(dir.path(), &format!("d{}/f{i:03}.txt", i % 7), "hit\nhit\n");
    }
    let out = text(&GrepTool, dir.path(), json!({"pattern": "hit", "limit": 5}));
    assert_eq!(
        out,
        "d0/f000.txt:1: hit\nd0/f000.txt:2: hit\nd0/f007.txt:1: hit\nd0/f007.txt:2: hit\n\
         d0/f014.txt:1: hit\n\n[5 matches limit reached. Use limit=10 for more, or refine pattern]"
    );
}

#[test]
fn aborted_before_start() {
    let dir = tree();
    let abort = Abort::new();
    abort.abort();
    let ctx = ToolContext {
        cwd: dir.path().to_path_buf(),
        abort,
        on_update: &|_| {},
        nested: None,
    };
    let err = GrepTool
        .execute("c", json!({"pattern": "hello"}), &ctx)
        .unwrap_err();
    assert_eq!(err, "Operation aborted");
}
