//! What a shell command line will run, for approval rules (issue 34): the simple commands in
//! it — through chains (`&&`, `||`, `;`, `|`, `&`, newlines), groups and subshells, command
//! substitutions (`$(…)`, backticks, `<(…)`), `bash -c`/`sh -c` strings, `eval`, here-documents
//! fed to a shell, and wrappers (`env`, `sudo`, `nohup`, `timeout`, `xargs`, …) — each with its
//! quotes and backslashes removed, so `g'i't  push` reads as `git push`.
//!
//! Where the command line cannot be known from its text (a command name taken from a
//! variable, a shell reading its script from a pipe, an unterminated quote, `case`), the
//! analysis says so instead of guessing: approval rules then fail closed.

/// One simple command as the shell will run it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SimpleCommand {
    /// Its words after quote removal, joined by single spaces (assignments and wrappers kept).
    pub full: String,
    /// What runs inside its wrappers: `sudo -u x git push` also reads as `-u x git push`,
    /// `x git push`, `git push`, …; assignments dropped (`A=1 git push` reads as `git push`).
    pub unwrapped: Vec<String>,
    /// It redirects output into a file (`>`, `>>`, `&>`, `>|`).
    pub writes_file: bool,
}

/// Everything a command line runs, or why it cannot be known.
pub type Analysis = Result<Vec<SimpleCommand>, String>;

/// Shells whose script may come from `-c`, a pipe or a here-document.
const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish", "busybox",
];

/// Commands that run the rest of their words as another command.
const WRAPPERS: &[&str] = &[
    "env",
    "sudo",
    "doas",
    "nohup",
    "time",
    "nice",
    "ionice",
    "timeout",
    "xargs",
    "exec",
    "command",
    "builtin",
    "stdbuf",
    "setsid",
    "chroot",
    "unbuffer",
    "watch",
    "strace",
    "flock",
    "su",
    "runuser",
    "chrt",
    "taskset",
    "caffeinate",
    "ssh",
    "script",
    "parallel",
];

/// Options after which `find` runs the following words as a command.
const FIND_EXEC: &[&str] = &["-exec", "-execdir", "-ok", "-okdir"];

/// Stands for a word whose value is only known at run time (`$X`, `$(…)`) in
/// [`SimpleCommand::unwrapped`]: a rule that would match for some value of it catches it.
pub const DYNAMIC: char = '\u{1}';

/// Git's options before its subcommand that take the next word as their value.
const GIT_VALUE_OPTIONS: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--exec-path",
    "--super-prefix",
    "--list-cmds",
    "--attr-source",
];

/// `git <options> sub …` as `git sub …`, when it has options before the subcommand.
fn without_git_options(command: &str) -> Option<String> {
    let rest = command.strip_prefix("git ")?;
    let words: Vec<&str> = rest.split(' ').collect();
    let mut k = 0;
    while let Some(w) = words.get(k) {
        if !w.starts_with('-') {
            break;
        }
        k += if GIT_VALUE_OPTIONS.contains(w) { 2 } else { 1 };
    }
    (k > 0 && k < words.len()).then(|| format!("git {}", words[k..].join(" ")))
}

/// Words after a wrapper (`sudo`, `xargs`, …) that are analysed.
const MAX_WRAPPED_WORDS: usize = 64;

/// Nesting limit for substitutions and `-c` strings.
const MAX_DEPTH: usize = 16;

/// The simple commands `line` runs.
pub fn analyze(line: &str) -> Analysis {
    let mut out = Vec::new();
    parse_script(line, 0, &mut out)?;
    Ok(out)
}

#[derive(Debug, Default)]
struct Word {
    text: String,
    /// Some part came from a variable, a substitution or an unquoted glob: its value is not
    /// known from the text.
    dynamic: bool,
    /// Some part was quoted (so `{`, `if` and `#` are not syntax).
    quoted: bool,
}

#[derive(Debug)]
enum Token {
    Word(Word),
    /// `&&`, `||`, `;`, `|`, `&`, newline, `(`, `)`: ends a simple command.
    Separator,
    /// A redirection operator; `true` when it writes a file.
    Redirect {
        writes: bool,
        here_doc: Option<bool>,
    },
    /// `<<<`.
    HereString,
}

