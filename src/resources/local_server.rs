//! Local-first default: with no key configured anywhere, look for an OpenAI-compatible model
//! server on this machine (Ollama, llama.cpp's server, LM Studio, vLLM on their usual ports, on
//! both 127.0.0.1 and ::1) and use its models, so `pi -p` works out of the box on a box with
//! only a local model. `PI_LOCAL_SERVER_PORTS` (comma-separated) replaces the list of ports.
//!
//! A local model's window is small and set when the server starts, so it is asked from the
//! server rather than guessed: llama.cpp's `/props` and `/v1/models` metadata, Ollama's
//! `/api/show` (`num_ctx`, the model's context length) and `/api/ps`, LM Studio's
//! `/api/v0/models`, vLLM's `max_model_len`. Images and reasoning are taken from the same
//! answers where the server states them.

use std::time::Duration;

use serde_json::{json, Value};

use crate::ai::http::probe_json;
use crate::ai::{Model, ModelCost};

/// (server name, port) pairs probed in order.
const KNOWN: &[(&str, u16)] = &[
    ("ollama", 11434),
    ("llama.cpp", 8080),
    ("lmstudio", 1234),
    ("vllm", 8000),
];

/// Loopback addresses a server may listen on (some bind only one of them).
const HOSTS: &[&str] = &["127.0.0.1", "[::1]"];

/// Nothing listening refuses at once; a listening server gets the `ANSWER` budget.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(150);
/// A busy local server (loading a model, generating for another client) answers slowly.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(3);

/// Used when a server gives no window: the size most local servers start with.
const UNKNOWN_WINDOW: u64 = 4096;
/// Ollama's own default `num_ctx` when neither the model nor a loaded runner says another.
const OLLAMA_DEFAULT_NUM_CTX: u64 = 4096;

/// The ports probed, each with the name of the server usually found there.
pub fn candidates() -> Vec<(String, u16)> {
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

/// What was probed, in words for an error message: "Ollama (port 11434), … on 127.0.0.1 and ::1".
pub fn tried_description() -> String {
    let ports: Vec<String> = candidates()
        .iter()
        .map(|(name, port)| match display_name(name) {
            Some(n) => format!("{n} (port {port})"),
            None => format!("port {port}"),
        })
        .collect();
    if ports.is_empty() {
        return "no ports (PI_LOCAL_SERVER_PORTS is set but lists none)".into();
    }
    format!("{} on 127.0.0.1 and ::1", ports.join(", "))
}

fn display_name(name: &str) -> Option<&'static str> {
    match name {
        "ollama" => Some("Ollama"),
        "llama.cpp" => Some("llama.cpp"),
        "lmstudio" => Some("LM Studio"),
        "vllm" => Some("vLLM"),
        _ => None,
    }
}

/// The first model of the first local server that answers.
pub fn detect() -> Option<Model> {
    candidates()
        .iter()
        .find_map(|(hint, port)| probe_server(hint, *port)?.into_iter().next())
}

/// Every model of every local server that answers (`--list-models`).
pub fn detect_all() -> Vec<Model> {
    candidates()
        .iter()
        .filter_map(|(hint, port)| probe_server(hint, *port))
        .flatten()
        .collect()
}

fn get(url: &str) -> Option<Value> {
    probe_json(url, None, CONNECT_TIMEOUT, ANSWER_TIMEOUT)
}

fn post(url: &str, body: &Value) -> Option<Value> {
    probe_json(
        url,
        Some(&body.to_string()),
        CONNECT_TIMEOUT,
        ANSWER_TIMEOUT,
    )
}

