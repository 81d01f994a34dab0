use super::*;
use crate::agent::tool::ToolSource;
use crate::mcp::manager::McpOptions;
use serde_json::json;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

fn fake(extra: Value) -> Value {
    let mut e = json!({
        "command": "python3",
        "args": [format!("{}/tests/support/mcp_fake_server.py", env!("CARGO_MANIFEST_DIR"))],
    });
    for (k, v) in extra.as_object().unwrap() {
        e[k] = v.clone();
    }
    e
}

fn write(path: &Path, servers: Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, json!({ "mcpServers": servers }).to_string()).unwrap();
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

struct Setup {
    manager: Arc<McpManager>,
    reports: Arc<Mutex<Vec<String>>>,
    dir: tempfile::TempDir,
}

fn start(servers: Value, trusted: bool, registry: Option<Arc<ExtensionServers>>) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("mcp.json"), servers);
    let reports: Arc<Mutex<Vec<String>>> = Default::default();
    let r = Arc::clone(&reports);
    let manager = McpManager::start(McpOptions {
        agent_dir: dir.path().to_path_buf(),
        cwd: dir.path().to_path_buf(),
        project_trusted: trusted,
        tool_filter: None,
        tool_exclude: None,
        reporter: Arc::new(move |m: &str, k: &str| r.lock().unwrap().push(format!("{k}: {m}"))),
        has_ui: true,
        extension_servers: registry,
    });
    Setup {
        manager,
        reports,
        dir,
    }
}

fn settle(m: &McpManager) {
    assert!(m.wait_for(&Abort::new(), Some(Duration::from_secs(20)), |_| true));
}

fn names(m: &McpManager) -> Vec<String> {
    m.tools().iter().map(|t| t.name().to_string()).collect()
}

fn view<'a>(views: &'a [ServerView], name: &str) -> &'a ServerView {
    views.iter().find(|v| v.entry.name == name).unwrap()
}

#[test]
fn reload_keeps_unchanged_servers_and_restarts_changed_ones() {
    let s = start(
        json!({
            "keep": fake(json!({"exposure": "direct"})),
            "drop": fake(json!({"exposure": "direct"})),
            "change": fake(json!({"exposure": "direct"})),
        }),
        false,
        None,
    );
    settle(&s.manager);
    let kept = s.manager.connection("keep").unwrap();
    assert!(names(&s.manager).contains(&"mcp__drop__echo".to_string()));
    write(
        &s.dir.path().join("mcp.json"),
        json!({
            "keep": fake(json!({"exposure": "direct"})),
            "change": fake(json!({"exposure": "direct", "timeout": 30})),
            "new": fake(json!({"exposure": "direct"})),
        }),
    );
    let result = s.manager.reload_config(false);
    assert_eq!(
        result,
        Reloaded {
            added: vec!["new".into()],
            removed: vec!["drop".into()],
            restarted: vec!["change".into()],
        }
    );
    assert!(Arc::ptr_eq(&kept, &s.manager.connection("keep").unwrap()));
    settle(&s.manager);
    let declared = names(&s.manager);
    assert!(declared.contains(&"mcp__new__echo".to_string()));
    assert!(declared.contains(&"mcp__change__echo".to_string()));
    assert!(!declared.iter().any(|n| n.starts_with("mcp__drop")));
    // An invalid entry is reported in the notices; the others stay.
    write(
        &s.dir.path().join("mcp.json"),
        json!({"keep": fake(json!({"exposure": "direct"})), "x": {"url": 1}}),
    );
    s.manager.reload_config(false);
    assert_eq!(s.manager.snapshot().len(), 1);
    assert!(
        s.manager.notices()[0].starts_with("config: "),
        "{:?}",
        s.manager.notices()
    );
    s.manager.shutdown();
}

#[test]
fn enabling_disabling_and_exposure_are_saved_where_the_server_is_defined() {
    let s = start(json!({"a": fake(json!({}))}), true, None);
    settle(&s.manager);
    let global = s.dir.path().join("mcp.json");
    assert_eq!(
        view(&s.manager.snapshot(), "a").state(),
        Some(ConnState::Connected)
    );

    s.manager.set_exposure("a", Exposure::Direct).unwrap();
    assert_eq!(read(&global)["mcpServers"]["a"]["exposure"], "direct");
    assert!(names(&s.manager).contains(&"mcp__a__echo".to_string()));

    s.manager.set_enabled("a", false, false).unwrap();
    assert_eq!(read(&global)["mcpServers"]["a"]["enabled"], false);
    let v = s.manager.snapshot();
    assert!(!view(&v, "a").enabled() && view(&v, "a").status.is_none());
    assert!(!names(&s.manager).iter().any(|n| n.starts_with("mcp__a")));

    s.manager.set_enabled("a", true, false).unwrap();
    assert!(read(&global)["mcpServers"]["a"].get("enabled").is_none());
    settle(&s.manager);
    assert!(names(&s.manager).contains(&"mcp__a__echo".to_string()));

    // In the project: an override, later changes go to it; the global file stays.
    s.manager.set_enabled("a", false, true).unwrap();
    let project = s.dir.path().join(".pi/mcp.json");
    assert_eq!(
        read(&project),
        json!({"mcpServers": {"a": {"enabled": false}}})
    );
    assert!(read(&global)["mcpServers"]["a"].get("enabled").is_none());
    let v = s.manager.snapshot();
    assert_eq!(
        view(&v, "a").entry.override_path.as_deref(),
        Some(project.as_path())
    );
    s.manager.set_exposure("a", Exposure::Hidden).unwrap();
    assert_eq!(read(&project)["mcpServers"]["a"]["exposure"], "hidden");
    // What was saved is what a reload reads: nothing restarts.
    assert_eq!(s.manager.reload_config(true), Reloaded::default());
    assert!(s
        .manager
        .reconnect("a", &Abort::new())
        .unwrap_err()
        .contains("is disabled"));
    s.manager.shutdown();
}

