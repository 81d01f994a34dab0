use super::super::common::test_support::*;
use super::*;

pub fn config() -> SettingsConfig {
    SettingsConfig {
        auto_compact: true,
        show_images: None,
        image_width_cells: 60,
        auto_resize_images: true,
        block_images: false,
        enable_skill_commands: true,
        show_hardware_cursor: false,
        editor_padding_x: 0,
        autocomplete_max_visible: 5,
        clear_on_shrink: false,
        show_terminal_progress: false,
        steering_mode: "one-at-a-time".into(),
        follow_up_mode: "one-at-a-time".into(),
        transport: "sse".into(),
        hide_thinking_block: false,
        collapse_changelog: false,
        quiet_startup: QuietStartup::Off,
        enable_install_telemetry: true,
        double_escape_action: "tree".into(),
        tree_filter_mode: "default".into(),
        warn_anthropic_extra_usage: true,
        thinking_level: ThinkingLevel::Medium,
        available_thinking_levels: vec![
            ThinkingLevel::Off,
            ThinkingLevel::Medium,
            ThinkingLevel::High,
        ],
        theme: "dark".into(),
        available_themes: vec!["dark".into(), "light".into()],
    }
}

fn drain(s: &mut SettingsSelector) -> Vec<SettingsOutcome> {
    std::iter::from_fn(|| s.take_outcome()).collect()
}

#[test]
fn lists_pi_items_in_order_with_description() {
    let mut s = SettingsSelector::new(&config(), theme());
    let lines = screen(&mut s, 100);
    assert_eq!(lines[1], ">");
    assert!(lines[3].starts_with("→ Auto-compact"), "{lines:?}");
    assert!(lines[3].ends_with("true"));
    assert!(lines[4].starts_with("  Auto-resize images"));
    assert!(lines.contains(&"  Automatically compact context when it gets too large".to_string()));
    assert!(lines.iter().any(|l| l.contains("Type to search")));
    assert_fits(&mut s);
    let mut with_images = config();
    with_images.show_images = Some(false);
    let mut s = SettingsSelector::new(&with_images, theme());
    let lines = screen(&mut s, 100);
    assert!(lines[4].starts_with("  Show images"));
    assert!(lines[5].starts_with("  Image width"));
}

#[test]
fn cycling_values_reports_typed_changes() {
    let mut s = SettingsSelector::new(&config(), theme());
    s.handle_input(&key("enter"));
    assert_eq!(
        drain(&mut s),
        [SettingsOutcome::Changed(SettingChange::AutoCompact(false))]
    );
    type_text(&mut s, "steer");
    s.handle_input(&key("right"));
    let change = SettingChange::SteeringMode("all".into());
    assert_eq!(
        change.settings_entry(),
        ("steeringMode", None, json!("all"))
    );
    assert_eq!(drain(&mut s), [SettingsOutcome::Changed(change)]);
    assert_eq!(
        SettingChange::AutoCompact(false).settings_entry(),
        ("compaction", Some("enabled"), json!(false))
    );
    s.handle_input(&key("escape"));
    assert_eq!(drain(&mut s), [SettingsOutcome::Closed]);
}

#[test]
fn thinking_and_theme_submenus() {
    let mut s = SettingsSelector::new(&config(), theme());
    type_text(&mut s, "thinkinglev");
    s.handle_input(&key("enter"));
    let lines = screen(&mut s, 80);
    assert_eq!(lines[1], "Thinking Level");
    assert!(lines[6].starts_with("→ medium"), "{lines:?}");
    assert_fits(&mut s);
    s.handle_input(&key("down"));
    s.handle_input(&key("enter"));
    assert_eq!(
        drain(&mut s),
        [SettingsOutcome::Changed(SettingChange::ThinkingLevel(
            ThinkingLevel::High
        ))]
    );
    for _ in 0.."thinkinglev".len() {
        s.handle_input(&key("backspace"));
    }
    type_text(&mut s, "theme");
    s.handle_input(&key("enter"));
    s.handle_input(&key("down"));
    assert_eq!(
        drain(&mut s),
        [SettingsOutcome::PreviewTheme("light".into())]
    );
    s.handle_input(&key("escape"));
    assert_eq!(
        drain(&mut s),
        [SettingsOutcome::PreviewTheme("dark".into())]
    );
    s.handle_input(&key("enter"));
    s.handle_input(&key("down"));
    s.handle_input(&key("enter"));
    assert_eq!(
        drain(&mut s),
        [
            SettingsOutcome::PreviewTheme("light".into()),
            SettingsOutcome::Changed(SettingChange::Theme("light".into()))
        ]
    );
    assert!(screen(&mut s, 80)
        .iter()
        .any(|l| l.starts_with("→ Theme") && l.ends_with("light")));
}

#[test]
fn warnings_submenu_applies_toggles() {
    let mut s = SettingsSelector::new(&config(), theme());
    type_text(&mut s, "warnings");
    s.handle_input(&key("enter"));
    assert!(screen(&mut s, 80)[1].starts_with("→ Anthropic extra usage"));
    s.handle_input(&key("enter"));
    s.handle_input(&key("escape"));
    assert_eq!(
        drain(&mut s),
        [SettingsOutcome::Changed(
            SettingChange::WarnAnthropicExtraUsage(false)
        )]
    );
    // Reopening shows the new value.
    s.handle_input(&key("enter"));
    assert!(screen(&mut s, 80)[1].ends_with("false"));
    s.handle_input(&key("escape"));
    assert!(screen(&mut s, 80)[3].starts_with("→ Warnings"));
}
