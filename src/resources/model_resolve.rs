//! Model selection: `--model`/`--provider` resolution (pi's `resolveCliModel`, J.3 rule 1),
//! the startup default (rules 4–5) and thinking-level clamping.

use super::model_registry::{ModelEntry, ModelRegistry};
use crate::ai::catalog;
use crate::ai::types::{Model, ThinkingLevel};
use crate::util::collate::locale_compare;
use crate::util::sort;

/// A model chosen from the command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub model: Model,
    /// From a `:<level>` suffix on the pattern.
    pub thinking: Option<ThinkingLevel>,
    pub warning: Option<String>,
}

/// Ids without a `-YYYYMMDD` date suffix, or ending in `-latest`, are aliases.
fn is_alias(id: &str) -> bool {
    if id.ends_with("-latest") {
        return true;
    }
    let b = id.as_bytes();
    let dated =
        b.len() >= 9 && b[b.len() - 9] == b'-' && b[b.len() - 8..].iter().all(u8::is_ascii_digit);
    !dated
}

fn exact_reference<'a>(reference: &str, models: &[&'a ModelEntry]) -> Option<&'a ModelEntry> {
    let trimmed = reference.trim();
    if trimmed.is_empty() {
        return None;
    }
    let lower = trimmed.to_lowercase();
    let canonical: Vec<_> = models
        .iter()
        .filter(|m| format!("{}/{}", m.provider(), m.id()).to_lowercase() == lower)
        .collect();
    match canonical.len() {
        1 => return Some(canonical[0]),
        n if n > 1 => return None,
        _ => {}
    }
    if let Some((p, id)) = trimmed.split_once('/') {
        let (p, id) = (p.trim().to_lowercase(), id.trim().to_lowercase());
        if !p.is_empty() && !id.is_empty() {
            let hits: Vec<_> = models
                .iter()
                .filter(|m| m.provider().to_lowercase() == p && m.id().to_lowercase() == id)
                .collect();
            match hits.len() {
                1 => return Some(hits[0]),
                n if n > 1 => return None,
                _ => {}
            }
        }
    }
    let ids: Vec<_> = models
        .iter()
        .filter(|m| m.id().to_lowercase() == lower)
        .collect();
    (ids.len() == 1).then(|| *ids[0])
}

fn try_match<'a>(pattern: &str, models: &[&'a ModelEntry]) -> Option<&'a ModelEntry> {
    if let Some(m) = exact_reference(pattern, models) {
        return Some(m);
    }
    let lower = pattern.to_lowercase();
    let matches: Vec<&ModelEntry> = models
        .iter()
        .copied()
        .filter(|m| {
            m.id().to_lowercase().contains(&lower) || m.name().to_lowercase().contains(&lower)
        })
        .collect();
    let (mut aliases, mut dated): (Vec<_>, Vec<_>) =
        matches.into_iter().partition(|m| is_alias(m.id()));
    let pool = if aliases.is_empty() {
        &mut dated
    } else {
        &mut aliases
    };
    // Stable sort, highest first, as JavaScript's sort with `b.localeCompare(a)`.
    sort::sort_by(pool, |a, b| locale_compare(b.id(), a.id()));
    pool.first().copied()
}

type PatternMatch<'a> = (
    Option<&'a ModelEntry>,
    Option<ThinkingLevel>,
    Option<String>,
);

/// pi's `parseModelPattern` in strict (CLI) mode: an invalid `:suffix` never matches.
fn parse_pattern<'a>(pattern: &str, models: &[&'a ModelEntry]) -> PatternMatch<'a> {
    parse_pattern_with(pattern, models, true)
}

