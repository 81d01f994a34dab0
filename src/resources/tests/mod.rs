//! Unit tests for project resources: context files, front matter, skills, templates, trust.

use std::path::{Path, PathBuf};

use super::context_files;
use super::frontmatter::{self, FmValue};
use super::loader::{ResourceOptions, Resources};
use super::skills::{self, Skill};
use super::templates::{self, Template};
use super::trust::{ProjectScope, TrustStore};

/// A temporary directory tree removed on drop.
struct Tree(PathBuf);

impl Tree {
    fn new(label: &str) -> Tree {
        let dir = tempfile::Builder::new()
            .prefix(&format!("pi-res-{label}-"))
            .tempdir()
            .unwrap()
            .keep();
        Tree(std::fs::canonicalize(dir).unwrap())
    }
    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }
    fn p(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A scope whose `$HOME` is `home` (not the real one), trusted or not.
fn scope(t: &Tree, cwd: &Path, trusted: bool) -> ProjectScope {
    ProjectScope {
        cwd: cwd.to_path_buf(),
        home: Some(t.p("home")),
        agent_dir: t.p("home/.pi/agent"),
        trusted,
        decided: trusted,
    }
}

fn skill_md(name: &str, desc: &str) -> String {
    format!("---\nname: {name}\ndescription: {desc}\n---\n# {name}\nBody of {name}.\n")
}

#[test]
fn context_files_agent_dir_first_then_root_down_to_cwd() {
    let t = Tree::new("ctx");
    let agent = t.p("home/.pi/agent");
    t.write("home/.pi/agent/AGENTS.md", "global");
    t.write("home/proj/CLAUDE.md", "proj claude");
    t.write("home/proj/sub/AGENTS.md", "sub agents");
    t.write(
        "home/proj/sub/CLAUDE.md",
        "ignored: AGENTS.md wins in the same dir",
    );
    let cwd = t.p("home/proj/sub");
    let (files, warnings) = context_files::discover(&agent, &cwd);
    assert!(warnings.is_empty());
    let names: Vec<_> = files.iter().map(|f| f.content.as_str()).collect();
    assert_eq!(names, ["global", "proj claude", "sub agents"]);
    assert_eq!(files[2].path, cwd.join("AGENTS.md"));

    // The agent dir inside the cwd chain is not listed twice.
    let (files, _) = context_files::discover(&agent, &agent);
    assert_eq!(files.len(), 1);

    let rendered = context_files::render(&files);
    assert!(rendered.starts_with("Instructions and conventions provided for this project:\n\n"));
    assert!(rendered.ends_with(&format!(
        "<project_instructions path=\"{}\">\nglobal\n</project_instructions>",
        agent.join("AGENTS.md").display()
    )));
}

/// pi (every version): context files are instructions, not code; trust never gates them.
#[test]
fn context_files_load_whatever_the_trust_decision() {
    let t = Tree::new("ctxtrust");
    let agent = t.p("home/.pi/agent");
    t.write("home/.pi/agent/AGENTS.md", "global");
    t.write("home/AGENTS.md", "home level");
    t.write("home/proj/AGENTS.md", "project");
    t.write("home/proj/.pi/extensions/x.ts", "");
    let cwd = t.p("home/proj");
    let r = Resources::load(
        &agent,
        &cwd,
        &ResourceOptions::default(),
        &scope(&t, &cwd, false),
    );
    let names: Vec<_> = r.context_files.iter().map(|f| f.content.as_str()).collect();
    assert_eq!(names, ["global", "home level", "project"]);
    assert!(!r.skipped.contains(&cwd.join("AGENTS.md")));
}

/// pi 1.x: `AGENTS.override.md` replaces AGENTS.md/CLAUDE.md of its own directory only; a
/// directory named like a context file is passed over; a BOM is dropped.
#[test]
fn agents_override_replaces_its_directorys_file() {
    let t = Tree::new("ctxoverride");
    let agent = t.p("home/.pi/agent");
    t.write("home/proj/AGENTS.md", "outer");
    t.write("home/proj/sub/AGENTS.md", "replaced");
    t.write("home/proj/sub/CLAUDE.md", "replaced too");
    t.write("home/proj/sub/AGENTS.override.md", "\u{feff}override");
    std::fs::create_dir_all(t.p("home/proj/sub/deeper/AGENTS.override.md")).unwrap();
    t.write("home/proj/sub/deeper/CLAUDE.md", "deeper");
    let cwd = t.p("home/proj/sub/deeper");
    let (files, _) = context_files::discover(&agent, &cwd);
    let names: Vec<_> = files.iter().map(|f| f.content.as_str()).collect();
    assert_eq!(names, ["outer", "override", "deeper"]);
    assert_eq!(files[1].path, t.p("home/proj/sub/AGENTS.override.md"));
}

#[test]
fn no_context_files_and_system_prompt_file_precedence() {
    let t = Tree::new("sys");
    let agent = t.p("home/.pi/agent");
    let cwd = t.p("home/proj");
    t.write("home/proj/AGENTS.md", "x");
    t.write("home/.pi/agent/SYSTEM.md", "global system");
    t.write("home/.pi/agent/APPEND_SYSTEM.md", "global append");
    let opts = ResourceOptions {
        no_context_files: true,
        ..Default::default()
    };
    let r = Resources::load(&agent, &cwd, &opts, &scope(&t, &cwd, true));
    assert!(r.context_files.is_empty());
    assert_eq!(r.system_prompt_file, Some(agent.join("SYSTEM.md")));
    assert_eq!(r.append_prompt_file, Some(agent.join("APPEND_SYSTEM.md")));

    t.write("home/proj/.pi/SYSTEM.md", "project system");
    t.write("home/proj/.pi/APPEND_SYSTEM.md", "project append");
    let r = Resources::load(&agent, &cwd, &opts, &scope(&t, &cwd, true));
    assert_eq!(r.system_prompt_file, Some(cwd.join(".pi/SYSTEM.md")));
    assert_eq!(r.append_prompt_file, Some(cwd.join(".pi/APPEND_SYSTEM.md")));

    // Untrusted: the project files are skipped and the global ones apply.
    let r = Resources::load(&agent, &cwd, &opts, &scope(&t, &cwd, false));
    assert_eq!(r.system_prompt_file, Some(agent.join("SYSTEM.md")));
    assert!(r.skipped.contains(&cwd.join(".pi/SYSTEM.md")));
    assert!(r.skipped.contains(&cwd.join(".pi/APPEND_SYSTEM.md")));
}

#[test]
fn frontmatter_subset() {
    let fm = frontmatter::parse(
        "---\r\nname: my-skill\r\ndescription: \"Quoted: \\\"yes\\\"\"\r\nlicense: 'it''s MIT' # comment\r\n\
         disable-model-invocation: true\r\nmetadata:\r\n  author: me\r\n  tags: [a]\r\n\
         allowed-tools:\r\n  - read\r\nnote: |\r\n  line one\r\n  line two\r\nfold: >-\r\n  a\r\n  b\r\n---\r\n\r\nBody\r\n",
    );
    assert_eq!(fm.error, None);
    assert_eq!(fm.str("name"), Some("my-skill"));
    assert_eq!(fm.str("description"), Some("Quoted: \"yes\""));
    assert_eq!(fm.str("license"), Some("it's MIT"));
    assert_eq!(fm.bool("disable-model-invocation"), Some(true));
    assert_eq!(fm.fields.get("metadata"), Some(&FmValue::Other));
    assert_eq!(fm.fields.get("allowed-tools"), Some(&FmValue::Other));
    assert_eq!(fm.str("note"), Some("line one\nline two\n"));
    assert_eq!(fm.str("fold"), Some("a b"));
    assert_eq!(fm.body, "Body");

    let none = frontmatter::parse("# Title\n---\nx");
    assert!(none.fields.is_empty());
    assert_eq!(none.body, "# Title\n---\nx");
    assert_eq!(
        frontmatter::parse("---\nname: x\nno end").body,
        "---\nname: x\nno end"
    );

    let bad = frontmatter::parse("---\ndescription: \"open\nname x\n---\nbody");
    assert!(bad.error.is_some());

    // Found by the fuzzer: a block scalar's blank line of wider whitespace than its indent.
    let wide = frontmatter::parse("---\nk: |\n  x\n\u{3000}\n  y\n---\n");
    assert_eq!(wide.str("k"), Some("x\n\ny\n"));

    // Found by the fuzzer: an escaped quote, then ` #`, inside a quoted value is not a comment.
    let quoted = frontmatter::parse("---\na: \"bc\\\": #\\n[[\" # c\nb: 'it''s #x' # y\n---\n");
    assert_eq!(quoted.error, None);
    assert_eq!(quoted.str("a"), Some("bc\": #\n[["));
    assert_eq!(quoted.str("b"), Some("it's #x"));
}

#[test]
fn skill_validation_warnings_and_missing_description() {
    let t = Tree::new("skillval");
    let good = t.write(
        "skills/good-one/SKILL.md",
        &skill_md("good-one", "Does things"),
    );
    let (s, w) = skills::load_skill_file(&good);
    assert!(w.is_empty(), "{w:?}");
    let s = s.unwrap();
    assert_eq!(s.name, "good-one");
    assert_eq!(s.base_dir, t.p("skills/good-one"));
    assert!(!s.disable_model_invocation);

    let bad = t.write("skills/Bad_Dir/SKILL.md", &skill_md("-Bad--Name", "ok"));
    let (s, w) = skills::load_skill_file(&bad);
    assert!(s.is_some(), "violations warn but still load");
    assert!(w.iter().all(|m| m.starts_with(&bad.display().to_string())));
    assert!(w
        .iter()
        .any(|m| m.contains("does not match parent directory")));
    assert!(w.iter().any(|m| m.contains("invalid characters")));
    assert!(w.iter().any(|m| m.contains("start or end with a hyphen")));
    assert!(w.iter().any(|m| m.contains("consecutive hyphens")));

    let nodesc = t.write("skills/nodesc/SKILL.md", "---\nname: nodesc\n---\nbody");
    let (s, w) = skills::load_skill_file(&nodesc);
    assert!(s.is_none());
    assert_eq!(
        w,
        [format!("{}: description is required", nodesc.display())]
    );

    // No name in front matter: the directory name is used.
    let unnamed = t.write("skills/unnamed/SKILL.md", "---\ndescription: d\n---\nbody");
    assert_eq!(skills::load_skill_file(&unnamed).0.unwrap().name, "unnamed");
}

#[test]
fn skill_discovery_locations_order_and_collisions() {
    let t = Tree::new("skilldisc");
    let agent = t.p("home/.pi/agent");
    let cwd = t.p("home/repo/pkg");
    std::fs::create_dir_all(t.p("home/repo/.git")).unwrap();
    t.write(
        "home/repo/pkg/.pi/skills/alpha/SKILL.md",
        &skill_md("alpha", "project alpha"),
    );
    t.write(
        "home/repo/pkg/.pi/skills/skills.md",
        &skill_md("skills", "root md file"),
    );
    t.write(
        "home/repo/.agents/skills/beta/SKILL.md",
        &skill_md("beta", "agents beta"),
    );
    t.write(
        "home/repo/.agents/skills/loose.md",
        &skill_md("loose", "ignored root md"),
    );
    t.write(
        "home/.agents/skills/gamma/SKILL.md",
        &skill_md("gamma", "user agents gamma"),
    );
    t.write(
        "home/.pi/agent/skills/alpha/SKILL.md",
        &skill_md("alpha", "user alpha"),
    );
    t.write(
        "home/.pi/agent/skills/delta/SKILL.md",
        &skill_md("delta", "user delta"),
    );
    t.write(
        "home/.pi/agent/skills/delta/nested/SKILL.md",
        &skill_md("nested", "not scanned"),
    );
    t.write(
        "home/.pi/agent/skills/node_modules/x/SKILL.md",
        &skill_md("x", "skipped"),
    );
    t.write("home/.pi/agent/skills/.gitignore", "ignored-dir/\n");
    t.write(
        "home/.pi/agent/skills/ignored-dir/SKILL.md",
        &skill_md("ignored-dir", "skipped"),
    );
    // Above the git root: not searched.
    t.write(".agents/skills/zeta/SKILL.md", &skill_md("zeta", "z"));
    let extra = t.write("extra/epsilon/SKILL.md", &skill_md("epsilon", "explicit"));

    let home = t.p("home");
    let paths = vec![extra.display().to_string()];
    let src = skills::SkillSources {
        agent_dir: &agent,
        cwd: &cwd,
        home: Some(&home),
        paths: &paths,
        discover: true,
    };
    let loaded = skills::load(&src, &scope(&t, &cwd, true));
    let got: Vec<(&str, &str)> = loaded
        .skills
        .iter()
        .map(|s| (s.name.as_str(), s.description.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("alpha", "project alpha"),
            ("skills", "root md file"),
            ("beta", "agents beta"),
            ("delta", "user delta"),
            ("gamma", "user agents gamma"),
            ("epsilon", "explicit"),
        ]
    );
    let collision: Vec<_> = loaded
        .warnings
        .iter()
        .filter(|w| w.contains("already taken"))
        .collect();
    assert_eq!(collision.len(), 1, "{:?}", loaded.warnings);
    assert!(collision[0].contains(&agent.join("skills/alpha/SKILL.md").display().to_string()));

    // Untrusted: project `.pi/skills` and `.agents/skills` are skipped; user ones stay.
    let loaded = skills::load(&src, &scope(&t, &cwd, false));
    let names: Vec<_> = loaded.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["alpha", "delta", "gamma", "epsilon"]);
    assert_eq!(loaded.skills[0].description, "user alpha");
    assert_eq!(loaded.skipped.len(), 3);

    // --no-skills keeps only --skill paths.
    let src = skills::SkillSources {
        discover: false,
        ..src
    };
    let names: Vec<_> = skills::load(&src, &scope(&t, &cwd, true))
        .skills
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["epsilon"]);
}

