//! `/settings`: the menu starts from the session's and settings.json's current values; every
//! change is applied at once (thinking level, queue modes, auto-compaction, theme, hidden
//! thinking blocks, editor padding …) and written to the global settings.json, as pi does.
//! The theme list previews the highlighted theme; closing the menu shows the saved one again.

use super::app::App;
use super::header::QuietStartup;
use super::overlays::OverlayKind;
use super::selectors::settings::{
    SettingChange, SettingsConfig, SettingsOutcome, SettingsSelector,
};
use crate::agent::QueueMode;
use crate::harness::model_control::SavedDefault;
use crate::harness::AgentSession;
use crate::resources::model_resolve::supported_thinking_levels;
use crate::tui::terminal::Terminal;
use crate::tui::theme::{self, ColorMode};
use crate::tui::Component;
use crate::util::sort;

/// The built-in themes, then `*.json` themes of the agent's and the project's `themes/`.
fn available_themes(dirs: &[std::path::PathBuf]) -> Vec<String> {
    let mut names = vec![theme::SYSTEM.to_string(), "dark".into(), "light".into()];
    for dir in dirs {
        let Ok(read) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut found: Vec<String> = read
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.strip_suffix(".json").map(str::to_string)
            })
            .filter(|n| !names.contains(n))
            .collect();
        sort::sort(&mut found);
        names.extend(found);
    }
    names
}

fn config(
    s: &AgentSession,
    theme: &str,
    themes: Vec<String>,
    hide_thinking: bool,
) -> SettingsConfig {
    let st = &s.settings;
    let flag = |keys: &[&str], default: bool| st.bool(keys).unwrap_or(default);
    let number = |keys: &[&str], default: u32| {
        st.u64(keys)
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(default)
    };
    let text = |key: &str, default: &str| st.str(&[key]).unwrap_or(default).to_string();
    let mode = |m: QueueMode| match m {
        QueueMode::All => "all".to_string(),
        QueueMode::OneAtATime => "one-at-a-time".to_string(),
    };
    let agent = s.agent();
    SettingsConfig {
        auto_compact: s.compaction.enabled,
        // This build does not draw inline images, so the image rows stay hidden.
        show_images: None,
        image_width_cells: number(&["terminal", "imageWidthCells"], 60),
        auto_resize_images: flag(&["images", "autoResize"], true),
        block_images: flag(&["images", "blockImages"], false),
        enable_skill_commands: flag(&["enableSkillCommands"], true),
        show_hardware_cursor: flag(&["showHardwareCursor"], false),
        editor_padding_x: number(&["editorPaddingX"], 0),
        autocomplete_max_visible: number(&["autocompleteMaxVisible"], 5),
        clear_on_shrink: flag(&["terminal", "clearOnShrink"], false),
        show_terminal_progress: flag(&["terminal", "showTerminalProgress"], false),
        steering_mode: mode(agent.steering.mode()),
        follow_up_mode: mode(agent.follow_up.mode()),
        transport: text("transport", "sse"),
        hide_thinking_block: hide_thinking,
        collapse_changelog: flag(&["collapseChangelog"], false),
        quiet_startup: QuietStartup::from_setting(s.settings.merged.get("quietStartup")),
        enable_install_telemetry: flag(&["enableInstallTelemetry"], true),
        double_escape_action: text("doubleEscapeAction", "tree"),
        tree_filter_mode: text("treeFilterMode", "default"),
        warn_anthropic_extra_usage: flag(&["warnings", "anthropicExtraUsage"], true),
        thinking_level: agent.thinking,
        available_thinking_levels: supported_thinking_levels(&agent.model),
        theme: theme.to_string(),
        available_themes: themes,
    }
}

