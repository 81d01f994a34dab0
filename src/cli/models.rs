//! Adapter from CLI flags and settings to the model registry (placeholder until merged).

use std::path::Path;

use super::args::Args;
use crate::ai::{Model, ThinkingLevel};
use crate::resources::settings::Settings;

pub struct Models;

pub struct Chosen {
    pub model: Model,
    pub thinking: ThinkingLevel,
}

pub fn load(_agent_dir: &Path) -> Result<Models, String> {
    Ok(Models)
}

impl Models {
    pub fn list(&self, _search: Option<&str>) -> String {
        String::new()
    }
    pub fn choose(&mut self, _args: &Args, _settings: &Settings) -> Result<Chosen, String> {
        Err("No models available.".into())
    }
    pub fn api_key(&self, _model: &Model, runtime: Option<&str>) -> Option<String> {
        runtime.map(str::to_string)
    }
    pub fn env_hint(&self, _provider: &str) -> Option<String> {
        None
    }
    pub fn headers(&self, _model: &Model) -> Vec<(String, String)> {
        Vec::new()
    }
}