fn skill(name: &str, desc: &str, path: &str, hidden: bool) -> Skill {
    Skill {
        name: name.into(),
        description: desc.into(),
        file_path: PathBuf::from(path),
        base_dir: PathBuf::from(path).parent().unwrap().to_path_buf(),
        disable_model_invocation: hidden,
    }
}

#[test]
fn skills_block_escapes_and_hides_disabled() {
    let list = [
        skill(
            "a&b",
            "Use <when> \"quoted\" & 'single'",
            "/s/a&b/SKILL.md",
            false,
        ),
        skill("hidden", "never listed", "/s/hidden/SKILL.md", true),
    ];
    let block = skills::format_for_prompt(&list, "read");
    assert!(block.contains("with the read tool"));
    assert!(skills::format_for_prompt(&list, "bash").contains("with bash"));
    assert!(block.contains(
        "<available_skills>\n  <skill>\n    <name>a&amp;b</name>\n    <description>Use &lt;when&gt; &quot;quoted&quot; &amp; &apos;single&apos;</description>\n    <location>/s/a&amp;b/SKILL.md</location>\n  </skill>\n</available_skills>"
    ));
    assert!(block.ends_with("</available_skills>"));
    assert!(!block.contains("hidden"));
    assert_eq!(skills::format_for_prompt(&list[1..], "read"), "");
}

