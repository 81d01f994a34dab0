//! Extensions in the running app, as a user meets them: the examples of
//! `examples/extensions/` (a footer status, a confirm dialog guarding `rm -rf`, a slash command
//! in autocomplete, a tool), a crashing extension, `/reload` and a vetoed `/fork`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::*;
use crate::extensions::ui::ExtensionUi;
use crate::extensions::{discover, DiscoveryOptions, ExtensionHost, HostOptions};
use crate::modes::interactive::ext_ui::ChannelUi;
use crate::resources::trust::ProjectScope;

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("examples/extensions")
        .join(name)
}

/// Writes an executable script.
fn script(path: &Path, text: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_path_buf()
}

/// Starts the extensions of `<agent dir>/extensions/` plus `paths` the way interactive mode
/// does (its channel UI from the handshake on), and wires `/reload` to do it again.
fn with_extensions(
    paths: Vec<PathBuf>,
) -> impl FnMut(&Path, &mut AgentSession, &mut InteractiveEnv) {
    move |cwd, session, env| {
        let (ui, rx) = ChannelUi::new();
        let (errors, stderr) = (ui.error_sink(), ui.stderr_sink());
        let ui: Arc<dyn ExtensionUi> = Arc::new(ui);
        let (cwd, agent_dir) = (cwd.to_path_buf(), env.agent_dir.clone());
        let cli_paths: Vec<String> = paths
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        let load = move || {
            let scope = ProjectScope::trusting(&cwd, &agent_dir);
            let (sources, _, _) = discover(&DiscoveryOptions {
                agent_dir: &agent_dir,
                cwd: &cwd,
                scope: &scope,
                settings_paths: Vec::new(),
                package_paths: Vec::new(),
                cli_paths: cli_paths.clone(),
                no_extensions: false,
            });
            let mut opts = HostOptions::new(cwd.clone(), "interactive");
            opts.has_ui = true;
            opts.ui = Arc::clone(&ui);
            opts.errors = Arc::clone(&errors);
            opts.stderr = Arc::clone(&stderr);
            let host = ExtensionHost::load(sources, opts).host;
            let mut tools = select(
                &ToolChoice {
                    allow: None,
                    no_tools: false,
                    no_builtin_tools: false,
                },
                &Settings::default(),
                &crate::tools::bash::SessionEnv::default(),
            );
            tools.extend(host.tools());
            (host, tools)
        };
        let (host, tools) = load();
        session.agent_mut().tools = tools.clone();
        session.attach_extensions(host, tools, None);
        env.extension_ui = Some(rx);
        env.reload_extensions = Some(Box::new(move |_, _| {
            let (host, tools) = load();
            Ok(ReloadedExtensions {
                host,
                tools: tools.clone(),
                registry: tools,
                system_prompt: String::new(),
                models: None,
                warnings: Vec::new(),
            })
        }));
    }
}

fn ext_harness(model_id: &str, paths: Vec<PathBuf>, persisted: bool) -> Harness {
    harness_setup(model_id, &[], persisted, &mut with_extensions(paths))
}

/// The last line on the screen that has text.
fn last_line(h: &Harness) -> String {
    h.app
        .tui
        .terminal()
        .screen_text()
        .into_iter()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
}

fn tool_call(model: &str, name: &str, args: serde_json::Value) {
    push_reply(
        model,
        Reply {
            blocks: vec![Block::ToolCall {
                id: "call_1".into(),
                name: name.into(),
                arguments: args,
            }],
            ..Default::default()
        },
    );
}

#[test]
fn a_status_line_extension_shows_its_status_under_the_footer() {
    let mut h = ext_harness("ext-status", vec![example("status_line.py")], false);
    h.wait_for("the Ready status", |h| last_line(h).trim() == "Ready");
    assert!(
        h.screen().contains("[Extensions]\n  status_line.py"),
        "{}",
        h.screen()
    );
    push_reply("ext-status", Reply::text("All done"));
    h.type_bytes("go\r");
    h.wait_idle();
    h.wait_for("the turn status", |h| {
        last_line(h).trim() == "Turn 1 complete"
    });
    assert!(h.screen().contains("All done"));
}

