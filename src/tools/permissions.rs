//! Approval rules (issue 34): the `permissions` setting and the `--approval` preset, and what
//! they decide for one tool call — run it, ask the user, or refuse it.
//!
//! Rules are written `tool` or `tool(pattern)` in three lists, `deny` over `ask` over `allow`.
//! What a pattern is matched against depends on the tool:
//!
//! * `bash`: every simple command the line runs (`util::shell_commands`: through `&&`, `|`,
//!   `$(…)`, `bash -c`, `eval`, `sudo`, `env`, …), quotes removed; `*` matches anything. A
//!   deny or ask rule catches the call when it matches any of them (or the whole line); an
//!   allow rule only when it matches every command. A line that cannot be understood is
//!   caught by every deny and ask rule on `bash` (fail closed) and by no allow rule.
//! * `read`, `write`, `edit`, `ls`, `grep`, `find`: the path, relative to the project when it
//!   is inside it, else absolute — both as written and with symlinks resolved; `*` stays
//!   within a directory, `**` crosses them (`write(src/**)`, `edit(/**)` for anything outside
//!   the project, `write(.git/**)`).
//! * any other tool (MCP, extensions): the arguments as compact JSON.
//!
//! The user's own settings and `--approval` set the rules; a project's `.pi/settings.json`
//! (read only in a trusted folder) may only add `deny` and `ask` rules or a stricter preset.

use std::path::{Path, PathBuf};

use regex::Regex;
use serde_json::Value;

use crate::util::shell_commands::{self, SimpleCommand};

/// What happens to a call no rule settles, and to one a rule says to ask about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// Never ask: what would be asked is refused, and the model told why.
    Never,
    /// Run what stays in the project; ask before `write`/`edit` outside it or inside `.git`.
    OnRequest,
    /// Ask before everything but reading tools and known read-only commands.
    Untrusted,
}

impl Preset {
    pub const NAMES: &'static str = "never, on-request, untrusted";

    pub fn parse(s: &str) -> Option<Preset> {
        match s {
            "never" => Some(Preset::Never),
            "on-request" => Some(Preset::OnRequest),
            "untrusted" => Some(Preset::Untrusted),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Preset::Never => "never",
            Preset::OnRequest => "on-request",
            Preset::Untrusted => "untrusted",
        }
    }

    fn strictness(preset: Option<Preset>) -> u8 {
        match preset {
            None | Some(Preset::Never) => 0,
            Some(Preset::OnRequest) => 1,
            Some(Preset::Untrusted) => 2,
        }
    }
}

/// One rule as written, and its compiled pattern.
#[derive(Debug, Clone)]
pub struct Rule {
    pub text: String,
    tool: Regex,
    pattern: Option<Pattern>,
}

#[derive(Debug, Clone)]
struct Pattern {
    regex: Regex,
    /// The glob as written (after `./` and `~/` for paths).
    glob: String,
    /// No wildcard: the rule names one exact call (what "always" saves).
    exact: bool,
}

/// Tools whose pattern is matched against a path.
const PATH_TOOLS: &[&str] = &["read", "write", "edit", "ls", "grep", "find"];
/// Tools that only read.
const READ_TOOLS: &[&str] = &["read", "ls", "grep", "find"];
/// Tools that change files by path.
const WRITE_TOOLS: &[&str] = &["write", "edit"];

impl Rule {
    /// Parses `tool` or `tool(pattern)`.
    pub fn parse(text: &str) -> Result<Rule, String> {
        let invalid = |why: &str| {
            format!(
                "Invalid permissions rule \"{text}\": {why}. Write it as tool or tool(pattern), for example \"bash(git push*)\" or \"write(src/**)\"."
            )
        };
        let (tool, pattern) = match text.find('(') {
            Some(open) => {
                let Some(inner) = text[open + 1..].strip_suffix(')') else {
                    return Err(invalid("it does not end with )"));
                };
                (text[..open].trim(), Some(inner))
            }
            None => (text.trim(), None),
        };
        if tool.is_empty()
            || !tool
                .chars()
                .all(|c| c.is_alphanumeric() || "_-.*:".contains(c))
        {
            return Err(invalid(
                "the tool name is missing or has characters a tool name cannot have",
            ));
        }
        let tool = Regex::new(&format!("^(?:{})$", glob_regex(tool, false)))
            .map_err(|e| invalid(&e.to_string()))?;
        let pattern = match pattern {
            None => None,
            Some(p) => {
                let is_path = PATH_TOOLS.iter().any(|t| tool.is_match(t));
                let written = if is_path {
                    path_pattern(p)
                } else {
                    p.to_string()
                };
                let exact = !written.contains(['*', '?']);
                let regex = Regex::new(&format!("(?s)^(?:{})$", glob_regex(&written, is_path)))
                    .map_err(|e| invalid(&e.to_string()))?;
                Some(Pattern {
                    regex,
                    glob: written,
                    exact,
                })
            }
        };
        Ok(Rule {
            text: text.to_string(),
            tool,
            pattern,
        })
    }

