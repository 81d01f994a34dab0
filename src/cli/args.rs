//! Argument parsing with pi's exact rules: a left-to-right loop where value flags take the next
//! argument if there is one, `-p` swallows the following word as the first message, `@path`
//! is a file argument anywhere, and unknown long flags are kept for extensions to claim.

use crate::ai::ThinkingLevel;

use super::flags::{find_long, find_short};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Text,
    Json,
    Rpc,
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
    pub fork: Option<String>,
    pub session_dir: Option<String>,
    pub no_session: bool,
    pub models: Vec<String>,
    pub no_tools: bool,
    pub no_builtin_tools: bool,
    pub tools: Option<Vec<String>>,
    pub thinking: Option<ThinkingLevel>,
    pub extensions: Vec<String>,
    pub no_extensions: bool,
    pub skills: Vec<String>,
    pub no_skills: bool,
    pub prompt_templates: Vec<String>,
    pub no_prompt_templates: bool,
    pub themes: Vec<String>,
    pub no_themes: bool,
    pub no_context_files: bool,
    /// `--approve`: trust the folder and record it.
    pub approve: bool,
    /// `--no-approve`: ignore project resources for this run.
    pub no_approve: bool,
    pub export: Option<String>,
    /// `--login <provider>`: run a login flow and exit.
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

