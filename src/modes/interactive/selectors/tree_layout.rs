//! The shape of `/tree`: the session's entries flattened depth-first (the branch holding the
//! current leaf first at every fork), the filter that decides which rows show, and the
//! connector layout of the rows that remain — a hidden entry's children hang from its nearest
//! visible ancestor, single-child chains stay flat, and each fork indents its branches one step
//! with `├─`/`└─` and `│` gutters.

use std::collections::{HashMap, HashSet};

use super::tree_text::{is_bookkeeping, is_silent_assistant, role, searchable_text};
use crate::session::entry::Entry;
use crate::util::sort;

/// Which entries `/tree` lists (pi's `treeFilterMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeFilter {
    /// Everything but settings/bookkeeping entries.
    Default,
    /// Default minus tool results.
    NoTools,
    UserOnly,
    LabeledOnly,
    All,
}

impl TreeFilter {
    pub const CYCLE: [TreeFilter; 5] = [
        TreeFilter::Default,
        TreeFilter::NoTools,
        TreeFilter::UserOnly,
        TreeFilter::LabeledOnly,
        TreeFilter::All,
    ];

    /// The setting's spelling (`"no-tools"`); unknown values mean `Default`.
    pub fn parse(s: &str) -> TreeFilter {
        match s {
            "no-tools" => TreeFilter::NoTools,
            "user-only" => TreeFilter::UserOnly,
            "labeled-only" => TreeFilter::LabeledOnly,
            "all" => TreeFilter::All,
            _ => TreeFilter::Default,
        }
    }

    /// The tag shown after the position line.
    pub fn status(self) -> &'static str {
        match self {
            TreeFilter::Default => "",
            TreeFilter::NoTools => " [no-tools]",
            TreeFilter::UserOnly => " [user]",
            TreeFilter::LabeledOnly => " [labeled]",
            TreeFilter::All => " [all]",
        }
    }

    pub fn step(self, forward: bool) -> TreeFilter {
        let n = Self::CYCLE.len();
        let at = Self::CYCLE.iter().position(|f| *f == self).unwrap_or(0);
        Self::CYCLE[if forward {
            (at + 1) % n
        } else {
            (at + n - 1) % n
        }]
    }
}

pub struct Node {
    pub entry: Entry,
    pub parent: Option<usize>,
    pub label: Option<String>,
    pub label_time: Option<String>,
}

/// Where a visible row's connectors go.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowLayout {
    pub indent: usize,
    pub show_connector: bool,
    pub is_last: bool,
    /// `(level, draw │)` for each ancestor fork still open at this depth.
    pub gutters: Vec<(usize, bool)>,
    pub virtual_root_child: bool,
}

pub struct TreeModel {
    /// Flattened depth-first, current branch first.
    pub nodes: Vec<Node>,
    pub by_id: HashMap<String, usize>,
    pub leaf: Option<usize>,
    pub active: HashSet<usize>,
    /// Rows shown: node indexes in `nodes` order.
    pub visible: Vec<usize>,
    pub layout: HashMap<usize, RowLayout>,
    pub visible_parent: HashMap<usize, Option<usize>>,
    pub visible_children: HashMap<Option<usize>, Vec<usize>>,
    pub multiple_roots: bool,
    pub folded: HashSet<usize>,
}

