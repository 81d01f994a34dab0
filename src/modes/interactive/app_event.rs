//! [`AppEvent`]: everything the interactive mode's one thread waits for, as one enum. The
//! loop (`App::step`) waits for the next one with [`AppEvent::next`] and handles it in one
//! place (`App::handle`); dialogs, helper threads and the session actor all arrive here.

use std::time::Duration;

use crossbeam_channel::{select, Receiver, RecvError};

use super::clipboard_image::ClipboardRead;
use super::ext_state::JobDone;
use super::ext_ui::UiRequest;
use super::session_link::FromSession;
use crate::harness::user_bash::BashUpdate;
use crate::tui::terminal::TerminalEvent;
use crate::util::reply::{self, ReplyRx};

/// One thing that happened.
// Boxing the session's event would add an allocation per streamed delta.
#[allow(clippy::large_enum_variant)]
pub(super) enum AppEvent {
    /// Keys, a resize, a suspend; `None`: stdin closed.
    Terminal(Option<TerminalEvent>),
    /// An event of the session's work, or its end; `None` when the link is gone.
    Session(Option<FromSession>),
    /// Output or the end of a `!` command (`None`: it ended without a word).
    Bash(Option<BashUpdate>),
    /// An extension asks something of the UI.
    ExtensionRequest(Result<UiRequest, RecvError>),
    /// Extensions queued work for the idle session.
    ExtensionActions,
    /// A helper thread finished (an extension gate, `/share`).
    Job(Result<JobDone, RecvError>),
    /// The clipboard image read finished.
    ClipboardImage(Option<ClipboardRead>),
    /// A signal started pi's shutdown.
    Shutdown,
    /// Nothing came before the deadline.
    Timeout,
}

/// Where the events come from, gathered by the loop before it waits.
pub(super) struct Sources<'a> {
    pub input: &'a Receiver<TerminalEvent>,
    pub session: &'a Receiver<FromSession>,
    pub bash: Option<Receiver<BashUpdate>>,
    pub ext_requests: Receiver<UiRequest>,
    pub ext_actions: Receiver<()>,
    pub jobs: Receiver<JobDone>,
    pub clipboard: Option<ReplyRx<ClipboardRead>>,
    pub shutdown: &'a Receiver<()>,
}

impl AppEvent {
    /// Waits (at most `timeout`) for the next event of `sources`.
    pub fn next(sources: &Sources<'_>, timeout: Duration) -> AppEvent {
        let never_bash = crossbeam_channel::never::<BashUpdate>();
        let never_clipboard = ReplyRx::never();
        select! {
            recv(sources.input) -> ev => AppEvent::Terminal(ev.ok()),
            recv(sources.session) -> ev => AppEvent::Session(ev.ok()),
            recv(sources.bash.as_ref().unwrap_or(&never_bash)) -> update => {
                AppEvent::Bash(update.ok())
            },
            recv(sources.ext_requests) -> request => AppEvent::ExtensionRequest(request),
            recv(sources.ext_actions) -> _ => AppEvent::ExtensionActions,
            recv(sources.jobs) -> done => AppEvent::Job(done),
            recv(sources.clipboard.as_ref().unwrap_or(&never_clipboard).raw()) -> read => {
                AppEvent::ClipboardImage(read.ok().map(reply::open))
            },
            recv(sources.shutdown) -> _ => AppEvent::Shutdown,
            default(timeout) => AppEvent::Timeout,
        }
    }
}
