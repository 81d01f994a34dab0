//! The model registry: built-in catalog plus `models.json`, with credentials from
//! [`AuthStorage`]. Built-in models stay as static specs and become [`Model`]s only when asked
//! for; models touched by an override are materialized once at load.

use super::auth::AuthStorage;
use super::config_value::{resolve_config_value_or_err, resolve_config_value_uncached};
use super::models_json::{load_models_json, Headers, ModelDef, ModelOverride, ModelsConfig};
use crate::ai::catalog::{self, ModelSpec};
use crate::ai::types::{Model, ModelCost};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

/// One registry model: a catalog spec, or a model built or changed by models.json.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEntry {
    Builtin(&'static ModelSpec),
    Custom(Box<Model>),
}

impl ModelEntry {
    pub fn id(&self) -> &str {
        match self {
            ModelEntry::Builtin(s) => s.id,
            ModelEntry::Custom(m) => &m.id,
        }
    }
    pub fn name(&self) -> &str {
        match self {
            ModelEntry::Builtin(s) => s.name,
            ModelEntry::Custom(m) => &m.name,
        }
    }
    pub fn provider(&self) -> &str {
        match self {
            ModelEntry::Builtin(s) => s.provider(),
            ModelEntry::Custom(m) => &m.provider,
        }
    }
    pub fn reasoning(&self) -> bool {
        match self {
            ModelEntry::Builtin(s) => s.reasoning,
            ModelEntry::Custom(m) => m.reasoning,
        }
    }
    pub fn supports_images(&self) -> bool {
        match self {
            ModelEntry::Builtin(s) => s.images,
            ModelEntry::Custom(m) => m.supports_images(),
        }
    }
    pub fn context_window(&self) -> u64 {
        match self {
            ModelEntry::Builtin(s) => u64::from(s.context_window),
            ModelEntry::Custom(m) => m.context_window,
        }
    }
    pub fn max_tokens(&self) -> u64 {
        match self {
            ModelEntry::Builtin(s) => u64::from(s.max_tokens),
            ModelEntry::Custom(m) => m.max_tokens,
        }
    }
    pub fn to_model(&self) -> Model {
        match self {
            ModelEntry::Builtin(s) => s.to_model(),
            ModelEntry::Custom(m) => (**m).clone(),
        }
    }
}

#[derive(Debug, Clone, Default)]
struct RequestConfig {
    api_key: Option<String>,
    headers: Option<Headers>,
    auth_header: bool,
}

/// What a request needs besides the model: the key and the resolved extra headers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestAuth {
    pub api_key: Option<String>,
    pub headers: Vec<(String, String)>,
}

/// Built-in and custom models plus the credentials to use them.
#[derive(Debug, Default)]
pub struct ModelRegistry {
    entries: Vec<ModelEntry>,
    auth: AuthStorage,
    request: HashMap<String, RequestConfig>,
    model_headers: HashMap<(String, String), Headers>,
    /// models.json `baseUrl` per provider (it moves the provider's non-chat models too).
    base_urls: HashMap<String, String>,
    load_error: Option<String>,
    /// Per-provider `has_configured_auth` answers (cleared whenever auth changes).
    auth_cache: Mutex<HashMap<String, bool>>,
}

impl ModelRegistry {
    /// `<agentDir>/auth.json` and `<agentDir>/models.json`.
    pub fn load(agent_dir: &Path) -> Self {
        Self::new(
            AuthStorage::load(agent_dir.join("auth.json")),
            Some(&agent_dir.join("models.json")),
        )
    }

    /// A registry over `auth`, reading custom models from `models_json` when given.
    pub fn new(auth: AuthStorage, models_json: Option<&Path>) -> Self {
        let mut reg = ModelRegistry {
            auth,
            ..Default::default()
        };
        let config = match models_json.map(load_models_json) {
            Some(Ok(Some(c))) => Some(c),
            Some(Err(e)) => {
                reg.load_error = Some(e);
                None
            }
            _ => None,
        };
        reg.build(config.as_ref());
        reg
    }

    /// A registry from already-parsed models.json content (for tests and embedders).
    pub fn with_config(auth: AuthStorage, config: &ModelsConfig) -> Self {
        let mut reg = ModelRegistry {
            auth,
            ..Default::default()
        };
        reg.build(Some(config));
        reg
    }

