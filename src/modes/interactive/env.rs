//! What the interactive mode is given by the layers above it ([`InteractiveEnv`]: models,
//! credentials, resources, settings, the reload hooks) and the theme it installs from that.
//! Everything else in the mode reads this; it reads none of them.

use std::path::PathBuf;
use std::sync::Arc;

use super::{background, clipboard_image, ext_ui, fullscreen};
use crate::agent::Tool;
use crate::ai::Model;
use crate::extensions::ExtensionHost;
use crate::harness::extensions::ModelLookup;
use crate::harness::model_control::Credentials;
use crate::resources::loader::Resources;
use crate::tui::theme::{self, ColorMode};

/// Looks up the credentials of a model, or says why there are none.
pub type CredentialsFn = Box<dyn Fn(&Model) -> Result<Credentials, String>>;

/// Finds the OAuth flow of a provider (`/login`).
pub type OAuthProviderFn = fn(&str) -> Option<Box<dyn crate::resources::oauth::OAuthProvider>>;

/// What the mode needs from the layers above it.
pub struct InteractiveEnv {
    /// Models whose provider has a key configured.
    pub available_models: Box<dyn Fn() -> Vec<Model>>,
    pub credentials: CredentialsFn,
    /// Re-reads auth.json after `/login` or `/logout` changed it.
    pub reload_models: Option<Box<dyn Fn()>>,
    /// Why models.json could not be loaded (shown in the model selector).
    pub models_error: Option<String>,
    pub oauth_provider: OAuthProviderFn,
    pub resources: Resources,
    /// Loads skills, prompt templates and context files again (`/reload`).
    pub reload_resources: Option<Box<dyn Fn() -> Resources>>,
    /// What the session's extensions ask of the UI (from the `ChannelUi` they were loaded
    /// with).
    pub extension_ui: Option<crossbeam_channel::Receiver<ext_ui::UiRequest>>,
    /// Starts the extensions again (`/reload`).
    pub reload_extensions: Option<ReloadExtensionsFn>,
    /// False when no model could be chosen (prompts then say how to get one).
    pub has_model: bool,
    /// Where new sessions go when the current one has no file.
    pub session_dir: PathBuf,
    pub agent_dir: PathBuf,
    pub cwd: PathBuf,
    /// Warnings to show at the top of the transcript.
    pub notices: Vec<String>,
    /// `--verbose`: start with the full help and resource listing.
    pub verbose: bool,
    /// `quietStartup` setting.
    pub quiet_startup: super::header::QuietStartup,
    /// `hideThinkingBlock` setting.
    pub hide_thinking: bool,
    /// The `theme` setting.
    pub theme: Option<String>,
    /// How many providers have a key (the footer names the provider when more than one).
    pub provider_count: usize,
    /// Where the paste-image key reads images from and saves them.
    pub clipboard: clipboard_image::ClipboardEnv,
    /// The project-trust decision of this process (`/trust` shows it).
    pub project_trusted: bool,
    /// The folder has protected resources that were not loaded: the chat says so.
    pub untrusted_warning: bool,
    /// The session's MCP servers (`/mcp`), unless MCP is off.
    pub mcp: Option<std::sync::Arc<crate::mcp::McpManager>>,
    /// `tuiMode` / `--tui-mode` and the `fullscreen*` settings.
    pub tui: fullscreen::TuiOptions,
}

/// Installs the theme named in the settings (built-in, or `<name>.json` from the agent's or
/// the project's `themes/`), honouring `NO_COLOR`. Falls back to dark with an error message.
pub fn load_theme(env: &InteractiveEnv) -> Result<(), String> {
    let mode = ColorMode::detect();
    // No setting: dark or light by COLORFGBG now, corrected by the terminal's OSC 11 reply.
    let name = env
        .theme
        .clone()
        .unwrap_or_else(|| background::initial_theme_name().into());
    let global = env.agent_dir.join("themes");
    let project = env.cwd.join(".pi").join("themes");
    match theme::load_named(&name, &[&global, &project], mode) {
        Ok(t) => {
            theme::install(t);
            Ok(())
        }
        Err(e) => {
            theme::install(theme::Theme::dark().with_mode(mode));
            Err(format!(
                "Failed to load theme \"{name}\": {e}\nFell back to dark theme."
            ))
        }
    }
}

/// Freshly started extensions for `/reload`, with the tool set and system prompt they imply.
pub struct ReloadedExtensions {
    pub host: Arc<ExtensionHost>,
    /// The active tools (built-ins and extension tools, filtered as on the command line).
    pub tools: Vec<Arc<dyn Tool>>,
    /// Every tool that could be active, for `setActiveTools`.
    pub registry: Vec<Arc<dyn Tool>>,
    pub system_prompt: String,
    pub models: Option<ModelLookup>,
    /// Discovery warnings to show.
    pub warnings: Vec<String>,
}

/// Stops nothing: discovers and starts the extensions again for the reloaded resources and
/// the current session file.
pub type ReloadExtensionsFn =
    Box<dyn Fn(&Resources, Option<String>) -> Result<ReloadedExtensions, String>>;
