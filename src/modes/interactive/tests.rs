//! The app driven in-process: a virtual terminal for the screen, the scripted provider for
//! replies, real tools in a scratch directory. Keys go in as raw bytes, as a terminal sends
//! them; assertions read the screen (scrollback included) as a user would.

use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use serde_json::json;

use super::*;
use crate::agent::Agent;
use crate::ai::providers::scripted::{push_reply, Block, Reply};
use crate::ai::{Abort, Model, ModelCost};
use crate::harness::tools::{select, ToolChoice};
use crate::resources::loader::Resources;
use crate::resources::settings::{RetrySettings, Settings};
use crate::tui::terminal::{Terminal, TerminalEvent};
use crate::tui::virtual_terminal::VirtualTerminal;

#[path = "dialog_tests.rs"]
mod dialog_tests;
#[path = "ext_tests.rs"]
mod ext_tests;
#[path = "fullscreen_tests.rs"]
mod fullscreen_tests;
#[path = "layout_tests.rs"]
mod layout_tests;
#[path = "panel_tests.rs"]
mod panel_tests;
#[path = "paste_tests.rs"]
mod paste_tests;
#[path = "selection_tests.rs"]
mod selection_tests;
#[path = "tool_output_tests.rs"]
mod tool_output_tests;
#[path = "transcript_tests.rs"]
mod transcript_tests;

struct Harness {
    app: App<VirtualTerminal>,
    keys: Sender<TerminalEvent>,
    input: Receiver<TerminalEvent>,
    dir: tempfile::TempDir,
}

fn test_model(id: &str) -> Model {
    Model {
        id: id.into(),
        name: id.into(),
        api: "scripted".into(),
        provider: "test".into(),
        base_url: String::new(),
        reasoning: false,
        input: vec!["text".into()],
        cost: ModelCost::default(),
        context_window: 100_000,
        max_tokens: 1000,
        thinking_level_map: None,
        headers: None,
        compat: None,
    }
}

fn harness(model_id: &str) -> Harness {
    harness_with(model_id, &[], false)
}

/// `others`: more models with credentials besides `model_id`; `persisted`: the session is
/// written under `<dir>/sessions` and the settings live in `<dir>/agent/settings.json`.
fn harness_with(model_id: &str, others: &[&str], persisted: bool) -> Harness {
    harness_setup(model_id, others, persisted, &mut |_, _, _| {})
}

/// [`harness_with`], letting `setup` change the session and the environment (in the scratch
/// directory it is given) before the app starts.
fn harness_setup(
    model_id: &str,
    others: &[&str],
    persisted: bool,
    setup: &mut dyn FnMut(&std::path::Path, &mut AgentSession, &mut InteractiveEnv),
) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let model = test_model(model_id);
    let mut available = vec![model.clone()];
    available.extend(others.iter().map(|id| test_model(id)));
    let mut agent = Agent::new(model, String::new(), Default::default());
    agent.cwd = dir.path().to_path_buf();
    agent.tools = select(
        &ToolChoice {
            allow: None,
            no_tools: false,
            no_builtin_tools: false,
        },
        &Settings::default(),
        &crate::tools::bash::SessionEnv::default(),
    );
    let retry = RetrySettings {
        enabled: false,
        ..Default::default()
    };
    let sessions = dir.path().join("sessions");
    let agent_dir = dir.path().join("agent");
    let session = if persisted {
        std::fs::create_dir_all(&sessions).unwrap();
        std::fs::create_dir_all(&agent_dir).unwrap();
        let cwd = dir.path().to_string_lossy().into_owned();
        let writer = crate::session::SessionWriter::create(&sessions, &cwd, None);
        let mut s = AgentSession::with_session(agent, retry, Abort::new(), writer);
        s.settings = Settings::load_with(&agent_dir, dir.path(), false);
        s
    } else {
        AgentSession::new(agent, retry, Abort::new())
    };
    let mut session = session;
    let mut env = InteractiveEnv {
        available_models: Box::new(move || available.clone()),
        credentials: Box::new(|_| Ok(("test-key".into(), Vec::new()))),
        reload_models: None,
        models_error: None,
        oauth_provider: crate::resources::oauth::provider,
        resources: Resources::default(),
        reload_resources: None,
        extension_ui: None,
        reload_extensions: None,
        has_model: true,
        session_dir: sessions,
        agent_dir,
        cwd: dir.path().to_path_buf(),
        notices: Vec::new(),
        verbose: false,
        quiet_startup: QuietStartup::Off,
        hide_thinking: false,
        theme: None,
        provider_count: 1,
        clipboard: clipboard_image::ClipboardEnv {
            wayland: false,
            wsl: false,
            macos: false,
            termux: false,
            tool_dir: Some(dir.path().join("clipboard-tools")),
            save_dir: dir.path().to_path_buf(),
        },
        project_trusted: true,
        untrusted_warning: false,
        mcp: None,
        tui: super::fullscreen::TuiOptions::regular(),
    };
    setup(dir.path(), &mut session, &mut env);
    let mut app = App::new(VirtualTerminal::new(80, 24), session, env).unwrap();
    app.start().unwrap();
    let (keys, input) = crossbeam_channel::unbounded();
    Harness {
        app,
        keys,
        input,
        dir,
    }
}