    fn names(&self, tool: &str) -> bool {
        self.tool.is_match(tool)
    }
}

impl Pattern {
    /// Whether the pattern matches `subject`, or could, for some value of its words only
    /// known at run time ([`shell_commands::DYNAMIC`]).
    fn matches_maybe(&self, subject: &str) -> bool {
        if subject.contains(shell_commands::DYNAMIC) {
            globs_intersect(&self.glob, subject)
        } else {
            self.regex.is_match(subject)
        }
    }
}

/// Whether some text matches both `pattern` (`*`, `?`) and `subject` (where
/// [`shell_commands::DYNAMIC`] stands for any text).
fn globs_intersect(pattern: &str, subject: &str) -> bool {
    #[derive(Clone, Copy, PartialEq)]
    enum T {
        Any,
        One,
        Lit(char),
    }
    let a: Vec<T> = pattern
        .chars()
        .map(|c| match c {
            '*' => T::Any,
            '?' => T::One,
            c => T::Lit(c),
        })
        .collect();
    let b: Vec<T> = subject
        .chars()
        .map(|c| {
            if c == shell_commands::DYNAMIC {
                T::Any
            } else {
                T::Lit(c)
            }
        })
        .collect();
    let (n, m) = (a.len(), b.len());
    let mut seen = vec![false; (n + 1) * (m + 1)];
    let mut stack = vec![(0usize, 0usize)];
    while let Some((i, j)) = stack.pop() {
        if std::mem::replace(&mut seen[i * (m + 1) + j], true) {
            continue;
        }
        if i == n && j == m {
            return true;
        }
        let (x, y) = (a.get(i).copied(), b.get(j).copied());
        if x == Some(T::Any) {
            stack.push((i + 1, j));
            if j < m {
                stack.push((i, j + 1));
            }
        }
        if y == Some(T::Any) {
            stack.push((i, j + 1));
            if i < n {
                stack.push((i + 1, j));
            }
        }
        match (x, y) {
            (Some(T::Lit(p)), Some(T::Lit(q))) if p == q => stack.push((i + 1, j + 1)),
            (Some(T::One), Some(T::Lit(_))) => stack.push((i + 1, j + 1)),
            _ => {}
        }
    }
    false
}

/// A path pattern as matched: `./` dropped, `~` and `~/` expanded.
fn path_pattern(p: &str) -> String {
    crate::util::home::expand_tilde(p.strip_prefix("./").unwrap_or(p))
}

/// A glob as a regex: for paths `*` and `?` stay within a directory and `**` crosses them;
/// otherwise `*` matches anything.
fn glob_regex(glob: &str, path: bool) -> String {
    let mut out = String::new();
    let chars: Vec<char> = glob.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '*' && path && chars.get(i + 1) == Some(&'*') {
            i += 2;
            if chars.get(i) == Some(&'/') {
                i += 1;
                out.push_str("(?:.*/)?");
            } else {
                out.push_str(".*");
            }
            continue;
        }
        match c {
            '*' if path => out.push_str("[^/]*"),
            '*' => out.push_str(".*"),
            '?' if path => out.push_str("[^/]"),
            '?' => out.push('.'),
            c => out.push_str(&regex::escape(&c.to_string())),
        }
        i += 1;
    }
    // `src/**` also names `src` itself.
    if path && out.ends_with("/.*") {
        out.truncate(out.len() - 3);
        out.push_str("(?:/.*)?");
    }
    out
}

/// The approval rules in force.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub allow: Vec<Rule>,
    pub ask: Vec<Rule>,
    pub deny: Vec<Rule>,
    pub preset: Option<Preset>,
}

