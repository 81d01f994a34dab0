//! `pi install | remove | update | list` with local, git and npm packages, and what an
//! installed package brings to a print run: its skill in the system prompt and its prompt
//! template as a `/command`. Git packages come from a bare repository made here (reached
//! through git's `insteadOf`, so pi sees an ordinary https source); npm is a fake
//! `npmCommand` script that records its arguments. Nothing touches the network.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{MockServer, PiCommand, Reply, TestDir};

const API: &str = "openai-completions";

/// Writes a package with a `pi` manifest, one skill and one prompt template into `dir`.
fn write_package(dir: &Path, skill: &str, template_body: &str) {
    let files = [
        (
            "package.json",
            r#"{"name":"demo","version":"1.0.0","keywords":["pi-package"],
"pi":{"skills":["./skills"],"prompts":["./prompts"]}}"#
                .to_string(),
        ),
        (
            &*format!("skills/{skill}/SKILL.md"),
            format!("---\nname: {skill}\ndescription: Packaged skill {skill}\n---\nDo it.\n"),
        ),
        ("prompts/pkgtpl.md", template_body.to_string()),
    ]
    .map(|(rel, text)| (rel.to_string(), text));
    for (rel, text) in files {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

/// A `-p` run whose request the mock records; returns the system prompt and the user text.
fn ask(cmd: &PiCommand, mock: &MockServer, extra: &[&str], prompt: &str) -> (String, String) {
    mock.push(Reply::text(API, "ok"));
    let before = mock.requests().len();
    let out = cmd
        .again()
        .args(["--model", "mock/mock-model"])
        .args(extra.iter().copied())
        .args(["-p", prompt])
        .run();
    out.assert_code(0).assert_no_panic();
    let req = &mock.requests()[before];
    (req.body_text(), req.last_user_text().unwrap_or_default())
}

fn settings(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn local_package_installs_globally_loads_lists_and_removes() {
    let mock = MockServer::start();
    let cmd = PiCommand::for_mock(API, &mock);
    let pkg = TestDir::new("pkg");
    write_package(pkg.path(), "pkg-skill", "From package: $1");
    let source = pkg.path().to_string_lossy().into_owned();

    let out = cmd.again().args(["install", &source]).run();
    out.assert_code(0);
    assert_eq!(
        out.stdout,
        format!("Installing {source}...\nInstalled {source}\n")
    );
    // Recorded relative to the agent dir, next to the settings already there.
    let recorded = settings(&cmd.agent_dir().join("settings.json"));
    let expected = pathdiff(pkg.path(), cmd.agent_dir());
    assert_eq!(recorded["packages"], serde_json::json!([expected]));
    assert_eq!(recorded["retry"]["baseDelayMs"], 20);

    let (body, user) = ask(&cmd, &mock, &[], "/pkgtpl hello");
    assert!(body.contains("<name>pkg-skill</name>"), "{body}");
    assert_eq!(user, "From package: hello");

    let out = cmd.again().arg("list").run();
    out.assert_code(0);
    assert_eq!(
        out.stdout,
        format!("User packages:\n  {expected}\n    {source}\n")
    );

    // Installing again changes nothing.
    cmd.again().args(["install", &source]).run().assert_code(0);
    let recorded = settings(&cmd.agent_dir().join("settings.json"));
    assert_eq!(recorded["packages"].as_array().unwrap().len(), 1);

    let out = cmd.again().args(["remove", &source]).run();
    out.assert_code(0);
    assert_eq!(
        out.stdout,
        format!("Removing {source}...\nRemoved {source}\n")
    );
    let (body, user) = ask(&cmd, &mock, &[], "/pkgtpl hello");
    assert!(!body.contains("pkg-skill"), "{body}");
    assert_eq!(user, "/pkgtpl hello");
    let out = cmd.again().arg("list").run();
    assert_eq!(out.stdout, "No packages installed.\n");

    let out = cmd.again().args(["uninstall", &source]).run();
    out.assert_code(1);
    assert_eq!(
        out.stderr,
        format!("No matching package found for {source}\n")
    );
}

/// `target` relative to `base`, as Node's `path.relative` writes it.
fn pathdiff(target: &Path, base: &Path) -> String {
    let t: Vec<_> = target.components().collect();
    let b: Vec<_> = base.components().collect();
    let common = t.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c.as_os_str());
    }
    out.to_string_lossy().into_owned()
}

