//! Interactive mode end to end: the real binary on a pseudo-terminal (80×24) against the mock
//! server, typed at and read back like a user would.

use std::time::Duration;

use crate::support::pty::PtyChild;
use crate::support::{MockServer, PiCommand, Reply};

const API: &str = "openai-completions";

#[test]
fn a_prompt_is_streamed_on_screen_saved_to_the_session_and_ctrl_d_exits() {
    let mock = MockServer::with_replies([Reply::text(API, "Hello from the pty mock.")]);
    let pi = PiCommand::for_mock(API, &mock);
    let mut child = PtyChild::spawn(pi.command(), 80, 24);
    child.wait_for("▀▀█  v", Duration::from_secs(10));
    child.wait_for("mock-model", Duration::from_secs(5));
    child.send("say hello");
    child.wait_for("say hello", Duration::from_secs(5));
    child.send("\r");
    child.wait_for("Hello from the pty mock.", Duration::from_secs(10));
    // Ctrl+D on the empty editor quits with status 0.
    child.send("\x04");
    let status = child.wait_exit(Duration::from_secs(10));
    assert!(status.success(), "{status:?}");

    let req = mock.single_request();
    assert_eq!(req.last_user_text().as_deref(), Some("say hello"));
    let sessions = pi.agent_dir().join("sessions");
    let file = std::fs::read_dir(&sessions)
        .expect("sessions dir")
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .find(|f| f.path().extension().is_some_and(|e| e == "jsonl"))
        .expect("a session file");
    let text = std::fs::read_to_string(file.path()).unwrap();
    assert!(text.contains("\"say hello\""), "{text}");
    assert!(text.contains("Hello from the pty mock."), "{text}");
}

/// Two saved sessions of the same folder, made in print mode.
fn two_sessions(mock: &MockServer) -> PiCommand {
    let pi = PiCommand::for_mock(API, mock);
    for question in ["zebra question", "yak question"] {
        pi.again()
            .args(["--model", "mock/mock-model", "-p", question])
            .run()
            .assert_code(0);
    }
    pi
}

fn session_files(pi: &PiCommand) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(pi.agent_dir().join("sessions"))
        .expect("sessions dir")
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .map(|f| f.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect()
}

#[test]
fn resume_flag_shows_the_picker_first_and_continues_the_chosen_session() {
    let mock = MockServer::with_replies([
        Reply::text(API, "zebra answer"),
        Reply::text(API, "yak answer"),
        Reply::text(API, "resumed answer"),
    ]);
    let pi = two_sessions(&mock);
    let cmd = pi.again().args(["--model", "mock/mock-model", "-r"]);
    let mut child = PtyChild::spawn(cmd.command(), 80, 24);
    child.wait_for("yak question", Duration::from_secs(10));
    child.wait_for("zebra question", Duration::from_secs(5));
    child.send("zebra");
    child.send("\r");
    child.wait_for("zebra answer", Duration::from_secs(10));
    child.wait_for("mock-model", Duration::from_secs(5));
    child.send("follow up");
    child.wait_for("follow up", Duration::from_secs(5));
    child.send("\r");
    child.wait_for("resumed answer", Duration::from_secs(10));
    child.send("\x04");
    let status = child.wait_exit(Duration::from_secs(10));
    assert!(status.success(), "{status:?}");

    let files = session_files(&pi);
    assert_eq!(files.len(), 2, "no new session: {files:?}");
    let zebra = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .find(|t| t.contains("zebra question"))
        .expect("the zebra session");
    assert!(zebra.contains("\"follow up\""), "{zebra}");
    assert!(zebra.contains("resumed answer"), "{zebra}");
    // The model saw the resumed conversation.
    let last = mock.requests().pop().expect("a request");
    assert_eq!(
        last.user_texts(),
        ["zebra question".to_string(), "follow up".to_string()]
    );
}

