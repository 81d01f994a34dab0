//! `models.json`: custom providers and models and overrides of built-in ones, read as JSONC and
//! validated with pi's rules and error wording. Applying the result is the registry's job.

use super::jsonc::parse_jsonc;
use crate::ai::catalog;
use serde_json::{Map, Value};
use std::path::Path;

/// Header name → raw (unresolved) value, in file order.
pub type Headers = Vec<(String, String)>;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelsConfig {
    pub providers: Vec<(String, ProviderConfig)>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProviderConfig {
    pub name: Option<String>,
    pub base_url: Option<String>,
    pub api_key: Option<String>,
    pub api: Option<String>,
    pub headers: Option<Headers>,
    pub compat: Option<Map<String, Value>>,
    pub auth_header: bool,
    pub models: Vec<ModelDef>,
    pub model_overrides: Vec<(String, ModelOverride)>,
}

/// A custom model; unset fields take pi's defaults when the registry builds the model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelDef {
    pub id: String,
    pub name: Option<String>,
    pub api: Option<String>,
    pub base_url: Option<String>,
    pub reasoning: Option<bool>,
    pub thinking_level_map: Option<Map<String, Value>>,
    pub input: Option<Vec<String>>,
    /// input, output, cacheRead, cacheWrite (all required when `cost` is given).
    pub cost: Option<[f64; 4]>,
    pub context_window: Option<u64>,
    pub max_tokens: Option<u64>,
    pub headers: Option<Headers>,
    pub compat: Option<Map<String, Value>>,
}

/// Per-model override of a built-in model; every field optional, cost merged per field.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelOverride {
    pub name: Option<String>,
    pub reasoning: Option<bool>,
    pub thinking_level_map: Option<Map<String, Value>>,
    pub input: Option<Vec<String>>,
    pub cost: Option<[Option<f64>; 4]>,
    pub context_window: Option<u64>,
    pub max_tokens: Option<u64>,
    pub headers: Option<Headers>,
    pub compat: Option<Map<String, Value>>,
}

/// Reads `path`. `Ok(None)` when the file does not exist; `Err` is the one message pi shows
/// (naming the file, and for syntax errors the line and column).
pub fn load_models_json(path: &Path) -> Result<Option<ModelsConfig>, String> {
    let text =
        match crate::util::files::read_limited_string(path, crate::util::files::Limit::CONFIG) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(format!(
                    "Failed to load models.json: {e}\n\nFile: {}",
                    path.display()
                ))
            }
        };
    parse_models_json(&text, path).map(Some)
}

/// Parses and validates models.json text; `path` is only used in messages.
pub fn parse_models_json(text: &str, path: &Path) -> Result<ModelsConfig, String> {
    let value = parse_jsonc(text).map_err(|e| {
        format!(
            "Failed to parse models.json: {e}\n\nFile: {}",
            path.display()
        )
    })?;
    let mut errors = Vec::new();
    let config = read_config(&value, &mut errors);
    if !errors.is_empty() {
        let list: Vec<String> = errors
            .iter()
            .map(|(p, m)| format!("  - {p}: {m}"))
            .collect();
        return Err(format!(
            "Invalid models.json schema:\n{}\n\nFile: {}",
            list.join("\n"),
            path.display()
        ));
    }
    validate(&config).map_err(|e| {
        format!(
            "Failed to load models.json: {e}\n\nFile: {}",
            path.display()
        )
    })?;
    Ok(config)
}

/// Providers an extension registered (`pi.registerProvider(name, config)`: the shape of a
/// models.json provider) as a config, schema-checked but without models.json's extra rules (an
/// extension's provider may take its key from `/login` instead of `apiKey`).
pub fn parse_extension_providers(providers: &[(String, Value)]) -> Result<ModelsConfig, String> {
    let mut map = Map::new();
    for (name, config) in providers {
        map.insert(name.clone(), config.clone());
    }
    let mut errors = Vec::new();
    let config = read_config(&serde_json::json!({ "providers": map }), &mut errors);
    match errors.first() {
        Some((p, m)) => Err(format!("{p}: {m}")),
        None => Ok(config),
    }
}

type Errors = Vec<(String, String)>;

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn type_name(expected: &str) -> String {
    format!("must be {expected}")
}

fn opt_string(
    obj: &Map<String, Value>,
    key: &str,
    path: &str,
    errs: &mut Errors,
) -> Option<String> {
    match obj.get(key)? {
        Value::String(s) if s.is_empty() => {
            errs.push((
                join(path, key),
                "must not have fewer than 1 characters".into(),
            ));
            None
        }
        Value::String(s) => Some(s.clone()),
        _ => {
            errs.push((join(path, key), type_name("string")));
            None
        }
    }
}