#[test]
fn project_package_needs_a_trusted_folder() {
    let mock = MockServer::start();
    let cmd = PiCommand::for_mock(API, &mock);
    let pkg = TestDir::new("pkg");
    write_package(pkg.path(), "team-skill", "Team: $@");
    let source = pkg.path().to_string_lossy().into_owned();

    let out = cmd.again().args(["install", "-l", &source]).run();
    out.assert_code(0);
    let recorded = settings(&cmd.cwd().join(".pi/settings.json"));
    assert_eq!(
        recorded["packages"],
        serde_json::json!([pathdiff(pkg.path(), &cmd.cwd().join(".pi"))])
    );
    let global = settings(&cmd.agent_dir().join("settings.json"));
    assert!(global.get("packages").is_none(), "{global}");

    let (body, user) = ask(&cmd, &mock, &["--no-approve"], "/pkgtpl a b");
    assert!(!body.contains("team-skill"), "{body}");
    assert_eq!(user, "/pkgtpl a b");

    let (body, user) = ask(&cmd, &mock, &["--approve"], "/pkgtpl a b");
    assert!(body.contains("<name>team-skill</name>"), "{body}");
    assert_eq!(user, "Team: a b");

    let out = cmd.again().arg("list").run();
    assert!(
        out.stdout.starts_with("Project packages:\n"),
        "{}",
        out.stdout
    );

    // A global remove does not touch the project entry.
    cmd.again().args(["remove", &source]).run().assert_code(1);
    cmd.again()
        .args(["remove", "--local", &source])
        .run()
        .assert_code(0);
    let recorded = settings(&cmd.cwd().join(".pi/settings.json"));
    assert_eq!(recorded["packages"], serde_json::json!([]));
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A bare repository `<remotes>/team/demo` holding a package, the working copy that pushes
/// to it, and a `PiCommand` whose git reaches it as `https://example.com/team/demo`, with a
/// recording fake npm. Returns (remotes, work, npm log, command).
fn git_setup(mock: &MockServer, skill: &str) -> (TestDir, TestDir, PathBuf, PiCommand) {
    let remotes = TestDir::new("remotes");
    let bare = remotes.join("team/demo");
    std::fs::create_dir_all(&bare).unwrap();
    git(&bare, &["init", "--bare", "-q"]);
    let work = TestDir::new("gitwork");
    git(work.path(), &["init", "-q"]);
    write_package(work.path(), skill, "Version one $1");
    git(work.path(), &["add", "."]);
    git(work.path(), &["commit", "-qm", "one"]);
    push(&work, &remotes);
    // A fake npm stands in for the dependency install git packages with a package.json get.
    let npm_log = remotes.join("npm.log");
    let fake_npm = remotes.write(
        "npm.sh",
        format!("#!/bin/sh\necho \"$PWD $*\" >> '{}'\n", npm_log.display()),
    );
    let cmd = PiCommand::for_mock(API, mock)
        .write_agent_file(
            "settings.json",
            &serde_json::json!({"npmCommand": ["sh", fake_npm]}).to_string(),
        )
        .env("GIT_CONFIG_COUNT", "1")
        .env(
            "GIT_CONFIG_KEY_0",
            format!("url.file://{}/.insteadOf", remotes.path().display()),
        )
        .env("GIT_CONFIG_VALUE_0", "https://example.com/")
        .env("PI_OFFLINE", "");
    (remotes, work, npm_log, cmd)
}

fn push(work: &TestDir, remotes: &TestDir) {
    let bare = remotes.join("team/demo");
    git(
        work.path(),
        &[
            "push",
            "-q",
            &bare.to_string_lossy(),
            "HEAD:refs/heads/main",
        ],
    );
}

#[test]
fn git_package_clones_updates_and_removes() {
    let mock = MockServer::start();
    let (remotes, work, npm_log, cmd) = git_setup(&mock, "git-skill");
    let source = "git:example.com/team/demo";

    let out = cmd.again().args(["install", source]).run();
    out.assert_code(0);
    assert!(
        out.stdout
            .ends_with("Installed git:example.com/team/demo\n"),
        "{}",
        out.stdout
    );
    let checkout = cmd.agent_dir().join("git/example.com/team/demo");
    assert!(checkout.join("skills/git-skill/SKILL.md").is_file());
    assert_eq!(
        std::fs::read_to_string(cmd.agent_dir().join("git/.gitignore")).unwrap(),
        "*\n!.gitignore\n"
    );
    assert_eq!(
        std::fs::read_to_string(&npm_log).unwrap(),
        format!("{} install\n", checkout.display())
    );
    assert_eq!(
        settings(&cmd.agent_dir().join("settings.json"))["packages"],
        serde_json::json!([source])
    );
    let (body, user) = ask(&cmd, &mock, &[], "/pkgtpl x");
    assert!(body.contains("<name>git-skill</name>"), "{body}");
    assert_eq!(user, "Version one x");

    // A new upstream commit arrives with `pi update`.
    std::fs::write(work.join("prompts/pkgtpl.md"), "Version two $1").unwrap();
    git(work.path(), &["commit", "-qam", "two"]);
    push(&work, &remotes);
    let out = cmd.again().args(["update", "--extensions"]).run();
    out.assert_code(0);
    // git's own output (`HEAD is now at …`) shares stdout, as with pi.
    assert!(
        out.stdout.starts_with(&format!("Updating {source}...\n")),
        "{}",
        out.stdout
    );
    // pi 1.x says what changed: the source and the commits before and after.
    let changed = out.stdout.lines().rev().take(2).collect::<Vec<_>>();
    assert!(
        changed[0].starts_with(&format!("  {source} ")),
        "{}",
        out.stdout
    );
    assert!(changed[0].contains(" -> "), "{}", out.stdout);
    assert_eq!(changed[1], "Updated 1 package:", "{}", out.stdout);
    let out = cmd.again().args(["update", "--extensions"]).run();
    out.assert_code(0);
    assert!(
        out.stdout.ends_with("Packages are already up to date\n"),
        "{}",
        out.stdout
    );
    let (_, user) = ask(&cmd, &mock, &[], "/pkgtpl x");
    assert_eq!(user, "Version two x");

    let out = cmd.again().args(["update", "example.com/team/nope"]).run();
    out.assert_code(1);
    assert_eq!(
        out.stderr,
        "Error: No matching package found for example.com/team/nope\n"
    );

    cmd.again().args(["remove", source]).run().assert_code(0);
    assert!(!checkout.exists());
    assert!(!cmd.agent_dir().join("git/example.com").exists());
    let (body, _) = ask(&cmd, &mock, &[], "hi");
    assert!(!body.contains("git-skill"), "{body}");
}

#[test]
fn git_install_failure_is_reported() {
    let cmd = PiCommand::new()
        .env("GIT_CONFIG_COUNT", "1")
        .env(
            "GIT_CONFIG_KEY_0",
            "url.file:///nonexistent-pi-test/.insteadOf",
        )
        .env("GIT_CONFIG_VALUE_0", "https://example.com/")
        .env("PI_OFFLINE", "");
    let out = cmd
        .again()
        .args(["install", "git:example.com/no/repo"])
        .run();
    out.assert_code(1);
    assert!(
        out.stderr
            .contains("Error: git clone https://example.com/no/repo "),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("failed with code 128"),
        "{}",
        out.stderr
    );
    assert!(!cmd.agent_dir().join("settings.json").exists());
}

/// A fake npm: records each call, answers `root -g` and `view`, and lays out
/// `node_modules/<name>` for installs (global root or `--prefix`).
fn fake_npm(dir: &TestDir) -> (PathBuf, PathBuf, PathBuf) {
    let log = dir.join("npm.log");
    let global = dir.join("global/lib/node_modules");
    let skill = "---\nname: npm-skill\ndescription: From npm\n---\nBody\n";
    let script = format!(
        r#"#!/bin/sh
echo "$*" >> '{log}'
case "$1" in
  root) echo '{global}'; exit 0 ;;
  view) echo '"2.0.0"'; exit 0 ;;
  uninstall)
    if [ "$2" = "-g" ]; then rm -rf '{global}'/"$3"; else rm -rf "$4/node_modules/$2"; fi
    exit 0 ;;
  install)
    if [ "$2" = "-g" ]; then root='{global}'; spec="$3"; else root="$4/node_modules"; spec="$2"; fi
    name="${{spec%@*}}"; [ -z "$name" ] && name="$spec"
    mkdir -p "$root/$name/skills/npm-skill"
    printf '{{"name":"%s","version":"1.0.0"}}' "$name" > "$root/$name/package.json"
    printf '%b' '{skill}' > "$root/$name/skills/npm-skill/SKILL.md"
    exit 0 ;;
