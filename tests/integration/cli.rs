//! Command-line surface: --help, --list-models, unknown flags, system prompt flags and tool
//! set flags as the model sees them.

use crate::support::{MockServer, PiCommand, Reply};

const API: &str = "openai-completions";

#[test]
fn help_lists_the_flags_and_unknown_flags_are_errors() {
    let out = PiCommand::new().args(["--help"]).run();
    out.assert_code(0);
    // On stdout even when redirected, as pi 1.x prints it.
    let text = out.stdout.clone();
    for flag in [
        "--model <pattern>",
        "--print, -p",
        "--no-tools, -nt",
        "--list-models [search]",
        "--approve",
        // The editors' mode (issue 32), as a subcommand and a --mode value.
        "pi acp [options]",
        "json, rpc, or acp",
    ] {
        assert!(text.contains(flag), "--help mentions {flag}");
    }
    let out = PiCommand::new().args(["-x"]).run();
    out.assert_code(1);
    assert!(
        out.stderr.contains("Error: Unknown option: -x"),
        "{}",
        out.stderr
    );
    let out = PiCommand::new().args(["--frobnicate", "-p", "hi"]).run();
    out.assert_code(1);
    assert!(
        out.stderr.contains("Unknown option: --frobnicate"),
        "{}",
        out.stderr
    );
}

#[test]
fn list_models_shows_configured_models_with_pis_columns() {
    let mock = MockServer::start();
    let pi = PiCommand::for_mock(API, &mock);
    let out = pi.again().args(["--list-models"]).run();
    out.assert_code(0);
    let text = out.stdout.clone();
    let header = text.lines().next().unwrap_or_default();
    for col in [
        "provider", "model", "context", "max-out", "thinking", "images",
    ] {
        assert!(header.contains(col), "{header}");
    }
    assert!(
        text.contains("mock") && text.contains("mock-model") && text.contains("128K"),
        "{text}"
    );
    let filtered = pi
        .again()
        .args(["--list-models", "nothing-like-this"])
        .run();
    assert!(!format!("{}{}", filtered.stdout, filtered.stderr).contains("mock-model"));
    assert_eq!(mock.request_count(), 0);
}

#[test]
fn system_prompt_flags_and_tool_sets_reach_the_request() {
    let mock = MockServer::with_replies([Reply::text(API, "a"), Reply::text(API, "b")]);
    PiCommand::for_mock(API, &mock)
        .args([
            "-p",
            "--system-prompt",
            "You are TESTBOT.",
            "--append-system-prompt",
            "EXTRA RULE",
            "--no-tools",
            "hi",
        ])
        .run()
        .assert_code(0);
    let body = &mock.requests()[0].body;
    let system = body["messages"][0]["content"].as_str().unwrap_or_default();
    assert!(system.starts_with("You are TESTBOT."), "{system}");
    assert!(
        system.contains("<addendum>\nEXTRA RULE\n</addendum>") && system.contains("\n\n<cwd>\n"),
        "{system}"
    );
    assert!(
        body.get("tools").is_none() || body["tools"] == serde_json::json!([]),
        "no tools: {body}"
    );

    let out = PiCommand::for_mock(API, &mock)
        .args(["-p", "--thinking", "enormous", "hi"])
        .run();
    out.assert_code(0);
    assert!(
        out.stderr.contains("Invalid thinking level \"enormous\""),
        "{}",
        out.stderr
    );
    let tools: Vec<String> = mock.requests()[1].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        tools,
        ["read", "bash", "edit", "write"],
        "pi's default tool set"
    );
}

// --- pi 1.x command line -------------------------------------------------------------------

/// Stderr of a run that must fail with exit 1 before any request.
#[track_caller]
fn fails_with(out: &crate::support::Output, text: &str) {
    out.assert_code(1).assert_no_panic();
    assert!(
        out.stderr.contains(text),
        "expected {text:?} in: {}",
        out.stderr
    );
}

#[test]
fn stricter_argument_errors() {
    let pi = PiCommand::new();
    fails_with(
        &pi.again().args(["--mode", "bogus", "-p", "hi"]).run(),
        "Invalid mode \"bogus\". Valid values: text, json, rpc",
    );
    fails_with(
        &pi.again().args(["-p", "hi", "--mode"]).run(),
        "--mode requires text, json, or rpc",
    );
    fails_with(
        &pi.again().args(["--provider", "openai", "-p", "hi"]).run(),
        "--provider requires --model (for example: --provider openai --model <pattern>)",
    );
    fails_with(&pi.again().args(["-pc", "hi"]).run(), "Unknown option: -pc");
    fails_with(
        &pi.again().args(["-p", "hi", "-e"]).run(),
        "Unknown option: -e",
    );
    fails_with(
        &pi.again().args(["-p", "hi", "-n"]).run(),
        "--name requires a value",
    );
    fails_with(
        &pi.again().args(["-p", "hi", "--tools", "read,+ls"]).run(),
        "--tools: tool names cannot be mixed with +name or -name entries",
    );
}

