//! `pi --export` and RPC `export_html`: one self-contained HTML page (inline CSS and a few
//! lines of inline JS, no network) showing a session: header and totals, an outline of the
//! whole entry tree, and every entry of the active branch. All session text is escaped before
//! any markup is added, so nothing in a session can inject markup or script.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::entry::{AgentMessage, BashExecutionMessage, Entry, SessionHeader};
use super::store::SessionWriter;
use super::tree::Tree;
use crate::ai::{
    Content, ImageContent, Message, StopReason, ToolCall, ToolResultMessage, UserContent,
};

#[path = "export_markdown.rs"]
mod markdown;
pub use markdown::markdown;

const CSS: &str = include_str!("export_html.css");
const JS: &str = "function setAll(o){document.querySelectorAll('details.fold').forEach(function(d){d.open=o;});}";

/// Output longer than this many lines (or `LONG_CHARS`) is shown folded, with a preview.
const LONG_LINES: usize = 20;
const LONG_CHARS: usize = 4000;
const PREVIEW_LINES: usize = 8;

/// pi's default output name: `pi-session-<file name without .jsonl>.html` in the cwd.
pub fn default_output_path(session_path: &Path) -> PathBuf {
    let name = session_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = name.strip_suffix(".jsonl").unwrap_or(&name);
    PathBuf::from(format!("pi-session-{base}.html"))
}

/// Exports the session file at `session_path` (its last entry is the leaf) to `out`, or to
/// [`default_output_path`]. Returns the path written. Errors are pi's messages.
pub fn export_html(session_path: &Path, out: Option<&Path>) -> Result<PathBuf, String> {
    if !session_path.exists() {
        return Err(format!("File not found: {}", session_path.display()));
    }
    // Reading never writes: an older file is migrated in memory only.
    let (w, _) = SessionWriter::open(session_path)
        .map_err(|e| format!("Cannot read session {}: {e}", session_path.display()))?;
    write_page(&w, session_path, out)
}

/// RPC `export_html` / `/export`: the live session at its current leaf.
pub fn export_session_html(w: &SessionWriter, out: Option<&Path>) -> Result<PathBuf, String> {
    let path = w.path().ok_or("Cannot export in-memory session to HTML")?;
    if !path.exists() {
        return Err("Nothing to export yet - start a conversation first".into());
    }
    write_page(w, path, out)
}

/// Writes the page of `w` (read from `session`) to `out` or the default path, never over the
/// session file itself (`pi --export s.jsonl s.jsonl`).
fn write_page(w: &SessionWriter, session: &Path, out: Option<&Path>) -> Result<PathBuf, String> {
    let out = out
        .map(Path::to_path_buf)
        .unwrap_or_else(|| default_output_path(session));
    if let (Ok(a), Ok(b)) = (std::fs::metadata(session), std::fs::metadata(&out)) {
        if crate::util::files::same_file(&a, &b) {
            return Err(format!(
                "Refusing to overwrite the session file {} with its HTML export; choose another output path",
                session.display()
            ));
        }
    }
    let html = render_html(w.header(), w.entries(), w.leaf_id());
    std::fs::write(&out, html).map_err(|e| format!("Cannot write {}: {e}", out.display()))?;
    Ok(out)
}

