//! What every `pi mcp` subcommand shares: where it writes, pi's option parsing and help hint,
//! the configuration as shell commands see it, and connection hooks that ignore events.

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

/// pi's option parsing: `--` ends the options, as does reaching `max_positionals` positional
/// arguments (so a server command's own flags pass through). Only `-l` has a short form.
pub(super) fn parse(
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