/// pi exits 1 when `--model` names nothing, in every mode (RPC and interactive included).
#[test]
fn an_unknown_model_is_fatal_in_every_mode() {
    let mock = MockServer::start();
    let pi = PiCommand::for_mock(API, &mock);
    for mode in [
        &["-p", "hi"][..],
        &["--mode", "json", "hi"],
        &["--mode", "rpc"],
    ] {
        let out = pi
            .again()
            .args(["--model", "nonexistent"])
            .args(mode.iter().copied())
            .stdin("{\"type\":\"get_state\",\"id\":\"1\"}\n")
            .run();
        fails_with(&out, "Model \"nonexistent\" not found");
        assert!(out.stdout.is_empty(), "{mode:?}: {}", out.stdout);
    }
    let mut child = crate::support::pty::PtyChild::spawn(
        pi.again().args(["--model", "nonexistent"]).command(),
        80,
        24,
    );
    let status = child.wait_exit(std::time::Duration::from_secs(10));
    assert_eq!(status.code(), Some(1), "{}", child.screen());
    assert!(
        child.screen().contains("Model \"nonexistent\" not found"),
        "{}",
        child.screen()
    );
    assert_eq!(mock.request_count(), 0);
}

#[test]
fn a_missing_extension_path_is_fatal() {
    let mock = MockServer::start();
    let pi = PiCommand::for_mock(API, &mock);
    let out = pi.again().args(["-e", "./missing.ts", "-p", "hi"]).run();
    let missing = pi.cwd().join("missing.ts");
    fails_with(
        &out,
        &format!(
            "Error: Failed to load extension \"{0}\": Extension path does not exist: {0}",
            missing.display()
        ),
    );
    assert!(out
        .stderr
        .contains("Hint: Start without extensions using \"pi -ne\"."));
    assert_eq!(mock.request_count(), 0);
    // A file that is no extension at all stops the run too.
    let pi = pi.write_file("notes.txt", "hello");
    fails_with(
        &pi.again().args(["-e", "notes.txt", "-p", "hi"]).run(),
        "Failed to load extension",
    );
}

/// `@file` finds files the way pi's read tool does: macOS screenshot names typed with a plain
/// space, NFC for an NFD name, a straight apostrophe for a curly one, and `~`.
#[test]
fn file_arguments_use_pis_path_fallbacks() {
    let mock = MockServer::with_replies([Reply::text(API, "ok")]);
    let shot = "Screenshot 2024-01-01 at 10.00.00\u{202F}PM.txt";
    let french = "Capture d\u{2019}e\u{0301}cran.txt";
    let pi = PiCommand::for_mock(API, &mock)
        .write_file(shot, "SHOT")
        .write_file(french, "ECRAN");
    std::fs::write(pi.home().join("home-note.txt"), "HOME").unwrap();
    pi.again()
        .args([
            "-p",
            "@Screenshot 2024-01-01 at 10.00.00 PM.txt",
            "@Capture d'\u{e9}cran.txt",
            "@~/home-note.txt",
            "go",
        ])
        .run()
        .assert_code(0);
    let text = mock.single_request().last_user_text().unwrap();
    for (name, body) in [
        (pi.cwd().join(shot), "SHOT"),
        (pi.cwd().join(french), "ECRAN"),
        (pi.home().join("home-note.txt"), "HOME"),
    ] {
        assert!(
            text.contains(&format!(
                "<file name=\"{}\">\n{body}\n</file>",
                name.display()
            )),
            "{text}"
        );
    }
}

#[test]
fn a_reply_cut_at_the_output_limit_is_printed_then_fails() {
    let truncated = crate::support::sse_text(API, "half an ans")
        .replace("\"finish_reason\":\"stop\"", "\"finish_reason\":\"length\"");
    let mock = MockServer::with_replies([Reply::sse(truncated)]);
    let out = PiCommand::for_mock(API, &mock).args(["-p", "hi"]).run();
    out.assert_code(1);
    assert_eq!(out.stdout, "half an ans\n");
    assert!(
        out.stderr
            .contains("Response was truncated: the model reached its output token limit."),
        "{}",
        out.stderr
    );
}

#[test]
fn a_deleted_working_directory_asks_to_cd_somewhere_else() {
    let pi = PiCommand::new();
    let gone = pi.home().join("gone");
    std::fs::create_dir_all(&gone).unwrap();
    let mut cmd = pi.command();
    cmd.current_dir(&gone).arg("--version");
    let path = std::ffi::CString::new(gone.to_string_lossy().as_bytes()).unwrap();
    // SAFETY: runs in the forked child after it changed into `gone`; rmdir(2) is
    // async-signal-safe and `path` outlives the spawn.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || {
            libc::rmdir(path.as_ptr());
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let (status, stderr) = (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("Error: The current working directory no longer exists. Change to an existing directory and try again."),
        "{stderr}"
    );
}

/// pi 1.x refuses `@file` arguments in RPC mode (there is no first message to attach them to).
#[test]
fn at_file_arguments_are_refused_in_rpc_mode() {
    let out = PiCommand::new()
        .write_file("notes.txt", "hello")
        .args(["--mode", "rpc", "@notes.txt"])
        .run();
    out.assert_code(1).assert_no_panic();
    assert_eq!(
        out.stderr,
        "Error: @file arguments are not supported in RPC mode\n"
    );
    assert_eq!(out.stdout, "");
}
