//! RPC `get_entries [since]` and `get_tree` (today's pi): the session's entries in append
//! order, or as the tree their `parentId`s make, each with the current leaf. Entries are
//! written as stored (unknown fields kept). The tree is written without recursion: a long
//! session is a chain as deep as it is long.

use std::collections::HashMap;

use serde_json::Value;

use crate::harness::AgentSession;
use crate::modes::rpc_out::{response, Out};
use crate::session::entry::Entry;
use crate::session::json::to_js_string;

/// Answers `get_entries` / `get_tree` from the idle session (they wait for it).
pub(super) fn entries(s: &AgentSession, out: &Out, cmd: &Value, id: Option<Value>, kind: &str) {
    let entries = s.session.entries();
    let leaf = to_js_string(&s.session.leaf_id());
    let data = if kind == "get_tree" {
        format!("{{\"tree\":{},\"leafId\":{leaf}}}", tree_json(entries))
    } else {
        let from = match cmd.get("since") {
            None | Some(Value::Null) => 0,
            Some(since) => {
                let since = since.as_str().unwrap_or_default();
                match entries.iter().position(|e| e.id() == since) {
                    Some(i) => i + 1,
                    None => {
                        let e = format!("Entry not found: {since}");
                        return out.line(&response(&id, kind, Err(e)));
                    }
                }
            }
        };
        let list: Vec<String> = entries[from..].iter().map(Entry::to_line).collect();
        format!("{{\"entries\":[{}],\"leafId\":{leaf}}}", list.join(","))
    };
    // The response with `data` spliced in as written.
    let head = to_js_string(&response(&id, kind, Ok(None)));
    let head = head.strip_suffix('}').unwrap_or(&head);
    out.text_line(format!("{head},\"data\":{data}}}"));
}

/// `[{entry, children, label?, labelTimestamp?}]`: roots are entries without a parent or whose
/// parent is missing; children in file order. Entries caught in a parent cycle are roots too,
/// so nothing is left out.
fn tree_json(entries: &[Entry]) -> String {
    let index: HashMap<&str, usize> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id(), i))
        .collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); entries.len()];
    let mut roots = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        match e.parent_id().and_then(|p| index.get(p)) {
            Some(&p) if p != i => children[p].push(i),
            _ => roots.push(i),
        }
    }
    // Labels as they stand: the latest label entry for a target wins; an empty one clears.
    let mut labels: HashMap<&str, (&str, &str)> = HashMap::new();
    for e in entries {
        if let Entry::Label(l) = e {
            match l.label.as_deref().filter(|s| !s.is_empty()) {
                Some(text) => labels.insert(l.target_id.as_str(), (text, l.timestamp.as_str())),
                None => labels.remove(l.target_id.as_str()),
            };
        }
    }
    let mut written = vec![false; entries.len()];
    let mut out = String::from("[");
    let mut first_root = true;
    let mut pending_roots = roots.into_iter();
    while let Some(root) = pending_roots
        .next()
        .or_else(|| written.iter().position(|w| !w))
    {
        if written[root] {
            continue;
        }
        if !std::mem::take(&mut first_root) {
            out.push(',');
        }
        // Depth-first: (entry, index of its next child to look at, wrote a child yet).
        let mut stack: Vec<(usize, usize, bool)> = vec![(root, 0, false)];
        open_node(&mut out, &entries[root]);
        written[root] = true;
        while let Some(top) = stack.last_mut() {
            let (node, mut next, wrote) = *top;
            while next < children[node].len() && written[children[node][next]] {
                next += 1;
            }
            if let Some(&c) = children[node].get(next) {
                *top = (node, next + 1, true);
                if wrote {
                    out.push(',');
                }
                open_node(&mut out, &entries[c]);
                written[c] = true;
                stack.push((c, 0, false));
                continue;
            }
            out.push(']');
            if let Some((text, at)) = labels.get(entries[node].id()) {
                out.push_str(",\"label\":");
                out.push_str(&to_js_string(text));
                out.push_str(",\"labelTimestamp\":");
                out.push_str(&to_js_string(at));
            }
            out.push('}');
            stack.pop();
        }
    }
    out.push(']');
    out
}

fn open_node(out: &mut String, e: &Entry) {
    out.push_str("{\"entry\":");
    out.push_str(&e.to_line());
    out.push_str(",\"children\":[");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, parent: Option<&str>) -> Entry {
        Entry::from_value(serde_json::json!({
            "type": "custom", "id": id, "parentId": parent,
            "timestamp": "2026-01-01T00:00:00.000Z", "customType": "x"
        }))
    }

    fn ids(v: &Value) -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|n| {
                let kids = ids(&n["children"]);
                let id = n["entry"]["id"].as_str().unwrap().to_string();
                if kids.is_empty() {
                    id
                } else {
                    format!("{id}({})", kids.join(" "))
                }
            })
            .collect()
    }

    #[test]
    fn branches_orphans_and_labels_take_pis_tree_shape() {
        let mut entries = vec![
            entry("a", None),
            entry("b", Some("a")),
            entry("c", Some("b")),
            entry("d", Some("a")),
            entry("o", Some("gone")),
        ];
        entries.push(Entry::from_value(serde_json::json!({
            "type": "label", "id": "l", "parentId": "d",
            "timestamp": "2026-01-02T00:00:00.000Z", "targetId": "b", "label": "here"
        })));
        let tree: Value = serde_json::from_str(&tree_json(&entries)).unwrap();
        assert_eq!(ids(&tree), ["a(b(c) d(l))", "o"]);
        let b = &tree[0]["children"][0];
        assert_eq!(b["label"], "here");
        assert_eq!(b["labelTimestamp"], "2026-01-02T00:00:00.000Z");
        assert!(tree[0].get("label").is_none());
    }

    #[test]
    fn a_very_long_chain_is_written_without_recursion() {
        let mut entries = vec![entry("e0", None)];
        for i in 1..100_000 {
            entries.push(entry(&format!("e{i}"), Some(&format!("e{}", i - 1))));
        }
        let text = tree_json(&entries);
        assert!(text.starts_with("[{\"entry\":"));
        assert_eq!(text.matches("\"children\":[").count(), 100_000);
        // A cycle leaves nothing out.
        let cyc = vec![entry("x", Some("y")), entry("y", Some("x"))];
        assert_eq!(tree_json(&cyc).matches("\"entry\"").count(), 2);
    }
}
