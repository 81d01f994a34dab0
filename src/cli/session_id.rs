//! pi 1.x's session flags around naming: `--session-id <id>` opens this folder's session with
//! exactly that id or creates it (with `--no-session` it names the in-memory session, with
//! `--fork` the new copy), and `-n/--name` gives the session its display name at start-up.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use super::args::Args;
use crate::ai::now_ms;
use crate::resources::settings::Settings;
use crate::session::dir::{fork_with_id, session_dir, session_file_name};
use crate::session::ids::iso_timestamp;
use crate::session::{SessionHeader, SessionWriter};
use crate::util::sort;

/// pi's rule: letters, digits, `.`, `_` and `-`, starting and ending with a letter or digit.
pub fn validate(id: &str) -> Result<(), String> {
    let bytes = id.as_bytes();
    let allowed = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-');
    let ends_ok = |b: Option<&u8>| b.is_some_and(u8::is_ascii_alphanumeric);
    if bytes.iter().all(allowed) && ends_ok(bytes.first()) && ends_ok(bytes.last()) {
        Ok(())
    } else {
        Err("Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character".into())
    }
}

/// The flag combinations pi refuses, and an invalid id. `Err` is the line for stderr.
pub fn check_flags(args: &Args) -> Result<(), String> {
    let Some(id) = &args.session_id else {
        return Ok(());
    };
    let conflicts: Vec<&str> = [
        (args.session.is_some(), "--session"),
        (args.continue_session, "--continue"),
        (args.resume, "--resume"),
    ]
    .into_iter()
    .filter_map(|(on, flag)| on.then_some(flag))
    .collect();
    if !conflicts.is_empty() {
        return Err(format!(
            "Error: --session-id cannot be combined with {}",
            conflicts.join(", ")
        ));
    }
    validate(id).map_err(|e| format!("Error: {e}"))
}

/// The id in a session file's header line, if it is a session file.
fn header_id(path: &Path) -> Option<(String, String)> {
    let file = std::fs::File::open(path).ok()?;
    let mut line = String::new();
    BufReader::new(file).read_line(&mut line).ok()?;
    let v: serde_json::Value = serde_json::from_str(line.trim()).ok()?;
    if v.get("type")?.as_str()? != "session" {
        return None;
    }
    let cwd = v.get("cwd").and_then(|c| c.as_str()).unwrap_or("");
    Some((v.get("id")?.as_str()?.to_string(), cwd.to_string()))
}

/// This folder's session file whose header id is exactly `id`. In a shared session directory
/// (`--session-dir`, `sessionDir`) only sessions of this working directory count.
pub fn find_exact(dir: &Path, agent_dir: &Path, cwd: &str, id: &str) -> Option<PathBuf> {
    let shared = dir != session_dir(agent_dir, cwd);
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    sort::sort(&mut files);
    files.into_iter().find(|p| {
        header_id(p).is_some_and(|(found, found_cwd)| found == id && (!shared || found_cwd == cwd))
    })
}

fn new_session(id: &str, cwd: &str, dir: Option<&Path>) -> SessionWriter {
    let ts = iso_timestamp(now_ms());
    let path = dir.map(|d| d.join(session_file_name(&ts, id)));
    SessionWriter::with_header(SessionHeader::new(id, &ts, cwd, None), path)
}

/// The session for a run with `--session-id`; `None` when the flag is not given.
pub fn select(
    args: &Args,
    settings: &Settings,
    agent_dir: &Path,
    cwd: &str,
) -> Option<Result<(SessionWriter, Vec<String>), String>> {
    let id = args.session_id.as_deref()?;
    if args.no_session {
        return Some(Ok((new_session(id, cwd, None), Vec::new())));
    }
    let dir = super::sessions::sessions_dir(args, settings, agent_dir, cwd);
    let existing = find_exact(&dir, agent_dir, cwd, id);
    Some(match (&args.fork, existing) {
        (Some(_), Some(_)) => Err(format!("Session already exists with id '{id}'")),
        (Some(source), None) => fork_into(source, id, agent_dir, &dir, cwd),
        (None, Some(path)) => SessionWriter::open(&path)
            .map_err(|e| format!("Error: Could not open session {}: {e}", path.display())),
        (None, None) => Ok((
            new_session(id, cwd, Some(&dir)),
            vec![format!(
                "No project session found with id '{id}'; creating a new session with that id."
            )],
        )),
    })
}

fn fork_into(
    source: &str,
    id: &str,
    agent_dir: &Path,
    dir: &Path,
    cwd: &str,
) -> Result<(SessionWriter, Vec<String>), String> {
    let path =
        super::sessions::resolve(source, agent_dir, dir, cwd).map_err(|e| format!("Error: {e}"))?;
    if !path.exists() {
        return Err(format!("Error: No session found matching '{source}'"));
    }
    let forked = fork_with_id(&path, dir, cwd, id)
        .map_err(|e| format!("Error: Could not fork session: {e}"))?;
    SessionWriter::open(&forked)
        .map_err(|e| format!("Error: Could not open session {}: {e}", forked.display()))
}

/// `-n/--name`: the trimmed name, recorded as the session's display name.
pub fn apply_name(args: &Args, session: &mut SessionWriter) -> Result<(), String> {
    let Some(raw) = &args.name else {
        return Ok(());
    };
    let name = raw.trim();
    if name.is_empty() {
        return Err("Error: --name requires a non-empty value".into());
    }
    session
        .append_session_info(name)
        .map(|_| ())
        .map_err(|e| format!("Error: Could not write session: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_follow_pis_rule() {
        for ok in ["a", "run-42", "A.b_c-9", "1"] {
            assert!(validate(ok).is_ok(), "{ok}");
        }
        for bad in ["", "-a", "a-", ".a", "a.", "a b", "a/b", "é", "_"] {
            assert!(validate(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn conflicting_flags() {
        let args = Args {
            session_id: Some("x".into()),
            continue_session: true,
            resume: true,
            ..Default::default()
        };
        assert_eq!(
            check_flags(&args).unwrap_err(),
            "Error: --session-id cannot be combined with --continue, --resume"
        );
        let fork = Args {
            session_id: Some("x".into()),
            fork: Some("y".into()),
            no_session: true,
            ..Default::default()
        };
        assert!(check_flags(&fork).is_ok());
        let bad = Args {
            session_id: Some("-x".into()),
            ..Default::default()
        };
        assert!(check_flags(&bad)
            .unwrap_err()
            .starts_with("Error: Session id must"));
    }
}
