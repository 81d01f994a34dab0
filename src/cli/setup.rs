//! Builds a non-interactive run from parsed arguments: project trust, settings, project
//! resources, model registry, the initial message, model and key resolution, the system prompt,
//! `/skill:` and template expansion, signal handling, then print/json mode.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use super::args::{Args, Mode};
use super::inputs;
use super::models::ModelError;
use crate::agent::Agent;
use crate::ai::{Abort, StreamOptions};
use crate::harness::extensions::{InputSource, UserInput};
use crate::harness::{system_prompt, AgentSession};
use crate::modes::print;
use crate::resources::loader::{ResourceOptions, Resources};
use crate::resources::settings::Settings;
use crate::resources::trust::{self, TrustDecision};
use crate::session;
use crate::util::shutdown;
use crate::util::sort;

/// How long a mode has to shut down after SIGINT, SIGTERM or SIGHUP before pi exits anyway.
const SHUTDOWN_DEADLINE: Duration = Duration::from_secs(3);

/// Print and JSON mode. Exits with 128 + the signal after SIGINT, SIGTERM or SIGHUP.
pub fn run(args: Args, stdin_tty: bool, info: &mut dyn Write) -> i32 {
    if args.list_models.is_none() {
        install_signal_handler();
    }
    let code = match try_run(args, stdin_tty, info) {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("{msg}");
            1
        }
    };
    // Drops the sandbox, and with it the commands' temp directory.
    crate::util::sandbox::install(None);
    shutdown::exit_code(code)
}

/// Everything a mode needs, built from the flags: the session core plus what later
/// commands (model switching, template expansion) consult.
pub struct Prepared {
    pub session: AgentSession,
    pub models: super::models::Models,
    pub resources: Resources,
    /// The session header line (`--mode json` prints it first).
    pub header: serde_json::Value,
    /// False when no model could be chosen (RPC starts anyway; prompts then fail preflight).
    pub has_model: bool,
    /// Warnings for a UI to show (only when one was given to `prepare_with`; print, JSON and
    /// RPC modes print them on stderr as they are found).
    pub notices: Vec<String>,
    /// The project-trust decision (interactive mode shows the trust prompt when it is `ask`).
    pub trust: TrustDecision,
    /// Trust-gated project resources left out because the folder is not trusted.
    pub skipped: Vec<std::path::PathBuf>,
}

fn try_run(args: Args, stdin_tty: bool, info: &mut dyn Write) -> Result<i32, String> {
    if let Some(search) = &args.list_models {
        let config = super::config::load(&args)?;
        for w in &config.warnings {
            eprintln!("Warning: {w}");
        }
        let _ = write!(info, "{}", config.models.list(search.as_deref()));
        return Ok(0);
    }
    let cwd = super::config::current_dir()?;
    let stdin_text = if stdin_tty {
        None
    } else {
        inputs::read_stdin()
    };
    let files = inputs::read_file_args(&cwd, &args.file_args).map_err(|e| format!("Error: {e}"))?;
    let Prepared {
        session,
        resources,
        header,
        ..
    } = prepare(&args, false)?;

    let mut prompts = Vec::new();
    let mut messages = args.messages.clone().into_iter();
    let mut first = String::new();
    if let Some(s) = stdin_text {
        first.push_str(&s);
    }
    first.push_str(&files.text);
    if let Some(m) = messages.next() {
        first.push_str(&m);
    }
    let input = |text: String, images| UserInput {
        text,
        images,
        source: InputSource::Interactive,
    };
    if !first.is_empty() || !files.images.is_empty() {
        prompts.push(input(first, files.images));
    }
    prompts.extend(messages.map(|m| input(m, Vec::new())));
    let expand: crate::harness::op::Expand =
        std::sync::Arc::new(move |text: &str| resources.expand_input(text));

    let abort = session.abort.clone();
    shutdown::take_over(move || abort.abort());
    session.start_extensions("startup");
    let stdout: print::SharedOut = std::sync::Arc::new(std::sync::Mutex::new(Box::new(
        std::io::BufWriter::new(std::io::stdout()),
    )));
    let stderr: print::SharedOut =
        std::sync::Arc::new(std::sync::Mutex::new(Box::new(std::io::stderr())));
    let (code, session) = print::run(
        session,
        print::PrintRun {
            json: args.mode == Some(Mode::Json),
            header,
            prompts,
            expand,
            stdout,
            stderr,
        },
    )?;
    if let Some(host) = session.extension_host() {
        host.shutdown();
    }
    if let Some(mcp) = &session.mcp {
        mcp.shutdown();
    }
    for e in &session.write_errors {
        eprintln!("Warning: {e}");
    }
    // A run whose session could not be saved where it was asked to be is not a success
    // (issue 35): the warnings above say what happened and where the entries are.
    let saved =
        session.session.write_error().is_none() && session.session.diverted_from().is_none();
    if code == 0 && !saved {
        eprintln!(
            "Error: the session was not saved completely to its file (see the warnings above)"
        );
        return Ok(1);
    }
    Ok(code)
}