/// Escapes text for HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + s.len() / 8);
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// The whole page for `entries` with the active branch ending at `leaf`.
pub fn render_html(header: &SessionHeader, entries: &[Entry], leaf: Option<&str>) -> String {
    let tree = Tree::new(entries);
    let path: Vec<&Entry> = leaf.map(|l| tree.path(l)).unwrap_or_default();
    let on_path: HashSet<&str> = path.iter().map(|e| e.id()).collect();
    let labels = tree.labels();
    let title = match tree.name() {
        Some(n) => format!("{} · pi session", n),
        None => format!("pi session {}", header.id),
    };

    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(h, "<title>{}</title>", esc(&title));
    let _ = writeln!(
        h,
        "<style>\n{CSS}</style>\n</head>\n<body>\n<div class=\"page\">"
    );
    let _ = writeln!(h, "<h1>{}</h1>", esc(tree.name().unwrap_or("Session")));
    render_header(&mut h, header, entries, &path);
    render_tree(&mut h, &tree, entries, &on_path, leaf, &labels);
    h.push_str("<h2>Conversation</h2>\n<main>\n");
    render_branch(&mut h, &path, &labels);
    h.push_str("</main>\n");
    let _ = writeln!(
        h,
        "<footer>Exported by pi {} · {} entries</footer>\n</div>",
        esc(crate::VERSION),
        entries.len()
    );
    let _ = writeln!(h, "<script>{JS}</script>\n</body>\n</html>");
    h
}

#[derive(Default)]
struct Totals {
    user: usize,
    assistant: usize,
    tool_results: usize,
    tool_calls: usize,
    input: u64,
    output: u64,
    cache_read: u64,
    cache_write: u64,
    cost: f64,
}

fn totals<'a>(entries: impl Iterator<Item = &'a Entry>) -> Totals {
    let mut t = Totals::default();
    for m in entries.filter_map(Entry::message) {
        match m {
            AgentMessage::Llm(Message::User(_)) => t.user += 1,
            AgentMessage::Llm(Message::ToolResult(_)) => t.tool_results += 1,
            AgentMessage::Llm(Message::Assistant(a)) => {
                t.assistant += 1;
                t.tool_calls += a
                    .content
                    .iter()
                    .filter(|c| matches!(c, Content::ToolCall(_)))
                    .count();
                t.input += a.usage.input;
                t.output += a.usage.output;
                t.cache_read += a.usage.cache_read;
                t.cache_write += a.usage.cache_write;
                t.cost += a.usage.cost.total;
            }
            _ => {}
        }
    }
    t
}

fn render_header(h: &mut String, header: &SessionHeader, entries: &[Entry], path: &[&Entry]) {
    let mut models: Vec<String> = Vec::new();
    let mut add = |m: String| {
        if !models.contains(&m) {
            models.push(m);
        }
    };
    for e in entries {
        match e {
            Entry::ModelChange(m) => add(format!("{}/{}", m.provider, m.model_id)),
            Entry::Message(m) => {
                if let AgentMessage::Llm(Message::Assistant(a)) = &m.message {
                    add(format!("{}/{}", a.provider, a.model));
                }
            }
            _ => {}
        }
    }
    h.push_str("<section class=\"panel\">\n<dl class=\"meta\">\n");
    let mut row = |k: &str, v: &str| {
        let _ = writeln!(h, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(v));
    };
    row("Session", &header.id);
    row("Working directory", &header.cwd);
    row("Created", &header.timestamp);
    row(
        "Models",
        &if models.is_empty() {
            "(none)".to_string()
        } else {
            models.join(", ")
        },
    );
    if let Some(p) = &header.parent_session {
        row("Forked from", p);
    }
    h.push_str("</dl>\n");
    let all = totals(entries.iter());
    let branch = totals(path.iter().copied());
    let _ = writeln!(
        h,
        "<div class=\"totals\"><span>Messages <b>{}</b> on this branch, <b>{}</b> in total</span>\
         <span>User <b>{}</b></span><span>Assistant <b>{}</b></span><span>Tool calls <b>{}</b></span>\
         <span>Tool results <b>{}</b></span></div>",
        branch.user + branch.assistant + branch.tool_results,
        all.user + all.assistant + all.tool_results,
        all.user,
        all.assistant,
        all.tool_calls,
        all.tool_results
    );
    let _ = writeln!(
        h,
        "<div class=\"totals\"><span>Tokens in <b>{}</b></span><span>out <b>{}</b></span>\
         <span>cache read <b>{}</b></span><span>cache write <b>{}</b></span>\
         <span>total <b>{}</b></span><span>Cost <b>${:.4}</b></span></div>",
        all.input,
        all.output,
        all.cache_read,
        all.cache_write,
        all.input + all.output + all.cache_read + all.cache_write,
        all.cost
    );
    h.push_str(
        "<div class=\"controls\"><button type=\"button\" onclick=\"setAll(true)\">Expand all</button>\
         <button type=\"button\" onclick=\"setAll(false)\">Collapse all</button></div>\n</section>\n",
    );
}

