//! The entry tree (entries linked by `parentId`), paths from a leaf to the root, and the
//! conversion of a path into what the agent and the LLM see: `build_context` resolves
//! compaction, branch summaries and custom messages; `to_llm_messages` turns pi's own message
//! roles into user messages with pi's exact wording.

use std::collections::{HashMap, HashSet};

use super::entry::{
    AgentMessage, BashExecutionMessage, BranchSummaryMessage, CompactionEntry,
    CompactionSummaryMessage, CustomMessage, Entry,
};
use super::ids::parse_iso_ms;
use crate::ai::{Content, Extra, Message, UserContent, UserMessage};

pub const COMPACTION_SUMMARY_PREFIX: &str =
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

/// What a leaf resolves to: the agent transcript plus the model and thinking level to restore.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionContext {
    pub messages: Vec<AgentMessage>,
    /// `(provider, modelId)` from the last model change or assistant message on the path.
    pub model: Option<(String, String)>,
    /// The last `thinking_level_change` on the path (pi falls back to `"off"`).
    pub thinking_level: Option<String>,
}

/// An index over a session's entries (header excluded).
pub struct Tree<'a> {
    entries: &'a [Entry],
    by_id: HashMap<&'a str, usize>,
}

impl<'a> Tree<'a> {
    pub fn new(entries: &'a [Entry]) -> Self {
        let mut by_id = HashMap::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            by_id.insert(e.id(), i);
        }
        Tree { entries, by_id }
    }

    pub fn get(&self, id: &str) -> Option<&'a Entry> {
        self.by_id.get(id).map(|&i| &self.entries[i])
    }

    /// The last entry in file order: the leaf after loading a file.
    pub fn last_id(&self) -> Option<&'a str> {
        self.entries.last().map(Entry::id)
    }

    /// Entries whose parent is `parent` (`None`: the roots), in file order.
    pub fn children(&self, parent: Option<&str>) -> Vec<&'a Entry> {
        self.entries
            .iter()
            .filter(|e| e.parent_id() == parent)
            .collect()
    }

    /// Entries with no children.
    pub fn leaves(&self) -> Vec<&'a Entry> {
        let parents: HashSet<&str> = self.entries.iter().filter_map(Entry::parent_id).collect();
        self.entries
            .iter()
            .filter(|e| !parents.contains(e.id()))
            .collect()
    }

    /// Root → `leaf` inclusive. Empty if `leaf` is unknown; a parent cycle ends the walk.
    pub fn path(&self, leaf: &str) -> Vec<&'a Entry> {
        let mut path = Vec::new();
        let mut seen = HashSet::new();
        let mut cur = self.get(leaf);
        while let Some(e) = cur {
            if !seen.insert(e.id()) {
                break;
            }
            path.push(e);
            cur = e.parent_id().and_then(|p| self.get(p));
        }
        path.reverse();
        path
    }

    /// Current label of every labelled entry (later label entries win; empty clears).
    pub fn labels(&self) -> HashMap<&'a str, &'a str> {
        let mut out = HashMap::new();
        for e in self.entries {
            if let Entry::Label(l) = e {
                match l.label.as_deref() {
                    Some(s) if !s.is_empty() => out.insert(l.target_id.as_str(), s),
                    _ => out.remove(l.target_id.as_str()),
                };
            }
        }
        out
    }

    /// The session name from the latest `session_info` entry (trimmed; empty clears).
    pub fn name(&self) -> Option<&'a str> {
        self.entries
            .iter()
            .rev()
            .find_map(|e| match e {
                Entry::SessionInfo(i) => Some(i.name.as_deref().map(str::trim).unwrap_or("")),
                _ => None,
            })
            .filter(|n| !n.is_empty())
    }

    /// The context at `leaf`. `None` means "before the first entry" (no messages); an id that
    /// is not found falls back to the last entry, as pi does.
    pub fn build_context(&self, leaf: Option<&str>) -> SessionContext {
        let Some(leaf) = leaf else {
            return SessionContext::default();
        };
        let leaf = if self.by_id.contains_key(leaf) {
            Some(leaf)
        } else {
            self.last_id()
        };
        match leaf {
            Some(l) => context_of_path(&self.path(l)),
            None => SessionContext::default(),
        }
    }
}

/// Convenience: the context at `leaf` over `entries`.
pub fn build_context(entries: &[Entry], leaf: Option<&str>) -> SessionContext {
    Tree::new(entries).build_context(leaf)
}