#[test]
fn cancelling_the_resume_picker_exits_without_a_session() {
    let mock = MockServer::with_replies([
        Reply::text(API, "zebra answer"),
        Reply::text(API, "yak answer"),
    ]);
    let pi = two_sessions(&mock);
    let cmd = pi.again().args(["--model", "mock/mock-model", "-r"]);
    let mut child = PtyChild::spawn(cmd.command(), 80, 24);
    child.wait_for("zebra question", Duration::from_secs(10));
    child.send("\x1b");
    child.wait_for("No session selected", Duration::from_secs(5));
    let status = child.wait_exit(Duration::from_secs(10));
    assert!(status.success(), "{status:?}");
    assert_eq!(session_files(&pi).len(), 2);
}

/// A session write that fails while the reply streams is shown at once, not at exit.
#[test]
fn a_failed_session_write_shows_a_warning_on_screen() {
    let mock = MockServer::with_replies([Reply::text(API, "Unsaved reply.")]);
    let pi = PiCommand::for_mock(API, &mock);
    std::fs::write(pi.cwd().join("blocker"), "a file, not a directory").unwrap();
    let file = pi.cwd().join("blocker").join("s.jsonl");
    let pi = pi.args(["--session", file.to_str().unwrap()]);
    let mut child = PtyChild::spawn(pi.command(), 120, 30);
    child.wait_for("mock-model", Duration::from_secs(10));
    child.send("hello");
    child.send("\r");
    child.wait_for("Unsaved reply.", Duration::from_secs(10));
    child.wait_for("Could not write session file", Duration::from_secs(10));
    child.send("\x04");
    let status = child.wait_exit(Duration::from_secs(10));
    assert!(status.success(), "{status:?}");
}

/// A session written by pi 0.87.1 (system checkpoints, context edits, a compaction with a
/// checkpoint, a branch summary) opens in the interactive transcript.
#[test]
fn a_session_written_by_pi_0_87_opens_in_the_transcript() {
    let mock = MockServer::start();
    let pi = PiCommand::for_mock(API, &mock);
    let dir = pi.cwd().to_string_lossy().into_owned();
    let text = include_str!("../../fixtures/sessions/pi-0.87.1-rpc.jsonl").replacen(
        r#""cwd":"/tmp/g87/proj""#,
        &format!(r#""cwd":{}"#, serde_json::to_string(&dir).unwrap()),
        1,
    );
    let file = pi.cwd().join("s.jsonl");
    std::fs::write(&file, &text).unwrap();
    let pi = pi.args(["--session", file.to_str().unwrap()]);
    let mut child = PtyChild::spawn(pi.command(), 120, 40);
    child.wait_for("Final answer.", Duration::from_secs(10));
    child.wait_for("final question", Duration::from_secs(5));
    // Context edits change what the model sees, not what the transcript shows.
    child.wait_for("Branch answer.", Duration::from_secs(5));
    child.wait_for("on the new branch", Duration::from_secs(5));
    child.send("\x04");
    let status = child.wait_exit(Duration::from_secs(10));
    assert!(status.success(), "{status:?}");
    let now = std::fs::read_to_string(&file).unwrap();
    assert!(now.starts_with(&text), "existing lines are never rewritten");
}

#[test]
fn ctrl_g_edits_the_prompt_in_visual_through_a_private_temp_file_that_is_removed() {
    let mock = MockServer::with_replies([Reply::text(API, "unused")]);
    let pi = PiCommand::for_mock(API, &mock);
    let tmp = pi.home().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let log = pi.home().join("editor.log");
    let script = pi.home().join("fake-editor.sh");
    // Records the file's name and mode, then replaces it by renaming over it, as vim does.
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nstat -c '%n %a' \"$1\" > {log}\nprintf 'edited text\\n' > \"$1.new\" && mv \"$1.new\" \"$1\"\n",
            log = log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let cmd = pi
        .env("VISUAL", script.display().to_string())
        .env("TMPDIR", tmp.display().to_string());
    let mut child = PtyChild::spawn(cmd.command(), 80, 24);
    child.wait_for("mock-model", Duration::from_secs(10));
    child.send("draft");
    child.wait_for("draft", Duration::from_secs(5));
    child.send("\x07");
    child.wait_for("edited text", Duration::from_secs(10));
    let logged = std::fs::read_to_string(&log).unwrap();
    let (name, mode) = logged.trim().rsplit_once(' ').unwrap();
    assert!(
        name.starts_with(&format!("{}/pi-editor-", tmp.display())) && name.ends_with(".pi.md"),
        "{logged}"
    );
    assert_eq!(mode, "600", "only the user can read the draft");
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "the temp file is removed"
    );
    child.send("\x03\x03");
    child.wait_exit(Duration::from_secs(10));
}

