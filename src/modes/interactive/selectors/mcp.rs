//! [`McpScreen`]: pi's `/mcp` manager. The server list (servers that need attention first,
//! each with its state, exposure and source), a server's page (transport, source, state, the
//! full error with the stderr tail, and its actions: sign in, tools, reconnect, sign out,
//! exposure, enable/disable, in this project too), the tools with their effective exposure,
//! the exposure choice, and the sign-in page (`selectors/mcp_signin.rs`). It reads the
//! session's [`McpManager`] and redraws when the manager's generation moves; slow actions run
//! on their own threads and show in the server's state or message.

use std::sync::Arc;

use super::common::{border, fit, key_hint};
use super::mcp_signin::{SignInPage, SignInResult};
use crate::mcp::config::{Exposure, Scope};
use crate::mcp::connection::ConnState;
use crate::mcp::manager::describe_state;
use crate::mcp::{McpManager, ServerView};
use crate::tui::components::select_list::{SelectItem, SelectList, SelectResult};
use crate::tui::theme::{Theme, Token};
use crate::tui::{Component, InputEvent};
use crate::util::sort;

const MAX_VISIBLE_ITEMS: usize = 12;

/// pi's descriptions of the exposures one can choose.
const EXPOSURES: [(Exposure, &str); 3] = [
    (
        Exposure::Codemode,
        "called from codemode scripts, which find them with searchTools() (here: as deferred)",
    ),
    (
        Exposure::Deferred,
        "not declared until tool_search loads them, then called directly; no codemode needed",
    ),
    (
        Exposure::Direct,
        "declared to the model like built-in tools",
    ),
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpOutcome {
    /// With what to tell the user (a sign-in's result, when the screen was opened for it):
    /// `(message, kind)`.
    Closed(Option<(String, &'static str)>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Page {
    Servers,
    Server(String),
    Tools(String),
    Exposure(String),
}

/// One menu as drawn.
struct Menu {
    title: String,
    details: Option<String>,
    error: Option<String>,
    items: Vec<SelectItem>,
    empty: String,
    confirm: &'static str,
    cancel: &'static str,
    /// The item to select when the menu first shows.
    selected: Option<String>,
}

pub struct McpScreen {
    manager: Arc<McpManager>,
    theme: Arc<Theme>,
    pages: Vec<Page>,
    menu: Option<Menu>,
    list: Option<SelectList>,
    /// The page and generation the menu was built for.
    built_for: Option<(Page, u64)>,
    sign_in: Option<SignInPage>,
    /// Opened for one sign-in (`/mcp login <server>`): its end closes the screen.
    only_sign_in: bool,
    outcome: Option<McpOutcome>,
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// Servers that need the user first.
fn attention_rank(v: &ServerView) -> u8 {
    if !v.enabled() {
        return 5;
    }
    match v.state() {
        Some(ConnState::NeedsAuth) => 0,
        Some(ConnState::Failed) => 1,
        Some(ConnState::Disconnected) => 2,
        Some(ConnState::Connected) => 4,
        _ => 3,
    }
}

fn scope_label(v: &ServerView) -> String {
    if v.entry.override_path.is_some() {
        "global, project override".into()
    } else {
        v.entry.scope.as_str().into()
    }
}

impl McpScreen {
    pub fn new(manager: Arc<McpManager>, theme: Arc<Theme>) -> McpScreen {
        McpScreen {
            manager,
            theme,
            pages: vec![Page::Servers],
            menu: None,
            list: None,
            built_for: None,
            sign_in: None,
            only_sign_in: false,
            outcome: None,
        }
    }

    /// The screen opened straight on a server's sign-in (`/mcp login <server>`).
    pub fn signing_in(manager: Arc<McpManager>, theme: Arc<Theme>, server: &str) -> McpScreen {
        let mut s = McpScreen::new(manager, theme);
        s.only_sign_in = true;
        s.start_sign_in(server);
        s
    }

    pub fn take_outcome(&mut self) -> Option<McpOutcome> {
        self.poll();
        self.outcome.take()
    }

    /// Takes what changed (server states, the sign-in's progress); true when it needs
    /// drawing.
    pub fn poll(&mut self) -> bool {
        let mut changed = false;
        if let Some(page) = &mut self.sign_in {
            changed |= page.poll();
            if let Some(result) = page.take_result() {
                let name = page.server().to_string();
                self.sign_in = None;
                changed = true;
                self.finish_sign_in(&name, result);
            }
        }
        let generation = self.manager.generation();
        if self
            .built_for
            .as_ref()
            .is_some_and(|(_, g)| *g != generation)
        {
            changed = true;
        }
        changed
    }

    fn finish_sign_in(&mut self, name: &str, result: SignInResult) {
        let message = match &result {
            Ok(()) => None,
            Err(e) => Some(e.clone()),
        };
        if self.only_sign_in {
            let told = match result {
                Ok(()) => {
                    let tools = self
                        .view(name)
                        .and_then(|v| v.status.map(|s| s.tools.len()))
                        .unwrap_or(0);
                    (
                        format!("Signed in to MCP server \"{name}\" ({tools} tools)."),
                        "info",
                    )
                }
                Err(e) if e == "Sign-in cancelled." => (e, "info"),
                Err(e) => (e, "error"),
            };
            self.outcome = Some(McpOutcome::Closed(Some(told)));
            return;
        }
        self.manager.set_message(name, message);
        self.built_for = None;
    }

    fn view(&self, name: &str) -> Option<ServerView> {
        self.manager
            .snapshot()
            .into_iter()
            .find(|v| v.entry.name == name)
    }

    fn start_sign_in(&mut self, name: &str) {
        self.sign_in = Some(SignInPage::start(
            Arc::clone(&self.manager),
            name,
            Arc::clone(&self.theme),
        ));
    }

    fn servers_menu(&self) -> Menu {
        let mut views = self.manager.snapshot();
        sort::sort_by(&mut views, |a, b| {
            attention_rank(a)
                .cmp(&attention_rank(b))
                .then_with(|| a.entry.name.cmp(&b.entry.name))
        });
        let notices = self.manager.notices();
        let global = crate::mcp::config::global_path(&self.agent_dir());
        Menu {
            title: "MCP servers".into(),
            details: None,
            error: (!notices.is_empty()).then(|| notices.join("\n")),
            items: views
                .iter()
                .map(|v| {
                    SelectItem::new(v.entry.name.clone()).description(format!(
                        "{} · {} · {}",
                        describe_state(v.enabled(), v.status.as_ref()),
                        v.entry.config.exposure().as_str(),
                        scope_label(v)
                    ))
                })
                .collect(),
            empty: format!(
                "No MCP servers configured. Add them to {} or .pi/mcp.json.",
                global.display()
            ),
            confirm: "manage",
            cancel: "close",
            selected: None,
        }
    }

    fn agent_dir(&self) -> std::path::PathBuf {
        self.manager.agent_dir().to_path_buf()
    }

    fn server_menu(&self, name: &str) -> Menu {
        let Some(v) = self.view(name) else {
            return Menu {
                title: name.to_string(),
                details: None,
                error: None,
                items: Vec::new(),
                empty: "This server is no longer configured.".into(),
                confirm: "",
                cancel: "back",
                selected: None,
            };
        };
        let entry = &v.entry;
        let saved = match (entry.scope, &entry.override_path) {
            (Scope::Extension, _) => "for this session".to_string(),
            (_, Some(_)) => "saved to the project mcp.json".to_string(),
            (scope, None) => format!("saved to the {} mcp.json", scope.as_str()),
        };
        let in_project = entry.scope == Scope::Global
            && entry.override_path.is_none()
            && self.manager.project_config().is_some();
        let project_saved = "saved to the project mcp.json";
        let mut items = Vec::new();
        if !v.enabled() {
            items.push(
                SelectItem::new("enable")
                    .label("Enable")
                    .description(&saved),
            );
            if in_project {
                items.push(
                    SelectItem::new("enable-project")
                        .label("Enable in this project")
                        .description(project_saved),
                );
            }
        } else {
            let state = v.state();
            let status = v.status.as_ref();
            if state == Some(ConnState::NeedsAuth) && v.oauth {
                items.push(
                    SelectItem::new("signin")
                        .label("Sign in")
                        .description("opens the browser"),
                );
            }
            if state == Some(ConnState::Connected) {
                let n = status.map_or(0, |s| s.tools.len());
                items.push(
                    SelectItem::new("tools")
                        .label("Tools")
                        .description(format!("{n} offered")),
                );
            }
            if matches!(
                state,
                Some(
                    ConnState::Failed
                        | ConnState::Disconnected
                        | ConnState::Connected
                        | ConnState::NeedsAuth
                )
            ) {
                items.push(SelectItem::new("reconnect").label("Reconnect"));
            }
            if state == Some(ConnState::Connected) && v.oauth {
                items.push(
                    SelectItem::new("signout")
                        .label("Sign out")
                        .description("deletes the stored credentials"),
                );
            }
            items.push(
                SelectItem::new("exposure")
                    .label("Exposure")
                    .description(entry.config.exposure().as_str()),
            );
            items.push(
                SelectItem::new("disable")
                    .label("Disable")
                    .description(&saved),
            );
            if in_project {
                items.push(
                    SelectItem::new("disable-project")
                        .label("Disable in this project")
                        .description(project_saved),
                );
            }
        }
        let mut details = vec![
            entry.config.describe_transport(),
            format!("{}: {}", entry.scope.as_str(), entry.source.display()),
        ];
        if let Some(o) = &entry.override_path {
            details.push(format!("project override: {}", o.display()));
        }
        let state = describe_state(v.enabled(), v.status.as_ref());
        let state = if state.starts_with("failed: ") {
            "failed".to_string()
        } else {
            state
        };
        details.push(format!("State: {state}"));
        let connection_error = v
            .status
            .as_ref()
            .filter(|s| s.state != ConnState::Connected)
            .and_then(|s| s.error.clone());
        let error: Vec<String> = v.message.iter().cloned().chain(connection_error).collect();
        Menu {
            title: format!("MCP server {name}"),
            details: Some(details.join("\n")),
            error: (!error.is_empty()).then(|| error.join("\n")),
            selected: items.first().map(|i| i.value.clone()),
            items,
            empty: String::new(),
            confirm: "select",
            cancel: "back",
        }
    }

    fn tools_menu(&self, name: &str) -> Menu {
        let v = self.view(name);
        let exposure = v
            .as_ref()
            .map_or(Exposure::Codemode, |v| v.entry.config.exposure());
        let reach = match exposure {
            Exposure::Hidden => "unreachable",
            e => EXPOSURES
                .iter()
                .find(|(x, _)| *x == e)
                .map_or("", |(_, d)| *d),
        };
        let overridden = v
            .as_ref()
            .is_some_and(|v| !v.entry.config.tool_exposure.is_empty());
        let mut details = format!("Exposure {}: {reach}", exposure.as_str());
        if overridden {
            details.push_str("\nSome tools override it with toolExposure.");
        }
        let items = v
            .as_ref()
            .and_then(|v| v.status.as_ref().map(|s| (v, s)))
            .map(|(v, s)| {
                s.tools
                    .iter()
                    .filter_map(|t| {
                        let tool = t["name"].as_str()?;
                        let own = v.entry.config.tool_exposure(tool);
                        let description = first_line(t["description"].as_str().unwrap_or(""));
                        let description = if own == exposure {
                            description.to_string()
                        } else {
                            format!("[{}] {description}", own.as_str())
                        };
                        Some(SelectItem::new(tool).description(description))
                    })
                    .collect()
            })
            .unwrap_or_default();
        Menu {
            title: format!("Tools of {name}"),
            details: Some(details),
            error: None,
            items,
            empty: "The server offers no tools.".into(),
            confirm: "back",
            cancel: "back",
            selected: None,
        }
    }

    fn exposure_menu(&self, name: &str) -> Menu {
        let v = self.view(name);
        let current = v
            .as_ref()
            .map_or(Exposure::Codemode, |v| v.entry.config.exposure());
        let details = match &v {
            Some(v) if v.entry.scope == Scope::Extension => format!(
                "Applies to this session; the server is registered by {}.",
                v.entry.source.display()
            ),
            Some(v) => format!(
                "Saved to {}.",
                v.entry
                    .override_path
                    .as_ref()
                    .unwrap_or(&v.entry.source)
                    .display()
            ),
            None => String::new(),
        };
        Menu {
            title: format!("Exposure of {name}"),
            details: Some(details),
            error: None,
            items: EXPOSURES
                .iter()
                .map(|(e, d)| {
                    let mark = if *e == current { "✓ " } else { "  " };
                    SelectItem::new(e.as_str())
                        .label(format!("{mark}{}", e.as_str()))
                        .description(*d)
                })
                .collect(),
            empty: String::new(),
            confirm: "save",
            cancel: "back",
            selected: Some(current.as_str().to_string()),
        }
    }

    /// Rebuilds the menu of the current page when the page or the servers changed, keeping
    /// the selected item.
    fn refresh(&mut self) {
        let page = self.pages.last().cloned().unwrap_or(Page::Servers);
        let generation = self.manager.generation();
        if self.built_for == Some((page.clone(), generation)) && self.list.is_some() {
            return;
        }
        let same_page = self.built_for.as_ref().is_some_and(|(p, _)| *p == page);
        let keep = same_page
            .then(|| {
                self.list
                    .as_ref()
                    .and_then(|l| l.selected_item())
                    .map(|i| i.value.clone())
            })
            .flatten();
        let menu = match &page {
            Page::Servers => self.servers_menu(),
            Page::Server(n) => self.server_menu(n),
            Page::Tools(n) => self.tools_menu(n),
            Page::Exposure(n) => self.exposure_menu(n),
        };
        let mut list = SelectList::new(
            menu.items.clone(),
            menu.items.len().clamp(1, MAX_VISIBLE_ITEMS),
            Arc::clone(&self.theme),
        );
        let wanted = keep.or_else(|| menu.selected.clone());
        if let Some(i) = wanted.and_then(|w| menu.items.iter().position(|it| it.value == w)) {
            list.set_selected_index(i);
        }
        self.list = Some(list);
        self.menu = Some(menu);
        self.built_for = Some((page, generation));
    }

    fn back(&mut self) {
        self.pages.pop();
        self.built_for = None;
        if self.pages.is_empty() {
            self.outcome = Some(McpOutcome::Closed(None));
        }
    }

    fn open(&mut self, page: Page) {
        self.pages.push(page);
        self.built_for = None;
    }

    fn selected(&mut self, value: String) {
        let page = self.pages.last().cloned().unwrap_or(Page::Servers);
        match page {
            Page::Servers => self.open(Page::Server(value)),
            Page::Server(name) => self.act(&name, &value),
            Page::Tools(_) => self.back(),
            Page::Exposure(name) => {
                let chosen = Exposure::parse(&value);
                let current = self.view(&name).map(|v| v.entry.config.exposure());
                if let Some(e) = chosen.filter(|e| Some(*e) != current) {
                    let message = self.manager.set_exposure(&name, e).err();
                    self.manager.set_message(&name, message);
                }
                self.back();
            }
        }
    }

    /// An action of a server's page.
    fn act(&mut self, name: &str, action: &str) {
        let m = Arc::clone(&self.manager);
        let n = name.to_string();
        match action {
            "signin" => self.start_sign_in(name),
            "tools" => self.open(Page::Tools(n)),
            "exposure" => self.open(Page::Exposure(n)),
            "reconnect" | "signout" => {
                m.set_message(name, None);
                let signout = action == "signout";
                // Detached: a connect is bounded by the server's timeout; its outcome shows
                // in the server's state.
                let _ = std::thread::Builder::new()
                    .name("pi-mcp-action".into())
                    .spawn(move || {
                        if signout {
                            if let Err(e) = m.sign_out(&n) {
                                m.set_message(&n, Some(e));
                            }
                        } else {
                            let _ = m.reconnect(&n, &crate::ai::Abort::new());
                        }
                    });
            }
            "enable" | "disable" | "enable-project" | "disable-project" => {
                let enable = action.starts_with("enable");
                let message = m
                    .set_enabled(name, enable, action.ends_with("-project"))
                    .err();
                m.set_message(name, message);
            }
            _ => {}
        }
    }
}

impl Component for McpScreen {
    fn render(&mut self, width: usize) -> Vec<String> {
        self.poll();
        let t = Arc::clone(&self.theme);
        if let Some(page) = &mut self.sign_in {
            return fit(page.render(width), width);
        }
        self.refresh();
        let Some(menu) = &self.menu else {
            return Vec::new();
        };
        let mut lines = vec![border(&t, Token::Accent, width)];
        lines.push(format!(" {}", t.fg(Token::Accent, &t.bold(&menu.title))));
        for d in menu.details.iter().flat_map(|d| d.lines()) {
            lines.push(format!(" {}", t.fg(Token::Muted, d)));
        }
        for e in menu.error.iter().flat_map(|e| e.lines()) {
            lines.push(format!(" {}", t.fg(Token::Error, e)));
        }
        lines.push(String::new());
        let footer = if menu.items.is_empty() {
            lines.push(format!(" {}", t.fg(Token::Muted, &menu.empty)));
            key_hint(&t, "tui.select.cancel", menu.cancel)
        } else {
            if let Some(list) = &mut self.list {
                lines.extend(list.render(width));
            }
            format!(
                "{} • {}",
                key_hint(&t, "tui.select.confirm", menu.confirm),
                key_hint(&t, "tui.select.cancel", menu.cancel)
            )
        };
        lines.push(String::new());
        lines.push(format!(" {footer}"));
        lines.push(border(&t, Token::Accent, width));
        fit(lines, width)
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        self.poll();
        if let Some(page) = &mut self.sign_in {
            page.handle_input(event);
            self.poll();
            return true;
        }
        self.refresh();
        let empty = self.menu.as_ref().is_some_and(|m| m.items.is_empty());
        if empty {
            let cancel = event
                .key()
                .is_some_and(|k| crate::tui::keybindings::matches(k, "tui.select.cancel"));
            if cancel {
                self.back();
            }
            return true;
        }
        let Some(list) = &mut self.list else {
            return true;
        };
        list.handle_input(event);
        match list.take_result() {
            Some(SelectResult::Selected(item)) => self.selected(item.value),
            Some(SelectResult::Cancelled) => self.back(),
            None => {}
        }
        true
    }
}

#[cfg(test)]
#[path = "mcp_tests.rs"]
mod tests;