#[test]
fn skill_command_expansion() {
    let t = Tree::new("skillexp");
    let path = t.write(
        "skills/deploy/SKILL.md",
        "---\nname: deploy\ndescription: d\ndisable-model-invocation: true\n---\n\nStep one.\nSee ./ref.md\n\n",
    );
    let (s, _) = skills::load_skill_file(&path);
    let list = [s.unwrap()];
    assert!(list[0].disable_model_invocation);
    let dir = t.p("skills/deploy");
    let block = format!(
        "<skill name=\"deploy\" location=\"{}\">\nReferences are relative to {}.\n\nStep one.\nSee ./ref.md\n</skill>",
        path.display(),
        dir.display()
    );
    assert_eq!(skills::expand_command("/skill:deploy", &list), block);
    assert_eq!(
        skills::expand_command("/skill:deploy  to prod  ", &list),
        format!("{block}\n\nto prod")
    );
    assert_eq!(
        skills::expand_command("/skill:nope x", &list),
        "/skill:nope x"
    );
    assert_eq!(
        skills::expand_command("hi /skill:deploy", &list),
        "hi /skill:deploy"
    );
}

#[test]
fn template_arguments_every_form() {
    let args = templates::parse_args("a 'b c'  \"d e\"\tf");
    assert_eq!(args, ["a", "b c", "d e", "f"]);
    let s = |c: &str| templates::substitute_args(c, &args);
    assert_eq!(s("$1|$2|$4|$5|$10"), "a|b c|f||");
    assert_eq!(s("${@:2}"), "b c d e f");
    assert_eq!(s("${@:0}"), "a b c d e f");
    assert_eq!(s("${@:2:2}"), "b c d e");
    assert_eq!(s("${@:9}|${@:3:0}|${@:x}"), "||${@:x}");
    assert_eq!(s("$ARGUMENTS / $@"), "a b c d e f / a b c d e f");
    assert_eq!(s("{{var}} $"), "{{var}} $");
    // Positional values are not rescanned for `$<digit>`.
    let tricky = vec!["$2".to_string(), "x".to_string()];
    assert_eq!(templates::substitute_args("$1 $2", &tricky), "$2 x");
    // pi 1.x: defaults for an empty value, one pass so no value is rescanned.
    assert_eq!(s("${1:-x} ${9:-seven} ${@:-none}"), "a seven a b c d e f");
    assert_eq!(
        s("${0:-zero} ${ARGUMENTS:-x} ${1:-open"),
        "zero a b c d e f ${1:-open"
    );
    let none: Vec<String> = Vec::new();
    assert_eq!(
        templates::substitute_args("Focus on ${1:-correctness, security}. ${@:-all}", &none),
        "Focus on correctness, security. all"
    );
    let tricky = vec!["$ARGUMENTS ${@:1}".to_string()];
    assert_eq!(
        templates::substitute_args("$1|$@", &tricky),
        "$ARGUMENTS ${@:1}|$ARGUMENTS ${@:1}"
    );
    // Found by the fuzzer: text that is not ASCII around the placeholders.
    assert_eq!(s("Café ✓ $1 ${@:2:1} ${@:1"), "Café ✓ a b c ${@:1");
}