/// One line of text, whitespace collapsed, cut at `max` chars.
fn one_line(s: &str, max: usize) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let mut t: String = flat.chars().take(max).collect();
        t.push('…');
        t
    }
}

fn content_text(c: &UserContent) -> String {
    super::ops::user_content_text(c)
}

/// The outline text of one entry (plain; escaped by the caller).
fn outline_text(e: &Entry) -> String {
    const MAX: usize = 90;
    match e {
        Entry::Message(m) => match &m.message {
            AgentMessage::Llm(Message::User(u)) => {
                format!("user: {}", one_line(&content_text(&u.content), MAX))
            }
            AgentMessage::Llm(Message::Assistant(a)) => {
                let text: String = a
                    .content
                    .iter()
                    .filter_map(|c| match c {
                        Content::Text(t) => Some(t.text.as_str()),
                        _ => None,
                    })
                    .collect();
                let calls: Vec<&str> = a
                    .content
                    .iter()
                    .filter_map(|c| match c {
                        Content::ToolCall(t) => Some(t.name.as_str()),
                        _ => None,
                    })
                    .collect();
                if !text.trim().is_empty() {
                    format!("assistant: {}", one_line(&text, MAX))
                } else if !calls.is_empty() {
                    format!("assistant: [{}]", calls.join(", "))
                } else if let Some(err) = &a.error_message {
                    format!("assistant: error: {}", one_line(err, MAX))
                } else {
                    format!("assistant: ({})", a.stop_reason.as_str())
                }
            }
            AgentMessage::Llm(Message::ToolResult(r)) => format!("[{} result]", r.tool_name),
            AgentMessage::BashExecution(b) => format!("[bash]: {}", one_line(&b.command, MAX)),
            AgentMessage::Custom(c) => format!(
                "[{}]: {}",
                c.custom_type,
                one_line(&content_text(&c.content), MAX)
            ),
            other => format!("[{}]", other.role()),
        },
        Entry::Compaction(c) => format!("[compaction: {}k tokens]", c.tokens_before / 1000),
        Entry::BranchSummary(b) => format!("[branch summary]: {}", one_line(&b.summary, MAX)),
        Entry::CustomMessage(c) => format!(
            "[{}]: {}",
            c.custom_type,
            one_line(&content_text(&c.content), MAX)
        ),
        Entry::Custom(c) => format!("[custom: {}]", c.custom_type),
        Entry::ModelChange(m) => format!("[model: {}/{}]", m.provider, m.model_id),
        Entry::ThinkingLevelChange(t) => format!("[thinking: {}]", t.thinking_level),
        Entry::Label(l) => format!(
            "[label {}: {}]",
            l.target_id,
            l.label.as_deref().unwrap_or("(cleared)")
        ),
        Entry::SessionInfo(i) => format!("[name: {}]", i.name.as_deref().unwrap_or("")),
        Entry::Unknown(_) => format!("[{}]", e.kind()),
    }
}

/// Whether an entry gets its own block (and anchor) in the conversation.
fn is_rendered(e: &Entry) -> bool {
    !matches!(
        e,
        Entry::Label(_) | Entry::SessionInfo(_) | Entry::Custom(_) | Entry::Unknown(_)
    )
}

