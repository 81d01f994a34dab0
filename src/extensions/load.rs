//! Starting a session's extensions: every executable extension in a process of its own, every
//! TypeScript/JavaScript one in a single shared Node.js bridge process; the handshake (each
//! `hello` answered by a `register` within the handshake timeout, in parallel); and extension
//! CLI flags resolved with pi's rules.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver};
use serde_json::{json, Map, Value};

use super::discovery::{ExtensionSource, Launch};
use super::extension::Extension;
use super::host::{ExtensionError, ExtensionHost, HostOptions, Loaded};
use super::process::{ExtensionProcess, ProcessEvent, SharedProcess};
use super::protocol::{self, FlagType, Registration};

type Starting = Vec<Option<(ExtensionSource, ExtensionProcess)>>;

/// The longest an extension may ask the handshake to wait while it installs what it needs.
const MAX_LOADING_MS: u64 = 300_000;

/// The least time the Node.js bridge gets to start and report in.
const NODE_START: Duration = Duration::from_secs(15);

impl ExtensionHost {
    /// Starts every source, waits (in parallel, up to the handshake timeout) for each
    /// registration, resolves CLI flags and sends each extension its flag values. Extensions
    /// that fail to start or register are reported and left out.
    pub fn load(sources: Vec<ExtensionSource>, opts: HostOptions) -> Loaded {
        let (tx, rx) = unbounded::<(usize, ProcessEvent)>();
        let cwd = opts.cwd.to_string_lossy().into_owned();
        let report = |path: &str, error: String| {
            (opts.errors)(&ExtensionError {
                extension_path: path.into(),
                event: "load".into(),
                error,
            })
        };
        let node = start_bridge(&sources, &opts);
        let mut starting: Starting = Vec::new();
        for (i, source) in sources.into_iter().enumerate() {
            let tx = tx.clone();
            let sink = Arc::new(move |ev| {
                let _ = tx.send((i, ev));
            });
            let shown = source.path.to_string_lossy().into_owned();
            let hello = |ext: Option<u64>| {
                protocol::hello(&protocol::Hello {
                    ext,
                    agent_dir: &opts.agent_dir.to_string_lossy(),
                    project_trusted: opts.project_trusted,
                    cwd: &cwd,
                    mode: &opts.mode,
                    has_ui: opts.has_ui || opts.ui.has_ui(),
                    extension_path: &shown,
                    session_file: opts.session_file.as_deref(),
                    cli_flags: &opts.cli_flags,
                })
            };
            let started = match (&source.launch, &node) {
                (Launch::Node(module), Some(Ok(shared))) => {
                    let p = shared.attach(source.path.clone(), i as u64, sink);
                    let mut msg = hello(Some(i as u64));
                    // The file to import (`dir/index.ts` for a directory extension).
                    msg["module"] = module.to_string_lossy().into_owned().into();
                    p.send(msg);
                    Ok(p)
                }
                (Launch::Node(_), Some(Err(e))) => Err(e.clone()),
                _ => source.command().and_then(|argv| {
                    let p = ExtensionProcess::spawn(source.path.clone(), &argv, &opts.cwd, sink)?;
                    p.send(hello(None));
                    Ok(p)
                }),
            };
            match started {
                Ok(p) => starting.push(Some((source, p))),
                Err(e) => {
                    report(&shown, e);
                    starting.push(None);
                }
            }
        }
        drop(tx);
        let registrations = await_registrations(&starting, &rx, &opts, &report);
        let mut extensions = Vec::new();
        for (slot, reg) in starting.into_iter().zip(registrations) {
            if let (Some((source, process)), Some(registration)) = (slot, reg) {
                extensions.push(Extension {
                    source,
                    process,
                    registration: RwLock::new(registration),
                    flag_values: Map::new(),
                });
            }
        }
        let errors = resolve_flags(&mut extensions, &opts.cli_flags);
        let extensions: Vec<Arc<Extension>> = extensions.into_iter().map(Arc::new).collect();
        for ext in &extensions {
            ext.process
                .send(json!({"type": "flags", "values": ext.flag_values}));
        }
        let node = node.and_then(Result::ok);
        let host = Self::build(extensions, &opts, node);
        for ext in host.extensions() {
            host.register_load_mcp_servers(ext);
        }
        super::calls::spawn_dispatcher(rx, Arc::downgrade(&host));
        Loaded { host, errors }
    }
}

/// The one Node.js process for every TypeScript/JavaScript source (`None` when there is none),
/// told first what pi's built-in tools look like so the extensions' tool factories match them.
fn start_bridge(
    sources: &[ExtensionSource],
    opts: &HostOptions,
) -> Option<Result<SharedProcess, String>> {
    if !sources.iter().any(|s| matches!(s.launch, Launch::Node(_))) {
        return None;
    }
    let started = super::node_bridge::command()
        .and_then(|argv| SharedProcess::spawn(&argv, &opts.cwd, protocol::PROTOCOL_VERSION));
    // On failure each Node source reports the reason itself.
    if let Ok(shared) = &started {
        let tools: Vec<Value> = opts
            .builtin_tools
            .iter()
            .map(|t| {
                json!({"name": t.name(), "label": t.name(), "description": t.description(),
                    "parameters": t.parameters(), "promptSnippet": t.prompt_snippet(),
                    "promptGuidelines": t.prompt_guidelines()})
            })
            .collect();
        shared.send(json!({"type": "builtins", "tools": tools}));
    }
    Some(started)
}

