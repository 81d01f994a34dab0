//! Loading extensions for a run: discovery (with project trust and `--no-extensions`), the
//! host with its handshake, extension CLI flags, and merging extension tools into the tool
//! set the way pi does (see [`crate::harness::tools::ToolPlan`]: `--no-tools` drops them,
//! `--tools` filters them, `--exclude-tools` removes them, a tool with a built-in's name
//! replaces it). An `-e` path that cannot be loaded stops the run, as in pi.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::args::{Args, Mode};
use crate::agent::Tool;
use crate::extensions::ui::ExtensionUi;
use crate::extensions::{
    discover, DiscoveryOptions, ErrorSink, ExtensionHost, HostOptions, StderrSink,
};
use crate::harness::extensions::ModelLookup;
use crate::harness::tools::{all_builtins, ToolChoice, ToolPlan};
use crate::resources::settings::Settings;
use crate::resources::trust::ProjectScope;

/// What a run got from its extensions.
pub struct LoadedExtensions {
    pub host: Arc<ExtensionHost>,
    /// Project extension folders not started because the project is not trusted.
    pub skipped: Vec<PathBuf>,
    /// Discovery warnings, for a UI to show (pi prints none in the other modes).
    pub warnings: Vec<String>,
}

fn env_ms(name: &str) -> Option<Duration> {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
}

/// Where interactive mode wants what extensions show: dialogs and notices, errors, stderr
/// (never straight to a terminal the TUI draws on).
#[derive(Clone)]
pub struct UiHookup {
    pub ui: Arc<dyn ExtensionUi>,
    pub errors: ErrorSink,
    pub stderr: StderrSink,
}

/// Why an `-e` path cannot be loaded, worded as pi words it.
fn check_cli_path(
    agent_dir: &Path,
    cwd: &Path,
    scope: &ProjectScope,
    raw: &str,
) -> Result<(), String> {
    use crate::resources::packages::PackageSource;
    let path = if matches!(PackageSource::parse(raw), PackageSource::Local { .. }) {
        crate::tools::path::normalize_lexically(&cwd.join(crate::resources::expand_tilde(raw)))
    } else {
        PathBuf::from(raw)
    };
    let shown = path.display();
    if !path.exists() {
        return Err(format!(
            "Failed to load extension \"{shown}\": Extension path does not exist: {shown}"
        ));
    }
    // The same rules discovery applies, for this one path.
    let (_, warnings, _) = discover(&DiscoveryOptions {
        agent_dir,
        cwd,
        scope,
        settings_paths: Vec::new(),
        package_paths: Vec::new(),
        cli_paths: vec![raw.to_string()],
        no_extensions: true,
    });
    match warnings.first() {
        Some(w) => Err(format!("Failed to load extension \"{shown}\": {w}")),
        None => Ok(()),
    }
}

/// pi's hint after an extension failed to load.
const NO_EXTENSIONS_HINT: &str = "Hint: Start without extensions using \"pi -ne\".";

/// Discovers and starts the run's extensions. `package_paths` are extension entry points
/// contributed by installed pi packages. An `-e` path that cannot be loaded, and an unknown or
/// malformed extension flag, are errors (`Error: Unknown option: --x`); other discovery
/// problems are returned as warnings.
#[allow(clippy::too_many_arguments)]
pub fn load(
    args: &Args,
    agent_dir: &Path,
    cwd: &Path,
    scope: &ProjectScope,
    settings: &Settings,
    session_file: Option<String>,
    package_paths: Vec<PathBuf>,
    hookup: Option<&UiHookup>,
) -> Result<LoadedExtensions, String> {
    let failed: Vec<String> = args
        .extensions
        .iter()
        .filter_map(|p| check_cli_path(agent_dir, cwd, scope, p).err())
        .map(|e| format!("Error: {e}"))
        .collect();
    if !failed.is_empty() {
        return Err(format!("{}\n{NO_EXTENSIONS_HINT}", failed.join("\n")));
    }
    let (sources, warnings, skipped) = discover(&DiscoveryOptions {
        agent_dir,
        cwd,
        scope,
        settings_paths: settings.string_list("extensions"),
        package_paths,
        cli_paths: args.extensions.clone(),
        no_extensions: args.no_extensions,
    });
    let opts = host_options(args, agent_dir, cwd, scope, settings, session_file, hookup);
    let loaded = if sources.is_empty() && args.unknown_flags.is_empty() {
        return Ok(LoadedExtensions {
            host: ExtensionHost::empty(),
            skipped,
            warnings,
        });
    } else {
        ExtensionHost::load(sources, opts)
    };
    if let Some(e) = loaded.errors.first() {
        loaded.host.shutdown();
        return Err(format!("Error: {e}"));
    }
    Ok(LoadedExtensions {
        host: loaded.host,
        skipped,
        warnings,
    })
}

