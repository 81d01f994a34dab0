//! Prompt-template arguments (`resources::templates`): `/name args` splits its arguments as
//! pi does (quoted words round-trip) and substitutes `${N:-default}`, `${@:-default}`, `$N`,
//! `${@:N}`, `${@:N:L}`, `$ARGUMENTS` and `$@` as pi 1.x's single global regular-expression
//! replacement does, with argument values inserted literally.
//!
//! Input: the template body up to a NUL byte, then what follows `/name ` on the command line.

use std::path::PathBuf;

use pi::resources::templates::{expand, parse_args, substitute_args, Template};
use regex::Regex;

use super::input::Input;

pub fn run(data: &[u8]) {
    let mut input = Input::new(data);
    let content = input.text_until(0);
    let line = String::from_utf8_lossy(input.rest()).into_owned();

    let args = parse_args(&line);
    assert!(args.iter().all(|a| !a.is_empty()), "no empty arguments");
    assert_eq!(substitute_args(&content, &args), reference(&content, &args));

    let template = Template {
        name: "t".into(),
        description: String::new(),
        argument_hint: None,
        content: content.clone(),
        file_path: PathBuf::from("t.md"),
    };
    let templates = [template];
    assert_eq!(
        expand(&format!("/t {line}"), &templates),
        substitute_args(&content, &args)
    );
    assert_eq!(expand(&line, &[]), line, "no template, no change");

    // Arguments quoted the way a user would quote them read back as themselves.
    let words: Vec<String> = line
        .split('\u{1}')
        .filter(|w| !w.is_empty())
        .filter(|w| !(w.contains('"') && w.contains('\'')))
        .map(str::to_string)
        .collect();
    let quoted: Vec<String> = words
        .iter()
        .map(|w| match w.contains('"') {
            true => format!("'{w}'"),
            false => format!("\"{w}\""),
        })
        .collect();
    assert_eq!(parse_args(&quoted.join(" \t")), words);
}

/// pi 1.x's substitution: one global regular expression, leftmost alternative first —
/// `${N|ARGUMENTS|@:-default}`, `${@:N[:L]}`, `$ARGUMENTS|$@|$N` — over the template once.
fn reference(content: &str, args: &[String]) -> String {
    thread_local! {
        static PLACEHOLDER: Regex = Regex::new(
            r"\$\{([0-9]+|ARGUMENTS|@):-([^}]*)\}|\$\{@:([0-9]+)(?::([0-9]+))?\}|\$(ARGUMENTS|@|[0-9]+)",
        )
        .expect("valid");
    }
    // JavaScript's parseInt of a long digit string is a huge number, past any argument.
    let number = |s: &str| s.parse::<usize>().unwrap_or(usize::MAX);
    let all = args.join(" ");
    let positional = |s: &str| {
        number(s)
            .checked_sub(1)
            .and_then(|i| args.get(i))
            .cloned()
            .unwrap_or_default()
    };
    let target = |t: &str| match t {
        "ARGUMENTS" | "@" => all.clone(),
        n => positional(n),
    };
    PLACEHOLDER.with(|re| {
        re.replace_all(content, |c: &regex::Captures| {
            if let Some(t) = c.get(1) {
                let value = target(t.as_str());
                return if value.is_empty() {
                    c[2].to_string()
                } else {
                    value
                };
            }
            if let Some(start) = c.get(3) {
                let start = number(start.as_str()).saturating_sub(1).min(args.len());
                let end = match c.get(4) {
                    Some(len) => start.saturating_add(number(len.as_str())).min(args.len()),
                    None => args.len(),
                };
                return args[start..end].join(" ");
            }
            target(&c[5])
        })
        .into_owned()
    })
}
