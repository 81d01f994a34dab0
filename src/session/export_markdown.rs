//! A small, safe Markdown subset for the HTML export. Every line is escaped first; markup is
//! only added around escaped text, so the source can never produce a tag.

use std::fmt::Write as _;

use super::esc;

/// Renders fenced code, headings, lists, quotes, rules and paragraphs with inline code,
/// bold and italic.
pub fn markdown(src: &str) -> String {
    let mut out = String::new();
    let mut para: Vec<String> = Vec::new();
    let mut list: Option<(bool, Vec<String>)> = None;
    let flush_para = |out: &mut String, para: &mut Vec<String>| {
        if !para.is_empty() {
            let _ = writeln!(out, "<p>{}</p>", para.join("<br>"));
            para.clear();
        }
    };
    let flush_list = |out: &mut String, list: &mut Option<(bool, Vec<String>)>| {
        if let Some((ordered, items)) = list.take() {
            let tag = if ordered { "ol" } else { "ul" };
            let _ = write!(out, "<{tag}>");
            for i in items {
                let _ = write!(out, "<li>{i}</li>");
            }
            let _ = writeln!(out, "</{tag}>");
        }
    };
    let mut lines = src.lines();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("```").or_else(|| t.strip_prefix("~~~")) {
            flush_para(&mut out, &mut para);
            flush_list(&mut out, &mut list);
            let fence = &t[..3];
            let mut code = String::new();
            for l in lines.by_ref() {
                if l.trim_start().starts_with(fence) {
                    break;
                }
                code.push_str(l);
                code.push('\n');
            }
            let lang = rest.trim();
            if !lang.is_empty() {
                let _ = writeln!(out, "<div class=\"lang\">{}</div>", esc(lang));
            }
            let _ = writeln!(
                out,
                "<pre><code>{}</code></pre>",
                esc(code.trim_end_matches('\n'))
            );
            continue;
        }
        if t.is_empty() {
            flush_para(&mut out, &mut para);
            flush_list(&mut out, &mut list);
            continue;
        }
        let hashes = t.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&hashes) && t[hashes..].starts_with(' ') {
            flush_para(&mut out, &mut para);
            flush_list(&mut out, &mut list);
            let _ = writeln!(out, "<h{hashes}>{}</h{hashes}>", inline(t[hashes..].trim()));
            continue;
        }
        if matches!(t.trim_end(), "---" | "***" | "___") {
            flush_para(&mut out, &mut para);
            flush_list(&mut out, &mut list);
            out.push_str("<hr>\n");
            continue;
        }
        if let Some(q) = t.strip_prefix("> ").or_else(|| (t == ">").then_some("")) {
            flush_para(&mut out, &mut para);
            flush_list(&mut out, &mut list);
            let _ = writeln!(out, "<blockquote>{}</blockquote>", inline(q));
            continue;
        }
        if let Some((ordered, item)) = list_item(t) {
            flush_para(&mut out, &mut para);
            if list.as_ref().is_some_and(|(o, _)| *o != ordered) {
                flush_list(&mut out, &mut list);
            }
            list.get_or_insert_with(|| (ordered, Vec::new()))
                .1
                .push(inline(item));
            continue;
        }
        if let Some((_, items)) = list.as_mut() {
            if line.starts_with(' ') || line.starts_with('\t') {
                if let Some(last) = items.last_mut() {
                    last.push_str("<br>");
                    last.push_str(&inline(t));
                    continue;
                }
            }
            flush_list(&mut out, &mut list);
        }
        para.push(inline(t.trim_end()));
    }
    flush_para(&mut out, &mut para);
    flush_list(&mut out, &mut list);
    out
}

/// `- x`, `* x`, `+ x` → (false, x); `1. x`, `1) x` → (true, x).
fn list_item(t: &str) -> Option<(bool, &str)> {
    for p in ["- ", "* ", "+ "] {
        if let Some(rest) = t.strip_prefix(p) {
            return Some((false, rest));
        }
    }
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    if (1..=9).contains(&digits) {
        let rest = &t[digits..];
        if let Some(item) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return Some((true, item));
        }
    }
    None
}

/// Inline markup on one line: escape, then `code`, **bold**, *italic*.
fn inline(s: &str) -> String {
    let escaped = esc(s);
    let parts: Vec<&str> = escaped.split('`').collect();
    let mut out = String::new();
    let mut i = 0;
    while i < parts.len() {
        if i % 2 == 0 {
            out.push_str(&wrap_pairs(
                &wrap_pairs(parts[i], "**", "strong"),
                "*",
                "em",
            ));
        } else if i + 1 < parts.len() {
            let _ = write!(out, "<code>{}</code>", parts[i]);
        } else {
            // An unmatched backtick stays literal.
            out.push('`');
            out.push_str(parts[i]);
        }
        i += 1;
    }
    out
}

/// Wraps text between pairs of `marker` in `<tag>`; unpaired markers and pairs around
/// whitespace stay literal.
fn wrap_pairs(s: &str, marker: &str, tag: &str) -> String {
    let parts: Vec<&str> = s.split(marker).collect();
    if parts.len() < 3 {
        return s.to_string();
    }
    let mut out = String::from(parts[0]);
    let mut i = 1;
    while i + 1 < parts.len() {
        let inner = parts[i];
        if inner.is_empty() || inner.starts_with(' ') || inner.ends_with(' ') {
            out.push_str(marker);
            out.push_str(inner);
            out.push_str(marker);
        } else {
            let _ = write!(out, "<{tag}>{inner}</{tag}>");
        }
        out.push_str(parts[i + 1]);
        i += 2;
    }
    if i < parts.len() {
        out.push_str(marker);
        out.push_str(parts[i]);
    }
    out
}
