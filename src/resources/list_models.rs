//! `pi --list-models [search]`: a padded table of auth-configured models, filtered fuzzily on
//! `"<provider> <id>"`, sorted by provider then id.

use super::model_registry::{ModelEntry, ModelRegistry};
use super::model_resolve::locale_compare;
use crate::util::sort;

/// pi's token counts: `200K`, `1M`, `8.2K`, `1.1M`, or the plain number below 1000.
pub fn format_token_count(count: u64) -> String {
    let trim = |v: f64, unit: &str| {
        if v.fract() == 0.0 {
            format!("{v}{unit}")
        } else {
            format!("{v:.1}{unit}")
        }
    };
    if count >= 1_000_000 {
        trim(count as f64 / 1e6, "M")
    } else if count >= 1_000 {
        trim(count as f64 / 1e3, "K")
    } else {
        count.to_string()
    }
}

/// The stderr warning `--list-models` prints when models.json failed to load.
pub fn list_models_warning(registry: &ModelRegistry) -> Option<String> {
    registry
        .load_error()
        .map(|e| format!("Warning: errors loading models.json:\n{e}"))
}

/// pi's "no models" text.
pub fn no_models_message() -> String {
    "No models available. Set a provider key (for example ANTHROPIC_API_KEY, OPENAI_API_KEY or \
     GEMINI_API_KEY), add one to ~/.pi/agent/auth.json, or define a provider in \
     ~/.pi/agent/models.json."
        .to_string()
}

fn fuzzy_token_matches(token: &str, text: &str) -> bool {
    let is_subsequence = |q: &str| {
        let mut it = text.chars();
        q.chars().all(|c| it.any(|t| t == c))
    };
    if is_subsequence(token) {
        return true;
    }
    // pi also tries letters+digits swapped ("4gpt" for "gpt4" and back).
    let split =
        token.find(|c: char| c.is_ascii_digit() != token.starts_with(|d: char| d.is_ascii_digit()));
    if let Some(i) = split {
        let (a, b) = token.split_at(i);
        let all_letters = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_lowercase());
        let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
        if (all_letters(a) && all_digits(b)) || (all_digits(a) && all_letters(b)) {
            return is_subsequence(&format!("{b}{a}"));
        }
    }
    false
}

/// Whether `query` (space-separated tokens, case-insensitive) fuzzily matches `text`.
pub fn fuzzy_matches(query: &str, text: &str) -> bool {
    let text = text.to_lowercase();
    query
        .split_whitespace()
        .all(|t| fuzzy_token_matches(&t.to_lowercase(), &text))
}

/// The stdout text of `--list-models` (each line newline-terminated).
pub fn list_models_table(registry: &ModelRegistry, search: Option<&str>) -> String {
    let models = registry.available_entries();
    if models.is_empty() {
        return format!("{}\n", no_models_message());
    }
    let mut rows: Vec<&ModelEntry> = match search.filter(|s| !s.trim().is_empty()) {
        Some(q) => models
            .into_iter()
            .filter(|m| fuzzy_matches(q, &format!("{} {}", m.provider(), m.id())))
            .collect(),
        None => models,
    };
    if rows.is_empty() {
        return format!("No models matching \"{}\"\n", search.unwrap_or_default());
    }
    sort::sort_by(&mut rows, |a, b| {
        locale_compare(a.provider(), b.provider()).then_with(|| locale_compare(a.id(), b.id()))
    });
    let rows = rows
        .into_iter()
        .map(|m| {
            [
                m.provider().to_string(),
                m.id().to_string(),
                format_token_count(m.context_window()),
                format_token_count(m.max_tokens()),
                yes_no(m.reasoning()),
                yes_no(m.supports_images()),
            ]
        })
        .collect();
    render_table(rows)
}

fn yes_no(b: bool) -> String {
    if b { "yes" } else { "no" }.to_string()
}