/// How the run's extensions are started: the mode they see, the built-in tools their tool
/// factories run, the CLI flags, the UI they talk to and the time limits.
pub(super) fn host_options(
    args: &Args,
    agent_dir: &Path,
    cwd: &Path,
    scope: &ProjectScope,
    settings: &Settings,
    session_file: Option<String>,
    hookup: Option<&UiHookup>,
) -> HostOptions {
    let mode = match (args.mode, hookup) {
        (_, Some(_)) => "interactive",
        (Some(Mode::Rpc), _) => "rpc",
        (Some(Mode::Json), _) => "json",
        _ => "print",
    };
    let mut opts = HostOptions::new(cwd.to_path_buf(), mode);
    opts.agent_dir = agent_dir.to_path_buf();
    opts.project_trusted = scope.trusted;
    // The tool factories extensions import run pi's own built-in tools.
    let env = crate::tools::bash::SessionEnv::default();
    opts.builtin_tools = crate::harness::tools::BUILTIN_TOOLS
        .iter()
        .filter_map(|n| crate::harness::tools::builtin(n, settings, &env))
        .collect();
    opts.cli_flags = args.unknown_flags.clone();
    opts.session_file = session_file;
    opts.has_ui = args.mode == Some(Mode::Rpc) || hookup.is_some();
    if let Some(h) = hookup {
        opts.ui = Arc::clone(&h.ui);
        opts.errors = Arc::clone(&h.errors);
        opts.stderr = Arc::clone(&h.stderr);
    }
    if let Some(t) = env_ms("PI_EXTENSION_HANDSHAKE_TIMEOUT_MS") {
        opts.handshake_timeout = t;
    }
    if let Some(t) = env_ms("PI_EXTENSION_EVENT_TIMEOUT_MS").or_else(|| {
        settings
            .u64(&["extensionEventTimeoutMs"])
            .map(Duration::from_millis)
    }) {
        opts.event_timeout = t;
    }
    opts
}

/// Adds the providers extensions registered to `models`, and tells the extensions which
/// models exist (their `ctx.modelRegistry`, pi-ai's `getModel`).
pub fn share_models(host: &ExtensionHost, models: &mut super::models::Models) {
    models.add_extension_providers(&host.provider_configs());
    if host.is_empty() {
        return;
    }
    host.share_models(models.registry());
}

/// A list of tools.
type Tools = Vec<Arc<dyn Tool>>;

/// The active tools and the registry (for `setActiveTools`): the built-ins and the
/// extensions' tools, chosen by the tool flags and the `defaultTools` setting.
pub fn merge_tools(
    args: &Args,
    host: &ExtensionHost,
    settings: &Settings,
    env: &crate::tools::bash::SessionEnv,
) -> (Tools, Tools) {
    let choice = ToolChoice {
        allow: args.tools.clone(),
        no_tools: args.no_tools,
        no_builtin_tools: args.no_builtin_tools,
    };
    ToolPlan::new(&choice, args.exclude_tools.as_deref(), settings)
        .assemble(all_builtins(settings, env), host.tools())
}

/// `setModel` and model calls for extensions: an available model and its credentials, the
/// models extensions registered included.
pub fn model_lookup(agent_dir: &Path, host: &ExtensionHost) -> ModelLookup {
    // Loaded on first use: most runs never see an extension switch models, and reading the
    // registry twice at start-up costs every run.
    let agent_dir = agent_dir.to_path_buf();
    let providers = host.provider_configs();
    let models = std::sync::Mutex::new(None::<super::models::Models>);
    Arc::new(move |provider, id| {
        let mut guard = models.lock().unwrap_or_else(|p| p.into_inner());
        let models = guard.get_or_insert_with(|| {
            let mut m = super::models::load(&agent_dir);
            m.add_extension_providers(&providers);
            m
        });
        let model = models
            .available()
            .into_iter()
            .find(|m| m.provider == provider && m.id == id)
            .ok_or_else(|| format!("Model not found: {provider}/{id}"))?;
        let credentials = models.credentials(&model)?;
        Ok((model, credentials))
    })
}
