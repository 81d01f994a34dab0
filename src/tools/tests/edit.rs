use super::*;
use crate::ai::{Abort, Content};
use std::path::Path;

fn run(dir: &Path, args: Value) -> Result<ToolOutput, String> {
    let ctx = ToolContext {
        cwd: dir.to_path_buf(),
        abort: Abort::new(),
        on_update: &|_| {},
        nested: None,
    };
    EditTool.execute("c1", args, &ctx)
}

fn text(out: &ToolOutput) -> String {
    match &out.content[0] {
        Content::Text(t) => t.text.clone(),
        other => panic!("{other:?}"),
    }
}

fn setup(content: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("f.txt"), content).unwrap();
    d
}

fn read(d: &tempfile::TempDir) -> String {
    fs::read_to_string(d.path().join("f.txt")).unwrap()
}

fn one(old: &str, new: &str) -> Value {
    json!({"path": "f.txt", "edits": [{"oldText": old, "newText": new}]})
}

#[test]
fn exact_replacement_with_diff() {
    let d = setup("fn main() {\n    println!(\"hi\");\n}\n");
    let out = run(d.path(), one("\"hi\"", "\"bye\"")).unwrap();
    assert_eq!(text(&out), "Successfully replaced 1 block(s) in f.txt.");
    assert_eq!(read(&d), "fn main() {\n    println!(\"bye\");\n}\n");
    let details = out.details.unwrap();
    assert_eq!(details["firstChangedLine"], 2);
    assert_eq!(
        details["diff"],
        " 1 fn main() {\n-2     println!(\"hi\");\n+2     println!(\"bye\");\n 3 }"
    );
}

#[test]
fn fuzzy_match_smart_quotes_and_trailing_spaces() {
    let d = setup("let s = \u{201C}hello\u{201D};   \nnext\u{2014}line\n");
    run(
        d.path(),
        one(
            "let s = \"hello\";\nnext-line",
            "let s = \"bye\";\nnext-line",
        ),
    )
    .unwrap();
    // The lines a fuzzy match touches are rewritten in their normalized form.
    assert_eq!(read(&d), "let s = \"bye\";\nnext-line\n");
}

#[test]
fn multiple_edits_against_original() {
    let d = setup("a\nb\nc\nd\n");
    let out = run(
        d.path(),
        json!({"path": "f.txt", "edits": [{"oldText": "d", "newText": "D"}, {"oldText": "a\n", "newText": "A\n"}]}),
    )
    .unwrap();
    assert_eq!(text(&out), "Successfully replaced 2 block(s) in f.txt.");
    assert_eq!(read(&d), "A\nb\nc\nD\n");
    assert_eq!(out.details.unwrap()["firstChangedLine"], 1);
}

#[test]
fn error_messages() {
    let d = setup("x = 1\nx = 1\ny = 2\n");
    assert_eq!(
        run(d.path(), one("zzz", "q")).unwrap_err(),
        "Could not find the exact text in f.txt. The old text must match exactly including all whitespace and newlines."
    );
    assert_eq!(
        run(d.path(), one("x = 1", "q")).unwrap_err(),
        "Found 2 occurrences of the text in f.txt. The text must be unique. Please provide more context to make it unique."
    );
    assert_eq!(
        run(d.path(), one("", "q")).unwrap_err(),
        "oldText must not be empty in f.txt."
    );
    assert!(run(d.path(), one("y = 2", "y = 2"))
        .unwrap_err()
        .starts_with("No changes made to f.txt. The replacement produced identical content."));
    let two = |a: &str, b: &str| json!({"path": "f.txt", "edits": [{"oldText": a, "newText": "1"}, {"oldText": b, "newText": "2"}]});
    assert_eq!(
        run(d.path(), two("y = 2", "nope")).unwrap_err(),
        "Could not find edits[1] in f.txt. The oldText must match exactly including all whitespace and newlines."
    );
    assert_eq!(
        run(d.path(), two("x = 1\ny", "y = 2")).unwrap_err(),
        "edits[0] and edits[1] overlap in f.txt. Merge them into one edit or target disjoint regions."
    );
    assert_eq!(
        run(d.path(), two("y = 2", "x = 1")).unwrap_err(),
        "Found 2 occurrences of edits[1] in f.txt. Each oldText must be unique. Please provide more context to make it unique."
    );
    assert_eq!(
        run(d.path(), two("", "y")).unwrap_err(),
        "edits[0].oldText must not be empty in f.txt."
    );
    assert_eq!(
        run(d.path(), json!({"path": "f.txt", "edits": []})).unwrap_err(),
        "Edit tool input is invalid. edits must contain at least one replacement."
    );
    assert_eq!(
        run(
            d.path(),
            json!({"path": "missing.txt", "edits": [{"oldText": "a", "newText": "b"}]})
        )
        .unwrap_err(),
        "Could not edit file: missing.txt. Error code: ENOENT."
    );
    assert_eq!(read(&d), "x = 1\nx = 1\ny = 2\n"); // nothing written on failure
}

#[test]
fn bom_and_crlf_are_preserved() {
    let d = setup("\u{FEFF}one\r\ntwo\r\nthree\r\n");
    run(d.path(), one("two\nthree", "2\n3")).unwrap();
    assert_eq!(read(&d), "\u{FEFF}one\r\n2\r\n3\r\n");
}

