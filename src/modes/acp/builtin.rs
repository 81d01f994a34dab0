//! The commands pi's terminal has that an editor can type too: `/compact [instructions]`,
//! `/session` (the session's file, id and counts) and `/export [file]` (HTML). A prompt is one
//! of these when it names it and no extension command or prompt template of that name exists.

use std::path::PathBuf;

use crate::agent::AgentEvent;
use crate::harness::AgentSession;

#[derive(Debug, Clone, PartialEq)]
pub enum Builtin {
    Compact(Option<String>),
    Session,
    Export(Option<PathBuf>),
}

/// Names and descriptions, for `available_commands_update`.
pub const BUILTINS: [(&str, &str); 3] = [
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
        _ => None,
    }
}

impl Builtin {
    pub fn name(&self) -> &'static str {
        match self {
            Builtin::Compact(_) => "compact",
            Builtin::Session => "session",
            Builtin::Export(_) => "export",
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
                Ok(format!(
                    "Compaction completed: {} tokens before, summarized.",
                    r.tokens_before
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
        }
    }
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