#[test]
fn template_loading_and_expansion() {
    let t = Tree::new("tpl");
    let agent = t.p("home/.pi/agent");
    let cwd = t.p("home/proj");
    t.write(
        "home/proj/.pi/prompts/review.md",
        "---\ndescription: Review code\nargument-hint: <file>\n---\nReview $1 then ${@:2}.",
    );
    t.write(
        "home/.pi/agent/prompts/review.md",
        "Global review that loses the collision",
    );
    let long = "x".repeat(70);
    t.write(
        "home/.pi/agent/prompts/long.md",
        &format!("\n\n{long}\nmore"),
    );
    t.write(
        "home/.pi/agent/prompts/sub/deep.md",
        "not loaded: not recursive",
    );
    let paths = vec![];
    let src = templates::TemplateSources {
        agent_dir: &agent,
        cwd: &cwd,
        paths: &paths,
        discover: true,
    };
    let loaded = templates::load(&src, &scope(&t, &cwd, true));
    let names: Vec<_> = loaded.templates.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["review", "long"]);
    assert_eq!(loaded.templates[0].description, "Review code");
    assert_eq!(loaded.templates[0].argument_hint.as_deref(), Some("<file>"));
    assert_eq!(
        loaded.templates[1].description,
        format!("{}...", &long[..60])
    );
    assert_eq!(loaded.warnings.len(), 1);
    assert!(loaded.warnings[0].contains("\"/review\""));

    let list: &[Template] = &loaded.templates;
    assert_eq!(
        templates::expand("/review main.rs \"the tests\" docs", list),
        "Review main.rs then the tests docs."
    );
    assert_eq!(templates::expand("/review", list), "Review  then .");
    assert_eq!(templates::expand("/unknown a", list), "/unknown a");
    assert_eq!(templates::expand(" /review a", list), " /review a");

    let untrusted = templates::load(&src, &scope(&t, &cwd, false));
    let review = untrusted.templates.iter().find(|t| t.name == "review");
    assert_eq!(
        review.unwrap().content,
        "Global review that loses the collision"
    );
    assert_eq!(untrusted.skipped, [cwd.join(".pi/prompts/review.md")]);
}

