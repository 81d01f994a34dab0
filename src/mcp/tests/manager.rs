use super::*;
use serde_json::json;

fn fake_server() -> String {
    format!(
        "{}/tests/support/mcp_fake_server.py",
        env!("CARGO_MANIFEST_DIR")
    )
}

type Started = (Arc<McpManager>, Arc<Mutex<Vec<String>>>, tempfile::TempDir);

fn manager(servers: serde_json::Value, filter: Option<Vec<String>>) -> Started {
    manager_excluding(servers, filter, None)
}

fn manager_excluding(
    servers: serde_json::Value,
    filter: Option<Vec<String>>,
    exclude: Option<Vec<String>>,
) -> Started {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mcp.json"),
        json!({ "mcpServers": servers }).to_string(),
    )
    .unwrap();
    let reports: Arc<Mutex<Vec<String>>> = Default::default();
    let r = Arc::clone(&reports);
    let m = McpManager::start(McpOptions {
        agent_dir: dir.path().to_path_buf(),
        cwd: dir.path().to_path_buf(),
        project_trusted: false,
        tool_filter: filter,
        tool_exclude: exclude,
        reporter: Arc::new(move |msg: &str, kind: &str| {
            r.lock().unwrap().push(format!("{kind}: {msg}"))
        }),
        has_ui: true,
        extension_servers: None,
    });
    (m, reports, dir)
}

fn fake(extra: serde_json::Value) -> serde_json::Value {
    let mut e = json!({"command": "python3", "args": [fake_server()]});
    for (k, v) in extra.as_object().unwrap() {
        e[k] = v.clone();
    }
    e
}

fn names(tools: &[Arc<dyn Tool>]) -> Vec<String> {
    tools.iter().map(|t| t.name().to_string()).collect()
}

#[test]
fn nothing_configured_costs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let m = McpManager::start(McpOptions {
        agent_dir: dir.path().into(),
        cwd: dir.path().into(),
        project_trusted: true,
        tool_filter: None,
        tool_exclude: None,
        reporter: Arc::new(|_: &str, _: &str| {}),
        has_ui: false,
        extension_servers: None,
    });
    assert!(m.snapshot().is_empty());
    assert!(m.tools().is_empty() && m.static_tools().is_empty());
    assert_eq!(m.servers_section(), None);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing was written"
    );
    m.wait_for_direct_servers(&Abort::new());
    m.shutdown();
}

#[test]
fn exposures_decide_what_is_declared() {
    let (m, reports, _dir) = manager(
        json!({
            "a": fake(json!({"exposure": "direct", "toolExposure": {"fail": "hidden", "big": "deferred"}})),
            "b": fake(json!({"exposure": "hidden", "toolExposure": {"echo": "direct"}})),
            "off": fake(json!({"enabled": false, "exposure": "direct"})),
        }),
        None,
    );
    assert_eq!(
        names(&m.static_tools()),
        ["tool_search"],
        "a has a deferred tool"
    );
    m.wait_for_direct_servers(&Abort::new());
    let declared = names(&m.tools());
    assert!(declared.contains(&"mcp__a__echo".into()));
    assert!(!declared.contains(&"mcp__a__fail".into()), "hidden");
    assert!(
        !declared.contains(&"mcp__a__big".into()),
        "deferred until loaded"
    );
    assert!(declared.contains(&"mcp__b__echo".into()));
    assert!(!declared.contains(&"mcp__b__image".into()));
    assert!(!declared.iter().any(|n| n.starts_with("mcp__off")));
    assert!(
        declared.contains(&"read_mcp_resource".into()),
        "a is direct and has resources"
    );

    let search = SearchView(Arc::downgrade(&m));
    let candidates: Vec<String> = search
        .candidates(&Abort::new())
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(candidates, ["mcp__a__big"]);
    search.load(&["mcp__a__big".into()]);
    assert!(names(&m.tools()).contains(&"mcp__a__big".into()));
    assert!(search.candidates(&Abort::new()).is_empty());
    assert!(
        reports.lock().unwrap().is_empty(),
        "{:?}",
        reports.lock().unwrap()
    );
    m.shutdown();
}

#[test]
fn a_tools_filter_keeps_only_matching_mcp_tools() {
    let (m, _, _dir) = manager(
        json!({"a": fake(json!({"exposure": "direct"}))}),
        Some(vec!["read".into(), "mcp__a__e*".into()]),
    );
    m.wait_for_direct_servers(&Abort::new());
    assert_eq!(names(&m.tools()), ["mcp__a__echo"]);
    m.shutdown();
}

#[test]
fn the_section_lists_servers_reached_through_tool_search() {
    let (m, reports, _dir) = manager(json!({"fake-one": fake(json!({}))}), None);
    assert_eq!(
        m.servers_section().unwrap(),
        "<mcp_servers>\nMCP servers whose tools are not declared to you. Load the tools of `tool_search` servers with `tool_search`.\n- mcp__fake_one (tool_search)\n</mcp_servers>"
    );
    assert!(m.wait_for(&Abort::new(), Some(Duration::from_secs(20)), |_| true));
    assert!(
        m.servers_section()
            .unwrap()
            .contains("- mcp__fake_one (tool_search): Fake tools for pi's tests."),
        "the instructions' first line once connected"
    );
    assert_eq!(
        *reports.lock().unwrap(),
        ["info: MCP: the codemode tools of fake-one are callable from codemode scripts when the codemode tool is on (--tools +codemode), and are also reached through tool_search (as with \"exposure\": \"deferred\")."]
    );
    m.shutdown();
}

#[test]
fn states_read_like_pi() {
    assert_eq!(describe_state(false, None), "disabled");
    assert_eq!(describe_state(true, None), "starting");
    let mut s = Status {
        state: ConnState::Connected,
        error: None,
        tools: vec![json!({"name": "a"})],
        has_resources: true,
        instructions: None,
    };
    assert_eq!(
        describe_state(true, Some(&s)),
        "connected · 1 tool · resources"
    );
    s.state = ConnState::Failed;
    s.error = Some("boom\nstack".into());
    assert_eq!(describe_state(true, Some(&s)), "failed: boom");
    assert!(
        is_mcp_tool_name("read_mcp_resource")
            && is_mcp_tool_name("mcp__x__y")
            && !is_mcp_tool_name("read")
    );
}

#[test]
fn exclude_tools_removes_mcp_tools_and_tool_search() {
    let (m, _, _dir) = manager_excluding(
        json!({"a": fake(json!({"exposure": "direct", "toolExposure": {"big": "deferred"}}))}),
        None,
        Some(vec![
            "mcp__a__e*".into(),
            "*resource*".into(),
            "tool_search".into(),
        ]),
    );
    assert!(m.static_tools().is_empty(), "tool_search is excluded");
    m.wait_for_direct_servers(&Abort::new());
    let declared = names(&m.tools());
    assert!(declared.contains(&"mcp__a__image".into()));
    assert!(!declared.contains(&"mcp__a__echo".into()));
    assert!(
        !declared.iter().any(|n| n.contains("resource")),
        "{declared:?}"
    );
    m.shutdown();
}
