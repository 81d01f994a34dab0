//! The model catalog as scripts and extensions reach it (pi 1.6.0's `ModelRegistry`
//! `getModelsOfType` / `getAvailableOfType` / `getModelOfType` / `classify` /
//! `generateImages`): the built-in non-chat models with the session's models.json base URLs,
//! the session's chat models, and calls made with the session's credentials. What the session
//! knows (chat models, credentials, base URLs) comes through [`ModelSource`], which the
//! harness implements over its model registry.

use std::sync::Arc;

use serde_json::Value;

use super::catalog::{self, NonChatModel};
use super::classify::{classify, ClassifierResult};
use super::openrouter;
use super::types::{CallStop, ImagesResult, ModelAuth, OutputBlock};
use crate::ai::Abort;

/// What the session lends the catalog.
pub trait ModelSource: Send + Sync {
    /// The chat models the session knows (built-in and models.json), as pi lists them.
    fn chat_models(&self) -> Vec<Value>;
    /// Whether `provider` has credentials configured.
    fn has_auth(&self, provider: &str) -> bool;
    /// The key and headers a call to `provider`'s model `id` sends (an empty key when there is
    /// none: the call then fails as pi's does, in its result).
    fn auth(&self, provider: &str, id: &str) -> Result<ModelAuth, String>;
    /// The models.json `baseUrl` of `provider`, when it moves the provider.
    fn base_url(&self, provider: &str) -> Option<String>;
}

/// The kinds of model pi 1.6.0 lists.
pub const MODEL_TYPES: [&str; 3] = ["chat", "image", "classifier"];

/// The catalog over a session's [`ModelSource`].
#[derive(Clone)]
pub struct Models {
    source: Arc<dyn ModelSource>,
}

impl std::fmt::Debug for Models {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Models")
    }
}

impl Models {
    pub fn new(source: Arc<dyn ModelSource>) -> Models {
        Models { source }
    }

    /// A built-in non-chat model with the provider's models.json base URL applied.
    fn placed(&self, model: &NonChatModel) -> NonChatModel {
        let mut model = model.clone();
        if let Some(url) = self.source.base_url(&model.provider) {
            model.entry["baseUrl"] = Value::String(url.clone());
            model.base_url = url;
        }
        model
    }

    /// Every known model of `kind`, optionally of one provider, as scripts see them (no
    /// `headers`).
    pub fn of_type(&self, kind: &str, provider: Option<&str>) -> Vec<Value> {
        if kind == "chat" {
            return self
                .source
                .chat_models()
                .into_iter()
                .filter(|m| provider.is_none_or(|p| m["provider"] == p))
                .map(without_headers)
                .collect();
        }
        catalog::models_of_kind(kind, provider)
            .into_iter()
            .map(|m| self.placed(m).info())
            .collect()
    }

    /// The models of `kind` whose provider has credentials.
    pub fn available_of_type(&self, kind: &str, provider: Option<&str>) -> Vec<Value> {
        self.of_type(kind, provider)
            .into_iter()
            .filter(|m| {
                m["provider"]
                    .as_str()
                    .is_some_and(|p| self.source.has_auth(p))
            })
            .collect()
    }

    /// One catalog entry, as scripts see it.
    pub fn model_of_type(&self, kind: &str, provider: &str, id: &str) -> Option<Value> {
        self.of_type(kind, Some(provider))
            .into_iter()
            .find(|m| m["id"] == id)
    }

    /// The non-chat model of `kind` with this provider and id, base URL applied.
    pub fn resolve(&self, kind: &str, provider: &str, id: &str) -> Option<NonChatModel> {
        catalog::find_model(kind, provider, id).map(|m| self.placed(m))
    }

    /// Generates images with `model` (resolved by [`Models::resolve`]); never fails: errors
    /// are in the result.
    pub fn generate_images(
        &self,
        model: &NonChatModel,
        input: &[OutputBlock],
        abort: &Abort,
    ) -> ImagesResult {
        let auth = match self.auth(model) {
            Ok(a) => a,
            Err(e) => {
                return ImagesResult::empty(&model.api, &model.provider, &model.id)
                    .failed(CallStop::Error, e)
            }
        };
        if model.api != openrouter::API {
            return ImagesResult::empty(&model.api, &model.provider, &model.id).failed(
                CallStop::Error,
                format!("No API provider registered for api: {}", model.api),
            );
        }
        openrouter::generate_images(model, input, &auth, abort)
    }

    /// Classifies `context` with `model`; never fails: errors are in the result.
    pub fn classify(
        &self,
        model: &NonChatModel,
        context: &Value,
        abort: &Abort,
    ) -> ClassifierResult {
        let auth = self.auth(model).unwrap_or_default();
        classify(model, context, &auth, abort)
    }

    fn auth(&self, model: &NonChatModel) -> Result<ModelAuth, String> {
        let mut auth = self.source.auth(&model.provider, &model.id)?;
        auth.base_url = Some(model.base_url.clone());
        Ok(auth)
    }
}

/// The session's catalog, shared by the tools that reach it (`codemode`'s `models`) and set
/// once the session knows its models; empty until then.
#[derive(Clone, Default, Debug)]
pub struct ModelsLink(Arc<std::sync::RwLock<Option<Models>>>);

impl ModelsLink {
    pub fn set(&self, models: Models) {
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = Some(models);
    }

    pub fn get(&self) -> Option<Models> {
        self.0.read().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

fn without_headers(mut model: Value) -> Value {
    if let Some(m) = model.as_object_mut() {
        m.remove("headers");
    }
    model
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct Fake;
    impl ModelSource for Fake {
        fn chat_models(&self) -> Vec<Value> {
            vec![json!({"provider": "anthropic", "id": "c", "headers": {"x": "secret"}})]
        }
        fn has_auth(&self, provider: &str) -> bool {
            provider == "openrouter"
        }
        fn auth(&self, _: &str, _: &str) -> Result<ModelAuth, String> {
            Ok(ModelAuth::default())
        }
        fn base_url(&self, provider: &str) -> Option<String> {
            (provider == "openrouter").then(|| "http://127.0.0.1:9/v1".to_string())
        }
    }

    #[test]
    fn listings_apply_base_urls_and_credentials_and_hide_headers() {
        let models = Models::new(Arc::new(Fake));
        assert_eq!(
            models.of_type("chat", None),
            vec![json!({"provider": "anthropic", "id": "c"})]
        );
        let images = models.available_of_type("image", None);
        assert_eq!(images.len(), 74);
        assert_eq!(images[0]["baseUrl"], "http://127.0.0.1:9/v1");
        assert!(models
            .available_of_type("classifier", Some("openai"))
            .is_empty());
        assert_eq!(models.of_type("classifier", Some("openai")).len(), 1);
        let m = models
            .resolve("image", "openrouter", "google/gemini-2.5-flash-image")
            .unwrap();
        assert_eq!(m.base_url, "http://127.0.0.1:9/v1");
        let r = models.generate_images(&m, &[OutputBlock::Text("x".into())], &Abort::new());
        assert_eq!(
            r.error_message.as_deref(),
            Some("No API key for provider: openrouter")
        );
    }
}