    fn build(&mut self, config: Option<&ModelsConfig>) {
        let empty = ModelsConfig::default();
        let config = config.unwrap_or(&empty);
        for (name, p) in &config.providers {
            if p.api_key.is_some() || p.headers.is_some() || p.auth_header {
                self.request.insert(
                    name.clone(),
                    RequestConfig {
                        api_key: p.api_key.clone(),
                        headers: p.headers.clone(),
                        auth_header: p.auth_header,
                    },
                );
            }
            if let Some(url) = &p.base_url {
                self.base_urls.insert(name.clone(), url.clone());
            }
            for (id, o) in &p.model_overrides {
                self.set_model_headers(name, id, o.headers.as_ref());
            }
        }
        let find_provider = |name: &str| config.providers.iter().find(|(n, _)| n == name);
        for spec in catalog::specs() {
            let pconf = find_provider(spec.provider()).map(|(_, p)| p);
            let provider_override = pconf.filter(|p| p.base_url.is_some() || p.compat.is_some());
            let model_override = pconf
                .and_then(|p| p.model_overrides.iter().find(|(id, _)| id == spec.id))
                .map(|(_, o)| o);
            if provider_override.is_none() && model_override.is_none() {
                self.entries.push(ModelEntry::Builtin(spec));
                continue;
            }
            let mut m = spec.to_model();
            if let Some(p) = provider_override {
                if let Some(url) = &p.base_url {
                    m.base_url = url.clone();
                }
                m.compat = merge_compat(m.compat.take(), p.compat.as_ref());
            }
            if let Some(o) = model_override {
                apply_override(&mut m, o);
            }
            self.entries.push(ModelEntry::Custom(Box::new(m)));
        }
        self.add_custom_models(config);
    }

