//! The `pi` command: parse flags, pick the mode, resolve model and key, build the session and
//! hand over to a mode. Every user-facing failure is one clear line on stderr and exit 1.

mod acp;
pub mod args;
mod auth;
mod config;
mod extensions;
pub mod flags;
pub mod inputs;
mod login;
mod models;
mod packages;
mod project_trust;
mod session_id;
mod sessions;
mod setup;

use std::io::{IsTerminal, Write};

use args::Mode;

/// Entry point; returns the process exit code.
pub fn main() -> i32 {
    // As pi does: every program pi starts (an editor, a clipboard tool, …) can tell it runs
    // under a coding agent. Set before any thread exists.
    std::env::set_var("PI_CODING_AGENT", "true");
    std::env::set_var("AI_AGENT", "pi");
    let argv: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if argv.first().map(String::as_str) == Some("auth") {
        return auth::run(&argv[1..]);
    }
    // Everything below works on the current directory; pi stops here when it is gone.
    if let Err(e) = config::current_dir() {
        eprintln!("{e}");
        return 1;
    }
    if let Some(code) = packages::run(&argv) {
        return code;
    }
    if argv.first().map(String::as_str) == Some("mcp") {
        return mcp_command(&argv[1..]);
    }
    // `pi acp` (as opencode and goose name it) is `pi --mode acp`.
    let argv = match argv.split_first() {
        Some((first, rest)) if first == "acp" => ["--mode", "acp"]
            .into_iter()
            .map(String::from)
            .chain(rest.iter().cloned())
            .collect(),
        _ => argv,
    };
    let args = args::parse(&argv);
    let stdin_tty = std::io::stdin().is_terminal();
    for w in &args.warnings {
        eprintln!("Warning: {w}");
    }
    if !args.errors.is_empty() {
        for e in &args.errors {
            eprintln!("Error: {e}");
        }
        return 1;
    }
    if args.offline {
        std::env::set_var("PI_OFFLINE", "1");
        std::env::set_var("PI_SKIP_VERSION_CHECK", "1");
    }
    // `--version`, `--help` and `--list-models` answer on stdout, redirected or not, as pi
    // 1.x does (0.73.1 wrote them to stderr unless stdin was a terminal).
    let mut info: Box<dyn Write> = Box::new(std::io::stdout());
    if args.version {
        let _ = writeln!(
            info,
            "{}",
            crate::version_line(std::io::stdout().is_terminal())
        );
        return 0;
    }
    if let Some(file) = &args.export {
        // pi: the optional output path is the first bare message.
        let out = args.messages.first().map(std::path::Path::new);
        return match crate::session::export::export_html(std::path::Path::new(file), out) {
            Ok(path) => {
                // pi 1.x answers before taking over stdout: always on stdout.
                println!("Exported to: {}", path.display());
                0
            }
            Err(e) => {
                eprintln!("Error: {e}");
                1
            }
        };
    }
    if args.help {
        let _ = write!(info, "{}", flags::help_text());
        return 0;
    }
    // Unknown `--flags` are checked once extensions have registered theirs (in setup).
    if let Some(provider) = &args.login {
        return login::run(provider);
    }
    if args.fork.is_some() {
        let mut conflicts = Vec::new();
        if args.session.is_some() {
            conflicts.push("--session");
        }
        if args.continue_session {
            conflicts.push("--continue");
        }
        if args.resume {
            conflicts.push("--resume");
        }
        if args.no_session {
            conflicts.push("--no-session");
        }
        if !conflicts.is_empty() {
            eprintln!(
                "Error: --fork cannot be combined with {}",
                conflicts.join(", ")
            );
            return 1;
        }
    }
    if let Err(e) = session_id::check_flags(&args) {
        eprintln!("{e}");
        return 1;
    }
    if matches!(args.mode, Some(Mode::Rpc | Mode::Acp)) && !args.file_args.is_empty() {
        eprintln!("Error: @file arguments are not supported in RPC mode");
        return 1;
    }
    // pi 1.x: `--provider` only narrows `--model`; alone it is a mistake, not a choice.
    if let (Some(provider), None, None) = (&args.provider, &args.model, &args.list_models) {
        eprintln!(
            "Error: --provider requires --model (for example: --provider {provider} --model <pattern>)"
        );
        return 1;
    }
    let not_yet = |what: &str| {
        eprintln!("Error: {what} is not available in this build yet.");
        1
    };
    if args.mode == Some(Mode::Rpc) {
        return setup::run_rpc(args);
    }
    if args.mode == Some(Mode::Acp) {
        return acp::run(args);
    }
    if args.list_models.is_none() && stdin_tty && !args.print && args.mode != Some(Mode::Json) {
        if !std::io::stdout().is_terminal() {
            return not_yet("Interactive mode with stdout redirected (use -p \"…\")");
        }
        return setup::run_interactive(args);
    }
    setup::run(args, stdin_tty, &mut *info)
}

/// `pi mcp …`, which needs no session.
fn mcp_command(args: &[String]) -> i32 {
    let cwd = match std::env::current_dir() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("Error: cannot read the current directory: {e}");
            return 1;
        }
    };
    let (mut out, mut err) = (std::io::stdout(), std::io::stderr());
    let mut io = crate::mcp::command::Io {
        out: &mut out,
        err: &mut err,
    };
    crate::mcp::command::run(args, &crate::resources::agent_dir(), &cwd, &mut io)
}
