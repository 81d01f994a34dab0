//! `pi --export <file> [out]`: one HTML file, `Exported to: <path>` (on stderr when stdin is
//! not a terminal, as pi's console takeover does), errors as `Error: …` with exit 1.

use crate::support::PiCommand;

const SESSION: &str = include_str!("../../fixtures/sessions/ts-all-entries.jsonl");
const NAME: &str = "2026-11-21T23-46-07-199Z_01a20080-bedf-7406-9017-36f72ffdce2c";

fn assert_page(html: &str) {
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("01a20080-bedf-7406-9017-36f72ffdce2c"));
    assert!(html.contains("echo: after nav"));
    assert!(!html.contains("https://"));
}

#[test]
fn export_to_an_explicit_path() {
    let pi = PiCommand::new().write_file("s.jsonl", SESSION);
    let out = pi.args(["--export", "s.jsonl", "out/page.html"]);
    std::fs::create_dir_all(out.cwd().join("out")).unwrap();
    let res = out.run();
    res.assert_code(0).assert_no_panic();
    let all = format!("{}{}", res.stdout, res.stderr);
    assert!(all.contains("Exported to: out/page.html"), "{all}");
    assert_page(&std::fs::read_to_string(out.cwd().join("out/page.html")).unwrap());
}

#[test]
fn export_to_the_default_path_in_cwd() {
    let file = format!("sessions/{NAME}.jsonl");
    let pi = PiCommand::new()
        .write_file(&file, SESSION)
        .args(["--export", file.as_str()]);
    let res = pi.run();
    res.assert_code(0);
    let want = format!("pi-session-{NAME}.html");
    assert!(
        res.stderr.contains(&format!("Exported to: {want}")),
        "{}",
        res.stderr
    );
    assert_page(&std::fs::read_to_string(pi.cwd().join(want)).unwrap());
}

#[test]
fn export_of_a_missing_file_fails() {
    let res = PiCommand::new().args(["--export", "nope.jsonl"]).run();
    res.assert_code(1).assert_no_panic();
    assert!(
        res.stderr.contains("Error: File not found: nope.jsonl"),
        "{}",
        res.stderr
    );
}

#[test]
fn export_never_overwrites_the_session_it_exports() {
    let pi = PiCommand::new().write_file("s.jsonl", SESSION);
    let cwd = pi.cwd().to_path_buf();
    let pi = pi.args(["--export", "s.jsonl", "./s.jsonl"]);
    let res = pi.run();
    res.assert_code(1).assert_no_panic();
    assert!(
        res.stderr
            .contains("Refusing to overwrite the session file"),
        "{}",
        res.stderr
    );
    assert_eq!(
        std::fs::read_to_string(cwd.join("s.jsonl")).unwrap(),
        SESSION
    );
}

#[test]
fn export_of_an_old_session_leaves_it_as_it_was() {
    let v1 = include_str!("../../fixtures/sessions/pi-mono-large-session.jsonl");
    let pi = PiCommand::new().write_file("old.jsonl", v1);
    let cwd = pi.cwd().to_path_buf();
    let pi = pi.args(["--export", "old.jsonl", "page.html"]);
    let res = pi.run();
    res.assert_code(0).assert_no_panic();
    assert_eq!(std::fs::read_to_string(cwd.join("old.jsonl")).unwrap(), v1);
    assert!(!cwd.join("old.jsonl.bak").exists());
    let html = std::fs::read_to_string(cwd.join("page.html")).unwrap();
    assert!(html.contains("d703a1a9-1b7b-4fb1-b512-c9738b1fe617"));
    // Every message is on the page: 453 assistant replies (one usage line each) making 391
    // tool calls, 373 of them answered (pi's own counts for this file).
    assert_eq!(html.matches(r#"<div class="usage""#).count(), 453);
    assert_eq!(html.matches(r#"<div class="call""#).count(), 391);
    assert_eq!(html.matches(r#"<div class="result""#).count(), 373);
}
