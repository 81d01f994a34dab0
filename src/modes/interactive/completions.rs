//! What the editor's `/` popup offers: the built-in commands (with `/model`'s argument
//! completion: the models `/model` and Ctrl+P choose among, fuzzy by id and provider), then
//! prompt templates and skills with pi's source tag in front of their description (`[u]` user,
//! `[p]` project, `[t]` command line, `[u:npm:pkg]` a package). Extension commands are added
//! by `extensions.rs`; a command with an [`ArgumentCompleter`] gets its arguments completed.

use std::path::Path;
use std::sync::Arc;

use super::env::InteractiveEnv;
use crate::ai::Model;
use crate::resources::loader::Resources;
use crate::resources::packages::source::PackageSource;
use crate::resources::packages::Scope;
use crate::tui::autocomplete::{ArgumentCompleter, AutocompleteItem, SlashCommand};
use crate::tui::fuzzy::fuzzy_filter;

/// Built-in commands (`/model` completing `models`), then prompt templates and skills.
pub(super) fn slash_commands(env: &InteractiveEnv, models: Vec<Model>) -> Vec<SlashCommand> {
    let models = model_completer(models);
    let mut commands: Vec<SlashCommand> = super::commands::BUILTIN
        .iter()
        .map(|(name, description)| {
            let mut c = SlashCommand::new(*name, *description);
            if *name == "model" {
                c.arguments = models.clone();
            }
            c
        })
        .collect();
    let resources = &env.resources;
    let tag = |path: &Path, description: &str| {
        let tag = source_tag(resources, path, &env.agent_dir, &env.cwd);
        match (description.is_empty(), tag) {
            (true, tag) => format!("[{tag}]"),
            (false, tag) => format!("[{tag}] {description}"),
        }
    };
    for t in &resources.templates {
        let mut c = SlashCommand::new(t.name.clone(), tag(&t.file_path, &t.description));
        c.argument_hint = t.argument_hint.clone();
        commands.push(c);
    }
    for s in &resources.skills {
        commands.push(SlashCommand::new(
            format!("skill:{}", s.name),
            tag(&s.file_path, &s.description),
        ));
    }
    commands
}

/// `/model <text>`: `provider/id` completions for the candidates, matched on id and provider.
fn model_completer(models: Vec<Model>) -> Option<ArgumentCompleter> {
    if models.is_empty() {
        return None;
    }
    let items: Vec<(String, AutocompleteItem)> = models
        .iter()
        .map(|m| {
            let mut item = AutocompleteItem::new(format!("{}/{}", m.provider, m.id), m.id.clone());
            item.description = Some(m.provider.clone());
            (format!("{} {}", m.id, m.provider), item)
        })
        .collect();
    Some(Arc::new(move |prefix: &str| {
        fuzzy_filter(items.clone(), prefix, |(key, _)| key)
            .into_iter()
            .map(|(_, item)| item)
            .collect()
    }))
}

/// pi's source tag for a template or skill file: the package's scope and source, else `u`
/// (the agent dir, `~/.agents`), `p` (the project) or `t` (a command-line path).
fn source_tag(resources: &Resources, path: &Path, agent_dir: &Path, cwd: &Path) -> String {
    if let Some(p) = resources.packages.find(path) {
        let scope = match p.scope {
            Scope::User => "u",
            Scope::Project => "p",
        };
        return match PackageSource::parse(&p.source) {
            PackageSource::Npm { .. } => format!("{scope}:{}", p.source.trim()),
            PackageSource::Git {
                host,
                path,
                git_ref,
                ..
            } => {
                let at = git_ref.map(|r| format!("@{r}")).unwrap_or_default();
                format!("{scope}:git:{host}/{path}{at}")
            }
            PackageSource::Local { .. } => scope.to_string(),
        };
    }
    let home = crate::resources::trust::home_dir();
    let user_agents = home.as_ref().map(|h| h.join(".agents"));
    if path.starts_with(agent_dir) || user_agents.is_some_and(|d| path.starts_with(d)) {
        return "u".into();
    }
    let project = cwd.ancestors().any(|dir| {
        home.as_deref() != Some(dir)
            && (path.starts_with(dir.join(".pi")) || path.starts_with(dir.join(".agents")))
    });
    if project {
        "p".into()
    } else {
        "t".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(id: &str, provider: &str) -> Model {
        Model {
            id: id.into(),
            name: id.into(),
            api: "scripted".into(),
            provider: provider.into(),
            base_url: String::new(),
            reasoning: false,
            input: vec!["text".into()],
            cost: Default::default(),
            context_window: 1000,
            max_tokens: 100,
            thinking_level_map: None,
            headers: None,
            compat: None,
        }
    }

    #[test]
    fn model_arguments_complete_to_provider_slash_id() {
        let complete = model_completer(vec![
            model("claude-opus", "anthropic"),
            model("gpt-5", "openai"),
        ])
        .unwrap();
        let items = complete("opus");
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].value, "anthropic/claude-opus");
        assert_eq!(items[0].label, "claude-opus");
        assert_eq!(items[0].description.as_deref(), Some("anthropic"));
        assert_eq!(complete("").len(), 2);
        assert_eq!(complete("openai")[0].value, "openai/gpt-5");
        assert!(model_completer(Vec::new()).is_none());
    }

    #[test]
    fn source_tags_name_the_scope() {
        let r = Resources::default();
        let (agent, cwd) = (Path::new("/h/.pi/agent"), Path::new("/w/proj"));
        let tag = |p: &str| source_tag(&r, Path::new(p), agent, cwd);
        assert_eq!(tag("/h/.pi/agent/prompts/fix.md"), "u");
        assert_eq!(tag("/w/proj/.pi/prompts/fix.md"), "p");
        assert_eq!(tag("/w/.agents/skills/x/SKILL.md"), "p");
        assert_eq!(tag("/tmp/extra.md"), "t");
    }
}
