//! Pruning: checkpoints older than the age limit go, then the oldest until the store fits its
//! size limit (the newest is always kept); then every object no remaining checkpoint refers to
//! is deleted, unless it is younger than an hour (another pi in the same workspace may be
//! writing a snapshot that uses it).

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io;
use std::time::{Duration, SystemTime};

use super::store::{Digest, Node, Store};

/// The store's limits.
#[derive(Clone, Copy, Debug)]
pub struct PruneLimits {
    pub max_bytes: u64,
    pub max_age_ms: i64,
    /// Unreferenced objects younger than this stay (another pi may be using them).
    pub grace: Duration,
}

/// Every object in the store and its size.
fn objects(store: &Store) -> HashMap<Digest, (u64, SystemTime)> {
    let mut out = HashMap::new();
    let Ok(fans) = fs::read_dir(store.root.join("objects")) else {
        return out;
    };
    for fan in fans.flatten() {
        let prefix = fan.file_name().to_string_lossy().into_owned();
        for obj in fs::read_dir(fan.path()).into_iter().flatten().flatten() {
            let name = format!("{prefix}{}", obj.file_name().to_string_lossy());
            if let (Some(d), Ok(m)) = (Digest::parse(&name), obj.metadata()) {
                out.insert(d, (m.len(), m.modified().unwrap_or(SystemTime::now())));
            }
        }
    }
    out
}

/// The objects a tree needs: itself and its blobs.
fn needs(store: &Store, tree: &Digest) -> HashSet<Digest> {
    let mut set = HashSet::from([*tree]);
    if let Ok(t) = store.load_tree(tree) {
        for node in t.values() {
            match node {
                Node::File { digest, .. } | Node::Symlink { digest } => {
                    set.insert(*digest);
                }
                _ => {}
            }
        }
    }
    set
}

/// Applies the limits; returns how many checkpoints were dropped and the bytes the store holds
/// after.
pub fn prune(store: &Store, limits: PruneLimits, now_ms: i64) -> io::Result<(usize, u64)> {
    let list = store.checkpoints();
    let all = objects(store);
    let mut keep: Vec<_> = list.clone();
    let newest = keep.len().saturating_sub(1);
    let mut i = 0;
    keep.retain(|c| {
        i += 1;
        i - 1 == newest || now_ms - c.time <= limits.max_age_ms
    });
    // Size of what the kept checkpoints need, dropping the oldest while over the limit.
    let trees: Vec<Option<Digest>> = keep.iter().map(|c| Digest::parse(&c.tree)).collect();
    let mut need_of: HashMap<Digest, HashSet<Digest>> = HashMap::new();
    for t in trees.iter().flatten() {
        need_of.entry(*t).or_insert_with(|| needs(store, t));
    }
    let size_of = |from: usize| -> u64 {
        let mut set = HashSet::new();
        for t in trees[from..].iter().flatten() {
            set.extend(need_of[t].iter().copied());
        }
        set.iter().map(|d| all.get(d).map_or(0, |(n, _)| *n)).sum()
    };
    let mut first = 0;
    while first + 1 < keep.len() && size_of(first) > limits.max_bytes {
        first += 1;
    }
    let keep = keep.split_off(first);
    let dropped = list.len() - keep.len();
    let total: u64 = all.values().map(|(n, _)| n).sum();
    if dropped == 0 {
        return Ok((0, total));
    }
    store.rewrite_log(&keep)?;
    let mut live = HashSet::new();
    for c in &keep {
        if let Some(t) = Digest::parse(&c.tree) {
            live.extend(need_of.get(&t).cloned().unwrap_or_else(|| needs(store, &t)));
        }
    }
    let young = SystemTime::now() - limits.grace;
    let mut left = total;
    for (d, (size, modified)) in &all {
        if !live.contains(d) && *modified <= young && fs::remove_file(store.object_path(d)).is_ok()
        {
            left -= size;
        }
    }
    // The stat index must not vouch for a file whose object is gone: it is read again.
    let mut index = store.load_index();
    let before = index.files.len();
    index
        .files
        .retain(|_, (_, d)| live.contains(d) || all.get(d).is_some_and(|(_, m)| *m > young));
    if index.files.len() != before {
        store.save_index(&index)?;
    }
    Ok((dropped, left))
}