esac
exit 3
"#,
        log = log.display(),
        global = global.display(),
        skill = skill.replace('\n', "\\n"),
    );
    let path = dir.write("npm.sh", script);
    (path, log, global)
}

#[test]
fn npm_package_uses_npm_command_globally_and_locally() {
    let mock = MockServer::start();
    let tools = TestDir::new("npm");
    let (script, log, global) = fake_npm(&tools);
    let cmd = PiCommand::for_mock(API, &mock)
        .write_agent_file(
            "settings.json",
            &serde_json::json!({"npmCommand": ["sh", script]}).to_string(),
        )
        .env("PI_OFFLINE", "");

    cmd.again()
        .args(["install", "npm:demo-npm"])
        .run()
        .assert_code(0);
    // pi 1.x keeps user packages in a managed npm project in the agent dir, not in npm's
    // global root.
    let managed = cmd.agent_dir().join("npm");
    assert!(managed
        .join("node_modules/demo-npm/skills/npm-skill/SKILL.md")
        .is_file());
    assert!(!global.join("demo-npm").exists());
    assert_eq!(
        std::fs::read_to_string(managed.join(".gitignore")).unwrap(),
        "*\n!.gitignore\n"
    );
    let (body, _) = ask(&cmd, &mock, &[], "hi");
    assert!(body.contains("<name>npm-skill</name>"), "{body}");
    let out = cmd.again().arg("list").run();
    assert_eq!(
        out.stdout,
        format!(
            "User packages:\n  npm:demo-npm\n    {}\n",
            managed.join("node_modules/demo-npm").display()
        )
    );

    // Installed 1.0.0, registry says 2.0.0: update reinstalls at @latest (the fake npm
    // installs 1.0.0 again, so nothing changed).
    let out = cmd
        .again()
        .args(["update", "--extension", "npm:demo-npm"])
        .run();
    out.assert_code(0);
    assert!(
        out.stdout.ends_with("npm:demo-npm is already up to date\n"),
        "{}",
        out.stdout
    );

    cmd.again()
        .args(["install", "-l", "npm:local-npm@1.2.3"])
        .run()
        .assert_code(0);
    let prefix = cmd.cwd().join(".pi/npm");
    assert!(prefix.join("node_modules/local-npm/package.json").is_file());
    assert!(prefix.join("package.json").is_file());
    cmd.again()
        .args(["remove", "-l", "npm:local-npm"])
        .run()
        .assert_code(0);
    cmd.again()
        .args(["remove", "npm:demo-npm"])
        .run()
        .assert_code(0);

    let calls = std::fs::read_to_string(&log).unwrap();
    let prefix = prefix.display();
    let user = managed.display();
    let quiet = "--legacy-peer-deps --no-audit --no-fund";
    let expected = [
        format!("install demo-npm --prefix {user} {quiet}"),
        "view demo-npm version --json".into(),
        format!("install demo-npm@latest --prefix {user} {quiet}"),
        format!("install local-npm@1.2.3 --prefix {prefix} {quiet}"),
        format!("uninstall local-npm --prefix {prefix} {quiet}"),
        format!("uninstall demo-npm --prefix {user} {quiet}"),
    ];
    assert_eq!(calls.lines().collect::<Vec<_>>(), expected);
}

