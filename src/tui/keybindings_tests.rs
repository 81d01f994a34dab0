//! keybindings.json: overrides, migration of old ids, conflicts, malformed files.

use super::*;
use crate::tui::keys::{KeyCode, Mods};
use crate::util::sort;

fn write(dir: &Path, text: &str) {
    std::fs::write(dir.join("keybindings.json"), text).unwrap();
}

#[test]
fn defaults_cover_tui_and_app_actions() {
    let b = Keybindings::defaults();
    assert_eq!(b.keys("tui.editor.cursorLeft"), ["left", "ctrl+b"]);
    assert_eq!(b.keys("app.model.cycleBackward"), ["shift+ctrl+p"]);
    assert_eq!(b.keys("app.session.new"), [] as [String; 0]);
    assert_eq!(b.key_text("tui.editor.cursorLineStart"), "home/ctrl+a");
    assert_eq!(display_keys("home/ctrl+a"), "Home/Ctrl+A");
    let ctrl_p_shift = KeyEvent::new(KeyCode::Char('p'), Mods::CTRL.with(Mods::SHIFT));
    assert!(b.matches(&ctrl_p_shift, "app.model.cycleBackward"));
    assert!(!b.matches(&ctrl_p_shift, "app.model.cycleForward"));
    let ids: Vec<&str> = all_definitions().map(|d| d.id).collect();
    let mut unique = ids.clone();
    sort::sort(&mut unique);
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "duplicate action ids");
    for d in all_definitions() {
        for k in d.default_keys {
            assert!(parse_key_id(k).is_some(), "{} has unparsable key {k}", d.id);
        }
    }
    assert_eq!(hotkeys(&b).len(), ids.len());
    let md = hotkeys_markdown(&b);
    assert!(md.contains("| `Ctrl+K` | Delete to end of line |"), "{md}");
    assert!(
        md.contains("| `Ctrl+P` / `Shift+Ctrl+P` | Cycle models |"),
        "{md}"
    );
}

#[test]
fn user_overrides_replace_defaults_per_id() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        r#"{"tui.editor.cursorUp": ["up", "ctrl+k"], "app.model.select": "ctrl+m",
            "my.extension": "f5"}"#,
    );
    let loaded = load(dir.path());
    assert_eq!(loaded.warnings, Vec::<String>::new());
    assert_eq!(
        loaded.bindings.keys("tui.editor.cursorUp"),
        ["up", "ctrl+k"]
    );
    assert_eq!(loaded.bindings.keys("app.model.select"), ["ctrl+m"]);
    assert_eq!(loaded.bindings.keys("my.extension"), ["f5"]);
    assert_eq!(loaded.bindings.keys("app.clear"), ["ctrl+c"]);
    let k = KeyEvent::new(KeyCode::Char('k'), Mods::CTRL);
    assert!(loaded.bindings.matches(&k, "tui.editor.cursorUp"));
}

#[test]
fn old_ids_are_migrated_and_new_spelling_wins() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        r#"{"selectModel": "ctrl+y", "cursorUp": "ctrl+u", "tui.editor.cursorUp": "ctrl+o",
            "zzz": 1}"#,
    );
    let loaded = load(dir.path());
    assert_eq!(loaded.bindings.keys("app.model.select"), ["ctrl+y"]);
    assert_eq!(loaded.bindings.keys("tui.editor.cursorUp"), ["ctrl+o"]);
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    assert!(migrate_file(&dir.path().join("keybindings.json")).unwrap());
    let text = std::fs::read_to_string(dir.path().join("keybindings.json")).unwrap();
    assert_eq!(
        text,
        "{\n  \"tui.editor.cursorUp\": \"ctrl+o\",\n  \"app.model.select\": \"ctrl+y\",\n  \"zzz\": 1\n}\n"
    );
    assert!(!migrate_file(&dir.path().join("keybindings.json")).unwrap());
}

#[test]
fn conflicts_are_reported() {
    let user = vec![
        ("app.model.select".to_string(), vec!["ctrl+x".to_string()]),
        (
            "app.thinking.toggle".to_string(),
            vec!["ctrl+x".to_string(), "ctrl+x".to_string()],
        ),
        ("unknown.id".to_string(), vec!["ctrl+x".to_string()]),
    ];
    let (b, conflicts) = Keybindings::with_user(&user);
    assert_eq!(b.keys("app.thinking.toggle"), ["ctrl+x"]);
    assert_eq!(
        conflicts,
        vec![Conflict {
            key: "ctrl+x".into(),
            ids: vec!["app.model.select".into(), "app.thinking.toggle".into()],
        }]
    );
}

#[test]
fn malformed_or_missing_files_fall_back_to_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = load(dir.path());
    assert!(loaded.warnings.is_empty());
    assert_eq!(loaded.bindings.keys("app.exit"), ["ctrl+d"]);

    write(dir.path(), "{ not json");
    let loaded = load(dir.path());
    assert_eq!(loaded.warnings.len(), 1);
    assert!(
        loaded.warnings[0].contains("keybindings.json"),
        "{:?}",
        loaded.warnings
    );
    assert_eq!(loaded.bindings.keys("app.exit"), ["ctrl+d"]);
    assert!(!migrate_file(&dir.path().join("keybindings.json")).unwrap());

    write(dir.path(), "[1, 2]");
    let loaded = load(dir.path());
    assert_eq!(loaded.warnings.len(), 1);

    write(
        dir.path(),
        r#"{"app.exit": ["ctrl+q", 3], "app.clear": "hyper+q"}"#,
    );
    let loaded = load(dir.path());
    assert_eq!(loaded.warnings.len(), 2, "{:?}", loaded.warnings);
    assert_eq!(loaded.bindings.keys("app.exit"), ["ctrl+d"]);
}

#[test]
fn the_1x_actions_have_pi_1x_ids_and_defaults() {
    let (b, _) = Keybindings::with_user(&[]);
    for (id, keys) in [
        ("tui.input.newLine", &["shift+enter", "ctrl+j"][..]),
        ("tui.editor.pageUp", &["pageUp", "ctrl+pageUp"]),
        ("tui.editor.historyPrevious", &[]),
        ("tui.altScreen.search", &["ctrl+shift+f"]),
        ("tui.altScreen.searchNext", &["enter", "ctrl+g"]),
        (
            "tui.altScreen.searchPrevious",
            &["shift+enter", "ctrl+shift+g"],
        ),
        ("tui.altScreen.top", &["ctrl+home"]),
        ("tui.altScreen.bottom", &["ctrl+end"]),
        (
            "tui.altScreen.previousPrompt",
            &["ctrl+shift+up", "ctrl+up"],
        ),
        ("tui.altScreen.halfPageDown", &[]),
        ("app.message.copy", &["ctrl+x"]),
        ("app.thinking.save", &["ctrl+s"]),
    ] {
        assert_eq!(b.keys(id), keys, "{id}");
    }
    // Home and End stay the editor's.
    assert_eq!(b.keys("tui.editor.cursorLineStart"), ["home", "ctrl+a"]);
    let user = vec![("tui.altScreen.pageUp".to_string(), Vec::new())];
    let (b, _) = Keybindings::with_user(&user);
    assert!(b.keys("tui.altScreen.pageUp").is_empty());
}

#[test]
fn hotkeys_list_the_copy_key_as_1x_does() {
    let (b, _) = Keybindings::with_user(&[]);
    let text = hotkeys_markdown(&b);
    assert!(
        text.contains("| `Ctrl+X` | Copy selection or last assistant message |"),
        "{text}"
    );
}
