//! The system prompt: who pi is, the active tools with their one-line summaries, guidelines
//! chosen by the tool mix (or a custom prompt instead of all that), appended text, the project
//! context files, the skills listing (when `read` is active), then the date and working
//! directory last. Written in our own words.

use std::sync::Arc;

use crate::agent::Tool;
use crate::resources::context_files::{self, ContextFile};
use crate::resources::skills::{self, Skill};

pub struct PromptInputs<'a> {
    /// `--system-prompt` (text or file contents) replacing the base prompt.
    pub custom: Option<&'a str>,
    /// `--append-system-prompt` values (or `APPEND_SYSTEM.md`).
    pub append: &'a [String],
    /// `AGENTS.md` / `CLAUDE.md` files in prompt order.
    pub context_files: &'a [ContextFile],
    /// Loaded skills; listed only when the `read` tool is active.
    pub skills: &'a [Skill],
    pub tools: &'a [Arc<dyn Tool>],
    pub cwd: &'a str,
    /// Local date as `YYYY-MM-DD`.
    pub date: &'a str,
}

fn guidelines(tools: &[Arc<dyn Tool>]) -> Vec<String> {
    let has = |n: &str| tools.iter().any(|t| t.name() == n);
    let mut out: Vec<String> = Vec::new();
    let search_tools = has("grep") || has("find") || has("ls");
    if has("bash") && !search_tools {
        out.push("Use bash for file exploration (ls, rg, find)".into());
    } else if has("bash") && search_tools {
        out.push("Prefer the grep, find and ls tools over bash for exploring files: they are faster and respect .gitignore".into());
    }
    for t in tools {
        for g in t.prompt_guidelines() {
            out.push(g.to_string());
        }
    }
    out.push("Be concise in your responses".into());
    out.push("Show file paths clearly when working with files".into());
    let mut seen = std::collections::HashSet::new();
    out.retain(|g| seen.insert(g.clone()));
    out
}

/// Everything the prompt is built from but the tools, kept by the session so the prompt follows
/// the active tools when an extension changes them (`pi.setActiveTools`).
#[derive(Debug, Clone, Default)]
pub struct PromptSource {
    pub custom: Option<String>,
    pub append: Vec<String>,
    pub context_files: Vec<ContextFile>,
    pub skills: Vec<Skill>,
    pub cwd: String,
    pub date: String,
}

impl PromptSource {
    pub fn build(&self, tools: &[Arc<dyn Tool>]) -> String {
        build(&PromptInputs {
            custom: self.custom.as_deref(),
            append: &self.append,
            context_files: &self.context_files,
            skills: &self.skills,
            tools,
            cwd: &self.cwd,
            date: &self.date,
        })
    }
}

pub fn build(inputs: &PromptInputs) -> String {
    let mut out = String::new();
    match inputs.custom {
        Some(custom) => out.push_str(custom),
        None => {
            out.push_str(
                "You are an expert coding assistant working inside pi, a terminal coding agent. \
                 You help the user by reading files, running commands, editing code and writing files.\n\n",
            );
            out.push_str("Available tools:\n");
            let listed: Vec<_> = inputs
                .tools
                .iter()
                .filter(|t| !t.prompt_snippet().is_empty())
                .collect();
            if listed.is_empty() {
                out.push_str("(none)\n");
            }
            for t in listed {
                out.push_str(&format!("- {}: {}\n", t.name(), t.prompt_snippet()));
            }
            out.push_str("\nThe project may also provide other custom tools.\n\nGuidelines:\n");
            for g in guidelines(inputs.tools) {
                out.push_str(&format!("- {g}\n"));
            }
        }
    }
    if !inputs.append.is_empty() {
        out.push_str("\n\n");
        out.push_str(&inputs.append.join("\n\n"));
    }
    out.push_str(&context_files::render(inputs.context_files));
    if inputs.tools.iter().any(|t| t.name() == "read") {
        out.push_str(&skills::format_for_prompt(inputs.skills));
    }
    out.push_str(&format!(
        "\nCurrent date: {}\nCurrent working directory: {}",
        inputs.date, inputs.cwd
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::settings::Settings;
    use std::path::PathBuf;

    fn tools(names: &[&str]) -> Vec<Arc<dyn Tool>> {
        let s = Settings::default();
        names
            .iter()
            .filter_map(|n| {
                crate::harness::tools::builtin(n, &s, &crate::tools::bash::SessionEnv::default())
            })
            .collect()
    }

    #[test]
    fn sections_in_order_with_context_and_skills() {
        let files = [ContextFile {
            path: PathBuf::from("/p/AGENTS.md"),
            content: "Use tabs.".into(),
        }];
        let skills = [Skill {
            name: "s".into(),
            description: "d".into(),
            file_path: PathBuf::from("/sk/s/SKILL.md"),
            base_dir: PathBuf::from("/sk/s"),
            disable_model_invocation: false,
        }];
        let read = tools(&["read", "bash"]);
        let append = ["Extra.".to_string()];
        let p = build(&PromptInputs {
            custom: Some("Custom base."),
            append: &append,
            context_files: &files,
            skills: &skills,
            tools: &read,
            cwd: "/p",
            date: "2025-01-02",
        });
        let order = [
            "Custom base.",
            "\n\nExtra.",
            "# Project Context",
            "## /p/AGENTS.md\n\nUse tabs.",
            "<available_skills>",
            "\nCurrent date: 2025-01-02\nCurrent working directory: /p",
        ];
        let mut at = 0;
        for part in order {
            let i = p[at..]
                .find(part)
                .unwrap_or_else(|| panic!("{part:?} in {p}"));
            at += i + part.len();
        }
        assert!(p.ends_with("Current working directory: /p"));

        // Without the read tool the skills are not listed.
        let no_read = tools(&["bash"]);
        let p = build(&PromptInputs {
            custom: None,
            append: &[],
            context_files: &[],
            skills: &skills,
            tools: &no_read,
            cwd: "/p",
            date: "2025-01-02",
        });
        assert!(!p.contains("available_skills"));
        assert!(!p.contains("# Project Context"));
    }
}
