//! Screens shown on their own, outside the chat: the session picker of `pi -r` (before the
//! chat starts, as pi does; cancelling returns `None` and pi prints "No session selected"),
//! the start-up trust question (`trust.rs`) and the package resource switches of `pi config`. Both run one component on the terminal until
//! it is done, through [`run_until`].

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crossbeam_channel::{select, Receiver};

use super::selectors::config::{ConfigOutcome, ConfigSelector};
use super::selectors::session_picker::{SessionOutcome, SessionPicker};
use crate::resources::packages::config::{groups, set_enabled};
use crate::resources::packages::PackageResources;
use crate::resources::settings::Settings;
use crate::session::dir::{list_all_sessions, list_sessions};
use crate::tui::stdin_buffer::{ParsedInput, StdinBuffer, ESCAPE_TIMEOUT};
use crate::tui::terminal::{ProcessTerminal, Terminal, TerminalEvent};
use crate::tui::{theme, Component, Tui};

/// Installs what a screen shown before the chat needs: the theme named in the global
/// settings (the folder's own settings are not trusted yet) and the keybindings.
pub fn prepare_screen(agent_dir: &Path, cwd: &Path) {
    let settings = Settings::load_with(agent_dir, cwd, false);
    let name = settings
        .str(&["theme"])
        .map(str::to_string)
        .unwrap_or_else(|| super::background::initial_theme_name().into());
    let mode = theme::ColorMode::detect();
    let chosen = theme::load_named(&name, &[&agent_dir.join("themes")], mode)
        .unwrap_or_else(|_| theme::Theme::dark().with_mode(mode));
    theme::install(chosen);
    crate::tui::keybindings::install(crate::tui::keybindings::load(agent_dir).bindings);
}

/// Shows the picker for the sessions in `session_dir` (Tab: every project's) on the
/// process's terminal.
pub fn pick_session(session_dir: &Path, agent_dir: &Path) -> io::Result<Option<PathBuf>> {
    let terminal = ProcessTerminal::new();
    let input = terminal.events();
    let agent_dir = agent_dir.to_path_buf();
    let picker = SessionPicker::new(
        list_sessions(session_dir),
        Box::new(move || list_all_sessions(&agent_dir)),
        None,
        theme::current(),
    );
    let chosen = run_until(terminal, &input, picker, |p| match p.take_outcome()? {
        SessionOutcome::Selected(path) => Some(Some(path)),
        SessionOutcome::Cancelled => Some(None),
        // No rename in `pi -r`.
        SessionOutcome::Renamed { .. } => None,
    })?;
    Ok(chosen.flatten())
}

/// What to do with a session whose recorded folder is gone (pi 1.x's start-up question).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissingCwdChoice {
    /// Run it in the current folder, remembering nothing.
    Continue,
    /// Copy it into the current folder as a new session.
    Fork,
    Cancel,
}

/// pi's title for the question: the missing folder, then the one the session would use.
pub fn missing_cwd_title(stored: &str, cwd: &str) -> String {
    format!("cwd from session file does not exist\n{stored}\n\ncontinue in current cwd\n{cwd}")
}

/// Asks on the process's terminal what to do with a session whose folder `stored` is gone.
pub fn ask_missing_cwd(stored: &str, cwd: &str) -> io::Result<MissingCwdChoice> {
    let terminal = ProcessTerminal::new();
    let input = terminal.events();
    run_missing_cwd(terminal, &input, stored, cwd)
}

/// [`ask_missing_cwd`] on any terminal.
pub fn run_missing_cwd<T: Terminal>(
    terminal: T,
    input: &Receiver<TerminalEvent>,
    stored: &str,
    cwd: &str,
) -> io::Result<MissingCwdChoice> {
    use crate::extensions::ui::{Answer, Dialog};
    let dialog = super::ext_ui::ExtensionDialog::new(&Dialog::Select {
        title: missing_cwd_title(stored, cwd),
        options: vec!["Continue".into(), "Fork".into(), "Cancel".into()],
        timeout: None,
    });
    let answer = run_until(terminal, input, dialog, |d| d.take_outcome())?;
    Ok(match answer {
        Some(Answer::Value(v)) if v == "Continue" => MissingCwdChoice::Continue,
        Some(Answer::Value(v)) if v == "Fork" => MissingCwdChoice::Fork,
        _ => MissingCwdChoice::Cancel,
    })
}

/// What to do with a session another pi process is writing (issue 35).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InUseChoice {
    /// Copy it into a new session and go on there.
    Fork,
    /// Open it with nothing saved: the other pi stays its only writer.
    ReadOnly,
    Cancel,
}

/// The question's title: which session, and what each way out does.
pub fn in_use_title(path: &str) -> String {
    format!(
        "Session is in use by another pi process\n{path}\n\nFork: continue in a copy of it\nRead-only: open it, saving nothing"
    )
}

/// Asks on the process's terminal what to do with a session another pi is writing.
pub fn ask_session_in_use(path: &str) -> io::Result<InUseChoice> {
    let terminal = ProcessTerminal::new();
    let input = terminal.events();
    run_session_in_use(terminal, &input, path)
}

