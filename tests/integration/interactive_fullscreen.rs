//! pi 1.x's interactive layouts on a real pseudo-terminal: fullscreen (the default) runs on the
//! alternate screen and leaves the transcript and a resume hint in the scrollback on exit;
//! `--tui-mode` and the `tuiMode` setting choose, and a bad `--tui-mode` is an error;
//! `--use-theme` picks the theme for one run; a session whose folder is gone asks what to do.

use std::time::Duration;

use crate::support::pty::PtyChild;
use crate::support::{MockServer, PiCommand, Reply};

const API: &str = "openai-completions";

fn fails_with(out: &crate::support::Output, text: &str) {
    out.assert_code(1).assert_no_panic();
    assert!(
        out.stderr.contains(text),
        "expected {text:?} in: {}",
        out.stderr
    );
}

#[test]
fn a_missing_or_unknown_tui_mode_is_an_error() {
    let pi = PiCommand::new();
    fails_with(
        &pi.again().args(["--tui-mode", "bogus", "-p", "hi"]).run(),
        "Invalid TUI mode \"bogus\". Valid values: regular, fullscreen",
    );
    fails_with(
        &pi.again().args(["--tui-mode", "-p", "hi"]).run(),
        "--tui-mode requires regular or fullscreen",
    );
    fails_with(
        &pi.again().args(["-p", "hi", "--use-theme"]).run(),
        "--use-theme requires a theme name",
    );
}

#[test]
fn use_theme_picks_the_theme_for_this_run_without_saving_it() {
    let mock = MockServer::with_replies([]);
    let pi = PiCommand::for_mock(API, &mock);
    let cmd = pi.again().args(["--use-theme", "no-such-theme"]);
    let mut child = PtyChild::spawn(cmd.command(), 100, 30);
    child.wait_for(
        "Failed to load theme \"no-such-theme\"",
        Duration::from_secs(10),
    );
    child.send("\x04");
    child.wait_exit(Duration::from_secs(10));
    let settings = std::fs::read_to_string(pi.agent_dir().join("settings.json")).unwrap();
    assert!(!settings.contains("no-such-theme"), "{settings}");
}

#[test]
fn fullscreen_is_the_default_and_exit_leaves_the_transcript_and_a_resume_hint() {
    let mock = MockServer::with_replies([Reply::text(API, "Answer on the alternate screen.")]);
    let pi = PiCommand::for_mock(API, &mock);
    let mut child = PtyChild::spawn(pi.command(), 80, 24);
    child.wait_for("mock-model", Duration::from_secs(10));
    assert!(child.alternate_screen());
    child.send("ask away\r");
    child.wait_for("Answer on the alternate screen.", Duration::from_secs(10));
    child.send("\x04");
    let status = child.wait_exit(Duration::from_secs(10));
    assert!(status.success(), "{status:?}");
    assert!(!child.alternate_screen());
    let screen = child.screen();
    assert!(screen.contains("ask away"), "{screen}");
    assert!(
        screen.contains("Answer on the alternate screen."),
        "{screen}"
    );
    assert!(
        screen.contains("To resume this session: pi --session "),
        "{screen}"
    );
}

#[test]
fn the_setting_and_the_flag_choose_the_layout() {
    let mock = MockServer::with_replies([]);
    let pi = PiCommand::for_mock(API, &mock).write_agent_file(
        "settings.json",
        r#"{"tuiMode": "regular", "retry": {"enabled": false}}"#,
    );
    let mut child = PtyChild::spawn(pi.command(), 80, 24);
    child.wait_for("mock-model", Duration::from_secs(10));
    assert!(!child.alternate_screen(), "tuiMode: regular");
    child.send("\x04");
    child.wait_exit(Duration::from_secs(10));

    let cmd = pi.again().args(["--tui-mode", "fullscreen"]);
    let mut child = PtyChild::spawn(cmd.command(), 80, 24);
    child.wait_for("mock-model", Duration::from_secs(10));
    assert!(child.alternate_screen(), "the flag wins");
    child.send("\x04");
    child.wait_exit(Duration::from_secs(10));
}

/// A saved session whose folder no longer exists, with one exchange in it.
fn orphaned_session(pi: &PiCommand) -> std::path::PathBuf {
    let text = include_str!("../../fixtures/sessions/pi-0.87.1-rpc.jsonl").replacen(
        r#""cwd":"/tmp/g87/proj""#,
        r#""cwd":"/nonexistent/moved-away""#,
        1,
    );
    let file = pi.cwd().join("orphan.jsonl");
    std::fs::write(&file, text).unwrap();
    file
}

fn jsonl_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    walk(dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect()
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn a_session_whose_folder_is_gone_offers_continue_fork_or_cancel() {
    let mock = MockServer::start();
    let pi = PiCommand::for_mock(API, &mock);
    let file = orphaned_session(&pi);
    let resume = || pi.again().args(["--session", file.to_str().unwrap()]);

    // Cancel: pi exits 0 and opens nothing.
    let mut child = PtyChild::spawn(resume().command(), 100, 30);
    child.wait_for(
        "cwd from session file does not exist",
        Duration::from_secs(10),
    );
    child.wait_for("/nonexistent/moved-away", Duration::from_secs(5));
    child.wait_for("continue in current cwd", Duration::from_secs(5));
    child.wait_for("Fork", Duration::from_secs(5));
    child.send("\x1b");
    let status = child.wait_exit(Duration::from_secs(10));
    assert!(status.success(), "{status:?}");
    assert!(jsonl_files(&pi.agent_dir().join("sessions")).is_empty());

    // Continue: the session runs here and its file is still the one resumed.
    let mut child = PtyChild::spawn(resume().command(), 100, 30);
    child.wait_for("Continue", Duration::from_secs(10));
    child.send("\r");
    child.wait_for("Final answer.", Duration::from_secs(10));
    child.send("\x04");
    child.wait_exit(Duration::from_secs(10));
    assert!(jsonl_files(&pi.agent_dir().join("sessions")).is_empty());

    // Fork: a new session for this folder with the old messages; the original is untouched.
    let before_fork = std::fs::read_to_string(&file).unwrap();
    let mut child = PtyChild::spawn(resume().command(), 100, 30);
    child.wait_for("Fork", Duration::from_secs(10));
    child.send("\x1b[B");
    child.send("\r");
    child.wait_for("Final answer.", Duration::from_secs(10));
    child.send("\x04");
    child.wait_exit(Duration::from_secs(10));
    let forked = jsonl_files(&pi.agent_dir().join("sessions"));
    assert_eq!(forked.len(), 1, "{forked:?}");
    let copy = std::fs::read_to_string(&forked[0]).unwrap();
    let here = serde_json::to_string(&pi.cwd().to_string_lossy()).unwrap();
    assert!(
        copy.contains(&format!("\"cwd\":{here}")),
        "cwd {here} not in the copy"
    );
    assert!(copy.contains("Final answer."));
    assert!(std::fs::read_to_string(&file).unwrap() == before_fork);
}
