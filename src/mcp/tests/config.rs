use super::*;
use serde_json::json;

fn write(path: &Path, v: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(v).unwrap()).unwrap();
}

struct Dirs {
    _tmp: tempfile::TempDir,
    agent: PathBuf,
    cwd: PathBuf,
}

fn dirs() -> Dirs {
    let tmp = tempfile::tempdir().unwrap();
    let agent = tmp.path().join("agent");
    let cwd = tmp.path().join("proj");
    std::fs::create_dir_all(&cwd).unwrap();
    Dirs {
        _tmp: tmp,
        agent,
        cwd,
    }
}

fn err(name: &str, v: Value) -> String {
    validate(name, &v).unwrap_err()
}

#[test]
fn validation_follows_pi_rules_and_messages() {
    assert_eq!(
        err("bad name", json!({"command": "x"})),
        "invalid server name \"bad name\" (use letters, digits, \"_\" and \"-\")"
    );
    assert_eq!(err("s", json!([])), "server \"s\" must be an object");
    assert_eq!(
        err("s", json!({"url": "https://x/sse", "type": "sse"})),
        "server \"s\": legacy SSE transport is not supported; use the streamable HTTP URL"
    );
    assert_eq!(
        err("s", json!({"type": "stdio", "url": "https://x"})),
        "server \"s\" needs either \"command\" (stdio) or \"url\" (streamable HTTP)"
    );
    assert_eq!(
        err("s", json!({"url": "ftp://x"})),
        "server \"s\": url must be an http or https URL"
    );
    assert_eq!(
        err("s", json!({"command": "x", "timeout": 0})),
        "server \"s\": timeout must be a positive number of seconds"
    );
    assert_eq!(
        err("s", json!({"command": "x", "args": ["a", 1]})),
        "server \"s\": args must be an array of strings"
    );
    assert_eq!(
        err("s", json!({"command": "x", "env": {"A": 1}})),
        "server \"s\": env must map names to strings"
    );
    assert_eq!(
        err("s", json!({"url": "http://x", "headers": {"A": true}})),
        "server \"s\": headers must map names to strings"
    );
    assert_eq!(
        err("s", json!({"command": "x", "exposure": "loud"})),
        "server \"s\": exposure must be one of \"codemode\", \"deferred\", \"direct\", \"hidden\""
    );
    assert_eq!(
        err("s", json!({"command": "x", "toolExposure": {"a_*": "no"}})),
        "server \"s\": toolExposure \"a_*\" must be one of \"codemode\", \"deferred\", \"direct\", \"hidden\""
    );
    assert_eq!(
        err(
            "s",
            json!({"url": "http://example.com", "auth": {"provider": "x"}})
        ),
        "server \"s\": auth requires an https URL, or http on localhost, 127.0.0.1, or [::1]"
    );
    assert_eq!(
        err("s", json!({"url": "https://example.com", "auth": {}})),
        "server \"s\": auth.provider must be a provider name"
    );

    let c = validate(
        "fs-1",
        &json!({"type": "stdio", "command": "npx", "args": ["-y", "pkg"], "env": {"K": "${V}"},
                "cwd": "~/w", "timeout": 2.5, "enabled": false, "description": "Files",
                "exposure": "codemode-deferred", "toolExposure": {"read_*": "direct", "write": "hidden"},
                "futureKey": {"kept": true}}),
    )
    .unwrap();
    assert_eq!(
        c.transport,
        TransportConfig::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "pkg".into()],
            env: vec![("K".into(), "${V}".into())],
            cwd: Some("~/w".into()),
        }
    );
    assert!(!c.enabled);
    assert_eq!(c.timeout(), std::time::Duration::from_millis(2500));
    assert_eq!(c.exposure(), Exposure::Codemode);
    assert_eq!(c.raw["exposure"], json!("codemode"), "aliases are resolved");
    assert_eq!(c.raw["futureKey"], json!({"kept": true}));
    assert_eq!(c.tool_exposure("read_text_file"), Exposure::Direct);
    assert_eq!(c.tool_exposure("write"), Exposure::Hidden);
    assert_eq!(c.tool_exposure("list"), Exposure::Codemode);

    let h = validate(
        "docs",
        &json!({"url": "https://example.com/mcp", "type": "streamable-http", "headers": {"Authorization": "Bearer ${T}"}}),
    )
    .unwrap();
    assert!(h.is_http());
    assert_eq!(h.describe_transport(), "https://example.com/mcp");
    assert_eq!(h.exposure(), Exposure::Codemode, "pi's default exposure");
}

#[test]
fn exact_tool_names_win_over_patterns_and_the_first_pattern_wins() {
    let c = validate(
        "g",
        &json!({"command": "x", "exposure": "deferred",
                "toolExposure": {"get_*": "codemode", "*": "hidden", "get_me": "direct"}}),
    )
    .unwrap();
    assert_eq!(c.tool_exposure("get_me"), Exposure::Direct);
    assert_eq!(c.tool_exposure("get_you"), Exposure::Codemode);
    assert_eq!(c.tool_exposure("other"), Exposure::Hidden);
    assert!(pattern_matches("a*b*c", "axxbyyc"));
    assert!(!pattern_matches("a*b*c", "acb"));
    assert!(pattern_matches("*", ""));
    assert!(!pattern_matches("ab*ba", "aba"));
}

