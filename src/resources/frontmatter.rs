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
        return Frontmatter {
            body: text,
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
    let lines: Vec<&str> = yaml.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed == "---" {
            continue;
        }
        if indent_of(line) > 0 || trimmed.starts_with("- ") || trimmed == "-" {
            // Part of a nested value we skip.
            continue;
        }
        let Some((key, rest)) = split_key(trimmed) else {
            error.get_or_insert_with(|| format!("invalid frontmatter line {}: {trimmed}", i));
            continue;
        };
        let rest = strip_comment(rest).trim();
        let value = if rest.is_empty() {
            // A nested block (map or list) or a null value.
            let nested = lines[i..]
                .iter()
                .take_while(|l| l.trim().is_empty() || indent_of(l) > 0 || l.starts_with("- "))
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
            while i < lines.len() && (lines[i].trim().is_empty() || indent_of(lines[i]) > 0) {
                i += 1;
            }
            FmValue::Str(block_scalar(&lines[start..i], style))
        } else {
            match scalar(rest) {
                Ok(v) => v,
                Err(e) => {
                    error.get_or_insert_with(|| format!("invalid value for \"{key}\": {e}"));
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
            .ok_or_else(|| "unterminated double-quoted string".to_string())?;
        return Ok(FmValue::Str(unescape_double(inner)));
    }
    if let Some(inner) = v.strip_prefix('\'') {
        let inner = inner
            .strip_suffix('\'')
            .ok_or_else(|| "unterminated single-quoted string".to_string())?;
        return Ok(FmValue::Str(inner.replace("''", "'")));
    }
    if v.starts_with('[') || v.starts_with('{') {
        return Ok(FmValue::Other);
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
