//! The one table of command-line flags. The parser, `--help` and the man page all read it, so
//! they cannot drift apart.

/// One flag: long name, optional short alias, value placeholder (if it takes a value), help lines.
pub struct Flag {
    pub long: &'static str,
    pub short: Option<&'static str>,
    pub value: Option<&'static str>,
    pub help: &'static [&'static str],
}

const fn flag(
    long: &'static str,
    short: Option<&'static str>,
    value: Option<&'static str>,
    help: &'static [&'static str],
) -> Flag {
    Flag {
        long,
        short,
        value,
        help,
    }
}

pub const FLAGS: &[Flag] = &[
    flag(
        "provider",
        None,
        Some("name"),
        &["Provider to look --model up in (needs --model)"],
    ),
    flag(
        "model",
        None,
        Some("pattern"),
        &["Model id or pattern; \"provider/id\" and a \":<thinking>\" suffix work"],
    ),
    flag(
        "api-key",
        None,
        Some("key"),
        &["API key for this run (not saved; defaults to env vars and auth.json)"],
    ),
    flag(
        "system-prompt",
        None,
        Some("text"),
        &["Replace the system prompt (text, or a file path)"],
    ),
    flag(
        "append-system-prompt",
        None,
        Some("text"),
        &["Add text or a file's contents to the system prompt (repeatable)"],
    ),
    flag(
        "mode",
        None,
        Some("mode"),
        &["Output mode: text (default), json, rpc, or acp (editors, as `pi acp`)"],
    ),
    flag(
        "print",
        Some("p"),
        None,
        &["Answer the prompt, print the reply and exit"],
    ),
    flag(
        "continue",
        Some("c"),
        None,
        &["Continue the most recent session"],
    ),
    flag("resume", Some("r"), None, &["Pick a session to resume"]),
    flag(
        "session",
        None,
        Some("path|id"),
        &["Use this session file, or the session whose id starts so"],
    ),
    flag(
        "session-id",
        None,
        Some("id"),
        &[
            "Open this folder's session with exactly this id, or create it",
            "(letters, digits, '.', '_', '-'; starts and ends with a letter or digit)",
        ],
    ),
    flag(
        "fork",
        None,
        Some("path|id"),
        &["Copy a session into a new one and continue there"],
    ),
    flag(
        "session-dir",
        None,
        Some("dir"),
        &["Where sessions are stored and looked up"],
    ),
    flag(
        "no-session",
        None,
        None,
        &["Keep the session in memory only"],
    ),
    flag(
        "name",
        Some("n"),
        Some("name"),
        &["Set the session's display name"],
    ),
    flag(
        "models",
        None,
        Some("patterns"),
        &[
            "Comma-separated model patterns to cycle with Ctrl+P",
            "Globs (anthropic/*, *sonnet*) and fuzzy matches work",
        ],
    ),
    flag(
        "no-tools",
        Some("nt"),
        None,
        &["Start with no tools at all"],
    ),
    flag(
        "no-builtin-tools",
        Some("nbt"),
        None,
        &["Start without the built-in tools (extension tools stay)"],
    ),
    flag(
        "tools",
        Some("t"),
        Some("tools"),
        &[
            "Comma-separated tool names or * patterns to enable (built-in and extension)",
            "Only +name/-name entries: add to or remove from the default set instead",
        ],
    ),
    flag(
        "exclude-tools",
        Some("xt"),
        Some("tools"),
        &["Comma-separated tool names or * patterns to disable, applied last"],
    ),
    flag(
        "thinking",
        None,
        Some("level"),
        &["Thinking level: off, minimal, low, medium, high, xhigh, max"],
    ),
    flag(
        "extension",
        Some("e"),
        Some("path"),
        &["Load an extension (repeatable)"],
    ),
    flag(
        "no-extensions",
        Some("ne"),
        None,
        &["Do not discover extensions (-e still loads)"],
    ),
    flag(
        "no-mcp",
        None,
        None,
        &["Do not start MCP servers from mcp.json for this run"],
    ),
    flag(
        "skill",
        None,
        Some("path"),
        &["Load a skill file or directory (repeatable)"],
    ),
    flag(
        "no-skills",
        Some("ns"),
        None,
        &["Do not discover or load skills"],
    ),
    flag(
        "prompt-template",
        None,
        Some("path"),
        &["Load a prompt template file or directory (repeatable)"],
    ),
    flag(
        "no-prompt-templates",
        Some("np"),
        None,
        &["Do not discover or load prompt templates"],
    ),
    flag(
        "theme",
        None,
        Some("path"),
        &["Load a theme file or directory (repeatable)"],
    ),
    flag(
        "use-theme",
        None,
        Some("name[/name]"),
        &["Interactive theme for this run, or a light/dark pair (not saved)"],
    ),
    flag("no-themes", None, None, &["Do not discover or load themes"]),
    flag(
        "no-context-files",
        Some("nc"),
        None,
        &["Do not load AGENTS.md, AGENTS.override.md or CLAUDE.md"],
    ),
    flag(
        "approve",
        Some("a"),
        None,
        &["Trust this folder's project settings and resources for this run"],
    ),
    flag(
        "no-approve",
        Some("na"),
        None,
        &["Skip this folder's trust-gated project settings and resources for this run"],
    ),
    flag(
        "sandbox",
        None,
        Some("mode"),
        &[
            "Confine commands: off (default), read-only or workspace-write",
            "(Linux Landlock and seccomp; see docs/sandbox.md)",
        ],
    ),
    flag(
        "approval",
        None,
        Some("preset"),
        &[
            "When to ask before a tool call: never (refuse what would be asked),",
            "on-request (ask before writes outside the project or in .git) or",
            "untrusted (ask before all but reads); with the permissions setting's",
            "allow/ask/deny rules (see docs/safety.md)",
        ],
    ),
    flag(
        "export",
        None,
        Some("file"),
        &["Export a session file to HTML and exit"],
    ),
    flag(
        "login",
        None,
        Some("provider"),
        &["Log in like `pi auth login`, also headless (key or code read from stdin)"],
    ),
    flag(
        "list-models",
        None,
        Some("[search]"),
        &["List the models you have keys for (optionally filtered)"],
    ),
    flag(
        "tui-mode",
        None,
        Some("mode"),
        &["Interactive layout: fullscreen (default) or regular scrollback"],
    ),
    flag(
        "verbose",
        None,
        None,
        &["Verbose start-up output (overrides the quietStartup setting)"],
    ),
    flag(
        "offline",
        None,
        None,
        &["No start-up network access (same as PI_OFFLINE=1)"],
    ),
    flag("help", Some("h"), None, &["Show this help"]),
    flag("version", Some("v"), None, &["Show the version"]),
];