#[test]
fn project_entries_replace_or_override_user_entries() {
    let d = dirs();
    write(
        &global_path(&d.agent),
        &json!({"mcpServers": {
            "internal": {"command": "srv", "env": {"TOKEN": "${SECRET}"}, "exposure": "direct"},
            "docs": {"url": "https://docs.example/mcp"},
            "my_tools": {"command": "t"}
        }, "autoEnableCodemode": true}),
    );
    write(
        &project_path(&d.cwd),
        &json!({"mcpServers": {
            "internal": {"enabled": false},
            "docs": {"command": "local-docs"},
            "ghost": {"enabled": false},
            "bad-override": {"enabled": false, "env": {}},
            "my-tools": {"command": "clash"},
            "remote": {"url": "https://r.example/mcp", "auth": {"provider": "x"}}
        }, "autoEnableCodemode": false}),
    );
    let untrusted = load(&d.agent, &d.cwd, false);
    assert_eq!(untrusted.servers.len(), 3);
    assert!(untrusted.errors.is_empty());
    assert!(untrusted.servers.iter().all(|s| s.scope == Scope::Global));

    let c = load(&d.agent, &d.cwd, true);
    let internal = c.servers.iter().find(|s| s.name == "internal").unwrap();
    assert!(!internal.config.enabled);
    assert_eq!(
        internal.scope,
        Scope::Global,
        "an override keeps the user entry"
    );
    assert_eq!(
        internal.override_path.as_deref(),
        Some(project_path(&d.cwd).as_path())
    );
    assert_eq!(internal.config.exposure(), Exposure::Direct);
    assert!(
        matches!(&internal.config.transport, TransportConfig::Stdio { env, .. } if env[0].1 == "${SECRET}")
    );
    let docs = c.servers.iter().find(|s| s.name == "docs").unwrap();
    assert_eq!(docs.scope, Scope::Project);
    assert_eq!(docs.config.describe_transport(), "local-docs");
    assert_eq!(
        c.auto_enable_codemode,
        Some(false),
        "the project value wins"
    );
    let p = project_path(&d.cwd).display().to_string();
    assert_eq!(
        c.errors,
        [
            format!("{p}: server \"ghost\" needs \"command\" or \"url\", or a global server to override"),
            format!("{p}: server \"bad-override\" needs \"command\" or \"url\", or a global server to override"),
            format!("{p}: server \"my-tools\" conflicts with \"my_tools\""),
            format!("{p}: server \"remote\": auth is only allowed in the global mcp.json"),
        ]
    );
    assert_eq!(
        c.servers.len(),
        3,
        "invalid entries are skipped, the others load"
    );
}

#[test]
fn override_with_extra_keys_is_reported() {
    let d = dirs();
    write(
        &global_path(&d.agent),
        &json!({"mcpServers": {"a": {"command": "x"}}}),
    );
    write(
        &project_path(&d.cwd),
        &json!({"mcpServers": {"a": {"enabled": false, "description": "no"}}}),
    );
    let c = load(&d.agent, &d.cwd, true);
    assert_eq!(
        c.errors,
        [format!(
            "{}: server \"a\": an override can only set enabled, exposure, toolExposure",
            project_path(&d.cwd).display()
        )]
    );
    assert!(c.servers[0].config.enabled);
}

#[test]
fn broken_files_are_reported_and_nothing_is_written() {
    let d = dirs();
    let g = global_path(&d.agent);
    std::fs::create_dir_all(&d.agent).unwrap();
    std::fs::write(&g, "{ not json").unwrap();
    let c = load(&d.agent, &d.cwd, true);
    assert!(c.servers.is_empty());
    assert_eq!(c.errors.len(), 1);
    assert!(
        c.errors[0].starts_with(&format!("{}: ", g.display())),
        "{:?}",
        c.errors
    );
    std::fs::write(&g, "{\"mcpServers\": 3}").unwrap();
    let c = load(&d.agent, &d.cwd, true);
    assert_eq!(
        c.errors,
        [format!(
            "{}: expected an object with an \"mcpServers\" object",
            g.display()
        )]
    );
    std::fs::write(&g, "{\"autoEnableCodemode\": \"yes\"}").unwrap();
    let c = load(&d.agent, &d.cwd, true);
    assert_eq!(
        c.errors,
        [format!(
            "{}: autoEnableCodemode must be a boolean",
            g.display()
        )]
    );
    assert_eq!(
        std::fs::read_to_string(&g).unwrap(),
        "{\"autoEnableCodemode\": \"yes\"}"
    );
    assert!(!project_path(&d.cwd).exists());
}

#[test]
fn config_presence_is_a_stat() {
    let d = dirs();
    assert!(!any_config_exists(&d.agent, &d.cwd, true));
    write(&project_path(&d.cwd), &json!({}));
    assert!(!any_config_exists(&d.agent, &d.cwd, false));
    assert!(any_config_exists(&d.agent, &d.cwd, true));
}

#[test]
fn namespaces_fold_dashes() {
    assert_eq!(namespace("dev-radius"), "mcp__dev_radius");
}
