use serde_json::{json, Value};

use super::*;
use crate::agent::{ToolContext, ToolOutput};

fn env() -> SessionEnv {
    SessionEnv::default()
}

/// An extension tool stand-in: only its name matters here.
struct Named(&'static str);

impl Tool for Named {
    fn name(&self) -> &str {
        self.0
    }
    fn description(&self) -> &str {
        ""
    }
    fn parameters(&self) -> Value {
        json!({})
    }
    fn prompt_snippet(&self) -> &str {
        ""
    }
    fn execute(&self, _: &str, _: Value, _: &ToolContext) -> Result<ToolOutput, String> {
        Err("not run".into())
    }
}

fn names(tools: &[Arc<dyn Tool>]) -> Vec<String> {
    tools.iter().map(|t| t.name().to_string()).collect()
}

fn list(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// Settings read from a global and a project file.
fn settings(global: Value, project: Value) -> Settings {
    let dir = tempfile::tempdir().unwrap();
    let (agent, cwd) = (dir.path().join("agent"), dir.path().join("proj"));
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(cwd.join(".pi")).unwrap();
    std::fs::write(agent.join("settings.json"), global.to_string()).unwrap();
    std::fs::write(cwd.join(".pi/settings.json"), project.to_string()).unwrap();
    Settings::load(&agent, &cwd)
}

/// Active and registered tool names for these flags, with extension tools `ask` and `plan`.
fn plan(choice: ToolChoice, exclude: Option<&[&str]>, s: &Settings) -> (Vec<String>, Vec<String>) {
    let exclude = exclude.map(list);
    let ext: Vec<Arc<dyn Tool>> = vec![Arc::new(Named("ask")), Arc::new(Named("plan"))];
    let (active, registry) =
        ToolPlan::new(&choice, exclude.as_deref(), s).assemble(all_builtins(s, &env()), ext);
    (names(&active), names(&registry))
}

fn allow(items: &[&str]) -> ToolChoice {
    ToolChoice {
        allow: Some(list(items)),
        ..Default::default()
    }
}

#[test]
fn defaults_and_plain_allowlists() {
    let s = Settings::default();
    assert_eq!(
        names(&select(&ToolChoice::default(), &s, &env())),
        DEFAULT_TOOLS
    );
    let (active, registry) = plan(ToolChoice::default(), None, &s);
    assert_eq!(active, ["read", "bash", "edit", "write", "ask", "plan"]);
    // The seven built-ins, the opt-in `codemode`, and two extension tools.
    assert_eq!(registry.len(), 10);
    // Names in the order given, unknown ones ignored; an allowlist also filters extension tools.
    let (active, registry) = plan(allow(&["grep", "nope", "ls", "grep", "ask"]), None, &s);
    assert_eq!(active, ["grep", "ls", "ask"]);
    assert_eq!(registry, ["grep", "ls", "ask"]);
}

#[test]
fn patterns_select_and_exclude() {
    let s = Settings::default();
    let (active, _) = plan(allow(&["r*", "*s"]), None, &s);
    assert_eq!(active, ["read", "ls"]);
    let (active, registry) = plan(ToolChoice::default(), Some(&["b*", "write", "*an"]), &s);
    assert_eq!(active, ["read", "edit", "ask"]);
    assert!(!registry
        .iter()
        .any(|n| n == "bash" || n == "plan" || n == "write"));
    assert!(wildcard_match("mcp__radius__*", "mcp__radius__search"));
    assert!(!wildcard_match("mcp__radius__*", "mcp__other__search"));
    assert!(wildcard_match("*", ""));
    assert!(wildcard_match("a*b*c", "abbc"));
    assert!(!wildcard_match("a*bc", "abc_"));
    assert!(!wildcard_match("ab*b", "ab"));
}

#[test]
fn plus_minus_lists_edit_the_default_set() {
    let s = Settings::default();
    let (active, _) = plan(allow(&["+grep", "-write"]), None, &s);
    assert_eq!(active, ["read", "bash", "edit", "grep", "ask", "plan"]);
    // With --no-tools, the edited (empty) default set is also the allowlist.
    let choice = ToolChoice {
        no_tools: true,
        ..allow(&["+ls"])
    };
    assert_eq!(plan(choice, None, &s), (list(&["ls"]), list(&["ls"])));
    assert_eq!(
        tool_list_error(&list(&["read", "+grep"])).as_deref(),
        Some("tool names cannot be mixed with +name or -name entries")
    );
    assert_eq!(
        tool_list_error(&list(&["+mcp__*"])).as_deref(),
        Some("+name and -name entries take exact tool names, not patterns: +mcp__*")
    );
    assert_eq!(tool_list_error(&list(&["read", "g*"])), None);
}

#[test]
fn no_tools_and_no_builtin_tools() {
    let s = Settings::default();
    let none = ToolChoice {
        no_tools: true,
        ..Default::default()
    };
    assert_eq!(plan(none, None, &s), (Vec::new(), Vec::new()));
    let no_builtins = ToolChoice {
        no_builtin_tools: true,
        ..Default::default()
    };
    let (active, registry) = plan(no_builtins, None, &s);
    assert_eq!(active, ["ask", "plan"]);
    assert_eq!(registry.len(), 10);
    // An explicit list still wins over --no-tools.
    let choice = ToolChoice {
        no_tools: true,
        ..allow(&["read"])
    };
    assert_eq!(plan(choice, None, &s).0, ["read"]);
}

#[test]
fn default_tools_setting_with_project_deltas() {
    let s = settings(json!({"defaultTools": ["read", "grep"]}), json!({}));
    assert_eq!(default_tools(&s), Some(list(&["read", "grep"])));
    assert_eq!(
        plan(ToolChoice::default(), None, &s).0,
        ["read", "grep", "ask", "plan"]
    );
    // A project list of only deltas applies on top of the global one.
    let s = settings(
        json!({"defaultTools": ["read", "grep"]}),
        json!({"defaultTools": ["+ls", "-read"]}),
    );
    assert_eq!(default_tools(&s), Some(list(&["grep", "ls"])));
    // A project list with a plain name replaces it.
    let s = settings(
        json!({"defaultTools": ["read", "grep"]}),
        json!({"defaultTools": ["bash", "+find"]}),
    );
    assert_eq!(default_tools(&s), Some(list(&["bash", "find"])));
    // Deltas alone start from pi's defaults; an empty list disables the built-ins.
    let s = settings(json!({"defaultTools": ["+grep", "-bash"]}), json!({}));
    assert_eq!(
        default_tools(&s),
        Some(list(&["read", "edit", "write", "grep"]))
    );
    let s = settings(json!({"defaultTools": []}), json!({}));
    assert_eq!(plan(ToolChoice::default(), None, &s).0, ["ask", "plan"]);
    // --tools deltas apply to the resolved setting.
    let s = settings(json!({"defaultTools": ["read"]}), json!({}));
    assert_eq!(
        plan(allow(&["+ls"]), None, &s).0,
        ["read", "ls", "ask", "plan"]
    );
    assert_eq!(default_tools(&Settings::default()), None);
}

#[test]
fn shell_path_expands_a_leading_tilde() {
    let settings = |v: &str| {
        let mut m = serde_json::Map::new();
        m.insert("shellPath".into(), serde_json::json!(v));
        Settings::in_memory(m)
    };
    let home = std::env::var("HOME").unwrap_or_default();
    assert_eq!(
        shell_path(&settings("~/bin/zsh")),
        Some(format!("{home}/bin/zsh"))
    );
    assert_eq!(
        shell_path(&settings("/bin/sh")),
        Some("/bin/sh".to_string())
    );
    assert_eq!(
        shell_path(&Settings::in_memory(serde_json::Map::new())),
        None
    );
}
