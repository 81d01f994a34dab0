//! `pi -r`: the session picker shown on its own before the chat starts, as pi does. It
//! returns the chosen session file, or `None` when the user cancelled (pi then prints
//! "No session selected" and exits).

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crossbeam_channel::{select, Receiver};

use super::selectors::session_picker::{SessionOutcome, SessionPicker};
use crate::session::dir::{list_all_sessions, list_sessions};
use crate::tui::stdin_buffer::{ParsedInput, StdinBuffer, ESCAPE_TIMEOUT};
use crate::tui::terminal::{ProcessTerminal, Terminal, TerminalEvent};
use crate::tui::{theme, Component, Tui};

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
    run_picker(terminal, &input, picker)
}

/// Drives `picker` on `terminal` until it hands back a result.
pub fn run_picker<T: Terminal>(
    terminal: T,
    input: &Receiver<TerminalEvent>,
    mut picker: SessionPicker,
) -> io::Result<Option<PathBuf>> {
    let mut tui = Tui::new(terminal);
    tui.start()?;
    let mut parser = StdinBuffer::new();
    let mut pending_since: Option<Instant> = None;
    let result = loop {
        if let Some(outcome) = picker.take_outcome() {
            break match outcome {
                SessionOutcome::Selected(path) => Some(path),
                SessionOutcome::Cancelled => None,
            };
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
                // Nobody can type any more: nothing was chosen.
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
                tui.handle_input(&ev, &mut picker);
                tui.request_render();
            }
        }
        tui.tick(Instant::now(), &mut picker)?;
    };
    // Leave no picker behind: the chat starts on a clean screen.
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
