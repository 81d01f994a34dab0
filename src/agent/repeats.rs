//! The guard against a tool call that keeps failing the same way: a model stuck in a loop, or
//! a broken server that replays one reply forever, would otherwise be answered without end
//! (and billed for every request). A failure counts when the same tool, with the same
//! arguments, gives the same error as in the turn before. At the [`WARN_AT`]th failure in a
//! row the tool result tells the model it is repeating itself; at the [`STOP_AT`]th the run
//! ends with an error message every mode shows. The loop owns one guard per run; a message
//! from the user (steering, follow-up) starts it afresh.

use std::collections::HashMap;

use crate::ai::{Content, ToolCall};

/// The identical failure in a row whose result carries the note.
pub const WARN_AT: usize = 3;
/// The identical failure in a row after which the run ends.
pub const STOP_AT: usize = 4;

/// Tool name, arguments (as JSON text) and the error text.
type Signature = (String, String, String);

#[derive(Default)]
pub struct RepeatGuard {
    /// Failures of the previous turn, with how many times in a row each happened.
    previous: HashMap<Signature, usize>,
    /// Failures of the turn being executed.
    current: HashMap<Signature, usize>,
    /// Set once a failure reaches [`STOP_AT`].
    stop: bool,
}

impl RepeatGuard {
    /// Counts a finished call (its content, and whether it failed); a failure repeated
    /// [`WARN_AT`] times or more gets the note appended to its content.
    pub fn observe(&mut self, call: &ToolCall, content: &mut Vec<Content>, is_error: bool) {
        if !is_error {
            return;
        }
        let signature = (
            call.name.clone(),
            call.arguments.to_string(),
            text_of(content),
        );
        let count = self.previous.get(&signature).copied().unwrap_or(0) + 1;
        self.current.insert(signature, count);
        if count < WARN_AT {
            return;
        }
        content.push(Content::text(note(&call.name, count)));
        if count >= STOP_AT {
            self.stop = true;
        }
    }

    /// Closes a turn: its failures become the ones the next turn is compared with.
    pub fn end_turn(&mut self) {
        self.previous = std::mem::take(&mut self.current);
    }

    /// The message that ends the run, once a failure was repeated [`STOP_AT`] times.
    pub fn take_stop(&mut self) -> Option<String> {
        std::mem::take(&mut self.stop).then(stop_message)
    }
}

fn text_of(content: &[Content]) -> String {
    let mut text = String::new();
    for c in content {
        if let Content::Text(t) = c {
            text.push_str(&t.text);
            text.push('\n');
        }
    }
    text
}

fn note(tool: &str, count: usize) -> String {
    if count >= STOP_AT {
        return format!(
            "[This is the same {tool} call, with the same arguments, failing the same way \
             {count} times in a row. pi stopped the run here.]"
        );
    }
    format!(
        "[This is the same {tool} call, with the same arguments, failing the same way {count} \
         times in a row. Repeating it will not help: change the arguments, try another \
         approach, or stop and tell the user what is wrong. pi ends the run if it is made \
         again unchanged.]"
    )
}

/// Worded so that neither auto-retry nor overflow compaction mistakes it for a provider
/// failure (so the tool's name, which could be any word, stays out): the run ends, and
/// nothing tries it again by itself.
pub fn stop_message() -> String {
    format!(
        "Stopped: the model made the same tool call {STOP_AT} times in a row, with the same \
         arguments, and it failed the same way each time. See the tool's result above; send a \
         new prompt to go on."
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    struct Failed {
        call: ToolCall,
        content: Vec<Content>,
        is_error: bool,
    }

    fn failed(args: serde_json::Value, error: &str) -> Failed {
        Failed {
            call: ToolCall {
                id: "c".into(),
                name: "read".into(),
                arguments: args,
                thought_signature: None,
            },
            content: vec![Content::text(error)],
            is_error: true,
        }
    }

    fn turn(guard: &mut RepeatGuard, f: &mut Failed) {
        guard.observe(&f.call, &mut f.content, f.is_error);
        guard.end_turn();
    }

    #[test]
    fn the_third_identical_failure_is_told_and_the_fourth_stops() {
        let mut guard = RepeatGuard::default();
        for n in 1..=4 {
            let mut f = failed(json!({"path": "x"}), "ENOENT");
            turn(&mut guard, &mut f);
            let text = text_of(&f.content);
            assert_eq!(text.contains("3 times in a row"), n == 3, "{n}: {text}");
            assert_eq!(
                text.contains("pi stopped the run here"),
                n == 4,
                "{n}: {text}"
            );
            assert_eq!(guard.take_stop().is_some(), n == 4, "{n}");
        }
    }

    #[test]
    fn a_different_argument_error_or_success_starts_over() {
        let mut guard = RepeatGuard::default();
        turn(&mut guard, &mut failed(json!({"path": "x"}), "ENOENT"));
        turn(&mut guard, &mut failed(json!({"path": "x"}), "ENOENT"));
        turn(&mut guard, &mut failed(json!({"path": "y"}), "ENOENT"));
        turn(&mut guard, &mut failed(json!({"path": "y"}), "EACCES"));
        let mut ok = failed(json!({"path": "y"}), "EACCES");
        ok.is_error = false;
        turn(&mut guard, &mut ok);
        turn(&mut guard, &mut failed(json!({"path": "y"}), "EACCES"));
        let mut f = failed(json!({"path": "y"}), "EACCES");
        turn(&mut guard, &mut f);
        assert_eq!(text_of(&f.content), "EACCES\n");
        assert!(guard.take_stop().is_none());
    }
}
