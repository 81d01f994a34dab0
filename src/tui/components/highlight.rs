//! A small, table-driven syntax colourer for fenced code blocks: keywords, literals,
//! strings, comments, numbers, types and calls for the languages assistants write most
//! (Rust, JS/TS, Python, Go, C/C++, Java, JSON, shell, YAML, TOML, diff), coloured with the
//! theme's `syntax*` tokens. It is a line tokenizer with just enough state for block
//! comments and multi-line strings; it never fails, and unknown languages return `None`.

use crate::tui::theme::{Theme, Token};

/// How keys are recognised in data languages.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keys {
    None,
    /// `"key":`
    Json,
    /// `key:` at the start of a line (after indentation or `- `).
    Yaml,
    /// `key =` and `[section]`.
    Toml,
}

struct Lang {
    keywords: &'static [&'static str],
    literals: &'static [&'static str],
    types: &'static [&'static str],
    line_comments: &'static [&'static str],
    block_comment: Option<(&'static str, &'static str)>,
    /// Quote delimiters, longest first; those in `multiline` may span lines.
    quotes: &'static [&'static str],
    multiline: &'static [&'static str],
    /// Capitalised identifiers are types (Rust, Java, Go, TS…).
    capitalized_types: bool,
    /// `$name` is a variable (shell).
    dollar_vars: bool,
    keys: Keys,
}

const C_LIKE_OPS: Lang = Lang {
    keywords: &[],
    literals: &[],
    types: &[],
    line_comments: &["//"],
    block_comment: Some(("/*", "*/")),
    quotes: &["\"", "'"],
    multiline: &[],
    capitalized_types: true,
    dollar_vars: false,
    keys: Keys::None,
};

const RUST: Lang = Lang {
    keywords: &[
        "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum",
        "extern", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
        "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait", "type",
        "unsafe", "use", "where", "while",
    ],
    literals: &["true", "false", "None", "Some", "Ok", "Err"],
    types: &[
        "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
        "f32", "f64", "bool", "char", "str", "String", "Vec", "Option", "Result", "Box",
    ],
    quotes: &["\"", "'"],
    multiline: &["\""],
    ..C_LIKE_OPS
};

const JS: Lang = Lang {
    keywords: &[
        "async",
        "await",
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "default",
        "delete",
        "do",
        "else",
        "export",
        "extends",
        "finally",
        "for",
        "from",
        "function",
        "if",
        "import",
        "in",
        "instanceof",
        "interface",
        "let",
        "new",
        "of",
        "return",
        "static",
        "switch",
        "this",
        "throw",
        "try",
        "type",
        "typeof",
        "var",
        "void",
        "while",
        "yield",
        "enum",
        "implements",
        "private",
        "public",
        "protected",
        "readonly",
        "as",
    ],
    literals: &["true", "false", "null", "undefined", "NaN", "Infinity"],
    types: &[
        "string", "number", "boolean", "any", "unknown", "never", "object", "bigint",
    ],
    quotes: &["`", "\"", "'"],
    multiline: &["`"],
    dollar_vars: false,
    ..C_LIKE_OPS
};

const PYTHON: Lang = Lang {
    keywords: &[
        "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
        "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is",
        "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with",
        "yield", "self",
    ],
    literals: &["True", "False", "None"],
    types: &[
        "int", "float", "str", "bool", "list", "dict", "set", "tuple", "bytes",
    ],
    line_comments: &["#"],
    block_comment: None,
    quotes: &["\"\"\"", "'''", "\"", "'"],
    multiline: &["\"\"\"", "'''"],
    ..C_LIKE_OPS
};

const GO: Lang = Lang {
    keywords: &[
        "break",
        "case",
        "chan",
        "const",
        "continue",
        "default",
        "defer",
        "else",
        "fallthrough",
        "for",
        "func",
        "go",
        "goto",
        "if",
        "import",
        "interface",
        "map",
        "package",
        "range",
        "return",
        "select",
        "struct",
        "switch",
        "type",
        "var",
    ],
    literals: &["true", "false", "nil", "iota"],
    types: &[
        "bool", "byte", "error", "float32", "float64", "int", "int8", "int16", "int32", "int64",
        "rune", "string", "uint", "uint8", "uint16", "uint32", "uint64", "uintptr", "any",
    ],
    quotes: &["`", "\"", "'"],
    multiline: &["`"],
    ..C_LIKE_OPS
};