/// `--mode rpc`: the session core, then the JSON-lines server until stdin closes (or a signal
/// ends it: exit 128 + the signal).
pub fn run_rpc(args: Args) -> i32 {
    install_signal_handler();
    let code = serve_rpc(args);
    crate::util::sandbox::install(None);
    shutdown::exit_code(code)
}

fn serve_rpc(args: Args) -> i32 {
    let prepared = match prepare(&args, true) {
        Ok(p) => p,
        Err(msg) => {
            eprintln!("{msg}");
            return 1;
        }
    };
    let session_dir = std::env::current_dir()
        .map(|cwd| {
            crate::session::dir::session_dir(&crate::resources::agent_dir(), &cwd.to_string_lossy())
        })
        .unwrap_or_default();
    let models = std::sync::Arc::new(prepared.models);
    let for_credentials = std::sync::Arc::clone(&models);
    // RPC clients learn about skipped project resources from the trust decision, not stderr.
    let mcp = prepared.session.mcp.clone();
    let code = crate::modes::rpc::run(
        prepared.session,
        crate::modes::rpc::RpcEnv {
            available_models: std::sync::Arc::new(move || models.available()),
            credentials: std::sync::Arc::new(move |m| for_credentials.credentials(m)),
            resources: prepared.resources,
            has_model: prepared.has_model,
            session_dir,
        },
    );
    if let Some(mcp) = mcp {
        mcp.shutdown();
    }
    code
}

/// Interactive mode: the session core, then the terminal UI until the user quits (or a signal
/// ends it: exit 128 + the signal). `-r` first shows the session picker on its own; cancelling
/// it ends pi, as in pi.
pub fn run_interactive(args: Args) -> i32 {
    let code = interactive(args);
    crate::util::sandbox::install(None);
    shutdown::exit_code(code)
}

