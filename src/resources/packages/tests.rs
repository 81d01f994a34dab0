//! Unit tests for package resolution, settings records and the `pi config` model.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::config;
use super::*;
use crate::resources::settings::Settings;

struct Tree {
    dir: tempfile::TempDir,
}

impl Tree {
    fn new() -> Tree {
        Tree {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).unwrap()
    }
    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.root().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }
    fn ctx(&self) -> PackageContext {
        PackageContext {
            cwd: self.root().join("work"),
            agent_dir: self.root().join("agent"),
            npm_command: Vec::new(),
        }
    }
}

fn entry(v: Value) -> PackageEntry {
    PackageEntry::from_value(&v).unwrap()
}

fn paths(r: &PackageResources, kind: ResourceKind, root: &Path) -> Vec<String> {
    r.enabled(kind)
        .iter()
        .map(|p| p.strip_prefix(root).unwrap().to_string_lossy().into_owned())
        .collect()
}

const SKILL: &str = "---\nname: lint\ndescription: Lints\n---\nbody\n";

#[test]
fn manifest_declares_what_loads_and_filters_narrow_it() {
    let t = Tree::new();
    t.write(
        "pkg/package.json",
        r#"{"name":"p","pi":{"skills":["./skills"],"prompts":["prompts/*.md","!prompts/old.md"],
            "extensions":["ext/main.ts"]}}"#,
    );
    t.write("pkg/skills/lint/SKILL.md", SKILL);
    t.write("pkg/prompts/review.md", "Review");
    t.write("pkg/prompts/old.md", "Old");
    t.write("pkg/ext/main.ts", "");
    t.write("pkg/ext/other.ts", "");
    t.write("pkg/themes/dark2.json", "{}");
    let src = t.root().join("pkg").to_string_lossy().into_owned();
    let r = resolve(&t.ctx(), &[entry(json!(src))], None, Missing::Skip);
    let root = t.root();
    assert_eq!(
        paths(&r, ResourceKind::Skills, &root),
        ["pkg/skills/lint/SKILL.md"]
    );
    assert_eq!(
        paths(&r, ResourceKind::Prompts, &root),
        ["pkg/prompts/review.md"]
    );
    assert_eq!(
        paths(&r, ResourceKind::Extensions, &root),
        ["pkg/ext/main.ts"]
    );
    // The manifest does not list themes, so the conventional directory is not used.
    assert!(r.enabled(ResourceKind::Themes).is_empty());
    let skill = r.find(&root.join("pkg/skills/lint/SKILL.md")).unwrap();
    assert_eq!(skill.source, src);
    assert_eq!(skill.scope, Scope::User);
    assert_eq!(skill.base_dir, root.join("pkg"));

    let filtered = entry(json!({"source": src, "skills": [], "prompts": ["-prompts/review.md"]}));
    let r = resolve(&t.ctx(), &[filtered], None, Missing::Skip);
    assert!(r.enabled(ResourceKind::Skills).is_empty());
    assert!(r.enabled(ResourceKind::Prompts).is_empty());
    // Disabled resources are still reported, for `pi config`.
    assert_eq!(r.resources.iter().filter(|x| !x.enabled).count(), 2);
    // With filters, kinds the manifest omits fall back to the conventional directory.
    assert_eq!(
        paths(&r, ResourceKind::Themes, &root),
        ["pkg/themes/dark2.json"]
    );
}

#[test]
fn conventional_directories_without_a_manifest() {
    let t = Tree::new();
    t.write("pkg/skills/lint/SKILL.md", SKILL);
    t.write("pkg/skills/top.md", "---\ndescription: d\n---\n");
    t.write("pkg/prompts/nested/deep.md", "Deep");
    t.write("pkg/extensions/a.js", "");
    t.write("pkg/extensions/notes.txt", "");
    t.write("pkg/extensions/tool/index.ts", "");
    t.write("pkg/themes/t.json", "{}");
    let r = resolve(&t.ctx(), &[entry(json!("../pkg"))], None, Missing::Skip);
    let root = t.root();
    assert_eq!(
        paths(&r, ResourceKind::Skills, &root),
        ["pkg/skills/lint/SKILL.md", "pkg/skills/top.md"]
    );
    assert_eq!(
        paths(&r, ResourceKind::Prompts, &root),
        ["pkg/prompts/nested/deep.md"]
    );
    assert_eq!(
        paths(&r, ResourceKind::Extensions, &root),
        ["pkg/extensions/a.js", "pkg/extensions/tool/index.ts"]
    );
    assert_eq!(
        paths(&r, ResourceKind::Themes, &root),
        ["pkg/themes/t.json"]
    );
}

#[test]
fn a_file_or_a_plain_directory_is_one_extension() {
    let t = Tree::new();
    let file = t.write("ext.ts", "");
    t.write("plain/README.md", "");
    let r = resolve(
        &t.ctx(),
        &[
            entry(json!(file.to_string_lossy())),
            entry(json!("../plain")),
        ],
        None,
        Missing::Skip,
    );
    assert_eq!(
        r.enabled(ResourceKind::Extensions),
        [file, t.root().join("plain")]
    );
}