const C: Lang = Lang {
    keywords: &[
        "auto",
        "break",
        "case",
        "class",
        "const",
        "constexpr",
        "continue",
        "default",
        "delete",
        "do",
        "else",
        "enum",
        "extern",
        "for",
        "goto",
        "if",
        "inline",
        "namespace",
        "new",
        "operator",
        "private",
        "protected",
        "public",
        "return",
        "sizeof",
        "static",
        "struct",
        "switch",
        "template",
        "this",
        "throw",
        "try",
        "catch",
        "typedef",
        "typename",
        "union",
        "using",
        "virtual",
        "volatile",
        "while",
        "#include",
        "#define",
        "#ifdef",
        "#ifndef",
        "#endif",
        "#if",
        "#else",
        "#pragma",
    ],
    literals: &["true", "false", "NULL", "nullptr"],
    types: &[
        "int", "char", "void", "float", "double", "long", "short", "unsigned", "signed", "bool",
        "size_t", "auto", "uint8_t", "uint32_t", "uint64_t", "int32_t", "int64_t", "std",
    ],
    capitalized_types: false,
    ..C_LIKE_OPS
};

const JAVA: Lang = Lang {
    keywords: &[
        "abstract",
        "break",
        "case",
        "catch",
        "class",
        "continue",
        "default",
        "do",
        "else",
        "enum",
        "extends",
        "final",
        "finally",
        "for",
        "if",
        "implements",
        "import",
        "instanceof",
        "interface",
        "new",
        "package",
        "private",
        "protected",
        "public",
        "return",
        "static",
        "super",
        "switch",
        "synchronized",
        "this",
        "throw",
        "throws",
        "try",
        "var",
        "void",
        "volatile",
        "while",
        "record",
    ],
    literals: &["true", "false", "null"],
    types: &[
        "int", "long", "short", "byte", "char", "boolean", "float", "double",
    ],
    ..C_LIKE_OPS
};

const JSON: Lang = Lang {
    keywords: &[],
    literals: &["true", "false", "null"],
    types: &[],
    line_comments: &["//"],
    quotes: &["\""],
    capitalized_types: false,
    keys: Keys::Json,
    ..C_LIKE_OPS
};

const SHELL: Lang = Lang {
    keywords: &[
        "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
        "in", "function", "return", "local", "export", "set", "unset", "source", "echo", "cd",
        "exit", "readonly", "shift", "trap",
    ],
    literals: &["true", "false"],
    types: &[],
    line_comments: &["#"],
    block_comment: None,
    quotes: &["\"", "'"],
    multiline: &["\"", "'"],
    capitalized_types: false,
    dollar_vars: true,
    keys: Keys::None,
};

const YAML: Lang = Lang {
    keywords: &[],
    literals: &["true", "false", "null", "yes", "no", "on", "off", "~"],
    types: &[],
    line_comments: &["#"],
    block_comment: None,
    quotes: &["\"", "'"],
    multiline: &[],
    capitalized_types: false,
    dollar_vars: false,
    keys: Keys::Yaml,
};

const TOML: Lang = Lang {
    literals: &["true", "false"],
    quotes: &["\"\"\"", "'''", "\"", "'"],
    multiline: &["\"\"\"", "'''"],
    keys: Keys::Toml,
    ..YAML
};

