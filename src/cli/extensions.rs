//! Loading extensions for a run: discovery (with project trust and `--no-extensions`), the
//! host with its handshake, extension CLI flags, and merging extension tools into the tool
//! set the way pi does (`--no-tools` drops them, `--tools` filters them, a tool with a
//! built-in's name replaces it).

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
use crate::resources::settings::Settings;
use crate::resources::trust::ProjectScope;

/// What a run got from its extensions.
pub struct LoadedExtensions {
    pub host: Arc<ExtensionHost>,
    /// Project extension folders not started because the project is not trusted.
    pub skipped: Vec<PathBuf>,
    /// Discovery warnings, when a UI shows them (otherwise they went to stderr).
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

/// Discovers and starts the run's extensions. `package_paths` are extension entry points
/// contributed by installed pi packages. Warnings go to stderr; an unknown or malformed
/// extension flag is an error (`Error: Unknown option: --x`).
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
    let (sources, warnings, skipped) = discover(&DiscoveryOptions {
        agent_dir,
        cwd,
        scope,
        settings_paths: settings.string_list("extensions"),
        package_paths,
        cli_paths: args.extensions.clone(),
        no_extensions: args.no_extensions,
    });
    let warnings = if hookup.is_some() {
        warnings
    } else {
        for w in warnings {
            eprintln!("Warning: {w}");
        }
        Vec::new()
    };
    let mode = match (args.mode, hookup) {
        (_, Some(_)) => "interactive",
        (Some(Mode::Rpc), _) => "rpc",
        (Some(Mode::Json), _) => "json",
        _ => "print",
    };
    let mut opts = HostOptions::new(cwd.to_path_buf(), mode);
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

/// A list of tools.
type Tools = Vec<Arc<dyn Tool>>;

/// The active tools and the full registry (for `setActiveTools`), with extension tools merged
/// into `builtins` (the selected built-ins) and `all_builtins`.
pub fn merge_tools(
    args: &Args,
    host: &ExtensionHost,
    builtins: Tools,
    all_builtins: Tools,
) -> (Tools, Tools) {
    let ext_tools = host.tools();
    let merge = |mut base: Vec<Arc<dyn Tool>>, filter: &dyn Fn(&str) -> bool| {
        for t in ext_tools.iter().filter(|t| filter(t.name())) {
            match base.iter().position(|b| b.name() == t.name()) {
                Some(i) => base[i] = Arc::clone(t),
                None => base.push(Arc::clone(t)),
            }
        }
        base
    };
    let active = if args.no_tools && args.tools.is_none() {
        builtins
    } else {
        let allow = args.tools.clone();
        merge(builtins, &|n| match &allow {
            Some(a) => a.iter().any(|x| x == n),
            None => true,
        })
    };
    let registry = merge(all_builtins, &|_| true);
    (active, registry)
}

/// `setModel` for extensions: an available model and its credentials.
pub fn model_lookup(agent_dir: &Path) -> ModelLookup {
    // Loaded on first use: most runs never see an extension switch models, and reading the
    // registry twice at start-up costs every run.
    let agent_dir = agent_dir.to_path_buf();
    let models = std::sync::Mutex::new(None::<super::models::Models>);
    Arc::new(move |provider, id| {
        let mut guard = models.lock().unwrap_or_else(|p| p.into_inner());
        let models = guard.get_or_insert_with(|| super::models::load(&agent_dir));
        let model = models
            .available()
            .into_iter()
            .find(|m| m.provider == provider && m.id == id)
            .ok_or_else(|| format!("Model not found: {provider}/{id}"))?;
        let credentials = models.credentials(&model)?;
        Ok((model, credentials))
    })
}