/// `parseModelPattern`; without `strict` (model scopes) an invalid `:suffix` is dropped with
/// a warning instead of failing the match.
fn parse_pattern_with<'a>(
    pattern: &str,
    models: &[&'a ModelEntry],
    strict: bool,
) -> PatternMatch<'a> {
    if let Some(m) = try_match(pattern, models) {
        return (Some(m), None, None);
    }
    let Some(colon) = pattern.rfind(':') else {
        return (None, None, None);
    };
    let (prefix, suffix) = (&pattern[..colon], &pattern[colon + 1..]);
    match ThinkingLevel::parse(suffix) {
        Some(level) => {
            let (m, _, warning) = parse_pattern_with(prefix, models, strict);
            match m {
                Some(m) => {
                    let thinking = if warning.is_some() { None } else { Some(level) };
                    (Some(m), thinking, warning)
                }
                None => (None, None, warning),
            }
        }
        None if strict => (None, None, None),
        None => match parse_pattern_with(prefix, models, strict) {
            (Some(m), _, _) => (
                Some(m),
                None,
                Some(format!(
                    "Invalid thinking level \"{suffix}\" in pattern \"{pattern}\". Using default instead."
                )),
            ),
            other => other,
        },
    }
}

/// A `provider/…` pattern with a renamed provider's old id rewritten to the current one.
fn current_provider_prefix(pattern: &str) -> String {
    match pattern.split_once('/') {
        Some((p, rest)) if catalog::current_provider_id(p) != p => {
            format!("{}/{rest}", catalog::current_provider_id(p))
        }
        _ => pattern.to_string(),
    }
}

/// A model in a `--models` scope and the thinking level its pattern named.
pub type ScopeEntry = (Model, Option<ThinkingLevel>);

impl ModelRegistry {
    /// pi's `resolveModelScope`: each pattern (a glob over `provider/id` or the bare id, or a
    /// fuzzy pattern as for `--model`, optionally with `:level`) adds its matches among the
    /// models that have credentials, without duplicates. Returns the scope and the warnings
    /// for patterns that matched nothing.
    pub fn resolve_model_scope(&self, patterns: &[String]) -> (Vec<ScopeEntry>, Vec<String>) {
        let available = self.available_entries();
        let mut scope: Vec<ScopeEntry> = Vec::new();
        let mut warnings = Vec::new();
        let add = |scope: &mut Vec<ScopeEntry>, m: &ModelEntry, level| {
            if !scope
                .iter()
                .any(|(s, _)| s.provider == m.provider() && s.id == m.id())
            {
                scope.push((m.to_model(), level));
            }
        };
        for pattern in patterns {
            let pattern = &current_provider_prefix(pattern);
            if pattern.contains(['*', '?', '[']) {
                let (glob, level) = match pattern.rsplit_once(':') {
                    Some((g, l)) if ThinkingLevel::parse(l).is_some() => {
                        (g, ThinkingLevel::parse(l))
                    }
                    _ => (pattern.as_str(), None),
                };
                let Ok(matcher) = globset::GlobBuilder::new(glob)
                    .case_insensitive(true)
                    .literal_separator(true)
                    .build()
                    .map(|g| g.compile_matcher())
                else {
                    warnings.push(format!("No models match pattern \"{pattern}\""));
                    continue;
                };
                let hits: Vec<&&ModelEntry> = available
                    .iter()
                    .filter(|m| {
                        matcher.is_match(format!("{}/{}", m.provider(), m.id()))
                            || matcher.is_match(m.id())
                    })
                    .collect();
                if hits.is_empty() {
                    warnings.push(format!("No models match pattern \"{pattern}\""));
                }
                for m in hits {
                    add(&mut scope, m, level);
                }
                continue;
            }
            let (found, level, warning) = parse_pattern_with(pattern, &available, false);
            warnings.extend(warning);
            match found {
                Some(m) => add(&mut scope, m, level),
                None => warnings.push(format!("No models match pattern \"{pattern}\"")),
            }
        }
        (scope, warnings)
    }
}

fn exact_anywhere<'a>(input: &str, models: &[&'a ModelEntry]) -> Option<&'a ModelEntry> {
    let lower = input.to_lowercase();
    models.iter().copied().find(|m| {
        m.id().to_lowercase() == lower
            || format!("{}/{}", m.provider(), m.id()).to_lowercase() == lower
    })
}

