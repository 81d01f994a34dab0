//! Branch summaries, the pure part: which entries a navigation leaves behind (old leaf back to
//! the common ancestor with the target), and which of them fit the summarizer's budget, newest
//! first. The LLM call lives in `harness::compaction`.

use std::collections::HashSet;

use super::compaction::{estimate_tokens, message_of_entry, FileOps};
use super::entry::{AgentMessage, Entry};
use super::tree::Tree;

/// The entries left behind when moving from `old_leaf` to `target`, oldest first, and the
/// deepest entry both paths share (`None`: they share nothing).
pub fn collect_entries_for_branch_summary<'a>(
    entries: &'a [Entry],
    old_leaf: Option<&str>,
    target: &str,
) -> (Vec<&'a Entry>, Option<String>) {
    let Some(old_leaf) = old_leaf else {
        return (Vec::new(), None);
    };
    let tree = Tree::new(entries);
    let old_path: HashSet<&str> = tree.path(old_leaf).iter().map(|e| e.id()).collect();
    let common = tree
        .path(target)
        .iter()
        .rev()
        .find(|e| old_path.contains(e.id()))
        .map(|e| e.id().to_string());
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut cur = Some(old_leaf);
    while let Some(id) = cur {
        if Some(id) == common.as_deref() || !seen.insert(id) {
            break;
        }
        let Some(e) = tree.get(id) else { break };
        out.push(e);
        cur = e.parent_id();
    }
    out.reverse();
    (out, common)
}

/// What a branch summary is made from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BranchPreparation {
    pub messages: Vec<AgentMessage>,
    pub file_ops: FileOps,
    pub total_tokens: u64,
}

/// The newest messages of `entries` that fit `token_budget` (0: no limit). Tool results are
/// left out (their calls say enough); an earlier summary may still squeeze in while less than
/// 90% of the budget is used. File operations come from every entry, fitting or not,
/// including earlier branch summaries' `details`.
pub fn prepare_branch_entries(entries: &[&Entry], token_budget: u64) -> BranchPreparation {
    let mut prep = BranchPreparation::default();
    for e in entries {
        if let Entry::BranchSummary(b) = e {
            if b.from_hook != Some(true) {
                prep.file_ops.add_details(b.details.as_ref());
            }
        }
    }
    let mut kept = Vec::new();
    for e in entries.iter().rev() {
        let message = match e {
            Entry::Message(m) if m.message.role() == "toolResult" => None,
            e => message_of_entry(e),
        };
        let Some(message) = message else { continue };
        prep.file_ops.add_message(&message);
        let tokens = estimate_tokens(&message);
        if token_budget > 0 && prep.total_tokens + tokens > token_budget {
            let is_summary = matches!(e, Entry::Compaction(_) | Entry::BranchSummary(_));
            if is_summary && (prep.total_tokens as f64) < token_budget as f64 * 0.9 {
                kept.push(message);
                prep.total_tokens += tokens;
            }
            break;
        }
        kept.push(message);
        prep.total_tokens += tokens;
    }
    kept.reverse();
    prep.messages = kept;
    prep
}
