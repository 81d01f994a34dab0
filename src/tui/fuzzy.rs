//! Fuzzy matching for autocomplete and pickers, scored like pi: query characters must
//! appear in order (case-insensitively); consecutive runs and word-boundary hits score
//! better, gaps and late matches worse. Lower scores are better.

use crate::util::sort;

/// Result of matching one query against one text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FuzzyMatch {
    pub matches: bool,
    pub score: f64,
}

fn match_query(query: &[char], text: &[char]) -> Option<f64> {
    if query.is_empty() {
        return Some(0.0);
    }
    if query.len() > text.len() {
        return None;
    }
    let mut qi = 0;
    let mut score = 0.0;
    let mut last: Option<usize> = None;
    let mut run = 0.0;
    for (i, &c) in text.iter().enumerate() {
        if qi == query.len() {
            break;
        }
        if c != query[qi] {
            continue;
        }
        let boundary = i == 0 || matches!(text[i - 1], ' ' | '\t' | '-' | '_' | '.' | '/' | ':');
        match last {
            Some(l) if l + 1 == i => {
                run += 1.0;
                score -= run * 5.0;
            }
            Some(l) => {
                run = 0.0;
                score += (i - l - 1) as f64 * 2.0;
            }
            None => run = 0.0,
        }
        if boundary {
            score -= 10.0;
        }
        score += i as f64 * 0.1;
        last = Some(i);
        qi += 1;
    }
    if qi < query.len() {
        return None;
    }
    if query == text {
        score -= 100.0;
    }
    Some(score)
}

/// Matches `query` against `text`. A query like `abc12` also matches as `12abc` (a small
/// penalty applies), so model names match whichever order the user types.
pub fn fuzzy_match(query: &str, text: &str) -> FuzzyMatch {
    let q: Vec<char> = query.to_lowercase().chars().collect();
    let t: Vec<char> = text.to_lowercase().chars().collect();
    if let Some(score) = match_query(&q, &t) {
        return FuzzyMatch {
            matches: true,
            score,
        };
    }
    let no_match = FuzzyMatch {
        matches: false,
        score: 0.0,
    };
    let split = q
        .iter()
        .position(|c| !c.is_ascii_alphabetic())
        .unwrap_or(q.len());
    let (a, b) = q.split_at(split);
    let letters_digits = !a.is_empty()
        && !b.is_empty()
        && a.iter().all(char::is_ascii_lowercase)
        && b.iter().all(char::is_ascii_digit);
    let split = q
        .iter()
        .position(|c| !c.is_ascii_digit())
        .unwrap_or(q.len());
    let (c, d) = q.split_at(split);
    let digits_letters = !c.is_empty()
        && !d.is_empty()
        && c.iter().all(char::is_ascii_digit)
        && d.iter().all(char::is_ascii_lowercase);
    let swapped: Vec<char> = if letters_digits {
        b.iter().chain(a).copied().collect()
    } else if digits_letters {
        d.iter().chain(c).copied().collect()
    } else {
        return no_match;
    };
    match match_query(&swapped, &t) {
        Some(score) => FuzzyMatch {
            matches: true,
            score: score + 5.0,
        },
        None => no_match,
    }
}

/// Keeps the items whose text matches every whitespace-separated token of `query`, best
/// first (stable for equal scores). An empty query keeps everything in order.
pub fn fuzzy_filter<T>(items: Vec<T>, query: &str, text: impl Fn(&T) -> &str) -> Vec<T> {
    let tokens: Vec<&str> = query.split_whitespace().collect();
    if tokens.is_empty() {
        return items;
    }
    let mut scored: Vec<(f64, T)> = items
        .into_iter()
        .filter_map(|item| {
            let mut total = 0.0;
            for token in &tokens {
                let m = fuzzy_match(token, text(&item));
                if !m.matches {
                    return None;
                }
                total += m.score;
            }
            Some((total, item))
        })
        .collect();
    sort::sort_by(&mut scored, |a, b| a.0.total_cmp(&b.0));
    scored.into_iter().map(|(_, item)| item).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_in_order_and_prefers_tight_matches() {
        assert!(fuzzy_match("mdl", "model").matches);
        assert!(!fuzzy_match("ldm", "model").matches);
        assert!(fuzzy_match("", "x").matches);
        assert!(fuzzy_match("MoD", "model").matches);
        assert!(fuzzy_match("gpt4", "4gpt").matches);
        let exact = fuzzy_match("model", "model").score;
        let prefix = fuzzy_match("mod", "model").score;
        let scattered = fuzzy_match("mdl", "model").score;
        assert!(exact < prefix && prefix < scattered);
        let items = vec!["settings", "session", "resume", "share"];
        assert_eq!(
            fuzzy_filter(items.clone(), "se", |s| s),
            ["settings", "session", "share", "resume"]
        );
        assert_eq!(fuzzy_filter(items.clone(), "", |s| s), items);
        assert_eq!(fuzzy_filter(items, "s re", |s| s), ["resume", "share"]);
    }
}