impl Harness {
    /// Reads or changes the idle session (through its actor, as the app does).
    pub(super) fn with<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut crate::harness::AgentSession) -> R + Send + 'static,
    ) -> R {
        self.app.session(f).expect("the session is idle")
    }

    fn type_bytes(&mut self, bytes: &str) {
        self.keys
            .send(TerminalEvent::Input(bytes.as_bytes().to_vec()))
            .unwrap();
        self.app
            .step(&self.input, Duration::from_millis(5))
            .unwrap();
    }

    /// Resizes the terminal as a user dragging the window would.
    fn resize(&mut self, cols: usize, rows: usize) {
        self.app.tui.terminal_mut().resize(cols, rows);
        self.keys.send(TerminalEvent::Resize).unwrap();
        self.app
            .step(&self.input, Duration::from_millis(1))
            .unwrap();
    }

    fn screen(&mut self) -> String {
        self.app.tui.terminal_mut().all_lines().join("\n")
    }

    /// Steps the loop until `done` holds (or fails after 10 s, printing the screen).
    fn wait_for(&mut self, what: &str, done: impl Fn(&mut Harness) -> bool) {
        let start = Instant::now();
        while !done(self) {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "timed out waiting for {what}; screen:\n{}",
                self.screen()
            );
            self.app
                .step(&self.input, Duration::from_millis(10))
                .unwrap();
        }
        // One more frame so the screen shows the final state.
        std::thread::sleep(Duration::from_millis(20));
        self.app
            .step(&self.input, Duration::from_millis(1))
            .unwrap();
    }

    fn wait_text(&mut self, text: &str) {
        let t = text.to_string();
        self.wait_for(text, move |h| h.screen().contains(&t));
    }

    fn wait_idle(&mut self) {
        self.wait_for("the run to end", |h| !h.app.is_busy());
    }
}

#[test]
fn a_prompt_is_streamed_into_the_transcript() {
    let mut h = harness("ui-stream");
    push_reply("ui-stream", Reply::text("Hello **streaming** world"));
    h.type_bytes("hi there\r");
    h.wait_idle();
    h.wait_text("Hello streaming world");
    let screen = h.screen();
    assert!(screen.contains(" hi there"), "{screen}");
    assert!(screen.contains("▀▀█  v0.73.1"), "{screen}");
    assert!(
        screen.contains("ui-stream"),
        "footer names the model: {screen}"
    );
    assert_eq!(h.with(|s| s.messages().len()), 2);
}

#[test]
fn tool_calls_show_their_results_and_edits_a_coloured_diff() {
    let mut h = harness("ui-tools");
    let file = h.dir.path().join("notes.txt");
    std::fs::write(&file, "alpha\nbeta\ngamma\n").unwrap();
    push_reply(
        "ui-tools",
        Reply {
            blocks: vec![Block::ToolCall {
                id: "call_1".into(),
                name: "edit".into(),
                arguments: json!({"path": file.to_string_lossy(),
                    "edits": [{"oldText": "beta", "newText": "BETA"}]}),
            }],
            ..Default::default()
        },
    );
    push_reply("ui-tools", Reply::text("Edited it."));
    h.type_bytes("change beta\r");
    h.wait_idle();
    h.wait_text("Edited it.");
    let screen = h.screen();
    assert!(screen.contains("edit "), "{screen}");
    assert!(
        screen
            .lines()
            .any(|l| l.trim_start().starts_with('-') && l.contains("beta")),
        "removed line shown: {screen}"
    );
    assert!(
        screen
            .lines()
            .any(|l| l.trim_start().starts_with('+') && l.contains("BETA")),
        "added line shown: {screen}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "alpha\nBETA\ngamma\n"
    );
    // The diff is coloured: the frames carry the added-line colour of the dark theme.
    let frames = h.app.tui.terminal().frames().join("");
    let added = crate::tui::theme::current()
        .fg_code(crate::tui::theme::Token::ToolDiffAdded)
        .to_string();
    assert!(!added.is_empty() && frames.contains(&added));
}

#[test]
fn a_steering_message_is_queued_then_delivered() {
    let mut h = harness("ui-steer");
    push_reply(
        "ui-steer",
        Reply {
            blocks: vec![
                Block::Text("working on it slowly".into()),
                Block::ToolCall {
                    id: "call_1".into(),
                    name: "bash".into(),
                    arguments: json!({"command": "echo from-tool"}),
                },
            ],
            delay: Duration::from_millis(40),
            ..Default::default()
        },
    );
    push_reply("ui-steer", Reply::text("Steered reply"));
    h.type_bytes("start\r");
    h.wait_text("working");
    h.type_bytes("also do this\r");
    h.wait_text("Steering: also do this");
    h.wait_idle();
    h.wait_text("Steered reply");
    let screen = h.screen();
    assert!(
        !screen.contains("Steering: also do this"),
        "queue display cleared: {screen}"
    );
    assert!(screen.contains("from-tool"), "bash output shown: {screen}");
    let users: Vec<String> = h
        .with(|s| s.messages().to_vec())
        .iter()
        .filter_map(|m| match m {
            crate::ai::Message::User(u) => Some(crate::session::ops::user_content_text(&u.content)),
            _ => None,
        })
        .collect();
    assert_eq!(users, ["start", "also do this"]);
}