fn render_tree(
    h: &mut String,
    tree: &Tree<'_>,
    entries: &[Entry],
    on_path: &HashSet<&str>,
    leaf: Option<&str>,
    labels: &HashMap<&str, &str>,
) {
    let ids: HashSet<&str> = entries.iter().map(Entry::id).collect();
    let mut children: HashMap<&str, Vec<&Entry>> = HashMap::new();
    let mut roots = Vec::new();
    for e in entries {
        match e.parent_id().filter(|p| ids.contains(p) && *p != e.id()) {
            Some(p) => children.entry(p).or_default().push(e),
            None => roots.push(e),
        }
    }
    let branches = tree.leaves().len();
    let _ = writeln!(
        h,
        "<h2>Tree</h2>\n<details class=\"panel fold\" open><summary>{} entries, {} branch{}; \
         entries off the active branch are dimmed</summary>\n<ul class=\"tree\">",
        entries.len(),
        branches,
        if branches == 1 { "" } else { "es" }
    );
    // Depth-first, iteratively (a linear chain can be very long); indentation grows only
    // where the tree forks.
    let mut seen: HashSet<&str> = HashSet::new();
    let mut stack: Vec<(&Entry, usize, bool)> = roots
        .iter()
        .rev()
        .map(|e| (*e, 0, roots.len() > 1))
        .collect();
    while let Some((e, depth, fork_child)) = stack.pop() {
        if !seen.insert(e.id()) {
            continue;
        }
        let active = on_path.contains(e.id());
        let class = if leaf == Some(e.id()) {
            "leaf"
        } else if active {
            "on"
        } else {
            "off"
        };
        let indent = "&nbsp;&nbsp;".repeat(depth);
        let bullet = if fork_child { "├ " } else { "" };
        let label = labels
            .get(e.id())
            .map(|l| format!("<span class=\"label\">[{}]</span>", esc(l)))
            .unwrap_or_default();
        let text = esc(&outline_text(e));
        let body = if active && is_rendered(e) {
            format!("<a href=\"#e-{}\">{text}</a>", esc(e.id()))
        } else {
            text
        };
        let badge = if active {
            ""
        } else {
            "<span class=\"badge\">other branch</span>"
        };
        let marker = if leaf == Some(e.id()) { "● " } else { "" };
        let _ = writeln!(
            h,
            "<li class=\"{class}\"><span class=\"bar\">{indent}{bullet}</span>{marker}{label}{body}{badge}</li>"
        );
        let kids = children.get(e.id()).map(Vec::as_slice).unwrap_or(&[]);
        let forks = kids.len() > 1;
        let next = if forks { depth + 1 } else { depth };
        for k in kids.iter().rev() {
            stack.push((k, next, forks));
        }
    }
    h.push_str("</ul>\n</details>\n");
}

fn render_branch(h: &mut String, path: &[&Entry], labels: &HashMap<&str, &str>) {
    // Tool results are shown with their calls; a result without a call on the branch stands alone.
    let mut results: HashMap<&str, &ToolResultMessage> = HashMap::new();
    let mut call_ids: HashSet<&str> = HashSet::new();
    for e in path {
        match e.message() {
            Some(AgentMessage::Llm(Message::ToolResult(r))) => {
                results.insert(r.tool_call_id.as_str(), r);
            }
            Some(AgentMessage::Llm(Message::Assistant(a))) => {
                for c in &a.content {
                    if let Content::ToolCall(t) = c {
                        call_ids.insert(t.id.as_str());
                    }
                }
            }
            _ => {}
        }
    }
    if path.is_empty() {
        h.push_str("<p class=\"status\">(no entries)</p>\n");
    }
    for e in path {
        if !is_rendered(e) {
            continue;
        }
        if let Some(AgentMessage::Llm(Message::ToolResult(r))) = e.message() {
            if call_ids.contains(r.tool_call_id.as_str()) {
                // Still give it an anchor so tree links land somewhere sensible.
                let _ = writeln!(h, "<span id=\"e-{}\"></span>", esc(e.id()));
                continue;
            }
        }
        render_entry(h, e, labels.get(e.id()).copied(), &results);
    }
}