    /// Providers an extension registered: their keys and headers, and their models (a model
    /// with a built-in's provider and id replaces it).
    pub fn add_providers(&mut self, config: &ModelsConfig) {
        for (name, p) in &config.providers {
            if p.api_key.is_some() || p.headers.is_some() || p.auth_header {
                self.request.insert(
                    name.clone(),
                    RequestConfig {
                        api_key: p.api_key.clone(),
                        headers: p.headers.clone(),
                        auth_header: p.auth_header,
                    },
                );
            }
        }
        self.add_custom_models(config);
        self.auth_cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    fn add_custom_models(&mut self, config: &ModelsConfig) {
        for (name, p) in &config.providers {
            for def in &p.models {
                let Some(model) = custom_model(
                    name,
                    p.api.as_deref(),
                    p.base_url.as_deref(),
                    p.compat.as_ref(),
                    def,
                ) else {
                    continue;
                };
                self.set_model_headers(name, &def.id, def.headers.as_ref());
                let pos = self
                    .entries
                    .iter()
                    .position(|e| e.provider() == name && e.id() == def.id);
                let entry = ModelEntry::Custom(Box::new(model));
                match pos {
                    Some(i) => self.entries[i] = entry,
                    None => self.entries.push(entry),
                }
            }
        }
    }

    fn set_model_headers(&mut self, provider: &str, id: &str, headers: Option<&Headers>) {
        let key = (provider.to_string(), id.to_string());
        match headers {
            Some(h) if !h.is_empty() => {
                self.model_headers.insert(key, h.clone());
            }
            _ => {
                self.model_headers.remove(&key);
            }
        }
    }

    /// The models.json error, if loading it failed (built-in models are still there).
    pub fn load_error(&self) -> Option<&str> {
        self.load_error.as_deref()
    }

    pub fn auth(&self) -> &AuthStorage {
        &self.auth
    }

    pub fn auth_mut(&mut self) -> &mut AuthStorage {
        self.auth_cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        &mut self.auth
    }

    /// Sets the runtime (`--api-key`) key of a provider.
    pub fn set_runtime_api_key(&mut self, provider: &str, key: &str) {
        self.auth_mut().set_runtime_api_key(provider, key);
    }

    /// Every model entry, built-ins first in catalog order, then new custom models.
    pub fn entries(&self) -> &[ModelEntry] {
        &self.entries
    }

    /// Every model (materializes all of them; prefer [`ModelRegistry::entries`]).
    pub fn all(&self) -> Vec<Model> {
        self.entries.iter().map(ModelEntry::to_model).collect()
    }

    /// A model by exact provider and id.
    pub fn find(&self, provider: &str, id: &str) -> Option<Model> {
        self.find_entry(provider, id).map(ModelEntry::to_model)
    }

    pub fn find_entry(&self, provider: &str, id: &str) -> Option<&ModelEntry> {
        let provider = catalog::current_provider_id(provider);
        self.entries
            .iter()
            .find(|e| e.provider() == provider && e.id() == id)
    }

    /// Whether a provider has auth configured (runtime key, auth.json, environment, or a
    /// models.json `apiKey`). Never runs commands.
    pub fn has_configured_auth(&self, provider: &str) -> bool {
        if let Some(v) = self
            .auth_cache
            .lock()
            .ok()
            .and_then(|c| c.get(provider).copied())
        {
            return v;
        }
        let v = self.auth.has_auth(provider)
            || self
                .request
                .get(provider)
                .is_some_and(|r| r.api_key.is_some());
        if let Ok(mut c) = self.auth_cache.lock() {
            c.insert(provider.to_string(), v);
        }
        v
    }

    /// Entries whose provider has auth configured.
    pub fn available_entries(&self) -> Vec<&ModelEntry> {
        // Entries come grouped by provider: ask once per run of the same provider, not once
        // per model (each ask locks and hashes).
        let mut last: Option<(&str, bool)> = None;
        self.entries
            .iter()
            .filter(|e| {
                let provider = e.provider();
                match last {
                    Some((p, known)) if p == provider => known,
                    _ => {
                        let known = self.has_configured_auth(provider);
                        last = Some((provider, known));
                        known
                    }
                }
            })
            .collect()
    }

    /// Models whose provider has auth configured.
    pub fn available(&self) -> Vec<Model> {
        self.available_entries()
            .into_iter()
            .map(ModelEntry::to_model)
            .collect()
    }

    /// The API key for a provider: `--api-key` → auth.json → environment → models.json `apiKey`.
    pub fn api_key_for(&self, provider: &str) -> Option<String> {
        if let Some(k) = self.auth.api_key(provider) {
            return Some(k);
        }
        let key = self.request.get(provider)?.api_key.as_deref()?;
        resolve_config_value_uncached(key)
    }

    /// Key and headers for a request to `model`, as pi's `getApiKeyAndHeaders`: catalog
    /// headers, then models.json provider headers, then model headers (later wins), values
    /// resolved; `authHeader` adds `Authorization: Bearer <key>`.
    pub fn request_auth(&self, model: &Model) -> Result<RequestAuth, String> {
        let p = &model.provider;
        let rc = self.request.get(p);
        let api_key = match self.auth.resolve_api_key(p)? {
            Some(k) => Some(k),
            None => match rc.and_then(|r| r.api_key.as_deref()) {
                Some(cfg) => Some(resolve_config_value_or_err(
                    cfg,
                    &format!("API key for provider \"{p}\""),
                )?),
                None => None,
            },
        };
        let mut headers: Vec<(String, String)> = Vec::new();
        if let Some(h) = &model.headers {
            for (k, v) in h {
                if let Some(s) = v.as_str() {
                    upsert(&mut headers, k, s.to_string());
                }
            }
        }
        if let Some(h) = rc.and_then(|r| r.headers.as_ref()) {
            for (k, v) in h {
                let desc = format!("provider \"{p}\" header \"{k}\"");
                upsert(&mut headers, k, resolve_config_value_or_err(v, &desc)?);
            }
        }
        if let Some(h) = self.model_headers.get(&(p.clone(), model.id.clone())) {
            for (k, v) in h {
                let desc = format!("model \"{p}/{}\" header \"{k}\"", model.id);
                upsert(&mut headers, k, resolve_config_value_or_err(v, &desc)?);
            }
        }
        if rc.is_some_and(|r| r.auth_header) {
            let Some(key) = &api_key else {
                return Err(format!("No API key found for \"{p}\""));
            };
            upsert(&mut headers, "Authorization", format!("Bearer {key}"));
        }
        Ok(RequestAuth { api_key, headers })
    }

    /// The models.json `baseUrl` of `provider`, if it sets one.
    pub fn provider_base_url(&self, provider: &str) -> Option<&str> {
        self.base_urls.get(provider).map(String::as_str)
    }

    /// The resolved extra headers for `model` (empty when a value cannot be resolved).
    pub fn headers_for(&self, model: &Model) -> Vec<(String, String)> {
        self.request_auth(model)
            .map(|r| r.headers)
            .unwrap_or_default()
    }
}

fn upsert(headers: &mut Vec<(String, String)>, key: &str, value: String) {
    match headers.iter_mut().find(|(k, _)| k == key) {
        Some(slot) => slot.1 = value,
        None => headers.push((key.to_string(), value)),
    }
}

/// `{...base, ...override}`, with `openRouterRouting` / `vercelGatewayRouting` merged one level.
pub fn merge_compat(
    base: Option<Map<String, Value>>,
    over: Option<&Map<String, Value>>,
) -> Option<Map<String, Value>> {
    let Some(over) = over else { return base };
    let mut merged = base.clone().unwrap_or_default();
    for (k, v) in over {
        merged.insert(k.clone(), v.clone());
    }
    for key in ["openRouterRouting", "vercelGatewayRouting"] {
        let b = base
            .as_ref()
            .and_then(|b| b.get(key))
            .and_then(Value::as_object);
        let o = over.get(key).and_then(Value::as_object);
        if b.is_some() || o.is_some() {
            let mut m = b.cloned().unwrap_or_default();
            for (k, v) in o.into_iter().flatten() {
                m.insert(k.clone(), v.clone());
            }
            merged.insert(key.to_string(), Value::Object(m));
        }
    }
    Some(merged)
}

fn apply_override(m: &mut Model, o: &ModelOverride) {
    if let Some(n) = &o.name {
        m.name = n.clone();
    }
    if let Some(r) = o.reasoning {
        m.reasoning = r;
    }
    if let Some(t) = &o.thinking_level_map {
        let mut map = m.thinking_level_map.take().unwrap_or_default();
        for (k, v) in t {
            map.insert(k.clone(), v.clone());
        }
        m.thinking_level_map = Some(map);
    }
    if let Some(i) = &o.input {
        m.input = i.clone();
    }
    if let Some(c) = o.context_window {
        m.context_window = c;
    }
    if let Some(c) = o.max_tokens {
        m.max_tokens = c;
    }
    if let Some([i, out, cr, cw]) = o.cost {
        m.cost = ModelCost {
            input: i.unwrap_or(m.cost.input),
            output: out.unwrap_or(m.cost.output),
            cache_read: cr.unwrap_or(m.cost.cache_read),
            cache_write: cw.unwrap_or(m.cost.cache_write),
        };
    }
    m.compat = merge_compat(m.compat.take(), o.compat.as_ref());
}

/// A custom model with pi's defaults; `None` when no api or baseUrl can be determined.
fn custom_model(
    provider: &str,
    provider_api: Option<&str>,
    provider_base_url: Option<&str>,
    provider_compat: Option<&Map<String, Value>>,
    def: &ModelDef,
) -> Option<Model> {
    let builtin = catalog::provider_specs(provider).first();
    let api = def
        .api
        .as_deref()
        .or(provider_api)
        .or(builtin.map(|s| s.api()))?;
    let base_url = def
        .base_url
        .as_deref()
        .or(provider_base_url)
        .or(builtin.map(|s| s.base_url()))?;
    let cost = def.cost.unwrap_or([0.0; 4]);
    Some(Model {
        id: def.id.clone(),
        name: def.name.clone().unwrap_or_else(|| def.id.clone()),
        api: api.to_string(),
        provider: provider.to_string(),
        base_url: base_url.to_string(),
        reasoning: def.reasoning.unwrap_or(false),
        input: def
            .input
            .clone()
            .unwrap_or_else(|| vec!["text".to_string()]),
        cost: ModelCost {
            input: cost[0],
            output: cost[1],
            cache_read: cost[2],
            cache_write: cost[3],
        },
        context_window: def.context_window.unwrap_or(128_000),
        max_tokens: def.max_tokens.unwrap_or(16_384),
        thinking_level_map: def.thinking_level_map.clone(),
        headers: None,
        compat: merge_compat(provider_compat.cloned(), def.compat.as_ref()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::models_json::parse_models_json;
    use serde_json::json;

    fn registry(json: &str, auth: Map<String, Value>) -> ModelRegistry {
        let cfg = parse_models_json(json, Path::new("models.json")).unwrap();
        ModelRegistry::with_config(AuthStorage::in_memory(auth), &cfg)
    }

    #[test]
    fn builtins_without_models_json() {
        let reg = ModelRegistry::new(AuthStorage::in_memory(Map::new()), None);
        assert_eq!(reg.entries().len(), catalog::specs().len());
        assert!(reg
            .entries()
            .iter()
            .all(|e| matches!(e, ModelEntry::Builtin(_))));
        assert_eq!(
            reg.find("openai", "gpt-5.4").unwrap().api,
            "openai-responses"
        );
    }

    #[test]
    fn custom_provider_defaults_and_auth_header() {
        std::env::set_var("PI_TEST_REG_HDR", "hv");
        let reg = registry(
            r#"{"providers": {"local": {"baseUrl": "http://h/v1", "api": "openai-completions",
                "apiKey": "sk-lit", "authHeader": true, "headers": {"X-P": "PI_TEST_REG_HDR"},
                "compat": {"supportsStore": false},
                "models": [{"id": "m1", "headers": {"X-M": "!printf mh"}, "compat": {"maxTokensField": "max_tokens"}}]}}}"#,
            Map::new(),
        );
        let m = reg.find("local", "m1").unwrap();
        assert_eq!(m.name, "m1");
        assert_eq!(m.api, "openai-completions");
        assert_eq!((m.context_window, m.max_tokens), (128_000, 16_384));
        assert_eq!(m.input, vec!["text"]);
        assert!(!m.reasoning);
        assert_eq!(m.cost, ModelCost::default());
        assert_eq!(
            Value::Object(m.compat.clone().unwrap()),
            json!({"supportsStore": false, "maxTokensField": "max_tokens"})
        );
        assert!(reg.has_configured_auth("local"));
        assert_eq!(reg.api_key_for("local").as_deref(), Some("sk-lit"));
        assert_eq!(
            reg.headers_for(&m),
            vec![
                ("X-P".to_string(), "hv".to_string()),
                ("X-M".to_string(), "mh".to_string()),
                ("Authorization".to_string(), "Bearer sk-lit".to_string()),
            ]
        );
    }

    #[test]
    fn builtin_provider_overrides_and_upserts() {
        let reg = registry(
            r#"{"providers": {"anthropic": {"baseUrl": "https://proxy/anthropic",
                "modelOverrides": {"claude-opus-4-7": {"name": "Opus!", "cost": {"input": 1}, "maxTokens": 1000}},
                "models": [{"id": "claude-opus-4-7-custom"}, {"id": "claude-sonnet-4-5", "name": "Replaced"}]}}}"#,
            Map::new(),
        );
        let o = reg.find("anthropic", "claude-opus-4-7").unwrap();
        let orig = catalog::find_builtin("anthropic", "claude-opus-4-7").unwrap();
        assert_eq!(o.base_url, "https://proxy/anthropic");
        assert_eq!(o.name, "Opus!");
        assert_eq!(o.max_tokens, 1000);
        assert_eq!(o.cost.input, 1.0);
        assert_eq!(o.cost.output, orig.cost.output);
        let c = reg.find("anthropic", "claude-opus-4-7-custom").unwrap();
        assert_eq!(c.api, "anthropic-messages");
        assert_eq!(c.base_url, "https://proxy/anthropic");
        let r = reg.find("anthropic", "claude-sonnet-4-5").unwrap();
        assert_eq!(r.name, "Replaced");
        let n = reg
            .entries()
            .iter()
            .filter(|e| e.provider() == "anthropic")
            .count();
        assert_eq!(n, catalog::provider_specs("anthropic").len() + 1);
        // Other providers untouched.
        assert!(matches!(
            reg.find_entry("openai", "gpt-5.4"),
            Some(ModelEntry::Builtin(_))
        ));
    }

    #[test]
    fn key_precedence_runtime_auth_env_models_json() {
        std::env::remove_var("XIAOMI_TOKEN_PLAN_SGP_API_KEY");
        let cfg = r#"{"providers": {"xiaomi-token-plan-sgp": {"apiKey": "!printf from-models-json", "headers": {}}}}"#;
        let reg = registry(cfg, Map::new());
        assert_eq!(
            reg.api_key_for("xiaomi-token-plan-sgp").as_deref(),
            Some("from-models-json")
        );
        std::env::set_var("XIAOMI_TOKEN_PLAN_SGP_API_KEY", "from-env");
        assert_eq!(
            reg.api_key_for("xiaomi-token-plan-sgp").as_deref(),
            Some("from-env")
        );
        let mut auth = Map::new();
        auth.insert(
            "xiaomi-token-plan-sgp".into(),
            json!({"type": "api_key", "key": "from-auth"}),
        );
        let mut reg = registry(cfg, auth);
        assert_eq!(
            reg.api_key_for("xiaomi-token-plan-sgp").as_deref(),
            Some("from-auth")
        );
        reg.set_runtime_api_key("xiaomi-token-plan-sgp", "from-flag");
        assert_eq!(
            reg.api_key_for("xiaomi-token-plan-sgp").as_deref(),
            Some("from-flag")
        );
        std::env::remove_var("XIAOMI_TOKEN_PLAN_SGP_API_KEY");
    }

    #[test]
    fn broken_models_json_keeps_builtins_and_reports_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("models.json");
        std::fs::write(&path, "{\n  \"providers\": {\n    \"x\" {}\n  }\n}").unwrap();
        let reg = ModelRegistry::new(AuthStorage::in_memory(Map::new()), Some(&path));
        let err = reg.load_error().unwrap();
        assert!(err.contains("at line 3 column 9"), "{err}");
        assert!(err.contains(&path.display().to_string()));
        assert_eq!(reg.entries().len(), catalog::specs().len());
    }
}