/// pi 1.6.0's model picker (Ctrl+L, the same as `/model`): `→ ✓ id (Name) [provider]`, and a
/// model's display name finds it.
#[test]
fn the_model_picker_shows_and_finds_display_names() {
    let mock = MockServer::start();
    let models = serde_json::json!({"providers": {"mock": {
        "baseUrl": crate::support::pi::base_url_for(API, mock.port()),
        "api": API, "apiKey": "test-key",
        "models": [{"id": "mock-model", "name": "Mock two"}, {"id": "other-model"}]
    }}});
    let pi = PiCommand::for_mock(API, &mock).write_agent_file("models.json", &models.to_string());
    let mut child = PtyChild::spawn(pi.command(), 100, 30);
    child.wait_for("mock-model", Duration::from_secs(10));
    child.send("\x0c");
    child.wait_for("→ ✓ mock-model (Mock two) [mock]", Duration::from_secs(5));
    child.wait_for("    other-model [mock]", Duration::from_secs(5));
    child.send("Mock two");
    child.wait_for("Model Name: Mock two", Duration::from_secs(5));
    assert!(
        !child.screen().contains("No matching models"),
        "{}",
        child.screen()
    );
}

/// pi 1.6.0's `/scoped-models`: every enabled model marked `✓ ` before its id, display names
/// shown and searched.
#[test]
fn scoped_models_marks_enabled_models_and_shows_names() {
    let mock = MockServer::start();
    let models = serde_json::json!({"providers": {"mock": {
        "baseUrl": crate::support::pi::base_url_for(API, mock.port()),
        "api": API, "apiKey": "test-key",
        "models": [{"id": "mock-model", "name": "Mock two"}, {"id": "other-model"}]
    }}});
    let pi = PiCommand::for_mock(API, &mock).write_agent_file("models.json", &models.to_string());
    let mut child = PtyChild::spawn(pi.command(), 100, 30);
    child.wait_for("mock-model", Duration::from_secs(10));
    child.send("/scoped-models");
    child.wait_for("/scoped-models", Duration::from_secs(5));
    child.send("\r");
    child.wait_for("Model Configuration", Duration::from_secs(5));
    child.wait_for("✓ mock-model (Mock two) [mock]", Duration::from_secs(5));
    child.wait_for("✓ other-model [mock]", Duration::from_secs(5));
    child.send("two");
    child.wait_for("→ ✓ mock-model (Mock two) [mock]", Duration::from_secs(5));
}

/// pi 1.6.0: Ctrl+O says what it did ("Tool output: expanded/collapsed"), and `/tree` shows its
/// key help as two `keys label · …` lines at 80 columns.
#[test]
fn ctrl_o_says_what_it_did_and_tree_shows_its_two_help_lines() {
    let mock = MockServer::with_replies([Reply::text(API, "an answer")]);
    let pi = PiCommand::for_mock(API, &mock);
    let mut child = PtyChild::spawn(pi.command(), 80, 30);
    child.wait_for("mock-model", Duration::from_secs(10));
    child.send("\x0f");
    child.wait_for("Tool output: expanded", Duration::from_secs(5));
    child.send("\x0f");
    child.wait_for("Tool output: collapsed", Duration::from_secs(5));
    child.send("a question");
    child.send("\r");
    child.wait_for("an answer", Duration::from_secs(10));
    child.send("/tree");
    child.wait_for("/tree", Duration::from_secs(5));
    child.send("\r");
    child.wait_for("Session Tree", Duration::from_secs(5));
    child.wait_for(
        "↑/↓ move · ←/→ page · ctrl+←/→ branch · ctrl+x copy · shift+l label",
        Duration::from_secs(5),
    );
    child.wait_for(
        "shift+t label time · filters ctrl+d/t/u/l/a · cycle ctrl+o/shift+ctrl+o",
        Duration::from_secs(5),
    );
}