/// The subcommands, for `--help` and the man page.
pub const COMMANDS: &[(&str, &str)] = &[
    (
        "pi install <source> [-l]",
        "Install a package and add it to settings",
    ),
    (
        "pi remove <source> [-l]",
        "Remove a package from settings (alias: uninstall)",
    ),
    (
        "pi update [source|self|pi]",
        "Update pi or installed packages",
    ),
    ("pi list", "List installed packages"),
    (
        "pi acp [options]",
        "Serve editors (Zed, JetBrains, Neovim) over the Agent Client Protocol on stdio",
    ),
    ("pi config", "Choose which package resources load"),
    (
        "pi auth <command>",
        "Log in or out, check a provider, print a credential (pi auth --help)",
    ),
];

/// Environment variables documented in `--help` and the man page.
pub const ENV_VARS: &[(&str, &str)] = &[
    ("ANTHROPIC_API_KEY", "Anthropic API key"),
    (
        "ANTHROPIC_OAUTH_TOKEN",
        "Anthropic OAuth token (used before ANTHROPIC_API_KEY)",
    ),
    ("OPENAI_API_KEY", "OpenAI API key"),
    ("GEMINI_API_KEY", "Google Gemini API key"),
    ("MISTRAL_API_KEY", "Mistral API key"),
    ("GROQ_API_KEY", "Groq API key"),
    ("XAI_API_KEY", "xAI API key"),
    ("OPENROUTER_API_KEY", "OpenRouter API key"),
    ("DEEPSEEK_API_KEY", "DeepSeek API key"),
    (
        "PI_CODING_AGENT_DIR",
        "Configuration directory (default ~/.pi/agent)",
    ),
    (
        "PI_CODING_AGENT_SESSION_DIR",
        "Session directory (--session-dir wins)",
    ),
    ("PI_OFFLINE", "1/true/yes: no start-up network access"),
    (
        "PI_STREAM_IDLE_TIMEOUT_MS",
        "Give up on a silent stream after this long (default 300000)",
    ),
];

pub fn find_long(name: &str) -> Option<&'static Flag> {
    FLAGS.iter().find(|f| f.long == name)
}

pub fn find_short(name: &str) -> Option<&'static Flag> {
    FLAGS.iter().find(|f| f.short == Some(name))
}

fn flag_label(f: &Flag) -> String {
    let mut s = format!("--{}", f.long);
    if let Some(short) = f.short {
        s.push_str(&format!(", -{short}"));
    }
    if let Some(v) = f.value {
        if v.starts_with('[') {
            s.push_str(&format!(" {v}"));
        } else {
            s.push_str(&format!(" <{v}>"));
        }
    }
    s
}