/// `--list-models` with no key: the models local servers answered with (`pi -p` would use the
/// first), marked as local with where they were found.
pub fn local_models_table(models: &[crate::ai::Model], search: Option<&str>) -> String {
    let rows: Vec<&crate::ai::Model> = models
        .iter()
        .filter(|m| {
            search
                .filter(|s| !s.trim().is_empty())
                .is_none_or(|q| fuzzy_matches(q, &format!("{} {}", m.provider, m.id)))
        })
        .collect();
    if rows.is_empty() {
        return format!("No models matching \"{}\"\n", search.unwrap_or_default());
    }
    let mut servers: Vec<&str> = rows.iter().map(|m| m.base_url.as_str()).collect();
    servers.dedup();
    let rows = rows
        .iter()
        .map(|m| {
            [
                format!("{} (local)", m.provider),
                m.id.clone(),
                format_token_count(m.context_window),
                format_token_count(m.max_tokens),
                yes_no(m.reasoning),
                yes_no(m.supports_images()),
            ]
        })
        .collect();
    let mut out = render_table(rows);
    out.push_str(&format!(
        "\nNo API key configured: these models were found on local servers ({}) and need no key.\n",
        servers.join(", ")
    ));
    out
}

fn render_table(rows: Vec<[String; 6]>) -> String {
    let header = [
        "provider", "model", "context", "max-out", "thinking", "images",
    ]
    .map(String::from);
    let mut table = vec![header];
    table.extend(rows);
    let mut widths = [0usize; 6];
    for row in &table {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.encode_utf16().count());
        }
    }
    let mut out = String::new();
    for row in &table {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c}{}", " ".repeat(w - c.encode_utf16().count())))
            .collect();
        out.push_str(&cells.join("  "));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::auth::AuthStorage;
    use crate::resources::models_json::parse_models_json;
    use serde_json::Map;
    use std::path::Path;

    #[test]
    fn token_counts() {
        assert_eq!(format_token_count(200_000), "200K");
        assert_eq!(format_token_count(1_000_000), "1M");
        assert_eq!(format_token_count(8_192), "8.2K");
        assert_eq!(format_token_count(1_050_000), "1.1M");
        assert_eq!(format_token_count(128_000), "128K");
        assert_eq!(format_token_count(999), "999");
    }

    fn registry() -> ModelRegistry {
        let cfg = r#"{"providers": {
            "zlocal": {"baseUrl": "u", "apiKey": "k", "api": "openai-completions",
                "models": [{"id": "b-model", "reasoning": true, "input": ["text", "image"], "maxTokens": 8192},
                           {"id": "a-model", "contextWindow": 1000000}]},
            "alocal": {"baseUrl": "u", "apiKey": "k", "api": "openai-completions",
                "models": [{"id": "x", "contextWindow": 999, "maxTokens": 100}]}}}"#;
        let c = parse_models_json(cfg, Path::new("m")).unwrap();
        ModelRegistry::with_config(AuthStorage::in_memory(Map::new()), &c)
    }

    #[test]
    fn table_layout_sorting_and_filter() {
        let r = registry();
        let all = list_models_table(&r, None);
        let lines: Vec<&str> = all.lines().collect();
        // Built-in providers may also have env auth on this machine; look at ours only.
        assert_eq!(
            lines[0].split_whitespace().collect::<Vec<_>>(),
            ["provider", "model", "context", "max-out", "thinking", "images"]
        );
        let filtered = list_models_table(&r, Some("zlocal"));
        assert_eq!(
            filtered,
            "provider  model    context  max-out  thinking  images\n\
             zlocal    a-model  1M       16.4K    no        no    \n\
             zlocal    b-model  128K     8.2K     yes       yes   \n"
        );
        let one = list_models_table(&r, Some("alocal x"));
        assert_eq!(
            one,
            "provider  model  context  max-out  thinking  images\n\
             alocal    x      999      100      no        no    \n"
        );
        assert_eq!(
            list_models_table(&r, Some("qqqqqq")),
            "No models matching \"qqqqqq\"\n"
        );
    }

    #[test]
    fn empty_registry_message() {
        let r = ModelRegistry::with_config(AuthStorage::in_memory(Map::new()), &Default::default());
        // Only meaningful when no provider env keys are set in the test environment.
        if r.available_entries().is_empty() {
            assert!(
                list_models_table(&r, None).starts_with("No models available. Set a provider key")
            );
        }
    }

    #[test]
    fn fuzzy_matching() {
        assert!(fuzzy_matches("opus", "anthropic claude-opus-4-7"));
        assert!(fuzzy_matches("anth opus", "anthropic claude-opus-4-7"));
        assert!(fuzzy_matches("ant c47", "anthropic claude-opus-4-7"));
        assert!(!fuzzy_matches("gemini", "anthropic claude-opus-4-7"));
        assert!(fuzzy_matches("5gpt", "openai gpt-5"));
    }
}
