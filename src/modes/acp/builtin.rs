//! The commands pi's terminal has that an editor can type too: `/compact [instructions]`,
//! `/session` (the session's file, id and counts), `/export [file]` (HTML) and `/rewind`
//! (list the messages to go back to; `/rewind N [code|conversation|both]` goes back). A prompt is one
//! of these when it names it and no extension command or prompt template of that name exists.

use std::path::PathBuf;

use crate::agent::AgentEvent;
use crate::harness::AgentSession;

#[derive(Debug, Clone, PartialEq)]
pub enum Builtin {
    Compact(Option<String>),
    Session,
    Export(Option<PathBuf>),
    /// `/rewind`: the list; `/rewind N [scope]`: back to before message N of that list.
    Rewind(Option<String>),
}

/// Names and descriptions, for `available_commands_update`.
pub const BUILTINS: [(&str, &str); 4] = [
    (
        "compact",
        "Summarize the conversation so far to free context (optional instructions)",
    ),
    (
        "session",
        "Show the session's file, id, messages, tokens and cost",
    ),
    (
        "export",
        "Export the session to an HTML file (optional path)",
    ),
    (
        "rewind",
        "List the messages to go back to; /rewind N [code|conversation|both] restores files and conversation",
    ),
];

/// The built-in command a prompt's text names, if any. Pure.
pub fn parse(text: &str) -> Option<Builtin> {
    let rest = text.trim().strip_prefix('/')?;
    let (name, arg) = match rest.split_once(char::is_whitespace) {
        Some((n, a)) => (n, a.trim()),
        None => (rest, ""),
    };
    let arg = (!arg.is_empty()).then(|| arg.to_string());
    match name {
        "compact" => Some(Builtin::Compact(arg)),
        "session" => Some(Builtin::Session),
        "export" => Some(Builtin::Export(arg.map(PathBuf::from))),
        "rewind" => Some(Builtin::Rewind(arg)),
        _ => None,
    }
}

impl Builtin {
    pub fn name(&self) -> &'static str {
        match self {
            Builtin::Compact(_) => "compact",
            Builtin::Session => "session",
            Builtin::Export(_) => "export",
            Builtin::Rewind(_) => "rewind",
        }
    }

    /// Runs the command on the session; the text to show.
    pub fn run(
        &self,
        s: &mut AgentSession,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<String, String> {
        match self {
            Builtin::Compact(instructions) => {
                let r = s.compact_with_events(instructions.as_deref(), on_event)?;
                // As pi-acp words it, so an editor's user sees the same.
                let custom = if instructions.is_some() {
                    " (custom instructions applied)"
                } else {
                    ""
                };
                Ok(format!(
                    "Compaction completed.{custom}\nTokens before: {}\n\n{}",
                    r.tokens_before, r.summary
                ))
            }
            Builtin::Session => {
                let window = s.agent().model.context_window;
                let st = crate::session::ops::stats(&s.session, window);
                Ok(format!(
                    "Session {}\nFile: {}\nMessages: {} user, {} assistant, {} tool calls ({} in all)\nTokens: {} in, {} out, {} total\nCost: ${:.4}",
                    st.session_id,
                    st.session_file.as_deref().unwrap_or("(not saved)"),
                    st.user_messages,
                    st.assistant_messages,
                    st.tool_calls,
                    st.total_messages,
                    st.tokens.input,
                    st.tokens.output,
                    st.tokens.total,
                    st.cost
                ))
            }
            Builtin::Export(path) => {
                let out = s.export_html(path.as_deref(), None)?;
                Ok(format!("Session exported to {}", out.display()))
            }
            Builtin::Rewind(arg) => rewind(s, arg.as_deref()),
        }
    }
}

/// `/rewind` as text: the numbered user messages of this branch, or going back to one.
fn rewind(s: &mut AgentSession, arg: Option<&str>) -> Result<String, String> {
    use crate::harness::rewind::RewindScope;
    let points = s.rewind_points();
    let Some(arg) = arg else {
        if points.is_empty() {
            return Ok("No messages to rewind to.".into());
        }
        let mut text = String::from("Messages to go back to (files recorded: *):\n");
        for (n, p) in points.iter().enumerate() {
            let first = p.text.lines().next().unwrap_or_default();
            let mark = if p.has_checkpoint { "*" } else { " " };
            text.push_str(&format!("{mark} {}. {first}\n", n + 1));
        }
        text.push_str("Go back with /rewind N [code|conversation|both] (default both).");
        return Ok(text);
    };
    let mut words = arg.split_whitespace();
    let which = words.next().unwrap_or_default();
    let point = which
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| points.get(i))
        .ok_or_else(|| {
            format!(
                "No message {which} to rewind to: give a number from the list /rewind shows (1-{})",
                points.len()
            )
        })?;
    let scope = match words.next() {
        None => RewindScope::Both,
        Some(w) => RewindScope::parse(w)
            .ok_or("The second word of /rewind is code, conversation or both")?,
    };
    let outcome = s.rewind(&point.entry_id.clone(), scope)?;
    let mut text = String::new();
    if let Some(p) = &outcome.preview {
        let f = &p.files;
        text.push_str(&format!(
            "Files restored: {} modified, {} recreated, {} removed.",
            f.modified.len(),
            f.removed.len(),
            f.added.len()
        ));
    }
    for failed in &outcome.failed {
        text.push_str(&format!("\nNot restored: {failed}"));
    }
    if scope != RewindScope::Code {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&format!(
            "The conversation is back to before message {which}; the next prompt continues from there."
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_name_built_in_commands_with_their_arguments() {
        assert_eq!(parse("/compact"), Some(Builtin::Compact(None)));
        assert_eq!(
            parse(" /compact keep the API notes "),
            Some(Builtin::Compact(Some("keep the API notes".into())))
        );
        assert_eq!(parse("/session"), Some(Builtin::Session));
        assert_eq!(
            parse("/export out.html"),
            Some(Builtin::Export(Some("out.html".into())))
        );
        assert_eq!(parse("/sessions"), None);
        assert_eq!(parse("compact"), None);
        assert_eq!(parse("/hello world"), None);
    }
}
