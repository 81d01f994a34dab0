//! pi 1.x's interactive layouts on a real pseudo-terminal: fullscreen (the default) runs on the
//! alternate screen and leaves the transcript and a resume hint in the scrollback on exit;
//! `--tui-mode` and the `tuiMode` setting choose, and a bad `--tui-mode` is an error.

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