/// The models of the server on `port`, or `None` when nothing there answers `/v1/models`.
fn probe_server(hint: &str, port: u16) -> Option<Vec<Model>> {
    let (origin, listing) = HOSTS.iter().find_map(|host| {
        let origin = format!("http://{host}:{port}");
        get(&format!("{origin}/v1/models")).map(|l| (origin, l))
    })?;
    let entries: Vec<&Value> = listing["data"]
        .as_array()
        .map(|d| d.iter().collect())
        .unwrap_or_default();
    let ids: Vec<&str> = entries.iter().filter_map(|m| m["id"].as_str()).collect();
    let ids: Vec<&str> = if ids.is_empty() {
        // Ollama's native listing shape, answered by some proxies in front of it.
        listing["models"]
            .as_array()
            .map(|m| m.iter().filter_map(|m| m["name"].as_str()).collect())
            .unwrap_or_default()
    } else {
        ids
    };
    if ids.is_empty() {
        return None;
    }
    let owned_by = entries.first().and_then(|m| m["owned_by"].as_str());
    let is_llama_cpp =
        owned_by == Some("llamacpp") || entries.iter().any(|m| m["meta"].is_object());
    let is_vllm = owned_by == Some("vllm") || entries.iter().any(|m| m["max_model_len"].is_u64());
    let details: Vec<Details> = if is_llama_cpp {
        llama_cpp_details(&origin, &entries, &ids)
    } else if is_vllm {
        entries.iter().map(|m| vllm_details(m)).collect()
    } else if let Some(d) = lm_studio_details(&origin, &ids) {
        d
    } else if let Some(d) = ollama_details(&origin, &ids) {
        d
    } else {
        ids.iter().map(|_| Details::named(hint)).collect()
    };
    let base_url = format!("{origin}/v1");
    Some(
        ids.iter()
            .zip(details)
            .filter(|(_, d)| !d.skip)
            .map(|(id, d)| d.into_model(id, &base_url))
            .collect(),
    )
}

/// What a server says about one of its models.
#[derive(Debug, Default)]
struct Details {
    server: &'static str,
    window: Option<u64>,
    images: bool,
    reasoning: bool,
    /// Not a chat model (an embedding model in LM Studio's listing).
    skip: bool,
}

impl Details {
    fn named(hint: &str) -> Details {
        let server = KNOWN
            .iter()
            .find(|(n, _)| *n == hint)
            .map(|(n, _)| *n)
            .unwrap_or("local");
        Details {
            server,
            ..Default::default()
        }
    }

    fn into_model(self, id: &str, base_url: &str) -> Model {
        let window = self.window.filter(|w| *w > 0).unwrap_or(UNKNOWN_WINDOW);
        let mut input = vec!["text".to_string()];
        if self.images {
            input.push("image".into());
        }
        Model {
            id: id.to_string(),
            name: id.to_string(),
            api: "openai-completions".into(),
            provider: self.server.into(),
            base_url: base_url.to_string(),
            reasoning: self.reasoning,
            input,
            cost: ModelCost::default(),
            context_window: window,
            max_tokens: default_max_tokens(window),
            thinking_level_map: None,
            headers: None,
            // Every local server reads `max_tokens`; llama.cpp ignores `max_completion_tokens`.
            compat: json!({"maxTokensField": "max_tokens"}).as_object().cloned(),
        }
    }
}

/// A quarter of the window for the reply (at most pi's usual 16,384), so the prompt keeps
/// the rest and compaction's reserve matches it.
pub fn default_max_tokens(window: u64) -> u64 {
    (window / 4).clamp(1, 16_384)
}

fn as_window(v: &Value) -> Option<u64> {
    v.as_u64().filter(|n| *n > 0)
}

/// llama.cpp's server: `/props` gives the slot's `n_ctx`, vision and the template's tool and
/// thinking support; the listing's `meta` gives `n_ctx` (newer) or the training length.
fn llama_cpp_details(origin: &str, entries: &[&Value], ids: &[&str]) -> Vec<Details> {
    let props = get(&format!("{origin}/props")).unwrap_or(Value::Null);
    let props_window = as_window(&props["default_generation_settings"]["n_ctx"])
        .or_else(|| as_window(&props["n_ctx"]));
    let caps = &props["chat_template_caps"];
    ids.iter()
        .map(|id| {
            let meta = entries
                .iter()
                .find(|m| m["id"].as_str() == Some(id))
                .map(|m| &m["meta"])
                .unwrap_or(&Value::Null);
            Details {
                server: "llama.cpp",
                window: props_window
                    .or_else(|| as_window(&meta["n_ctx"]))
                    .or_else(|| as_window(&meta["n_ctx_train"])),
                images: props["modalities"]["vision"].as_bool().unwrap_or(false),
                reasoning: caps["supports_thinking"].as_bool().unwrap_or(false)
                    || caps["supports_reasoning"].as_bool().unwrap_or(false),
                skip: false,
            }
        })
        .collect()
}

