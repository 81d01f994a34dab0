//! The system prompt, in pi 1.x's named sections: `preamble` (who pi is, or the custom
//! prompt), `tools` (the active tools' one-line summaries) and `rules` (guidelines chosen by the
//! tool mix) unless a custom prompt replaces them, `addendum` (appended text), `project_context`
//! (the context files), `skills` (when `read` or `bash` can load them) and `cwd` last; every
//! section but the preamble is wrapped in `<name>` tags. The sections are what a session
//! records in its system messages; the prompt is them joined by blank lines. No date: a prompt
//! that changes each day breaks the provider's prompt cache (1.x dropped it too). Written in
//! our own words.

use std::sync::Arc;

use crate::agent::system_message::render;
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
    /// Loaded skills; listed only when the `read` or `bash` tool is active.
    pub skills: &'a [Skill],
    pub tools: &'a [Arc<dyn Tool>],
    pub cwd: &'a str,
}

/// Named prompt sections in prompt order, as `(name, text)`.
pub type Sections = Vec<(String, String)>;

fn rules(tools: &[Arc<dyn Tool>]) -> Vec<String> {
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
            out.push(g.trim().to_string());
        }
    }
    out.push("Be concise in your responses".into());
    out.push("Show file paths clearly when working with files".into());
    let mut seen = std::collections::HashSet::new();
    out.retain(|g| !g.is_empty() && seen.insert(g.clone()));
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
}

impl PromptSource {
    fn inputs<'a>(&'a self, tools: &'a [Arc<dyn Tool>]) -> PromptInputs<'a> {
        PromptInputs {
            custom: self.custom.as_deref(),
            append: &self.append,
            context_files: &self.context_files,
            skills: &self.skills,
            tools,
            cwd: &self.cwd,
        }
    }

    pub fn sections(&self, tools: &[Arc<dyn Tool>]) -> Sections {
        sections(&self.inputs(tools))
    }

    pub fn build(&self, tools: &[Arc<dyn Tool>]) -> String {
        build(&self.inputs(tools))
    }

    /// What the prompt was built from, in the shape of pi's `BuildSystemPromptOptions`
    /// (`before_agent_start`'s `systemPromptOptions`); absent fields are left out as in pi.
    pub fn options(&self, tools: &[Arc<dyn Tool>]) -> serde_json::Value {
        use serde_json::{json, Map, Value};
        let mut snippets = Map::new();
        let mut guidelines = Vec::new();
        for t in tools {
            if !t.prompt_snippet().is_empty() {
                snippets.insert(t.name().to_string(), t.prompt_snippet().into());
            }
            guidelines.extend(t.prompt_guidelines().iter().map(|g| Value::from(*g)));
        }
        let path = |p: &std::path::Path| p.to_string_lossy().into_owned();
        let mut out = json!({
            "cwd": self.cwd,
            "skills": self.skills.iter().map(|s| json!({
                "name": s.name,
                "description": s.description,
                "filePath": path(&s.file_path),
                "baseDir": path(&s.base_dir),
                "disableModelInvocation": s.disable_model_invocation,
            })).collect::<Vec<_>>(),
            "contextFiles": self.context_files.iter()
                .map(|f| json!({"path": path(&f.path), "content": f.content}))
                .collect::<Vec<_>>(),
            "selectedTools": tools.iter().map(|t| t.name()).collect::<Vec<_>>(),
            "toolSnippets": snippets,
            "promptGuidelines": guidelines,
        });
        if let Some(custom) = &self.custom {
            out["customPrompt"] = custom.as_str().into();
        }
        if !self.append.is_empty() {
            out["appendSystemPrompt"] = self.append.join("\n\n").into();
        }
        out
    }
}

