use super::*;

struct Dirs {
    _tmp: tempfile::TempDir,
    agent: PathBuf,
    cwd: PathBuf,
}

fn dirs() -> Dirs {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let (agent, cwd) = (root.join("agent"), root.join("proj/sub"));
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();
    Dirs {
        _tmp: tmp,
        agent,
        cwd,
    }
}

fn protect(d: &Dirs) {
    std::fs::create_dir_all(d.cwd.join(".pi/extensions")).unwrap();
}

fn save(d: &Dirs, dir: &Path, trusted: bool) {
    TrustStore::load(&d.agent).record(dir, trusted).unwrap();
}

fn decide(d: &Dirs, inputs: TrustInputs) -> (bool, TrustSource) {
    let r = resolve(&d.agent, &d.cwd, inputs);
    (r.scope.trusted, r.source)
}

#[test]
fn what_needs_a_decision() {
    let d = dirs();
    let home = d.cwd.parent().unwrap().to_path_buf();
    assert!(!has_protected_resources(&d.cwd, None));
    // A bare `.pi`, or one with only unprotected content, needs none.
    std::fs::create_dir_all(d.cwd.join(".pi/sessions")).unwrap();
    assert!(!has_protected_resources(&d.cwd, None));
    // `.agents/skills` of an ancestor counts, unless that ancestor is $HOME.
    std::fs::create_dir_all(home.join(".agents/skills")).unwrap();
    assert!(has_protected_resources(&d.cwd, None));
    assert!(!has_protected_resources(&d.cwd, Some(&home)));
    for entry in PROTECTED_PI_ENTRIES {
        let d = dirs();
        let p = d.cwd.join(".pi").join(entry);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, "{}").unwrap();
        assert!(has_protected_resources(&d.cwd, None), "{entry}");
    }
}

#[test]
fn a_folder_with_nothing_to_protect_is_trusted_unless_saved_otherwise() {
    let d = dirs();
    assert_eq!(
        decide(&d, TrustInputs::default()),
        (true, TrustSource::NothingProtected)
    );
    save(&d, &d.cwd, false);
    assert_eq!(
        decide(&d, TrustInputs::default()),
        (false, TrustSource::NothingProtected)
    );
}

#[test]
fn decision_order() {
    let d = dirs();
    protect(&d);
    let yes = |_: &Path| {
        Some(ExtensionTrust {
            trusted: true,
            remember: false,
        })
    };
    let nobody = |_: &Path| None;
    // Nothing decided: `ask` (the default) leaves it to the prompt, untrusted meanwhile.
    let r = resolve(&d.agent, &d.cwd, TrustInputs::default());
    assert!(!r.scope.trusted && !r.scope.decided && r.needs_prompt());
    for (default, trusted) in [(DefaultTrust::Always, true), (DefaultTrust::Never, false)] {
        let inputs = TrustInputs {
            default,
            ..Default::default()
        };
        assert_eq!(decide(&d, inputs), (trusted, TrustSource::Setting));
    }
    // The closest saved decision beats the setting; an answering extension beats both.
    save(&d, d.cwd.parent().unwrap(), false);
    let always = TrustInputs {
        default: DefaultTrust::Always,
        extension: Some(&nobody),
        ..Default::default()
    };
    assert_eq!(decide(&d, always), (false, TrustSource::Saved));
    save(&d, &d.cwd, true);
    assert_eq!(decide(&d, always), (true, TrustSource::Saved));
    save(&d, &d.cwd, false);
    let ext = TrustInputs {
        extension: Some(&yes),
        ..always
    };
    assert_eq!(decide(&d, ext), (true, TrustSource::Extension));
    // The command line beats everything, and is never saved.
    let cli = TrustInputs {
        cli_override: Some(true),
        ..ext
    };
    let before = std::fs::read(d.agent.join("trust.json")).unwrap();
    assert_eq!(decide(&d, cli), (true, TrustSource::CommandLine));
    let no = TrustInputs {
        cli_override: Some(false),
        ..ext
    };
    assert_eq!(decide(&d, no), (false, TrustSource::CommandLine));
    assert_eq!(std::fs::read(d.agent.join("trust.json")).unwrap(), before);
}

#[test]
fn an_extension_may_ask_to_remember_its_answer() {
    let d = dirs();
    protect(&d);
    let remember = |_: &Path| {
        Some(ExtensionTrust {
            trusted: true,
            remember: true,
        })
    };
    let inputs = TrustInputs {
        extension: Some(&remember),
        ..Default::default()
    };
    assert_eq!(decide(&d, inputs), (true, TrustSource::Extension));
    assert_eq!(TrustStore::load(&d.agent).decision(&d.cwd), Some(true));
    assert_eq!(
        decide(&d, TrustInputs::default()),
        (true, TrustSource::Saved)
    );
}

#[test]
fn default_trust_is_read_from_the_global_settings() {
    let m = |v: Value| v.as_object().cloned().unwrap();
    assert_eq!(
        DefaultTrust::from_global(&m(serde_json::json!({"defaultProjectTrust": "always"}))),
        DefaultTrust::Always
    );
    assert_eq!(
        DefaultTrust::from_global(&m(serde_json::json!({"defaultProjectTrust": "never"}))),
        DefaultTrust::Never
    );
    assert_eq!(
        DefaultTrust::from_global(&m(serde_json::json!({"defaultProjectTrust": 3}))),
        DefaultTrust::Ask
    );
}

#[cfg(unix)]
#[test]
fn a_symlinked_trust_json_stays_a_link_with_the_decision_in_its_target() {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    let dotfiles = dir.path().join("dotfiles");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(&dotfiles).unwrap();
    let real = dotfiles.join("trust.json");
    std::fs::write(&real, r#"{"/old": false, "note": "kept"}"#).unwrap();
    let link = agent.join("trust.json");
    std::os::unix::fs::symlink("../dotfiles/trust.json", &link).unwrap();
    let mut store = TrustStore::load(&agent);
    store.record(Path::new("/proj"), true).unwrap();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
    assert_eq!(
        written,
        serde_json::json!({"/old": false, "note": "kept", "/proj": true})
    );
    assert_eq!(
        TrustStore::load(&agent).decision(Path::new("/proj/sub")),
        Some(true)
    );
}