#[test]
fn registered_servers_connect_follow_their_extension_and_yield_to_mcp_json() {
    let registry = ExtensionServers::new();
    registry
        .register("/ext/a.ts", "reg", &fake(json!({"exposure": "direct"})))
        .unwrap();
    registry
        .register("/ext/a.ts", "taken", &fake(json!({})))
        .unwrap();
    let s = start(
        json!({"taken": fake(json!({}))}),
        false,
        Some(Arc::clone(&registry)),
    );
    settle(&s.manager);
    let v = s.manager.snapshot();
    assert_eq!(view(&v, "reg").entry.scope, Scope::Extension);
    assert_eq!(view(&v, "reg").entry.source, PathBuf::from("/ext/a.ts"));
    assert_eq!(view(&v, "taken").entry.scope, Scope::Global);
    assert_eq!(
        s.manager.notices(),
        [format!(
            "overridden: \"taken\" registered by /ext/a.ts is overridden by \"taken\" in {}",
            s.dir.path().join("mcp.json").display()
        )]
    );
    assert!(names(&s.manager).contains(&"mcp__reg__echo".to_string()));

    // Session-only changes: nothing is written for registered servers.
    s.manager.set_enabled("reg", false, false).unwrap();
    assert!(!names(&s.manager).iter().any(|n| n.starts_with("mcp__reg")));
    s.manager.set_enabled("reg", true, false).unwrap();
    assert!(!read(&s.dir.path().join("mcp.json"))["mcpServers"]
        .as_object()
        .unwrap()
        .contains_key("reg"));

    // Registered later: connects at once; unregistered: gone.
    registry
        .register("/ext/b.ts", "late", &fake(json!({"exposure": "direct"})))
        .unwrap();
    settle(&s.manager);
    assert!(names(&s.manager).contains(&"mcp__late__echo".to_string()));
    registry.unregister("/ext/b.ts", "late");
    assert!(!names(&s.manager).iter().any(|n| n.starts_with("mcp__late")));
    assert!(s.manager.snapshot().iter().all(|v| v.entry.name != "late"));
    // A failing registration is reported on its own.
    registry
        .register(
            "/ext/b.ts",
            "broken",
            &json!({"command": "/nonexistent/server"}),
        )
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !s
        .reports
        .lock()
        .unwrap()
        .iter()
        .any(|r| r.contains("broken: failed"))
    {
        assert!(
            std::time::Instant::now() < deadline,
            "{:?}",
            s.reports.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    s.manager.shutdown();
}

#[test]
fn extensions_see_mcp_tools_with_their_annotations() {
    let s = start(
        json!({"a": fake(json!({"exposure": "deferred", "toolExposure": {"echo": "direct", "fail": "hidden"}}))}),
        false,
        None,
    );
    settle(&s.manager);
    let (all, active) = s.manager.tool_infos();
    let all_names: Vec<&str> = all.iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(all_names.contains(&"mcp__a__echo") && all_names.contains(&"mcp__a__big"));
    assert!(
        !all_names.contains(&"mcp__a__fail"),
        "hidden tools are not reported"
    );
    let echo = all.iter().find(|t| t["name"] == "mcp__a__echo").unwrap();
    assert_eq!(
        echo["annotations"],
        json!({"readOnlyHint": true, "openWorldHint": false})
    );
    assert!(active.contains(&"mcp__a__echo".to_string()));
    assert!(active.contains(&"tool_search".to_string()) || s.manager.static_tools().len() == 1);
    assert!(!active.contains(&"mcp__a__big".to_string()));
    s.manager.shutdown();
}

#[test]
fn a_sign_in_made_elsewhere_reconnects_the_server_on_the_next_prompt() {
    use crate::mcp::oauth::signin::{sign_in, SignIn};
    use crate::mcp::oauth::test_server::{authorize, Server};
    use crate::mcp::oauth::Settings;
    use crate::resources::oauth::LoginUi;
    struct Browser;
    impl LoginUi for Browser {
        fn on_auth(&self, url: &str, _: Option<&str>) {
            let location = authorize(url);
            std::thread::spawn(move || {
                let _ = ureq::get(&location).call();
            });
        }
        fn prompt(&self, _: &str, _: Option<&str>) -> Result<String, String> {
            Err("no".into())
        }
        fn progress(&self, _: &str) {}
    }
    let server = Server::start();
    let url = format!("{}/mcp", server.origin);
    let s = start(
        json!({"docs": {"url": url, "exposure": "direct"}}),
        false,
        None,
    );
    settle(&s.manager);
    assert_eq!(
        view(&s.manager.snapshot(), "docs").state(),
        Some(ConnState::NeedsAuth)
    );
    // `pi mcp login` in another process: only the file changes.
    let store = crate::mcp::oauth::store::CredentialStore::new(s.dir.path()).server("docs", &url);
    sign_in(&SignIn {
        server_name: "docs",
        server_url: &url,
        store: &store,
        settings: &Settings::default(),
        challenge: None,
        ui: &Browser,
        abort: &Abort::new(),
    })
    .unwrap();
    s.manager.reconnect_signed_in();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while view(&s.manager.snapshot(), "docs").state() != Some(ConnState::Connected) {
        assert!(
            std::time::Instant::now() < deadline,
            "{:?}",
            s.manager.snapshot()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(names(&s.manager).contains(&"mcp__docs__whoami".to_string()));
    s.manager.shutdown();
}
