//! [`ExtensionState`]: the interactive mode's side of its extensions — the host, the
//! channels their UI requests, queued session changes and helper-thread results arrive on,
//! the dialogs they asked for (one open, the rest queued), and whether a `session_before_*`
//! question is pending ([`GatedOp`]). What each of those does to the screen is in
//! `extensions.rs`.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};

use super::ext_ui::UiRequest;
use super::selectors::tree::BranchSummary;
use crate::extensions::ui::{Answer, Dialog};
use crate::extensions::ExtensionHost;
use crate::tui::OverlayId;

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
    Gate { op: GatedOp, cancelled: bool },
    Finished,
}

pub(super) struct QueuedDialog {
    pub dialog: Dialog,
    pub reply: Sender<Answer>,
    pub withdrawn: Arc<AtomicBool>,
}

pub(super) struct OpenDialog {
    pub id: OverlayId,
    pub reply: Sender<Answer>,
    pub withdrawn: Arc<AtomicBool>,
}

/// The app's side of its extensions.
pub(super) struct ExtensionState {
    pub(super) host: Option<Arc<ExtensionHost>>,
    requests: Receiver<UiRequest>,
    actions: Receiver<()>,
    pub(super) queued: VecDeque<QueuedDialog>,
    pub(super) open: Option<OpenDialog>,
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