fn context_of_path(path: &[&Entry]) -> SessionContext {
    let mut ctx = SessionContext::default();
    let mut compaction = None;
    for (i, e) in path.iter().enumerate() {
        match e {
            Entry::ThinkingLevelChange(t) => ctx.thinking_level = Some(t.thinking_level.clone()),
            Entry::ModelChange(m) => ctx.model = Some((m.provider.clone(), m.model_id.clone())),
            Entry::Message(m) => {
                if let AgentMessage::Llm(Message::Assistant(a)) = &m.message {
                    ctx.model = Some((a.provider.clone(), a.model.clone()));
                }
            }
            Entry::Compaction(_) => compaction = Some(i),
            _ => {}
        }
    }
    let push = |out: &mut Vec<AgentMessage>, e: &Entry| {
        if matches!(
            e,
            Entry::Message(_) | Entry::CustomMessage(_) | Entry::BranchSummary(_)
        ) {
            out.extend(context_message(e.clone()));
        }
    };
    let mut out = Vec::new();
    match compaction {
        Some(ci) => {
            let Entry::Compaction(c) = path[ci] else {
                unreachable!()
            };
            out.push(compaction_message(c));
            let first_kept = c.first_kept_entry_id.as_deref();
            let mut keeping = false;
            for e in &path[..ci] {
                keeping |= Some(e.id()) == first_kept;
                if keeping {
                    push(&mut out, e);
                }
            }
            for e in &path[ci + 1..] {
                push(&mut out, e);
            }
        }
        None => path.iter().for_each(|e| push(&mut out, e)),
    }
    ctx.messages = out;
    ctx
}

/// The message an entry puts into the context, if any.
pub(super) fn context_message(e: Entry) -> Option<AgentMessage> {
    match e {
        Entry::Message(m) => Some(m.message),
        Entry::CustomMessage(c) => Some(AgentMessage::Custom(CustomMessage {
            timestamp: entry_ms(&c.timestamp),
            custom_type: c.custom_type,
            content: c.content,
            display: c.display,
            details: c.details,
            extra: Extra::new(),
        })),
        Entry::BranchSummary(b) if !b.summary.is_empty() => {
            Some(AgentMessage::BranchSummary(BranchSummaryMessage {
                timestamp: entry_ms(&b.timestamp),
                summary: b.summary,
                from_id: b.from_id,
                extra: Extra::new(),
            }))
        }
        _ => None,
    }
}

/// The summary message a compaction entry starts the context with.
pub(super) fn compaction_message(c: &CompactionEntry) -> AgentMessage {
    AgentMessage::CompactionSummary(CompactionSummaryMessage {
        summary: c.summary.clone(),
        tokens_before: c.tokens_before,
        timestamp: entry_ms(&c.timestamp),
        extra: Extra::new(),
    })
}

/// An entry's ISO timestamp in ms (0 if unparsable; JavaScript would give NaN).
fn entry_ms(iso: &str) -> i64 {
    parse_iso_ms(iso).unwrap_or(0)
}

/// The text pi shows the LLM for a `bashExecution` message.
pub fn bash_execution_text(m: &BashExecutionMessage) -> String {
    let mut t = format!("Ran `{}`\n", m.command);
    if m.output.is_empty() {
        t.push_str("(no output)");
    } else {
        t.push_str(&format!("```\n{}\n```", m.output));
    }
    if m.cancelled {
        t.push_str("\n\n(command cancelled)");
    } else if let Some(Some(code)) = m.exit_code {
        if code != 0 {
            t.push_str(&format!("\n\nCommand exited with code {code}"));
        }
    }
    if m.truncated {
        if let Some(p) = m.full_output_path.as_deref().filter(|p| !p.is_empty()) {
            t.push_str(&format!("\n\n[Output truncated. Full output: {p}]"));
        }
    }
    t
}

fn user_text(text: String, timestamp: i64) -> Message {
    Message::User(UserMessage {
        content: UserContent::Blocks(vec![Content::text(text)]),
        timestamp,
        extra: Extra::new(),
    })
}

/// What the LLM receives for a transcript (pi's `convertToLlm`): LLM messages pass through,
/// pi's roles become user messages, excluded bash runs and unknown roles are dropped.
pub fn to_llm_messages(messages: &[AgentMessage]) -> Vec<Message> {
    messages
        .iter()
        .filter_map(|m| match m {
            AgentMessage::Llm(m) => Some(m.clone()),
            AgentMessage::BashExecution(b) if b.exclude_from_context == Some(true) => None,
            AgentMessage::BashExecution(b) => Some(user_text(bash_execution_text(b), b.timestamp)),
            AgentMessage::Custom(c) => Some(Message::User(UserMessage {
                content: match &c.content {
                    UserContent::Text(s) => UserContent::Blocks(vec![Content::text(s.clone())]),
                    blocks => blocks.clone(),
                },
                timestamp: c.timestamp,
                extra: Extra::new(),
            })),
            AgentMessage::BranchSummary(b) => Some(user_text(
                format!(
                    "{BRANCH_SUMMARY_PREFIX}{}{BRANCH_SUMMARY_SUFFIX}",
                    b.summary
                ),
                b.timestamp,
            )),
            AgentMessage::CompactionSummary(c) => Some(user_text(
                format!(
                    "{COMPACTION_SUMMARY_PREFIX}{}{COMPACTION_SUMMARY_SUFFIX}",
                    c.summary
                ),
                c.timestamp,
            )),
            AgentMessage::Unknown(_) => None,
        })
        .collect()
}