pub fn sections(inputs: &PromptInputs) -> Sections {
    let mut raw: Sections = Vec::new();
    let mut add = |name: &str, text: String| raw.push((name.to_string(), text));
    match inputs.custom {
        Some(custom) => add("preamble", custom.to_string()),
        None => {
            add(
                "preamble",
                "You are an expert coding assistant working inside pi, a terminal coding agent. \
                 You help the user by reading files, running commands, editing code and writing files."
                    .into(),
            );
            let listed: Vec<String> = inputs
                .tools
                .iter()
                .filter(|t| !t.prompt_snippet().is_empty())
                .map(|t| format!("- {}: {}", t.name(), t.prompt_snippet()))
                .collect();
            let listed = if listed.is_empty() {
                "(none)".to_string()
            } else {
                listed.join("\n")
            };
            add(
                "tools",
                format!("{listed}\n\nThe project may also provide other custom tools."),
            );
            let rules: Vec<String> = rules(inputs.tools)
                .iter()
                .map(|r| format!("- {r}"))
                .collect();
            add("rules", rules.join("\n"));
        }
    }
    let append = inputs.append.join("\n\n");
    if !append.is_empty() {
        add("addendum", append);
    }
    if !inputs.context_files.is_empty() {
        add(
            "project_context",
            context_files::render(inputs.context_files),
        );
    }
    let reader = ["read", "bash"]
        .into_iter()
        .find(|r| inputs.tools.iter().any(|t| t.name() == *r));
    if let Some(reader) = reader {
        let listing = skills::format_for_prompt(inputs.skills, reader);
        let listing = listing.trim();
        if !listing.is_empty() {
            add("skills", listing.to_string());
        }
    }
    add("cwd", inputs.cwd.replace('\\', "/"));
    raw.into_iter()
        .map(|(name, text)| {
            if name == "preamble" {
                (name, text)
            } else {
                let wrapped = wrap(&name, &text);
                (name, wrapped)
            }
        })
        .collect()
}

/// A section's text as the prompt holds it: `<name>`, the content, `</name>`.
pub fn wrap(name: &str, content: &str) -> String {
    format!("<{name}>\n{content}\n</{name}>")
}

pub fn build(inputs: &PromptInputs) -> String {
    render(sections(inputs).iter().map(|(_, text)| text.as_str()))
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

    fn skill() -> Skill {
        Skill {
            name: "s".into(),
            description: "d".into(),
            file_path: PathBuf::from("/sk/s/SKILL.md"),
            base_dir: PathBuf::from("/sk/s"),
            disable_model_invocation: false,
        }
    }

    #[test]
    fn sections_in_order_with_context_and_skills() {
        let files = [ContextFile {
            path: PathBuf::from("/p/AGENTS.md"),
            content: "Use tabs.".into(),
        }];
        let skills = [skill()];
        let read = tools(&["read", "bash"]);
        let append = ["Extra.".to_string(), "More.".to_string()];
        let inputs = PromptInputs {
            custom: Some("Custom base."),
            append: &append,
            context_files: &files,
            skills: &skills,
            tools: &read,
            cwd: "C:\\p",
        };
        let s = sections(&inputs);
        let names: Vec<&str> = s.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["preamble", "addendum", "project_context", "skills", "cwd"]
        );
        assert_eq!(s[0].1, "Custom base.");
        assert_eq!(s[1].1, "<addendum>\nExtra.\n\nMore.\n</addendum>");
        assert!(s[2].1.starts_with("<project_context>\n"));
        assert!(s[2].1.contains(
            "<project_instructions path=\"/p/AGENTS.md\">\nUse tabs.\n</project_instructions>"
        ));
        assert!(s[3].1.starts_with("<skills>\n") && s[3].1.contains("<available_skills>"));
        assert!(s[3].1.contains("read tool"));
        assert_eq!(s[4].1, "<cwd>\nC:/p\n</cwd>");
        let prompt = build(&inputs);
        assert!(prompt.starts_with("Custom base.\n\n<addendum>"));
        assert!(prompt.ends_with("</skills>\n\n<cwd>\nC:/p\n</cwd>"));
        assert!(!prompt.contains("Current date"));
    }

    #[test]
    fn default_prompt_lists_tools_and_rules_and_skills_follow_the_reader() {
        let skills = [skill()];
        let bash = tools(&["bash"]);
        let s = sections(&PromptInputs {
            custom: None,
            append: &[],
            context_files: &[],
            skills: &skills,
            tools: &bash,
            cwd: "/p",
        });
        let names: Vec<&str> = s.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["preamble", "tools", "rules", "skills", "cwd"]);
        assert!(s[1].1.starts_with("<tools>\n- bash: "));
        assert!(s[2]
            .1
            .starts_with("<rules>\n- Use bash for file exploration"));
        assert!(s[2]
            .1
            .ends_with("- Show file paths clearly when working with files\n</rules>"));
        // Without read, skills are loaded with bash.
        assert!(s[3].1.contains("with bash"));

        // No reader: no skills; no tools at all: "(none)".
        let none = sections(&PromptInputs {
            custom: None,
            append: &[],
            context_files: &[],
            skills: &skills,
            tools: &[],
            cwd: "/p",
        });
        assert!(none
            .iter()
            .all(|(n, _)| n != "skills" && n != "project_context"));
        assert!(none[1].1.starts_with("<tools>\n(none)\n\n"));
    }
}