#[test]
fn legacy_and_json_string_arguments() {
    let d = setup("alpha beta gamma");
    run(
        d.path(),
        json!({"path": "f.txt", "oldText": "beta", "newText": "BETA"}),
    )
    .unwrap();
    assert_eq!(read(&d), "alpha BETA gamma");
    let edits = serde_json::to_string(&json!([{"oldText": "gamma", "newText": "G"}])).unwrap();
    run(d.path(), json!({"path": "f.txt", "edits": edits})).unwrap();
    assert_eq!(read(&d), "alpha BETA G");
    let prepared = prepare_arguments(
        json!({"path": "p", "edits": [{"oldText": "a", "newText": "b"}], "oldText": "c", "newText": "d"}),
    );
    assert_eq!(
        prepared,
        json!({"path": "p", "edits": [{"oldText": "a", "newText": "b"}, {"oldText": "c", "newText": "d"}]})
    );
}

#[test]
fn diff_marks_gaps_between_distant_edits() {
    let body: String = (1..=100).map(|i| format!("line {i}\n")).collect();
    let d = setup(&body);
    let out = run(
        d.path(),
        json!({"path": "f.txt", "edits": [{"oldText": "line 10\n", "newText": "ten\n"}, {"oldText": "line 90\n", "newText": "ninety\n"}]}),
    )
    .unwrap();
    let diff = out.details.unwrap()["diff"].as_str().unwrap().to_string();
    let expected_start = "     ...\n   6 line 6\n   7 line 7\n   8 line 8\n   9 line 9\n- 10 line 10\n+ 10 ten\n  11 line 11";
    assert!(diff.starts_with(expected_start), "{diff}");
    assert!(
        diff.contains("  14 line 14\n     ...\n  86 line 86"),
        "{diff}"
    );
    assert!(diff.ends_with("- 90 line 90\n+ 90 ninety\n  91 line 91\n  92 line 92\n  93 line 93\n  94 line 94\n     ..."), "{diff}");
    // Same as diffing the whole texts.
    let (whole, first) = crate::tools::diff::diff_texts(&body, &read(&d));
    assert_eq!((whole, first), (diff, Some(10)));
}

#[test]
fn ten_megabyte_file() {
    let body: String = (0..200_000)
        .map(|i| format!("row {i:08} some filler text here\n"))
        .collect();
    assert!(body.len() > 6_000_000);
    let body = body
        .repeat(2)
        .replacen("row 00000000 some", "row first some", 1);
    let d = setup(&body);
    let out = run(
        d.path(),
        json!({"path": "f.txt", "edits": [
            {"oldText": "row first some", "newText": "ROW FIRST"},
            {"oldText": "row 00199999 some filler text here\nrow 00000000", "newText": "tail\nhead"}
        ]}),
    )
    .unwrap();
    assert_eq!(text(&out), "Successfully replaced 2 block(s) in f.txt.");
    let after = read(&d);
    assert!(after.starts_with("ROW FIRST filler"));
    assert!(after.contains("tail\nhead some filler"));
    assert_eq!(out.details.unwrap()["firstChangedLine"], 1);
}

#[test]
fn a_fifo_is_refused_instead_of_blocking() {
    let d = tempfile::tempdir().unwrap();
    crate::tools::read::tests::mkfifo(d.path(), "pipe");
    let err = run(
        d.path(),
        json!({"path": "pipe", "edits": [{"oldText": "a", "newText": "b"}]}),
    )
    .unwrap_err();
    assert_eq!(
        err,
        "Cannot edit pipe: it is a named pipe (FIFO), not a regular file"
    );
}

#[test]
fn single_edit_objects_are_a_list_of_one() {
    let single = json!({"oldText": "a", "newText": "b"});
    for args in [
        json!({"path": "p", "edits": single}),
        json!({"path": "p", "edits": single.to_string()}),
        json!({"path": "p", "oldText": "a", "newText": "b"}),
    ] {
        assert_eq!(
            prepare_arguments(args),
            json!({"path": "p", "edits": [{"oldText": "a", "newText": "b"}]})
        );
    }
    // Not an edit: left for validation to report.
    assert_eq!(
        prepare_arguments(json!({"path": "p", "edits": "nonsense"})),
        json!({"path": "p", "edits": "nonsense"})
    );
}

#[test]
fn arguments_in_old_shapes_and_invented_fields_pass_validation() {
    use crate::agent::validate::validate_arguments;
    let schema = EditTool.parameters();
    for args in [
        json!({"path": "f", "oldText": "a", "newText": "b"}),
        json!({"path": "f", "edits": "[{\"oldText\":\"a\",\"newText\":\"b\"}]"}),
        json!({"path": "f", "edits": [{"oldText": "a", "newText": "b", "reason": "typo"}], "explanation": "x"}),
    ] {
        let prepared = EditTool.prepare_arguments(args.clone());
        assert!(
            validate_arguments("edit", &schema, &prepared).is_ok(),
            "{args}"
        );
    }
}

#[test]
fn details_carry_a_unified_patch() {
    let d = setup("one\ntwo\nthree\n");
    let out = run(d.path(), one("two", "2")).unwrap();
    let details = out.details.unwrap();
    assert_eq!(
        details["patch"],
        "--- f.txt\n+++ f.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
    );
    assert_eq!(
        details.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["diff", "patch", "firstChangedLine"]
    );
}

#[test]
fn mixed_endings_and_fuzzy_neighbours_stay_byte_identical() {
    let d = setup("keep  \r\nsay \u{201C}hi\u{201D}\nkeep\u{2014}too \r\nlast\r");
    run(d.path(), one("say \"hi\"", "say \"bye\"")).unwrap();
    assert_eq!(
        read(&d),
        "keep  \r\nsay \"bye\"\nkeep\u{2014}too \r\nlast\r"
    );
}
