//! The session's models and credentials as the non-chat catalog (`ai::images::Models`) reaches
//! them: `codemode`'s `models` and extensions' `ctx.modelRegistry.generateImages()` /
//! `classify()`. The registry (`auth.json`, `models.json`) is read on first use: most sessions
//! never ask.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{json, Value};

use super::model_registry::ModelRegistry;
use crate::ai::images::{ModelAuth, ModelSource};
use crate::ai::Model;

pub struct RegistrySource {
    agent_dir: PathBuf,
    registry: Mutex<Option<ModelRegistry>>,
}

impl RegistrySource {
    pub fn new(agent_dir: &Path) -> RegistrySource {
        RegistrySource {
            agent_dir: agent_dir.to_path_buf(),
            registry: Mutex::new(None),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&ModelRegistry) -> T) -> T {
        let mut guard = self.registry.lock().unwrap_or_else(|p| p.into_inner());
        f(guard.get_or_insert_with(|| ModelRegistry::load(&self.agent_dir)))
    }
}

impl ModelSource for RegistrySource {
    fn chat_models(&self) -> Vec<Value> {
        self.with(|r| {
            r.all()
                .into_iter()
                .map(|m| {
                    let mut entry = json!({"type": "chat"});
                    if let (Some(e), Ok(Value::Object(fields))) =
                        (entry.as_object_mut(), serde_json::to_value(&m))
                    {
                        e.extend(fields);
                    }
                    entry
                })
                .collect()
        })
    }

    fn has_auth(&self, provider: &str) -> bool {
        self.with(|r| r.has_configured_auth(provider))
    }

    fn auth(&self, provider: &str, id: &str) -> Result<ModelAuth, String> {
        let model = Model {
            id: id.to_string(),
            name: id.to_string(),
            api: String::new(),
            provider: provider.to_string(),
            base_url: String::new(),
            reasoning: false,
            input: Vec::new(),
            cost: Default::default(),
            context_window: 0,
            max_tokens: 0,
            thinking_level_map: None,
            headers: None,
            compat: None,
        };
        let auth = self.with(|r| r.request_auth(&model))?;
        Ok(ModelAuth {
            api_key: auth.api_key.unwrap_or_default(),
            headers: auth.headers,
            base_url: None,
        })
    }

    fn base_url(&self, provider: &str) -> Option<String> {
        self.with(|r| r.provider_base_url(provider).map(str::to_string))
    }
}
