//! Tool output as pi draws it: `write` content coloured as code, the changed words of a
//! one-line edit in inverse video, and collapsed bash output budgeted in screen rows on a
//! narrow terminal.

use super::*;

fn run_tool(h: &mut Harness, model: &str, name: &str, arguments: serde_json::Value) {
    push_reply(
        model,
        Reply {
            blocks: vec![Block::ToolCall {
                id: "call_1".into(),
                name: name.into(),
                arguments,
            }],
            ..Default::default()
        },
    );
    push_reply(model, Reply::text("All done."));
    h.type_bytes("go\r");
    h.wait_idle();
    h.wait_text("All done.");
}

/// The characters drawn in inverse video on rows containing `marker`.
fn inverse_text(h: &Harness, marker: &str) -> Vec<String> {
    let term = h.app.tui.terminal();
    let lines = term.screen_lines();
    let cells = term.inverse_cells();
    lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains(marker))
        .map(|(row, line)| {
            let chars: Vec<char> = line.chars().collect();
            cells
                .iter()
                .filter(|(r, _)| *r == row)
                .filter_map(|(_, c)| chars.get(*c))
                .collect()
        })
        .collect()
}

#[test]
fn an_edit_of_one_line_highlights_the_changed_words() {
    let mut h = harness("out-diff");
    h.resize(100, 30);
    let file = h.dir.path().join("demo.rs");
    std::fs::write(&file, "fn main() {\n    let x = old_name(1);\n}\n").unwrap();
    run_tool(
        &mut h,
        "out-diff",
        "edit",
        json!({"path": file.to_string_lossy(),
            "edits": [{"oldText": "old_name(1)", "newText": "new_name(1, 2)"}]}),
    );
    assert_eq!(inverse_text(&h, "old_name"), ["old_name"]);
    assert_eq!(inverse_text(&h, "new_name"), ["new_name, 2"]);
}

#[test]
fn written_code_is_coloured_by_its_language() {
    let mut h = harness("out-write");
    h.resize(100, 30);
    let path = h.dir.path().join("demo.rs");
    run_tool(
        &mut h,
        "out-write",
        "write",
        json!({"path": path.to_string_lossy(), "content": "fn main() {}\n"}),
    );
    let theme = crate::tui::theme::current();
    let keyword = format!(
        "{}fn",
        theme.fg_code(crate::tui::theme::Token::SyntaxKeyword)
    );
    let frames = h.app.tui.terminal().frames().join("");
    assert!(frames.contains(&keyword), "the fn keyword is coloured");
    // A file of no known language stays in the output colour.
    let mut h = harness("out-write-txt");
    let path = h.dir.path().join("notes.txt");
    run_tool(
        &mut h,
        "out-write-txt",
        "write",
        json!({"path": path.to_string_lossy(), "content": "fn main() {}\n"}),
    );
    let frames = h.app.tui.terminal().frames().join("");
    assert!(!frames.contains(&keyword));
}

#[test]
fn collapsed_bash_output_counts_screen_rows_on_a_narrow_terminal() {
    let mut h = harness("out-bash");
    h.resize(60, 20);
    let command = "for i in 1 2 3 4 5 6 7; do echo \"line $i with a long tail of text that wraps on narrow screens\"; done";
    run_tool(&mut h, "out-bash", "bash", json!({"command": command}));
    let screen = h.screen();
    let shown: Vec<&str> = screen
        .lines()
        .filter(|l| l.contains("with a long tail") || l.trim() == "screens")
        .filter(|l| !l.contains("$ for"))
        .collect();
    // Five rows: the end of line 5, then lines 6 and 7 wrapped in two rows each.
    assert_eq!(
        shown,
        [
            " screens",
            " line 6 with a long tail of text that wraps on narrow",
            " screens",
            " line 7 with a long tail of text that wraps on narrow",
            " screens",
        ],
        "{screen}"
    );
    assert!(
        screen.contains("... (9 earlier lines, ctrl+o to expand)"),
        "{screen}"
    );
}

#[test]
fn a_user_bash_preview_fits_twenty_screen_rows_on_a_narrow_terminal() {
    let mut h = harness("out-user-bash");
    h.resize(60, 20);
    h.type_bytes(
        "!for i in $(seq 1 25); do echo \"line $i with a long tail of text that wraps on narrow screens\"; done\r",
    );
    h.wait_text("5 more lines");
    let screen = h.screen();
    let rows = screen
        .lines()
        .filter(|l| l.contains("with a long tail") || l.trim() == "screens")
        .filter(|l| !l.contains("$ for"))
        .count();
    assert_eq!(rows, 20, "{screen}");
    assert!(screen.contains(" line 25 with a long tail"), "{screen}");
    assert!(!screen.contains(" line 15 with"), "{screen}");
}
