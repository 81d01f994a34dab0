//! What every `pi mcp` subcommand shares: where it writes, pi's option parsing (on lexopt's
//! tokens) and help hint, the configuration as shell commands see it, and connection hooks that
//! ignore events.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use super::config;
use super::connection::{Hooks, ServerConnection};
use crate::resources::trust;

pub(super) const HELP_HINT: &str = "Use \"pi mcp --help\" for usage.";

/// Where the command writes.
pub struct Io<'a> {
    pub out: &'a mut dyn Write,
    pub err: &'a mut dyn Write,
}

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Kind {
    Flag,
    Value,
    List,
}

#[derive(Default)]
pub(super) struct Parsed {
    pub positional: Vec<String>,
    values: HashMap<String, Option<String>>,
    lists: HashMap<String, Vec<String>>,
}

impl Parsed {
    pub fn has(&self, name: &str) -> bool {
        self.values.contains_key(name) || self.lists.contains_key(name)
    }
    pub fn value(&self, name: &str) -> Option<&str> {
        self.values.get(name).and_then(|v| v.as_deref())
    }
    /// Every value of a repeatable option, in order.
    pub fn list(&self, name: &str) -> Option<&Vec<String>> {
        self.lists.get(name)
    }
}

/// pi's option parsing, on lexopt's tokens: `--` ends the options, as does reaching
/// `max_positionals` positional arguments (so a server command's own flags pass through). A
/// value option takes the next argument whatever it looks like. Only `-l` has a short form;
/// any other word starting with one `-` is positional, and `--name=value` is an unknown option.
pub(super) fn parse(
    args: &[String],
    known: &[(&str, Kind)],
    max_positionals: usize,
    io: &mut Io,
) -> Option<Parsed> {
    let mut p = Parsed::default();
    let mut parser = lexopt::Parser::from_args(args.iter());
    parser.set_short_equals(false);
    loop {
        // Always between arguments here: the rest passes through whole once the options end.
        if let Some(mut raw) = parser.try_raw_args() {
            if p.positional.len() >= max_positionals || raw.peek().is_some_and(|a| a == "--") {
                raw.next_if(|a| a == "--");
                p.positional
                    .extend(raw.map(|a| a.to_string_lossy().into_owned()));
                return Some(p);
            }
        }
        let (name, typed) = match parser.next() {
            Ok(None) => return Some(p),
            Ok(Some(lexopt::Arg::Value(v))) => {
                p.positional.push(v.to_string_lossy().into_owned());
                continue;
            }
            // Short options are whole words (`-lx` is the word `-lx`, not `-l -x`).
            Ok(Some(lexopt::Arg::Short(c))) => {
                let rest = parser
                    .optional_value()
                    .map(|v| v.to_string_lossy().into_owned());
                let word = format!("-{c}{}", rest.unwrap_or_default());
                if word != "-l" {
                    p.positional.push(word);
                    continue;
                }
                ("local".to_string(), word)
            }
            Ok(Some(lexopt::Arg::Long(name))) => {
                let name = name.to_string();
                match parser.optional_value() {
                    Some(v) => {
                        let typed = format!("--{name}={}", v.to_string_lossy());
                        (format!("{name}={}", v.to_string_lossy()), typed)
                    }
                    None => (name.clone(), format!("--{name}")),
                }
            }
            // Only a value attached to an option we did not take can end up here.
            Err(e) => {
                let _ = writeln!(io.err, "{e}.\n{HELP_HINT}");
                return None;
            }
        };
        let Some((_, kind)) = known.iter().find(|(k, _)| *k == name) else {
            let _ = writeln!(io.err, "Unknown option {typed}.\n{HELP_HINT}");
            return None;
        };
        if *kind == Kind::Flag {
            p.values.insert(name, None);
            continue;
        }
        let Ok(value) = parser.value() else {
            let _ = writeln!(io.err, "--{name} needs a value.");
            return None;
        };
        let value = value.to_string_lossy().into_owned();
        if *kind == Kind::List {
            p.lists.entry(name).or_default().push(value);
        } else {
            p.values.insert(name, Some(value));
        }
    }
}

pub(super) struct NoHooks;

impl Hooks for NoHooks {
    fn tools_changed(&self, _conn: &ServerConnection) {}
    fn state_changed(&self, _conn: &ServerConnection) {}
}

