//! pi 1.x's `project_trust` event at start-up: before anything of a folder with its own pi
//! resources loads, the user's extensions and those given with `-e` (never the folder's own,
//! which wait for the decision) may decide whether to trust it. The answer holds for the
//! process, per folder, as in pi. Only extensions whose source mentions the event are started
//! for the question (and stopped after it), so a run whose extensions do not care starts no
//! extra process.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use super::args::Args;
use crate::extensions::{discover, DiscoveryOptions, ExtensionHost, ExtensionSource, Scope};
use crate::resources::settings::Settings;
use crate::resources::trust::{ExtensionTrust, ProjectScope};

/// Answers already given in this process, by folder.
fn answers() -> &'static Mutex<HashMap<PathBuf, Option<ExtensionTrust>>> {
    static ANSWERS: OnceLock<Mutex<HashMap<PathBuf, Option<ExtensionTrust>>>> = OnceLock::new();
    ANSWERS.get_or_init(Default::default)
}

/// What the first user or CLI extension answering `project_trust` for `cwd` decided (`None`
/// when none decided).
pub fn ask_extensions(args: &Args, agent_dir: &Path, cwd: &Path) -> Option<ExtensionTrust> {
    let mut known = answers().lock().unwrap_or_else(|p| p.into_inner());
    if let Some(answer) = known.get(cwd) {
        return *answer;
    }
    let answer = ask(args, agent_dir, cwd);
    known.insert(cwd.to_path_buf(), answer);
    answer
}

fn ask(args: &Args, agent_dir: &Path, cwd: &Path) -> Option<ExtensionTrust> {
    let scope = ProjectScope {
        cwd: cwd.to_path_buf(),
        home: crate::resources::trust::home_dir(),
        agent_dir: agent_dir.to_path_buf(),
        trusted: false,
        decided: true,
    };
    let settings = Settings::load_with(agent_dir, cwd, false);
    let (sources, _, _) = discover(&DiscoveryOptions {
        agent_dir,
        cwd,
        scope: &scope,
        settings_paths: settings.string_list("extensions"),
        package_paths: Vec::new(),
        cli_paths: args.extensions.clone(),
        no_extensions: args.no_extensions,
    });
    let askers: Vec<ExtensionSource> = sources
        .into_iter()
        .filter(|s| s.scope != Scope::Project && mentions_project_trust(s))
        .enumerate()
        .map(|(index, s)| ExtensionSource { index, ..s })
        .collect();
    if askers.is_empty() {
        return None;
    }
    let opts = super::extensions::host_options(args, agent_dir, cwd, &scope, &settings, None, None);
    let loaded = ExtensionHost::load(askers, opts);
    let answer = loaded
        .host
        .project_trust(&cwd.to_string_lossy(), &crate::ai::Abort::new());
    loaded.host.shutdown();
    answer.map(|(trusted, remember)| ExtensionTrust { trusted, remember })
}

/// Whether the extension's source text names the event (its file, or the files of a directory
/// extension up to two levels down, `node_modules` left out).
fn mentions_project_trust(source: &ExtensionSource) -> bool {
    const LIMIT: u64 = 4 << 20;
    let mentions = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() <= LIMIT)
            && crate::util::files::read_limited(
                p,
                crate::util::files::Limit {
                    bytes: LIMIT,
                    what: "an extension source file",
                },
            )
            .is_ok_and(|b| b.windows(13).any(|w| w == b"project_trust"))
    };
    if source.path.is_file() {
        return mentions(&source.path);
    }
    let mut dirs = vec![(source.path.clone(), 0)];
    while let Some((dir, depth)) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if path.is_dir() {
                if depth < 2 && name != "node_modules" {
                    dirs.push((path, depth + 1));
                }
            } else if mentions(&path) {
                return true;
            }
        }
    }
    false
}