fn lang_for(name: &str) -> Option<&'static Lang> {
    Some(match name.to_ascii_lowercase().as_str() {
        "rust" | "rs" => &RUST,
        "js" | "javascript" | "jsx" | "mjs" | "cjs" | "ts" | "typescript" | "tsx" => &JS,
        "python" | "py" | "python3" => &PYTHON,
        "go" | "golang" => &GO,
        "c" | "h" | "cpp" | "c++" | "cc" | "hpp" | "cxx" => &C,
        "java" | "kotlin" | "kt" | "scala" | "cs" | "csharp" => &JAVA,
        "json" | "jsonc" | "json5" => &JSON,
        "bash" | "sh" | "shell" | "zsh" | "console" | "shellscript" => &SHELL,
        "yaml" | "yml" => &YAML,
        "toml" | "ini" => &TOML,
        _ => return None,
    })
}

/// pi's language for a file, by its extension (`src/a.rs` → `rust`); `None` for extensions
/// pi does not map. [`highlight`] colours those of them it knows.
pub fn language_for_path(path: &str) -> Option<&'static str> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let ext = name.rsplit('.').next()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "ts" | "tsx" => "typescript",
        "js" | "jsx" | "mjs" | "cjs" => "javascript",
        "py" => "python",
        "rb" => "ruby",
        "rs" => "rust",
        "go" => "go",
        "java" => "java",
        "kt" => "kotlin",
        "swift" => "swift",
        "c" | "h" => "c",
        "cpp" | "cc" | "cxx" | "hpp" => "cpp",
        "cs" => "csharp",
        "php" => "php",
        "sh" | "bash" | "zsh" => "bash",
        "fish" => "fish",
        "ps1" => "powershell",
        "sql" => "sql",
        "html" | "htm" => "html",
        "css" => "css",
        "scss" => "scss",
        "sass" => "sass",
        "less" => "less",
        "json" => "json",
        "yaml" | "yml" => "yaml",
        "toml" => "toml",
        "xml" => "xml",
        "md" | "markdown" => "markdown",
        "dockerfile" => "dockerfile",
        "makefile" => "makefile",
        "cmake" => "cmake",
        "lua" => "lua",
        "perl" => "perl",
        "r" => "r",
        "scala" => "scala",
        "clj" => "clojure",
        "ex" | "exs" => "elixir",
        "erl" => "erlang",
        "hs" => "haskell",
        "ml" => "ocaml",
        "vim" => "vim",
        "graphql" => "graphql",
        "proto" => "protobuf",
        "tf" | "hcl" => "hcl",
        _ => return None,
    })
}

/// Whether `lang` (a fence info string's first word) is coloured by [`highlight`].
pub fn supports(lang: &str) -> bool {
    lang_for(lang).is_some() || is_diff(lang)
}

fn is_diff(lang: &str) -> bool {
    matches!(lang.to_ascii_lowercase().as_str(), "diff" | "patch")
}

/// Colours `code` as `lang`, one output line per input line; `None` for languages it does
/// not know (the caller then uses the plain code-block colour).
pub fn highlight(code: &str, lang: &str, theme: &Theme) -> Option<Vec<String>> {
    let mut h = Highlighter::new(lang)?;
    Some(code.split('\n').map(|l| h.line(l, theme)).collect())
}

/// What an unfinished line leaves open: a block comment or multi-line string.
pub type LineState = Option<(Token, &'static str)>;

/// Line-at-a-time colouring, for callers that cache lines (streaming code blocks).
pub struct Highlighter {
    /// `None` for diffs, which are coloured line by line without state.
    lang: Option<&'static Lang>,
    state: LineState,
}

impl Highlighter {
    /// `None` for languages [`highlight`] does not know.
    pub fn new(lang: &str) -> Option<Highlighter> {
        let lang = if is_diff(lang) {
            None
        } else {
            Some(lang_for(lang)?)
        };
        Some(Highlighter { lang, state: None })
    }

    /// The state carried into the next line.
    pub fn state(&self) -> LineState {
        self.state
    }

    pub fn set_state(&mut self, state: LineState) {
        self.state = state;
    }

    /// Colours the next line.
    pub fn line(&mut self, line: &str, theme: &Theme) -> String {
        let Some(lang) = self.lang else {
            return diff_line(line, theme);
        };
        let mut out = Painter::new(theme);
        tokenize_line(line, lang, &mut self.state, &mut out);
        out.finish()
    }
}

fn diff_line(line: &str, theme: &Theme) -> String {
    let token = if line.starts_with("+++") || line.starts_with("---") || line.starts_with("@@") {
        Token::SyntaxKeyword
    } else if line.starts_with('+') {
        Token::ToolDiffAdded
    } else if line.starts_with('-') {
        Token::ToolDiffRemoved
    } else {
        Token::ToolDiffContext
    };
    theme.fg(token, line)
}

/// Collects coloured runs, merging neighbours of the same colour.
struct Painter<'t> {
    theme: &'t Theme,
    out: String,
    current: Option<Token>,
}