/// Waits for each started process's `register` line; returns the registrations by index.
fn await_registrations(
    starting: &Starting,
    rx: &Receiver<(usize, ProcessEvent)>,
    opts: &HostOptions,
    report: &dyn Fn(&str, String),
) -> Vec<Option<Registration>> {
    let mut regs: Vec<Option<Registration>> = vec![None; starting.len()];
    let mut waiting: Vec<bool> = starting.iter().map(Option::is_some).collect();
    // Node.js itself takes a while to start on a busy machine before the bridge can say it
    // is loading (which extends the wait): it gets at least NODE_START.
    let node = starting
        .iter()
        .flatten()
        .any(|(s, _)| matches!(s.launch, Launch::Node(_)));
    let first_wait = if node {
        opts.handshake_timeout.max(NODE_START)
    } else {
        opts.handshake_timeout
    };
    let mut deadline = Instant::now() + first_wait;
    while waiting.iter().any(|w| *w) {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok((i, ev)) = rx.recv_timeout(left) else {
            break;
        };
        let Some((source, process)) = &starting[i] else {
            continue;
        };
        let shown = source.path.to_string_lossy().into_owned();
        match ev {
            ProcessEvent::Stderr(line) => (opts.stderr)(&source.name(), &line),
            ProcessEvent::Died(reason) if waiting[i] => {
                report(&shown, format!("failed to start: {reason}"));
                waiting[i] = false;
            }
            ProcessEvent::Died(_) => {}
            // The bridge is installing what it needs to load TypeScript (once per machine):
            // the handshake waits for that.
            ProcessEvent::Message(msg) if msg["method"] == "loading" => {
                process.mark_handled();
                let more = msg["params"]["ms"]
                    .as_u64()
                    .unwrap_or(0)
                    .min(MAX_LOADING_MS);
                deadline = deadline.max(Instant::now() + Duration::from_millis(more));
            }
            ProcessEvent::Message(msg) if waiting[i] => {
                process.mark_handled();
                waiting[i] = false;
                match Registration::parse(&msg) {
                    Ok(r) => regs[i] = Some(r),
                    Err(e) => {
                        let reason = if msg.get("error").is_some() {
                            e
                        } else {
                            format!("invalid registration: {e}")
                        };
                        report(&shown, reason.clone());
                        process.disable(reason);
                    }
                }
            }
            ProcessEvent::Message(_) => process.mark_handled(),
        }
    }
    for (i, w) in waiting.iter().enumerate() {
        if let (true, Some((source, process))) = (*w, &starting[i]) {
            let reason = format!(
                "did not register within {} ms; extension disabled",
                opts.handshake_timeout.as_millis()
            );
            report(&source.path.to_string_lossy(), reason.clone());
            process.disable(reason);
        }
    }
    regs
}

/// Matches the command line's unknown flags against registered ones (pi's rules: a boolean
/// flag is `true` whatever followed it, a string flag needs a value, anything unclaimed is an
/// unknown option). Fills each extension's `flag_values`; returns the errors.
fn resolve_flags(extensions: &mut [Extension], cli: &[(String, Option<String>)]) -> Vec<String> {
    let mut errors = Vec::new();
    let mut unknown = Vec::new();
    for ext in extensions.iter_mut() {
        let flags = ext.registration().flags.clone();
        for f in &flags {
            if let Some(d) = &f.default {
                ext.flag_values.insert(f.name.clone(), d.clone());
            }
        }
    }
    for (name, value) in cli {
        let owners: Vec<usize> = extensions
            .iter()
            .enumerate()
            .filter(|(_, e)| e.registration().flags.iter().any(|f| &f.name == name))
            .map(|(i, _)| i)
            .collect();
        if owners.is_empty() {
            unknown.push(format!("--{name}"));
            continue;
        }
        for i in owners {
            let ext = &mut extensions[i];
            let Some(kind) = ext
                .registration()
                .flags
                .iter()
                .find(|f| &f.name == name)
                .map(|f| f.kind)
            else {
                continue;
            };
            let v = match (kind, value) {
                (FlagType::Boolean, _) => Value::Bool(true),
                (FlagType::String, Some(v)) => Value::String(v.clone()),
                (FlagType::String, None) => {
                    errors.push(format!("Extension flag \"--{name}\" requires a value"));
                    continue;
                }
            };
            ext.flag_values.insert(name.clone(), v);
        }
    }
    if !unknown.is_empty() {
        let noun = if unknown.len() == 1 {
            "option"
        } else {
            "options"
        };
        errors.push(format!("Unknown {noun}: {}", unknown.join(", ")));
    }
    errors
}
