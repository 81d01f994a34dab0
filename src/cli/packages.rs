//! `pi install | remove | uninstall | update | list | config`: pi's package subcommands,
//! handled before normal argument parsing, with pi's usage texts, messages and exit codes.

use std::io::IsTerminal;

use crate::resources::packages::{
    self, Missing, PackageContext, PackageManager, PackageResources, ResourceKind, Scope,
};
use crate::resources::settings::Settings;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Command {
    Install,
    Remove,
    Update,
    List,
}

impl Command {
    fn name(self) -> &'static str {
        match self {
            Command::Install => "install",
            Command::Remove => "remove",
            Command::Update => "update",
            Command::List => "list",
        }
    }

    fn usage(self) -> &'static str {
        match self {
            Command::Install => "pi install <source> [-l]",
            Command::Remove => "pi remove <source> [-l]",
            Command::Update => {
                "pi update [source|self|pi] [--self|--extensions|--models|--all] [--extension <source>] [--force]"
            }
            Command::List => "pi list",
        }
    }
}

/// What `update` should touch (pi 1.x: pi itself unless told otherwise).
#[derive(Debug, Clone, PartialEq, Eq)]
enum UpdateTarget {
    All,
    SelfOnly,
    Packages(Option<String>),
    Models,
}

#[derive(Debug, Default)]
struct Parsed {
    source: Option<String>,
    local: bool,
    help: bool,
    invalid_option: Option<String>,
    invalid_argument: Option<String>,
    missing_value: Option<String>,
    conflict: Option<String>,
    self_flag: bool,
    extensions_flag: bool,
    all_flag: bool,
    models_flag: bool,
    extension_source: Option<String>,
}

/// Handles a package subcommand when `argv[0]` is one; `None` otherwise.
pub fn run(argv: &[String]) -> Option<i32> {
    let first = argv.first()?.as_str();
    if first == "config" {
        return Some(run_config());
    }
    let command = match first {
        "install" => Command::Install,
        "remove" | "uninstall" => Command::Remove,
        "update" => Command::Update,
        "list" => Command::List,
        _ => return None,
    };
    Some(run_command(command, &argv[1..]))
}

/// The options of a package command, tokenised by lexopt. Options are whole words as typed
/// (`-lx` is one unknown option, `--local=x` too), and `--` is an option these commands do not
/// know, as in pi.
fn parse(command: Command, rest: &[String]) -> Parsed {
    use lexopt::Arg;
    let mut p = Parsed::default();
    let mut parser = lexopt::Parser::from_args(rest.iter());
    parser.set_short_equals(false);
    let update = command == Command::Update;
    let local_ok = matches!(command, Command::Install | Command::Remove);
    loop {
        let raw_next = parser
            .try_raw_args()
            .and_then(|raw| raw.peek().map(|a| a.to_string_lossy().into_owned()));
        if raw_next.as_deref() == Some("--") {
            // lexopt would end the options here; pi calls it an unknown option.
            parser.try_raw_args().and_then(|mut raw| raw.next());
            p.invalid_option.get_or_insert_with(|| "--".into());
            continue;
        }
        let word = match parser.next() {
            Ok(Some(Arg::Long(name))) => format!("--{name}"),
            Ok(Some(Arg::Short(c))) => format!("-{c}"),
            Ok(Some(Arg::Value(v))) => {
                let v = v.to_string_lossy().into_owned();
                if v == "-" {
                    p.invalid_option.get_or_insert(v);
                } else if p.source.is_none() {
                    p.source = Some(v);
                } else {
                    p.invalid_argument.get_or_insert(v);
                }
                continue;
            }
            Ok(None) | Err(_) => break,
        };
        // The rest of the word: `=value` of a long option, more letters of a short one.
        let attached = parser
            .optional_value()
            .map(|v| v.to_string_lossy().into_owned());
        let typed = match (&attached, word.starts_with("--")) {
            (Some(v), true) => format!("{word}={v}"),
            (Some(v), false) => format!("{word}{v}"),
            (None, _) => word,
        };
        match typed.as_str() {
            "-h" | "--help" => p.help = true,
            "-l" | "--local" if local_ok => p.local = true,
            "--self" if update => p.self_flag = true,
            "--extensions" if update => p.extensions_flag = true,
            "--all" if update => p.all_flag = true,
            "--models" if update => p.models_flag = true,
            // `--force` only matters for reinstalling pi itself, which this build cannot do.
            "--force" if update => {}
            "--extension" if update => {
                let value = parser
                    .try_raw_args()
                    .and_then(|mut raw| raw.next_if(|v| !v.to_string_lossy().starts_with('-')));
                match value {
                    Some(_) if p.extension_source.is_some() => {
                        p.conflict
                            .get_or_insert("--extension can only be provided once".into());
                    }
                    Some(v) => p.extension_source = Some(v.to_string_lossy().into_owned()),
                    None => {
                        p.missing_value.get_or_insert(typed);
                    }
                }
            }
            _ => {
                p.invalid_option.get_or_insert(typed);
            }
        }
    }
    p
}