fn interactive(mut args: Args) -> i32 {
    let mut notices = Vec::new();
    if args.resume {
        match pick_session_to_resume(&args) {
            Ok(Some(path)) => {
                args.resume = false;
                args.session = Some(path.to_string_lossy().into_owned());
            }
            Ok(None) => {
                println!("\x1b[2mNo session selected\x1b[22m");
                return 0;
            }
            Err(e) => {
                eprintln!("Error: {e}");
                return 1;
            }
        }
    }
    install_signal_handler();
    if let Err(msg) = ask_project_trust(&mut args) {
        eprintln!("{msg}");
        return 1;
    }
    // Extensions talk to the terminal UI through this from their handshake on.
    let (channel_ui, extension_ui) = crate::modes::interactive::ext_ui::ChannelUi::new();
    let hookup = super::extensions::UiHookup {
        errors: channel_ui.error_sink(),
        stderr: channel_ui.stderr_sink(),
        ui: std::sync::Arc::new(channel_ui),
    };
    let prepared = match prepare_with(&args, true, Some(&hookup)) {
        Ok(p) => p,
        // pi exits quietly when the start-up question about a missing folder is cancelled.
        Err(msg) if msg == super::sessions::CANCELLED => return 0,
        Err(msg) => {
            eprintln!("{msg}");
            return 1;
        }
    };
    notices.extend(prepared.notices.iter().cloned());
    // Sandbox (issue 16): "run this once without the sandbox?" is a dialog in the terminal.
    crate::tools::sandbox::set_asker(Some(crate::modes::sandbox_asker(
        std::sync::Arc::clone(&hookup.ui),
        None,
    )));
    // Approval rules (issue 34) ask in the terminal: once, for the session, always, or no.
    if let Some(approvals) = &prepared.session.approvals {
        approvals.set_asker(Some(crate::harness::approval::Asker {
            ui: std::sync::Arc::clone(&hookup.ui),
            timeout: None,
            menu: true,
        }));
    }
    // The chat says so when the folder's protected resources were left out (pi's test is
    // whether any exist; `.pi/mcp.json` and `.pi/themes` are not in `skipped`).
    let project_trusted = prepared.trust.scope.trusted;
    let untrusted_warning = !project_trusted
        && (!prepared.skipped.is_empty()
            || trust::has_protected_resources(
                &prepared.trust.scope.cwd,
                trust::home_dir().as_deref(),
            ));
    let cwd = prepared.session.agent().cwd.clone();
    let agent_dir = crate::resources::agent_dir();
    let session_dir = super::sessions::sessions_dir(
        &args,
        &prepared.session.settings,
        &agent_dir,
        &cwd.to_string_lossy(),
    );
    if !prepared.has_model {
        notices.push(
            "No model available. Set a provider API key (for example ANTHROPIC_API_KEY) or run `pi auth login <provider>`.".into(),
        );
    }
    let settings = &prepared.session.settings;
    // `--use-theme` wins for this run; the saved setting is left alone.
    let theme = args
        .use_theme
        .clone()
        .or_else(|| settings.str(&["theme"]).map(str::to_string));
    let tui = crate::modes::interactive::fullscreen::TuiOptions::from_settings(
        settings,
        args.tui_mode.as_deref(),
    );
    // `--verbose` overrides `quietStartup`.
    let quiet_startup = if args.verbose {
        crate::modes::interactive::QuietStartup::Off
    } else {
        crate::modes::interactive::QuietStartup::from_setting(settings.merged.get("quietStartup"))
    };
    let hide_thinking = settings.bool(&["hideThinkingBlock"]).unwrap_or(false);
    let models_error = prepared.models.load_error();
    let models = std::rc::Rc::new(std::cell::RefCell::new(prepared.models));
    let for_credentials = std::rc::Rc::clone(&models);
    let for_reload = std::rc::Rc::clone(&models);
    let for_count = models.borrow().available();
    let mut providers: Vec<&str> = for_count.iter().map(|m| m.provider.as_str()).collect();
    sort::sort(&mut providers);
    providers.dedup();
    let provider_count = providers.len();
    let reload_options = ResourceOptions {
        skill_paths: args.skills.clone(),
        no_skills: args.no_skills,
        template_paths: args.prompt_templates.clone(),
        no_templates: args.no_prompt_templates,
        no_context_files: args.no_context_files,
    };
    let (reload_agent_dir, reload_cwd) = (agent_dir.clone(), cwd.clone());
    let reload_args = args.clone();
    let reload = move || {
        let trust = super::config::decide_trust(&reload_args, &reload_agent_dir, &reload_cwd);
        Resources::load(
            &reload_agent_dir,
            &reload_cwd,
            &reload_options,
            &trust.scope,
        )
    };
    let tool_env = prepared.session.tool_env.clone();
    let mcp = prepared.session.mcp.clone();
    let reload_extensions =
        reload_extensions_fn(&args, &agent_dir, &cwd, hookup, tool_env, mcp.clone());
    let code = crate::modes::interactive::run(
        prepared.session,
        crate::modes::interactive::InteractiveEnv {
            tui,
            available_models: Box::new(move || models.borrow().available()),
            credentials: Box::new(move |m| for_credentials.borrow().credentials(m)),
            reload_models: Some(Box::new(move || for_reload.borrow_mut().reload_auth())),
            models_error,
            oauth_provider: super::login::oauth_flow,
            resources: prepared.resources,
            reload_resources: Some(Box::new(reload)),
            extension_ui: Some(extension_ui),
            reload_extensions: Some(reload_extensions),
            has_model: prepared.has_model,
            session_dir,
            agent_dir,
            cwd,
            notices,
            verbose: args.verbose,
            quiet_startup,
            hide_thinking,
            theme,
            provider_count,
            clipboard: crate::modes::interactive::clipboard_image::ClipboardEnv::detect(),
            project_trusted,
            untrusted_warning,
            mcp: mcp.clone(),
        },
    );
    if let Some(mcp) = mcp {
        mcp.shutdown();
    }
    code
}

