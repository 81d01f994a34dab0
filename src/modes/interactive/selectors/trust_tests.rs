use super::super::common::test_support::*;
use super::*;

#[test]
fn the_start_up_prompt_asks_with_pi_s_words_and_five_answers() {
    let mut s = TrustSelector::prompt(Path::new("/work/proj"), theme());
    let lines = screen(&mut s, 100);
    assert_eq!(
        lines[..16],
        [
            "─".repeat(100).as_str(),
            "",
            " Trust project folder?",
            " /work/proj",
            "",
            " This allows pi to load .pi settings and resources, install missing project packages, and execute",
            " project extensions.",
            "",
            " → Trust",
            "   Trust parent folder (/work)",
            "   Trust (this session only)",
            "   Do not trust",
            "   Do not trust (this session only)",
            "",
            " ↑↓ navigate  enter select  escape/ctrl+c cancel",
            "",
        ]
    );
    assert_fits(&mut s);
    s.handle_input(&key("down"));
    s.handle_input(&key("down"));
    s.handle_input(&key("enter"));
    assert_eq!(
        s.take_outcome(),
        Some(TrustOutcome::Chosen(TrustChoice {
            trusted: true,
            updates: Vec::new()
        }))
    );
    s.handle_input(&key("escape"));
    assert_eq!(s.take_outcome(), Some(TrustOutcome::Cancelled));
}

#[test]
fn trust_command_shows_the_saved_decision_ticked_and_preselected() {
    let saved = Some((PathBuf::from("/work"), true));
    let mut s = TrustSelector::manage(Path::new("/work/proj"), saved, false, theme());
    let lines = screen(&mut s, 80);
    let text = lines.join("\n");
    for part in [
        " Project trust\n /work/proj\n",
        " Saved decision: trusted (inherited from /work)\n Current session: untrusted\n",
        "   Trust\n → ✓ Trust parent folder (/work)\n     Do not trust\n",
        " ↑↓ navigate  enter save  escape/ctrl+c cancel",
    ] {
        assert!(text.contains(part), "{part:?} in\n{text}");
    }
    assert!(!text.contains("session only"), "{text}");
    s.handle_input(&key("down"));
    s.handle_input(&key("enter"));
    assert_eq!(
        s.take_outcome(),
        Some(TrustOutcome::Chosen(TrustChoice {
            trusted: false,
            updates: vec![(PathBuf::from("/work/proj"), Some(false))]
        }))
    );
    let none = screen(
        &mut TrustSelector::manage(Path::new("/p"), None, true, theme()),
        80,
    )
    .join("\n");
    assert!(
        none.contains("Saved decision: none\n Current session: trusted"),
        "{none}"
    );
}

#[test]
fn saving_the_parent_folder_drops_the_folder_s_own_entry_and_keeps_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trust.json");
    std::fs::write(&path, r#"{"/work/proj": false, "/elsewhere": true}"#).unwrap();
    let parent = trust_options(Path::new("/work/proj"), false).remove(1);
    assert_eq!(parent.label, "Trust parent folder (/work)");
    save(dir.path(), &parent.choice).unwrap();
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        saved,
        serde_json::json!({"/work": true, "/elsewhere": true})
    );
    let store = TrustStore::load(dir.path());
    assert_eq!(
        saved_decision(&store, Path::new("/work/proj")),
        Some((PathBuf::from("/work"), true))
    );
    // A session-only answer writes nothing.
    let before = std::fs::read_to_string(&path).unwrap();
    save(
        dir.path(),
        &TrustChoice {
            trusted: true,
            updates: Vec::new(),
        },
    )
    .unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
}
