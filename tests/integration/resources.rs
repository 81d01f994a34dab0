//! Project resources in a print run, with pi 1.x's project trust: AGENTS.md always reaches
//! the model; a project skill and prompt template only once the folder is trusted — by
//! `-a/--approve` (this run only), a saved decision in trust.json, or
//! `defaultProjectTrust: "always"`. Print mode skips untrusted resources without a word.

use crate::support::{MockServer, PiCommand, Reply};

const API: &str = "openai-completions";

fn project(mock: &MockServer) -> PiCommand {
    PiCommand::for_mock(API, mock)
        .write_file("AGENTS.md", "Always answer in haiku.")
        .write_file(
            ".pi/skills/lint-fix/SKILL.md",
            "---\nname: lint-fix\ndescription: Fix <lint> errors & warnings\n---\nRun the linter.\n",
        )
        .write_file(".pi/prompts/tpl.md", "First=$1 Second=$2 All=$@")
}

#[test]
fn approved_project_sends_context_skills_and_expands_templates() {
    let mock = MockServer::with_replies([
        Reply::text(API, "ok"),
        Reply::text(API, "ok"),
        Reply::text(API, "ok"),
        Reply::text(API, "ok"),
    ]);
    let cmd = project(&mock);
    let out = cmd
        .again()
        .args(["--model", "mock/mock-model", "-a", "-p", "/tpl a b"])
        .run();
    out.assert_code(0).assert_no_panic();
    let req = &mock.requests()[0];
    let body = req.body_text();
    assert!(body.contains("<project_context>"), "{body}");
    assert!(body.contains("Always answer in haiku."), "{body}");
    assert!(body.contains("<available_skills>"), "{body}");
    assert!(body.contains("<name>lint-fix</name>"), "{body}");
    assert!(
        body.contains("Fix &lt;lint&gt; errors &amp; warnings"),
        "{body}"
    );
    assert_eq!(
        req.last_user_text().as_deref(),
        Some("First=a Second=b All=a b")
    );
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    // `-a` trusts for this process only; saving is `/trust`'s job.
    assert!(!cmd.agent_dir().join("trust.json").exists());

    // A saved decision for the folder (or a parent) trusts later runs without a flag.
    let parent = cmd.cwd().parent().unwrap().display().to_string();
    let cmd = cmd.write_agent_file("trust.json", &format!("{{\"{parent}\": true}}"));
    let out = cmd
        .again()
        .args(["--model", "mock/mock-model", "-p", "/skill:lint-fix now"])
        .run();
    out.assert_code(0);
    let text = mock.requests()[1].last_user_text().unwrap();
    assert!(text.starts_with("<skill name=\"lint-fix\""), "{text}");
    assert!(text.ends_with("Run the linter.\n</skill>\n\nnow"), "{text}");

    // `-na` beats the saved decision.
    cmd.again()
        .args(["--model", "mock/mock-model", "-na", "-p", "/tpl a b"])
        .run()
        .assert_code(0);
    assert_eq!(
        mock.requests()[2].last_user_text().as_deref(),
        Some("/tpl a b")
    );

    // defaultProjectTrust "always" (global settings) trusts a folder nobody decided on.
    let cmd = cmd
        .write_agent_file("trust.json", "{}")
        .write_agent_file("settings.json", r#"{"defaultProjectTrust":"always"}"#);
    cmd.again()
        .args(["--model", "mock/mock-model", "-p", "/tpl a b"])
        .run()
        .assert_code(0);
    assert_eq!(
        mock.requests()[3].last_user_text().as_deref(),
        Some("First=a Second=b All=a b")
    );
}

#[test]
fn untrusted_projects_still_send_agents_md_and_skip_the_rest_silently() {
    let mock = MockServer::with_replies([Reply::text(API, "ok"), Reply::text(API, "ok")]);
    let cmd = project(&mock);
    let out = cmd
        .again()
        .args(["--model", "mock/mock-model", "-p", "/tpl a b"])
        .run();
    out.assert_code(0).assert_no_panic();
    let req = &mock.requests()[0];
    let body = req.body_text();
    // pi (every version): context files load whatever the trust decision.
    assert!(body.contains("Always answer in haiku."), "{body}");
    assert!(!body.contains("lint-fix"), "{body}");
    assert_eq!(req.last_user_text().as_deref(), Some("/tpl a b"));
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    assert!(!cmd.agent_dir().join("trust.json").exists());

    // A project-level defaultProjectTrust is not honoured (global only), and `never` skips.
    let cmd = cmd
        .write_file(".pi/settings.json", r#"{"defaultProjectTrust":"always"}"#)
        .write_agent_file("settings.json", r#"{"defaultProjectTrust":"never"}"#);
    let out = cmd
        .again()
        .args(["--model", "mock/mock-model", "-p", "/tpl a b"])
        .run();
    out.assert_code(0);
    assert_eq!(
        mock.requests()[1].last_user_text().as_deref(),
        Some("/tpl a b")
    );
    assert!(mock.requests()[1].body_text().contains("haiku"));
}

/// Broken resources are skipped and the run goes on: a malformed global settings.json (named
/// on stderr), a skill with bad frontmatter next to a good one (named on stderr too: pi keeps
/// quiet outside interactive mode, we report every skipped resource, issue 35), and a template called with fewer arguments than it uses (missing ones
/// expand to nothing, as in pi).
#[test]
fn broken_resources_warn_with_their_file_and_the_rest_keeps_working() {
    let mock = MockServer::with_replies([Reply::text(API, "ok")]);
    let cmd = PiCommand::for_mock(API, &mock)
        .write_agent_file("settings.json", "{\"theme\": \"dark\",")
        .write_agent_file("skills/bad/SKILL.md", "---\nname: Bad Name!\n---\nbody\n")
        .write_agent_file(
            "skills/good/SKILL.md",
            "---\nname: good\ndescription: A working skill\n---\nDo good.\n",
        )
        .write_agent_file("prompts/tpl.md", "First=$1 Second=$2 Rest=${@:3}.");
    let out = cmd
        .again()
        .args(["--model", "mock/mock-model", "-p", "/tpl one"])
        .run();
    out.assert_code(0).assert_no_panic();
    assert_eq!(out.stdout.trim(), "ok");
    let settings = cmd.agent_dir().join("settings.json");
    let bad_skill = cmd.agent_dir().join("skills/bad/SKILL.md");
    assert!(
        out.stderr.contains(&settings.display().to_string()),
        "no warning naming {}: {}",
        settings.display(),
        out.stderr
    );
    assert!(
        out.stderr.contains(&format!(
            "Warning: {}: description is required",
            bad_skill.display()
        )),
        "{}",
        out.stderr
    );
    let req = &mock.requests()[0];
    assert_eq!(
        req.last_user_text().as_deref(),
        Some("First=one Second= Rest=.")
    );
    let body = req.body_text();
    assert!(body.contains("<name>good</name>"), "{body}");
    assert!(!body.contains("Bad Name!"), "{body}");
    // The broken settings file is left exactly as it was.
    assert_eq!(
        std::fs::read_to_string(settings).unwrap(),
        "{\"theme\": \"dark\","
    );
}

/// Interactive mode in a folder nobody decided on: AGENTS.md is listed and sent, the project
/// extension does not start, and the skip is told inside the TUI (stderr would be erased by
/// the first frame). `--verbose` shows the listing even with `quietStartup`.
#[test]
fn interactive_untrusted_folder_lists_agents_md_and_says_what_it_skipped() {
    use std::time::Duration;
    let mock = MockServer::with_replies([Reply::text(API, "reply-from-mock")]);
    let pi = project(&mock)
        .write_agent_file("settings.json", r#"{"quietStartup":true}"#)
        .write_file(
            ".pi/extensions/marker/extension",
            "#!/bin/sh\ntouch started\n",
        );
    let ext = pi.cwd().join(".pi/extensions/marker/extension");
    std::fs::set_permissions(&ext, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut child = crate::support::pty::PtyChild::spawn(
        pi.again()
            .args(["--model", "mock/mock-model", "--verbose"])
            .command(),
        120,
        30,
    );
    // No decision yet (`defaultProjectTrust: ask`): pi asks first; Escape trusts nothing.
    child.wait_for("Trust project folder?", Duration::from_secs(10));
    child.send("\x1b");
    child.wait_for("AGENTS.md", Duration::from_secs(10));
    child.wait_for("This project is not trusted", Duration::from_secs(5));
    child.send("hi\r");
    child.wait_for("reply-from-mock", Duration::from_secs(10));
    child.send("\x04");
    child.wait_exit(Duration::from_secs(10));
    assert!(mock
        .single_request()
        .body_text()
        .contains("Always answer in haiku."));
    assert!(
        !pi.cwd().join("started").exists(),
        "untrusted project code ran"
    );
}
