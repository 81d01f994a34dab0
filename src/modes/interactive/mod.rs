//! Interactive mode (`pi` with no `-p`/`--mode` on a terminal): the chat (on the alternate
//! screen in pi 1.x's default fullscreen layout, `fullscreen` and `fullscreen_search`; in the
//! terminal's own scrollback with `tuiMode: "regular"`), the editor and the footer, driven by
//! one UI thread (see `app.rs`) while prompts run on a worker thread that owns the session.
//!
//! Files, from the loop down: `app` (the [`App`] that composes the state below and runs the
//! loop, dispatching input and events). Feature files add `App` methods that combine that
//! state: `keys` (app keys, submissions), `events` (agent events → transcript), `commands`
//! (slash commands), `changelog` (`/changelog`), `completions` (what the `/` popup offers),
//! `dialogs`, `tree_nav`, `settings_menu`, `login_flow` (opening the selectors and acting on
//! them), `deferred` (model changes during a run), `history` (showing and switching
//! sessions), `trust` (the start-up trust question, `/trust`), `extensions` and `ext_remote`
//! (what extensions show and add, their session vetoes, `/reload`), `mcp_command` (`/mcp`).
//! The state they share, each group owning its methods and none knowing `App`: `turn` (the
//! run in progress: its task, the streamed reply, tool boxes), `jobs` (`!cmd` via
//! `bash_job`, the clipboard read, a branch summary), `overlays` (the dialog in the editor's
//! place), `input` (key parsing, double presses), `ext_state` (extension channels and
//! dialogs), `background` (theme from the terminal background). Below them, what is drawn:
//! `view`, `transcript`, `chat`, `tool_view`, `diff_view`, `summaries`, `text_style`,
//! `header`, `footer`, `fullscreen`, `fullscreen_search`, `ext_ui` (the channel extension
//! requests come over, the dialog overlay), `ext_widgets`, `ext_component`, `missing_cwd`,
//! `selectors/`, `replay` (a session's messages as transcript items); helpers: `external`
//! (editor, clipboard), `clipboard_image` (the paste-image key), `standalone` (`pi -r`,
//! `pi config`); and at the bottom `env`, what the layers above give the mode
//! ([`InteractiveEnv`]) and the theme it installs from that.

mod app;
mod app_event;
mod background;
mod bash_job;
mod changelog;
mod chat;
pub mod clipboard_image;
mod commands;
mod completions;
mod deferred;
mod dialog;
mod dialogs;
mod diff_view;
mod env;
mod events;
mod ext_component;
mod ext_remote;
mod ext_state;
pub mod ext_ui;
mod ext_widgets;
pub mod extensions;
mod external;
mod footer;
pub mod fullscreen;
mod fullscreen_search;
mod header;
mod history;
mod input;
mod jobs;
mod keys;
mod login_flow;
mod mcp_command;
mod missing_cwd;
pub mod overlays;
mod replay;
mod rewind;
mod rewind_dialog;
pub mod selectors;
mod session_link;
mod settings_menu;
pub mod standalone;
mod summaries;
mod text_style;
mod tool_view;
mod transcript;
mod tree_nav;
pub mod trust;
mod turn;
mod view;

#[cfg(test)]
mod tests;

pub use app::App;
pub use env::{
    load_theme, CredentialsFn, InteractiveEnv, OAuthProviderFn, ReloadExtensionsFn,
    ReloadedExtensions,
};
pub use header::QuietStartup;

use crate::harness::AgentSession;
use crate::tui::terminal::ProcessTerminal;

/// pi 1.x's command that reopens `session` (printed on exit): `pi --session <id>`, with
/// `--session-dir` when the session is not in this folder's default directory. `None` when
/// nothing was saved.
pub fn resume_hint(
    session: &crate::session::SessionWriter,
    env: &InteractiveEnv,
) -> Option<String> {
    let file = session.path().filter(|p| p.exists())?;
    let dir = file.parent()?;
    let default = crate::session::dir::session_dir(&env.agent_dir, &env.cwd.to_string_lossy());
    let mut hint = String::from("pi");
    if dir != default {
        hint.push_str(" --session-dir ");
        hint.push_str(&shell_quote(&dir.to_string_lossy()));
    }
    hint.push_str(" --session ");
    hint.push_str(session.session_id());
    Some(hint)
}

/// `text` as one shell word: as it is when it needs no quoting, else in single quotes.
fn shell_quote(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:@%,=".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// Runs interactive mode on the process's terminal until the user quits; returns the exit
/// code. The terminal is restored on every way out (panics included, via the terminal's
/// panic hook).
pub fn run(session: AgentSession, mut env: InteractiveEnv) -> i32 {
    if let Err(e) = load_theme(&env) {
        env.notices.push(e);
    }
    let loaded = crate::tui::keybindings::load(&env.agent_dir);
    env.notices.extend(loaded.warnings.iter().cloned());
    crate::tui::keybindings::install(loaded.bindings);
    let terminal = ProcessTerminal::new();
    let input = terminal.events();
    let abort = session.abort.clone();
    crate::util::shutdown::take_over(move || abort.abort());
    let mut app = match App::new(terminal, session, env) {
        Ok(app) => app,
        Err(e) => {
            eprintln!("Error: {e}");
            return 1;
        }
    };
    if let Err(e) = app.start() {
        eprintln!("Error: could not start the terminal UI: {e}");
        return 1;
    }
    let result = app.run(&input);
    let stopped = app.stop();
    let session = app.finish_session();
    if let Some(host) = session.as_ref().and_then(|s| s.extension_host()) {
        host.shutdown();
    }
    if let Some(hint) = session
        .as_ref()
        .and_then(|s| resume_hint(&s.session, &app.env))
    {
        use std::io::IsTerminal;
        if std::io::stdout().is_terminal() {
            println!("\x1b[2mTo resume this session:\x1b[22m {hint}");
        }
    }
    let write_errors = session
        .as_ref()
        .map(|s| s.write_errors.clone())
        .unwrap_or_default();
    for e in write_errors {
        eprintln!("Warning: {e}");
    }
    match result.and(stopped) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("Error: terminal failure: {e}");
            1
        }
    }
}