/// The `--help` text.
pub fn help_text() -> String {
    let mut out = String::new();
    out.push_str("pi - a minimal terminal coding agent (read, bash, edit, write tools)\n\n");
    out.push_str("Usage:\n  pi [options] [--] [@files...] [messages...]\n\nCommands:\n");
    let width = COMMANDS.iter().map(|(c, _)| c.len()).max().unwrap_or(0);
    for (command, what) in COMMANDS {
        out.push_str(&format!("  {command:<width$}  {what}\n"));
    }
    out.push_str("\nOptions:\n");
    let width = FLAGS.iter().map(|f| flag_label(f).len()).max().unwrap_or(0) + 2;
    for f in FLAGS {
        let label = flag_label(f);
        for (i, line) in f.help.iter().enumerate() {
            let left = if i == 0 { label.as_str() } else { "" };
            out.push_str(&format!("  {left:<width$} {line}\n"));
        }
    }
    out.push_str(&format!(
        "  {:<width$} End of options: what follows is messages and @files\n",
        "--"
    ));
    out.push_str("\nExtensions can add long options of their own (e.g. --plan).\n");
    out.push_str(
        "\nExamples:\n  pi -p \"List all .rs files in src/\"\n  git diff | pi -p \"Review this change\"\n  pi @notes.md -p \"Summarize\"\n  pi --model openai/gpt-4o -p \"Refactor this\"\n  pi --model sonnet:high -p \"Solve this\"\n  pi --mode json \"hi\"   # one JSON event per line\n  pi -t +grep,-write -p \"Find the TODOs\"\n  pi auth check --provider openai --json\n",
    );
    out.push_str("\nEnvironment Variables:\n");
    let w = ENV_VARS.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    for (name, desc) in ENV_VARS {
        out.push_str(&format!("  {name:<w$} - {desc}\n"));
    }
    out.push_str("\nExit status: 0 success; 1 error (bad arguments, no key, failed request in -p); 130 interrupted; 143 terminated.\n");
    out
}

fn roff_escape(s: &str) -> String {
    s.replace('\\', "\\e").replace('-', "\\-")
}

/// The man page (roff), generated from the same table.
pub fn man_page() -> String {
    let mut out = String::new();
    out.push_str(&format!(
        ".TH PI 1 \"\" \"pi {}\" \"User Commands\"\n",
        crate::VERSION
    ));
    out.push_str(".SH NAME\npi \\- a minimal terminal coding agent\n");
    out.push_str(
        ".SH SYNOPSIS\n.B pi\n[\\fIoptions\\fR] [\\-\\-] [\\fI@files\\fR...] [\\fImessages\\fR...]\n",
    );
    out.push_str(".SH DESCRIPTION\npi sends your request to the language model of your choice, streams the answer, and\nruns the tools the model asks for in the current directory. With \\fB\\-p\\fR or piped input\nit answers once and exits; \\fB\\-\\-mode json\\fR prints every event as a JSON line.\n");
    out.push_str(".SH COMMANDS\n");
    for (command, what) in COMMANDS {
        out.push_str(&format!(
            ".TP\n.B {}\n{}\n",
            roff_escape(command),
            roff_escape(what)
        ));
    }
    out.push_str(".SH OPTIONS\n");
    for f in FLAGS {
        out.push_str(&format!(".TP\n.B {}\n", roff_escape(&flag_label(f))));
        out.push_str(&format!("{}\n", roff_escape(&f.help.join(" "))));
    }
    out.push_str(
        ".TP\n.B \\-\\-\nEnd of options: the remaining arguments are messages and @files.\n",
    );
    out.push_str(".SH ENVIRONMENT\n");
    for (name, desc) in ENV_VARS {
        out.push_str(&format!(
            ".TP\n.B {}\n{}\n",
            roff_escape(name),
            roff_escape(desc)
        ));
    }
    out.push_str(".SH FILES\n.TP\n.B ~/.pi/agent/auth.json\nAPI keys per provider.\n.TP\n.B ~/.pi/agent/models.json\nCustom providers and models.\n.TP\n.B ~/.pi/agent/settings.json\nSettings; \\fB.pi/settings.json\\fR in a project overrides them.\n.TP\n.B ~/.pi/agent/trust.json\nSaved project-trust decisions: whether a folder's \\fB.pi/\\fR settings, extensions, skills,\nprompts, themes and system-prompt files and its \\fB.agents/skills\\fR may load. Context files\n(AGENTS.md, CLAUDE.md) load either way.\n");
    out.push_str(".SH EXIT STATUS\n0 on success; 1 on bad arguments, a missing key, or a failed request in print mode;\n130 when interrupted; 143 when terminated.\n");
    out
}
