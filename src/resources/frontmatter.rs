//! The small YAML subset used in skill and prompt-template front matter: `key: value` lines,
//! single- or double-quoted strings, `true`/`false`, and simple `|`/`>` block scalars. Nested maps
//! and lists are skipped (their keys are not ones we read). Anything we cannot read is reported
//! as an error string; the caller turns it into a warning naming the file.

use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
pub enum FmValue {
    Str(String),
    Bool(bool),
    Null,
    /// A nested map, list or flow collection we do not interpret.
    Other,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Frontmatter {
    pub fields: BTreeMap<String, FmValue>,
    /// The text after the closing `---`, trimmed (the whole text when there is no front matter).
    pub body: String,
    /// Set when the front matter block could not be read; fields may be partial.
    pub error: Option<String>,
}

impl Frontmatter {
    /// A string field (empty strings included); booleans and other values are not strings.
    pub fn str(&self, key: &str) -> Option<&str> {
        match self.fields.get(key) {
            Some(FmValue::Str(s)) => Some(s),
            _ => None,
        }
    }

    pub fn bool(&self, key: &str) -> Option<bool> {
        match self.fields.get(key) {
            Some(FmValue::Bool(b)) => Some(*b),
            _ => None,
        }
    }
}

/// Splits `content` into front matter and body the way pi does: the text must start with
/// `---`, and the block ends at the next line starting with `---`.
pub fn parse(content: &str) -> Frontmatter {
    let text = content.replace("\r\n", "\n").replace('\r', "\n");
    if !text.starts_with("---") {
        return Frontmatter {
            body: text,
            ..Default::default()
        };
    }
    let Some(end) = text[3..].find("\n---").map(|i| i + 3) else {
        // pi reads this as a body without front matter; say why the fields were not read.
        let error = text
            .lines()
            .next()
            .is_some_and(|first| first.trim_end() == "---")
            .then(|| "front matter has no closing \"---\" line".to_string());
        return Frontmatter {
            body: text,
            error,
            ..Default::default()
        };
    };
    let yaml = text.get(4..end).unwrap_or("");
    let body = text[end + 4..].trim().to_string();
    let (fields, error) = parse_yaml(yaml);
    Frontmatter {
        fields,
        body,
        error,
    }
}

/// The body without front matter (trimmed when front matter was present).
pub fn strip(content: &str) -> String {
    parse(content).body
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn parse_yaml(yaml: &str) -> (BTreeMap<String, FmValue>, Option<String>) {
    let mut fields = BTreeMap::new();
    let mut error = None;
    let mut fail = |line: usize, what: String| {
        error.get_or_insert_with(|| format!("line {line}: {what}"));
    };
    let lines: Vec<&str> = yaml.lines().collect();
    let content = |l: &str| !l.trim().is_empty() && !l.trim_start().starts_with('#');
    if let Some(n) = lines
        .iter()
        .position(|l| !l.trim().is_empty() && l.trim_start_matches(' ').starts_with('\t'))
    {
        fail(n + 1, "tabs are not allowed for indentation".into());
    }
    // YAML lets the whole map be indented; its keys share the first line's column.
    let base = lines
        .iter()
        .find(|l| content(l))
        .map_or(0, |l| indent_of(l));
    let deeper = |l: &str| l.trim().is_empty() || indent_of(l) > base;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let line_no = i + 1;
        i += 1;
        let trimmed = line.trim();
        if !content(line) || trimmed == "---" {
            continue;
        }
        // Deeper lines belong to the value before them and were consumed with it.
        if indent_of(line) != base {
            fail(line_no, "keys must all start at the same column".into());
            continue;
        }
        if trimmed.starts_with('-') && (trimmed.len() == 1 || trimmed[1..].starts_with(' ')) {
            fail(line_no, "a list item outside any key".into());
            continue;
        }
        let Some((key, rest)) = split_key(trimmed) else {
            fail(
                line_no,
                format!("expected \"key: value\", found \"{trimmed}\""),
            );
            continue;
        };
        if fields.contains_key(key) {
            fail(line_no, format!("duplicate key \"{key}\""));
        }
        let rest = strip_comment(rest).trim();
        let value = if rest.is_empty() {
            // A nested block (map or list) or a null value.
            let nested = lines[i..]
                .iter()
                .take_while(|l| {
                    deeper(l) || indent_of(l) == base && l.trim_start().starts_with('-')
                })
                .count();
            let has_content = lines[i..i + nested].iter().any(|l| !l.trim().is_empty());
            i += nested;
            if has_content {
                FmValue::Other
            } else {
                FmValue::Null
            }
        } else if let Some(style) = block_style(rest) {
            let start = i;
            let block_indent = lines[i..]
                .iter()
                .find(|l| !l.trim().is_empty())
                .map_or(0, |l| indent_of(l));
            while i < lines.len()
                && (lines[i].trim().is_empty() || indent_of(lines[i]) >= block_indent)
                && deeper(lines[i])
            {
                i += 1;
            }
            FmValue::Str(block_scalar(&lines[start..i], style))
        } else {
            // A plain value may go on over deeper lines, folded with spaces.
            let mut text = rest.to_string();
            while i < lines.len() && deeper(lines[i]) && !lines[i].trim().is_empty() {
                text.push(' ');
                text.push_str(strip_comment(lines[i].trim()).trim());
                i += 1;
            }
            match scalar(&text) {
                Ok(v) => v,
                Err(e) => {
                    fail(line_no, format!("invalid value for \"{key}\": {e}"));
                    continue;
                }
            }
        };
        fields.insert(key.to_string(), value);
    }
    (fields, error)
}

fn split_key(line: &str) -> Option<(&str, &str)> {
    let (key, rest) = if let Some(q) = line.strip_prefix('"') {
        let end = q.find('"')?;
        let rest = q[end + 1..].strip_prefix(':')?;
        (&q[..end], rest)
    } else {
        let idx = line.find(':')?;
        let rest = &line[idx + 1..];
        if !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
            return None;
        }
        (line[..idx].trim(), rest)
    };
    if key.is_empty() {
        return None;
    }
    Some((key, rest))
}