fn open_block(h: &mut String, e: &Entry, class: &str, role: &str, label: Option<&str>) {
    let _ = write!(
        h,
        "<section class=\"entry {class}\" id=\"e-{}\"><div class=\"head\"><span class=\"role\">{}</span>",
        esc(e.id()),
        esc(role)
    );
    if let Some(l) = label {
        let _ = write!(h, "<span class=\"label\">[{}]</span>", esc(l));
    }
    let _ = writeln!(h, "<span>{}</span></div>", esc(e.timestamp()));
}

fn render_entry(
    h: &mut String,
    e: &Entry,
    label: Option<&str>,
    results: &HashMap<&str, &ToolResultMessage>,
) {
    match e {
        Entry::Message(m) => render_message(h, e, &m.message, label, results),
        Entry::ModelChange(m) => {
            open_block(h, e, "note", "model", label);
            let _ = writeln!(h, "{}/{}</section>", esc(&m.provider), esc(&m.model_id));
        }
        Entry::ThinkingLevelChange(t) => {
            open_block(h, e, "note", "thinking level", label);
            let _ = writeln!(h, "{}</section>", esc(&t.thinking_level));
        }
        Entry::Compaction(c) => {
            open_block(h, e, "summary", "compaction", label);
            let _ = writeln!(
                h,
                "<details class=\"fold\"><summary>Earlier messages compacted ({} tokens before)</summary>\
                 <div class=\"md\">{}</div></details></section>",
                c.tokens_before,
                markdown(&c.summary)
            );
        }
        Entry::BranchSummary(b) => {
            open_block(h, e, "summary", "branch summary", label);
            let _ = writeln!(
                h,
                "<details class=\"fold\" open><summary>Summary of the branch left at {}</summary>\
                 <div class=\"md\">{}</div></details></section>",
                esc(&b.from_id),
                markdown(&b.summary)
            );
        }
        Entry::CustomMessage(c) => {
            let class = if c.display {
                "custom"
            } else {
                "custom hidden-msg"
            };
            open_block(h, e, class, &c.custom_type, label);
            render_user_content(h, &c.content);
            h.push_str("</section>\n");
        }
        _ => {}
    }
}

fn render_message(
    h: &mut String,
    e: &Entry,
    m: &AgentMessage,
    label: Option<&str>,
    results: &HashMap<&str, &ToolResultMessage>,
) {
    match m {
        AgentMessage::Llm(Message::User(u)) => {
            open_block(h, e, "user", "user", label);
            render_user_content(h, &u.content);
        }
        AgentMessage::Llm(Message::Assistant(a)) => {
            open_block(h, e, "assistant", "assistant", label);
            for c in &a.content {
                match c {
                    Content::Text(t) if !t.text.trim().is_empty() => {
                        let _ = writeln!(h, "<div class=\"md\">{}</div>", markdown(&t.text));
                    }
                    Content::Thinking(t) if t.redacted => {
                        h.push_str("<div class=\"status\">(thinking redacted)</div>\n");
                    }
                    Content::Thinking(t) if !t.thinking.trim().is_empty() => {
                        let _ = writeln!(
                            h,
                            "<details class=\"thinking fold\"><summary>Thinking</summary>\
                             <div class=\"text\">{}</div></details>",
                            esc(&t.thinking)
                        );
                    }
                    Content::ToolCall(t) => {
                        render_tool(h, Some(t), results.get(t.id.as_str()).copied())
                    }
                    Content::Image(i) => render_image(h, i),
                    _ => {}
                }
            }
            match a.stop_reason {
                StopReason::Error | StopReason::Aborted => {
                    let msg = a
                        .error_message
                        .clone()
                        .unwrap_or_else(|| format!("Request {}", a.stop_reason.as_str()));
                    let _ = writeln!(h, "<div class=\"status err\">{}</div>", esc(&msg));
                }
                StopReason::Length => {
                    h.push_str("<div class=\"status err\">(stopped: output length limit)</div>\n")
                }
                _ => {}
            }
            let u = &a.usage;
            let _ = writeln!(
                h,
                "<div class=\"usage\">{}/{} · in {} · out {} · cache r/w {}/{} · ${:.4}</div>",
                esc(&a.provider),
                esc(&a.model),
                u.input,
                u.output,
                u.cache_read,
                u.cache_write,
                u.cost.total
            );
        }
        AgentMessage::Llm(Message::ToolResult(r)) => {
            open_block(h, e, "tool-result", "tool result", label);
            render_tool(h, None, Some(r));
        }
        AgentMessage::BashExecution(b) => {
            open_block(h, e, "bash", "user bash", label);
            render_bash(h, b);
        }
        AgentMessage::Custom(c) => {
            let class = if c.display {
                "custom"
            } else {
                "custom hidden-msg"
            };
            open_block(h, e, class, &c.custom_type, label);
            render_user_content(h, &c.content);
        }
        AgentMessage::BranchSummary(b) => {
            open_block(h, e, "summary", "branch summary", label);
            let _ = writeln!(h, "<div class=\"md\">{}</div>", markdown(&b.summary));
        }
        AgentMessage::CompactionSummary(c) => {
            open_block(h, e, "summary", "compaction summary", label);
            let _ = writeln!(h, "<div class=\"md\">{}</div>", markdown(&c.summary));
        }
        AgentMessage::Unknown(v) => {
            open_block(h, e, "note", m.role(), label);
            let json = serde_json::to_string_pretty(v).unwrap_or_default();
            let _ = writeln!(
                h,
                "<details class=\"fold\"><summary>raw message</summary><pre>{}</pre></details>",
                esc(&json)
            );
        }
    }
    h.push_str("</section>\n");
}