fn opt_bool(obj: &Map<String, Value>, key: &str, path: &str, errs: &mut Errors) -> Option<bool> {
    match obj.get(key)? {
        Value::Bool(b) => Some(*b),
        _ => {
            errs.push((join(path, key), type_name("boolean")));
            None
        }
    }
}

fn opt_number(obj: &Map<String, Value>, key: &str, path: &str, errs: &mut Errors) -> Option<f64> {
    match obj.get(key)? {
        Value::Number(n) => n.as_f64(),
        _ => {
            errs.push((join(path, key), type_name("number")));
            None
        }
    }
}

/// Token counts: numbers, kept as given when positive (validated later), 0 when not.
fn opt_count(obj: &Map<String, Value>, key: &str, path: &str, errs: &mut Errors) -> Option<u64> {
    opt_number(obj, key, path, errs).map(|n| if n > 0.0 { n as u64 } else { 0 })
}

fn opt_object<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
    path: &str,
    errs: &mut Errors,
) -> Option<&'a Map<String, Value>> {
    match obj.get(key)? {
        Value::Object(m) => Some(m),
        _ => {
            errs.push((join(path, key), type_name("object")));
            None
        }
    }
}

fn opt_headers(
    obj: &Map<String, Value>,
    key: &str,
    path: &str,
    errs: &mut Errors,
) -> Option<Headers> {
    let m = opt_object(obj, key, path, errs)?;
    let p = join(path, key);
    let mut out = Vec::new();
    for (k, v) in m {
        match v.as_str() {
            Some(s) => out.push((k.clone(), s.to_string())),
            None => errs.push((join(&p, k), type_name("string"))),
        }
    }
    Some(out)
}

fn opt_compat(
    obj: &Map<String, Value>,
    path: &str,
    errs: &mut Errors,
) -> Option<Map<String, Value>> {
    match obj.get("compat")? {
        Value::Object(m) => {
            if m.get("supportsLongCacheRetention")
                .is_some_and(|v| !v.is_boolean())
            {
                errs.push((join(path, "compat"), "must match a schema in anyOf".into()));
            }
            Some(m.clone())
        }
        _ => {
            errs.push((join(path, "compat"), "must match a schema in anyOf".into()));
            None
        }
    }
}

fn opt_thinking_map(
    obj: &Map<String, Value>,
    path: &str,
    errs: &mut Errors,
) -> Option<Map<String, Value>> {
    let m = opt_object(obj, "thinkingLevelMap", path, errs)?;
    let p = join(path, "thinkingLevelMap");
    for (k, v) in m {
        let known = matches!(
            k.as_str(),
            "off" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max"
        );
        if known && !(v.is_string() || v.is_null()) {
            errs.push((join(&p, k), "must match a schema in anyOf".into()));
        }
    }
    Some(m.clone())
}

fn opt_input(obj: &Map<String, Value>, path: &str, errs: &mut Errors) -> Option<Vec<String>> {
    let v = obj.get("input")?;
    let Some(items) = v.as_array() else {
        errs.push((join(path, "input"), type_name("array")));
        return None;
    };
    let p = join(path, "input");
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item.as_str() {
            Some(s @ ("text" | "image")) => out.push(s.to_string()),
            _ => errs.push((format!("{p}.{i}"), "must match a schema in anyOf".into())),
        }
    }
    Some(out)
}

fn read_cost(
    obj: &Map<String, Value>,
    path: &str,
    required: bool,
    errs: &mut Errors,
) -> Option<[Option<f64>; 4]> {
    let m = opt_object(obj, "cost", path, errs)?;
    let p = join(path, "cost");
    let mut out = [None; 4];
    for (i, key) in ["input", "output", "cacheRead", "cacheWrite"]
        .iter()
        .enumerate()
    {
        out[i] = opt_number(m, key, &p, errs);
        if required && !m.contains_key(*key) {
            errs.push((
                join(&p, key),
                format!("must have required properties {key}"),
            ));
        }
    }
    Some(out)
}