#[test]
fn project_entries_win_and_missing_packages_warn() {
    let t = Tree::new();
    t.write("pkg/skills/lint/SKILL.md", SKILL);
    let global = [
        entry(json!("../pkg")),
        entry(json!("npm:never-installed@1.0.0")),
    ];
    // Relative to `<cwd>/.pi`: the same directory as `../pkg` from the agent dir.
    let project = [entry(json!("../../pkg"))];
    let mut ctx = t.ctx();
    ctx.npm_command = vec!["false".into()];
    let r = resolve(&ctx, &global, Some(&project), Missing::Skip);
    let skills: Vec<&PackageResource> = r
        .resources
        .iter()
        .filter(|x| x.kind == ResourceKind::Skills)
        .collect();
    assert_eq!(skills.len(), 1);
    assert_eq!(skills[0].scope, Scope::Project);
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(
        r.warnings[0].contains("npm:never-installed@1.0.0"),
        "{:?}",
        r.warnings
    );
}

#[test]
fn untrusted_projects_contribute_nothing() {
    let t = Tree::new();
    t.write("pkg/skills/lint/SKILL.md", SKILL);
    t.write("work/.pi/settings.json", r#"{"packages":["../../pkg"]}"#);
    let agent = t.root().join("agent");
    let cwd = t.root().join("work");
    let r = resolve_for_run(&agent, &cwd, false, Missing::Skip);
    assert!(r.resources.is_empty());
    let r = resolve_for_run(&agent, &cwd, true, Missing::Skip);
    assert_eq!(r.enabled(ResourceKind::Skills).len(), 1);
}

#[test]
fn records_local_paths_relative_to_the_settings_dir_once() {
    let t = Tree::new();
    t.write("pkg/package.json", "{}");
    std::fs::create_dir_all(t.root().join("work")).unwrap();
    let ctx = t.ctx();
    let mut settings = Settings::load(&ctx.agent_dir, &ctx.cwd);
    let m = PackageManager::new(ctx.clone());
    assert!(m.record(&mut settings, "../pkg", Scope::User).unwrap());
    assert!(!m.record(&mut settings, "../pkg/", Scope::User).unwrap());
    assert!(m.record(&mut settings, "../pkg", Scope::Project).unwrap());
    assert!(m.record(&mut settings, "npm:@a/b@1", Scope::User).unwrap());
    assert!(!m.record(&mut settings, "npm:@a/b@2", Scope::User).unwrap());
    let global: Value = serde_json::from_str(
        &std::fs::read_to_string(ctx.agent_dir.join("settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(global, json!({"packages": ["../pkg", "npm:@a/b@1"]}));
    let project: Value =
        serde_json::from_str(&std::fs::read_to_string(ctx.cwd.join(".pi/settings.json")).unwrap())
            .unwrap();
    assert_eq!(project, json!({"packages": ["../../pkg"]}));
    assert!(m.unrecord(&mut settings, "npm:@a/b", Scope::User).unwrap());
    assert!(!m.unrecord(&mut settings, "npm:@a/b", Scope::User).unwrap());
    assert!(m.unrecord(&mut settings, "../pkg", Scope::Project).unwrap());
}

#[test]
fn config_groups_and_toggles_like_pi() {
    let t = Tree::new();
    t.write("pkg/skills/lint/SKILL.md", SKILL);
    t.write("pkg/prompts/b.md", "B");
    t.write("pkg/prompts/a.md", "A");
    t.write(
        "agent/settings.json",
        r#"{"packages":["../pkg"],"theme":"dark"}"#,
    );
    let ctx = t.ctx();
    let r = resolve(
        &ctx,
        &entries_of(Settings::load(&ctx.agent_dir, &ctx.cwd).global_map()),
        None,
        Missing::Skip,
    );
    let groups = config::groups(&r);
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0].label, "../pkg (user)");
    let names: Vec<Vec<&str>> = groups[0]
        .kinds
        .iter()
        .map(|(_, items)| items.iter().map(|i| i.display_name.as_str()).collect())
        .collect();
    assert_eq!(names, [vec!["lint"], vec!["a.md", "b.md"]]);

    let mut settings = Settings::load(&ctx.agent_dir, &ctx.cwd);
    let skill = groups[0].kinds[0].1[0].resource.clone();
    config::set_enabled(&mut settings, &skill, false).unwrap();
    config::set_enabled(&mut settings, &skill, false).unwrap();
    let written: Value = serde_json::from_str(
        &std::fs::read_to_string(ctx.agent_dir.join("settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        written,
        json!({"packages": [{"source": "../pkg", "skills": ["-skills/lint/SKILL.md"]}], "theme": "dark"})
    );
    let r = resolve(
        &ctx,
        &entries_of(settings.global_map()),
        None,
        Missing::Skip,
    );
    assert!(r.enabled(ResourceKind::Skills).is_empty());
    assert_eq!(r.enabled(ResourceKind::Prompts).len(), 2);
}