/// What the policy decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    Ask,
    Deny,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Ask => "ask",
            Verdict::Deny => "deny",
        }
    }
}

/// The decision for one call, and what it was made on.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    pub verdict: Verdict,
    /// The rule that decided, or the preset (`approval: untrusted`); `None` when nothing did.
    pub rule: Option<String>,
    /// What the rules saw: the command, the resolved path, or the arguments.
    pub subject: String,
    /// The rule an "always" answer saves: exactly this call.
    pub exact_rule: String,
    /// Why the command line could not be understood, when it could not.
    pub not_understood: Option<String>,
}

/// What one call looks like to the rules.
struct Subject {
    /// Shown and saved.
    shown: String,
    /// Deny and ask rules catch the call when they match any of these.
    any: Vec<String>,
    /// Allow rules settle the call only when they match one of each group.
    every: Vec<Vec<String>>,
    /// The bash line could not be understood.
    opaque: Option<String>,
    /// A path outside the project or inside a `.git` directory.
    sensitive_path: bool,
    read_only: bool,
}

impl Policy {
    /// Whether any rule or preset is set (without one, pi runs every call, as pi does).
    pub fn is_active(&self) -> bool {
        self.preset.is_some()
            || !self.allow.is_empty()
            || !self.ask.is_empty()
            || !self.deny.is_empty()
    }

    /// From one `permissions` value.
    pub fn parse(value: &Value) -> Result<Policy, String> {
        let Value::Object(o) = value else {
            return Err(format!(
                "Invalid setting permissions: {value} (expected an object with allow, ask, deny lists and an optional approval preset)"
            ));
        };
        let list = |key: &str| -> Result<Vec<Rule>, String> {
            match o.get(key) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|v| match v.as_str() {
                        Some(s) => Rule::parse(s),
                        None => Err(format!("Invalid setting permissions.{key}: {v} is not a rule (a string such as \"bash(git push*)\")")),
                    })
                    .collect(),
                Some(v) => Err(format!("Invalid setting permissions.{key}: {v} (expected a list of rules)")),
            }
        };
        let preset = match o.get("approval") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(Preset::parse(s).ok_or_else(|| {
                format!(
                    "Invalid setting permissions.approval: \"{s}\" (valid: {})",
                    Preset::NAMES
                )
            })?),
            Some(v) => {
                return Err(format!(
                    "Invalid setting permissions.approval: {v} (valid: {})",
                    Preset::NAMES
                ))
            }
        };
        Ok(Policy {
            allow: list("allow")?,
            ask: list("ask")?,
            deny: list("deny")?,
            preset,
        })
    }

    /// From the user's `permissions`, the project's (trusted folders only: it may only add
    /// deny and ask rules or a stricter preset) and `--approval`, which wins over both
    /// presets; plus a warning for what the project asked for and did not get.
    pub fn resolve_layers(
        user: Option<&Value>,
        project: Option<&Value>,
        flag: Option<Preset>,
    ) -> Result<(Policy, Vec<String>), String> {
        let mut policy = match user.filter(|v| !v.is_null()) {
            Some(v) => Policy::parse(v)?,
            None => Policy::default(),
        };
        let mut warnings = Vec::new();
        if let Some(v) = project.filter(|v| !v.is_null()) {
            let asked = Policy::parse(v)
                .map_err(|e| format!("{e} (in the project's .pi/settings.json)"))?;
            let mut ignored = Vec::new();
            policy.deny.extend(asked.deny);
            policy.ask.extend(asked.ask);
            if !asked.allow.is_empty() {
                let rules: Vec<&str> = asked.allow.iter().map(|r| r.text.as_str()).collect();
                ignored.push(format!("allow {rules:?}"));
            }
            if let Some(p) = asked.preset {
                if Preset::strictness(Some(p)) > Preset::strictness(policy.preset)
                    && policy.preset != Some(Preset::Never)
                {
                    policy.preset = Some(p);
                } else if Some(p) != policy.preset {
                    ignored.push(format!("approval \"{}\"", p.as_str()));
                }
            }
            if !ignored.is_empty() {
                warnings.push(format!(
                    "the project's .pi/settings.json asks permissions for {}; ignored: a project may only add deny and ask rules or a stricter approval preset. Loosen them in your own settings (~/.pi/agent/settings.json) or with --approval.",
                    ignored.join(", ")
                ));
            }
        }
        if flag.is_some() {
            policy.preset = flag;
        }
        Ok((policy, warnings))
    }

    /// What to do with a call of `tool` with (validated) `args`, run in `cwd`.
    pub fn evaluate(&self, tool: &str, args: &Value, cwd: &Path) -> Evaluation {
        let subject = subject(tool, args, cwd);
        let exact_rule = format!("{tool}({})", subject.shown);
        let done = |verdict, rule: Option<&str>| Evaluation {
            verdict,
            rule: rule.map(str::to_string),
            subject: subject.shown.clone(),
            exact_rule: exact_rule.clone(),
            not_understood: subject.opaque.clone(),
        };
        let catches = |rule: &Rule| {
            rule.names(tool)
                && match &rule.pattern {
                    None => true,
                    Some(p) => {
                        subject.opaque.is_some() || subject.any.iter().any(|s| p.matches_maybe(s))
                    }
                }
        };
        let settles = |rule: &Rule| {
            rule.names(tool)
                && match &rule.pattern {
                    None => true,
                    Some(_) if subject.opaque.is_some() => false,
                    Some(p) => subject
                        .every
                        .iter()
                        .all(|group| group.iter().any(|s| p.regex.is_match(s))),
                }
        };
        if let Some(rule) = self.deny.iter().find(|r| catches(r)) {
            return done(Verdict::Deny, Some(&rule.text));
        }
        let allowed = self.allow.iter().find(|r| settles(r));
        // An exact allow rule ("always" for this very call) is an answer to an ask rule.
        let exactly_allowed = allowed.filter(|r| {
            r.pattern.as_ref().is_some_and(|p| {
                p.exact && subject.opaque.is_none() && p.regex.is_match(&subject.shown)
            })
        });
        let ask = |rule: &str| {
            if self.preset == Some(Preset::Never) {
                done(Verdict::Deny, Some(rule))
            } else {
                done(Verdict::Ask, Some(rule))
            }
        };
        if let Some(rule) = self.ask.iter().find(|r| catches(r)) {
            return match exactly_allowed {
                Some(a) => done(Verdict::Allow, Some(&a.text)),
                None => ask(&rule.text),
            };
        }
        if let Some(rule) = allowed {
            return done(Verdict::Allow, Some(&rule.text));
        }
        match self.preset {
            Some(Preset::Untrusted) if !subject.read_only => ask("approval: untrusted"),
            Some(Preset::OnRequest) if WRITE_TOOLS.contains(&tool) && subject.sensitive_path => {
                ask("approval: on-request")
            }
            _ => done(Verdict::Allow, None),
        }
    }
}