/// State letter of `pid` in /proc (`T` when stopped).
fn proc_state(pid: u32) -> char {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rsplit(')')
        .next()
        .unwrap_or("")
        .trim_start()
        .chars()
        .next()
        .unwrap_or('?')
}

/// pi 1.6.0: `kill -TSTP` from outside suspends as Ctrl+Z does (the terminal handed back
/// first: out of the alternate screen), and `fg` (SIGCONT) redraws and goes on.
#[test]
fn sigtstp_from_outside_suspends_like_ctrl_z() {
    let mock = MockServer::with_replies([Reply::text(API, "after resume")]);
    let pi = PiCommand::for_mock(API, &mock)
        .arg("--tui-mode")
        .arg("fullscreen");
    let mut child = PtyChild::spawn(pi.command(), 80, 24);
    child.wait_for("mock-model", Duration::from_secs(10));
    assert!(
        child.alternate_screen(),
        "fullscreen starts on the alternate screen"
    );
    child.signal(libc::SIGTSTP);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while proc_state(child.pid()) != 'T' {
        assert!(std::time::Instant::now() < deadline, "pi did not stop");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Give the reader a moment to take what pi wrote before stopping.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while child.alternate_screen() {
        assert!(
            std::time::Instant::now() < deadline,
            "the terminal was not handed back before stopping"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.signal(libc::SIGCONT);
    child.wait_for("mock-model", Duration::from_secs(10));
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !child.alternate_screen() {
        assert!(std::time::Instant::now() < deadline, "not redrawn after fg");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.send("hello again\r");
    child.wait_for("after resume", Duration::from_secs(10));
}

/// `/share` runs `gh` off the UI thread: while a (fake) `gh gist create` waits, the editor
/// still takes keys; the links show once it is done.
#[test]
fn share_runs_gh_without_freezing_the_screen() {
    let mock = MockServer::with_replies([Reply::text(API, "an answer to share")]);
    let pi = PiCommand::for_mock(API, &mock);
    let bin = pi.home().join("fake-bin");
    let release = pi.home().join("release-gh");
    std::fs::create_dir_all(&bin).unwrap();
    let gh = bin.join("gh");
    // Waits (10 s at most) for the test to let it finish.
    let script = format!(
        "#!/bin/sh\n[ \"$1\" = --version ] && exit 0\ni=0\nwhile [ ! -e '{}' ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done\necho https://gist.github.com/someone/abc123\n",
        release.display()
    );
    std::fs::write(&gh, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into())
    );
    let pi = pi.env("PATH", path);
    let mut child = PtyChild::spawn(pi.command(), 80, 24);
    child.wait_for("mock-model", Duration::from_secs(10));
    child.send("share this\r");
    child.wait_for("an answer to share", Duration::from_secs(10));
    // The reply shows before the run is over; `/share` waits for the session to be idle.
    child.wait_gone("Working...", Duration::from_secs(10));
    child.send("/share\r");
    child.send("typed while gh runs");
    child.wait_for("typed while gh runs", Duration::from_secs(5));
    assert!(!child.screen().contains("Share URL"), "{}", child.screen());
    std::fs::write(&release, "").unwrap();
    child.wait_for(
        "Share URL: https://pi.dev/session/#abc123",
        Duration::from_secs(10),
    );
}
