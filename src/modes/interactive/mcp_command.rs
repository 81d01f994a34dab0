//! `/mcp` in interactive mode: the manager screen (`selectors/mcp.rs`), and the subcommands
//! `/mcp login [server]` (the sign-in page alone), `/mcp logout [server]` and
//! `/mcp reconnect [server]`, with pi's messages; plus the `[MCP]` section of the start-up
//! header.

use super::app::App;
use super::overlays::OverlayKind;
use super::selectors::mcp::{McpOutcome, McpScreen};
use crate::mcp::connection::ConnState;
use crate::mcp::manager::describe_state;
use crate::mcp::ServerView;
use crate::tui::terminal::Terminal;
use crate::tui::theme;

const MCP_USAGE: &str =
    "Usage: /mcp, /mcp login [server], /mcp logout [server], /mcp reconnect [server]";

/// Which servers a subcommand applies to, and what to say when none does.
struct Pick {
    eligible: fn(&ServerView) -> bool,
    preferred: fn(&ServerView) -> bool,
    none: &'static str,
}

const OAUTH: Pick = Pick {
    eligible: |v| v.enabled() && v.oauth,
    preferred: |v| v.state() == Some(ConnState::NeedsAuth),
    none: "No enabled MCP server uses OAuth. Only HTTP servers without an Authorization header do.",
};

const RECONNECT: Pick = Pick {
    eligible: |v| v.enabled(),
    preferred: |v| matches!(v.state(), Some(ConnState::Failed | ConnState::Disconnected)),
    none: "No enabled MCP server to reconnect.",
};

impl<T: Terminal> App<T> {
    pub(super) fn mcp_command(&mut self, args: &str) -> Result<(), String> {
        let Some(manager) = self.env.mcp.clone() else {
            self.view
                .status_note("MCP is turned off for this run (--no-mcp).");
            return Ok(());
        };
        let words: Vec<&str> = args.split_whitespace().collect();
        let (action, name) = match words.as_slice() {
            [] => {
                let screen = McpScreen::new(manager, theme::current());
                self.show_dialog(screen, OverlayKind::Mcp);
                return Ok(());
            }
            [action] => (*action, None),
            [action, name] => (*action, Some(*name)),
            _ => {
                self.view.warning(MCP_USAGE);
                return Ok(());
            }
        };
        let pick = match action {
            "login" | "logout" => &OAUTH,
            "reconnect" => &RECONNECT,
            _ => {
                self.view.warning(MCP_USAGE);
                return Ok(());
            }
        };
        let Some(server) = self.pick_server(&manager.snapshot(), name, pick)? else {
            return Ok(());
        };
        match action {
            "login" => {
                let screen = McpScreen::signing_in(manager, theme::current(), &server);
                self.show_dialog(screen, OverlayKind::Mcp);
            }
            "logout" => {
                let removed = manager.sign_out(&server)?;
                self.view.status_note(&if removed {
                    format!("Signed out of MCP server \"{server}\".")
                } else {
                    format!("No stored credentials for MCP server \"{server}\".")
                });
            }
            _ => {
                // Detached: the connect is bounded by the server's timeout and reports itself.
                let _ = std::thread::Builder::new()
                    .name("pi-mcp-reconnect".into())
                    .spawn(
                        move || match manager.reconnect(&server, &crate::ai::Abort::new()) {
                            Ok(()) => {
                                let view = manager
                                    .snapshot()
                                    .into_iter()
                                    .find(|v| v.entry.name == server);
                                let state = view.map_or_else(String::new, |v| {
                                    describe_state(v.enabled(), v.status.as_ref())
                                });
                                manager.notify(
                                    &format!("Reconnected to MCP server \"{server}\" ({state})."),
                                    "info",
                                );
                            }
                            Err(e) => manager.notify(&e, "error"),
                        },
                    );
            }
        }
        Ok(())
    }

    /// The server a subcommand names, or the one it can only mean.
    fn pick_server(
        &mut self,
        views: &[ServerView],
        name: Option<&str>,
        pick: &Pick,
    ) -> Result<Option<String>, String> {
        if let Some(name) = name {
            let Some(v) = views.iter().find(|v| v.entry.name == name) else {
                return Err(format!("No MCP server named \"{name}\"."));
            };
            if !(pick.eligible)(v) {
                return Err(pick.none.into());
            }
            return Ok(Some(name.to_string()));
        }
        let candidates: Vec<&ServerView> = views.iter().filter(|v| (pick.eligible)(v)).collect();
        let preferred: Vec<&ServerView> = candidates
            .iter()
            .copied()
            .filter(|v| (pick.preferred)(v))
            .collect();
        match (candidates.as_slice(), preferred.as_slice()) {
            ([], _) => {
                self.view.status_note(pick.none);
                Ok(None)
            }
            ([only], _) | (_, [only]) => Ok(Some(only.entry.name.clone())),
            _ => {
                let names: Vec<&str> = candidates.iter().map(|v| v.entry.name.as_str()).collect();
                Err(format!(
                    "More than one MCP server fits; name one: {}.",
                    names.join(", ")
                ))
            }
        }
    }

    /// The screen closed; a sign-in opened with `/mcp login` tells its result.
    pub(super) fn mcp_screen_closed(&mut self, outcome: McpOutcome) {
        let McpOutcome::Closed(Some((message, kind))) = outcome else {
            return;
        };
        match kind {
            "error" => self.view.error(&message),
            _ => self.view.status_note(&message),
        }
    }

    /// The `[MCP]` header section: the configured servers.
    pub(super) fn list_mcp_in_header(&mut self) {
        let Some(manager) = &self.env.mcp else { return };
        self.view.header.info.mcp = manager
            .snapshot()
            .into_iter()
            .map(|v| {
                let disabled = if v.enabled() { "" } else { " (disabled)" };
                let line = format!(
                    "{}{disabled}  {}  {}",
                    v.entry.name,
                    v.entry.scope.as_str(),
                    v.entry.config.describe_transport()
                );
                (format!("{}{disabled}", v.entry.name), line)
            })
            .collect();
    }
}