/// pi 1.x's reading of `update`'s arguments; conflicts are recorded in `p.conflict`.
fn update_target(p: &mut Parsed) -> UpdateTarget {
    let mut conflict = |m: &str| {
        p.conflict.get_or_insert(m.to_string());
    };
    let (selff, ext, all, models) = (p.self_flag, p.extensions_flag, p.all_flag, p.models_flag);
    if all && (selff || ext || models || p.extension_source.is_some()) {
        conflict("--all cannot be combined with --self, --extensions, --models, or --extension");
    }
    if all && p.source.is_some() {
        conflict("--all cannot be combined with a positional source");
    }
    if models {
        if selff || ext || all || p.extension_source.is_some() {
            conflict(
                "--models cannot be combined with --self, --extensions, --all, or --extension",
            );
        }
        if p.source.is_some() {
            conflict("--models cannot be combined with a positional source");
        }
        return UpdateTarget::Models;
    }
    if let Some(src) = p.extension_source.clone() {
        if selff || ext || all {
            conflict("--extension cannot be combined with --self, --extensions, or --all");
        }
        if p.source.is_some() {
            conflict("--extension cannot be combined with a positional source");
        }
        return UpdateTarget::Packages(Some(src));
    }
    if let Some(s) = p.source.clone() {
        if s == "self" || s == "pi" {
            return if ext {
                UpdateTarget::All
            } else {
                UpdateTarget::SelfOnly
            };
        }
        if ext || selff || all {
            conflict(
                "positional update targets cannot be combined with --self, --extensions, or --all",
            );
        }
        return UpdateTarget::Packages(Some(s));
    }
    match (all || (selff && ext), selff, ext) {
        (true, _, _) => UpdateTarget::All,
        (_, true, _) => UpdateTarget::SelfOnly,
        (_, _, true) => UpdateTarget::Packages(None),
        _ => UpdateTarget::SelfOnly,
    }
}

/// chalk-like styling, on only when stdout is a terminal.
struct Style {
    on: bool,
}

impl Style {
    fn paint(&self, code: &str, text: &str) -> String {
        if self.on {
            format!(
                "\x1b[{code}m{text}\x1b[{}m",
                if code == "1" || code == "2" {
                    "22"
                } else {
                    "39"
                }
            )
        } else {
            text.to_string()
        }
    }
    fn red(&self, t: &str) -> String {
        self.paint("31", t)
    }
    fn green(&self, t: &str) -> String {
        self.paint("32", t)
    }
    fn dim(&self, t: &str) -> String {
        self.paint("2", t)
    }
    fn bold(&self, t: &str) -> String {
        self.paint("1", t)
    }
}

fn style() -> Style {
    Style {
        on: std::io::stdout().is_terminal(),
    }
}

