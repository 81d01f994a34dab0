//! From flags and settings to one model, its thinking level, key and headers, with pi's
//! precedence: `--model` (+`--provider`), then the settings default, then the first provider
//! that has a key; `--thinking` beats a `:level` suffix, which beats `defaultThinkingLevel`.

use std::path::Path;

use super::args::Args;
use crate::ai::catalog::env_key_vars;
use crate::ai::{Model, ThinkingLevel};
use crate::resources::list_models::{list_models_table, list_models_warning, local_models_table};
use crate::resources::model_registry::ModelRegistry;
use crate::resources::model_resolve::{clamp_thinking, ScopeEntry};
use crate::resources::settings::Settings;

pub struct Chosen {
    pub model: Model,
    pub thinking: ThinkingLevel,
    pub api_key: String,
    pub headers: Vec<(String, String)>,
    /// pi 1.6.0's warning when a resumed session's model is gone and another is used
    /// (`Could not restore model <provider>/<id>. Using <provider>/<id>`).
    pub restore_warning: Option<String>,
}

impl Chosen {
    /// pi's stand-in when nothing is configured: RPC starts, prompts fail their preflight.
    pub fn placeholder() -> Self {
        Chosen {
            model: Model {
                id: "unknown".into(),
                name: "unknown".into(),
                api: "unknown".into(),
                provider: "unknown".into(),
                base_url: String::new(),
                reasoning: false,
                input: vec!["text".into()],
                cost: Default::default(),
                context_window: 0,
                max_tokens: 0,
                thinking_level_map: None,
                headers: None,
                compat: None,
            },
            thinking: ThinkingLevel::Off,
            api_key: String::new(),
            headers: Vec::new(),
            restore_warning: None,
        }
    }
}

/// Why no model could be chosen.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelError {
    /// The command line asked for something that does not exist (`--model nonexistent`,
    /// `--api-key` without a model): every mode stops, as pi does.
    Fatal(String),
    /// Nothing usable is configured: print and JSON modes stop, RPC and interactive mode
    /// start without a model.
    Unavailable(String),
}

impl ModelError {
    pub fn message(&self) -> &str {
        match self {
            ModelError::Fatal(m) | ModelError::Unavailable(m) => m,
        }
    }
}

pub struct Models {
    registry: ModelRegistry,
}

pub fn load(agent_dir: &Path) -> Models {
    Models {
        registry: ModelRegistry::load(agent_dir),
    }
}

impl Models {
    /// Models whose provider has a key configured (RPC `get_available_models`, `set_model`).
    pub fn available(&self) -> Vec<Model> {
        self.registry.available()
    }

    /// The registry behind these answers.
    pub fn registry(&self) -> &ModelRegistry {
        &self.registry
    }

    /// Adds the model providers extensions registered (`pi.registerProvider`); a malformed one
    /// is reported and left out.
    pub fn add_extension_providers(&mut self, providers: &[(String, serde_json::Value)]) {
        if providers.is_empty() {
            return;
        }
        match crate::resources::models_json::parse_extension_providers(providers) {
            Ok(config) => self.registry.add_providers(&config),
            Err(e) => eprintln!("Warning: an extension registered an invalid provider: {e}"),
        }
    }

    /// Re-reads auth.json (after an interactive `/login` or `/logout`).
    pub fn reload_auth(&mut self) {
        self.registry.auth_mut().reload();
    }

    /// What is wrong with auth.json (the whole file, or single entries).
    pub fn auth_warnings(&self) -> Vec<String> {
        self.registry.auth().warnings()
    }

    /// Why models.json could not be loaded.
    pub fn load_error(&self) -> Option<String> {
        self.registry.load_error().map(str::to_string)
    }

    /// Key and headers for `model`, or pi's "no key" message.
    pub fn credentials(&self, model: &Model) -> Result<(String, Vec<(String, String)>), String> {
        let auth = self.registry.request_auth(model)?;
        match auth.api_key.filter(|k| !k.is_empty()) {
            Some(key) => Ok((key, auth.headers)),
            None => Err(no_key_message(&model.provider)),
        }
    }

