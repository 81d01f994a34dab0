//! Project trust in interactive mode, with the real binary on a pseudo-terminal: a folder with
//! `AGENTS.md` and a project extension asks pi 1.x's trust question on first start; the
//! context file reaches the model whatever the answer; the extension starts only once the
//! folder is trusted, and a saved answer is not asked again.

use std::path::Path;
use std::time::Duration;

use crate::support::pty::PtyChild;
use crate::support::{MockServer, PiCommand, Reply};

const API: &str = "openai-completions";

/// A project extension that leaves a marker file when it starts.
fn marker_extension(cwd: &Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let marker = cwd.join("extension-started");
    let path = cwd.join(".pi/extensions/marker");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\ntouch '{}'\nread hello\necho '{{\"type\":\"register\",\"protocol\":1}}'\ncat >/dev/null\n",
            marker.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    marker
}

/// Starts pi, answers the trust question with `answer` (keys), sends one prompt and quits.
fn start_and_prompt(pi: &PiCommand, answer: Option<&str>, prompt: &str, reply: &str) -> String {
    let mut child = PtyChild::spawn(pi.command(), 100, 30);
    if let Some(keys) = answer {
        child.wait_for("Trust project folder?", Duration::from_secs(10));
        child.wait_for("Do not trust (this session only)", Duration::from_secs(5));
        child.send(keys);
    }
    child.wait_for("mock-model", Duration::from_secs(10));
    let screen = child.screen();
    child.send(prompt);
    child.wait_for(prompt, Duration::from_secs(5));
    child.send("\r");
    child.wait_for(reply, Duration::from_secs(10));
    child.send("\x04");
    let status = child.wait_exit(Duration::from_secs(10));
    assert!(status.success(), "{status:?}");
    screen
}

#[test]
fn a_new_folder_asks_for_trust_and_context_files_load_whatever_the_answer() {
    let mock = MockServer::with_replies([
        Reply::text(API, "first answer"),
        Reply::text(API, "second answer"),
        Reply::text(API, "third answer"),
    ]);
    let pi = PiCommand::for_mock(API, &mock).args(["--model", "mock/mock-model"]);
    std::fs::write(
        pi.cwd().join("AGENTS.md"),
        "Project rule: MARKER-AGENTS-RULE",
    )
    .unwrap();
    let marker = marker_extension(pi.cwd());
    let trust_file = pi.agent_dir().join("trust.json");

    // Escape: not trusted, nothing saved; the chat says why the extension is missing.
    let screen = start_and_prompt(&pi, Some("\x1b"), "one", "first answer");
    assert!(screen.contains("This project is not trusted."), "{screen}");
    assert!(!marker.exists(), "an untrusted project's extension started");
    assert!(!trust_file.exists());

    // Asked again, since nothing was saved: Enter trusts the folder and saves it.
    let screen = start_and_prompt(&pi.again(), Some("\r"), "two", "second answer");
    assert!(!screen.contains("not trusted"), "{screen}");
    assert!(
        marker.exists(),
        "the trusted project's extension did not start"
    );
    let cwd = std::fs::canonicalize(pi.cwd()).unwrap();
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trust_file).unwrap()).unwrap();
    assert_eq!(saved, serde_json::json!({cwd.to_string_lossy(): true}));

    // Saved: no question.
    std::fs::remove_file(&marker).unwrap();
    start_and_prompt(&pi.again(), None, "three", "third answer");
    assert!(marker.exists());

    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    for req in requests {
        assert!(
            req.body_text().contains("MARKER-AGENTS-RULE"),
            "AGENTS.md reaches the model: {}",
            req.body_text()
        );
    }
}
