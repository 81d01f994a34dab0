//! Commands the user runs themselves (`!cmd`/`!!cmd` in interactive mode, `bash` over RPC):
//! turning a finished run into pi's `bashExecution` message — its output cleaned exactly as
//! pi stores it — and recording it in the session and the agent's context. Also
//! `clean_output`, a stricter cleaning any UI can use before drawing untrusted text.

use crate::ai::{now_ms, Extra};
use crate::session::entry::{AgentMessage, BashExecutionMessage};
use crate::session::tree::to_llm_messages;
use crate::tools::bash::UserRun;
use crate::tools::truncate::{truncate_tail, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES};

use super::AgentSession;

/// pi's `bashExecution` message for a finished run. `exclude_from_context` is `!!`.
pub(crate) fn bash_message(
    command: String,
    run: UserRun,
    exclude_from_context: bool,
) -> BashExecutionMessage {
    let clean = stored_output(&run.tail);
    let t = truncate_tail(&clean, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
    let truncated = t.truncated || run.dropped;
    BashExecutionMessage {
        command,
        output: if truncated { t.content } else { clean },
        exit_code: if run.cancelled {
            None
        } else {
            run.exit_code.map(|c| Some(i64::from(c)))
        },
        cancelled: run.cancelled,
        truncated,
        full_output_path: run
            .full_output_path
            .map(|p| p.to_string_lossy().into_owned()),
        timestamp: now_ms(),
        exclude_from_context: exclude_from_context.then_some(true),
        extra: Extra::new(),
    }
}

/// Appends the message to the session and (unless excluded) the agent's context.
pub fn record(s: &mut AgentSession, msg: BashExecutionMessage) {
    let message = AgentMessage::BashExecution(msg);
    s.agent_mut()
        .messages
        .extend(to_llm_messages(std::slice::from_ref(&message)));
    if let Err(e) = s.session.append_message(message) {
        s.write_errors.push(e.to_string());
    }
}

/// Output as pi stores it in a `bashExecution` message: what `strip-ansi` removes (CSI, OSC
/// and two-character escapes), then pi's `sanitizeBinaryOutput` (control characters other
/// than tab, newline and carriage return, and the interlinear annotation characters), then
/// carriage returns.
fn stored_output(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.peek() {
                Some('[') => {
                    chars.next();
                    skip_csi(&mut chars);
                }
                Some(']') => {
                    chars.next();
                    skip_string(&mut chars);
                }
                Some(&n) if ('\u{20}'..='\u{7e}').contains(&n) => {
                    chars.next();
                    // ESC ( B and friends: an intermediate then a final character.
                    if ('\u{20}'..='\u{2f}').contains(&n) {
                        chars.next();
                    }
                }
                _ => {}
            },
            '\u{9b}' => skip_csi(&mut chars),
            '\t' | '\n' => out.push(c),
            c if c <= '\u{1f}' || ('\u{fff9}'..='\u{fffb}').contains(&c) => {}
            c => out.push(c),
        }
    }
    out
}

/// Skips an OSC/DCS/APC string up to BEL or ST (ESC \).
fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(c) = chars.next() {
        if c == '\u{7}' || c == '\u{9c}' {
            break;
        }
        if c == '\u{1b}' && chars.peek() == Some(&'\\') {
            chars.next();
            break;
        }
    }
}

/// Text made safe to draw: every escape sequence (CSI, OSC, DCS, APC, PM, SOS and
/// two-character escapes) and every control character other than tab and newline removed.
pub fn clean_output(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.peek() {
                Some('[') => {
                    chars.next();
                    skip_csi(&mut chars);
                }
                Some(']' | 'P' | '_' | '^' | 'X') => {
                    chars.next();
                    skip_string(&mut chars);
                }
                Some(&n) if ('\u{20}'..='\u{7e}').contains(&n) => {
                    chars.next();
                    // ESC ( B and friends: an intermediate then a final character.
                    if ('\u{20}'..='\u{2f}').contains(&n) {
                        chars.next();
                    }
                }
                _ => {}
            },
            '\u{9b}' => skip_csi(&mut chars),
            '\t' | '\n' => out.push(c),
            c if c.is_control() || ('\u{fff9}'..='\u{fffb}').contains(&c) => {}
            c => out.push(c),
        }
    }
    out
}

fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    for c in chars.by_ref() {
        if ('\u{40}'..='\u{7e}').contains(&c) {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{clean_output, stored_output};

    #[test]
    fn stored_output_is_cleaned_as_pi_stores_it() {
        assert_eq!(stored_output("\u{1b}[31mred\u{1b}[0m"), "red");
        assert_eq!(stored_output("a\u{1b}]0;title\u{7}b"), "ab");
        assert_eq!(stored_output("a\u{1b}]8;;http://x\u{1b}\\b"), "ab");
        assert_eq!(stored_output("\u{1b}(Bok\u{1b}=x"), "okx");
        assert_eq!(stored_output("a\u{0}b\tc\u{7}\r\n"), "ab\tc\n");
        // DEL and C1 characters are not among what pi removes.
        assert_eq!(stored_output("a\u{7f}b\u{85}"), "a\u{7f}b\u{85}");
    }

    #[test]
    fn escapes_and_control_characters_are_removed() {
        assert_eq!(clean_output("\u{1b}[31mred\u{1b}[0m"), "red");
        assert_eq!(clean_output("a\u{1b}]0;title\u{7}b"), "ab");
        assert_eq!(clean_output("a\u{1b}]8;;http://x\u{1b}\\b"), "ab");
        assert_eq!(clean_output("\u{1b}(Bok\u{1b}=x"), "okx");
        assert_eq!(clean_output("a\u{0}b\tc\u{7}\r\n"), "ab\tc\n");
        assert_eq!(clean_output("x\u{1b}[2J\u{1b}[Hy\u{9b}1mz"), "xyz");
        assert_eq!(clean_output("\u{1b}_pi:c\u{7}ok"), "ok");
    }
}