fn render_user_content(h: &mut String, c: &UserContent) {
    match c {
        UserContent::Text(s) => {
            let _ = writeln!(h, "<div class=\"text\">{}</div>", esc(s));
        }
        UserContent::Blocks(blocks) => {
            for b in blocks {
                match b {
                    Content::Text(t) => {
                        let _ = writeln!(h, "<div class=\"text\">{}</div>", esc(&t.text));
                    }
                    Content::Image(i) => render_image(h, i),
                    _ => {}
                }
            }
        }
    }
}

/// An image as a `data:` URI, only if its MIME type and base64 payload are well formed.
fn render_image(h: &mut String, i: &ImageContent) {
    let mime_ok = i.mime_type.strip_prefix("image/").is_some_and(|s| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-'))
    });
    let data_ok = i
        .data
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '='));
    if mime_ok && data_ok && !i.data.is_empty() {
        let _ = writeln!(
            h,
            "<img class=\"att\" alt=\"image\" src=\"data:{};base64,{}\">",
            esc(&i.mime_type),
            i.data
        );
    } else {
        let _ = writeln!(
            h,
            "<div class=\"status\">[image: {} (not displayable)]</div>",
            esc(&i.mime_type)
        );
    }
}

/// Output in a `<pre>`, folded behind a preview when long.
fn render_output(h: &mut String, text: &str) {
    let lines = text.lines().count();
    if lines <= LONG_LINES && text.len() <= LONG_CHARS {
        let _ = writeln!(h, "<pre>{}</pre>", esc(text));
        return;
    }
    let preview: Vec<&str> = text.lines().take(PREVIEW_LINES).collect();
    let _ = writeln!(
        h,
        "<pre>{}</pre><details class=\"fold\"><summary>Show all {} lines</summary><pre>{}</pre></details>",
        esc(&preview.join("\n")),
        lines,
        esc(text)
    );
}

/// An edit's diff (`details.diff`: lines starting `+NN`, `-NN` or ` NN`), added and removed
/// lines coloured.
fn render_diff(h: &mut String, diff: &str) {
    h.push_str("<pre class=\"diff\">");
    for line in diff.lines() {
        let class = match line.chars().next() {
            Some('+') => "add",
            Some('-') => "del",
            _ => "ctx",
        };
        let _ = writeln!(h, "<span class=\"{class}\">{}</span>", esc(line));
    }
    h.push_str("</pre>\n");
}