fn help_text(command: Command, s: &Style) -> String {
    let usage = format!("{}\n  {}\n", s.bold("Usage:"), command.usage());
    let body = match command {
        Command::Install => "\nInstall a package and add it to settings.\n\nOptions:\n  -l, --local    Install project-locally (.pi/settings.json)\n\nExamples:\n  pi install npm:@foo/bar\n  pi install git:github.com/user/repo\n  pi install git:git@github.com:user/repo\n  pi install https://github.com/user/repo\n  pi install ssh://git@github.com/user/repo\n  pi install ./local/path\n",
        Command::Remove => "\nRemove a package and its source from settings.\nAlias: pi uninstall <source> [-l]\n\nOptions:\n  -l, --local    Remove from project settings (.pi/settings.json)\n\nExamples:\n  pi remove npm:@foo/bar\n  pi uninstall npm:@foo/bar\n",
        Command::Update => "\nUpdate pi, installed packages, or model catalogs.\n\nOptions:\n  --self                  Update pi only (default when no target is given)\n  --extensions            Update installed packages only\n  --models                Refresh model catalogs only\n  --all                   Update pi and installed packages\n  --extension <source>    Update one package only\n  --force                 Reinstall pi even if the current version is latest\n\nShort forms:\n  pi update                Update pi only\n  pi update --all          Update pi and all extensions\n  pi update --models       Refresh model catalogs only\n  pi update <source>       Update one package\n  pi update pi             Update pi only (self works as alias to pi)\n",
        Command::List => "\nList installed packages from user and project settings.\n",
    };
    format!("{usage}{body}")
}

fn usage_error(s: &Style, message: &str, hint: &str) -> i32 {
    eprintln!("{}", s.red(message));
    eprintln!("{}", s.dim(hint));
    1
}

fn run_command(command: Command, rest: &[String]) -> i32 {
    let s = style();
    let mut p = parse(command, rest);
    let target = (command == Command::Update).then(|| update_target(&mut p));
    if p.help {
        println!("{}", help_text(command, &s));
        return 0;
    }
    let usage_hint = format!("Usage: {}", command.usage());
    if let Some(opt) = &p.invalid_option {
        return usage_error(
            &s,
            &format!("Unknown option {opt} for \"{}\".", command.name()),
            &format!("Use \"pi --help\" or \"{}\".", command.usage()),
        );
    }
    if let Some(opt) = &p.missing_value {
        return usage_error(&s, &format!("Missing value for {opt}."), &usage_hint);
    }
    if let Some(arg) = &p.invalid_argument {
        return usage_error(&s, &format!("Unexpected argument {arg}."), &usage_hint);
    }
    if let Some(conflict) = &p.conflict {
        return usage_error(&s, conflict, &usage_hint);
    }
    let needs_source = matches!(command, Command::Install | Command::Remove);
    let source = match (&p.source, needs_source) {
        (None, true) => {
            return usage_error(
                &s,
                &format!("Missing {} source.", command.name()),
                &usage_hint,
            )
        }
        (src, _) => src.clone().unwrap_or_default(),
    };
    let (cwd, agent_dir) = match locations() {
        Ok(l) => l,
        Err(e) => {
            eprintln!("{}", s.red(&format!("Error: {e}")));
            return 1;
        }
    };
    let mut settings = Settings::load(&agent_dir, &cwd);
    for w in &settings.warnings {
        eprintln!(
            "{}",
            s.paint("33", &format!("Warning (package command): {w}"))
        );
    }
    let mut manager = PackageManager::new(PackageContext::new(&cwd, &agent_dir, &settings));
    let dim_on = s.on;
    manager.on_progress(move |m| println!("{}", Style { on: dim_on }.dim(m)));
    let scope = if p.local { Scope::Project } else { Scope::User };
    let result = match command {
        Command::Install => manager
            .install(&source, scope)
            .and_then(|()| manager.record(&mut settings, &source, scope))
            .map(|_| println!("{}", s.green(&format!("Installed {source}")))),
        Command::Remove => match manager
            .remove(&source, scope)
            .and_then(|()| manager.unrecord(&mut settings, &source, scope))
        {
            Ok(true) => {
                println!("{}", s.green(&format!("Removed {source}")));
                Ok(())
            }
            Ok(false) => {
                eprintln!(
                    "{}",
                    s.red(&format!("No matching package found for {source}"))
                );
                return 1;
            }
            Err(e) => Err(e),
        },
        Command::List => {
            print_list(&manager, &settings, &s);
            Ok(())
        }
        Command::Update => {
            let bare = p.source.is_none()
                && !(p.self_flag || p.extensions_flag || p.all_flag || p.models_flag)
                && p.extension_source.is_none();
            return run_update(&mut manager, &settings, target, bare, &s);
        }
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("{}", s.red(&format!("Error: {e}")));
            1
        }
    }
}

