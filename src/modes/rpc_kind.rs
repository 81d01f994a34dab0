//! The RPC commands pi knows, by name, grouped by where each is handled — one table, so the
//! server loop, the actor's answers and the "refused during a run" rule cannot disagree: a new
//! command is a new variant, and every `match` over its group has to place it.
//!
//! * [`Loop`]: handled by the server loop at once (they reach the run, or the `bash` command).
//! * [`Query`]: answered on the actor now, from the idle session or the run's view.
//! * [`Change`]: change the session: answered between runs, refused during one.
//! * [`Read`]: read the session itself: wait for the run's end.

/// A known command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Command {
    Loop(Loop),
    Peek(Peekable),
    Read(Read),
}

/// Answered on the actor at once (see [`Query`] and [`Change`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Peekable {
    Query(Query),
    Change(Change),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Loop {
    Bash,
    AbortBash,
    Abort,
    AbortRetry,
    Steer,
    FollowUp,
    ClearQueue,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Query {
    /// Runs when idle; during a run it is queued (`streamingBehavior`) or refused.
    Prompt,
    GetState,
    GetMessages,
    GetLastAssistantText,
    GetAvailableModels,
    GetAvailableThinkingLevels,
    GetCommands,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Change {
    SetThinkingLevel,
    CycleThinkingLevel,
    SetSteeringMode,
    SetFollowUpMode,
    SetAutoRetry,
    SetAutoCompaction,
    SetSessionName,
    SetModel,
    Compact,
    NewSession,
    SwitchSession,
    Fork,
    Clone,
    CycleModel,
    /// Ours (`/rewind`): restores the files, the conversation or both.
    Rewind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Read {
    GetEntries,
    GetTree,
    GetSessionStats,
    GetForkMessages,
    ExportHtml,
    /// Ours (`/rewind`): the user messages a rewind can go back to.
    GetCheckpoints,
}

use Change as C;
use Command::{Loop as L, Peek as P, Read as R};
use Peekable::{Change as PC, Query as PQ};
use Query as Q;

/// Every command by its `type`.
const COMMANDS: &[(&str, Command)] = &[
    ("bash", L(Loop::Bash)),
    ("abort_bash", L(Loop::AbortBash)),
    ("abort", L(Loop::Abort)),
    ("abort_retry", L(Loop::AbortRetry)),
    ("steer", L(Loop::Steer)),
    ("follow_up", L(Loop::FollowUp)),
    ("clear_queue", L(Loop::ClearQueue)),
    ("prompt", P(PQ(Q::Prompt))),
    ("get_state", P(PQ(Q::GetState))),
    ("get_messages", P(PQ(Q::GetMessages))),
    ("get_last_assistant_text", P(PQ(Q::GetLastAssistantText))),
    ("get_available_models", P(PQ(Q::GetAvailableModels))),
    (
        "get_available_thinking_levels",
        P(PQ(Q::GetAvailableThinkingLevels)),
    ),
    ("get_commands", P(PQ(Q::GetCommands))),
    ("set_thinking_level", P(PC(C::SetThinkingLevel))),
    ("cycle_thinking_level", P(PC(C::CycleThinkingLevel))),
    ("set_steering_mode", P(PC(C::SetSteeringMode))),
    ("set_follow_up_mode", P(PC(C::SetFollowUpMode))),
    ("set_auto_retry", P(PC(C::SetAutoRetry))),
    ("set_auto_compaction", P(PC(C::SetAutoCompaction))),
    ("set_session_name", P(PC(C::SetSessionName))),
    ("set_model", P(PC(C::SetModel))),
    ("compact", P(PC(C::Compact))),
    ("new_session", P(PC(C::NewSession))),
    ("switch_session", P(PC(C::SwitchSession))),
    ("fork", P(PC(C::Fork))),
    ("clone", P(PC(C::Clone))),
    ("cycle_model", P(PC(C::CycleModel))),
    ("rewind", P(PC(C::Rewind))),
    ("get_entries", R(Read::GetEntries)),
    ("get_tree", R(Read::GetTree)),
    ("get_session_stats", R(Read::GetSessionStats)),
    ("get_fork_messages", R(Read::GetForkMessages)),
    ("export_html", R(Read::ExportHtml)),
    ("get_checkpoints", R(Read::GetCheckpoints)),
];

impl Command {
    /// The command named `kind`, if pi has one.
    pub(super) fn parse(kind: &str) -> Option<Command> {
        COMMANDS
            .iter()
            .find(|(name, _)| *name == kind)
            .map(|(_, c)| *c)
    }
}

impl Loop {
    /// Meant for a running agent (stop or steer it): never waits behind other lines, except
    /// behind a running `bash` command.
    pub(super) fn reaches_the_run(self) -> bool {
        match self {
            Loop::Abort | Loop::AbortRetry | Loop::Steer | Loop::FollowUp | Loop::ClearQueue => {
                true
            }
            Loop::Bash | Loop::AbortBash => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_one_command_and_unknown_names_are_none() {
        for (i, (name, command)) in COMMANDS.iter().enumerate() {
            assert_eq!(Command::parse(name), Some(*command), "{name}");
            let twice = COMMANDS
                .iter()
                .skip(i + 1)
                .any(|(n, c)| n == name || c == command);
            assert!(!twice, "{name} is listed twice");
        }
        assert_eq!(Command::parse("Prompt"), None);
        assert_eq!(Command::parse(""), None);
        assert_eq!(Command::parse("extension_ui_response"), None);
    }

    #[test]
    fn what_reaches_the_run_is_what_pi_lets_overtake() {
        let overtaking: Vec<&str> = COMMANDS
            .iter()
            .filter(|(_, c)| matches!(c, Command::Loop(l) if l.reaches_the_run()))
            .map(|(n, _)| *n)
            .collect();
        assert_eq!(
            overtaking,
            ["abort", "abort_retry", "steer", "follow_up", "clear_queue"]
        );
    }
}