/// [`ask_session_in_use`] on any terminal.
pub fn run_session_in_use<T: Terminal>(
    terminal: T,
    input: &Receiver<TerminalEvent>,
    path: &str,
) -> io::Result<InUseChoice> {
    use crate::extensions::ui::{Answer, Dialog};
    let dialog = super::ext_ui::ExtensionDialog::new(&Dialog::Select {
        title: in_use_title(path),
        options: vec!["Fork".into(), "Read-only".into(), "Cancel".into()],
        timeout: None,
    });
    let answer = run_until(terminal, input, dialog, |d| d.take_outcome())?;
    Ok(match answer {
        Some(Answer::Value(v)) if v == "Fork" => InUseChoice::Fork,
        Some(Answer::Value(v)) if v == "Read-only" => InUseChoice::ReadOnly,
        _ => InUseChoice::Cancel,
    })
}

/// `pi config` on the process's terminal: each toggle is written to the settings file of the
/// package's scope at once (a failed write shows under the list).
pub fn configure_packages(resolved: &PackageResources, settings: &mut Settings) -> io::Result<()> {
    let terminal = ProcessTerminal::new();
    let input = terminal.events();
    let selector = ConfigSelector::new(groups(resolved), theme::current());
    run_config(terminal, &input, selector, settings)
}

/// Drives the config selector on `terminal`, saving each toggle in `settings`.
pub fn run_config<T: Terminal>(
    terminal: T,
    input: &Receiver<TerminalEvent>,
    selector: ConfigSelector,
    settings: &mut Settings,
) -> io::Result<()> {
    run_until(terminal, input, selector, |s| loop {
        match s.take_outcome()? {
            ConfigOutcome::Toggled(resource, enabled) => {
                if let Err(e) = set_enabled(settings, &resource, enabled) {
                    s.set_error(e.to_string());
                }
            }
            ConfigOutcome::Closed => return Some(()),
        }
    })?;
    Ok(())
}

/// Shows `component` on `terminal`, feeding it keys, until `done` returns a result (checked
/// after every key). `None` when input ended first.
pub fn run_until<T: Terminal, C: Component, R>(
    terminal: T,
    input: &Receiver<TerminalEvent>,
    mut component: C,
    mut done: impl FnMut(&mut C) -> Option<R>,
) -> io::Result<Option<R>> {
    let mut tui = Tui::new(terminal);
    tui.start()?;
    let mut parser = StdinBuffer::new();
    let mut pending_since: Option<Instant> = None;
    let result = loop {
        if let Some(r) = done(&mut component) {
            break Some(r);
        }
        let now = Instant::now();
        let mut deadline = now + Duration::from_millis(500);
        if let Some(d) = tui.next_deadline() {
            deadline = deadline.min(d);
        }
        if let Some(since) = pending_since {
            deadline = deadline.min(since + ESCAPE_TIMEOUT);
        }
        let mut parsed = Vec::new();
        select! {
            recv(input) -> ev => match ev {
                Ok(TerminalEvent::Input(bytes)) => {
                    parsed = parser.feed(&bytes);
                    pending_since = parser.has_pending().then(Instant::now);
                }
                Ok(TerminalEvent::Resize) => tui.request_render(),
                Ok(TerminalEvent::Suspend) => {
                    let _ = tui.suspend();
                }
                Err(_) => break None,
            },
            default(deadline.saturating_duration_since(now)) => {}
        }
        if pending_since.is_some_and(|since| Instant::now() >= since + ESCAPE_TIMEOUT) {
            pending_since = None;
            parsed.extend(parser.flush_timeout());
        }
        for p in parsed {
            if let ParsedInput::Event(ev) = p {
                tui.handle_input(&ev, &mut component);
                tui.request_render();
            }
        }
        tui.tick(Instant::now(), &mut component)?;
    };
    // Leave nothing behind: what follows starts on a clean screen.
    tui.render(&mut Blank)?;
    tui.stop()?;
    Ok(result)
}

/// Draws nothing.
struct Blank;

impl Component for Blank {
    fn render(&mut self, _width: usize) -> Vec<String> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use super::*;
    use crate::resources::packages::config::{ConfigGroup, ConfigItem};
    use crate::resources::packages::{PackageResource, ResourceKind, Scope};
    use crate::tui::virtual_terminal::VirtualTerminal;

    #[test]
    fn config_toggles_are_saved_as_package_filters() {
        let resource = PackageResource {
            kind: ResourceKind::Skills,
            path: PathBuf::from("/pkg/skills/review/SKILL.md"),
            enabled: true,
            source: "npm:demo".into(),
            scope: Scope::User,
            base_dir: PathBuf::from("/pkg"),
        };
        let group = ConfigGroup {
            label: "npm:demo (user)".into(),
            scope: Scope::User,
            source: "npm:demo".into(),
            kinds: vec![(
                ResourceKind::Skills,
                vec![ConfigItem {
                    display_name: "review".into(),
                    enabled: true,
                    resource,
                }],
            )],
        };
        let global = json!({"packages": ["npm:demo"]});
        let mut settings = Settings::in_memory(global.as_object().unwrap().clone());
        let (keys, input) = crossbeam_channel::unbounded();
        keys.send(TerminalEvent::Input(b" ".to_vec())).unwrap();
        keys.send(TerminalEvent::Input(b"\x03".to_vec())).unwrap();
        let selector = ConfigSelector::new(vec![group], theme::current());
        run_config(
            VirtualTerminal::new(80, 24),
            &input,
            selector,
            &mut settings,
        )
        .unwrap();
        assert_eq!(
            settings.global_map()["packages"],
            json!([{"source": "npm:demo", "skills": ["-skills/review/SKILL.md"]}])
        );
    }
}
