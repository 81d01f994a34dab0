//! Local-first default: with no key configured anywhere, look for an OpenAI-compatible model
//! server on this machine (Ollama, llama.cpp's server, LM Studio on their usual ports) and use
//! its first model, so `pi -p` works out of the box on a box with only a local model.
//! `PI_LOCAL_SERVER_PORTS` (comma-separated) replaces the list of ports probed.

use std::time::Duration;

use crate::ai::http::get_json;
use crate::ai::{Model, ModelCost};

/// (provider id, port) pairs probed in order.
const KNOWN: &[(&str, u16)] = &[("ollama", 11434), ("llama.cpp", 8080), ("lmstudio", 1234)];

const PROBE_TIMEOUT: Duration = Duration::from_millis(150);

fn candidates() -> Vec<(String, u16)> {
    match std::env::var("PI_LOCAL_SERVER_PORTS") {
        Ok(list) => list
            .split(',')
            .filter_map(|p| p.trim().parse::<u16>().ok())
            .map(|port| {
                let name = KNOWN
                    .iter()
                    .find(|(_, p)| *p == port)
                    .map(|(n, _)| *n)
                    .unwrap_or("local");
                (name.to_string(), port)
            })
            .collect(),
        Err(_) => KNOWN.iter().map(|(n, p)| (n.to_string(), *p)).collect(),
    }
}

/// The first model of the first local server that answers `GET /v1/models`.
pub fn detect() -> Option<Model> {
    for (provider, port) in candidates() {
        let base_url = format!("http://127.0.0.1:{port}/v1");
        let Some(listing) = get_json(&format!("{base_url}/models"), PROBE_TIMEOUT) else {
            continue;
        };
        let id = listing["data"]
            .as_array()
            .and_then(|models| models.iter().find_map(|m| m["id"].as_str()))
            .or_else(|| {
                listing["models"]
                    .as_array()?
                    .iter()
                    .find_map(|m| m["name"].as_str())
            });
        if let Some(id) = id {
            return Some(Model {
                id: id.to_string(),
                name: id.to_string(),
                api: "openai-completions".into(),
                provider,
                base_url,
                reasoning: false,
                input: vec!["text".into()],
                cost: ModelCost::default(),
                context_window: 128_000,
                max_tokens: 16_384,
                thinking_level_map: None,
                headers: None,
                compat: None,
            });
        }
    }
    None
}
