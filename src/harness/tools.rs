//! Which tools a session starts with, as pi chooses: `read, bash, edit, write` by default;
//! `--tools` names exactly the set (and can turn on `grep, find, ls`); `--no-tools` and
//! `--no-builtin-tools` start with none (extension tools will be the difference between
//! them). Unknown names in `--tools` are ignored, as in pi.

use std::sync::Arc;

use crate::agent::Tool;
use crate::resources::settings::Settings;
use crate::tools::{
    bash::{BashTool, SessionEnv},
    edit::EditTool,
    find::FindTool,
    grep::GrepTool,
    ls::LsTool,
    read::ReadTool,
    write::WriteTool,
};

/// Every built-in tool name, in pi's registry order.
pub const BUILTIN_TOOLS: [&str; 7] = ["read", "bash", "edit", "write", "grep", "find", "ls"];
pub const DEFAULT_TOOLS: [&str; 4] = ["read", "bash", "edit", "write"];

/// The flags that decide the tool set.
#[derive(Debug, Clone, Default)]
pub struct ToolChoice {
    pub allow: Option<Vec<String>>,
    pub no_tools: bool,
    pub no_builtin_tools: bool,
}

/// A built-in tool by name, configured from settings; `bash` gives the model's commands the
/// session variables in `env` (which the session keeps current).
pub fn builtin(name: &str, settings: &Settings, env: &SessionEnv) -> Option<Arc<dyn Tool>> {
    Some(match name {
        "read" => Arc::new(ReadTool),
        "write" => Arc::new(WriteTool),
        "edit" => Arc::new(EditTool),
        "bash" => Arc::new(BashTool {
            shell: settings.str(&["shellPath"]).map(str::to_string),
            command_prefix: settings.str(&["shellCommandPrefix"]).map(str::to_string),
            session_env: Some(env.clone()),
        }),
        "grep" => Arc::new(GrepTool),
        "find" => Arc::new(FindTool),
        "ls" => Arc::new(LsTool),
        _ => return None,
    })
}

pub fn select(choice: &ToolChoice, settings: &Settings, env: &SessionEnv) -> Vec<Arc<dyn Tool>> {
    let names: Vec<&str> = match &choice.allow {
        Some(list) => list.iter().map(String::as_str).collect(),
        None if choice.no_tools || choice.no_builtin_tools => Vec::new(),
        None => DEFAULT_TOOLS.to_vec(),
    };
    let mut seen = std::collections::HashSet::new();
    names
        .into_iter()
        .filter(|n| seen.insert(*n))
        .filter_map(|n| builtin(n, settings, env))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(tools: &[Arc<dyn Tool>]) -> Vec<String> {
        tools.iter().map(|t| t.name().to_string()).collect()
    }

    #[test]
    fn choices() {
        let s = Settings::default();
        assert_eq!(
            names(&select(&ToolChoice::default(), &s, &SessionEnv::default())),
            DEFAULT_TOOLS
        );
        let only = ToolChoice {
            allow: Some(vec![
                "grep".into(),
                "nope".into(),
                "ls".into(),
                "grep".into(),
            ]),
            ..Default::default()
        };
        assert_eq!(
            names(&select(&only, &s, &SessionEnv::default())),
            ["grep", "ls"]
        );
        let none = ToolChoice {
            no_tools: true,
            ..Default::default()
        };
        assert!(select(&none, &s, &SessionEnv::default()).is_empty());
        let none = ToolChoice {
            no_builtin_tools: true,
            ..Default::default()
        };
        assert!(select(&none, &s, &SessionEnv::default()).is_empty());
    }
}
