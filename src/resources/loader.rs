//! Gathers everything the system prompt and input expansion need for one working directory:
//! context files, `SYSTEM.md` / `APPEND_SYSTEM.md`, skills and prompt templates (including
//! those of installed pi packages) — honouring project trust (which never gates context files)
//! and the `--no-*` switches — and remembers what trust made it skip. Package extensions and themes are collected here for the
//! extension host and the TUI.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::context_files::{self, ContextFile};
use super::packages::{self, Missing, PackageResources, ResourceKind};
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
    /// Warnings naming the file they are about. A UI shows them; print, JSON and RPC modes
    /// print them on stderr (pi keeps quiet there; see docs/compat.md).
    pub warnings: Vec<String>,
    /// Trust-gated project files left out because the folder is not trusted.
    pub skipped: Vec<PathBuf>,
    /// Extension entry points contributed by enabled packages (global, and project ones only
    /// in a trusted folder), project packages first. For the extension host.
    pub package_extensions: Vec<PathBuf>,
    /// Theme files contributed by enabled packages. For the TUI.
    pub package_themes: Vec<PathBuf>,
    /// Everything packages contribute, enabled or not, with where it came from.
    pub packages: PackageResources,
    /// Where top-level resources are discovered: the agent dir and the project's `.pi`.
    pub agent_dir: PathBuf,
    pub project_dir: PathBuf,
}

impl Resources {
    pub fn load(
        agent_dir: &Path,
        cwd: &Path,
        opts: &ResourceOptions,
        scope: &ProjectScope,
    ) -> Self {
        let mut r = Resources {
            agent_dir: agent_dir.to_path_buf(),
            project_dir: cwd.join(".pi"),
            ..Resources::default()
        };
        if !opts.no_context_files {
            let (files, warnings) = context_files::discover(agent_dir, cwd);
            r.context_files = files;
            r.warnings.extend(warnings);
        }
        let (sys, skipped) = context_files::find_prompt_file("SYSTEM.md", agent_dir, cwd, scope);
        r.system_prompt_file = sys;
        r.skipped.extend(skipped);
        let (app, skipped) =
            context_files::find_prompt_file("APPEND_SYSTEM.md", agent_dir, cwd, scope);
        r.append_prompt_file = app;
        r.skipped.extend(skipped);

        r.packages = packages::resolve_for_run(agent_dir, cwd, scope.allows(cwd), Missing::Install);
        r.warnings.extend(r.packages.warnings.iter().cloned());
        r.package_extensions = r.packages.enabled(ResourceKind::Extensions);
        r.package_themes = r.packages.enabled(ResourceKind::Themes);
        // pi loads package skills and templates after the discovered ones and before the
        // `--skill` / `--prompt-template` paths; `--no-skills` and `--no-prompt-templates`
        // drop them with the discovered ones.
        let with_packages = |kind, explicit: &[String], off: bool| -> Vec<String> {
            let mut paths: Vec<String> = if off {
                Vec::new()
            } else {
                let found = r.packages.enabled(kind);
                found
                    .iter()
                    .map(|p| p.to_string_lossy().into_owned())
                    .collect()
            };
            paths.extend(explicit.iter().cloned());
            paths
        };
        let skill_paths = with_packages(ResourceKind::Skills, &opts.skill_paths, opts.no_skills);
        let template_paths = with_packages(
            ResourceKind::Prompts,
            &opts.template_paths,
            opts.no_templates,
        );

        let home = super::trust::home_dir();
        let s = skills::load(
            &SkillSources {
                agent_dir,
                cwd,
                home: home.as_deref(),
                paths: &skill_paths,
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
                paths: &template_paths,
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

    /// pi's `sourceInfo` for a skill or template file: the package it came from; else, for a
    /// file pi discovers itself (under `<agentDir>/skills|prompts` or `.pi/skills|prompts`),
    /// source `auto` with the agent dir or `.pi` as `baseDir`; else (a `--skill` or
    /// `--prompt-template` path) a `local`, `temporary` one based in `base_dir` or its folder.
    pub fn source_info(&self, path: &Path, base_dir: Option<&Path>) -> Value {
        if let Some(p) = self.packages.find(path) {
            return json!({
                "path": path.to_string_lossy(),
                "source": p.source,
                "scope": p.scope.as_str(),
                "origin": "package",
                "baseDir": p.base_dir.to_string_lossy(),
            });
        }
        for (root, scope) in [(&self.agent_dir, "user"), (&self.project_dir, "project")] {
            if ["skills", "prompts"]
                .iter()
                .any(|sub| !root.as_os_str().is_empty() && path.starts_with(root.join(sub)))
            {
                return json!({"path": path.to_string_lossy(), "source": "auto", "scope": scope,
                    "origin": "top-level", "baseDir": root.to_string_lossy()});
            }
        }
        let base = base_dir
            .map(Path::to_path_buf)
            .or_else(|| path.parent().map(Path::to_path_buf))
            .unwrap_or_default();
        json!({"path": path.to_string_lossy(), "source": "local", "scope": "temporary",
            "origin": "top-level", "baseDir": base.to_string_lossy()})
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