/// `defaultProjectTrust: ask` and no decision yet for a folder with protected resources: pi
/// asks on the terminal before anything of the folder loads. The answer holds for this
/// process (and is saved unless it was for this session only).
fn ask_project_trust(args: &mut Args) -> Result<(), String> {
    let cwd = super::config::current_dir()?;
    let agent_dir = crate::resources::agent_dir();
    if super::config::decide_trust(args, &agent_dir, &cwd).needs_prompt() {
        let trusted =
            crate::modes::interactive::trust::ask_at_start_up(&cwd, &agent_dir).map_err(|e| {
                format!(
                    "Error: could not ask whether to trust {}: {e}",
                    cwd.display()
                )
            })?;
        args.trust_override = Some(trusted);
    }
    Ok(())
}

/// `/reload` for extensions: discovery and handshake again (same flags, same UI), the tool
/// set and system prompt they imply for the reloaded resources.
fn reload_extensions_fn(
    args: &Args,
    agent_dir: &Path,
    cwd: &Path,
    hookup: super::extensions::UiHookup,
    tool_env: crate::tools::bash::SessionEnv,
    mcp: Option<std::sync::Arc<crate::mcp::McpManager>>,
) -> crate::modes::interactive::ReloadExtensionsFn {
    let (args, agent_dir, cwd) = (args.clone(), agent_dir.to_path_buf(), cwd.to_path_buf());
    Box::new(move |resources: &Resources, session_file: Option<String>| {
        let scope = super::config::decide_trust(&args, &agent_dir, &cwd).scope;
        let settings = Settings::load_with(&agent_dir, &cwd, scope.trusted);
        let loaded = super::extensions::load(
            &args,
            &agent_dir,
            &cwd,
            &scope,
            &settings,
            session_file,
            resources.package_extensions.clone(),
            Some(&hookup),
        )?;
        let (mut tools, mut registry) =
            super::extensions::merge_tools(&args, &loaded.host, &settings, &tool_env);
        // MCP follows the new mcp.json and the new extensions' registrations.
        if let Some(mcp) = &mcp {
            mcp.attach_extension_servers(loaded.host.mcp_servers());
            mcp.reload_config(scope.trusted);
            for t in mcp.static_tools() {
                tools.push(std::sync::Arc::clone(&t));
                registry.push(t);
            }
        }
        let system_prompt = build_system_prompt(&args, &cwd, &tools, resources)?;
        if !loaded.host.is_empty() {
            super::extensions::share_models(&loaded.host, &mut super::models::load(&agent_dir));
        }
        let models = Some(super::extensions::model_lookup(&agent_dir, &loaded.host));
        Ok(crate::modes::interactive::ReloadedExtensions {
            host: loaded.host,
            tools,
            registry,
            system_prompt,
            models,
            warnings: loaded.warnings,
        })
    })
}

/// `pi -r`: the theme from the settings, then the picker over this folder's sessions.
fn pick_session_to_resume(args: &Args) -> Result<Option<std::path::PathBuf>, String> {
    let cwd =
        super::config::current_dir().map_err(|e| e.trim_start_matches("Error: ").to_string())?;
    let agent_dir = crate::resources::agent_dir();
    let settings = Settings::load_with(&agent_dir, &cwd, false);
    let dir = super::sessions::sessions_dir(args, &settings, &agent_dir, &cwd.to_string_lossy());
    let env_theme = settings.str(&["theme"]).unwrap_or("dark").to_string();
    let mode = crate::tui::theme::ColorMode::detect();
    let themes = agent_dir.join("themes");
    let theme = crate::tui::theme::load_named(&env_theme, &[&themes], mode)
        .unwrap_or_else(|_| crate::tui::theme::Theme::dark().with_mode(mode));
    crate::tui::theme::install(theme);
    crate::tui::keybindings::install(crate::tui::keybindings::load(&agent_dir).bindings);
    crate::modes::interactive::standalone::pick_session(&dir, &agent_dir)
        .map_err(|e| format!("could not show the session picker: {e}"))
}