#[test]
fn the_permission_gate_asks_and_no_blocks_rm_rf() {
    let mut h = ext_harness("ext-gate", vec![example("permission_gate.py")], false);
    std::fs::create_dir_all(h.dir.path().join("build")).unwrap();
    tool_call("ext-gate", "bash", json!({"command": "rm -rf build"}));
    push_reply("ext-gate", Reply::text("Understood, leaving it."));
    h.type_bytes("clean up\r");
    h.wait_text("Allow `rm -rf build`?");
    assert!(h.screen().contains("Dangerous command"));
    h.type_bytes("\x1b[B");
    h.type_bytes("\r");
    h.wait_idle();
    h.wait_text("Understood, leaving it.");
    assert!(h.screen().contains("Blocked by user"), "{}", h.screen());
    assert!(h.dir.path().join("build").exists());
    assert!(!h.app.tui.has_overlay(), "the dialog closed");
}

#[test]
fn an_extension_command_autocompletes_and_sends_its_message() {
    let mut h = ext_harness("ext-greet", vec![example("greet.sh")], false);
    h.type_bytes("/gre");
    h.wait_text("Ask the agent to greet someone");
    h.type_bytes("\x1b");
    h.app.view.editor.set_text("/greet Ada");
    push_reply("ext-greet", Reply::text("Hello Ada, welcome!"));
    h.type_bytes("\r");
    h.wait_text("Hello Ada, welcome!");
    h.wait_idle();
    let screen = h.screen();
    assert!(screen.contains("Please greet Ada warmly."), "{screen}");
    assert!(!screen.contains("/greet Ada\n"), "the command is no prompt");
}

#[test]
fn an_extension_tool_serves_the_model() {
    let mut h = ext_harness("ext-words", vec![example("word_count.py")], false);
    assert!(h.with(|s| s.agent().tools.iter().any(|t| t.name() == "word_count")));
    tool_call("ext-words", "word_count", json!({"text": "one two three"}));
    push_reply("ext-words", Reply::text("Three words."));
    h.type_bytes("count\r");
    h.wait_idle();
    h.wait_text("Three words.");
    assert!(h.screen().contains("3 words"), "{}", h.screen());
}

#[test]
fn a_crashing_extension_is_reported_and_the_session_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let crash = script(
        &dir.path().join("crashy"),
        "#!/bin/sh\nread hello\necho '{\"type\":\"register\",\"protocol\":1,\"events\":[\"turn_start\"]}'\n\
         read flags\nread event\necho boom >&2\nexit 3\n",
    );
    let mut h = ext_harness("ext-crash", vec![crash], false);
    push_reply("ext-crash", Reply::text("First answer"));
    h.type_bytes("one\r");
    h.wait_idle();
    h.wait_text("First answer");
    h.wait_text("[crashy] boom");
    h.wait_text("error: extension exited");
    push_reply("ext-crash", Reply::text("Second answer"));
    h.type_bytes("two\r");
    h.wait_idle();
    h.wait_text("Second answer");
}

#[test]
fn reload_starts_a_newly_added_extension() {
    let mut h = ext_harness("ext-reload", Vec::new(), false);
    let global = h.app.env.agent_dir.join("extensions");
    std::fs::create_dir_all(&global).unwrap();
    std::fs::copy(example("greet.sh"), global.join("greet.sh")).unwrap();
    assert!(!h.screen().contains("[Extensions]"));
    h.type_bytes("/reload\r");
    h.wait_text("Extensions: added greet");
    assert!(h.app.view.header.info.extensions[0].0 == "greet.sh");
    h.wait_text("Reloaded keybindings, extensions");
    h.type_bytes("/gre");
    h.wait_text("Ask the agent to greet someone");
}

#[test]
fn an_extension_can_veto_a_fork() {
    let dir = tempfile::tempdir().unwrap();
    let veto = script(
        &dir.path().join("veto.py"),
        "#!/usr/bin/env python3\nimport json, sys\n\
         for line in sys.stdin:\n    msg = json.loads(line)\n\
         \x20   if msg['type'] == 'hello':\n\
         \x20       print(json.dumps({'type': 'register', 'protocol': 1, 'events': ['session_before_fork']}), flush=True)\n\
         \x20   elif msg['type'] == 'event' and msg['event'] == 'session_before_fork':\n\
         \x20       print(json.dumps({'type': 'reply', 'id': msg['id'], 'result': {'cancel': True}}), flush=True)\n",
    );
    let mut h = ext_harness("ext-veto", vec![veto], true);
    push_reply("ext-veto", Reply::text("an answer"));
    h.type_bytes("first question\r");
    h.wait_idle();
    h.wait_text("an answer");
    let before = h.with(|s| s.session.session_id().to_string());
    h.type_bytes("/fork\r");
    h.wait_text("first question");
    h.type_bytes("\r");
    h.wait_for("the extension's answer", |h| !h.app.ext.gate_pending);
    assert_eq!(h.with(|s| s.session.session_id().to_string()), before);
    assert!(!h.screen().contains("Forked to new session"));
}

