//! Prompt-template arguments (`resources::templates`): `/name args` splits its arguments as
//! pi does (quoted words round-trip) and substitutes `$N`, `${@:N}`, `${@:N:L}`, `$ARGUMENTS`
//! and `$@` as pi's four global regular-expression replacements do, in the same order, with
//! argument values inserted literally.
//!
//! Input: the template body up to a NUL byte, then what follows `/name ` on the command line.

use std::path::PathBuf;

use pi::resources::templates::{expand, parse_args, substitute_args, Template};
use regex::{NoExpand, Regex};

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

/// pi's substitution: `/\$(\d+)/g`, then `/\$\{@:(\d+)(?::(\d+))?\}/g`, then `$ARGUMENTS`,
/// then `$@`, each over the result of the one before.
fn reference(content: &str, args: &[String]) -> String {
    thread_local! {
        static POSITIONAL: Regex = Regex::new(r"\$([0-9]+)").expect("valid");
        static SLICE: Regex = Regex::new(r"\$\{@:([0-9]+)(?::([0-9]+))?\}").expect("valid");
        static ALL: Regex = Regex::new(r"\$ARGUMENTS").expect("valid");
        static AT: Regex = Regex::new(r"\$@").expect("valid");
    }
    // JavaScript's parseInt of a long digit string is a huge number, past any argument.
    let number = |s: &str| s.parse::<usize>().unwrap_or(usize::MAX);
    let r = POSITIONAL.with(|re| {
        re.replace_all(content, |c: &regex::Captures| {
            let n = number(&c[1]);
            match n.checked_sub(1).and_then(|i| args.get(i)) {
                Some(a) => a.clone(),
                None => String::new(),
            }
        })
        .into_owned()
    });
    let r = SLICE.with(|re| {
        re.replace_all(&r, |c: &regex::Captures| {
            let start = number(&c[1]).saturating_sub(1).min(args.len());
            let end = match c.get(2) {
                Some(len) => start.saturating_add(number(len.as_str())).min(args.len()),
                None => args.len(),
            };
            args[start..end].join(" ")
        })
        .into_owned()
    });
    let all = args.join(" ");
    let r = ALL.with(|re| re.replace_all(&r, NoExpand(&all)).into_owned());
    AT.with(|re| re.replace_all(&r, NoExpand(&all)).into_owned())
}