/// The provider stream, with OAuth logins kept fresh: before every request to a provider whose
/// auth.json entry is an OAuth login (and which `--api-key` does not override), the key is
/// re-read — and refreshed once across processes if it expired — and Copilot's base URL is
/// taken from its token. A failed refresh fails that request with the refresh error.
fn oauth_stream_fn(
    auth_path: std::path::PathBuf,
    runtime_provider: Option<String>,
) -> crate::agent::StreamFn {
    use crate::ai::providers;
    std::sync::Arc::new(move |model, context, options, abort| {
        if runtime_provider.as_deref() == Some(model.provider.as_str()) {
            return providers::stream(model, context, options, abort);
        }
        match crate::resources::oauth::request_credentials(&auth_path, &model.provider) {
            Ok(None) => providers::stream(model, context, options, abort),
            Ok(Some((key, base_url))) => {
                let mut model = model.clone();
                if let Some(b) = base_url {
                    model.base_url = b;
                }
                let options = StreamOptions {
                    api_key: key,
                    ..options.clone()
                };
                providers::stream(&model, context, &options, abort)
            }
            Err(e) => {
                crate::ai::stream::spawn_stream(model, abort, move |_| Err(e.to_string().into()))
            }
        }
    })
}

/// Builds the session core for a run. With `allow_no_model` (RPC, interactive), a missing
/// model or key is not fatal: the session starts on a placeholder and prompts fail their
/// preflight. A `--model` that matches nothing always is, as in pi.
pub fn prepare(args: &Args, allow_no_model: bool) -> Result<Prepared, String> {
    prepare_with(args, allow_no_model, None)
}

