//! [`ExtensionState`]: the interactive mode's side of its extensions — the host, the
//! channels their UI requests, queued session changes and helper-thread results arrive on,
//! the dialogs they asked for (one open, the rest queued), and whether a `session_before_*`
//! question is pending ([`GatedOp`]). What each of those does to the screen is in
//! `extensions.rs`.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};

use super::chat::{ChatItem, CustomMessageView, RenderedMessageView};
use super::ext_ui::{ExtensionDialog, UiRequest};
use super::selectors::tree::BranchSummary;
use super::view::View;
use crate::extensions::ui::{Answer, ComponentHandle, Dialog};
use crate::extensions::ExtensionHost;
use crate::session::entry::CustomMessage;
use crate::tui::overlay::Extent;
use crate::tui::terminal::Terminal;
use crate::tui::{Anchor, InputEvent, OverlayId, OverlayOptions, Tui};
use crate::util::reply::ReplyTx;

/// A session change that extensions may veto (`session_before_fork` / `_switch` / `_tree`).
#[derive(Debug, Clone)]
pub(super) enum GatedOp {
    Fork(String),
    Clone,
    Resume(PathBuf),
    New,
    /// `/import <args>`.
    Import(String),
    Tree {
        entry_id: String,
        summary: BranchSummary,
    },
}

impl GatedOp {
    /// pi's `session_start` reason after the change, if it replaces the session.
    pub(super) fn start_reason(&self) -> Option<&'static str> {
        match self {
            GatedOp::Fork(_) | GatedOp::Clone => Some("fork"),
            GatedOp::Resume(_) | GatedOp::Import(_) => Some("resume"),
            GatedOp::New => Some("new"),
            GatedOp::Tree { .. } => None,
        }
    }
}

/// What a helper thread reports.
pub(super) enum JobDone {
    Gate {
        op: GatedOp,
        cancelled: bool,
    },
    /// `/share` is over: the note to show, or why it failed.
    Shared(Result<String, String>),
    Finished,
}

struct QueuedDialog {
    dialog: Dialog,
    reply: ReplyTx<Answer>,
    withdrawn: Arc<AtomicBool>,
}

struct OpenDialog {
    id: OverlayId,
    reply: ReplyTx<Answer>,
    withdrawn: Arc<AtomicBool>,
}

/// The app's side of its extensions.
pub(super) struct ExtensionState {
    pub(super) host: Option<Arc<ExtensionHost>>,
    requests: Receiver<UiRequest>,
    actions: Receiver<()>,
    queued: VecDeque<QueuedDialog>,
    open: Option<OpenDialog>,
    jobs_tx: Sender<JobDone>,
    jobs: Receiver<JobDone>,
    pub(super) gate_pending: bool,
}

impl ExtensionState {
    pub(super) fn new(
        requests: Option<Receiver<UiRequest>>,
        host: Option<Arc<ExtensionHost>>,
    ) -> ExtensionState {
        let (jobs_tx, jobs) = crossbeam_channel::unbounded();
        let host = host.filter(|h| !h.is_empty());
        ExtensionState {
            actions: host
                .as_ref()
                .map_or_else(crossbeam_channel::never, |h| h.action_signal()),
            host,
            requests: requests.unwrap_or_else(crossbeam_channel::never),
            queued: VecDeque::new(),
            open: None,
            jobs_tx,
            jobs,
            gate_pending: false,
        }
    }

    /// UI requests from extensions.
    pub(super) fn requests(&self) -> Receiver<UiRequest> {
        self.requests.clone()
    }

    /// Ticks when extensions queued session changes (only worth watching while idle).
    pub(super) fn actions(&self, idle: bool) -> Receiver<()> {
        if idle {
            self.actions.clone()
        } else {
            crossbeam_channel::never()
        }
    }

    pub(super) fn jobs(&self) -> Receiver<JobDone> {
        self.jobs.clone()
    }

    /// An extension's custom message in the transcript: drawn by the extension that registered
    /// a renderer for its type, else with pi's default look.
    pub(super) fn message_item(&self, message: &CustomMessage, expanded: bool) -> ChatItem {
        let fallback = CustomMessageView::new(&message.custom_type, &message.content);
        let host = match &self.host {
            Some(h) if h.renders_messages(&message.custom_type) => Arc::clone(h),
            _ => return ChatItem::Block(Box::new(fallback)),
        };
        let message = message.clone();
        let render = Box::new(move |width| host.render_message(&message, width, expanded));
        ChatItem::Block(Box::new(RenderedMessageView::new(render, fallback)))
    }

    /// Every request sender is gone: stop watching.
    pub(super) fn stop_requests(&mut self) {
        self.requests = crossbeam_channel::never();
    }

    /// The host after `/reload` (`None`: it failed), and its queued-change signal.
    pub(super) fn set_host(&mut self, host: Option<Arc<ExtensionHost>>) {
        self.actions = host
            .as_ref()
            .map_or_else(crossbeam_channel::never, |h| h.action_signal());
        self.host = host.filter(|h| !h.is_empty());
    }

    /// Whether an extension dialog is showing (its timeout is checked often then).
    pub(super) fn dialog_open(&self) -> bool {
        self.open.is_some()
    }