fn locations() -> Result<(std::path::PathBuf, std::path::PathBuf), String> {
    let cwd = std::env::current_dir()
        .map_err(|e| format!("Could not read the working directory: {e}"))?;
    Ok((cwd, crate::resources::agent_dir()))
}

fn run_update(
    manager: &mut PackageManager,
    settings: &Settings,
    target: Option<UpdateTarget>,
    bare: bool,
    s: &Style,
) -> i32 {
    let target = target.unwrap_or(UpdateTarget::SelfOnly);
    if bare {
        println!(
            "{}",
            s.dim("Extensions are skipped. Run pi update --extensions to update extensions.")
        );
    }
    let only = match &target {
        UpdateTarget::All => Some(None),
        UpdateTarget::Packages(one) => Some(one.clone()),
        UpdateTarget::SelfOnly => None,
        UpdateTarget::Models => {
            // Our model catalog is built in; there is nothing to download.
            println!(
                "{}",
                s.green("Model catalogs are built in; nothing to refresh")
            );
            return 0;
        }
    };
    if let Some(only) = only {
        let global = packages::entries_of(settings.global_map());
        let project = packages::entries_of(settings.project_map());
        let report = match manager.update(only.as_deref(), &global, &project) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{}", s.red(&format!("Error: {e}")));
                return 1;
            }
        };
        if packages::manager::offline() {
            println!(
                "{}",
                s.paint("33", "Skipped package updates (offline mode)")
            );
        } else if report.updated.is_empty() {
            let line = match &only {
                Some(one) => format!("{one} is already up to date"),
                None => "Packages are already up to date".to_string(),
            };
            println!("{}", s.green(&line));
        } else {
            let n = report.updated.len();
            let plural = if n == 1 { "" } else { "s" };
            println!("{}", s.green(&format!("Updated {n} package{plural}:")));
            for line in &report.updated {
                println!("  {line}");
            }
        }
    }
    if target == UpdateTarget::All || target == UpdateTarget::SelfOnly {
        // This build is a single binary, not an npm install, so (like pi's standalone binary)
        // it cannot replace itself.
        eprintln!("error: pi cannot self-update this installation.");
        eprintln!("Replace the pi binary with a newer release build to update it.");
        if let Ok(exe) = std::env::current_exe() {
            eprintln!();
            eprintln!("Location of pi executable: {}", exe.display());
        }
        return 1;
    }
    0
}

fn print_list(manager: &PackageManager, settings: &Settings, s: &Style) {
    let ctx = manager.context();
    let mut probe = PackageManager::new(ctx.clone());
    let groups = [
        (Scope::User, packages::entries_of(settings.global_map())),
        (Scope::Project, packages::entries_of(settings.project_map())),
    ];
    if groups.iter().all(|(_, e)| e.is_empty()) {
        println!("{}", s.dim("No packages installed."));
        return;
    }
    let mut printed_any = false;
    for (scope, entries) in &groups {
        if entries.is_empty() {
            continue;
        }
        if printed_any {
            println!();
        }
        printed_any = true;
        let title = match scope {
            Scope::User => "User packages:",
            Scope::Project => "Project packages:",
        };
        println!("{}", s.bold(title));
        for e in entries {
            let display = if e.filters.is_some() {
                format!("{} (filtered)", e.source)
            } else {
                e.source.clone()
            };
            println!("  {display}");
            let parsed = packages::PackageSource::parse(&e.source);
            if let Ok(path) = probe.install_path(&parsed, *scope) {
                if path.exists() {
                    println!("{}", s.dim(&format!("    {}", path.display())));
                }
            }
        }
    }
}

