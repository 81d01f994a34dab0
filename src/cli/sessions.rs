//! Which session a run writes to, by pi's flags: new by default; `--no-session` in memory;
//! `-c` the newest in the session directory; `--session <path|id-prefix>`; `--fork` copies a
//! session into a new file here. The session directory is `--session-dir`, else
//! `PI_CODING_AGENT_SESSION_DIR`, else the `sessionDir` setting, else pi's per-cwd directory.

use std::path::{Path, PathBuf};

use super::args::Args;
use crate::modes::interactive::standalone::MissingCwdChoice;
use crate::resources::expand_tilde;
use crate::resources::settings::Settings;
use crate::session::dir::{
    find_by_id_prefix, fork, looks_like_path, most_recent, session_dir, Found,
};
use crate::session::SessionWriter;

/// The directory sessions are stored in and looked up from.
pub fn sessions_dir(args: &Args, settings: &Settings, agent_dir: &Path, cwd: &str) -> PathBuf {
    let chosen = args
        .session_dir
        .clone()
        .or_else(|| {
            std::env::var("PI_CODING_AGENT_SESSION_DIR")
                .ok()
                .filter(|v| !v.is_empty())
        })
        .or_else(|| settings.str(&["sessionDir"]).map(str::to_string));
    match chosen {
        Some(d) => {
            let p = expand_tilde(&d);
            if p.is_absolute() {
                p
            } else {
                Path::new(cwd).join(p)
            }
        }
        None => session_dir(agent_dir, cwd),
    }
}

/// A `--session`/`--fork` argument resolved to a file.
pub(super) fn resolve(
    arg: &str,
    agent_dir: &Path,
    dir: &Path,
    cwd: &str,
) -> Result<PathBuf, String> {
    if looks_like_path(arg) {
        let p = expand_tilde(arg);
        return Ok(if p.is_absolute() {
            p
        } else {
            Path::new(cwd).join(p)
        });
    }
    match find_by_id_prefix(agent_dir, dir, arg) {
        Some(Found::Local(s)) => Ok(s.path),
        Some(Found::Global(s)) => Err(format!(
            "Session found in different project: {}\nUse --fork {arg} to copy it into this project.",
            s.cwd
        )),
        None => Err(format!("No session found matching '{arg}'")),
    }
}

/// The error of a start-up the user cancelled (interactive mode exits 0 on it).
pub const CANCELLED: &str = "cancelled";

/// Asks what to do with a session whose recorded folder (first argument) is gone.
pub type AskMissingCwd<'a> = &'a dyn Fn(&str, &str) -> MissingCwdChoice;

/// A resumed session whose recorded working directory is gone stops the run, as in pi, except
/// in interactive mode (`ask` given), which asks as pi 1.x does: continue here, fork it into
/// `dir` (this folder's sessions) as a new session, or cancel ([`CANCELLED`]).
pub fn check_cwd(
    selected: (SessionWriter, Vec<String>),
    cwd: &str,
    dir: &Path,
    ask: Option<AskMissingCwd>,
) -> Result<(SessionWriter, Vec<String>), String> {
    let (session, warnings) = selected;
    let Some(message) = missing_cwd(&session, cwd) else {
        return Ok((session, warnings));
    };
    let Some(ask) = ask else {
        return Err(message);
    };
    match ask(&session.header().cwd, cwd) {
        MissingCwdChoice::Continue => Ok((session, warnings)),
        MissingCwdChoice::Cancel => Err(CANCELLED.into()),
        MissingCwdChoice::Fork => {
            let source = session
                .path()
                .expect("a missing cwd is only reported for files");
            let forked = fork(source, dir, cwd)
                .map_err(|e| format!("Error: Could not fork session: {e}"))?;
            SessionWriter::open(&forked)
                .map_err(|e| format!("Error: Could not open session {}: {e}", forked.display()))
        }
    }
}

/// The directory a run works in: a session read from a file runs in the directory it recorded
/// (pi builds its runtime on the session's cwd, so `--session` of another folder's session
/// works there), a new one, or one whose directory is gone, in the current one.
pub fn run_dir(session: &SessionWriter, cwd: PathBuf) -> PathBuf {
    let stored = Path::new(&session.header().cwd);
    if session.path().is_some() && stored.is_absolute() && stored.is_dir() {
        stored.to_path_buf()
    } else {
        cwd
    }
}

/// pi's error for a session whose recorded working directory no longer exists.
fn missing_cwd(session: &SessionWriter, cwd: &str) -> Option<String> {
    let file = session.path()?;
    let stored = session.header().cwd.as_str();
    if stored.is_empty() || Path::new(stored).exists() {
        return None;
    }
    Some(format!(
        "Stored session working directory does not exist: {stored}\nSession file: {}\nCurrent working directory: {cwd}",
        file.display()
    ))
}

/// Opens or creates the session for this run; warnings about skipped lines are returned.
pub fn select(
    args: &Args,
    settings: &Settings,
    agent_dir: &Path,
    cwd: &str,
) -> Result<(SessionWriter, Vec<String>), String> {
    if args.no_session {
        return Ok((SessionWriter::in_memory(cwd), Vec::new()));
    }
    if args.resume {
        return Err("Error: --resume needs the interactive session picker, which is not available in this build yet. Use --session <id> or -c.".into());
    }
    let dir = sessions_dir(args, settings, agent_dir, cwd);
    let open = |path: &Path| -> Result<(SessionWriter, Vec<String>), String> {
        SessionWriter::open(path).map_err(|e| match e {
            // pi 1.x's words for a file whose first line is not a session header.
            crate::session::file::LoadError::InvalidHeader => format!(
                "Error: Session file is not a valid pi session: {}",
                path.display()
            ),
            e => format!("Error: Could not open session {}: {e}", path.display()),
        })
    };
    if let Some(arg) = &args.fork {
        let source = resolve(arg, agent_dir, &dir, cwd).map_err(|e| format!("Error: {e}"))?;
        if !source.exists() {
            return Err(format!("Error: No session found matching '{arg}'"));
        }
        let forked =
            fork(&source, &dir, cwd).map_err(|e| format!("Error: Could not fork session: {e}"))?;
        return open(&forked);
    }
    if let Some(arg) = &args.session {
        // pi prints this one without an "Error:" prefix.
        let path = resolve(arg, agent_dir, &dir, cwd).map_err(|e| {
            if e.starts_with("No session found") {
                e
            } else {
                format!("Error: {e}")
            }
        })?;
        // An empty file is a new session written into it, as in pi.
        if path.metadata().is_ok_and(|m| !m.is_file() || m.len() > 0) {
            return open(&path);
        }
        // pi creates a new session at exactly the path given.
        return Ok((SessionWriter::new(cwd, Some(path), None), Vec::new()));
    }
    if args.continue_session {
        if let Some(path) = most_recent(&dir) {
            return open(&path);
        }
    }
    Ok((SessionWriter::create(&dir, cwd, None), Vec::new()))
}