    /// Runs `work` on a helper thread that reports `JobDone::Finished`.
    pub(super) fn spawn(&self, name: &str, work: impl FnOnce() -> JobDone + Send + 'static) {
        let tx = self.jobs_tx.clone();
        // Detached: it ends when the extension answers or dies; the answer goes to the loop.
        let _ = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let _ = tx.send(work());
            });
    }
}

/// The dialogs extensions asked for: one shows as an overlay on the [`Tui`], the rest wait
/// their turn; a dialog whose caller stopped waiting is skipped or closed.
impl ExtensionState {
    /// A dialog an extension asked for: shown now, or after those before it.
    pub(super) fn queue_dialog<T: Terminal>(
        &mut self,
        tui: &mut Tui<T>,
        dialog: Dialog,
        reply: ReplyTx<Answer>,
        withdrawn: Arc<AtomicBool>,
    ) {
        self.queued.push_back(QueuedDialog {
            dialog,
            reply,
            withdrawn,
        });
        self.show_next_dialog(tui);
    }

    /// The dialog showing now, if it is the extension component `handle`.
    pub(super) fn open_custom_dialog<'t, T: Terminal>(
        &self,
        tui: &'t mut Tui<T>,
        handle: &ComponentHandle,
    ) -> Option<&'t mut ExtensionDialog> {
        let id = self.open.as_ref()?.id;
        tui.overlay_mut::<ExtensionDialog>(id)
            .filter(|d| d.custom_handle().is_some_and(|h| h.same(handle)))
    }

    /// Ends the dialog showing now with `answer`.
    pub(super) fn answer_open_dialog<T: Terminal>(&mut self, tui: &mut Tui<T>, answer: Answer) {
        if let Some(open) = self.open.take() {
            let _ = open.reply.send(answer);
            close_overlay(tui, open.id);
        }
        self.show_next_dialog(tui);
        tui.request_render();
    }

    /// A key for the extension dialog, if it has focus (`view` is the screen under it); true
    /// when it took the key.
    pub(super) fn dialog_input<T: Terminal>(
        &mut self,
        tui: &mut Tui<T>,
        view: &mut View,
        event: &InputEvent,
    ) -> bool {
        let Some(open) = &self.open else {
            return false;
        };
        if !tui.is_overlay_focused(open.id) {
            return false;
        }
        let id = open.id;
        tui.handle_input(event, view);
        let outcome = tui
            .overlay_mut::<ExtensionDialog>(id)
            .and_then(|d| d.take_outcome());
        if let Some(answer) = outcome {
            self.answer_open_dialog(tui, answer);
        }
        true
    }

    /// Closes a dialog whose caller stopped waiting (timeout, abort).
    pub(super) fn check_withdrawn<T: Terminal>(&mut self, tui: &mut Tui<T>) {
        if self
            .open
            .as_ref()
            .is_some_and(|o| o.withdrawn.load(Ordering::SeqCst))
        {
            self.close_dialog(tui);
        }
    }

    /// Answers every dialog, open or waiting, with "cancelled" (`/reload`).
    pub(super) fn cancel_dialogs<T: Terminal>(&mut self, tui: &mut Tui<T>) {
        for q in self.queued.drain(..) {
            let _ = q.reply.send(Answer::Cancelled);
        }
        if let Some(open) = self.open.take() {
            let _ = open.reply.send(Answer::Cancelled);
            tui.close_overlay(open.id);
        }
    }

    /// Shows the oldest waiting dialog unless one is showing; skips those given up on.
    fn show_next_dialog<T: Terminal>(&mut self, tui: &mut Tui<T>) {
        if self.open.is_some() {
            return;
        }
        while let Some(q) = self.queued.pop_front() {
            if q.withdrawn.load(Ordering::SeqCst) {
                continue;
            }
            let options = match &q.dialog {
                Dialog::Custom {
                    overlay: true,
                    width,
                    ..
                } => OverlayOptions {
                    anchor: Anchor::Center,
                    width: Some(width.map_or(Extent::Percent(80.0), Extent::Cells)),
                    ..OverlayOptions::default()
                },
                _ => OverlayOptions {
                    anchor: Anchor::BottomCenter,
                    width: Some(Extent::Percent(100.0)),
                    ..OverlayOptions::default()
                },
            };
            let id = tui.show_overlay(ExtensionDialog::new(&q.dialog), options);
            self.open = Some(OpenDialog {
                id,
                reply: q.reply,
                withdrawn: q.withdrawn,
            });
            return;
        }
    }

    fn close_dialog<T: Terminal>(&mut self, tui: &mut Tui<T>) {
        if let Some(open) = self.open.take() {
            close_overlay(tui, open.id);
        }
        self.show_next_dialog(tui);
        tui.request_render();
    }
}

/// Closes a dialog's overlay; a component closed by pi (answered, aborted) tells its extension.
fn close_overlay<T: Terminal>(tui: &mut Tui<T>, id: OverlayId) {
    if let Some(d) = tui.overlay_mut::<ExtensionDialog>(id) {
        if let Some(h) = d.custom_handle() {
            h.close();
        }
    }
    tui.close_overlay(id);
}
