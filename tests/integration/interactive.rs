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
    child.wait_for("pi v", Duration::from_secs(10));
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