/// vLLM puts the served window in each listing entry.
fn vllm_details(entry: &Value) -> Details {
    Details {
        server: "vllm",
        window: as_window(&entry["max_model_len"]),
        ..Default::default()
    }
}

/// LM Studio's REST listing: the loaded context length, else the model's maximum; its type
/// says vision (`vlm`) and embeddings.
fn lm_studio_details(origin: &str, ids: &[&str]) -> Option<Vec<Details>> {
    let listing = get(&format!("{origin}/api/v0/models"))?;
    let entries = listing["data"].as_array()?;
    // Another server's OpenAI listing at that path is not LM Studio's.
    if !entries.iter().any(|e| e["type"].is_string()) {
        return None;
    }
    Some(
        ids.iter()
            .map(|id| {
                let e = entries
                    .iter()
                    .find(|e| e["id"].as_str() == Some(id))
                    .unwrap_or(&Value::Null);
                let caps = e["capabilities"].as_array();
                let has = |c: &str| caps.is_some_and(|cs| cs.iter().any(|x| x.as_str() == Some(c)));
                Details {
                    server: "lmstudio",
                    window: as_window(&e["loaded_context_length"])
                        .or_else(|| as_window(&e["max_context_length"])),
                    images: e["type"].as_str() == Some("vlm") || has("vision"),
                    reasoning: has("reasoning"),
                    skip: e["type"].as_str() == Some("embeddings"),
                }
            })
            .collect(),
    )
}

/// Ollama: `/api/show` per model gives `num_ctx` (when the Modelfile sets one), the model's
/// trained context length and capabilities; `/api/ps` the window of a loaded runner. Without
/// `num_ctx` Ollama runs a model with its default, which is what a request gets.
fn ollama_details(origin: &str, ids: &[&str]) -> Option<Vec<Details>> {
    // Only Ollama answers its version endpoint; spares a show request per model elsewhere.
    get(&format!("{origin}/api/version"))?;
    let running = get(&format!("{origin}/api/ps")).unwrap_or(Value::Null);
    Some(
        ids.iter()
            .map(|id| {
                let show = post(&format!("{origin}/api/show"), &json!({ "model": id }))
                    .unwrap_or(Value::Null);
                let num_ctx = show["parameters"].as_str().and_then(|p| {
                    p.lines().find_map(|l| {
                        let mut w = l.split_whitespace();
                        (w.next() == Some("num_ctx")).then(|| w.next()?.parse::<u64>().ok())?
                    })
                });
                let trained = show["model_info"].as_object().and_then(|info| {
                    info.iter()
                        .find(|(k, _)| k.ends_with(".context_length"))
                        .and_then(|(_, v)| as_window(v))
                });
                let loaded = running["models"].as_array().and_then(|ms| {
                    ms.iter()
                        .find(|m| m["name"].as_str() == Some(id) || m["model"].as_str() == Some(id))
                        .and_then(|m| as_window(&m["context_length"]))
                });
                let window = num_ctx.or(loaded).unwrap_or_else(|| {
                    trained.map_or(OLLAMA_DEFAULT_NUM_CTX, |t| t.min(OLLAMA_DEFAULT_NUM_CTX))
                });
                let caps = show["capabilities"].as_array();
                let has = |c: &str| caps.is_some_and(|cs| cs.iter().any(|x| x.as_str() == Some(c)));
                Details {
                    server: "ollama",
                    window: Some(window),
                    images: has("vision"),
                    reasoning: has("thinking"),
                    skip: caps.is_some() && !has("completion"),
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reply_budget_is_a_quarter_of_a_small_window() {
        assert_eq!(default_max_tokens(4096), 1024);
        assert_eq!(default_max_tokens(128_000), 16_384);
        assert_eq!(default_max_tokens(2), 1);
    }

    #[test]
    fn detected_models_send_max_tokens() {
        let m = Details::named("llama.cpp").into_model("m", "http://127.0.0.1:8080/v1");
        assert_eq!(m.compat_str("maxTokensField"), Some("max_tokens"));
        assert_eq!(m.context_window, UNKNOWN_WINDOW);
        assert_eq!(m.provider, "llama.cpp");
    }
}
