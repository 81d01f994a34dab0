//! Output modes over the shared `AgentSession`: interactive (the terminal UI), print (`-p`,
//! text answer), json (one event per line) and rpc (JSON commands and events).

pub mod acp;
pub mod interactive;
pub mod print;
pub mod rpc;
pub mod rpc_out;
pub mod rpc_rewind;
pub mod rpc_session;
pub mod rpc_ui;

use std::sync::Arc;
use std::time::Duration;

use crate::extensions::ui::{Answer, Dialog, ExtensionUi};

/// "Run this once without the sandbox?" asked as a confirm dialog of `ui` (the terminal's, or
/// an RPC client's `extension_ui_request`); no answer by `timeout` is a no.
pub fn sandbox_asker(
    ui: Arc<dyn ExtensionUi>,
    timeout: Option<Duration>,
) -> crate::tools::sandbox::AskFn {
    Arc::new(
        move |title: &str, message: &str, abort: &crate::ai::Abort| {
            let dialog = Dialog::Confirm {
                title: title.into(),
                message: message.into(),
                timeout,
            };
            ui.dialog(dialog, abort) == Answer::Confirmed(true)
        },
    )
}