/// [`prepare`], with extensions loaded for interactive mode's UI when `hookup` is given.
pub fn prepare_with(
    args: &Args,
    allow_no_model: bool,
    hookup: Option<&super::extensions::UiHookup>,
) -> Result<Prepared, String> {
    let super::config::Config {
        cwd,
        agent_dir,
        trust,
        settings,
        mut models,
        warnings: config_warnings,
    } = super::config::load(args)?;
    let scope = &trust.scope;
    crate::ai::http::configure(settings.http_idle_timeout_ms(), settings.http_proxy());
    // What a UI shows once it owns the screen; without one, pi prints settings problems only.
    let mut notices = Vec::new();
    let sandbox_warnings = install_sandbox(args, &settings, &cwd, &agent_dir)?;
    // Issue 34: approval rules; a rule pi cannot read stops the start, never loosens.
    let (policy, approval_warnings) = crate::tools::permissions::Policy::resolve_layers(
        settings.global_map().get("permissions"),
        settings.project_map().get("permissions"),
        args.approval,
    )
    .map_err(|e| format!("Error: {e}"))?;
    for w in config_warnings
        .into_iter()
        .chain(sandbox_warnings)
        .chain(approval_warnings)
    {
        match hookup {
            Some(_) => notices.push(w),
            None => eprintln!("Warning: {w}"),
        }
    }
    let cwd_str = cwd.to_string_lossy().into_owned();
    let selected = match super::session_id::select(args, &settings, &agent_dir, &cwd_str) {
        Some(selected) => selected,
        None => super::sessions::select(args, &settings, &agent_dir, &cwd_str),
    };
    let ask = |stored: &str, here: &str| {
        crate::modes::interactive::standalone::prepare_screen(&agent_dir, &cwd);
        crate::modes::interactive::standalone::ask_missing_cwd(stored, here)
            .unwrap_or(crate::modes::interactive::standalone::MissingCwdChoice::Cancel)
    };
    let fork_dir = super::sessions::sessions_dir(args, &settings, &agent_dir, &cwd_str);
    let (mut session, session_warnings) = super::sessions::check_cwd(
        selected?,
        &cwd_str,
        &fork_dir,
        hookup.map(|_| &ask as super::sessions::AskMissingCwd),
    )?;
    for w in session_warnings {
        eprintln!("Warning: {w}");
    }
    // Only one pi process writes a session at a time (issue 35); the interactive mode asks
    // whether to fork it or open it read-only.
    if let Err(e) = session.take_lease() {
        let crate::session::lease::LeaseError::InUse(path) = &e else {
            return Err(format!("Error: {e}"));
        };
        if hookup.is_none() {
            return Err(format!("Error: {e}"));
        }
        crate::modes::interactive::standalone::prepare_screen(&agent_dir, &cwd);
        let shown = path.display().to_string();
        use crate::modes::interactive::standalone::{ask_session_in_use, InUseChoice};
        match ask_session_in_use(&shown).unwrap_or(InUseChoice::Cancel) {
            InUseChoice::Cancel => return Err(super::sessions::CANCELLED.into()),
            InUseChoice::ReadOnly => {
                session.stop_writing();
                notices.push(format!(
                    "Opened {shown} read-only: another pi process is writing it, so nothing in this session is saved."
                ));
            }
            InUseChoice::Fork => {
                let forked = crate::session::dir::fork(path, &fork_dir, &cwd_str)
                    .map_err(|e| format!("Error: Could not fork session: {e}"))?;
                session = crate::session::SessionWriter::open(&forked)
                    .map_err(|e| {
                        format!("Error: Could not open session {}: {e}", forked.display())
                    })?
                    .0;
                session.take_lease().map_err(|e| format!("Error: {e}"))?;
            }
        }
    }
    let cwd = super::sessions::run_dir(&session, cwd);
    super::session_id::apply_name(args, &mut session)?;
    let resources = Resources::load(
        &agent_dir,
        &cwd,
        &ResourceOptions {
            skill_paths: args.skills.clone(),
            no_skills: args.no_skills,
            template_paths: args.prompt_templates.clone(),
            no_templates: args.no_prompt_templates,
            no_context_files: args.no_context_files,
        },
        scope,
    );
    // Every skipped or broken resource is reported in every mode: a UI shows it once it owns
    // the screen; print, JSON and RPC modes print it on stderr (their stdout is the answer or
    // the protocol), in the words the UI uses.
    for w in &resources.warnings {
        match hookup {
            Some(_) => notices.push(w.clone()),
            None => eprintln!("Warning: {w}"),
        }
    }
    // Installed pi packages contribute extensions too.
    let package_paths = resources.package_extensions.clone();
    let session_file = session.path().map(|p| p.to_string_lossy().into_owned());
    let loaded = super::extensions::load(
        args,
        &agent_dir,
        &cwd,
        scope,
        &settings,
        session_file,
        package_paths,
        hookup,
    )?;
    notices.extend(loaded.warnings.iter().cloned());
    super::extensions::share_models(&loaded.host, &mut models);
    let context = session.build_context();
    let resumed = (context.model.as_ref(), context.thinking_level.as_deref());
    let patterns = if args.models.is_empty() {
        settings.string_list("enabledModels")
    } else {
        args.models.clone()
    };
    let model_scope = if patterns.is_empty() {
        Vec::new()
    } else {
        models.scope(&patterns)
    };
    // pi lets the scope pick the model only for a session without messages.
    let scope_for_start = context
        .messages
        .is_empty()
        .then_some(model_scope.as_slice());
    let (chosen, has_model) = match models.choose(args, &settings, resumed, scope_for_start) {
        Ok(c) => (c, true),
        Err(ModelError::Unavailable(_)) if allow_no_model => {
            (super::models::Chosen::placeholder(), false)
        }
        Err(e) => {
            loaded.host.shutdown();
            return Err(e.message().to_string());
        }
    };
    if let Some(w) = &chosen.restore_warning {
        match hookup {
            Some(_) => notices.push(w.clone()),
            None => eprintln!("Warning: {w}"),
        }
    }
    let tool_env = crate::tools::bash::SessionEnv::default();
    tool_env
        .models()
        .set(crate::ai::images::Models::new(std::sync::Arc::new(
            crate::resources::model_source::RegistrySource::new(&agent_dir),
        )));
    let (mut tools, mut tool_registry) =
        super::extensions::merge_tools(args, &loaded.host, &settings, &tool_env);
    // MCP: servers start connecting in the background now (only a stat when none is set up).
    let mcp = start_mcp(args, &agent_dir, &cwd, scope.trusted, hookup, &loaded.host);
    for t in mcp.iter().flat_map(|m| m.static_tools()) {
        tools.push(std::sync::Arc::clone(&t));
        tool_registry.push(t);
    }
    let mut skipped = resources.skipped.clone();
    skipped.extend(loaded.skipped.iter().cloned());
    let prompt_source = prompt_source(args, &cwd, &resources)?;
    let system = prompt_source.build(&tools);
    let options = StreamOptions {
        api_key: chosen.api_key,
        headers: chosen.headers,
        session_id: Some(session.session_id().to_string()),
        provider_retry: settings.provider_retry(),
        ..Default::default()
    };
    let runtime_provider = args.api_key.as_ref().map(|_| chosen.model.provider.clone());
    let mut agent = Agent::new(chosen.model, system, options);
    agent.stream_fn = oauth_stream_fn(agent_dir.join("auth.json"), runtime_provider);
    agent.thinking = chosen.thinking;
    agent.tools = tools;
    agent.tool_source = mcp
        .clone()
        .map(|m| m as std::sync::Arc<dyn crate::agent::ToolSource>);
    agent.cwd = cwd.clone();
    for (queue, key) in [
        (&agent.steering, "steeringMode"),
        (&agent.follow_up, "followUpMode"),
    ] {
        if let Some(mode) = settings
            .str(&[key])
            .and_then(crate::agent::QueueMode::parse)
        {
            queue.set_mode(mode);
        }
    }
    if has_model {
        record_model_and_thinking(&mut session, &context, &agent)
            .map_err(|e| format!("Error: Could not write session: {e}"))?;
    }
    agent.messages = crate::agent::into_llm_messages(context.messages);
    let header = serde_json::to_value(session.header()).unwrap_or_default();
    let mut session = AgentSession::with_session(agent, settings.retry(), Abort::new(), session);
    session.tool_env = tool_env;
    session.compaction = settings.compaction();
    session.scoped_models = model_scope
        .into_iter()
        .map(|(model, thinking)| crate::harness::model_control::ScopedModel { model, thinking })
        .collect();
    session.settings = settings;
    session.mcp = mcp;
    session.prompt_source = Some(prompt_source);
    let lookup = super::extensions::model_lookup(&agent_dir, &loaded.host);
    session.attach_extensions(loaded.host, tool_registry, Some(lookup));
    if policy.is_active() {
        let approvals =
            crate::harness::approval::Approvals::new(policy, cwd.clone(), session.settings.clone());
        session.set_approvals(approvals);
    }
    Ok(Prepared {
        session,
        models,
        resources,
        header,
        has_model,
        notices,
        trust,
        skipped,
    })
}