    /// `--list-models`: the table, after pi's warning if models.json failed to load.
    pub fn list(&self, search: Option<&str>) -> String {
        if let Some(w) = list_models_warning(&self.registry) {
            eprintln!("{w}");
        }
        if self.registry.available_entries().is_empty() && self.registry.load_error().is_none() {
            let local = crate::resources::local_server::detect_all();
            if !local.is_empty() {
                return local_models_table(&local, search);
            }
        }
        list_models_table(&self.registry, search)
    }

    /// The `--models` (or `enabledModels`) scope among models with credentials; warnings
    /// are printed.
    pub fn scope(&self, patterns: &[String]) -> Vec<ScopeEntry> {
        let (scope, warnings) = self.registry.resolve_model_scope(patterns);
        for w in warnings {
            eprintln!("Warning: {w}");
        }
        scope
    }

    /// Picks the model and resolves its credentials. `Err` is the full message for stderr.
    /// `resumed` is the model and thinking level a resumed session last used; `scope` the
    /// `--models` scope, which picks the model of a session that has no messages yet.
    pub fn choose(
        &mut self,
        args: &Args,
        settings: &Settings,
        resumed: (Option<&(String, String)>, Option<&str>),
        scope: Option<&[ScopeEntry]>,
    ) -> Result<Chosen, ModelError> {
        use ModelError::{Fatal, Unavailable};
        if let Some(e) = self.registry.load_error() {
            // An explicit --model cannot be found in a registry that did not load.
            let e = format!("Error: {e}");
            return Err(if args.model.is_some() {
                Fatal(e)
            } else {
                Unavailable(e)
            });
        }
        let (model, suffix_level) = match &args.model {
            Some(pattern) => {
                let r = self
                    .registry
                    .resolve_cli_model(args.provider.as_deref(), pattern)
                    .map_err(|e| Fatal(format!("Error: {e}")))?;
                if let Some(w) = r.warning {
                    eprintln!("Warning: {w}");
                }
                (r.model, r.thinking)
            }
            None if scope.is_some_and(|s| !s.is_empty()) => {
                let scope = scope.expect("checked above");
                let saved = settings.default_provider().zip(settings.default_model());
                let pick = saved
                    .and_then(|(p, id)| scope.iter().find(|(m, _)| m.provider == p && m.id == id))
                    .unwrap_or(&scope[0]);
                pick.clone()
            }
            None if resumed.0.is_some_and(|(p, id)| self.usable(p, id)) => {
                let (p, id) = resumed.0.expect("checked above");
                (self.registry.find(p, id).expect("checked above"), None)
            }
            None => {
                if args.api_key.is_some() {
                    return Err(Fatal("Error: --api-key requires a model to be specified via --model, --provider/--model, or --models".into()));
                }
                match self
                    .registry
                    .default_model(settings.default_provider(), settings.default_model())
                {
                    Some(m) => (m, None),
                    None => {
                        return local_server_model().ok_or_else(|| Unavailable(no_model_message()))
                    }
                }
            }
        };
        if let Some(key) = &args.api_key {
            self.registry.set_runtime_api_key(&model.provider, key);
        }
        // pi: the CLI's level, else a resumed session's recorded one (`scope` is None exactly
        // when the session has messages), else the settings default.
        let level = args
            .thinking
            .or(suffix_level)
            .or_else(|| {
                scope
                    .is_none()
                    .then_some(resumed.1)
                    .flatten()
                    .and_then(ThinkingLevel::parse)
            })
            .or_else(|| {
                settings
                    .default_thinking_level()
                    .and_then(ThinkingLevel::parse)
            })
            .unwrap_or(ThinkingLevel::Medium);
        let auth = self
            .registry
            .request_auth(&model)
            .map_err(|e| Unavailable(format!("Error: {e}")))?;
        let api_key = auth
            .api_key
            .filter(|k| !k.is_empty())
            .ok_or_else(|| Unavailable(no_key_message(&model.provider)))?;
        // A session with messages whose recorded model cannot be used any more.
        let restore_warning = match resumed.0 {
            Some((p, id)) if args.model.is_none() && scope.is_none() && !self.usable(p, id) => {
                Some(format!(
                    "Could not restore model {p}/{id}. Using {}/{}",
                    model.provider, model.id
                ))
            }
            _ => None,
        };
        Ok(Chosen {
            thinking: clamp_thinking(&model, level),
            model,
            api_key,
            headers: auth.headers,
            restore_warning,
        })
    }
}

