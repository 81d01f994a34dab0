//! [`Jobs`]: the background work the UI loop waits on besides the agent's run — the user's
//! `!cmd` ([`BashJob`]) and the results it finished while a run held the session, the
//! clipboard read of the paste-image key, and the branch summary a tree navigation waits for
//! ([`TreeSummaryJob`]). Each job draws only into the [`View`] it is handed; recording a
//! finished command in the session is the caller's (it may be held by a run).

use std::path::PathBuf;
use std::sync::Arc;

use crossbeam_channel::Receiver;

use crate::util::reply::ReplyRx;

use super::bash_job::BashJob;
use super::chat::{BashOutcome, BashView, ChatItem};
use super::clipboard_image::{self, ClipboardEnv, ClipboardRead};
use super::view::View;
use crate::extensions::ExtensionHost;
use crate::harness::compaction::SummaryError;
use crate::harness::user_bash::BashUpdate;
use crate::session::entry::BashExecutionMessage;
use crate::tui::keybindings;

/// The background jobs (each at most one at a time).
#[derive(Default)]
pub(super) struct Jobs {
    bash: Option<BashJob>,
    /// `!cmd` results finished while a run held the session.
    pending_bash: Vec<BashExecutionMessage>,
    /// The clipboard read started by the paste-image key.
    clipboard_read: Option<ReplyRx<ClipboardRead>>,
    /// A branch summary being made before a tree navigation (its task is the turn's).
    tree_summary: Option<TreeSummaryJob>,
}

/// A navigation waiting for its branch summary.
pub(super) struct TreeSummaryJob {
    pub entry_id: String,
    pub editor_text: Option<String>,
    pub done: ReplyRx<Result<(), SummaryError>>,
}

impl Jobs {
    /// Whether a `!cmd` runs.
    pub fn bash_running(&self) -> bool {
        self.bash.is_some()
    }

    /// Escape: the running `!cmd` is killed (its result still arrives). False when none runs.
    pub fn abort_bash(&self) -> bool {
        match &self.bash {
            Some(job) => {
                job.abort.abort();
                true
            }
            None => false,
        }
    }

    /// Output of the running `!cmd`, if any.
    pub fn bash_updates(&self) -> Option<Receiver<BashUpdate>> {
        self.bash.as_ref().map(|b| b.updates.clone())
    }

    /// The result of the clipboard read, if one runs.
    pub fn clipboard(&self) -> Option<ReplyRx<ClipboardRead>> {
        self.clipboard_read.clone()
    }

    /// The `!cmd` results not yet recorded in the session, oldest first.
    pub fn take_pending_bash(&mut self) -> Vec<BashExecutionMessage> {
        std::mem::take(&mut self.pending_bash)
    }

    /// A tree navigation now waits for its branch summary.
    pub fn await_tree_summary(&mut self, job: TreeSummaryJob) {
        self.tree_summary = Some(job);
    }

    /// The tree navigation waiting for the run that ended, if any.
    pub fn take_tree_summary(&mut self) -> Option<TreeSummaryJob> {
        self.tree_summary.take()
    }

    /// Starts `command` in `cwd` with its box at the end of the transcript.
    pub fn start_bash(
        &mut self,
        view: &mut View,
        command: &str,
        excluded: bool,
        cwd: PathBuf,
        host: Option<Arc<ExtensionHost>>,
    ) {
        if self.bash.is_some() {
            view.warning("A bash command is already running. Press Esc to cancel it first.");
            return;
        }
        let cancel = keybindings::current().key_text("tui.select.cancel");
        let mut item = BashView::new(command, excluded, &cancel);
        item.set_expanded(view.tools_expanded);
        view.push(ChatItem::Bash(item));
        let index = view.chat.len() - 1;
        match BashJob::spawn(command, excluded, cwd, index, host) {
            Ok(job) => self.bash = Some(job),
            Err(e) => view.error(&e),
        }
    }

    /// Output or the end of the `!cmd`. Returns true when a result joined `pending_bash`
    /// (for the caller to record in the session).
    pub fn on_bash_update(&mut self, view: &mut View, update: Option<BashUpdate>) -> bool {
        let Some(job) = &self.bash else { return false };
        let item = job.item;
        match update {
            Some(BashUpdate::Output(text)) => {
                if let Some(ChatItem::Bash(b)) = view.chat.get_mut(item) {
                    b.set_output(&text);
                }
                false
            }
            Some(BashUpdate::Done(run)) => {
                let Some(job) = self.bash.take() else {
                    return false;
                };
                match run {
                    Ok(run) => {
                        let msg = crate::harness::user_bash::bash_message(
                            job.command.clone(),
                            run,
                            job.excluded,
                        );
                        if let Some(ChatItem::Bash(b)) = view.chat.get_mut(item) {
                            b.set_output(&msg.output);
                            b.finish(BashOutcome {
                                exit_code: msg.exit_code.flatten(),
                                cancelled: msg.cancelled,
                                full_output_path: msg.full_output_path.clone(),
                                truncated: msg.truncated,
                            });
                        }
                        self.pending_bash.push(msg);
                        true
                    }
                    Err(e) => {
                        if let Some(ChatItem::Bash(b)) = view.chat.get_mut(item) {
                            b.finish(BashOutcome {
                                exit_code: None,
                                cancelled: false,
                                full_output_path: None,
                                truncated: false,
                            });
                        }
                        view.error(&e);
                        false
                    }
                }
            }
            // The thread ended without a result (it cannot, but never hang on it).
            None => {
                self.bash = None;
                false
            }
        }
    }

    /// The paste-image key: reads the clipboard on a helper thread (one read at a time).
    pub fn paste_clipboard_image(&mut self, env: &ClipboardEnv) {
        if self.clipboard_read.is_none() {
            self.clipboard_read = Some(clipboard_image::spawn_read(env.clone()));
        }
    }

    /// The clipboard read finished: an image is saved to a temp file whose path goes into the
    /// editor at the cursor. No image does nothing, as in pi.
    pub fn on_clipboard_image(
        &mut self,
        view: &mut View,
        env: &ClipboardEnv,
        read: Option<ClipboardRead>,
    ) {
        self.clipboard_read = None;
        match read {
            Some(ClipboardRead::Image(image)) => match clipboard_image::save(env, &image) {
                Ok(path) => view.editor.insert_text_at_cursor(&path.to_string_lossy()),
                Err(e) => view.error(&format!("Could not save the pasted image: {e}")),
            },
            Some(ClipboardRead::NoTool(tool)) => view.warning(&format!(
                "Cannot paste images: no clipboard tool found. Install {tool}."
            )),
            Some(ClipboardRead::NoImage) | None => {}
        }
    }
}