fn read_config(value: &Value, errs: &mut Errors) -> ModelsConfig {
    let mut config = ModelsConfig::default();
    let Some(root) = value.as_object() else {
        errs.push(("root".into(), type_name("object")));
        return config;
    };
    let Some(providers) = root.get("providers") else {
        errs.push((
            "providers".into(),
            "must have required properties providers".into(),
        ));
        return config;
    };
    let Some(providers) = providers.as_object() else {
        errs.push(("providers".into(), type_name("object")));
        return config;
    };
    for (name, pv) in providers {
        let path = format!("providers.{name}");
        let Some(p) = pv.as_object() else {
            errs.push((path, type_name("object")));
            continue;
        };
        let mut pc = ProviderConfig {
            name: opt_string(p, "name", &path, errs),
            base_url: opt_string(p, "baseUrl", &path, errs),
            api_key: opt_string(p, "apiKey", &path, errs),
            api: opt_string(p, "api", &path, errs),
            headers: opt_headers(p, "headers", &path, errs),
            compat: opt_compat(p, &path, errs),
            auth_header: opt_bool(p, "authHeader", &path, errs).unwrap_or(false),
            ..Default::default()
        };
        if let Some(models) = p.get("models") {
            match models.as_array() {
                None => errs.push((join(&path, "models"), type_name("array"))),
                Some(list) => {
                    for (i, mv) in list.iter().enumerate() {
                        let mp = format!("{path}.models.{i}");
                        let Some(m) = mv.as_object() else {
                            errs.push((mp, type_name("object")));
                            continue;
                        };
                        let id = match m.get("id") {
                            None => {
                                errs.push((
                                    join(&mp, "id"),
                                    "must have required properties id".into(),
                                ));
                                String::new()
                            }
                            Some(_) => opt_string(m, "id", &mp, errs).unwrap_or_default(),
                        };
                        let cost =
                            read_cost(m, &mp, true, errs).map(|c| c.map(|x| x.unwrap_or(0.0)));
                        pc.models.push(ModelDef {
                            id,
                            name: opt_string(m, "name", &mp, errs),
                            api: opt_string(m, "api", &mp, errs),
                            base_url: opt_string(m, "baseUrl", &mp, errs),
                            reasoning: opt_bool(m, "reasoning", &mp, errs),
                            thinking_level_map: opt_thinking_map(m, &mp, errs),
                            input: opt_input(m, &mp, errs),
                            cost,
                            context_window: opt_count(m, "contextWindow", &mp, errs),
                            max_tokens: opt_count(m, "maxTokens", &mp, errs),
                            headers: opt_headers(m, "headers", &mp, errs),
                            compat: opt_compat(m, &mp, errs),
                        });
                    }
                }
            }
        }
        if let Some(overrides) = opt_object(p, "modelOverrides", &path, errs) {
            for (id, ov) in overrides {
                let op = format!("{path}.modelOverrides.{id}");
                let Some(o) = ov.as_object() else {
                    errs.push((op, type_name("object")));
                    continue;
                };
                pc.model_overrides.push((
                    id.clone(),
                    ModelOverride {
                        name: opt_string(o, "name", &op, errs),
                        reasoning: opt_bool(o, "reasoning", &op, errs),
                        thinking_level_map: opt_thinking_map(o, &op, errs),
                        input: opt_input(o, &op, errs),
                        cost: read_cost(o, &op, false, errs),
                        context_window: opt_count(o, "contextWindow", &op, errs),
                        max_tokens: opt_count(o, "maxTokens", &op, errs),
                        headers: opt_headers(o, "headers", &op, errs),
                        compat: opt_compat(o, &op, errs),
                    },
                ));
            }
        }
        // A provider pi renamed is read under its old key too (`azure-openai-responses`).
        let name = crate::ai::catalog::current_provider_id(name).to_string();
        config.providers.push((name, pc));
    }
    config
}