impl Models {
    /// A resumed session's model is reused only if it still exists and has a key (pi's rule).
    fn usable(&self, provider: &str, id: &str) -> bool {
        self.registry.find(provider, id).is_some() && self.registry.has_configured_auth(provider)
    }
}

/// No key anywhere: a model server on this machine, if one answers.
fn local_server_model() -> Option<Chosen> {
    let model = crate::resources::local_server::detect()?;
    eprintln!(
        "No API key configured; using the local server at {} (model {}, {}-token window). \
         Add it to ~/.pi/agent/models.json to choose models explicitly.",
        model.base_url, model.id, model.context_window
    );
    Some(Chosen {
        model,
        thinking: ThinkingLevel::Off,
        // Local servers accept any key; the OpenAI wire format still sends one.
        api_key: "local".into(),
        headers: Vec::new(),
        restore_warning: None,
    })
}

fn no_key_message(provider: &str) -> String {
    // Cloud providers authenticate with ambient credentials, not a key: say which.
    if let Some(m) = crate::ai::providers::missing_credentials_message(provider) {
        return m.to_string();
    }
    if provider == "openai-codex" {
        return "No login found for openai-codex (ChatGPT Plus/Pro).\n\nThis provider has no API \
                keys: log in with `pi auth login openai-codex`, or /login in interactive mode."
            .to_string();
    }
    // The API key variable people know first (pi prefers an OAuth token where both exist).
    let vars = env_key_vars(provider);
    let env = match provider {
        "anthropic" => "set ANTHROPIC_API_KEY, ".to_string(),
        "github-copilot" => format!("set {}, ", vars.join(" or ")),
        _ => vars
            .first()
            .map(|v| format!("set {v}, "))
            .unwrap_or_default(),
    };
    let login = match provider {
        "anthropic" => " Claude Pro/Max subscribers can log in with `pi auth login anthropic`.",
        "github-copilot" => " Or log in with `pi auth login github-copilot`.",
        "azure" => " Azure also needs AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME.",
        "cloudflare-workers-ai" => " Cloudflare also needs CLOUDFLARE_ACCOUNT_ID.",
        "cloudflare-ai-gateway" => {
            " Cloudflare also needs CLOUDFLARE_ACCOUNT_ID and CLOUDFLARE_GATEWAY_ID."
        }
        _ => "",
    };
    format!(
        "No API key found for {provider}.\n\nTo add one, {env}add it to ~/.pi/agent/auth.json as \
         {{\"{provider}\": {{\"type\": \"api_key\", \"key\": \"...\"}}}}, or pass --api-key.{login}"
    )
}

fn no_model_message() -> String {
    format!(
        "No API key found, and no local model server answered.\n\nTried {}. Start a server \
         (Ollama, llama.cpp's llama-server, LM Studio or vLLM), set PI_LOCAL_SERVER_PORTS=8000,9000 \
         to probe other ports, or add it as a provider in ~/.pi/agent/models.json (see the \
         README's \"Local models\"). For a hosted model, set a provider key (for example \
         ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY), add one to \
         ~/.pi/agent/auth.json, or define a provider with an apiKey in ~/.pi/agent/models.json.",
        crate::resources::local_server::tried_description()
    )
}