/// The configuration as shell commands see it (only a saved decision trusts the project, as
/// in pi), and the note to print when an untrusted project's file was skipped.
pub(super) fn shell_config(agent_dir: &Path, cwd: &Path) -> (config::LoadedConfig, Option<String>) {
    let trusted = trust::TrustStore::load(agent_dir).decision(cwd) == Some(true);
    let loaded = config::load(agent_dir, cwd, trusted);
    let project = config::project_path(cwd);
    let untrusted_note = (!trusted && project.exists()).then(|| {
        format!(
            "{} is ignored because the project is not trusted. Start pi in the project to trust it.",
            project.display()
        )
    });
    (loaded, untrusted_note)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand-written parser lexopt replaced, kept as the oracle of pi's rules.
    fn hand_parse(
        args: &[String],
        known: &[(&str, Kind)],
        max_positionals: usize,
        io: &mut Io,
    ) -> Option<Parsed> {
        let mut p = Parsed::default();
        let mut i = 0;
        while i < args.len() {
            let typed = &args[i];
            let arg = if typed == "-l" {
                "--local"
            } else {
                typed.as_str()
            };
            if arg == "--" || p.positional.len() >= max_positionals {
                let from = if arg == "--" { i + 1 } else { i };
                p.positional.extend(args[from..].iter().cloned());
                break;
            }
            let Some(name) = arg.strip_prefix("--") else {
                p.positional.push(arg.to_string());
                i += 1;
                continue;
            };
            let Some((_, kind)) = known.iter().find(|(k, _)| *k == name) else {
                let _ = writeln!(io.err, "Unknown option {typed}.\n{HELP_HINT}");
                return None;
            };
            if *kind == Kind::Flag {
                p.values.insert(name.to_string(), None);
                i += 1;
                continue;
            }
            let Some(value) = args.get(i + 1) else {
                let _ = writeln!(io.err, "{arg} needs a value.");
                return None;
            };
            if *kind == Kind::List {
                p.lists
                    .entry(name.to_string())
                    .or_default()
                    .push(value.clone());
            } else {
                p.values.insert(name.to_string(), Some(value.clone()));
            }
            i += 2;
        }
        Some(p)
    }

    type Parser = fn(&[String], &[(&str, Kind)], usize, &mut Io) -> Option<Parsed>;

    fn run(f: Parser, argv: &[&str], max: usize) -> String {
        let known = [
            ("local", Kind::Flag),
            ("json", Kind::Flag),
            ("scope", Kind::Value),
            ("env", Kind::List),
        ];
        let args: Vec<String> = argv.iter().map(|a| a.to_string()).collect();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let parsed = f(
            &args,
            &known,
            max,
            &mut Io {
                out: &mut out,
                err: &mut err,
            },
        );
        let err = String::from_utf8(err).unwrap();
        match parsed {
            None => format!("error: {err}"),
            Some(p) => {
                let values: std::collections::BTreeMap<_, _> = p.values.iter().collect();
                let lists: std::collections::BTreeMap<_, _> = p.lists.iter().collect();
                format!("{:?} {values:?} {lists:?} {err}", p.positional)
            }
        }
    }

    #[test]
    fn lexopt_reads_every_command_line_as_the_hand_parser_did() {
        let lines: &[&[&str]] = &[
            &[],
            &["name"],
            &["name", "cmd", "--json", "-x"],
            &["--json", "name"],
            &["-l", "name"],
            &["-lx", "name"],
            &["-l=x"],
            &["-", "name"],
            &["-5", "name"],
            &["--scope", "user", "name"],
            &["--scope", "--json"],
            &["--scope", "--"],
            &["--scope", "-l"],
            &["--scope"],
            &["--env", "A=1", "--env", "B=2", "name"],
            &["--env"],
            &["--json=x"],
            &["--scope=user"],
            &["--unknown", "name"],
            &["---x"],
            &["--=x"],
            &["--", "--json", "-l"],
            &["name", "--", "--json"],
            &["a", "b", "--", "c"],
            &["a", "b", "--json"],
            &["a", "--json", "b", "-l"],
            &["--local", "--local", "a"],
            &["a", "", "--json"],
            &["é", "-é", "--é"],
        ];
        for argv in lines {
            for max in [0, 1, 2, usize::MAX] {
                assert_eq!(
                    run(parse, argv, max),
                    run(hand_parse, argv, max),
                    "{argv:?} with at most {max} positionals"
                );
            }
        }
    }
}