impl<'t> Painter<'t> {
    fn new(theme: &'t Theme) -> Self {
        Painter {
            theme,
            out: String::new(),
            current: None,
        }
    }

    fn push(&mut self, token: Option<Token>, text: &str) {
        if text.is_empty() {
            return;
        }
        if token != self.current {
            if self.current.is_some() {
                self.out.push_str(self.theme.fg_reset());
            }
            if let Some(t) = token {
                self.out.push_str(self.theme.fg_code(t));
            }
            self.current = token;
        }
        self.out.push_str(text);
    }

    fn finish(mut self) -> String {
        if self.current.is_some() {
            self.out.push_str(self.theme.fg_reset());
        }
        self.out
    }
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Byte index just past the closing `quote` in `s` (backslash escapes skipped).
fn find_close(s: &str, quote: &str, escapes: bool) -> Option<usize> {
    let mut i = 0;
    while i < s.len() {
        if escapes && s[i..].starts_with('\\') {
            i += 1 + s[i + 1..].chars().next().map_or(0, char::len_utf8);
            continue;
        }
        if s[i..].starts_with(quote) {
            return Some(i + quote.len());
        }
        i += s[i..].chars().next().map_or(1, char::len_utf8);
    }
    None
}

fn tokenize_line(
    line: &str,
    lang: &Lang,
    state: &mut Option<(Token, &'static str)>,
    out: &mut Painter,
) {
    let mut i = 0;
    if let Some((token, close)) = *state {
        match find_close(line, close, token == Token::SyntaxString) {
            Some(end) => {
                out.push(Some(token), &line[..end]);
                *state = None;
                i = end;
            }
            None => {
                out.push(Some(token), line);
                return;
            }
        }
    }
    // YAML keys: `key:` after indentation and list dashes.
    if lang.keys == Keys::Yaml && i == 0 {
        let body = line.trim_start_matches([' ', '-']);
        let start = line.len() - body.len();
        if let Some(colon) = body.find(':') {
            let key = &body[..colon];
            if !key.is_empty() && !key.starts_with('#') && !key.contains(['"', '\'', ' ']) {
                out.push(None, &line[..start]);
                out.push(Some(Token::SyntaxVariable), key);
                i = start + colon;
            }
        }
    }
    if lang.keys == Keys::Toml && line.trim_start().starts_with('[') {
        out.push(Some(Token::SyntaxType), line);
        return;
    }
    let mut prev: Option<char> = None;
    while i < line.len() {
        let rest = &line[i..];
        let c = rest.chars().next().unwrap_or(' ');
        let after_space = prev.is_none_or(|p| !is_ident(p) && p != '$');
        if let Some(lc) = lang.line_comments.iter().find(|lc| rest.starts_with(**lc)) {
            if *lc != "#" || prev.is_none_or(char::is_whitespace) {
                out.push(Some(Token::SyntaxComment), rest);
                return;
            }
        }
        if let Some((open, close)) = lang.block_comment.filter(|(o, _)| rest.starts_with(*o)) {
            let body = &rest[open.len()..];
            match find_close(body, close, false) {
                Some(end) => {
                    out.push(Some(Token::SyntaxComment), &rest[..open.len() + end]);
                    i += open.len() + end;
                    prev = Some('/');
                    continue;
                }
                None => {
                    out.push(Some(Token::SyntaxComment), rest);
                    *state = Some((Token::SyntaxComment, close));
                    return;
                }
            }
        }
        if let Some(q) = lang.quotes.iter().find(|q| rest.starts_with(**q)) {
            let lifetime = *q == "'" && std::ptr::eq(lang, &RUST) && !is_char_literal(rest);
            if !lifetime {
                let body = &rest[q.len()..];
                let escapes = !(lang.keys == Keys::None && lang.dollar_vars && *q == "'");
                match find_close(body, q, escapes) {
                    Some(end) => {
                        let len = q.len() + end;
                        let is_key =
                            lang.keys == Keys::Json && rest[len..].trim_start().starts_with(':');
                        let token = if is_key {
                            Token::SyntaxVariable
                        } else {
                            Token::SyntaxString
                        };
                        out.push(Some(token), &rest[..len]);
                        i += len;
                        prev = Some('"');
                        continue;
                    }
                    None => {
                        out.push(Some(Token::SyntaxString), rest);
                        if lang.multiline.contains(q) {
                            *state = Some((Token::SyntaxString, q));
                        }
                        return;
                    }
                }
            }
        }
        if c.is_ascii_digit() && after_space {
            let len = rest
                .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '.'))
                .unwrap_or(rest.len());
            let len = rest[..len].find("..").unwrap_or(len).max(1);
            out.push(Some(Token::SyntaxNumber), &rest[..len]);
            i += len;
            prev = Some('0');
            continue;
        }
        if lang.dollar_vars && c == '$' {
            let body = &rest[1..];
            let len = if body.starts_with('{') {
                body.find('}').map_or(body.len(), |e| e + 1)
            } else {
                body.find(|ch: char| !is_ident(ch)).unwrap_or(body.len())
            };
            out.push(Some(Token::SyntaxVariable), &rest[..1 + len]);
            i += 1 + len;
            prev = Some('a');
            continue;
        }
        let starts_word =
            is_ident(c) || (c == '#' && lang.keywords.iter().any(|k| k.starts_with('#')));
        if starts_word && after_space {
            let len = rest
                .char_indices()
                .skip(1)
                .find(|(_, ch)| !(is_ident(*ch) || lang.dollar_vars && *ch == '-'))
                .map_or(rest.len(), |(o, _)| o);
            let word = &rest[..len];
            let next = rest[len..].trim_start();
            let token = if lang.keywords.contains(&word) {
                Some(Token::SyntaxKeyword)
            } else if lang.literals.contains(&word) {
                Some(Token::SyntaxNumber)
            } else if lang.types.contains(&word)
                || (lang.capitalized_types && word.starts_with(|ch: char| ch.is_uppercase()))
            {
                Some(Token::SyntaxType)
            } else if lang.keys == Keys::Toml
                && next.starts_with('=')
                && i == line.len() - line.trim_start().len()
            {
                Some(Token::SyntaxVariable)
            } else if next.starts_with('(') || (std::ptr::eq(lang, &RUST) && next.starts_with('!'))
            {
                Some(Token::SyntaxFunction)
            } else {
                None
            };
            out.push(token, word);
            i += len;
            prev = word.chars().last();
            continue;
        }
        let token = if "+-*/%=<>!&|^~?:".contains(c) {
            Some(Token::SyntaxOperator)
        } else if "()[]{};,.".contains(c) {
            Some(Token::SyntaxPunctuation)
        } else {
            None
        };
        out.push(token, &rest[..c.len_utf8()]);
        i += c.len_utf8();
        prev = Some(c);
    }
}

