//! A command the user typed with `!` (added to the context) or `!!` (not added), run on its
//! own thread so the UI stays live: output snapshots and the final result come back over a
//! channel, and Escape aborts it (the whole process group is killed by the bash tool).
//! Extensions' `user_bash` handlers see it first.

use std::path::PathBuf;

use crossbeam_channel::Receiver;

use std::sync::Arc;

use crate::ai::Abort;
use crate::extensions::ExtensionHost;
use crate::harness::user_bash::{by_extension, BashUpdate};
use crate::tools::bash::BashTool;

pub struct BashJob {
    pub command: String,
    pub excluded: bool,
    pub abort: Abort,
    pub updates: Receiver<BashUpdate>,
    /// Index of its view in the transcript.
    pub item: usize,
}

impl BashJob {
    pub fn spawn(
        command: &str,
        excluded: bool,
        cwd: PathBuf,
        item: usize,
        host: Option<Arc<ExtensionHost>>,
    ) -> Result<BashJob, String> {
        let (tx, updates) = crossbeam_channel::unbounded();
        let abort = Abort::new();
        let flag = abort.clone();
        let cmd = command.to_string();
        // Detached on purpose: it ends when the command does (or is killed on abort).
        std::thread::Builder::new()
            .name("pi-user-bash".into())
            .spawn(move || {
                let progress = tx.clone();
                let on_output = move |text: String| {
                    let _ = progress.send(BashUpdate::Output(text));
                };
                let by_ext = by_extension(host.as_deref(), &cmd, excluded, &cwd, &flag);
                let run = match by_ext {
                    Some(run) => {
                        if let Ok(r) = &run {
                            on_output(r.tail.clone());
                        }
                        run
                    }
                    None => BashTool::default().run_user_streaming(&cmd, &cwd, flag, &on_output),
                };
                let _ = tx.send(BashUpdate::Done(run));
            })
            .map_err(|e| format!("Could not run the command: {e}"))?;
        Ok(BashJob {
            command: command.to_string(),
            excluded,
            abort,
            updates,
            item,
        })
    }
}