fn subject(tool: &str, args: &Value, cwd: &Path) -> Subject {
    if tool == "bash" {
        let command = args
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or_default();
        return bash_subject(command);
    }
    if PATH_TOOLS.contains(&tool) {
        let raw = args.get("path").and_then(Value::as_str).unwrap_or(".");
        let forms = path_forms(raw, cwd);
        let sensitive_path = forms
            .iter()
            .any(|f| f.starts_with('/') || f.split('/').any(|c| c == ".git"));
        return Subject {
            shown: forms[0].clone(),
            every: vec![forms.clone()],
            any: forms,
            opaque: None,
            sensitive_path,
            read_only: READ_TOOLS.contains(&tool),
        };
    }
    let shown = serde_json::to_string(args).unwrap_or_default();
    Subject {
        any: vec![shown.clone()],
        every: vec![vec![shown.clone()]],
        shown,
        opaque: None,
        sensitive_path: false,
        read_only: false,
    }
}

fn bash_subject(command: &str) -> Subject {
    let line = command.trim().to_string();
    match shell_commands::analyze(command) {
        Ok(commands) => {
            let mut any = vec![line.clone()];
            let mut every = Vec::new();
            let mut read_only = true;
            for c in &commands {
                any.push(c.full.clone());
                any.extend(c.unwrapped.iter().cloned());
                // An allow rule must match the command as run, or (for `A=1 cmd`, `/bin/cmd`)
                // its plain form — never only a wrapped part of it.
                let mut forms = vec![c.full.clone()];
                forms.extend(plain_forms(c));
                every.push(forms);
                read_only &= is_read_only(c);
            }
            if commands.len() == 1 {
                every[0].push(line.clone());
            }
            Subject {
                shown: line,
                any,
                every,
                opaque: None,
                sensitive_path: false,
                read_only,
            }
        }
        Err(why) => Subject {
            any: vec![line.clone()],
            every: vec![vec![line.clone()]],
            shown: line,
            opaque: Some(why),
            sensitive_path: false,
            read_only: false,
        },
    }
}

