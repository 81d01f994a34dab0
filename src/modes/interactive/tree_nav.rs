//! `/tree`: the branch navigator and what its choices do. Choosing an entry moves the
//! session's leaf in place (pi's `navigateTree`): a user message is re-opened for editing
//! (the leaf goes to its parent and its text to the editor), anything else becomes the leaf.
//! Labels are appended as `label` entries while the tree stays open. An optional summary of
//! the branch being left is made by the model on the session's thread (work started through
//! the session link) with a loader showing; Escape aborts it and reopens the tree on the same entry.

use super::app::App;
use super::jobs::TreeSummaryJob;
use super::overlays::OverlayKind;
use super::selectors::tree::{BranchSummary, TreeOutcome, TreeSelector};
use super::selectors::tree_layout::TreeFilter;
use crate::agent::Agent;
use crate::harness::compaction::{
    summarize_branch, BranchSummaryOptions, Summarizer, SummaryError,
};
use crate::session::{ops, to_llm_messages, AgentMessage, Entry};
use crate::tui::keybindings;
use crate::tui::terminal::Terminal;
use crate::tui::theme::{self, Token};

/// Where choosing `entry` puts the leaf, and the text it gives back to the editor.
fn navigation_target(entry: &Entry) -> (Option<String>, Option<String>) {
    match entry {
        Entry::Message(m) => match &m.message {
            AgentMessage::Llm(crate::ai::Message::User(u)) => (
                m.parent_id.clone(),
                Some(ops::user_content_text(&u.content)),
            ),
            _ => (Some(m.id.clone()), None),
        },
        Entry::CustomMessage(c) => (
            c.parent_id.clone(),
            Some(ops::user_content_text(&c.content)),
        ),
        other => (Some(other.id().to_string()), None),
    }
}

impl<T: Terminal> App<T> {
    /// Opens the navigator, on `selected` when given (else on the current leaf).
    pub(super) fn open_tree_selector(&mut self, selected: Option<&str>) -> Result<(), String> {
        let (entries, leaf, filter, skip_prompt) = self.idle_session(|s| {
            let filter =
                TreeFilter::parse(s.settings.str(&["treeFilterMode"]).unwrap_or("default"));
            let skip_prompt = s
                .settings
                .bool(&["branchSummary", "skipPrompt"])
                .unwrap_or(false);
            let leaf = s.session.leaf_id().map(str::to_string);
            (s.session.entries().to_vec(), leaf, filter, skip_prompt)
        })?;
        if entries.is_empty() {
            self.view.status_note("No entries in session");
            return Ok(());
        }
        let rows = self.tui.terminal().size().1;
        let mut selector =
            TreeSelector::new(&entries, leaf.as_deref(), rows, filter, theme::current())
                .with_skip_summary_prompt(skip_prompt);
        if let Some(id) = selected {
            selector = selector.with_selected(id);
        }
        self.show_dialog(selector, OverlayKind::Tree);
        Ok(())
    }

    pub(super) fn apply_tree_outcome(&mut self, outcome: TreeOutcome) -> Result<(), String> {
        match outcome {
            TreeOutcome::Cancelled => Ok(()),
            TreeOutcome::AlreadyAtLeaf => {
                self.view.status_note("Already at this point");
                Ok(())
            }
            TreeOutcome::LabelChanged { entry_id, label } => self.idle_session(move |s| {
                ops::set_label(&mut s.session, &entry_id, label.as_deref())
                    .map(|_| ())
                    .map_err(String::from)
            })?,
            TreeOutcome::Selected { entry_id, summary } => {
                self.gated(super::ext_state::GatedOp::Tree { entry_id, summary })
            }
        }
    }

    pub(super) fn navigate_tree(
        &mut self,
        entry_id: &str,
        summary: BranchSummary,
    ) -> Result<(), String> {
        let id = entry_id.to_string();
        let (entry, reserve_tokens) = self.idle_session(move |s| {
            let reserve_tokens = s
                .settings
                .u64(&["branchSummary", "reserveTokens"])
                .unwrap_or(16384);
            (s.session.tree().get(&id).cloned(), reserve_tokens)
        })?;
        let entry = entry.ok_or_else(|| format!("Entry {entry_id} not found"))?;
        let (new_leaf, editor_text) = navigation_target(&entry);
        let instructions = match summary {
            BranchSummary::None => {
                self.idle_session(move |s| match &new_leaf {
                    Some(id) => s.session.branch(id),
                    None => {
                        s.session.reset_leaf();
                        Ok(())
                    }
                })??;
                self.show_navigated(editor_text);
                return Ok(());
            }
            BranchSummary::Summarize => None,
            BranchSummary::Custom(text) => Some(text),
        };
        if !self.env.has_model {
            return Err("No model available for summarization".into());
        }
        let (tx, done) = crate::util::reply::reply();
        let target = entry_id.to_string();
        self.run_task(move |idle| {
            let s = idle.session;
            let agent: &Agent = s.agent();
            let (model, options, stream_fn) = (
                agent.model.clone(),
                agent.options.clone(),
                agent.stream_fn.clone(),
            );
            let (thinking, abort) = (agent.thinking, s.abort.clone());
            let summarizer = Summarizer {
                model: &model,
                options: &options,
                thinking,
                stream_fn: &stream_fn,
                abort: &abort,
            };
            let opts = BranchSummaryOptions {
                custom_instructions: instructions.as_deref(),
                reserve_tokens,
                ..BranchSummaryOptions::default()
            };
            let result = summarize_branch(
                &mut s.session,
                &target,
                new_leaf.as_deref(),
                &summarizer,
                &opts,
            );
            let _ = tx.send(result.map(|_| ()));
        });
        if self.turn.is_running() {
            let key = keybindings::current().key_text("app.interrupt");
            self.show_loader(
                Token::Accent,
                format!("Summarizing branch... ({key} to cancel)"),
            );
            self.jobs.await_tree_summary(TreeSummaryJob {
                entry_id: entry_id.to_string(),
                editor_text,
                done,
            });
        }
        Ok(())
    }

    /// The summary task handed the session back.
    pub(super) fn finish_tree_navigation(&mut self, job: TreeSummaryJob) {
        match job.done.try_recv() {
            Ok(Ok(())) => self.show_navigated(job.editor_text),
            Ok(Err(SummaryError::Aborted)) | Err(_) => {
                self.view.status_note("Branch summarization cancelled");
                if let Err(e) = self.open_tree_selector(Some(&job.entry_id)) {
                    self.view.error(&e);
                }
            }
            Ok(Err(e)) => self.view.error(&e.to_string()),
        }
    }

    /// The leaf moved: the agent continues from the new branch and the screen shows it.
    fn show_navigated(&mut self, editor_text: Option<String>) {
        self.session(|s| {
            let ctx = s.session.build_context();
            s.agent_mut().messages = to_llm_messages(&ctx.messages);
            s.restore_tools_from_transcript();
        });
        self.render_history();
        if let Some(text) = editor_text {
            if self.view.editor.get_text().trim().is_empty() {
                self.view.editor.set_text(&text);
            }
        }
        self.view.status_note("Navigated to selected point");
        self.refresh_footer();
    }
}
