//! [`SettingsSelector`] (`/settings`): pi's settings menu on [`SettingsList`] — the same
//! items, values, order and descriptions. Each change is reported as a typed
//! [`SettingChange`] the moment it is made (pi applies settings live); the theme submenu also
//! reports the highlighted theme for a live preview.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::Arc;

use serde_json::{json, Value};

use super::super::header::QuietStartup;
use super::common::{border, fit};
use super::thinking::level_list;
use crate::ai::types::ThinkingLevel;
use crate::tui::components::select_list::{SelectItem, SelectList, SelectResult};
use crate::tui::components::settings_list::{SettingItem, SettingsEvent, SettingsList, Submenu};
use crate::tui::theme::{Theme, Token};
use crate::tui::{Component, InputEvent};

/// The current values the menu starts from.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingsConfig {
    pub auto_compact: bool,
    /// `None` when the terminal cannot show images: the image rows are left out, as in pi.
    pub show_images: Option<bool>,
    pub image_width_cells: u32,
    pub auto_resize_images: bool,
    pub block_images: bool,
    pub enable_skill_commands: bool,
    pub show_hardware_cursor: bool,
    pub editor_padding_x: u32,
    pub autocomplete_max_visible: u32,
    pub clear_on_shrink: bool,
    pub show_terminal_progress: bool,
    pub steering_mode: String,
    pub follow_up_mode: String,
    pub transport: String,
    pub hide_thinking_block: bool,
    pub collapse_changelog: bool,
    pub quiet_startup: QuietStartup,
    pub enable_install_telemetry: bool,
    pub double_escape_action: String,
    pub tree_filter_mode: String,
    pub warn_anthropic_extra_usage: bool,
    pub thinking_level: ThinkingLevel,
    pub available_thinking_levels: Vec<ThinkingLevel>,
    pub theme: String,
    pub available_themes: Vec<String>,
}

/// One change the user made.
#[derive(Debug, Clone, PartialEq)]
pub enum SettingChange {
    AutoCompact(bool),
    ShowImages(bool),
    ImageWidthCells(u32),
    AutoResizeImages(bool),
    BlockImages(bool),
    EnableSkillCommands(bool),
    ShowHardwareCursor(bool),
    EditorPaddingX(u32),
    AutocompleteMaxVisible(u32),
    ClearOnShrink(bool),
    ShowTerminalProgress(bool),
    /// Also applied to the running agent.
    SteeringMode(String),
    /// Also applied to the running agent.
    FollowUpMode(String),
    Transport(String),
    HideThinkingBlock(bool),
    CollapseChangelog(bool),
    QuietStartup(QuietStartup),
    EnableInstallTelemetry(bool),
    DoubleEscapeAction(String),
    TreeFilterMode(String),
    WarnAnthropicExtraUsage(bool),
    /// Applied to the session (which records it and saves `defaultThinkingLevel`).
    ThinkingLevel(ThinkingLevel),
    /// Install the theme and save it.
    Theme(String),
}

impl SettingChange {
    /// Where pi stores it in `settings.json`: the key, the nested key for grouped settings
    /// (`compaction.enabled`), and the value — ready for `Settings::set_global` or
    /// `Settings::set_global_nested`.
    pub fn settings_entry(&self) -> (&'static str, Option<&'static str>, Value) {
        use SettingChange as C;
        match self {
            C::AutoCompact(b) => ("compaction", Some("enabled"), json!(b)),
            C::ShowImages(b) => ("terminal", Some("showImages"), json!(b)),
            C::ImageWidthCells(n) => ("terminal", Some("imageWidthCells"), json!(n)),
            C::AutoResizeImages(b) => ("images", Some("autoResize"), json!(b)),
            C::BlockImages(b) => ("images", Some("blockImages"), json!(b)),
            C::EnableSkillCommands(b) => ("enableSkillCommands", None, json!(b)),
            C::ShowHardwareCursor(b) => ("showHardwareCursor", None, json!(b)),
            C::EditorPaddingX(n) => ("editorPaddingX", None, json!(n)),
            C::AutocompleteMaxVisible(n) => ("autocompleteMaxVisible", None, json!(n)),
            C::ClearOnShrink(b) => ("terminal", Some("clearOnShrink"), json!(b)),
            C::ShowTerminalProgress(b) => ("terminal", Some("showTerminalProgress"), json!(b)),
            C::SteeringMode(s) => ("steeringMode", None, json!(s)),
            C::FollowUpMode(s) => ("followUpMode", None, json!(s)),
            C::Transport(s) => ("transport", None, json!(s)),
            C::HideThinkingBlock(b) => ("hideThinkingBlock", None, json!(b)),
            C::CollapseChangelog(b) => ("collapseChangelog", None, json!(b)),
            C::QuietStartup(q) => (
                "quietStartup",
                None,
                match q {
                    QuietStartup::Header => json!("header"),
                    q => json!(*q == QuietStartup::On),
                },
            ),
            C::EnableInstallTelemetry(b) => ("enableInstallTelemetry", None, json!(b)),
            C::DoubleEscapeAction(s) => ("doubleEscapeAction", None, json!(s)),
            C::TreeFilterMode(s) => ("treeFilterMode", None, json!(s)),
            C::WarnAnthropicExtraUsage(b) => ("warnings", Some("anthropicExtraUsage"), json!(b)),
            C::ThinkingLevel(l) => ("defaultThinkingLevel", None, json!(l.as_str())),
            C::Theme(s) => ("theme", None, json!(s)),
        }
    }

