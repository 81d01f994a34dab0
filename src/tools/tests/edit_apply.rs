use super::*;
use crate::tools::diff::edit_diff;
use serde_json::Value;

/// Contents and edits run through pi 1.5.2's own edit code (`applyEditsToNormalizedContent`,
/// `applyReplacementsToOriginal`, `generateEditDiff`): the file it would write, its display
/// diff, unified patch and first changed line, or its error.
const PI_CASES: &str = include_str!("edit_cases.json");

/// What our edit writes and reports for one case, in the recorded shape.
fn ours(content: &str, edits: &[Edit]) -> Result<(String, String, String, Option<usize>), String> {
    let (bom, text) = match content.strip_prefix('\u{FEFF}') {
        Some(rest) => ("\u{FEFF}", rest),
        None => ("", content),
    };
    let normalized = to_lf(text);
    let applied = apply_edits(&normalized, edits, "f.txt")?;
    let body = if text.contains('\r') {
        splice_into_original(text, &applied.replacements)
    } else {
        applied.new.clone()
    };
    let mut delta: isize = 0;
    let changes: Vec<_> = applied
        .replacements
        .iter()
        .map(|r| {
            let at = (r.at as isize + delta) as usize;
            delta += r.new_text.len() as isize - r.len as isize;
            (r.at, r.at + r.len, at, at + r.new_text.len())
        })
        .collect();
    let d = edit_diff("f.txt", &normalized, &applied.new, &changes);
    Ok((
        format!("{bom}{body}"),
        d.diff,
        d.patch,
        d.first_changed_line,
    ))
}

fn check_cases(json: &str) {
    let cases: Vec<Value> = serde_json::from_str(json).unwrap();
    let mut failures = Vec::new();
    for c in &cases {
        let edits: Vec<Edit> = c["edits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| Edit {
                old_text: e["oldText"].as_str().unwrap().into(),
                new_text: e["newText"].as_str().unwrap().into(),
            })
            .collect();
        let got = ours(c["content"].as_str().unwrap(), &edits);
        let want = match c.get("error") {
            Some(e) => Err(e.as_str().unwrap().to_string()),
            None => Ok((
                c["file"].as_str().unwrap().to_string(),
                c["diff"].as_str().unwrap().to_string(),
                c["patch"].as_str().unwrap().to_string(),
                c["firstChangedLine"].as_u64().map(|n| n as usize),
            )),
        };
        if got != want {
            failures.push(format!("{}:\n  ours {got:?}\n  pi   {want:?}", c["name"]));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn agrees_with_pi_on_recorded_edits() {
    check_cases(PI_CASES);
}

/// `PI_EDIT_CASES=/path/cases.json cargo test --lib edit_apply -- --ignored`: the same check
/// over a larger generated set.
#[test]
#[ignore]
fn agrees_with_pi_on_generated_edits() {
    let path = std::env::var("PI_EDIT_CASES").expect("PI_EDIT_CASES");
    check_cases(&std::fs::read_to_string(path).unwrap());
}

#[test]
fn untouched_lines_keep_their_endings_and_new_lines_take_the_local_one() {
    let text = "a\r\nb\nc\r\nd\n";
    let applied = apply_edits(
        &to_lf(text),
        &[Edit {
            old_text: "c".into(),
            new_text: "C1\nC2".into(),
        }],
        "f",
    )
    .unwrap();
    assert_eq!(
        splice_into_original(text, &applied.replacements),
        "a\r\nb\nC1\r\nC2\r\nd\n"
    );
}