impl TreeModel {
    pub fn new(entries: &[Entry], leaf_id: Option<&str>) -> TreeModel {
        let mut labels: HashMap<&str, (Option<String>, String)> = HashMap::new();
        for e in entries {
            if let Entry::Label(l) = e {
                let label = l.label.clone().filter(|s| !s.is_empty());
                labels.insert(l.target_id.as_str(), (label, l.timestamp.clone()));
            }
        }
        let file_index: HashMap<&str, usize> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.id(), i))
            .collect();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); entries.len()];
        let mut roots = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            match e.parent_id().and_then(|p| file_index.get(p)) {
                Some(&p) if p != i => children[p].push(i),
                _ => roots.push(i),
            }
        }
        // The active path in file indexes: leaf up to its root.
        let mut on_path = HashSet::new();
        let mut at = leaf_id.and_then(|id| file_index.get(id).copied());
        while let Some(i) = at {
            if !on_path.insert(i) {
                break;
            }
            at = entries[i]
                .parent_id()
                .and_then(|p| file_index.get(p).copied());
        }
        let active_first =
            |list: &mut Vec<usize>| sort::sort_by_key(list, |i| !on_path.contains(i));
        active_first(&mut roots);
        // Depth-first without recursion (sessions can be thousands of entries deep).
        let mut order = Vec::with_capacity(entries.len());
        let mut stack: Vec<usize> = roots.into_iter().rev().collect();
        let mut seen = HashSet::new();
        while let Some(i) = stack.pop() {
            if !seen.insert(i) {
                continue;
            }
            order.push(i);
            let mut kids = children[i].clone();
            active_first(&mut kids);
            stack.extend(kids.into_iter().rev());
        }
        // By file index: its place in `order` (none for an entry no root reaches).
        let mut position: Vec<Option<usize>> = vec![None; entries.len()];
        for (pos, &i) in order.iter().enumerate() {
            position[i] = Some(pos);
        }
        let nodes: Vec<Node> = order
            .iter()
            .map(|&i| {
                let e = &entries[i];
                let (label, label_time) = match labels.get(e.id()) {
                    Some((Some(l), ts)) => (Some(l.clone()), Some(ts.clone())),
                    _ => (None, None),
                };
                let parent = e
                    .parent_id()
                    .and_then(|p| file_index.get(p))
                    .and_then(|&p| position[p]);
                Node {
                    entry: e.clone(),
                    parent,
                    label,
                    label_time,
                }
            })
            .collect();
        let by_id = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.entry.id().to_string(), i))
            .collect();
        let active = on_path.iter().filter_map(|&i| position[i]).collect();
        let leaf = leaf_id
            .and_then(|id| file_index.get(id))
            .and_then(|&i| position[i]);
        TreeModel {
            nodes,
            by_id,
            leaf,
            active,
            visible: Vec::new(),
            layout: HashMap::new(),
            visible_parent: HashMap::new(),
            visible_children: HashMap::new(),
            multiple_roots: false,
            folded: HashSet::new(),
        }
    }

    fn passes(&self, i: usize, filter: TreeFilter, tokens: &[String]) -> bool {
        let node = &self.nodes[i];
        let entry = &node.entry;
        if Some(i) != self.leaf && is_silent_assistant(entry) {
            return false;
        }
        let ok = match filter {
            TreeFilter::UserOnly => role(entry) == Some("user"),
            TreeFilter::NoTools => !is_bookkeeping(entry) && role(entry) != Some("toolResult"),
            TreeFilter::LabeledOnly => node.label.is_some(),
            TreeFilter::All => true,
            TreeFilter::Default => !is_bookkeeping(entry),
        };
        if !ok || tokens.is_empty() {
            return ok;
        }
        let text = searchable_text(entry, node.label.as_deref()).to_lowercase();
        tokens.iter().all(|t| text.contains(t.as_str()))
    }

    /// Recomputes the visible rows and their layout.
    pub fn apply(&mut self, filter: TreeFilter, search: &str) {
        let tokens: Vec<String> = search
            .to_lowercase()
            .split_whitespace()
            .map(str::to_string)
            .collect();
        let mut hidden_under_fold = HashSet::new();
        for (i, node) in self.nodes.iter().enumerate() {
            if let Some(p) = node.parent {
                if self.folded.contains(&p) || hidden_under_fold.contains(&p) {
                    hidden_under_fold.insert(i);
                }
            }
        }
        self.visible = (0..self.nodes.len())
            .filter(|i| !hidden_under_fold.contains(i) && self.passes(*i, filter, &tokens))
            .collect();
        self.relayout();
    }

    fn relayout(&mut self) {
        let shown: HashSet<usize> = self.visible.iter().copied().collect();
        self.visible_parent.clear();
        self.visible_children.clear();
        self.visible_children.insert(None, Vec::new());
        for &i in &self.visible {
            let mut up = self.nodes[i].parent;
            while let Some(p) = up {
                if shown.contains(&p) {
                    break;
                }
                up = self.nodes[p].parent;
            }
            self.visible_parent.insert(i, up);
            self.visible_children.entry(up).or_default().push(i);
        }
        let roots = self.visible_children[&None].clone();
        let multi = roots.len() > 1;
        self.multiple_roots = multi;
        self.layout.clear();
        type Frame = (usize, usize, bool, bool, bool, Vec<(usize, bool)>, bool);
        let mut stack: Vec<Frame> = Vec::new();
        for (k, &r) in roots.iter().enumerate().rev() {
            stack.push((
                r,
                usize::from(multi),
                multi,
                multi,
                k + 1 == roots.len(),
                Vec::new(),
                multi,
            ));
        }
        while let Some((
            i,
            indent,
            just_branched,
            show_connector,
            is_last,
            gutters,
            virtual_root_child,
        )) = stack.pop()
        {
            let kids = self
                .visible_children
                .get(&Some(i))
                .cloned()
                .unwrap_or_default();
            let branching = kids.len() > 1;
            let child_indent = if branching || (just_branched && indent > 0) {
                indent + 1
            } else {
                indent
            };
            let mut child_gutters = gutters.clone();
            if show_connector && !virtual_root_child {
                let display = if multi {
                    indent.saturating_sub(1)
                } else {
                    indent
                };
                child_gutters.push((display.saturating_sub(1), !is_last));
            }
            for (k, &c) in kids.iter().enumerate().rev() {
                stack.push((
                    c,
                    child_indent,
                    branching,
                    branching,
                    k + 1 == kids.len(),
                    child_gutters.clone(),
                    false,
                ));
            }
            self.layout.insert(
                i,
                RowLayout {
                    indent,
                    show_connector,
                    is_last,
                    gutters,
                    virtual_root_child,
                },
            );
        }
    }

    /// A node with visible children that starts a segment (a root or a branch of a fork).
    pub fn is_foldable(&self, i: usize) -> bool {
        if self
            .visible_children
            .get(&Some(i))
            .is_none_or(Vec::is_empty)
        {
            return false;
        }
        match self.visible_parent.get(&i).copied().flatten() {
            None => true,
            Some(p) => self
                .visible_children
                .get(&Some(p))
                .is_some_and(|s| s.len() > 1),
        }
    }

    /// The row of `node` or of its nearest visible ancestor; the last row if none.
    pub fn nearest_visible_row(&self, node: usize) -> usize {
        // By node: its row, if shown.
        let mut rows: Vec<Option<usize>> = vec![None; self.nodes.len()];
        for (r, &i) in self.visible.iter().enumerate() {
            rows[i] = Some(r);
        }
        let mut at = Some(node);
        while let Some(i) = at {
            if let Some(r) = rows[i] {
                return r;
            }
            at = self.nodes[i].parent;
        }
        self.visible.len().saturating_sub(1)
    }

    /// The row to jump to for Ctrl+←/→: the start of the enclosing branch segment going up,
    /// the next fork's first branch (or the chain's end) going down.
    pub fn segment_start(&self, row: usize, down: bool) -> usize {
        let Some(&start) = self.visible.get(row) else {
            return row;
        };
        let row_of = |i: usize| self.visible.iter().position(|v| *v == i).unwrap_or(row);
        let mut at = start;
        if down {
            loop {
                let kids = self
                    .visible_children
                    .get(&Some(at))
                    .cloned()
                    .unwrap_or_default();
                match kids.len() {
                    0 => return row_of(at),
                    1 => at = kids[0],
                    _ => return row_of(kids[0]),
                }
            }
        }
        loop {
            let Some(parent) = self.visible_parent.get(&at).copied().flatten() else {
                return row_of(at);
            };
            let siblings = self.visible_children.get(&Some(parent)).map_or(0, Vec::len);
            if siblings > 1 && row_of(at) < row {
                return row_of(at);
            }
            at = parent;
        }
    }
}