/// pi's additional checks after the schema (first failure wins).
fn validate(config: &ModelsConfig) -> Result<(), String> {
    for (name, p) in &config.providers {
        let builtin = catalog::is_builtin_provider(name);
        if p.models.is_empty() {
            if p.base_url.is_none()
                && p.headers.is_none()
                && p.compat.is_none()
                && p.model_overrides.is_empty()
            {
                return Err(format!(
                    "Provider {name}: must specify \"baseUrl\", \"headers\", \"compat\", \"modelOverrides\", or \"models\"."
                ));
            }
        } else if !builtin && p.base_url.is_none() {
            // No `apiKey` needed, as in pi 1.x: auth.json or the environment may hold it.
            return Err(format!(
                "Provider {name}: \"baseUrl\" is required when defining custom models."
            ));
        }
        for m in &p.models {
            if p.api.is_none() && m.api.is_none() && !builtin {
                return Err(format!(
                    "Provider {name}, model {}: no \"api\" specified. Set at provider or model level.",
                    m.id
                ));
            }
            if m.id.is_empty() {
                return Err(format!("Provider {name}: model missing \"id\""));
            }
            if m.context_window == Some(0) {
                return Err(format!(
                    "Provider {name}, model {}: invalid contextWindow",
                    m.id
                ));
            }
            if m.max_tokens == Some(0) {
                return Err(format!(
                    "Provider {name}, model {}: invalid maxTokens",
                    m.id
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ModelsConfig, String> {
        parse_models_json(text, Path::new("/home/u/.pi/agent/models.json"))
    }

    #[test]
    fn parses_custom_provider_with_comments() {
        let cfg = parse(
            r#"{
  // local ollama
  "providers": {
    "ollama": {
      "baseUrl": "http://localhost:11434/v1",
      "api": "openai-completions",
      "apiKey": "ollama",
      "headers": {"X-A": "1"},
      "authHeader": true,
      "models": [{"id": "llama3.1:8b", "contextWindow": 8192,},],
    },
  },
}"#,
        )
        .unwrap();
        let (name, p) = &cfg.providers[0];
        assert_eq!(name, "ollama");
        assert!(p.auth_header);
        assert_eq!(p.headers.as_ref().unwrap()[0], ("X-A".into(), "1".into()));
        assert_eq!(p.models[0].id, "llama3.1:8b");
        assert_eq!(p.models[0].context_window, Some(8192));
        assert_eq!(p.models[0].max_tokens, None);
    }

    #[test]
    fn syntax_error_names_file_line_and_column() {
        let err = parse("{\n  \"providers\": {\n    \"a\": {} \"b\"\n  }\n}").unwrap_err();
        assert_eq!(
            err,
            "Failed to parse models.json: expected `,` or `}` at line 3 column 13\n\nFile: /home/u/.pi/agent/models.json"
        );
    }

    #[test]
    fn line_numbers_survive_block_comments() {
        let err = parse("/* one\ntwo\nthree */ {\"providers\": ]").unwrap_err();
        assert!(err.contains("at line 3 column 24"), "{err}");
    }

    #[test]
    fn schema_errors_list_paths() {
        let err = parse(r#"{"providers": {"x": {"baseUrl": 5, "models": [{"name": "n"}]}}}"#)
            .unwrap_err();
        assert!(err.starts_with("Invalid models.json schema:\n"), "{err}");
        assert!(
            err.contains("  - providers.x.baseUrl: must be string"),
            "{err}"
        );
        assert!(err.contains("  - providers.x.models.0.id: must have required properties id"));
        assert!(err.ends_with("\n\nFile: /home/u/.pi/agent/models.json"));
        let err = parse(r#"{"provider": {}}"#).unwrap_err();
        assert!(err.contains("  - providers: must have required properties providers"));
    }

    #[test]
    fn validation_errors_are_worded_like_pi() {
        let err = parse(r#"{"providers": {"anthropic": {}}}"#).unwrap_err();
        assert_eq!(
            err,
            "Failed to load models.json: Provider anthropic: must specify \"baseUrl\", \"headers\", \"compat\", \"modelOverrides\", or \"models\".\n\nFile: /home/u/.pi/agent/models.json"
        );
        let err = parse(r#"{"providers": {"mine": {"models": [{"id": "m"}]}}}"#).unwrap_err();
        assert!(err.contains("Provider mine: \"baseUrl\" is required when defining custom models."));
        // As in pi 1.x, the key may come from auth.json or the environment instead.
        let err = parse(r#"{"providers": {"mine": {"baseUrl": "u", "models": [{"id": "m"}]}}}"#)
            .unwrap_err();
        assert!(err.contains("Provider mine, model m: no \"api\" specified."));
        let err = parse(
            r#"{"providers": {"mine": {"baseUrl": "u", "apiKey": "k", "models": [{"id": "m"}]}}}"#,
        )
        .unwrap_err();
        assert!(err.contains(
            "Provider mine, model m: no \"api\" specified. Set at provider or model level."
        ));
        let err = parse(r#"{"providers": {"openai": {"models": [{"id": "m", "maxTokens": 0}]}}}"#)
            .unwrap_err();
        assert!(err.contains("Provider openai, model m: invalid maxTokens"));
    }

    #[test]
    fn missing_file_is_not_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            load_models_json(&dir.path().join("models.json")).unwrap(),
            None
        );
    }
}