/// Removes a ` #comment` outside quotes. Inside quotes the closing quote is found as YAML
/// finds it: `\"` does not end a double-quoted string, `''` does not end a single-quoted one.
fn strip_comment(s: &str) -> &str {
    let mut quote = None;
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(b'"') if b == b'\\' => i += 1,
            Some(b'\'') if b == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 1,
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if (b == b'"' || b == b'\'') && (i == 0 || bytes[i - 1] == b' ') => {
                quote = Some(b)
            }
            None if b == b'#' && (i == 0 || bytes[i - 1] == b' ' || bytes[i - 1] == b'\t') => {
                return &s[..i];
            }
            None => {}
        }
        i += 1;
    }
    s
}

#[derive(Clone, Copy)]
struct BlockStyle {
    folded: bool,
    /// `-` strip, `+` keep, none clip (one trailing newline).
    chomp: Option<char>,
}

fn block_style(v: &str) -> Option<BlockStyle> {
    let mut chars = v.chars();
    let folded = match chars.next()? {
        '|' => false,
        '>' => true,
        _ => return None,
    };
    let rest: String = chars.collect();
    let chomp = match rest.as_str() {
        "" => None,
        "-" => Some('-'),
        "+" => Some('+'),
        _ => return None,
    };
    Some(BlockStyle { folded, chomp })
}

fn block_scalar(lines: &[&str], style: BlockStyle) -> String {
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent_of(l))
        .min()
        .unwrap_or(0);
    let body: Vec<&str> = lines
        .iter()
        // A blank line may be shorter than the indent, or blank with other whitespace.
        .map(|l| l.get(indent..).unwrap_or(""))
        .collect();
    let mut out = String::new();
    if style.folded {
        let mut prev_blank = true;
        for l in &body {
            if l.is_empty() {
                out.push('\n');
                prev_blank = true;
            } else {
                if !prev_blank {
                    out.push(' ');
                }
                out.push_str(l);
                prev_blank = false;
            }
        }
        out.push('\n');
    } else {
        for l in &body {
            out.push_str(l);
            out.push('\n');
        }
    }
    match style.chomp {
        Some('-') => out.trim_end_matches('\n').to_string(),
        Some(_) => out,
        None => format!("{}\n", out.trim_end_matches('\n')),
    }
}