    /// The change for menu row `id` taking `value`; `None` for an unknown row or value.
    fn from_item(id: &str, value: &str) -> Option<SettingChange> {
        use SettingChange as C;
        let flag = || match value {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        };
        let number = || value.parse::<u32>().ok();
        let text = || Some(value.to_string());
        Some(match id {
            "autocompact" => C::AutoCompact(flag()?),
            "show-images" => C::ShowImages(flag()?),
            "image-width-cells" => C::ImageWidthCells(number()?),
            "auto-resize-images" => C::AutoResizeImages(flag()?),
            "block-images" => C::BlockImages(flag()?),
            "skill-commands" => C::EnableSkillCommands(flag()?),
            "show-hardware-cursor" => C::ShowHardwareCursor(flag()?),
            "editor-padding" => C::EditorPaddingX(number()?),
            "autocomplete-max-visible" => C::AutocompleteMaxVisible(number()?),
            "clear-on-shrink" => C::ClearOnShrink(flag()?),
            "terminal-progress" => C::ShowTerminalProgress(flag()?),
            "steering-mode" => C::SteeringMode(text()?),
            "follow-up-mode" => C::FollowUpMode(text()?),
            "transport" => C::Transport(text()?),
            "hide-thinking" => C::HideThinkingBlock(flag()?),
            "collapse-changelog" => C::CollapseChangelog(flag()?),
            "quiet-startup" => C::QuietStartup(match value {
                "header" => QuietStartup::Header,
                _ if flag()? => QuietStartup::On,
                _ => QuietStartup::Off,
            }),
            "install-telemetry" => C::EnableInstallTelemetry(flag()?),
            "double-escape-action" => C::DoubleEscapeAction(text()?),
            "tree-filter-mode" => C::TreeFilterMode(text()?),
            "anthropic-extra-usage" => C::WarnAnthropicExtraUsage(flag()?),
            "thinking" => C::ThinkingLevel(ThinkingLevel::parse(value)?),
            "theme" => C::Theme(text()?),
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum SettingsOutcome {
    Changed(SettingChange),
    /// Show this theme while the theme list is open (cancelling previews the original again).
    PreviewTheme(String),
    Closed,
}

type Queue = Rc<RefCell<VecDeque<SettingsOutcome>>>;

/// A titled [`SelectList`] shown in place of the menu (thinking level, theme).
struct SelectSubmenu {
    theme: Arc<Theme>,
    title: &'static str,
    description: &'static str,
    list: SelectList,
    /// Where highlighted values go for a live preview (theme only).
    preview: Option<Queue>,
    original: String,
}

impl Component for SelectSubmenu {
    fn render(&mut self, width: usize) -> Vec<String> {
        let t = &self.theme;
        let mut lines = vec![
            t.bold(&t.fg(Token::Accent, self.title)),
            String::new(),
            t.fg(Token::Muted, self.description),
            String::new(),
        ];
        lines.extend(self.list.render(width));
        lines.push(String::new());
        lines.push(t.fg(Token::Dim, "  Enter to select · Esc to go back"));
        fit(lines, width)
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let before = self.list.selected_item().map(|i| i.value.clone());
        let consumed = self.list.handle_input(event);
        let after = self.list.selected_item().map(|i| i.value.clone());
        if let (Some(queue), Some(value)) = (&self.preview, after) {
            if before.as_ref() != Some(&value) {
                queue
                    .borrow_mut()
                    .push_back(SettingsOutcome::PreviewTheme(value));
            }
        }
        consumed
    }
}

impl Submenu for SelectSubmenu {
    fn take_result(&mut self) -> Option<Option<String>> {
        let result = self.list.take_result()?;
        Some(match result {
            SelectResult::Selected(item) => Some(item.value),
            SelectResult::Cancelled => {
                if let Some(queue) = &self.preview {
                    let original = SettingsOutcome::PreviewTheme(self.original.clone());
                    queue.borrow_mut().push_back(original);
                }
                None
            }
        })
    }
}

/// The "Warnings" submenu: its own small settings list whose toggles apply at once.
struct WarningsSubmenu {
    list: SettingsList,
    queue: Queue,
    /// The value the next opening starts from.
    extra_usage: Rc<RefCell<bool>>,
}

impl Component for WarningsSubmenu {
    fn render(&mut self, width: usize) -> Vec<String> {
        self.list.render(width)
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        self.list.handle_input(event)
    }
}

impl Submenu for WarningsSubmenu {
    fn take_result(&mut self) -> Option<Option<String>> {
        let mut closed = false;
        for event in self.list.take_events() {
            match event {
                SettingsEvent::Changed { id, value } => {
                    if let Some(change) = SettingChange::from_item(&id, &value) {
                        if let SettingChange::WarnAnthropicExtraUsage(on) = change {
                            *self.extra_usage.borrow_mut() = on;
                        }
                        let mut q = self.queue.borrow_mut();
                        q.push_back(SettingsOutcome::Changed(change));
                    }
                }
                SettingsEvent::Cancelled => closed = true,
            }
        }
        // The row keeps showing "configure"; nothing to report to the outer list.
        closed.then_some(None)
    }
}

pub struct SettingsSelector {
    theme: Arc<Theme>,
    list: SettingsList,
    queue: Queue,
}

fn bool_item(id: &str, label: &str, value: bool, description: &str) -> SettingItem {
    SettingItem::new(
        id,
        label,
        if value { "true" } else { "false" },
        &["true", "false"],
    )
    .description(description)
}

fn choice_item(
    id: &str,
    label: &str,
    value: &str,
    values: &[&str],
    description: &str,
) -> SettingItem {
    SettingItem::new(id, label, value, values).description(description)
}

fn items(config: &SettingsConfig, theme: &Arc<Theme>, queue: &Queue) -> Vec<SettingItem> {
    let c = config;
    let mut items = vec![bool_item(
        "autocompact",
        "Auto-compact",
        c.auto_compact,
        "Automatically compact context when it gets too large",
    )];
    if let Some(show) = c.show_images {
        items.push(bool_item(
            "show-images",
            "Show images",
            show,
            "Render images inline in terminal",
        ));
        items.push(choice_item(
            "image-width-cells",
            "Image width",
            &c.image_width_cells.to_string(),
            &["60", "80", "120"],
            "Preferred inline image width in terminal cells",
        ));
    }
    items.extend([
        bool_item(
            "auto-resize-images",
            "Auto-resize images",
            c.auto_resize_images,
            "Resize large images to 2000x2000 max for better model compatibility",
        ),
        bool_item("block-images", "Block images", c.block_images, "Prevent images from being sent to LLM providers"),
        bool_item("skill-commands", "Skill commands", c.enable_skill_commands, "Register skills as /skill:name commands"),
        bool_item(
            "show-hardware-cursor",
            "Show hardware cursor",
            c.show_hardware_cursor,
            "Show the terminal cursor while still positioning it for IME support",
        ),
        choice_item(
            "editor-padding",
            "Editor padding",
            &c.editor_padding_x.to_string(),
            &["0", "1", "2", "3"],
            "Horizontal padding for input editor (0-3)",
        ),
        choice_item(
            "autocomplete-max-visible",
            "Autocomplete max items",
            &c.autocomplete_max_visible.to_string(),
            &["3", "5", "7", "10", "15", "20"],
            "Max visible items in autocomplete dropdown (3-20)",
        ),
        bool_item(
            "clear-on-shrink",
            "Clear on shrink",
            c.clear_on_shrink,
            "Clear empty rows when content shrinks (may cause flicker)",
        ),
        bool_item(
            "terminal-progress",
            "Terminal progress",
            c.show_terminal_progress,
            "Show OSC 9;4 progress indicators in the terminal tab bar",
        ),
        choice_item(
            "steering-mode",
            "Steering mode",
            &c.steering_mode,
            &["one-at-a-time", "all"],
            "Enter while streaming queues steering messages. 'one-at-a-time': deliver one, wait for response. 'all': deliver all at once.",
        ),
        choice_item(
            "follow-up-mode",
            "Follow-up mode",
            &c.follow_up_mode,
            &["one-at-a-time", "all"],
            "Alt+Enter queues follow-up messages until agent stops. 'one-at-a-time': deliver one, wait for response. 'all': deliver all at once.",
        ),
        choice_item(
            "transport",
            "Transport",
            &c.transport,
            &["sse", "websocket", "websocket-cached", "auto"],
            "Preferred transport for providers that support multiple transports",
        ),
        bool_item("hide-thinking", "Hide thinking", c.hide_thinking_block, "Hide thinking blocks in assistant responses"),
        bool_item("collapse-changelog", "Collapse changelog", c.collapse_changelog, "Show condensed changelog after updates"),
        choice_item(
            "quiet-startup",
            "Quiet startup",
            c.quiet_startup.as_str(),
            &["true", "header", "false"],
            "Disable verbose printing at startup (header: keep only the startup header)",
        ),
        bool_item(
            "install-telemetry",
            "Install telemetry",
            c.enable_install_telemetry,
            "Send an anonymous version/update ping after changelog-detected updates",
        ),
        choice_item(
            "double-escape-action",
            "Double-escape action",
            &c.double_escape_action,
            &["tree", "fork", "none"],
            "Action when pressing Escape twice with empty editor",
        ),
        choice_item(
            "tree-filter-mode",
            "Tree filter mode",
            &c.tree_filter_mode,
            &["default", "no-tools", "user-only", "labeled-only", "all"],
            "Default filter when opening /tree",
        ),
    ]);
    let (t, q, warn) = (theme.clone(), queue.clone(), c.warn_anthropic_extra_usage);
    let warn = Rc::new(RefCell::new(warn));
    items.push(
        SettingItem::new("warnings", "Warnings", "configure", &[])
            .description("Enable or disable individual warnings")
            .submenu(Box::new(move |_| {
                let item = bool_item(
                    "anthropic-extra-usage",
                    "Anthropic extra usage",
                    *warn.borrow(),
                    "Warn when Anthropic subscription auth may use paid extra usage",
                );
                Box::new(WarningsSubmenu {
                    list: SettingsList::new(vec![item], 1, t.clone()),
                    queue: q.clone(),
                    extra_usage: warn.clone(),
                }) as Box<dyn Submenu>
            })),
    );
    let (t, levels) = (theme.clone(), c.available_thinking_levels.clone());
    items.push(
        SettingItem::new("thinking", "Thinking level", c.thinking_level.as_str(), &[])
            .description("Reasoning depth for thinking-capable models")
            .submenu(Box::new(move |current| {
                Box::new(SelectSubmenu {
                    theme: t.clone(),
                    title: "Thinking Level",
                    description: "Select reasoning depth for thinking-capable models",
                    list: level_list(&levels, current, t.clone()),
                    preview: None,
                    original: current.to_string(),
                }) as Box<dyn Submenu>
            })),
    );
    let (t, q, themes) = (theme.clone(), queue.clone(), c.available_themes.clone());
    items.push(
        SettingItem::new("theme", "Theme", &c.theme, &[])
            .description("Color theme for the interface")
            .submenu(Box::new(move |current| {
                let options = themes.iter().map(SelectItem::new).collect();
                let mut list = SelectList::new(options, themes.len().clamp(1, 10), t.clone())
                    .with_primary_column(12, 32);
                if let Some(i) = themes.iter().position(|x| x == current) {
                    list.set_selected_index(i);
                }
                Box::new(SelectSubmenu {
                    theme: t.clone(),
                    title: "Theme",
                    description: "Select color theme",
                    list,
                    preview: Some(q.clone()),
                    original: current.to_string(),
                }) as Box<dyn Submenu>
            })),
    );
    items
}

impl SettingsSelector {
    pub fn new(config: &SettingsConfig, theme: Arc<Theme>) -> SettingsSelector {
        let queue: Queue = Rc::default();
        let list =
            SettingsList::new(items(config, &theme, &queue), 10, theme.clone()).with_search();
        SettingsSelector { theme, list, queue }
    }

    /// The next change, preview or close, in order.
    pub fn take_outcome(&mut self) -> Option<SettingsOutcome> {
        self.collect();
        self.queue.borrow_mut().pop_front()
    }

    fn collect(&mut self) {
        for event in self.list.take_events() {
            let outcome = match event {
                SettingsEvent::Changed { id, value } => match SettingChange::from_item(&id, &value)
                {
                    Some(change) => SettingsOutcome::Changed(change),
                    None => continue,
                },
                SettingsEvent::Cancelled => SettingsOutcome::Closed,
            };
            self.queue.borrow_mut().push_back(outcome);
        }
    }
}

impl Component for SettingsSelector {
    fn render(&mut self, width: usize) -> Vec<String> {
        let mut lines = vec![border(&self.theme, Token::Border, width)];
        lines.extend(self.list.render(width));
        lines.push(border(&self.theme, Token::Border, width));
        fit(lines, width)
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        // Events of the list and of submenus interleave in the order they happened.
        self.collect();
        let consumed = self.list.handle_input(event);
        self.collect();
        consumed
    }

    fn invalidate(&mut self) {
        self.list.invalidate();
    }
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