/// pi's `clampThinkingLevel`: the levels a model supports, searching upward then downward.
pub fn clamp_thinking(model: &Model, level: ThinkingLevel) -> ThinkingLevel {
    let supported = supported_thinking_levels(model);
    if supported.contains(&level) {
        return level;
    }
    let all = ThinkingLevel::ALL;
    let idx = all.iter().position(|l| *l == level).unwrap_or(0);
    if let Some(l) = all[idx..].iter().find(|l| supported.contains(l)) {
        return *l;
    }
    if let Some(l) = all[..idx].iter().rev().find(|l| supported.contains(l)) {
        return *l;
    }
    supported.first().copied().unwrap_or(ThinkingLevel::Off)
}

/// pi's `getSupportedThinkingLevels`.
pub fn supported_thinking_levels(model: &Model) -> Vec<ThinkingLevel> {
    if !model.reasoning {
        return vec![ThinkingLevel::Off];
    }
    ThinkingLevel::ALL
        .into_iter()
        .filter(|l| {
            let mapped = model
                .thinking_level_map
                .as_ref()
                .and_then(|m| m.get(l.as_str()));
            match mapped {
                Some(v) if v.is_null() => false,
                _ if l.needs_explicit_mapping() => mapped.is_some(),
                _ => true,
            }
        })
        .collect()
}

impl ModelRegistry {
    /// Resolves `--provider`/`--model` over *all* models (auth not required), exactly as pi's
    /// `resolveCliModel`. `Err` is the message pi prints (then exits 1).
    pub fn resolve_cli_model(
        &self,
        cli_provider: Option<&str>,
        cli_model: &str,
    ) -> Result<Resolved, String> {
        let all: Vec<&ModelEntry> = self.entries().iter().collect();
        if all.is_empty() {
            return Err(
                "No models available. Check your installation or add models to models.json.".into(),
            );
        }
        let canonical = |name: &str| {
            let lower = catalog::current_provider_id(name).to_lowercase();
            all.iter()
                .rev()
                .find(|m| m.provider().to_lowercase() == lower)
                .map(|m| m.provider().to_string())
        };
        let mut provider = cli_provider.and_then(canonical);
        if let (Some(p), None) = (cli_provider, &provider) {
            return Err(format!(
                "Unknown provider \"{p}\". Use --list-models to see available providers/models."
            ));
        }
        let mut pattern = cli_model.to_string();
        let mut inferred = false;
        if provider.is_none() {
            if let Some((maybe, rest)) = cli_model.split_once('/') {
                if let Some(p) = canonical(maybe) {
                    provider = Some(p);
                    pattern = rest.to_string();
                    inferred = true;
                }
            }
        }
        let done = |m: &ModelEntry, thinking, warning| {
            Ok(Resolved {
                model: m.to_model(),
                thinking,
                warning,
            })
        };
        if provider.is_none() {
            if let Some(m) = exact_anywhere(cli_model, &all) {
                return done(m, None, None);
            }
        }
        if let (Some(_), Some(p)) = (cli_provider, &provider) {
            let prefix = format!("{p}/");
            if cli_model.to_lowercase().starts_with(&prefix.to_lowercase()) {
                pattern = cli_model[prefix.len()..].to_string();
            }
        }
        let candidates: Vec<&ModelEntry> = match &provider {
            Some(p) => all.iter().copied().filter(|m| m.provider() == p).collect(),
            None => all.clone(),
        };
        let (found, thinking, warning) = parse_pattern(&pattern, &candidates);
        if let Some(m) = found {
            return done(m, thinking, warning);
        }
        if inferred {
            if let Some(m) = exact_anywhere(cli_model, &all) {
                return done(m, None, None);
            }
            if let (Some(m), t, w) = parse_pattern(cli_model, &all) {
                return done(m, t, w);
            }
        }
        if let Some(p) = &provider {
            let in_provider: Vec<&ModelEntry> =
                all.iter().copied().filter(|m| m.provider() == p).collect();
            if !in_provider.is_empty() {
                let base = catalog::default_model_id(p)
                    .and_then(|id| in_provider.iter().find(|m| m.id() == id))
                    .unwrap_or(&in_provider[0]);
                let mut model = base.to_model();
                model.id = pattern.clone();
                model.name = pattern.clone();
                let note = format!(
                    "Model \"{pattern}\" not found for provider \"{p}\". Using custom model id."
                );
                let warning = match warning {
                    Some(w) => format!("{w} {note}"),
                    None => note,
                };
                return Ok(Resolved {
                    model,
                    thinking: None,
                    warning: Some(warning),
                });
            }
        }
        let display = match &provider {
            Some(p) => format!("{p}/{pattern}"),
            None => cli_model.to_string(),
        };
        Err(format!(
            "Model \"{display}\" not found. Use --list-models to see available models."
        ))
    }