#[test]
fn widgets_title_notices_and_editor_text_reach_the_screen() {
    let dir = tempfile::tempdir().unwrap();
    let chrome = script(
        &dir.path().join("chrome.py"),
        "#!/usr/bin/env python3\nimport json, sys\n\
         def call(method, **params):\n\
         \x20   print(json.dumps({'type': 'call', 'method': method, 'params': params}), flush=True)\n\
         for line in sys.stdin:\n    msg = json.loads(line)\n\
         \x20   if msg['type'] == 'hello':\n\
         \x20       print(json.dumps({'type': 'register', 'protocol': 1, 'events': ['session_start']}), flush=True)\n\
         \x20   elif msg['type'] == 'event':\n\
         \x20       call('ui.setWidget', key='plan', lines=['PLAN step one', 'PLAN step two'])\n\
         \x20       call('ui.setWidget', key='hint', lines=['BELOW hint'], placement='belowEditor')\n\
         \x20       call('ui.setTitle', title='chrome title')\n\
         \x20       call('ui.notify', message='careful now', type='warning')\n\
         \x20       call('ui.setEditorText', text='drafted by extension')\n",
    );
    let mut h = ext_harness("ext-chrome", vec![chrome], false);
    h.wait_text("drafted by extension");
    h.wait_text("BELOW hint");
    let screen = h.app.tui.terminal().screen_text();
    let row = |needle: &str| screen.iter().position(|l| l.contains(needle)).unwrap();
    let editor = row("drafted by extension");
    assert!(row("PLAN step one") < editor && row("PLAN step two") < editor);
    assert!(row("BELOW hint") > editor);
    assert!(h.screen().contains("Warning: careful now"));
    assert_eq!(h.app.view.editor.get_text(), "drafted by extension");
    let frames = h.app.tui.terminal().frames().join("");
    assert!(frames.contains("\x1b]0;chrome title\x07"), "title set");
}

/// An extension whose `/note` sends a displayed custom message and a hidden one.
fn note_extension(dir: &Path) -> PathBuf {
    script(
        &dir.join("note.py"),
        "#!/usr/bin/env python3\nimport json, sys\n\
         def send(**msg):\n\
         \x20   print(json.dumps({'type': 'call', 'method': 'sendMessage', 'params': {'message': msg}}), flush=True)\n\
         for line in sys.stdin:\n    msg = json.loads(line)\n\
         \x20   if msg['type'] == 'hello':\n\
         \x20       print(json.dumps({'type': 'register', 'protocol': 1, 'commands': [{'name': 'note', 'description': 'Add a note'}]}), flush=True)\n\
         \x20   elif msg['type'] == 'command':\n\
         \x20       send(customType='note', content='Remember **this**', display=True, details={'n': 1})\n\
         \x20       send(customType='secret', content='Invisible text', display=False)\n\
         \x20       print(json.dumps({'type': 'reply', 'id': msg['id'], 'result': None}), flush=True)\n",
    )
}

#[test]
fn displayed_custom_messages_show_in_a_labelled_box_and_reach_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = ext_harness("ext-note", vec![note_extension(dir.path())], true);
    h.type_bytes("/note\r");
    h.wait_text("Remember this");
    h.wait_idle();
    let screen = h.screen();
    let label = screen.lines().position(|l| l.trim() == "[note]");
    let body = screen.lines().position(|l| l.trim() == "Remember this");
    assert!(
        label.is_some_and(|l| body == Some(l + 2)),
        "label, blank row, text: {screen}"
    );
    assert!(!screen.contains("Invisible text"), "{screen}");
    assert!(!screen.contains("[secret]"), "{screen}");
    // The box has the custom-message background.
    let bg = crate::tui::theme::current()
        .bg_code(crate::tui::theme::Token::CustomMessageBg)
        .to_string();
    let frames = h.app.tui.terminal().frames().join("");
    assert!(!bg.is_empty() && frames.contains(&bg));

    // Both join the conversation as user messages.
    let texts: Vec<String> = h.with(|s| {
        s.messages()
            .iter()
            .map(crate::modes::interactive::turn::message_text)
            .collect()
    });
    assert_eq!(texts, ["Remember **this**", "Invisible text"]);

    // Drawn again from the session file (as after /resume), the same box shows.
    h.app.render_history();
    h.wait_text("[note]");
    let screen = h.screen();
    assert_eq!(screen.matches("Remember this").count(), 1, "{screen}");
    assert!(!screen.contains("Invisible text"), "{screen}");
}