fn split_csv(v: &str) -> Vec<String> {
    v.split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

pub fn parse(argv: &[String]) -> Args {
    let mut a = Args::default();
    let mut i = 0;
    while i < argv.len() {
        let arg = &argv[i];
        i += 1;
        if let Some(path) = arg.strip_prefix('@') {
            a.file_args.push(path.to_string());
            continue;
        }
        let flag = if let Some(long) = arg.strip_prefix("--") {
            if long.is_empty() {
                a.messages.push(arg.clone());
                continue;
            }
            let name = long.split('=').next().unwrap_or(long);
            match find_long(name) {
                Some(f) => Some(f),
                None => {
                    if long.starts_with('-') {
                        // `---text` is a message, not a flag.
                        a.messages.push(arg.clone());
                        continue;
                    }
                    let (name, value) = match long.split_once('=') {
                        Some((n, v)) => (n.to_string(), Some(v.to_string())),
                        None => {
                            let v = argv
                                .get(i)
                                .filter(|n| !n.starts_with('-') && !n.starts_with('@'))
                                .cloned();
                            if v.is_some() {
                                i += 1;
                            }
                            (long.to_string(), v)
                        }
                    };
                    a.unknown_flags.push((name, value));
                    continue;
                }
            }
        } else if let Some(short) = arg.strip_prefix('-').filter(|s| !s.is_empty()) {
            match find_short(short) {
                Some(f) => Some(f),
                None => {
                    a.errors.push(format!("Unknown option: {arg}"));
                    continue;
                }
            }
        } else {
            None
        };
        let Some(flag) = flag else {
            a.messages.push(arg.clone());
            continue;
        };
        // `--name=value` form for known flags.
        let inline = arg
            .strip_prefix("--")
            .and_then(|l| l.split_once('='))
            .map(|(_, v)| v.to_string());
        if flag.value.is_some() && flag.long != "list-models" {
            let value = match inline {
                Some(v) => v,
                None => match argv.get(i) {
                    Some(v) => {
                        i += 1;
                        v.clone()
                    }
                    // A value flag given last is silently ignored, as in pi.
                    None => continue,
                },
            };
            apply_value(&mut a, flag.long, value);
            continue;
        }
        match flag.long {
            "print" => {
                a.print = true;
                if let Some(next) = argv.get(i) {
                    if !next.starts_with('@') && (!next.starts_with('-') || next.starts_with("---"))
                    {
                        a.messages.push(next.clone());
                        i += 1;
                    }
                }
            }
            "list-models" => {
                let search = inline.or_else(|| {
                    let n = argv
                        .get(i)
                        .filter(|n| !n.starts_with('-') && !n.starts_with('@'))
                        .cloned();
                    if n.is_some() {
                        i += 1;
                    }
                    n
                });
                a.list_models = Some(search);
            }
            "continue" => a.continue_session = true,
            "resume" => a.resume = true,
            "no-session" => a.no_session = true,
            "no-tools" => a.no_tools = true,
            "no-builtin-tools" => a.no_builtin_tools = true,
            "no-extensions" => a.no_extensions = true,
            "no-skills" => a.no_skills = true,
            "no-prompt-templates" => a.no_prompt_templates = true,
            "no-themes" => a.no_themes = true,
            "no-context-files" => a.no_context_files = true,
            "approve" => a.approve = true,
            "no-approve" => a.no_approve = true,
            "verbose" => a.verbose = true,
            "offline" => a.offline = true,
            "help" => a.help = true,
            "version" => a.version = true,
            _ => {}
        }
    }
    a
}

fn apply_value(a: &mut Args, long: &str, v: String) {
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
            _ => {} // pi ignores an unknown mode
        },
        "session" => a.session = Some(v),
        "fork" => a.fork = Some(v),
        "session-dir" => a.session_dir = Some(v),
        "models" => a.models = split_csv(&v),
        "tools" => a.tools = Some(split_csv(&v)),
        "thinking" => match ThinkingLevel::parse(&v) {
            Some(l) => a.thinking = Some(l),
            None => a.warnings.push(format!(
                "Invalid thinking level \"{v}\". Valid values: off, minimal, low, medium, high, xhigh"
            )),
        },
        "extension" => a.extensions.push(v),
        "skill" => a.skills.push(v),
        "prompt-template" => a.prompt_templates.push(v),
        "theme" => a.themes.push(v),
        "export" => a.export = Some(v),
        "login" => a.login = Some(v),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &[&str]) -> Args {
        parse(&s.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn print_swallows_the_next_word() {
        let a = p(&["-p", "hello", "world"]);
        assert!(a.print);
        assert_eq!(a.messages, ["hello", "world"]);
        let a = p(&["-p", "--model", "x"]);
        assert!(a.messages.is_empty());
        assert_eq!(a.model.as_deref(), Some("x"));
        assert_eq!(p(&["-p", "---dash"]).messages, ["---dash"]);
    }

    #[test]
    fn files_flags_and_values() {
        let a = p(&[
            "@a.rs",
            "--model",
            "openai/gpt-4o:high",
            "-t",
            "read, grep,",
            "msg",
            "@b.md",
        ]);
        assert_eq!(a.file_args, ["a.rs", "b.md"]);
        assert_eq!(a.model.as_deref(), Some("openai/gpt-4o:high"));
        assert_eq!(a.tools, Some(vec!["read".to_string(), "grep".to_string()]));
        assert_eq!(a.messages, ["msg"]);
        assert_eq!(p(&["--model"]).model, None);
        assert_eq!(p(&["--mode", "json"]).mode, Some(Mode::Json));
        assert_eq!(p(&["--mode", "bogus"]).mode, None);
        assert!(p(&["-nt"]).no_tools);
    }

    #[test]
    fn unknown_flags() {
        let a = p(&["-x"]);
        assert_eq!(a.errors, ["Unknown option: -x"]);
        let a = p(&["--plan", "--foo=bar", "--baz", "val", "msg"]);
        assert_eq!(
            a.unknown_flags,
            [
                ("plan".to_string(), None),
                ("foo".to_string(), Some("bar".to_string())),
                ("baz".to_string(), Some("val".to_string()))
            ]
        );
        assert_eq!(a.messages, ["msg"]);
    }

    #[test]
    fn list_models_optional_search_and_thinking_warning() {
        assert_eq!(p(&["--list-models"]).list_models, Some(None));
        assert_eq!(
            p(&["--list-models", "sonnet"]).list_models,
            Some(Some("sonnet".into()))
        );
        assert_eq!(p(&["--list-models", "-p"]).list_models, Some(None));
        let a = p(&["--thinking", "huge"]);
        assert_eq!(a.thinking, None);
        assert_eq!(a.warnings.len(), 1);
    }
}