    /// The startup model when nothing more specific applies (J.3 rules 4–5): the settings
    /// default if it exists, else the first auth-configured model that is a provider's default
    /// in priority order, else the first auth-configured model.
    pub fn default_model(
        &self,
        default_provider: Option<&str>,
        default_model: Option<&str>,
    ) -> Option<Model> {
        if let (Some(p), Some(id)) = (default_provider, default_model) {
            if let Some(m) = self.find(p, id) {
                return Some(m);
            }
        }
        let available = self.available_entries();
        for (p, id) in catalog::DEFAULT_MODEL_PER_PROVIDER {
            if let Some(m) = available
                .iter()
                .find(|m| m.provider() == *p && m.id() == *id)
            {
                return Some(m.to_model());
            }
        }
        available.first().map(|m| m.to_model())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::auth::AuthStorage;
    use crate::resources::models_json::parse_models_json;
    use serde_json::{json, Map, Value};
    use std::path::Path;

    fn reg() -> ModelRegistry {
        ModelRegistry::new(AuthStorage::in_memory(Map::new()), None)
    }

    #[test]
    fn model_scope_globs_fuzzy_patterns_and_levels() {
        let mut keys = Map::new();
        for p in ["anthropic", "openai"] {
            keys.insert(p.into(), json!({"type": "api_key", "key": "k"}));
        }
        let r = ModelRegistry::new(AuthStorage::in_memory(keys), None);
        let patterns: Vec<String> = [
            "anthropic/*sonnet-4*:high",
            "*sonnet-4-5*",
            "gpt-4o:bogus",
            "google/*",
            "nothing-like-this",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let (scope, warnings) = r.resolve_model_scope(&patterns);
        assert!(scope.len() >= 2, "{scope:?}");
        assert!(
            scope.iter().all(|(m, _)| m.provider != "google"),
            "google has no key"
        );
        let sonnet: Vec<_> = scope
            .iter()
            .filter(|(m, _)| m.id.contains("sonnet-4"))
            .collect();
        assert!(!sonnet.is_empty());
        // The first pattern claimed them with its level; the second adds no duplicates.
        assert!(sonnet.iter().all(|(_, l)| *l == Some(ThinkingLevel::High)));
        let ids: Vec<_> = scope
            .iter()
            .map(|(m, _)| format!("{}/{}", m.provider, m.id))
            .collect();
        let mut dedup = ids.clone();
        dedup.dedup();
        assert_eq!(ids.len(), dedup.len());
        assert!(scope.iter().any(|(m, l)| m.id == "gpt-4o" && l.is_none()));
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("Invalid thinking level \"bogus\"")),
            "{warnings:?}"
        );
        assert!(warnings.contains(&"No models match pattern \"google/*\"".to_string()));
        assert!(warnings.contains(&"No models match pattern \"nothing-like-this\"".to_string()));
    }

    fn ok(r: &ModelRegistry, p: Option<&str>, pat: &str) -> Resolved {
        r.resolve_cli_model(p, pat).unwrap()
    }

    #[test]
    fn exact_id_and_provider_slash_id() {
        let r = reg();
        let m = ok(&r, None, "claude-opus-4-7").model;
        assert_eq!(
            (m.provider.as_str(), m.id.as_str()),
            ("anthropic", "claude-opus-4-7")
        );
        let m = ok(&r, None, "OpenAI/GPT-5.4").model;
        assert_eq!((m.provider.as_str(), m.id.as_str()), ("openai", "gpt-5.4"));
        let m = ok(&r, Some("OPENAI"), "gpt-5.4").model;
        assert_eq!(m.provider, "openai");
        let m = ok(&r, Some("openai"), "openai/gpt-5.4").model;
        assert_eq!(m.id, "gpt-5.4");
    }