fn scalar(v: &str) -> Result<FmValue, String> {
    if let Some(inner) = v.strip_prefix('"') {
        let inner = inner
            .strip_suffix('"')
            .ok_or_else(|| "unterminated double-quoted string, or text after it".to_string())?;
        return Ok(FmValue::Str(unescape_double(inner)));
    }
    if let Some(inner) = v.strip_prefix('\'') {
        let inner = inner
            .strip_suffix('\'')
            .ok_or_else(|| "unterminated single-quoted string, or text after it".to_string())?;
        return Ok(FmValue::Str(inner.replace("''", "'")));
    }
    if let Some(open) = v.chars().next().filter(|c| matches!(c, '[' | '{')) {
        let close = if open == '[' { ']' } else { '}' };
        if !v.ends_with(close) {
            return Err(format!("\"{open}\" is not closed with \"{close}\""));
        }
        return Ok(FmValue::Other);
    }
    if let Some(c) = v.chars().next().filter(|c| matches!(c, '@' | '`' | '%')) {
        return Err(format!("a plain value cannot start with \"{c}\"; quote it"));
    }
    if v.contains(": ") || v.ends_with(':') {
        return Err("\": \" inside a plain value reads as a nested key; quote the value".into());
    }
    Ok(match v {
        "true" | "True" | "TRUE" => FmValue::Bool(true),
        "false" | "False" | "FALSE" => FmValue::Bool(false),
        "null" | "Null" | "NULL" | "~" => FmValue::Null,
        _ => FmValue::Str(v.to_string()),
    })
}

fn unescape_double(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str) -> (BTreeMap<String, FmValue>, Option<String>) {
        parse_yaml(text)
    }

    /// Each of these is an error for the `yaml` package pi parses front matter with, which
    /// then drops the file; we name the problem.
    #[test]
    fn what_pi_rejects_is_reported_with_its_line() {
        for (text, expected) in [
            (
                "description: Use this: for that",
                "line 1: invalid value for \"description\"",
            ),
            ("description: Note:", "nested key"),
            ("a: [1, 2", "not closed"),
            ("a: {b: 1", "not closed"),
            ("a: 1\na: 2", "line 2: duplicate key \"a\""),
            ("a: 1\n\tb: 2", "line 2: tabs"),
            ("\tb: 2", "tabs"),
            ("description: \"x\" trailing", "text after it"),
            ("a: |\n  x\n b: 2", "same column"),
            ("name: x\n  bad: indent", "nested key"),
            ("a: @x", "cannot start with \"@\""),
            ("a: `x`", "cannot start"),
            ("a: %x", "cannot start"),
        ] {
            let (_, error) = yaml(text);
            let error = error.unwrap_or_else(|| panic!("no error for {text:?}"));
            assert!(error.contains(expected), "{text:?}: {error}");
        }
    }

    #[test]
    fn what_pi_accepts_is_read_as_pi_reads_it() {
        let ok = |text: &str| {
            let (fields, error) = yaml(text);
            assert_eq!(error, None, "{text:?}");
            fields
        };
        let str_of = |f: &BTreeMap<String, FmValue>, k: &str| match f.get(k) {
            Some(FmValue::Str(s)) => s.clone(),
            other => panic!("{k}: {other:?}"),
        };
        assert_eq!(
            str_of(&ok("description: see http://x"), "description"),
            "see http://x"
        );
        let f = ok("  description: x\n  name: y");
        assert_eq!(
            (str_of(&f, "description"), str_of(&f, "name")),
            ("x".into(), "y".into())
        );
        assert_eq!(str_of(&ok("description: 'it''s'"), "description"), "it's");
        assert_eq!(str_of(&ok("description: a # c: d"), "description"), "a");
        assert_eq!(str_of(&ok("a: b\n c"), "a"), "b c");
        assert_eq!(str_of(&ok("d: >\n  one\n  two"), "d"), "one two\n");
        assert_eq!(ok("tools:\n- read\n- write\nname: n").len(), 2);
    }

    #[test]
    fn an_unclosed_block_is_named() {
        let fm = parse("---\nname: x\ndescription: y\n");
        assert_eq!(
            fm.error.as_deref(),
            Some("front matter has no closing \"---\" line")
        );
        assert!(fm.fields.is_empty());
        assert_eq!(parse("----\nnot front matter").error, None);
        assert_eq!(parse("# Title").error, None);
    }
}
