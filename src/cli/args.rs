//! The command line, tokenised by lexopt and read with pi's exact rules: one left-to-right pass
//! in which a value flag takes the next argument whatever it looks like (and is an unknown
//! option when none is left), `-p` takes the following word as the first message unless it
//! looks like an option or a file, `@path` is a file argument anywhere, `--` ends the options,
//! short options are whole words (`-nt`, `-xt`, never clusters), and unknown long options are
//! kept for extensions to claim. The flags themselves are listed once, in [`super::flags`].

use lexopt::Arg;

use crate::ai::ThinkingLevel;

use super::flags::{find_long, find_short, Flag};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Text,
    Json,
    Rpc,
    /// The Agent Client Protocol for editors (`--mode acp`, `pi acp`).
    Acp,
}

#[derive(Debug, Default, Clone)]
pub struct Args {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub api_key: Option<String>,
    pub system_prompt: Option<String>,
    pub append_system_prompt: Vec<String>,
    pub mode: Option<Mode>,
    pub print: bool,
    pub continue_session: bool,
    pub resume: bool,
    pub session: Option<String>,
    /// `--session-id <id>`: this folder's session with exactly that id (created if missing).
    pub session_id: Option<String>,
    pub fork: Option<String>,
    pub session_dir: Option<String>,
    pub no_session: bool,
    /// `-n/--name <name>`: the session's display name, set at start-up.
    pub name: Option<String>,
    /// `--tui-mode regular|fullscreen` (validated), over the `tuiMode` setting.
    pub tui_mode: Option<String>,
    /// `--use-theme <name[/name]>`: the interactive theme for this run (not saved).
    pub use_theme: Option<String>,
    pub models: Vec<String>,
    pub no_tools: bool,
    pub no_builtin_tools: bool,
    /// `--tools`: an allowlist of names and `*` patterns, or a list of only `+name`/`-name`.
    pub tools: Option<Vec<String>>,
    /// `-xt/--exclude-tools`: names and `*` patterns removed after every other choice.
    pub exclude_tools: Option<Vec<String>>,
    pub thinking: Option<ThinkingLevel>,
    pub extensions: Vec<String>,
    pub no_extensions: bool,
    /// `--no-mcp`: no MCP servers for this run.
    pub no_mcp: bool,
    pub skills: Vec<String>,
    pub no_skills: bool,
    pub prompt_templates: Vec<String>,
    pub no_prompt_templates: bool,
    pub themes: Vec<String>,
    pub no_themes: bool,
    pub no_context_files: bool,
    /// `-a/--approve` (`Some(true)`) or `-na/--no-approve` (`Some(false)`), the last one given:
    /// the project-trust decision for this process only, never saved.
    pub trust_override: Option<bool>,
    /// `--sandbox <mode>`: wins over the `sandbox` setting's mode.
    pub sandbox: Option<crate::util::sandbox::Mode>,
    /// `--approval <preset>`: wins over the `permissions.approval` setting (issue 34).
    pub approval: Option<crate::tools::permissions::Preset>,
    pub export: Option<String>,
    /// `--login <provider>`: run a login flow and exit (our alias of `pi auth login`).
    pub login: Option<String>,
    /// `Some(None)` for a bare `--list-models`.
    pub list_models: Option<Option<String>>,
    pub verbose: bool,
    pub offline: bool,
    pub help: bool,
    pub version: bool,
    pub file_args: Vec<String>,
    pub messages: Vec<String>,
    /// Unknown `--name[=value]` flags, for extensions to claim.
    pub unknown_flags: Vec<(String, Option<String>)>,
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
}

