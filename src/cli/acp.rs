//! `pi --mode acp` / `pi acp`: what the ACP server needs from start-up. Each session an editor
//! opens is prepared exactly as `pi` prepares one in that folder (settings, trust, resources,
//! extensions, MCP, sandbox), with the editor's MCP servers registered beside `mcp.json`'s.

use std::path::Path;
use std::sync::Arc;

use super::args::Args;
use super::setup::{install_sandbox, prepare};
use crate::modes::acp::env::{AcpEnv, Login, OpenRequest, Opened};
use crate::resources::settings::Settings;
use crate::util::sandbox::{Config, Mode as SandboxMode};
use crate::util::shutdown;

/// Who registers the client's MCP servers (shown where pi names a server's source).
const CLIENT_SERVERS: &str = "ACP client";

pub fn run(args: Args) -> i32 {
    super::setup::install_signal_handler();
    let code = serve(args);
    crate::util::sandbox::install(None);
    shutdown::exit_code(code)
}

fn effective_sandbox(args: &Args, settings: &Settings) -> SandboxMode {
    Config::resolve_layers(
        settings.global_map().get("sandbox"),
        settings.project_map().get("sandbox"),
        args.sandbox,
    )
    .map(|l| l.config.mode)
    .unwrap_or(SandboxMode::Off)
}

fn open(args: &Args, req: OpenRequest) -> Result<Opened, String> {
    // The folder, like the sandbox, belongs to the process: one live session at a time.
    std::env::set_current_dir(&req.cwd)
        .map_err(|e| format!("cannot work in {}: {e}", req.cwd.display()))?;
    let mut args = args.clone();
    if let Some(file) = &req.file {
        args.session = Some(file.to_string_lossy().into_owned());
        args.continue_session = false;
        args.resume = false;
    }
    if req.sandbox.is_some() {
        args.sandbox = req.sandbox;
    }
    let prepared = prepare(&args, true)?;
    let mut warnings = Vec::new();
    if !req.mcp_servers.is_empty() {
        match prepared.session.extension_host() {
            Some(host) => {
                let registry = host.mcp_servers();
                for (name, entry) in &req.mcp_servers {
                    if let Err(e) = registry.register(CLIENT_SERVERS, name, entry) {
                        warnings.push(e);
                    }
                }
            }
            None => warnings.push(
                "the client's MCP servers were not connected: MCP is off (--no-mcp or --no-tools)"
                    .into(),
            ),
        }
    }
    let sandbox = effective_sandbox(&args, &prepared.session.settings);
    let models = Arc::new(prepared.models);
    let for_credentials = Arc::clone(&models);
    Ok(Opened {
        session: prepared.session,
        resources: prepared.resources,
        has_model: prepared.has_model,
        available_models: Box::new(move || models.available()),
        credentials: Box::new(move |m| for_credentials.credentials(m)),
        sandbox,
        warnings,
    })
}

fn set_sandbox(args: &Args, cwd: &Path, mode: SandboxMode) -> Result<(), String> {
    let mut args = args.clone();
    args.sandbox = Some(mode);
    let config = super::config::load(&args)?;
    for w in install_sandbox(&args, &config.settings, cwd, &config.agent_dir)? {
        eprintln!("Warning: {w}");
    }
    Ok(())
}

fn serve(args: Args) -> i32 {
    let agent_dir = crate::resources::agent_dir();
    let logins = crate::resources::oauth::providers()
        .iter()
        .map(|p| Login {
            provider: p.id().to_string(),
            name: p.name().to_string(),
        })
        .collect();
    let auth_path = agent_dir.join("auth.json");
    let (open_args, sandbox_args) = (args.clone(), args);
    crate::modes::acp::run(AcpEnv {
        open: Box::new(move |req| open(&open_args, req)),
        set_sandbox: Box::new(move |cwd, mode| set_sandbox(&sandbox_args, cwd, mode)),
        agent_dir,
        logins,
        signed_in: Box::new(move |provider| {
            crate::resources::auth::AuthStorage::load(auth_path.clone()).has_auth(provider)
        }),
    })
}