impl<T: Terminal> App<T> {
    pub(super) fn open_settings(&mut self) -> Result<(), String> {
        let dirs = [
            self.env.agent_dir.join("themes"),
            self.env.cwd.join(".pi").join("themes"),
        ];
        let theme_name = self
            .env
            .theme
            .clone()
            .unwrap_or_else(|| theme::SYSTEM.into());
        let (themes, hide_thinking) = (available_themes(&dirs), self.view.hide_thinking);
        let config = self.idle_session(move |s| config(s, &theme_name, themes, hide_thinking))?;
        let selector = SettingsSelector::new(&config, theme::current());
        self.show_dialog(selector, OverlayKind::Settings);
        Ok(())
    }

    pub(super) fn apply_settings_outcome(
        &mut self,
        outcome: SettingsOutcome,
    ) -> Result<(), String> {
        match outcome {
            SettingsOutcome::Changed(change) => self.apply_setting(change),
            SettingsOutcome::PreviewTheme(name) => {
                self.install_theme(&name)?;
                Ok(())
            }
            SettingsOutcome::Closed => {
                // Whatever was previewed last, the saved theme is what stays.
                if let Err(e) = super::env::load_theme(&self.env) {
                    self.view.error(&e);
                }
                self.restyle();
                Ok(())
            }
        }
    }

    fn apply_setting(&mut self, change: SettingChange) -> Result<(), String> {
        // Changes the session itself records and remembers.
        match &change {
            SettingChange::ThinkingLevel(level) => {
                // The menu's entry is the start-up default: applied and saved.
                let level = *level;
                self.idle_session(move |s| {
                    s.set_thinking_level(level);
                    s.save_default(&SavedDefault::Thinking(level));
                })?;
                self.refresh_footer();
                return Ok(());
            }
            SettingChange::SteeringMode(m) | SettingChange::FollowUpMode(m) => {
                let steering = matches!(change, SettingChange::SteeringMode(_));
                let mode = QueueMode::parse(m).ok_or_else(|| format!("Unknown mode {m}"))?;
                self.idle_session(move |s| s.set_queue_mode(steering, mode))?;
                return Ok(());
            }
            SettingChange::AutoCompact(on) => {
                let on = *on;
                self.idle_session(move |s| s.set_auto_compaction(on))?;
                self.refresh_footer();
                return Ok(());
            }
            _ => {}
        }
        let entry = change.clone();
        self.idle_session(move |s| {
            let (key, nested, value) = entry.settings_entry();
            match nested {
                Some(inner) => s.settings.set_global_nested(key, inner, value),
                None => s.settings.set_global(key, value),
            }
        })??;
        match change {
            SettingChange::Theme(name) => {
                self.env.theme = Some(name.clone());
                self.install_theme(&name)?;
            }
            SettingChange::HideThinkingBlock(hidden) => {
                self.view.hide_thinking = hidden;
                self.env.hide_thinking = hidden;
                for item in &mut self.view.chat {
                    item.set_hide_thinking(hidden);
                }
            }
            SettingChange::QuietStartup(quiet) => self.env.quiet_startup = quiet,
            SettingChange::EditorPaddingX(n) => self.view.editor.set_padding_x(n as usize),
            SettingChange::AutocompleteMaxVisible(n) => {
                self.view.editor.set_autocomplete_max_visible(n as usize)
            }
            _ => {}
        }
        Ok(())
    }

    /// Shows theme `name` (built-in or from a `themes/` folder) everywhere.
    fn install_theme(&mut self, name: &str) -> Result<(), String> {
        let global = self.env.agent_dir.join("themes");
        let project = self.env.cwd.join(".pi").join("themes");
        let loaded = theme::load_named(name, &[&global, &project], ColorMode::detect())
            .map_err(|e| format!("Failed to load theme \"{name}\": {e}"))?;
        theme::install(loaded);
        self.restyle();
        Ok(())
    }

    /// Redraws everything in the current theme.
    pub(super) fn restyle(&mut self) {
        self.apply_editor_style();
        self.view.invalidate();
        self.tui.invalidate_overlays();
        self.tui.request_full_render();
    }
}