#[test]
fn escape_aborts_the_run_and_returns_queued_messages_to_the_editor() {
    let mut h = harness("ui-abort");
    push_reply(
        "ui-abort",
        Reply {
            blocks: vec![Block::Text(
                "a very long answer that takes its time".repeat(5),
            )],
            delay: Duration::from_millis(50),
            ..Default::default()
        },
    );
    h.type_bytes("go\r");
    h.wait_text("Working...");
    h.type_bytes("queued one\r");
    h.wait_text("Steering: queued one");
    h.type_bytes("\x1b");
    h.wait_idle();
    h.wait_text("Operation aborted");
    assert_eq!(h.app.view.editor.get_text(), "queued one");
    assert!(!h.screen().contains("Working..."));
}

#[test]
fn ctrl_d_on_an_empty_editor_exits_and_ctrl_c_twice_exits() {
    let mut h = harness("ui-exit");
    h.type_bytes("abc");
    h.type_bytes("\x04");
    assert!(!h.app.exited(), "Ctrl+D with text deletes, not exits");
    h.type_bytes("\x03");
    assert_eq!(h.app.view.editor.get_text(), "");
    assert!(!h.app.exited());
    h.type_bytes("\x03");
    assert!(h.app.exited(), "second Ctrl+C within 500 ms exits");

    let mut h = harness("ui-exit2");
    h.type_bytes("\x04");
    assert!(h.app.exited());
}

#[test]
fn the_terminal_title_names_the_session_without_its_control_characters() {
    let mut h = harness("ui-title");
    let folder = h
        .dir
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    h.app.tui.terminal_mut().flush().unwrap();
    let frames = h.app.tui.terminal().frames().join("");
    assert!(
        frames.contains(&format!("\x1b]0;π - {folder}\x07")),
        "the folder at start-up"
    );
    h.with(|s| crate::session::ops::set_name(&mut s.session, "evil\x1b]0;x\x07\x07name").unwrap());
    h.app.refresh_footer();
    h.app.tui.terminal_mut().flush().unwrap();
    let frames = h.app.tui.terminal().frames().join("");
    assert!(
        frames.contains(&format!("\x1b]0;π - evil ]0;x name - {folder}\x07")),
        "the name, each run of control characters one space: {frames:?}"
    );
}

#[test]
fn untrusted_output_cannot_inject_escape_sequences() {
    let mut h = harness("ui-sanitize");
    push_reply(
        "ui-sanitize",
        Reply::text("safe\x1b[2J\x1b]0;evil\x07 text\x1b[31m"),
    );
    h.type_bytes("x\r");
    h.wait_idle();
    h.wait_text("safe text");
    let frames = h.app.tui.terminal().frames().join("");
    // The title sequence never reaches the terminal, and nothing of the escapes shows.
    assert!(!frames.contains("evil"), "no title change from the model");
    let screen = h.screen();
    assert!(
        !screen.contains("[2J") && !screen.contains("[31m"),
        "{screen}"
    );
}

#[test]
fn resize_reflows_and_slash_commands_work() {
    let mut h = harness("ui-resize");
    push_reply("ui-resize", Reply::text("word ".repeat(30).trim()));
    h.type_bytes("x\r");
    h.wait_idle();
    h.app.tui.terminal_mut().resize(40, 20);
    h.keys.send(TerminalEvent::Resize).unwrap();
    h.wait_for("a frame at 40 columns", |h| {
        h.app.tui.terminal().screen_lines().len() == 20
    });
    h.app.step(&h.input, Duration::from_millis(30)).unwrap();
    let lines = h.app.tui.terminal().screen_text();
    assert!(lines
        .iter()
        .all(|l| crate::tui::text::visible_width(l) <= 40));
    h.type_bytes("/session\r");
    h.wait_text("Session Info");
    h.type_bytes("/name my work\r");
    h.wait_text("Session name set: my work");
    h.wait_text("• my work");
}

#[test]
fn work_that_fails_on_the_session_thread_says_so_and_quits_instead_of_waiting_forever() {
    let mut h = harness("ui-work-fails");
    h.app.run_task(|_| panic!("a bug in the session's work"));
    assert!(h.app.is_busy());
    h.wait_for("the app to give up", |h| h.app.exited());
    h.wait_text("the agent run failed unexpectedly");
    // The session is gone with its thread: nothing waits for it.
    assert!(h.app.session(|s| s.messages().len()).is_none());
}