/// The session's MCP servers, unless `--no-mcp` (or `--no-tools` alone) turns them off. With a
/// UI, reports go to it; otherwise to stderr.
fn start_mcp(
    args: &Args,
    agent_dir: &Path,
    cwd: &Path,
    project_trusted: bool,
    hookup: Option<&super::extensions::UiHookup>,
    extensions: &crate::extensions::host::ExtensionHost,
) -> Option<std::sync::Arc<crate::mcp::McpManager>> {
    if args.no_mcp || (args.no_tools && args.tools.is_none()) {
        return None;
    }
    let reporter: crate::mcp::Reporter = match hookup {
        Some(h) => {
            let ui = std::sync::Arc::clone(&h.ui);
            std::sync::Arc::new(move |message: &str, kind: &str| {
                ui.notice(crate::extensions::ui::Notice::Notify {
                    message: message.to_string(),
                    kind: Some(kind.to_string()),
                })
            })
        }
        None => std::sync::Arc::new(|message: &str, _kind: &str| eprintln!("{message}")),
    };
    Some(crate::mcp::McpManager::start(crate::mcp::McpOptions {
        agent_dir: agent_dir.to_path_buf(),
        cwd: cwd.to_path_buf(),
        project_trusted,
        // Once a `--tools` entry names MCP tools, it filters them too.
        tool_filter: args
            .tools
            .clone()
            .filter(|t| t.iter().any(|e| e.starts_with("mcp__"))),
        tool_exclude: args.exclude_tools.clone(),
        reporter,
        has_ui: hookup.is_some(),
        extension_servers: Some(extensions.mcp_servers()),
    }))
}