#[test]
fn package_commands_reject_bad_usage() {
    let cmd = PiCommand::new();
    let out = cmd.again().args(["install"]).run();
    out.assert_code(1);
    assert_eq!(
        out.stderr,
        "Missing install source.\nUsage: pi install <source> [-l]\n"
    );
    let out = cmd.again().args(["list", "-l"]).run();
    out.assert_code(1);
    assert_eq!(
        out.stderr,
        "Unknown option -l for \"list\".\nUse \"pi --help\" or \"pi list\".\n"
    );
    let out = cmd
        .again()
        .args(["update", "--extension", "a", "--self"])
        .run();
    out.assert_code(1);
    assert!(out
        .stderr
        .starts_with("--extension cannot be combined with --self, --extensions, or --all\n"));
    // pi 1.x: a bare `pi update` updates pi only, and says the extensions were skipped.
    let out = cmd.again().args(["update"]).run();
    assert!(
        out.stdout.starts_with(
            "Extensions are skipped. Run pi update --extensions to update extensions.\n"
        ),
        "{}",
        out.stdout
    );
    assert!(out.stderr.contains("cannot self-update"), "{}", out.stderr);
    let out = cmd.again().args(["update", "--all", "--self"]).run();
    out.assert_code(1);
    assert!(out.stderr.starts_with(
        "--all cannot be combined with --self, --extensions, --models, or --extension\n"
    ));
    let out = cmd.again().args(["install", "./missing"]).run();
    out.assert_code(1);
    assert_eq!(
        out.stderr,
        format!(
            "Error: Path does not exist: {}\n",
            cmd.cwd().join("missing").display()
        )
    );
    let out = cmd.again().args(["remove", "--help"]).run();
    out.assert_code(0);
    assert!(out
        .stdout
        .starts_with("Usage:\n  pi remove <source> [-l]\n"));
    let out = cmd.again().args(["list"]).run();
    out.assert_code(0);
    assert_eq!(out.stdout, "No packages installed.\n");
}

