//! `searchTools()` when no ranker is given (the harness passes pi's BM25 ranker from
//! `mcp::search`): tools whose name or description contains every query word, name matches
//! first.

use std::sync::Arc;

use crate::agent::tool::Tool;

/// Ranks `tools` for `query`; returns tool names.
pub type Ranker = Arc<dyn Fn(&str, &[Arc<dyn Tool>], usize) -> Vec<String> + Send + Sync>;

pub fn rank_plain(query: &str, tools: &[Arc<dyn Tool>], limit: usize) -> Vec<String> {
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    if words.is_empty() {
        return Vec::new();
    }
    let mut scored: Vec<(usize, String)> = tools
        .iter()
        .filter_map(|t| {
            let name = t.name().to_lowercase();
            let text = format!("{name} {}", t.description().to_lowercase());
            let hits = words.iter().filter(|w| text.contains(w.as_str())).count();
            let name_hits = words.iter().filter(|w| name.contains(w.as_str())).count();
            (hits > 0).then(|| (hits * 4 + name_hits, t.name().to_string()))
        })
        .collect();
    crate::util::sort::sort_by_key(&mut scored, |s| std::cmp::Reverse(s.0));
    scored.into_iter().take(limit).map(|(_, n)| n).collect()
}