/// `A=1 git status` and `/usr/bin/git status` also read as `git status` for allow rules;
/// wrappers (`sudo git status`) do not.
fn plain_forms(c: &SimpleCommand) -> Vec<String> {
    let words: Vec<&str> = c.full.split(' ').collect();
    let i = words
        .iter()
        .take_while(|w| {
            w.split_once('=').is_some_and(|(n, _)| {
                !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            })
        })
        .count();
    // Assignments may change what runs (`PATH=…`), except a few harmless ones.
    let harmless = words[..i].iter().all(|w| {
        let name = w.split('=').next().unwrap_or_default();
        matches!(
            name,
            "LC_ALL" | "LANG" | "GIT_PAGER" | "PAGER" | "TERM" | "NO_COLOR" | "COLUMNS"
        )
    });
    if !harmless || i >= words.len() {
        return Vec::new();
    }
    let rest = &words[i..];
    let mut out = vec![rest.join(" ")];
    let base = rest[0].rsplit('/').next().unwrap_or(rest[0]);
    if base != rest[0] {
        out.push(
            std::iter::once(base)
                .chain(rest[1..].iter().copied())
                .collect::<Vec<_>>()
                .join(" "),
        );
    }
    out
}

/// Commands `approval: untrusted` runs without asking: they read and print, and write no file.
fn is_read_only(c: &SimpleCommand) -> bool {
    if c.writes_file {
        return false;
    }
    let forms = plain_forms(c);
    let text = forms.last().map(String::as_str).unwrap_or(&c.full);
    let words: Vec<&str> = text.split(' ').collect();
    let has = |opts: &[&str]| words.iter().any(|w| opts.iter().any(|o| w.starts_with(o)));
    match words[0] {
        "ls" | "cat" | "head" | "tail" | "wc" | "pwd" | "echo" | "printf" | "grep" | "rg"
        | "which" | "file" | "stat" | "du" | "df" | "tree" | "uniq" | "cut" | "diff" | "date"
        | "whoami" | "uname" | "true" | "false" | "basename" | "dirname" | "realpath" | "id"
        | "cd" | "nl" | "cmp" | "test" | "[" | "type" => true,
        "sort" => !has(&["-o", "--output"]),
        "find" => !has(&[
            "-exec", "-execdir", "-ok", "-delete", "-fprint", "-fls", "-fprintf",
        ]),
        "git" => {
            matches!(
                words.get(1).copied(),
                Some(
                    "status"
                        | "log"
                        | "diff"
                        | "show"
                        | "blame"
                        | "ls-files"
                        | "rev-parse"
                        | "grep"
                )
            ) && !has(&["--output", "--ext-diff", "-c", "--exec"])
        }
        _ => false,
    }
}

/// The path a tool argument names, as rules see it: relative to the project when inside it,
/// else absolute; first as written, then with symlinks resolved (when that differs).
fn path_forms(raw: &str, cwd: &Path) -> Vec<String> {
    let lexical = super::path::resolve_to_cwd(raw, cwd);
    let real_cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let mut forms = vec![shown_path(&lexical, cwd, &real_cwd)];
    let real = resolve_existing(&lexical);
    let real = shown_path(&real, cwd, &real_cwd);
    if !forms.contains(&real) {
        forms.push(real);
    }
    forms
}

fn shown_path(path: &Path, cwd: &Path, real_cwd: &Path) -> String {
    for base in [cwd, real_cwd] {
        if let Ok(rel) = path.strip_prefix(base) {
            let s = rel.to_string_lossy().into_owned();
            return if s.is_empty() { ".".into() } else { s };
        }
    }
    path.to_string_lossy().into_owned()
}

/// `path` with its longest existing ancestor's symlinks resolved.
fn resolve_existing(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut current = path.to_path_buf();
    loop {
        if let Ok(real) = std::fs::canonicalize(&current) {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (
            current.file_name().map(|n| n.to_os_string()),
            current.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                current = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
#[path = "permissions_tests.rs"]
mod tests;
