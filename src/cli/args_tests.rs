//! pi-mono's `test/args.test.ts` cases, one for one (where 0.73.1 or 1.x changed a rule, the
//! newer rule is asserted and the case says so), then the rules pi 1.x added.

use super::*;

fn p(s: &[&str]) -> Args {
    parse(&s.iter().map(|s| s.to_string()).collect::<Vec<_>>())
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

// --- pi-mono test/args.test.ts -----------------------------------------------------------

#[test]
fn version_and_help() {
    assert!(p(&["--version"]).version);
    assert!(p(&["-v"]).version);
    let a = p(&["--version", "--help", "some message"]);
    assert!(a.version && a.help);
    assert!(a.messages.contains(&"some message".to_string()));
    assert!(p(&["--help"]).help);
    assert!(p(&["-h"]).help);
}

#[test]
fn switches_and_their_short_forms() {
    assert!(p(&["--print"]).print);
    assert!(p(&["-p"]).print);
    assert!(p(&["--continue"]).continue_session);
    assert!(p(&["-c"]).continue_session);
    assert!(p(&["--resume"]).resume);
    assert!(p(&["-r"]).resume);
    assert!(p(&["--no-session"]).no_session);
    assert!(p(&["--no-extensions"]).no_extensions);
    assert!(p(&["--no-skills"]).no_skills);
    assert!(p(&["--no-prompt-templates"]).no_prompt_templates);
    assert!(p(&["--no-themes"]).no_themes);
    assert!(p(&["--verbose"]).verbose);
    assert!(p(&["--offline"]).offline);
    assert!(p(&["--no-tools"]).no_tools);
    for (short, check) in [
        ("-nt", (|a: &Args| a.no_tools) as fn(&Args) -> bool),
        ("-nbt", |a| a.no_builtin_tools),
        ("-ne", |a| a.no_extensions),
        ("-ns", |a| a.no_skills),
        ("-np", |a| a.no_prompt_templates),
        ("-nc", |a| a.no_context_files),
    ] {
        let a = p(&[short]);
        assert!(check(&a) && a.errors.is_empty(), "{short}: {a:?}");
    }
}

#[test]
fn flags_with_values() {
    assert_eq!(
        p(&["--provider", "openai"]).provider.as_deref(),
        Some("openai")
    );
    assert_eq!(p(&["--model", "gpt-4o"]).model.as_deref(), Some("gpt-4o"));
    assert_eq!(
        p(&["--api-key", "sk-test-key"]).api_key.as_deref(),
        Some("sk-test-key")
    );
    assert_eq!(
        p(&["--system-prompt", "You are a helpful assistant"])
            .system_prompt
            .as_deref(),
        Some("You are a helpful assistant")
    );
    // pi-mono's 0.58 test expects a string; since 0.6x the flag repeats into a list.
    assert_eq!(
        p(&["--append-system-prompt", "Additional context"]).append_system_prompt,
        ["Additional context"]
    );
    assert_eq!(p(&["--mode", "json"]).mode, Some(Mode::Json));
    assert_eq!(p(&["--mode", "rpc"]).mode, Some(Mode::Rpc));
    assert_eq!(p(&["--mode", "acp"]).mode, Some(Mode::Acp));
    assert_eq!(
        p(&["--session", "/path/to/session.jsonl"])
            .session
            .as_deref(),
        Some("/path/to/session.jsonl")
    );
    assert_eq!(
        p(&["--export", "session.jsonl"]).export.as_deref(),
        Some("session.jsonl")
    );
    assert_eq!(
        p(&["--thinking", "high"]).thinking,
        Some(ThinkingLevel::High)
    );
    assert_eq!(
        p(&["--models", "gpt-4o,claude-sonnet,gemini-pro"]).models,
        ["gpt-4o", "claude-sonnet", "gemini-pro"]
    );
}

#[test]
fn repeatable_resource_flags() {
    assert_eq!(
        p(&["--extension", "./my-extension.ts"]).extensions,
        ["./my-extension.ts"]
    );
    assert_eq!(
        p(&["-e", "./my-extension.ts"]).extensions,
        ["./my-extension.ts"]
    );
    assert_eq!(
        p(&["--extension", "./ext1.ts", "-e", "./ext2.ts"]).extensions,
        ["./ext1.ts", "./ext2.ts"]
    );
    let a = p(&["--no-extensions", "-e", "foo.ts", "-e", "bar.ts"]);
    assert!(a.no_extensions);
    assert_eq!(a.extensions, ["foo.ts", "bar.ts"]);
    assert_eq!(p(&["--skill", "./skill-dir"]).skills, ["./skill-dir"]);
    assert_eq!(
        p(&["--skill", "./skill-a", "--skill", "./skill-b"]).skills,
        ["./skill-a", "./skill-b"]
    );
    assert_eq!(
        p(&["--prompt-template", "./prompts"]).prompt_templates,
        ["./prompts"]
    );
    assert_eq!(
        p(&["--prompt-template", "./one", "--prompt-template", "./two"]).prompt_templates,
        ["./one", "./two"]
    );
    assert_eq!(p(&["--theme", "./theme.json"]).themes, ["./theme.json"]);
    assert_eq!(
        p(&["--theme", "./dark.json", "--theme", "./light.json"]).themes,
        ["./dark.json", "./light.json"]
    );
    let a = p(&["--no-tools", "--tools", "read,bash"]);
    assert!(a.no_tools);
    assert_eq!(a.tools, Some(strings(&["read", "bash"])));
}

#[test]
fn messages_and_file_args() {
    assert_eq!(p(&["hello", "world"]).messages, ["hello", "world"]);
    assert_eq!(
        p(&["@README.md", "@src/main.ts"]).file_args,
        ["README.md", "src/main.ts"]
    );
    let a = p(&["@file.txt", "explain this", "@image.png"]);
    assert_eq!(a.file_args, ["file.txt", "image.png"]);
    assert_eq!(a.messages, ["explain this"]);
    // pi-mono's 0.58 test "ignores unknown flags": since 0.6x an unknown long option takes the
    // following word as its value, for the extension that registers it.
    let a = p(&["--unknown-flag", "message"]);
    assert!(a.messages.is_empty());
    assert_eq!(
        a.unknown_flags,
        [("unknown-flag".to_string(), Some("message".to_string()))]
    );
}

#[test]
fn many_flags_together() {
    let a = p(&[
        "--provider",
        "anthropic",
        "--model",
        "claude-sonnet",
        "--print",
        "--thinking",
        "high",
        "@prompt.md",
        "Do the task",
    ]);
    assert_eq!(a.provider.as_deref(), Some("anthropic"));
    assert_eq!(a.model.as_deref(), Some("claude-sonnet"));
    assert!(a.print);
    assert_eq!(a.thinking, Some(ThinkingLevel::High));
    assert_eq!(a.file_args, ["prompt.md"]);
    assert_eq!(a.messages, ["Do the task"]);
    assert!(a.errors.is_empty() && a.warnings.is_empty());
}

// --- pi 0.73.1 and 1.x rules --------------------------------------------------------------

#[test]
fn print_takes_the_next_word_unless_it_is_an_option_or_file() {
    let a = p(&["-p", "hello", "world"]);
    assert!(a.print);
    assert_eq!(a.messages, ["hello", "world"]);
    let a = p(&["-p", "--model", "x"]);
    assert!(a.messages.is_empty());
    assert_eq!(a.model.as_deref(), Some("x"));
    assert_eq!(p(&["-p", "---dash"]).messages, ["---dash"]);
    let a = p(&["-p", "@f.md", "go"]);
    assert_eq!(
        (a.file_args, a.messages),
        (strings(&["f.md"]), strings(&["go"]))
    );
}

#[test]
fn value_flags_take_the_next_argument_whatever_it_is() {
    assert_eq!(p(&["--model", "-p"]).model.as_deref(), Some("-p"));
    assert_eq!(p(&["-e", "--"]).extensions, ["--"]);
    let a = p(&["-t", "read, grep,", "msg"]);
    assert_eq!(a.tools, Some(strings(&["read", "grep"])));
    assert_eq!(a.messages, ["msg"]);
    // With nothing left, pi reports the flag as an option it does not know.
    assert_eq!(p(&["--model"]).errors, ["Unknown option: --model"]);
    assert_eq!(p(&["-p", "-e"]).errors, ["Unknown option: -e"]);
    assert_eq!(p(&["--thinking"]).errors, ["Unknown option: --thinking"]);
    // Our one extension: `--flag=value` works for pi's own flags too.
    assert_eq!(
        p(&["--model=openai/gpt-4o"]).model.as_deref(),
        Some("openai/gpt-4o")
    );
}

#[test]
fn mode_must_be_given_and_valid() {
    assert_eq!(
        p(&["--mode"]).errors,
        ["--mode requires text, json, or rpc"]
    );
    let a = p(&["--mode", "-p", "hi"]);
    assert_eq!(a.errors, ["--mode requires text, json, or rpc"]);
    assert!(a.print, "the option after --mode is still read");
    assert_eq!(
        p(&["--mode", "bogus"]).errors,
        ["Invalid mode \"bogus\". Valid values: text, json, rpc"]
    );
    assert_eq!(p(&["--mode", "text"]).mode, Some(Mode::Text));
}

#[test]
fn unknown_options() {
    assert_eq!(p(&["-x"]).errors, ["Unknown option: -x"]);
    assert_eq!(p(&["-xy"]).errors, ["Unknown option: -xy"]);
    assert_eq!(p(&["-"]).errors, ["Unknown option: -"]);
    // Short options are whole words: `-e=x` is not `-e x`, `-pc` is not `-p -c`.
    assert_eq!(p(&["-e=x"]).errors, ["Unknown option: -e=x"]);
    assert_eq!(p(&["-pc"]).errors, ["Unknown option: -pc"]);
    let a = p(&["--plan", "--foo=bar", "--baz", "val", "msg", "--qux", "@f"]);
    assert_eq!(
        a.unknown_flags,
        [
            ("plan".to_string(), None),
            ("foo".to_string(), Some("bar".to_string())),
            ("baz".to_string(), Some("val".to_string())),
            ("qux".to_string(), None),
        ]
    );
    assert_eq!(a.messages, ["msg"]);
    assert_eq!(a.file_args, ["f"]);
    // `---x` is the long option `-x`, and a switch given a value is unknown too.
    assert_eq!(p(&["---x"]).unknown_flags, [("-x".to_string(), None)]);
    assert_eq!(
        p(&["--print=3"]).unknown_flags,
        [("print".to_string(), Some("3".to_string()))]
    );
}

#[test]
fn double_dash_ends_the_options() {
    let a = p(&["-p", "--", "-x", "@f.md", "--", "-"]);
    assert!(a.print && a.errors.is_empty(), "{a:?}");
    assert_eq!(a.messages, ["-x", "--", "-"]);
    assert_eq!(a.file_args, ["f.md"]);
}

#[test]
fn list_models_takes_an_optional_search() {
    assert_eq!(p(&["--list-models"]).list_models, Some(None));
    assert_eq!(
        p(&["--list-models", "sonnet"]).list_models,
        Some(Some("sonnet".into()))
    );
    let a = p(&["--list-models", "-p"]);
    assert_eq!(a.list_models, Some(None));
    assert!(a.print);
    assert_eq!(p(&["--list-models", "@x"]).list_models, Some(None));
}

#[test]
fn thinking_levels_are_checked() {
    let a = p(&["--thinking", "huge"]);
    assert_eq!(a.thinking, None);
    assert_eq!(a.warnings.len(), 1);
    assert!(
        a.warnings[0].starts_with("Invalid thinking level \"huge\". Valid values: off, minimal")
    );
}

#[test]
fn session_name_and_id() {
    let a = p(&["-n", "Refactor auth", "--session-id", "run-42"]);
    assert_eq!(a.name.as_deref(), Some("Refactor auth"));
    assert_eq!(a.session_id.as_deref(), Some("run-42"));
    assert_eq!(p(&["--name", "-p"]).name.as_deref(), Some("-p"));
    assert_eq!(p(&["-n"]).errors, ["--name requires a value"]);
    assert_eq!(p(&["--name"]).errors, ["--name requires a value"]);
}

#[test]
fn tool_lists() {
    let a = p(&["-xt", "bash, mcp__*", "--tools", "+grep,-write"]);
    assert_eq!(a.exclude_tools, Some(strings(&["bash", "mcp__*"])));
    assert_eq!(a.tools, Some(strings(&["+grep", "-write"])));
    assert_eq!(
        p(&["--exclude-tools", "ask"]).exclude_tools,
        Some(strings(&["ask"]))
    );
    assert_eq!(
        p(&["-t", "read,+grep"]).errors,
        ["-t: tool names cannot be mixed with +name or -name entries"]
    );
    assert_eq!(
        p(&["--tools", "+mcp*"]).errors,
        ["--tools: +name and -name entries take exact tool names, not patterns: +mcp*"]
    );
    assert_eq!(p(&["--tools", "r*,ls"]).tools, Some(strings(&["r*", "ls"])));
    assert_eq!(p(&["--models", "a,,b, "]).models, ["a", "b"]);
}

#[test]
fn approve_is_a_per_process_override_and_the_last_one_wins() {
    assert_eq!(p(&["-a"]).trust_override, Some(true));
    assert_eq!(p(&["--approve"]).trust_override, Some(true));
    assert_eq!(p(&["-na"]).trust_override, Some(false));
    assert_eq!(
        p(&["--approve", "--no-approve"]).trust_override,
        Some(false)
    );
    assert_eq!(p(&["-na", "-a"]).trust_override, Some(true));
    assert_eq!(p(&[]).trust_override, None);
}
