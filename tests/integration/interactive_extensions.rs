//! Extensions in interactive mode with the real binary on a pseudo-terminal: a global
//! extension's footer status, a `-e` slash command with its own CLI flag sending a prompt, and
//! extension stderr shown in the chat instead of on the raw terminal.

use std::path::PathBuf;
use std::time::Duration;

use crate::support::pty::PtyChild;
use crate::support::{MockServer, PiCommand, Reply};

const API: &str = "openai-completions";

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("examples/extensions")
        .join(name)
}

#[test]
fn extensions_drive_the_terminal_ui_and_their_flags_work() {
    use std::os::unix::fs::PermissionsExt;
    let mock = MockServer::with_replies([Reply::text(API, "Hello Ada, loudly.")]);
    let greet = example("greet.sh");
    let pi = PiCommand::for_mock(API, &mock).args(["-e", greet.to_str().unwrap(), "--shout"]);
    let global = pi.agent_dir().join("extensions");
    std::fs::create_dir_all(&global).unwrap();
    std::fs::copy(example("status_line.py"), global.join("status_line.py")).unwrap();
    let noisy = global.join("noisy");
    std::fs::write(
        &noisy,
        "#!/bin/sh\nread hello\necho '{\"type\":\"register\",\"protocol\":1}'\n\
         echo 'a note on stderr' >&2\ncat >/dev/null\n",
    )
    .unwrap();
    std::fs::set_permissions(&noisy, std::fs::Permissions::from_mode(0o755)).unwrap();

    let mut child = PtyChild::spawn(pi.command(), 80, 24);
    child.wait_for("Ready", Duration::from_secs(10));
    child.wait_for("[noisy] a note on stderr", Duration::from_secs(5));
    child.send("/greet Ada");
    child.wait_for("/greet Ada", Duration::from_secs(5));
    child.send("\r");
    child.wait_for("Hello Ada, loudly.", Duration::from_secs(10));
    child.wait_for("Turn 1 complete", Duration::from_secs(5));
    child.send("\x04");
    let status = child.wait_exit(Duration::from_secs(10));
    assert!(status.success(), "{status:?}");
    let req = mock.single_request();
    assert_eq!(
        req.last_user_text().as_deref(),
        Some("PLEASE GREET ADA WARMLY.")
    );
}