    #[test]
    fn provider_prefix_beats_slashed_ids() {
        let r = reg();
        // "zai/glm-5.3" is also a vercel-ai-gateway id; the provider reading wins.
        let m = ok(&r, None, "zai/glm-5.3").model;
        assert_eq!(m.provider, "zai");
        assert_eq!(m.id, "glm-5.3");
        // A full openrouter id whose prefix looks like a provider falls back to the raw id.
        let m = ok(&r, None, "moonshotai/kimi-k2.6").model;
        assert_eq!(m.provider, "moonshotai");
        let m = ok(&r, Some("openrouter"), "moonshotai/kimi-k2.6").model;
        assert_eq!(m.id, "moonshotai/kimi-k2.6");
    }

    #[test]
    fn substring_prefers_aliases_sorted_highest() {
        let cfg = r#"{"providers": {"t": {"baseUrl": "u", "apiKey": "k", "api": "openai-completions",
            "models": [{"id": "foo-20240101"}, {"id": "foo-20250101"}, {"id": "foo-a"}, {"id": "foo-b"}, {"id": "bar-20240101"}, {"id": "bar-20250505"}]}}}"#;
        let c = parse_models_json(cfg, Path::new("m")).unwrap();
        let r = ModelRegistry::with_config(AuthStorage::in_memory(Map::new()), &c);
        assert_eq!(ok(&r, Some("t"), "foo").model.id, "foo-b");
        assert_eq!(ok(&r, Some("t"), "bar").model.id, "bar-20250505");
        assert_eq!(ok(&r, Some("t"), "bar-2024").model.id, "bar-20240101");
    }

    #[test]
    fn thinking_suffix_is_stripped() {
        let r = reg();
        let res = ok(&r, None, "anthropic/claude-opus-4-7:high");
        assert_eq!(res.model.id, "claude-opus-4-7");
        assert_eq!(res.thinking, Some(ThinkingLevel::High));
        assert_eq!(res.warning, None);
        // Invalid suffix in strict mode: the id is taken literally → custom model.
        let res = ok(&r, None, "anthropic/claude-opus-4-7:bogus");
        assert_eq!(res.model.id, "claude-opus-4-7:bogus");
        assert!(res.warning.is_some());
    }

    #[test]
    fn unknown_provider_and_unknown_model() {
        let r = reg();
        assert_eq!(
            r.resolve_cli_model(Some("nope"), "x").unwrap_err(),
            "Unknown provider \"nope\". Use --list-models to see available providers/models."
        );
        assert_eq!(
            r.resolve_cli_model(None, "definitely-not-a-model-xyz").unwrap_err(),
            "Model \"definitely-not-a-model-xyz\" not found. Use --list-models to see available models."
        );
    }

    #[test]
    fn known_provider_unknown_id_clones_default() {
        let r = reg();
        let res = ok(&r, Some("anthropic"), "claude-future-9");
        let base = catalog::find_builtin("anthropic", "claude-opus-4-7").unwrap();
        assert_eq!(res.model.id, "claude-future-9");
        assert_eq!(res.model.name, "claude-future-9");
        assert_eq!(res.model.api, base.api);
        assert_eq!(res.model.context_window, base.context_window);
        assert_eq!(
            res.warning.as_deref(),
            Some("Model \"claude-future-9\" not found for provider \"anthropic\". Using custom model id.")
        );
    }

    #[test]
    fn default_model_priority() {
        let mut auth = Map::new();
        auth.insert("zai".into(), json!({"type": "api_key", "key": "k"}));
        auth.insert("openai".into(), json!({"type": "api_key", "key": "k"}));
        let r = ModelRegistry::new(AuthStorage::in_memory(auth), None);
        let m = r.default_model(None, None).unwrap();
        assert_eq!(
            (m.provider.as_str(), m.id.as_str()),
            ("openai", "gpt-6.2-sol")
        );
        let m = r.default_model(Some("zai"), Some("glm-5.3")).unwrap();
        assert_eq!(m.provider, "zai");
        let m = r.default_model(Some("zai"), Some("missing")).unwrap();
        assert_eq!(m.provider, "openai");
    }

    #[test]
    fn clamping_follows_pi() {
        let mut m = catalog::find_builtin("openai", "gpt-5.4").unwrap();
        m.reasoning = false;
        assert_eq!(clamp_thinking(&m, ThinkingLevel::High), ThinkingLevel::Off);
        m.reasoning = true;
        m.thinking_level_map = None;
        assert_eq!(
            clamp_thinking(&m, ThinkingLevel::Xhigh),
            ThinkingLevel::High
        );
        let mut map = Map::new();
        map.insert("minimal".into(), Value::Null);
        map.insert("xhigh".into(), json!("max"));
        m.thinking_level_map = Some(map);
        assert_eq!(
            clamp_thinking(&m, ThinkingLevel::Minimal),
            ThinkingLevel::Low
        );
        assert_eq!(
            clamp_thinking(&m, ThinkingLevel::Xhigh),
            ThinkingLevel::Xhigh
        );
        // `max` needs its own mapping, like `xhigh`; without one it falls back downwards.
        assert_eq!(clamp_thinking(&m, ThinkingLevel::Max), ThinkingLevel::Xhigh);
        m.thinking_level_map
            .as_mut()
            .unwrap()
            .insert("max".into(), json!("max"));
        assert_eq!(clamp_thinking(&m, ThinkingLevel::Max), ThinkingLevel::Max);
        assert_eq!(
            supported_thinking_levels(&m).last(),
            Some(&ThinkingLevel::Max)
        );
    }

    /// pi 1.0.3 renamed `azure-openai-responses` to `azure`; the old id still works in model
    /// references, scope patterns, auth.json and models.json.
    #[test]
    fn azure_is_the_provider_id_and_the_old_one_still_reads() {
        let mut auth = Map::new();
        auth.insert(
            "azure-openai-responses".into(),
            json!({"type": "api_key", "key": "old-key"}),
        );
        let config = parse_models_json(
            r#"{"providers": {"azure-openai-responses": {"baseUrl": "https://r.openai.azure.com",
                "models": [{"id": "my-deploy", "api": "openai-completions"}]}}}"#,
            Path::new("models.json"),
        )
        .unwrap();
        let r = ModelRegistry::with_config(AuthStorage::in_memory(auth), &config);
        let m = r.resolve_cli_model(None, "azure/gpt-5.4").unwrap().model;
        assert_eq!(
            (m.provider.as_str(), m.api.as_str()),
            ("azure", "azure-openai-responses")
        );
        let m = r
            .resolve_cli_model(None, "azure-openai-responses/gpt-5.4")
            .unwrap()
            .model;
        assert_eq!(m.provider, "azure");
        let m = r
            .resolve_cli_model(Some("azure-openai-responses"), "my-deploy")
            .unwrap()
            .model;
        assert_eq!(
            (m.provider.as_str(), m.base_url.as_str()),
            ("azure", "https://r.openai.azure.com")
        );
        assert_eq!(
            r.find("azure-openai-responses", "gpt-5.4")
                .unwrap()
                .provider,
            "azure"
        );
        assert_eq!(r.api_key_for("azure").as_deref(), Some("old-key"));
        let (scope, warnings) = r.resolve_model_scope(&["azure-openai-responses/gpt-5.4*".into()]);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert!(scope.iter().all(|(m, _)| m.provider == "azure") && !scope.is_empty());
        assert_eq!(
            r.default_model(Some("azure-openai-responses"), Some("gpt-5.4"))
                .unwrap()
                .provider,
            "azure"
        );
    }

    #[test]
    fn alias_helper() {
        assert!(is_alias("claude-sonnet-4-5"));
        assert!(!is_alias("claude-sonnet-4-5-20250929"));
        assert!(is_alias("mistral-large-latest"));
    }
}