/// `pi config`: on a terminal, the selector that switches package resources on and off (as
/// pi's); otherwise the same groups printed with each resource's state.
fn run_config() -> i32 {
    let s = style();
    let (cwd, agent_dir) = match locations() {
        Ok(l) => l,
        Err(e) => {
            eprintln!("{}", s.red(&format!("Error: {e}")));
            return 1;
        }
    };
    let resolved = packages::resolve_for_run(&agent_dir, &cwd, true, Missing::Skip);
    for w in &resolved.warnings {
        eprintln!("{}", s.paint("33", &format!("Warning: {w}")));
    }
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        let mut settings = Settings::load(&agent_dir, &cwd);
        let mode = crate::tui::theme::ColorMode::detect();
        let name = settings.str(&["theme"]).unwrap_or("dark").to_string();
        let themes = agent_dir.join("themes");
        crate::tui::theme::install(
            crate::tui::theme::load_named(&name, &[&themes], mode)
                .unwrap_or_else(|_| crate::tui::theme::Theme::dark().with_mode(mode)),
        );
        crate::tui::keybindings::install(crate::tui::keybindings::load(&agent_dir).bindings);
        return match crate::modes::interactive::standalone::configure_packages(
            &resolved,
            &mut settings,
        ) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("{}", s.red(&format!("Error: terminal failure: {e}")));
                1
            }
        };
    }
    print_config(&resolved, &s);
    0
}

fn print_config(resolved: &PackageResources, s: &Style) {
    let groups = packages::config::groups(resolved);
    if groups.is_empty() {
        println!("{}", s.dim("No package resources found."));
        return;
    }
    for (i, group) in groups.iter().enumerate() {
        if i > 0 {
            println!();
        }
        println!("{}", s.bold(&group.label));
        for (kind, items) in &group.kinds {
            println!("  {}", kind_label(*kind));
            for item in items {
                let mark = if item.enabled { "[x]" } else { "[ ]" };
                println!("    {mark} {}", item.display_name);
            }
        }
    }
}

fn kind_label(kind: ResourceKind) -> &'static str {
    match kind {
        ResourceKind::Extensions => "Extensions",
        ResourceKind::Skills => "Skills",
        ResourceKind::Prompts => "Prompts",
        ResourceKind::Themes => "Themes",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(command: Command, args: &[&str]) -> Parsed {
        parse(
            command,
            &args.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
        )
    }

    #[test]
    fn options_are_whole_words() {
        let a = p(Command::Install, &["npm:x", "-l"]);
        assert_eq!((a.source.as_deref(), a.local), (Some("npm:x"), true));
        assert!(p(Command::Install, &["--local", "x"]).local);
        for bad in ["-lx", "--local=1", "--", "-", "--self"] {
            let a = p(Command::Install, &["x", bad]);
            assert_eq!(a.invalid_option.as_deref(), Some(bad), "{bad}");
        }
        assert_eq!(
            p(Command::List, &["-l"]).invalid_option.as_deref(),
            Some("-l")
        );
        assert_eq!(
            p(Command::Remove, &["a", "b", "c"])
                .invalid_argument
                .as_deref(),
            Some("b")
        );
        assert!(p(Command::Update, &["-h"]).help);
    }

    #[test]
    fn update_extension_takes_a_value_that_is_no_option() {
        let a = p(Command::Update, &["--extension", "npm:y", "--force"]);
        assert_eq!(a.extension_source.as_deref(), Some("npm:y"));
        assert!(a.invalid_option.is_none());
        let a = p(Command::Update, &["--extension", "--self"]);
        assert_eq!(a.missing_value.as_deref(), Some("--extension"));
        assert!(a.self_flag);
        let a = p(Command::Update, &["--extension", "a", "--extension", "b"]);
        assert_eq!(
            a.conflict.as_deref(),
            Some("--extension can only be provided once")
        );
    }
}
