//! `pi --mode acp` and `pi acp`: pi as an Agent Client Protocol (v1) agent on stdin and stdout,
//! for editors (Zed, JetBrains, Neovim, Emacs). A reader thread parses JSON-RPC lines
//! (`wire`), the main loop hands each to the method it names (`server`); the session lives on
//! its own actor thread (issue 30's `SessionHandle`, held by `slot`), whose events become
//! `session/update` notifications (`updates`); one writer serializes every line. A translator
//! over the handle: no session logic of its own. Stdin closing ends the session, its commands,
//! extensions and MCP servers, then pi (exit 0).

pub mod builtin;
pub mod env;
pub mod files;
pub mod prompt;
pub mod server;
pub mod slot;
pub mod terminals;
pub mod ui;
pub mod updates;
pub mod wire;

use std::sync::Arc;

use crate::extensions::ui::ExtensionUi;
use crate::modes::rpc_out::Out;
use crossbeam_channel::select;

/// Serves ACP until stdin closes (or a signal); returns the exit code.
pub fn run(env: env::AcpEnv) -> i32 {
    let wire = wire::Wire::new(Out::new(Box::new(std::io::stdout())));
    let lines = wire::spawn_reader(wire.clone());
    let mut server = server::Server::new(wire.clone(), env);
    // Where pi would ask a person (an extension's confirm, a sandboxed command that wants to
    // run once without the sandbox), the editor asks its user; no answer in two minutes is a no.
    let ui: Arc<dyn ExtensionUi> =
        Arc::new(ui::AcpUi::new(wire.clone(), Arc::clone(&server.live_id)));
    server.set_ui(Arc::clone(&ui));
    crate::tools::sandbox::set_asker(Some(crate::modes::sandbox_asker(
        ui,
        Some(std::time::Duration::from_secs(120)),
    )));
    // A signal ends the loop below, which stops the live session's run and children.
    crate::util::shutdown::take_over(|| {});
    let shutdown = crate::util::shutdown::notice();
    loop {
        let done = server
            .live
            .as_ref()
            .map(|l| l.slot.done())
            .unwrap_or_else(crossbeam_channel::never);
        select! {
            recv(lines) -> msg => match msg {
                Ok(m) => server.handle(m),
                Err(_) => break,
            },
            recv(done) -> end => match end {
                Ok(end) => server.prompt_done(end),
                Err(_) => {
                    eprintln!("Error: the agent run failed unexpectedly; restart pi to continue the session.");
                    return 1;
                }
            },
            recv(shutdown) -> _ => break,
        }
    }
    server.close();
    0
}
