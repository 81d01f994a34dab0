//! The names pi shows for providers, and which providers `/login` and `pi auth login` offer
//! for an API key: the built-in table, the subscription (OAuth) flows, and the providers a
//! models.json adds.

use crate::ai::catalog;
use crate::resources::oauth;

/// The API-key providers `/login` and `pi auth login` offer, with the names pi shows for them
/// (from the built-in catalog, in its order).
pub fn api_key_providers() -> impl Iterator<Item = (&'static str, &'static str)> {
    catalog::api_key_providers()
        .iter()
        .map(|id| (*id, catalog::builtin_provider_name(id).unwrap_or(id)))
}

/// The name pi shows for a provider (`custom`: the models.json providers and their names).
pub fn provider_name(id: &str, custom: &[(String, String)]) -> String {
    if let Some((_, name)) = custom.iter().find(|(p, _)| p == id) {
        return name.clone();
    }
    if let Some(name) = catalog::builtin_provider_name(id) {
        return name.to_string();
    }
    oauth::provider(id).map_or_else(|| id.to_string(), |p| p.name().to_string())
}

/// The providers models.json adds (not built in, not a subscription), with their `name`.
/// An unreadable file adds none; the model selector reports why.
pub fn custom_providers(agent_dir: &std::path::Path) -> Vec<(String, String)> {
    let path = agent_dir.join("models.json");
    let Ok(Some(config)) = crate::resources::models_json::load_models_json(&path) else {
        return Vec::new();
    };
    config
        .providers
        .into_iter()
        .filter(|(id, _)| !catalog::is_builtin_provider(id) && oauth::provider(id).is_none())
        .map(|(id, p)| {
            let name = p.name.unwrap_or_else(|| id.clone());
            (id, name)
        })
        .collect()
}
