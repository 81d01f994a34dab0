//! Gathers everything the system prompt and input expansion need for one working directory:
//! context files, `SYSTEM.md` / `APPEND_SYSTEM.md`, skills and prompt templates — honouring
//! project trust and the `--no-*` switches — and remembers what trust made it skip.

use std::path::{Path, PathBuf};

use super::context_files::{self, ContextFile};
use super::skills::{self, Skill, SkillSources};
use super::templates::{self, Template, TemplateSources};
use super::trust::ProjectScope;

#[derive(Debug, Default, Clone)]
pub struct ResourceOptions {
    pub skill_paths: Vec<String>,
    pub no_skills: bool,
    pub template_paths: Vec<String>,
    pub no_templates: bool,
    pub no_context_files: bool,
}

#[derive(Debug, Default)]
pub struct Resources {
    pub context_files: Vec<ContextFile>,
    /// `.pi/SYSTEM.md` or `<agentDir>/SYSTEM.md`.
    pub system_prompt_file: Option<PathBuf>,
    /// `.pi/APPEND_SYSTEM.md` or `<agentDir>/APPEND_SYSTEM.md`.
    pub append_prompt_file: Option<PathBuf>,
    pub skills: Vec<Skill>,
    pub templates: Vec<Template>,
    /// Warnings naming the file they are about.
    pub warnings: Vec<String>,
    /// Project files left out because the folder is not trusted.
    pub skipped: Vec<PathBuf>,
}

impl Resources {
    pub fn load(
        agent_dir: &Path,
        cwd: &Path,
        opts: &ResourceOptions,
        scope: &ProjectScope,
    ) -> Self {
        let mut r = Resources::default();
        if !opts.no_context_files {
            let (files, skipped, warnings) = context_files::discover(agent_dir, cwd, scope);
            r.context_files = files;
            r.skipped.extend(skipped);
            r.warnings.extend(warnings);
        }
        let (sys, skipped) = context_files::find_prompt_file("SYSTEM.md", agent_dir, cwd, scope);
        r.system_prompt_file = sys;
        r.skipped.extend(skipped);
        let (app, skipped) =
            context_files::find_prompt_file("APPEND_SYSTEM.md", agent_dir, cwd, scope);
        r.append_prompt_file = app;
        r.skipped.extend(skipped);

        let home = super::trust::home_dir();
        let s = skills::load(
            &SkillSources {
                agent_dir,
                cwd,
                home: home.as_deref(),
                paths: &opts.skill_paths,
                discover: !opts.no_skills,
            },
            scope,
        );
        r.skills = s.skills;
        r.warnings.extend(s.warnings);
        r.skipped.extend(s.skipped);

        let t = templates::load(
            &TemplateSources {
                agent_dir,
                cwd,
                paths: &opts.template_paths,
                discover: !opts.no_templates,
            },
            scope,
        );
        r.templates = t.templates;
        r.warnings.extend(t.warnings);
        r.skipped.extend(t.skipped);

        let settings = cwd.join(".pi").join("settings.json");
        if !scope.allows(cwd) && settings.is_file() {
            r.skipped.insert(0, settings);
        }
        r
    }

    /// `/skill:name args` then `/template args` expansion of one user input.
    pub fn expand_input(&self, text: &str) -> String {
        if !text.starts_with('/') {
            return text.to_string();
        }
        let expanded = skills::expand_command(text, &self.skills);
        templates::expand(&expanded, &self.templates)
    }
}