fn call_summary(t: &ToolCall) -> String {
    let arg = |k: &str| t.arguments.get(k).and_then(Value::as_str);
    match (t.name.as_str(), arg("command"), arg("path")) {
        ("bash", Some(cmd), _) => format!("$ {cmd}"),
        (_, _, Some(p)) if matches!(t.name.as_str(), "read" | "write" | "edit" | "ls") => {
            p.to_string()
        }
        _ => String::new(),
    }
}

fn render_tool(h: &mut String, call: Option<&ToolCall>, result: Option<&ToolResultMessage>) {
    let error = result.is_some_and(|r| r.is_error);
    let _ = writeln!(
        h,
        "<div class=\"tool{}\">",
        if error { " error" } else { "" }
    );
    match call {
        Some(t) => {
            let summary = call_summary(t);
            let _ = writeln!(
                h,
                "<div class=\"call\">{} <span class=\"args\">{}</span></div>",
                esc(&t.name),
                esc(&summary)
            );
            let shown_fully = t.name == "bash"
                && t.arguments
                    .as_object()
                    .is_some_and(|o| o.keys().all(|k| k == "command") && !summary.is_empty());
            if !shown_fully && t.arguments.as_object().is_some_and(|o| !o.is_empty()) {
                let json = serde_json::to_string_pretty(&t.arguments).unwrap_or_default();
                let _ = writeln!(
                    h,
                    "<details class=\"fold\"{}><summary>arguments</summary><pre>{}</pre></details>",
                    if summary.is_empty() { " open" } else { "" },
                    esc(&json)
                );
            }
        }
        None => {
            if let Some(r) = result {
                let _ = writeln!(h, "<div class=\"call\">{}</div>", esc(&r.tool_name));
            }
        }
    }
    match result {
        Some(r) => {
            h.push_str("<div class=\"result\">");
            let text: Vec<&str> = r
                .content
                .iter()
                .filter_map(|c| match c {
                    Content::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect();
            let text = text.join("\n");
            if !text.is_empty() || r.content.is_empty() {
                render_output(
                    h,
                    if text.is_empty() {
                        "(no output)"
                    } else {
                        &text
                    },
                );
            }
            for c in &r.content {
                if let Content::Image(i) = c {
                    render_image(h, i);
                }
            }
            if let Some(diff) = r
                .details
                .as_ref()
                .and_then(|d| d.get("diff"))
                .and_then(Value::as_str)
            {
                render_diff(h, diff);
            }
            h.push_str("</div>\n");
        }
        None => h.push_str("<div class=\"pending\">(no result)</div>\n"),
    }
    h.push_str("</div>\n");
}

fn render_bash(h: &mut String, b: &BashExecutionMessage) {
    h.push_str("<div class=\"tool\">");
    let _ = writeln!(
        h,
        "<div class=\"call\">$ <span class=\"args\">{}</span></div>",
        esc(&b.command)
    );
    render_output(
        h,
        if b.output.is_empty() {
            "(no output)"
        } else {
            &b.output
        },
    );
    let mut status = Vec::new();
    if b.cancelled {
        status.push("cancelled".to_string());
    } else if let Some(Some(code)) = b.exit_code {
        status.push(format!("exit code {code}"));
    }
    if b.truncated {
        match b.full_output_path.as_deref() {
            Some(p) => status.push(format!("output truncated, full output: {p}")),
            None => status.push("output truncated".into()),
        }
    }
    if b.exclude_from_context == Some(true) {
        status.push("not sent to the model".into());
    }
    if !status.is_empty() {
        let failed = b.cancelled || matches!(b.exit_code, Some(Some(c)) if c != 0);
        let _ = writeln!(
            h,
            "<div class=\"status{}\">{}</div>",
            if failed { " err" } else { "" },
            esc(&status.join(" · "))
        );
    }
    h.push_str("</div>\n");
}