struct Parser<'a> {
    chars: Vec<char>,
    pos: usize,
    depth: usize,
    out: &'a mut Vec<SimpleCommand>,
    /// Here-documents announced on the current line: (delimiter, strip tabs, fed to a shell).
    pending_docs: Vec<(String, bool, bool)>,
}

fn parse_script(script: &str, depth: usize, out: &mut Vec<SimpleCommand>) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err("commands nested too deep".into());
    }
    let mut p = Parser {
        chars: script.chars().collect(),
        pos: 0,
        depth,
        out,
        pending_docs: Vec::new(),
    };
    p.run()
}

impl Parser<'_> {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn run(&mut self) -> Result<(), String> {
        let mut words: Vec<Word> = Vec::new();
        let mut writes_file = false;
        let mut here_string_to_shell = false;
        loop {
            let token = self.next_token()?;
            match token {
                None | Some(Token::Separator) => {
                    self.finish(
                        std::mem::take(&mut words),
                        writes_file,
                        here_string_to_shell,
                    )?;
                    writes_file = false;
                    here_string_to_shell = false;
                    if token.is_none() {
                        if !self.pending_docs.is_empty() {
                            return Err("a here-document is not terminated".into());
                        }
                        return Ok(());
                    }
                }
                Some(Token::Word(w)) => words.push(w),
                Some(Token::Redirect { writes, here_doc }) => {
                    let target = match self.next_token()? {
                        Some(Token::Word(w)) => w,
                        _ => return Err("a redirection has no target".into()),
                    };
                    writes_file |= writes && !is_descriptor_target(&target.text);
                    if let Some(strip) = here_doc {
                        let to_shell = feeds_shell(&words);
                        here_string_to_shell |= to_shell;
                        self.pending_docs.push((target.text, strip, to_shell));
                    }
                }
                Some(Token::HereString) => {
                    let data = match self.next_token()? {
                        Some(Token::Word(w)) => w,
                        _ => return Err("a here-string has no word".into()),
                    };
                    if feeds_shell(&words) {
                        if data.dynamic {
                            return Err("a shell reads a here-string built at run time".into());
                        }
                        parse_script(&data.text, self.depth + 1, self.out)?;
                        here_string_to_shell = true;
                    }
                }
            }
        }
    }

    /// Records one simple command (and what runs inside it).
    fn finish(
        &mut self,
        words: Vec<Word>,
        writes_file: bool,
        script_given: bool,
    ) -> Result<(), String> {
        // Reserved words that only start or join compound commands.
        let mut start = 0;
        while let Some(w) = words.get(start) {
            let t = w.text.as_str();
            if w.quoted || w.dynamic {
                break;
            }
            match t {
                "if" | "then" | "else" | "elif" | "do" | "while" | "until" | "!" | "{" | "}"
                | "fi" | "done" => start += 1,
                "case" | "select" | "function" | "coproc" => {
                    return Err(format!("`{t}` is not analysed"));
                }
                "for" => return Ok(()), // `for x in a b c` runs nothing itself.
                _ => break,
            }
        }
        let words = &words[start..];
        // A closing `}` or `done` may trail the last command of a group.
        let words = match words.last() {
            Some(w)
                if !w.quoted
                    && matches!(w.text.as_str(), "}" | "done" | "fi")
                    && words.len() > 1 =>
            {
                &words[..words.len() - 1]
            }
            _ => words,
        };
        if words.is_empty() {
            return Ok(());
        }
        let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
        let full = texts.join(" ");
        // Rules see a word whose value is only known at run time as [`DYNAMIC`].
        let shapes: Vec<String> = words
            .iter()
            .map(|w| {
                if w.dynamic {
                    DYNAMIC.to_string()
                } else {
                    w.text.clone()
                }
            })
            .collect();
        let sh: Vec<&str> = shapes.iter().map(String::as_str).collect();
        let mut unwrapped = Vec::new();
        let add = |v: &mut Vec<String>, s: String| {
            if s != full && !v.contains(&s) {
                v.push(s);
            }
        };
        let i = words.iter().take_while(|w| is_assignment(w)).count();
        if let Some(command) = words.get(i) {
            if command.dynamic {
                return Err(format!(
                    "the command name in `{full}` is only known at run time"
                ));
            }
            add(&mut unwrapped, sh[i..].join(" "));
            add(&mut unwrapped, with_basename(&sh[i..]));
            let name = basename(&command.text);
            let rest = &words[i + 1..];
            if SHELLS.contains(&name) {
                self.shell(rest, &full, script_given)?;
            } else if name == "eval" {
                if rest.iter().any(|w| w.dynamic) {
                    return Err(format!("`{full}` evaluates text only known at run time"));
                }
                let script: Vec<&str> = rest.iter().map(|w| w.text.as_str()).collect();
                parse_script(&script.join(" "), self.depth + 1, self.out)?;
            } else if name == "trap" {
                // `trap 'cmd' EXIT` runs its first word later.
                if let Some(w) = rest.first() {
                    if w.dynamic {
                        return Err(format!("`{full}` sets a trap only known at run time"));
                    }
                    parse_script(&w.text, self.depth + 1, self.out)?;
                }
            } else if name == "find" {
                for (k, w) in words.iter().enumerate().skip(i + 1) {
                    if FIND_EXEC.contains(&w.text.as_str()) && k + 1 < words.len() {
                        if words[k + 1].dynamic {
                            return Err(format!(
                                "the command `{full}` runs is only known at run time"
                            ));
                        }
                        add(&mut unwrapped, sh[k + 1..].join(" "));
                        add(&mut unwrapped, with_basename(&sh[k + 1..]));
                        if SHELLS.contains(&basename(texts[k + 1])) {
                            self.shell(&words[k + 2..], &full, true)?;
                        }
                    }
                }
            } else if name == "source" || name == "." {
                if rest.first().is_some_and(|w| w.dynamic) {
                    return Err(format!("`{full}` reads a script only known at run time"));
                }
            } else if name == "alias" {
                // What an alias will run is analysed where it is defined.
                for w in rest {
                    if let Some((_, value)) = w.text.split_once('=') {
                        parse_script(value, self.depth + 1, self.out)?;
                    }
                }
            } else if WRAPPERS.contains(&name) {
                // Any later word may be where the wrapped command starts.
                let mut named = false;
                if words.len() - i > MAX_WRAPPED_WORDS {
                    // Each later word is a candidate start; past this the copies grow
                    // quadratically, so the line is left unanalysed (rules fail closed).
                    return Err(format!(
                        "`{name}` is followed by more than {MAX_WRAPPED_WORDS} words"
                    ));
                }
                for k in i + 1..words.len() {
                    let w = &words[k];
                    let option_like = w.text.starts_with('-')
                        || is_assignment(w)
                        || (!w.text.is_empty()
                            && w.text.chars().all(|c| c.is_ascii_digit() || c == '.'));
                    if !named && !option_like && w.dynamic {
                        return Err(format!(
                            "the command `{full}` runs is only known at run time"
                        ));
                    }
                    named |= !option_like;
                    add(&mut unwrapped, sh[k..].join(" "));
                    add(&mut unwrapped, with_basename(&sh[k..]));
                    // `su -c 'a && b'`, `env -S 'a b'`, `watch 'a; b'`: a word that reads as a
                    // command line is analysed as one.
                    if w.text.contains([' ', ';', '&', '|', '\n']) && !w.dynamic {
                        parse_script(&w.text, self.depth + 1, self.out)?;
                    }
                    let inner = basename(&w.text);
                    if SHELLS.contains(&inner) {
                        self.shell(&words[k + 1..], &full, script_given)?;
                        break;
                    }
                    if inner == "eval" {
                        return Err(format!("`{full}` evaluates text through a wrapper"));
                    }
                }
            }
        }
        add(&mut unwrapped, sh.join(" "));
        // `git -C dir -c k=v push` also reads as `git push`.
        let git_forms: Vec<String> = std::iter::once(&full)
            .chain(unwrapped.iter())
            .filter_map(|c| without_git_options(c))
            .collect();
        for form in git_forms {
            add(&mut unwrapped, form);
        }
        self.out.push(SimpleCommand {
            full,
            unwrapped,
            writes_file,
        });
        Ok(())
    }

    /// `sh -c 'script'`, `bash script.sh`, or a shell reading its script from stdin.
    fn shell(&mut self, args: &[Word], full: &str, script_given: bool) -> Result<(), String> {
        let mut k = 0;
        while let Some(w) = args.get(k) {
            if w.text == "-c"
                || (w.text.starts_with('-') && !w.text.starts_with("--") && w.text.contains('c'))
            {
                let Some(script) = args.get(k + 1) else {
                    return Err(format!("`{full}` has -c without a script"));
                };
                if script.dynamic {
                    return Err(format!("`{full}` runs a script only known at run time"));
                }
                return parse_script(&script.text, self.depth + 1, self.out);
            }
            if w.text == "-s" {
                break;
            }
            if w.text.starts_with('-') || w.text.starts_with('+') {
                // `-o name` / `+o name` take a value.
                if matches!(w.text.as_str(), "-o" | "+o" | "-O" | "+O") {
                    k += 1;
                }
                k += 1;
                continue;
            }
            if w.dynamic {
                // `bash <(curl …)`, `bash "$F"`: a script the command line does not show.
                return Err(format!("`{full}` runs a script only known at run time"));
            }
            // A script file: its contents are the file's business, as for any program.
            return Ok(());
        }
        if script_given {
            return Ok(());
        }
        Err(format!(
            "`{full}` runs a script read from its input, which the command line does not show"
        ))
    }

    /// Skips blanks and comments; reads the next token.
    fn next_token(&mut self) -> Result<Option<Token>, String> {
        loop {
            match self.peek(0) {
                None => return Ok(None),
                Some(' ' | '\t' | '\r') => self.pos += 1,
                Some('\\') if self.peek(1) == Some('\n') => self.pos += 2,
                Some('#') => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                Some('\n') => {
                    self.pos += 1;
                    self.read_here_docs()?;
                    return Ok(Some(Token::Separator));
                }
                Some(';' | '&' | '|' | '(' | ')') => {
                    let c = self.peek(0).unwrap_or(' ');
                    if c == '&' && self.peek(1) == Some('>') {
                        self.pos += 2;
                        if self.peek(0) == Some('>') {
                            self.pos += 1;
                        }
                        return Ok(Some(Token::Redirect {
                            writes: true,
                            here_doc: None,
                        }));
                    }
                    self.pos += 1;
                    if matches!(self.peek(0), Some(n) if (n == c && c != '(' && c != ')') || (c == '|' && n == '&'))
                    {
                        self.pos += 1;
                    }
                    return Ok(Some(Token::Separator));
                }
                Some('<' | '>') if self.peek(1) == Some('(') => {
                    return self.word().map(|w| Some(Token::Word(w)));
                }
                Some('<' | '>') => return Ok(Some(self.redirect())),
                Some(c) if c.is_ascii_digit() && self.is_fd_redirect() => {
                    while self.peek(0).is_some_and(|c| c.is_ascii_digit()) {
                        self.pos += 1;
                    }
                    return Ok(Some(self.redirect()));
                }
                Some(_) => return self.word().map(|w| Some(Token::Word(w))),
            }
        }
    }

    fn is_fd_redirect(&self) -> bool {
        let mut k = 0;
        while self.peek(k).is_some_and(|c| c.is_ascii_digit()) {
            k += 1;
        }
        matches!(self.peek(k), Some('<' | '>'))
    }

    fn redirect(&mut self) -> Token {
        let c = self.peek(0).unwrap_or('>');
        self.pos += 1;
        if c == '<' {
            if self.peek(0) == Some('<') {
                self.pos += 1;
                if self.peek(0) == Some('<') {
                    self.pos += 1;
                    return Token::HereString;
                }
                let strip = self.peek(0) == Some('-');
                if strip {
                    self.pos += 1;
                }
                return Token::Redirect {
                    writes: false,
                    here_doc: Some(strip),
                };
            }
            if matches!(self.peek(0), Some('&' | '>')) {
                self.pos += 1;
            }
            return Token::Redirect {
                writes: false,
                here_doc: None,
            };
        }
        if matches!(self.peek(0), Some('>' | '|' | '&')) {
            self.pos += 1;
        }
        Token::Redirect {
            writes: true,
            here_doc: None,
        }
    }

    /// After a newline: the bodies of the here-documents announced on the line before.
    fn read_here_docs(&mut self) -> Result<(), String> {
        for (delimiter, strip, to_shell) in std::mem::take(&mut self.pending_docs) {
            let mut body = String::new();
            let mut found = false;
            while self.pos < self.chars.len() {
                let start = self.pos;
                while self.peek(0).is_some_and(|c| c != '\n') {
                    self.pos += 1;
                }
                let line: String = self.chars[start..self.pos].iter().collect();
                if self.peek(0) == Some('\n') {
                    self.pos += 1;
                }
                let candidate = if strip {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if candidate == delimiter {
                    found = true;
                    break;
                }
                body.push_str(&line);
                body.push('\n');
            }
            if !found {
                return Err("a here-document is not terminated".into());
            }
            if to_shell {
                parse_script(&body, self.depth + 1, self.out)?;
            }
        }
        Ok(())
    }

    /// One word, its quotes removed; substitutions inside it are analysed as commands.
    fn word(&mut self) -> Result<Word, String> {
        let mut w = Word::default();
        // `<(…)` / `>(…)`.
        if matches!(self.peek(0), Some('<' | '>')) && self.peek(1) == Some('(') {
            self.pos += 2;
            let inner = self.balanced(')')?;
            parse_script(&inner, self.depth + 1, self.out)?;
            w.dynamic = true;
            return Ok(w);
        }
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>' => break,
                '\\' => {
                    self.pos += 1;
                    match self.peek(0) {
                        Some('\n') => self.pos += 1,
                        Some(n) => {
                            w.text.push(n);
                            w.quoted = true;
                            self.pos += 1;
                        }
                        None => {}
                    }
                }
                '\'' => {
                    self.pos += 1;
                    w.quoted = true;
                    loop {
                        match self.peek(0) {
                            None => return Err("a single quote is not closed".into()),
                            Some('\'') => {
                                self.pos += 1;
                                break;
                            }
                            Some(n) => {
                                w.text.push(n);
                                self.pos += 1;
                            }
                        }
                    }
                }
                '"' => {
                    self.pos += 1;
                    w.quoted = true;
                    loop {
                        match self.peek(0) {
                            None => return Err("a double quote is not closed".into()),
                            Some('"') => {
                                self.pos += 1;
                                break;
                            }
                            Some('\\') => {
                                self.pos += 1;
                                match self.peek(0) {
                                    Some(n @ ('"' | '\\' | '$' | '`')) => {
                                        w.text.push(n);
                                        self.pos += 1;
                                    }
                                    Some('\n') => self.pos += 1,
                                    _ => w.text.push('\\'),
                                }
                            }
                            Some('$') | Some('`') => self.dollar(&mut w)?,
                            Some(n) => {
                                w.text.push(n);
                                self.pos += 1;
                            }
                        }
                    }
                }
                '$' | '`' => self.dollar(&mut w)?,
                '*' | '?' | '[' => {
                    // A glob in the command name would pick a program from the disk.
                    w.dynamic |= w.text.is_empty() || c != '[';
                    w.text.push(c);
                    self.pos += 1;
                }
                '{' if self
                    .peek(1)
                    .is_some_and(|n| n != ' ' && n != '\t' && n != '\n') =>
                {
                    // Brace expansion `{a,b}` makes several words from one.
                    w.text.push(c);
                    w.dynamic = true;
                    self.pos += 1;
                }
                '~' if w.text.is_empty() => {
                    w.text.push(c);
                    self.pos += 1;
                }
                _ => {
                    w.text.push(c);
                    self.pos += 1;
                }
            }
        }
        Ok(w)
    }

    /// `$…` or a backtick at the cursor: variables make the word dynamic, substitutions are
    /// analysed as commands of their own.
    fn dollar(&mut self, w: &mut Word) -> Result<(), String> {
        if self.peek(0) == Some('`') {
            self.pos += 1;
            let mut inner = String::new();
            loop {
                match self.peek(0) {
                    None => return Err("a backtick is not closed".into()),
                    Some('`') => {
                        self.pos += 1;
                        break;
                    }
                    Some('\\') if matches!(self.peek(1), Some('`' | '\\' | '$')) => {
                        inner.push(self.peek(1).unwrap_or('\\'));
                        self.pos += 2;
                    }
                    Some(n) => {
                        inner.push(n);
                        self.pos += 1;
                    }
                }
            }
            parse_script(&inner, self.depth + 1, self.out)?;
            w.dynamic = true;
            return Ok(());
        }
        self.pos += 1; // `$`
        match self.peek(0) {
            Some('(') if self.peek(1) == Some('(') => {
                self.pos += 2;
                let inner = self.balanced(')')?;
                if inner.contains("$(") || inner.contains('`') {
                    return Err("a command inside arithmetic is not analysed".into());
                }
                if self.peek(0) == Some(')') {
                    self.pos += 1;
                }
                w.dynamic = true;
            }
            Some('(') => {
                self.pos += 1;
                let inner = self.balanced(')')?;
                parse_script(&inner, self.depth + 1, self.out)?;
                w.dynamic = true;
            }
            Some('{') => {
                self.pos += 1;
                let inner = self.balanced('}')?;
                if inner.contains("$(") || inner.contains('`') {
                    return Err("a command inside a parameter expansion is not analysed".into());
                }
                w.dynamic = true;
            }
            Some('\'') => {
                // `$'…'`: ANSI-C quoting, escapes decoded.
                self.pos += 1;
                w.quoted = true;
                loop {
                    match self.peek(0) {
                        None => return Err("a $'…' quote is not closed".into()),
                        Some('\'') => {
                            self.pos += 1;
                            break;
                        }
                        Some('\\') => {
                            let n = self.peek(1).unwrap_or('\\');
                            self.pos += 2;
                            match n {
                                'n' => w.text.push('\n'),
                                't' => w.text.push('\t'),
                                'r' => w.text.push('\r'),
                                '\\' | '\'' | '"' => w.text.push(n),
                                // Octal, hex and unicode escapes can spell any name.
                                _ => w.dynamic = true,
                            }
                        }
                        Some(n) => {
                            w.text.push(n);
                            self.pos += 1;
                        }
                    }
                }
            }
            Some(c) if c.is_alphanumeric() || "_@*#?$!-".contains(c) => {
                w.text.push('$');
                while self
                    .peek(0)
                    .is_some_and(|c| c.is_alphanumeric() || c == '_')
                {
                    w.text.push(self.peek(0).unwrap_or('_'));
                    self.pos += 1;
                }
                if w.text.ends_with('$') {
                    self.pos += 1;
                }
                w.dynamic = true;
            }
            _ => w.text.push('$'),
        }
        Ok(())
    }

    /// The text up to the `close` that balances the one just passed, quotes respected.
    fn balanced(&mut self, close: char) -> Result<String, String> {
        let open = if close == ')' { '(' } else { '{' };
        let mut depth = 1;
        let mut inner = String::new();
        let mut quote: Option<char> = None;
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some('"'), '\\') | (None, '\\') => {
                    inner.push(c);
                    if let Some(n) = self.peek(0) {
                        inner.push(n);
                        self.pos += 1;
                    }
                    continue;
                }
                (Some(_), _) => {}
                (None, '\'' | '"') => quote = Some(c),
                (None, c) if c == open => depth += 1,
                (None, c) if c == close => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(inner);
                    }
                }
                _ => {}
            }
            inner.push(c);
        }
        Err(format!("a `{open}` is not closed"))
    }
}

fn is_assignment(w: &Word) -> bool {
    match w.text.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

/// `2>&1`'s target is a descriptor, not a file.
fn is_descriptor_target(t: &str) -> bool {
    t == "-" || t.chars().all(|c| c.is_ascii_digit()) || t == "/dev/null"
}

fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

fn with_basename(words: &[&str]) -> String {
    let mut v: Vec<&str> = words.to_vec();
    if let Some(first) = v.first_mut() {
        *first = basename(first);
    }
    v.join(" ")
}

/// Whether the command so far is a shell that will read its script from its input.
fn feeds_shell(words: &[Word]) -> bool {
    words.iter().find(|w| !is_assignment(w)).is_some_and(|w| {
        SHELLS.contains(&basename(&w.text)) || WRAPPERS.contains(&basename(&w.text))
    }) && words.iter().any(|w| SHELLS.contains(&basename(&w.text)))
}

#[cfg(test)]
#[path = "shell_commands_tests.rs"]
mod tests;