/// Splits a comma-separated flag value, trimming entries and dropping empty ones.
pub fn split_csv(v: &str) -> Vec<String> {
    v.split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Parses `argv` (without the program name). Problems are collected in `errors` (fatal) and
/// `warnings`, worded as pi words them.
pub fn parse(argv: &[String]) -> Args {
    let mut reader = Reader {
        parser: lexopt::Parser::from_args(argv.iter()),
        args: Args::default(),
        options_ended: false,
    };
    // `-e=x` is the unknown option `-e=x`, as in pi, not `-e` with the value `x`.
    reader.parser.set_short_equals(false);
    reader.run();
    reader.args
}

struct Reader {
    parser: lexopt::Parser,
    args: Args,
    /// `--` was seen: everything after it is a message or an `@file`.
    options_ended: bool,
}

impl Reader {
    fn run(&mut self) {
        loop {
            if !self.options_ended && self.peek().as_deref() == Some("--") {
                self.options_ended = true;
            }
            let token = match self.parser.next() {
                Ok(Some(Arg::Long(name))) => Token::Long(name.to_string()),
                Ok(Some(Arg::Short(c))) => Token::Short(c),
                Ok(Some(Arg::Value(v))) => Token::Value(v.to_string_lossy().into_owned()),
                Ok(None) => return,
                // Only a value left over after a known flag can end up here; we always take it.
                Err(e) => {
                    self.args.errors.push(e.to_string());
                    continue;
                }
            };
            match token {
                Token::Value(v) => self.positional(v),
                Token::Long(name) => self.long(name),
                Token::Short(c) => self.short(c),
            }
        }
    }

    /// The next raw argument, when the parser is between arguments.
    fn peek(&mut self) -> Option<String> {
        let raw = self.parser.try_raw_args()?;
        raw.peek().map(|a| a.to_string_lossy().into_owned())
    }

    /// Takes the next raw argument if `accept` likes it.
    fn next_if(&mut self, accept: impl FnOnce(&str) -> bool) -> Option<String> {
        let mut raw = self.parser.try_raw_args()?;
        raw.next_if(|a| accept(&a.to_string_lossy()))
            .map(|a| a.to_string_lossy().into_owned())
    }

    /// The value attached to the current option (`--flag=value`, or the rest of a short word).
    fn attached(&mut self) -> Option<String> {
        self.parser
            .optional_value()
            .map(|v| v.to_string_lossy().into_owned())
    }

    fn positional(&mut self, v: String) {
        if let Some(path) = v.strip_prefix('@') {
            self.args.file_args.push(path.to_string());
        } else if v == "-" && !self.options_ended {
            self.args.errors.push("Unknown option: -".into());
        } else {
            self.args.messages.push(v);
        }
    }

    fn long(&mut self, name: String) {
        let inline = self.attached();
        match find_long(&name) {
            Some(flag) if flag.value.is_some() => self.flag_with_value(flag, inline, &name, "--"),
            Some(flag) if inline.is_none() => self.switch(flag),
            // `--print=x`: a switch given a value is an option pi does not know.
            _ => {
                let value = inline.or_else(|| {
                    self.next_if(|next| !next.starts_with('-') && !next.starts_with('@'))
                });
                self.args.unknown_flags.push((name, value));
            }
        }
    }

    fn short(&mut self, first: char) {
        // pi's short options are whole words: `-nt` is one option, not `-n -t`.
        let word = match self.attached() {
            Some(rest) => format!("{first}{rest}"),
            None => first.to_string(),
        };
        match find_short(&word) {
            Some(flag) if flag.value.is_some() => self.flag_with_value(flag, None, &word, "-"),
            Some(flag) => self.switch(flag),
            None => self.args.errors.push(format!("Unknown option: -{word}")),
        }
    }

    fn switch(&mut self, flag: &Flag) {
        let a = &mut self.args;
        match flag.long {
            "print" => {
                a.print = true;
                // pi: the next word is the first message unless it looks like an option
                // (`---text` still counts as a message) or a file.
                if let Some(message) = self.next_if(|next| {
                    !next.starts_with('@') && (!next.starts_with('-') || next.starts_with("---"))
                }) {
                    self.args.messages.push(message);
                }
            }
            "continue" => a.continue_session = true,
            "resume" => a.resume = true,
            "no-session" => a.no_session = true,
            "no-tools" => a.no_tools = true,
            "no-builtin-tools" => a.no_builtin_tools = true,
            "no-extensions" => a.no_extensions = true,
            "no-mcp" => a.no_mcp = true,
            "no-skills" => a.no_skills = true,
            "no-prompt-templates" => a.no_prompt_templates = true,
            "no-themes" => a.no_themes = true,
            "no-context-files" => a.no_context_files = true,
            "approve" => a.trust_override = Some(true),
            "no-approve" => a.trust_override = Some(false),
            "verbose" => a.verbose = true,
            "offline" => a.offline = true,
            "help" => a.help = true,
            "version" => a.version = true,
            other => unreachable!("switch --{other} has no handler"),
        }
    }

    /// A flag that takes a value. `typed` is the option as given (`model`, `xt`), `dashes` its
    /// prefix, for messages.
    fn flag_with_value(&mut self, flag: &Flag, inline: Option<String>, typed: &str, dashes: &str) {
        let value = match flag.long {
            // An optional value: a following word that is no option and no file.
            "list-models" => {
                let search =
                    inline.or_else(|| self.next_if(|n| !n.starts_with('-') && !n.starts_with('@')));
                self.args.list_models = Some(search);
                return;
            }
            // pi 1.x: a missing or unknown mode is an error, and an option is never a mode.
            "mode" => match inline.or_else(|| self.next_if(|n| !n.starts_with('-'))) {
                Some(v) => v,
                None => {
                    self.args
                        .errors
                        .push("--mode requires text, json, or rpc".into());
                    return;
                }
            },
            "use-theme" => match inline.or_else(|| self.next_if(|n| !n.starts_with('-'))) {
                Some(v) => v,
                None => {
                    self.args
                        .errors
                        .push("--use-theme requires a theme name".into());
                    return;
                }
            },
            // pi 1.x: as `--mode`, a missing or unknown TUI mode is an error.
            "tui-mode" => match inline.or_else(|| self.next_if(|n| !n.starts_with('-'))) {
                Some(v) => v,
                None => {
                    self.args
                        .errors
                        .push("--tui-mode requires regular or fullscreen".into());
                    return;
                }
            },
            _ => match inline.or_else(|| self.parser.value().ok().map(lossy)) {
                Some(v) => v,
                None if flag.long == "name" => {
                    self.args.errors.push("--name requires a value".into());
                    return;
                }
                // pi: a value flag with nothing after it is an option it does not know.
                None => {
                    self.args
                        .errors
                        .push(format!("Unknown option: {dashes}{typed}"));
                    return;
                }
            },
        };
        self.apply_value(flag.long, value, &format!("{dashes}{typed}"));
    }

    fn apply_value(&mut self, long: &str, v: String, typed: &str) {
        let a = &mut self.args;
        match long {
            "provider" => a.provider = Some(v),
            "model" => a.model = Some(v),
            "api-key" => a.api_key = Some(v),
            "system-prompt" => a.system_prompt = Some(v),
            "append-system-prompt" => a.append_system_prompt.push(v),
            "mode" => match v.as_str() {
                "text" => a.mode = Some(Mode::Text),
                "json" => a.mode = Some(Mode::Json),
                "rpc" => a.mode = Some(Mode::Rpc),
                // pi's own message (byte for byte) leaves out `acp`, which pi has not.
                "acp" => a.mode = Some(Mode::Acp),
                _ => a.errors.push(format!(
                    "Invalid mode \"{v}\". Valid values: text, json, rpc"
                )),
            },
            "use-theme" => a.use_theme = Some(v),
            "tui-mode" => match v.as_str() {
                "regular" | "fullscreen" => a.tui_mode = Some(v),
                _ => a.errors.push(format!(
                    "Invalid TUI mode \"{v}\". Valid values: regular, fullscreen"
                )),
            },
            "session" => a.session = Some(v),
            "session-id" => a.session_id = Some(v),
            "fork" => a.fork = Some(v),
            "session-dir" => a.session_dir = Some(v),
            "name" => a.name = Some(v),
            "models" => a.models = split_csv(&v),
            "tools" => {
                let tools = split_csv(&v);
                match crate::harness::tools::tool_list_error(&tools) {
                    Some(e) => a.errors.push(format!("{typed}: {e}")),
                    None => a.tools = Some(tools),
                }
            }
            "exclude-tools" => a.exclude_tools = Some(split_csv(&v)),
            "thinking" => match ThinkingLevel::parse(&v) {
                Some(l) => a.thinking = Some(l),
                None => {
                    let valid: Vec<&str> = ThinkingLevel::ALL.iter().map(|l| l.as_str()).collect();
                    a.warnings.push(format!(
                        "Invalid thinking level \"{v}\". Valid values: {}",
                        valid.join(", ")
                    ));
                }
            },
            "extension" => a.extensions.push(v),
            "skill" => a.skills.push(v),
            "prompt-template" => a.prompt_templates.push(v),
            "theme" => a.themes.push(v),
            "sandbox" => match crate::util::sandbox::Mode::parse(&v) {
                Some(m) => a.sandbox = Some(m),
                None => a.errors.push(format!(
                    "Invalid sandbox mode \"{v}\". Valid values: {}",
                    crate::util::sandbox::Mode::NAMES
                )),
            },
            "approval" => match crate::tools::permissions::Preset::parse(&v) {
                Some(p) => a.approval = Some(p),
                None => a.errors.push(format!(
                    "Invalid approval preset \"{v}\". Valid values: {}",
                    crate::tools::permissions::Preset::NAMES
                )),
            },
            "export" => a.export = Some(v),
            "login" => a.login = Some(v),
            other => unreachable!("value flag --{other} has no handler"),
        }
    }
}

enum Token {
    Long(String),
    Short(char),
    Value(String),
}

fn lossy(v: std::ffi::OsString) -> String {
    v.to_string_lossy().into_owned()
}

#[cfg(test)]
#[path = "args_tests.rs"]
mod tests;