#[test]
fn rpc_commands_name_the_package_a_skill_and_template_came_from() {
    let mock = MockServer::start();
    let cmd = PiCommand::for_mock(API, &mock);
    let pkg = TestDir::new("pkg");
    write_package(pkg.path(), "rpc-skill", "T");
    let source = pkg.path().to_string_lossy().into_owned();
    cmd.again().args(["install", &source]).run().assert_code(0);
    let recorded = pathdiff(pkg.path(), cmd.agent_dir());
    let out = cmd
        .again()
        .args([
            "--model",
            "mock/mock-model",
            "--mode",
            "rpc",
            "--no-session",
        ])
        .stdin("{\"id\":\"1\",\"type\":\"get_commands\"}\n")
        .run();
    out.assert_code(0);
    let lines = out.json_lines();
    let commands = lines[0]["data"]["commands"].as_array().unwrap();
    let skill = commands
        .iter()
        .find(|c| c["name"] == "skill:rpc-skill")
        .unwrap();
    assert_eq!(
        skill["sourceInfo"],
        serde_json::json!({
            "path": pkg.join("skills/rpc-skill/SKILL.md").to_string_lossy(),
            "source": recorded, "scope": "user", "origin": "package",
            "baseDir": source,
        })
    );
    let template = commands.iter().find(|c| c["name"] == "pkgtpl").unwrap();
    assert_eq!(template["sourceInfo"]["origin"], "package");
    assert_eq!(
        template["sourceInfo"]["path"],
        pkg.join("prompts/pkgtpl.md").to_string_lossy().as_ref()
    );
}

#[test]
fn a_configured_git_package_missing_on_disk_is_installed_at_startup() {
    let mock = MockServer::start();
    let (_remotes, _work, _log, cmd) = git_setup(&mock, "auto-skill");
    let cmd = cmd.write_file(
        ".pi/settings.json",
        r#"{"packages":["git:example.com/team/demo"]}"#,
    );
    let (body, _) = ask(&cmd, &mock, &["--approve"], "hi");
    assert!(body.contains("<name>auto-skill</name>"), "{body}");
    assert!(cmd
        .cwd()
        .join(".pi/git/example.com/team/demo/skills/auto-skill/SKILL.md")
        .is_file());
    assert_eq!(
        std::fs::read_to_string(cmd.cwd().join(".pi/git/.gitignore")).unwrap(),
        "*\n!.gitignore\n"
    );
}

#[test]
fn offline_runs_leave_missing_packages_alone() {
    let mock = MockServer::start();
    let (_remotes, _work, _log, cmd) = git_setup(&mock, "auto-skill");
    let cmd = cmd
        .write_agent_file(
            "settings.json",
            r#"{"packages":["git:example.com/team/demo"]}"#,
        )
        .env("PI_OFFLINE", "1");
    mock.push(Reply::text(API, "ok"));
    let out = cmd
        .again()
        .args(["--model", "mock/mock-model", "-p", "hi"])
        .run();
    out.assert_code(0);
    // pi says nothing about it outside interactive mode; we report every skipped resource in
    // every mode (issue 35), on stderr in print mode.
    assert!(
        out.stderr.contains(
            "Warning: Package git:example.com/team/demo is not installed (run `pi install git:example.com/team/demo`)"
        ),
        "{}",
        out.stderr
    );
    assert!(!cmd.agent_dir().join("git").exists());
}

/// A package's extension (here the sh `/greet` example) starts with every run once the
/// package is installed, and stops once it is removed.
#[test]
fn package_extensions_load_until_the_package_is_removed() {
    let mock = MockServer::start();
    let cmd = PiCommand::for_mock(API, &mock);
    let pkg = TestDir::new("extpkg");
    std::fs::write(
        pkg.join("package.json"),
        r#"{"name":"greeter","version":"1.0.0","pi":{"extensions":["./extensions"]}}"#,
    )
    .unwrap();
    let ext = pkg.join("extensions/greet.sh");
    std::fs::create_dir_all(ext.parent().unwrap()).unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/extensions/greet.sh");
    std::fs::copy(example, &ext).unwrap();
    let source = pkg.path().to_string_lossy().into_owned();
    cmd.again().args(["install", &source]).run().assert_code(0);

    let (_, user) = ask(&cmd, &mock, &[], "/greet Ada");
    assert_eq!(user, "Please greet Ada warmly.");

    cmd.again().args(["remove", &source]).run().assert_code(0);
    let (_, user) = ask(&cmd, &mock, &[], "/greet Ada");
    assert_eq!(user, "/greet Ada");
}