/// `'x'`, `'\n'`, `'\u{1F600}'` rather than a lifetime `'a`.
fn is_char_literal(s: &str) -> bool {
    let mut chars = s.chars().skip(1);
    match chars.next() {
        Some('\\') => s[1..].find('\'').is_some_and(|e| e > 1 && e < 12),
        Some(_) => chars.next() == Some('\''),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::text::strip_ansi;
    use crate::tui::theme::ColorMode;

    fn theme() -> Theme {
        Theme::builtin("dark", ColorMode::TrueColor).unwrap()
    }

    fn colored(theme: &Theme, token: Token, text: &str) -> String {
        theme.fg(token, text)
    }

    #[test]
    fn rust_snippet_is_coloured_by_kind() {
        let t = theme();
        let code =
            "fn main() {\n    // hi\n    let x: u32 = 42; /* a\n b */ println!(\"s {}\", 'c');\n}";
        let lines = highlight(code, "rust", &t).unwrap();
        assert_eq!(lines.len(), 5);
        assert_eq!(strip_ansi(&lines.join("\n")), code);
        assert!(lines[0].starts_with(&colored(&t, Token::SyntaxKeyword, "fn")));
        assert!(lines[0].contains(&colored(&t, Token::SyntaxFunction, "main")));
        assert_eq!(
            lines[1],
            format!("    {}", colored(&t, Token::SyntaxComment, "// hi"))
        );
        assert!(lines[2].contains(&colored(&t, Token::SyntaxKeyword, "let")));
        assert!(lines[2].contains(&colored(&t, Token::SyntaxType, "u32")));
        assert!(lines[2].contains(&colored(&t, Token::SyntaxNumber, "42")));
        assert!(lines[2].ends_with(&colored(&t, Token::SyntaxComment, "/* a")));
        assert!(lines[3].starts_with(&colored(&t, Token::SyntaxComment, " b */")));
        assert!(lines[3].contains(&colored(&t, Token::SyntaxFunction, "println")));
        assert!(lines[3].contains(&colored(&t, Token::SyntaxString, "\"s {}\"")));
        assert!(lines[3].contains(&colored(&t, Token::SyntaxString, "'c'")));
    }

    #[test]
    fn other_languages() {
        let t = theme();
        let py = highlight(
            "def f(x):\n    \"\"\"doc\n    more\"\"\"\n    return None # c",
            "py",
            &t,
        )
        .unwrap();
        assert!(py[0].starts_with(&colored(&t, Token::SyntaxKeyword, "def")));
        assert_eq!(py[2], colored(&t, Token::SyntaxString, "    more\"\"\""));
        assert!(py[3].ends_with(&colored(&t, Token::SyntaxComment, "# c")));
        let json = highlight(r#"{"a": "b", "n": 1.5, "t": true}"#, "json", &t).unwrap();
        assert!(json[0].contains(&colored(&t, Token::SyntaxVariable, "\"a\"")));
        assert!(json[0].contains(&colored(&t, Token::SyntaxString, "\"b\"")));
        assert!(json[0].contains(&colored(&t, Token::SyntaxNumber, "1.5")));
        let sh = highlight("echo \"$HOME\" $PATH # x", "bash", &t).unwrap();
        assert!(sh[0].contains(&colored(&t, Token::SyntaxVariable, "$PATH")));
        assert!(sh[0].ends_with(&colored(&t, Token::SyntaxComment, "# x")));
        let yaml = highlight("  - name: pi # c", "yaml", &t).unwrap();
        assert!(yaml[0].contains(&colored(&t, Token::SyntaxVariable, "name")));
        let toml = highlight("[package]\nname = \"pi\"", "toml", &t).unwrap();
        assert_eq!(toml[0], colored(&t, Token::SyntaxType, "[package]"));
        assert!(toml[1].starts_with(&colored(&t, Token::SyntaxVariable, "name")));
        let diff = highlight("+a\n-b\n c", "diff", &t).unwrap();
        assert_eq!(diff[0], colored(&t, Token::ToolDiffAdded, "+a"));
        assert_eq!(diff[1], colored(&t, Token::ToolDiffRemoved, "-b"));
        for lang in ["go", "c", "java", "ts"] {
            assert!(supports(lang));
            let out = highlight("x = \"a\\\"b\" // c", lang, &t).unwrap();
            assert_eq!(strip_ansi(&out[0]), "x = \"a\\\"b\" // c");
        }
        assert!(highlight("x", "brainfuck", &t).is_none());
    }
}
