//! `store()`/`load()` across `codemode` calls. The session owns the values (`codemode-store`
//! custom entries on the current branch, applied from the root); the harness hands the branch's
//! values in before each run, and takes each successful script's writes out to append them as
//! one entry, so every branch sees only the values written on its path.

use std::sync::{Arc, Mutex};

use serde_json::{json, Map, Value};

/// The custom entry type holding one script's writes: `{ set: {key: value}, delete: [key] }`.
pub const STORE_ENTRY_TYPE: &str = "codemode-store";

#[derive(Default)]
struct State {
    values: Map<String, Value>,
    /// Writes of scripts that succeeded, not yet appended to the session.
    pending: Vec<Value>,
}

/// Shared between the tool and the session that keeps its values.
#[derive(Clone, Default)]
pub struct StoreLink(Arc<Mutex<State>>);

impl std::fmt::Debug for StoreLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StoreLink")
    }
}

impl StoreLink {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The values of the current branch (the session calls this before each run).
    pub fn set_values(&self, values: Map<String, Value>) {
        self.state().values = values;
    }

    pub fn values(&self) -> Map<String, Value> {
        self.state().values.clone()
    }

    /// A successful script's writes (`None` deletes): applied at once, so the next script in
    /// the same run sees them, and queued for the session.
    pub fn record(&self, writes: &[(String, Option<String>)]) {
        if writes.is_empty() {
            return;
        }
        let mut set = Map::new();
        let mut delete = Vec::new();
        for (key, json) in writes {
            match json
                .as_deref()
                .and_then(|j| serde_json::from_str::<Value>(j).ok())
            {
                Some(v) => {
                    delete.retain(|k: &String| k != key);
                    set.insert(key.clone(), v);
                }
                None => {
                    set.remove(key);
                    if !delete.contains(key) {
                        delete.push(key.clone());
                    }
                }
            }
        }
        let mut state = self.state();
        for key in &delete {
            state.values.remove(key);
        }
        for (k, v) in &set {
            state.values.insert(k.clone(), v.clone());
        }
        state.pending.push(json!({"set": set, "delete": delete}));
    }

    /// The entries' data to append, oldest first.
    pub fn take_pending(&self) -> Vec<Value> {
        std::mem::take(&mut self.state().pending)
    }
}

/// The store a branch sees: its `codemode-store` entries' data, applied in order (deletes,
/// then sets, per entry). Malformed entries are skipped.
pub fn read_store<'a>(entries: impl IntoIterator<Item = &'a Value>) -> Map<String, Value> {
    let mut values = Map::new();
    for data in entries {
        let (Some(set), Some(delete)) = (
            data.get("set").and_then(Value::as_object),
            data.get("delete").and_then(Value::as_array),
        ) else {
            continue;
        };
        if !delete.iter().all(Value::is_string) {
            continue;
        }
        for key in delete.iter().filter_map(Value::as_str) {
            values.remove(key);
        }
        for (k, v) in set {
            values.insert(k.clone(), v.clone());
        }
    }
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_apply_in_order_and_writes_queue_once() {
        let a = json!({"set": {"x": 1, "y": 2}, "delete": []});
        let b = json!({"set": {"z": 3}, "delete": ["x"]});
        let bad = json!({"set": {"q": 1}});
        let v = read_store([&a, &bad, &b]);
        assert_eq!(Value::Object(v), json!({"y": 2, "z": 3}));
        let link = StoreLink::default();
        link.record(&[("k".into(), Some("[1]".into())), ("y".into(), None)]);
        assert_eq!(
            link.take_pending(),
            vec![json!({"set": {"k": [1]}, "delete": ["y"]})]
        );
        assert!(link.take_pending().is_empty());
    }
}