/// The sandbox (issue 16) from `--sandbox` and the `sandbox` setting, checked against the
/// kernel and installed for every command pi starts from now on; an error when it cannot be
/// enforced (pi then does not start), a warning when it is enforced only in part.
pub(super) fn install_sandbox(
    args: &Args,
    settings: &Settings,
    cwd: &Path,
    agent_dir: &Path,
) -> Result<Vec<String>, String> {
    use crate::util::sandbox::{self, Config, Sandbox};
    // Issue 29: a project may only tighten the sandbox, never loosen it.
    let layered = Config::resolve_layers(
        settings.global_map().get("sandbox"),
        settings.project_map().get("sandbox"),
        args.sandbox,
    )
    .map_err(|e| format!("Error: {e}"))?;
    let config = layered.config;
    let mut warnings = layered.warnings;
    if config.mode != sandbox::Mode::Off && settings.project_map().contains_key("npmCommand") {
        warnings.push(crate::resources::packages::PROJECT_NPM_COMMAND_IGNORED.to_string());
    }
    let prepared = Sandbox::prepare(&config, cwd, agent_dir)?;
    sandbox::install(prepared.sandbox.map(std::sync::Arc::new));
    warnings.extend(prepared.warning);
    Ok(warnings)
}

/// What pi's createAgentSession records at start-up: a session with no messages yet gets the
/// model and thinking level; a resumed one gets nothing, except a thinking level when its
/// branch never recorded one (an older session). A `--model` or `--thinking` given on resume is
/// used for this run without an entry, in 0.73.1 as in 1.x.
fn record_model_and_thinking(
    session: &mut session::SessionWriter,
    context: &session::SessionContext,
    agent: &Agent,
) -> std::io::Result<()> {
    let level = agent.thinking.as_str();
    // Written just before the first entry something says, never by merely opening (issue 35).
    session.hold_writes(true);
    let recorded = if context.messages.is_empty() {
        session
            .append_model_change(&agent.model.provider, &agent.model.id)
            .and_then(|_| session.append_thinking_level_change(level))
            .map(drop)
    } else if context.thinking_level.is_none() {
        session.append_thinking_level_change(level).map(drop)
    } else {
        Ok(())
    };
    session.hold_writes(false);
    recorded
}

/// A value that names an existing file means that file's contents, as in pi.
fn text_or_file(v: &str) -> Result<String, String> {
    let p = Path::new(v);
    if p.is_file() {
        crate::util::files::read_limited_string(p, crate::util::files::Limit::CONTEXT_FILE)
            .map_err(|e| format!("Error: Could not read {v}: {e}"))
    } else {
        Ok(v.to_string())
    }
}

fn read_prompt_file(path: &Path) -> Result<String, String> {
    crate::util::files::read_limited_string(path, crate::util::files::Limit::CONTEXT_FILE)
        .map_err(|e| format!("Error: Could not read {}: {e}", path.display()))
}

fn build_system_prompt(
    args: &Args,
    cwd: &Path,
    tools: &[std::sync::Arc<dyn crate::agent::Tool>],
    resources: &Resources,
) -> Result<String, String> {
    Ok(prompt_source(args, cwd, resources)?.build(tools))
}

/// What the system prompt is built from, besides the tools.
fn prompt_source(
    args: &Args,
    cwd: &Path,
    resources: &Resources,
) -> Result<system_prompt::PromptSource, String> {
    // `--system-prompt` wins over SYSTEM.md; `--append-system-prompt` over APPEND_SYSTEM.md.
    let custom = match (&args.system_prompt, &resources.system_prompt_file) {
        (Some(v), _) => Some(text_or_file(v)?),
        (None, Some(path)) => Some(read_prompt_file(path)?),
        (None, None) => None,
    }
    .filter(|c| !c.is_empty());
    let append = if !args.append_system_prompt.is_empty() {
        args.append_system_prompt
            .iter()
            .map(|v| text_or_file(v))
            .collect::<Result<Vec<_>, _>>()?
    } else if let Some(path) = &resources.append_prompt_file {
        vec![read_prompt_file(path)?]
    } else {
        Vec::new()
    };
    Ok(system_prompt::PromptSource {
        custom,
        append,
        context_files: resources.context_files.clone(),
        skills: resources.skills.clone(),
        cwd: cwd.to_string_lossy().replace('\\', "/"),
    })
}

/// SIGINT, SIGTERM and SIGHUP from now on: before the mode takes over they end pi at once
/// (after killing every child it started); afterwards the mode shuts down its own way within
/// the deadline (see `util::shutdown`). A hard exit puts the terminal back first.
pub(super) fn install_signal_handler() {
    shutdown::install(SHUTDOWN_DEADLINE, crate::tui::terminal::restore_terminal);
}
