//! The entry tree (entries linked by `parentId`), paths from a leaf to the root, and the
//! conversion of a path into what the agent sees: `build_context` resolves compaction, branch
//! summaries and custom messages (the agent's `to_llm_messages` then gives the LLM's view).

use std::collections::{HashMap, HashSet};

use super::entry::{CompactionEntry, Entry};
use super::ids::parse_iso_ms;
use crate::agent::message::{
    AgentMessage, BranchSummaryMessage, CompactionSummaryMessage, CustomMessage,
};
use crate::ai::{Extra, Message};
use serde_json::Value;

// Moved to `agent::message` (the loop owns its messages); re-exported for callers of the
// old path.
pub use crate::agent::message::{
    bash_execution_text, to_llm_messages, BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX,
    COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX,
};

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
        self.context_at(leaf, Edits::Apply)
    }

    /// What the transcript shows at `leaf`: [`Tree::build_context`] without context edits,
    /// which change only what the model sees (pi 1.x shows the entries as they are).
    pub fn transcript(&self, leaf: Option<&str>) -> SessionContext {
        self.context_at(leaf, Edits::Ignore)
    }

    fn context_at(&self, leaf: Option<&str>, edits: Edits) -> SessionContext {
        let Some(leaf) = leaf else {
            return SessionContext::default();
        };
        let leaf = if self.by_id.contains_key(leaf) {
            Some(leaf)
        } else {
            self.last_id()
        };
        match leaf {
            Some(l) => context_of_path(&self.path(l), edits),
            None => SessionContext::default(),
        }
    }
}

/// Convenience: the context at `leaf` over `entries`.
pub fn build_context(entries: &[Entry], leaf: Option<&str>) -> SessionContext {
    Tree::new(entries).build_context(leaf)
}

/// Whether context edits are applied (for the model) or not (for the transcript).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Edits {
    Apply,
    Ignore,
}

fn context_of_path(path: &[&Entry], edits: Edits) -> SessionContext {
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
    // The entries that make the context: after a compaction, the compaction itself, the kept
    // entries before it (system messages left out: its checkpoint replaces them) and all after.
    let selected: Vec<&Entry> = match compaction {
        Some(ci) => {
            let Entry::Compaction(c) = path[ci] else {
                unreachable!()
            };
            let first_kept = c.first_kept_entry_id.as_deref();
            let start = path[..ci].iter().position(|e| Some(e.id()) == first_kept);
            let kept = start
                .map_or(&path[..0], |s| &path[s..ci])
                .iter()
                .filter(|e| !is_system_message(e));
            std::iter::once(path[ci])
                .chain(kept.copied())
                .chain(path[ci + 1..].iter().copied())
                .collect()
        }
        None => path.to_vec(),
    };
    let edits = match edits {
        Edits::Apply => ContextEdits::of(selected.iter().copied()),
        Edits::Ignore => ContextEdits::default(),
    };
    let mut out = Vec::new();
    for e in &selected {
        out.extend(edits.apply(e.id(), entry_messages(e)));
    }
    ctx.messages = out;
    ctx
}

/// Whether `e` holds a `role:"system"` message (pi 1.x's prompt and tool checkpoints).
pub(super) fn is_system_message(e: &Entry) -> bool {
    matches!(e.message(), Some(m) if m.role() == "system")
}

/// The messages an entry puts into the context: a message, a custom message, a non-empty
/// branch summary, or a compaction (its 1.x system checkpoint, then its summary).
pub(super) fn entry_messages(e: &Entry) -> Vec<AgentMessage> {
    match e {
        Entry::Compaction(c) => {
            let checkpoint = c.extra.get("systemMessage").filter(|m| m.is_object());
            checkpoint
                .map(|m| AgentMessage::from_value(m.clone()))
                .into_iter()
                .chain(std::iter::once(compaction_message(c)))
                .collect()
        }
        Entry::Message(_) | Entry::CustomMessage(_) | Entry::BranchSummary(_) => {
            context_message(e.clone()).into_iter().collect()
        }
        _ => Vec::new(),
    }
}

/// [`entry_messages`] of an entry that is not needed afterwards: its message is moved, not
/// copied.
pub(super) fn entry_messages_owned(e: Entry) -> Vec<AgentMessage> {
    match e {
        Entry::Message(_) | Entry::CustomMessage(_) | Entry::BranchSummary(_) => {
            context_message(e).into_iter().collect()
        }
        other => entry_messages(&other),
    }
}

/// pi 1.x's `context_edit` entries among the selected ones: for each target, the latest
/// edit's replacement (`null`: the target is left out of the context). Edits change only what
/// the model sees; the entries themselves stay as they are.
#[derive(Default)]
pub(super) struct ContextEdits {
    by_target: HashMap<String, Value>,
}

impl ContextEdits {
    pub(super) fn of<'a>(entries: impl Iterator<Item = &'a Entry>) -> Self {
        let mut edits = ContextEdits::default();
        for e in entries {
            edits.add(e);
        }
        edits
    }

    /// Records `e` if it is a context edit (a later one for the same target wins).
    pub(super) fn add(&mut self, e: &Entry) {
        let Entry::Unknown(v) = e else { return };
        if v.get("type").and_then(Value::as_str) != Some("context_edit") {
            return;
        }
        let (Some(target), Some(replacement)) = (
            v.get("targetId").and_then(Value::as_str),
            v.get("replacement"),
        ) else {
            return;
        };
        self.by_target
            .insert(target.to_string(), replacement.clone());
    }

    /// The messages of entry `id` with its edit applied: none for a `null` replacement;
    /// otherwise the content of user, assistant, tool result and custom messages replaced (a
    /// string for an assistant or tool result becomes one text block). A replacement without
    /// `content` changes nothing.
    pub(super) fn apply(&self, id: &str, messages: Vec<AgentMessage>) -> Vec<AgentMessage> {
        let Some(replacement) = self.by_target.get(id) else {
            return messages;
        };
        if replacement.is_null() {
            return Vec::new();
        }
        let Some(content) = replacement.get("content") else {
            return messages;
        };
        messages
            .into_iter()
            .map(|m| {
                let role = m.role().to_string();
                if !matches!(
                    role.as_str(),
                    "user" | "assistant" | "toolResult" | "custom"
                ) {
                    return m;
                }
                let content = match (role.as_str(), content) {
                    ("assistant" | "toolResult", Value::String(s)) => {
                        serde_json::json!([{"type": "text", "text": s}])
                    }
                    (_, c) => c.clone(),
                };
                match serde_json::to_value(&m) {
                    Ok(mut v) => {
                        v["content"] = content;
                        AgentMessage::from_value(v)
                    }
                    Err(_) => m,
                }
            })
            .collect()
    }
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
