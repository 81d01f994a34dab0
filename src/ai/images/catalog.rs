//! The built-in non-chat models of pi 1.6.0: OpenRouter's image models (`openrouter-images`)
//! and the classifiers several providers list. They ship as pi's own catalog entries
//! (`non_chat_models.json`, written by `scripts/catalog/non_chat.py`), deflated in the binary
//! (`util::packed`: ~55 KB of JSON in ~3.5 KB) and parsed the first time a script or an
//! extension asks for a model of these kinds; chat models never look here.

use std::sync::OnceLock;

use serde_json::Value;

use crate::ai::ModelCost;
use crate::util::packed::Pack;

static MODELS: Pack = include!(concat!(env!("OUT_DIR"), "/non_chat_models.pack.rs"));

/// One catalog entry, kept as pi writes it (scripts and extensions see it as is, less
/// `headers`), with the fields a call needs read out.
#[derive(Debug, Clone, PartialEq)]
pub struct NonChatModel {
    /// `"image"` or `"classifier"`.
    pub kind: String,
    pub provider: String,
    pub id: String,
    pub api: String,
    pub base_url: String,
    pub cost: ModelCost,
    /// Also answers with text (`output` lists `"text"`).
    pub text_output: bool,
    /// The entry as pi lists it.
    pub entry: Value,
}

impl NonChatModel {
    /// Reads a catalog entry (or a models.json-style description of one); `None` when it lacks
    /// a type, provider, id or API.
    pub fn from_entry(entry: Value) -> Option<NonChatModel> {
        let text = |k: &str| entry.get(k).and_then(Value::as_str).map(str::to_string);
        Some(NonChatModel {
            kind: text("type")?,
            provider: text("provider")?,
            id: text("id")?,
            api: text("api")?,
            base_url: text("baseUrl").unwrap_or_default(),
            cost: serde_json::from_value(entry["cost"].clone()).unwrap_or_default(),
            text_output: entry["output"]
                .as_array()
                .is_some_and(|o| o.iter().any(|v| v == "text")),
            entry,
        })
    }

    /// The entry a script or an extension sees: `headers` is dropped, since models.json
    /// headers can carry credentials (as pi's `toModelInfo`).
    pub fn info(&self) -> Value {
        let mut info = self.entry.clone();
        if let Some(map) = info.as_object_mut() {
            map.remove("headers");
        }
        info
    }
}

/// Changes whenever the catalog does (names its copy on disk for the Node.js bridge).
pub fn fingerprint() -> u64 {
    MODELS.fingerprint()
}

/// The catalog's JSON text (an array of pi's entries, headers included).
pub fn json_text() -> String {
    MODELS.unpack().file("non_chat_models.json").to_string()
}

fn all() -> &'static [NonChatModel] {
    static PARSED: OnceLock<Vec<NonChatModel>> = OnceLock::new();
    PARSED.get_or_init(|| {
        let unpacked = MODELS.unpack();
        let list: Vec<Value> =
            serde_json::from_str(unpacked.file("non_chat_models.json")).unwrap_or_default();
        list.into_iter()
            .filter_map(NonChatModel::from_entry)
            .collect()
    })
}

/// Every built-in model of `kind` (`"image"`, `"classifier"`), optionally of one provider, in
/// pi's catalog order.
pub fn models_of_kind(kind: &str, provider: Option<&str>) -> Vec<&'static NonChatModel> {
    all()
        .iter()
        .filter(|m| m.kind == kind && provider.is_none_or(|p| m.provider == p))
        .collect()
}

/// The built-in model of `kind` with this provider and id.
pub fn find_model(kind: &str, provider: &str, id: &str) -> Option<&'static NonChatModel> {
    all()
        .iter()
        .find(|m| m.kind == kind && m.provider == provider && m.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_holds_pi_1_6_0s_image_and_classifier_models() {
        let images = models_of_kind("image", None);
        assert_eq!(images.len(), 74);
        assert!(images.iter().all(|m| m.api == "openrouter-images"));
        let banana = find_model("image", "openrouter", "google/gemini-2.5-flash-image").unwrap();
        assert!(banana.text_output);
        assert_eq!(banana.base_url, "https://openrouter.ai/api/v1");
        assert_eq!(banana.cost.output, 2.5);
        let flux = find_model("image", "openrouter", "black-forest-labs/flux.2-pro").unwrap();
        assert!(!flux.text_output);
        assert_eq!(models_of_kind("classifier", None).len(), 81);
        assert_eq!(models_of_kind("classifier", Some("openai")).len(), 1);
        assert!(find_model("classifier", "openrouter", "google/gemini-2.5-flash-image").is_none());
    }
}
