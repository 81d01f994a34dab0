//! Project resources in a print run: AGENTS.md, a project skill and a project prompt template
//! reach the model only once the folder is trusted (`--approve`); otherwise they are ignored
//! and stderr says why.

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
    let mock = MockServer::with_replies([Reply::text(API, "ok"), Reply::text(API, "ok")]);
    let cmd = project(&mock);
    let out = cmd
        .again()
        .args(["--model", "mock/mock-model", "--approve", "-p", "/tpl a b"])
        .run();
    out.assert_code(0).assert_no_panic();
    let req = &mock.requests()[0];
    let body = req.body_text();
    assert!(body.contains("# Project Context"), "{body}");
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
    assert!(
        !out.stderr.contains("not a trusted folder"),
        "{}",
        out.stderr
    );
    let trust = std::fs::read_to_string(cmd.agent_dir().join("trust.json")).unwrap();
    assert!(trust.contains("true"), "{trust}");

    // The decision is remembered: the next run needs no flag and expands `/skill:`.
    let out = cmd
        .again()
        .args(["--model", "mock/mock-model", "-p", "/skill:lint-fix now"])
        .run();
    out.assert_code(0);
    let text = mock.requests()[1].last_user_text().unwrap();
    assert!(text.starts_with("<skill name=\"lint-fix\""), "{text}");
    assert!(text.ends_with("Run the linter.\n</skill>\n\nnow"), "{text}");
}

#[test]
fn untrusted_project_resources_are_ignored_with_a_note() {
    let mock = MockServer::with_replies([Reply::text(API, "ok"), Reply::text(API, "ok")]);
    let cmd = project(&mock);
    let out = cmd
        .again()
        .args(["--model", "mock/mock-model", "-p", "/tpl a b"])
        .run();
    out.assert_code(0).assert_no_panic();
    let req = &mock.requests()[0];
    let body = req.body_text();
    assert!(!body.contains("Always answer in haiku."), "{body}");
    assert!(!body.contains("lint-fix"), "{body}");
    assert_eq!(req.last_user_text().as_deref(), Some("/tpl a b"));
    assert_eq!(
        out.stderr.matches("not a trusted folder").count(),
        1,
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("--approve"), "{}", out.stderr);
    assert!(!cmd.agent_dir().join("trust.json").exists());

    // --no-approve: still ignored, and silent about it.
    let out = cmd
        .again()
        .args(["--model", "mock/mock-model", "--no-approve", "-p", "hi"])
        .run();
    out.assert_code(0);
    assert!(!mock.requests()[1].body_text().contains("haiku"));
    assert!(!out.stderr.contains("trusted"), "{}", out.stderr);
}

/// Broken resources are reported with their file and skipped; the run goes on: a malformed
/// global settings.json, a skill with bad frontmatter next to a good one, and a template
/// called with fewer arguments than it uses (missing ones expand to nothing, as in pi).
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
    for file in [&settings, &bad_skill] {
        assert!(
            out.stderr.contains(&format!("Warning: {}", file.display()))
                || out.stderr.contains(&file.display().to_string()),
            "no warning naming {}: {}",
            file.display(),
            out.stderr
        );
    }
    assert!(
        out.stderr.contains("description is required"),
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