#[test]
fn trust_store_records_and_keeps_unknown_content() {
    let t = Tree::new("trust");
    let agent = t.p("agent");
    t.write(
        "agent/trust.json",
        "{\"/other\": false, \"note\": {\"keep\": 1}}",
    );
    let mut store = TrustStore::load(&agent);
    assert_eq!(store.decision(Path::new("/other/sub")), Some(false));
    assert_eq!(store.decision(&t.p("proj")), None);
    store.record(&t.p("proj"), true).unwrap();
    let again = TrustStore::load(&agent);
    assert_eq!(again.decision(&t.p("proj/deeper")), Some(true));
    assert_eq!(again.map["note"]["keep"], 1);
    assert_eq!(again.map["/other"], false);

    // A broken file is reported and never overwritten.
    t.write("agent/trust.json", "{broken");
    let mut broken = TrustStore::load(&agent);
    assert!(broken.warning.is_some());
    assert!(broken.record(&t.p("proj"), true).is_err());
    assert_eq!(
        std::fs::read_to_string(t.p("agent/trust.json")).unwrap(),
        "{broken"
    );
}

#[test]
fn project_scope_classifies_directories() {
    let t = Tree::new("scope");
    let cwd = t.p("home/a/b");
    let s = scope(&t, &cwd, false);
    assert!(s.is_project_dir(&cwd));
    assert!(s.is_project_dir(&t.p("home/a")));
    assert!(s.is_project_dir(&t.p("home/a/b/c")));
    // $HOME's own `.agents/skills` are the user's; ancestors above it are not exempt (pi).
    assert!(!s.is_project_dir(&t.p("home")));
    assert!(s.is_project_dir(&t.0));
    assert!(!s.is_project_dir(&t.p("elsewhere")));
    assert!(!s.is_project_dir(&t.p("home/.pi/agent")));
    assert!(!s.allows(&cwd));
    assert!(s.allows(&t.p("home")));
    assert!(scope(&t, &cwd, true).allows(&cwd));
}

#[test]
fn loader_expands_skill_then_template() {
    let t = Tree::new("loader");
    let agent = t.p("home/.pi/agent");
    let cwd = t.p("home/proj");
    t.write(
        "home/.pi/agent/skills/fmt/SKILL.md",
        &skill_md("fmt", "Formats"),
    );
    t.write("home/.pi/agent/prompts/tpl.md", "A=$1 B=$2");
    t.write("home/proj/.pi/settings.json", "{}");
    let r = Resources::load(
        &agent,
        &cwd,
        &ResourceOptions::default(),
        &scope(&t, &cwd, true),
    );
    assert_eq!(r.expand_input("/tpl a b"), "A=a B=b");
    assert!(r
        .expand_input("/skill:fmt go")
        .starts_with("<skill name=\"fmt\""));
    assert_eq!(r.expand_input("plain /tpl"), "plain /tpl");
    let untrusted = Resources::load(
        &agent,
        &cwd,
        &ResourceOptions::default(),
        &scope(&t, &cwd, false),
    );
    assert_eq!(untrusted.skipped, [cwd.join(".pi/settings.json")]);
}
