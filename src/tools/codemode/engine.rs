//! One script run in an embedded QuickJS (`rquickjs`), on a thread of its own. The script's
//! only way out is the host function the prelude (`prelude.js`) wraps: each `tools.x()` call
//! becomes a promise that a `pi-codemode-call` thread resolves, so `Promise.all` over several
//! calls runs them at once. Abort, the deadline and `exit()` stop the script through QuickJS's
//! interrupt hook, which the engine polls while JavaScript runs; the heap is capped, so a script
//! that allocates without end fails with `InternalError: out of memory`. QuickJS alone has no
//! file, network, process or timer API, and none is added.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{select, Sender};
use rquickjs::context::EvalOptions;
use rquickjs::{Context, Ctx, Function, Object, Runtime, Value as JsValue};
use serde_json::Value;

use crate::ai::Abort;

const PRELUDE: &str = include_str!("prelude.js");
/// The names errors' frames give the prelude (left out of what the model sees) and the script.
const PRELUDE_FILE: &str = "codemode-prelude.js";
const SCRIPT_FILE: &str = "codemode.js";

/// The script as the body of an async function. The opening shares the script's first line, so
/// the line numbers of its errors are the script's own, as pi 1.x counts them.
fn wrap_script(source: &str) -> String {
    format!("(async (tools, console) => {{{source}\n}})")
}

fn eval_options(filename: &str) -> EvalOptions {
    let mut options = EvalOptions::default();
    options.strict = false;
    options.filename = Some(filename.to_string());
    options
}

/// The script's heap, as pi 1.x caps it: a runaway script fails, the process lives.
pub const MEMORY_LIMIT_BYTES: usize = 256 * 1024 * 1024;
/// How deep JavaScript may recurse before `RangeError`, inside the engine thread's own stack.
const JS_STACK_BYTES: usize = 4 * 1024 * 1024;
const ENGINE_THREAD_STACK: usize = 16 * 1024 * 1024;
/// How often the engine looks at the abort flag and the deadline while waiting for a tool.
const POLL: Duration = Duration::from_millis(50);

/// A tool a script may call: `id` is its JavaScript name (`mcp__dev_radius__search`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct ScriptTool {
    pub id: String,
    pub name: String,
    pub description: String,
}

/// What the host does for a script: runs its tool calls (on their own threads) and answers its
/// lookups (`searchTools`, `describeTool`, `describeNamespace`) on the engine thread.
pub trait ScriptHost: Send + Sync {
    /// Runs tool `name`; `Ok` is the JSON value the promise resolves to, `Err` the rejection's
    /// message. Must honour `abort`. `started` is called once the call has its id and record,
    /// so calls the script made together are numbered in the order it made them.
    fn call_tool(
        &self,
        name: &str,
        args: Value,
        abort: &Abort,
        started: &dyn Fn(),
    ) -> Result<Value, String>;
    /// A lookup global called with its arguments (as a JSON array).
    fn call_global(&self, name: &str, args: Value) -> Result<Value, String>;
    /// `models.<method>(...args)` (arguments as a JSON array), on its own thread like a tool
    /// call. Must honour `abort`.
    fn call_model(&self, method: &str, args: Value, abort: &Abort) -> Result<Value, String> {
        let _ = (args, abort);
        Err(format!("models.{method} is not available"))
    }
}

/// One item of a script's output, in call order.
#[derive(Debug, Clone, PartialEq)]
pub enum OutputItem {
    Text(String),
    Console(String),
    Image { data: String, mime_type: String },
}

/// Why a script did not complete.
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptError {
    /// The script threw (or failed to compile): the error's text, `Name: message` and frames.
    Thrown(String),
    Timeout(u64),
    Aborted,
    /// The engine itself failed (could not start).
    Sandbox(String),
}

/// A finished script.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptResult {
    pub output: Vec<OutputItem>,
    /// `Ok(returned value as JSON text, if any)` or the failure.
    pub outcome: Result<Option<String>, ScriptError>,
    /// The `store()` writes of a successful script: `(key, Some(json))` sets, `(key, None)`
    /// deletes, in write order.
    pub store_writes: Vec<(String, Option<String>)>,
    /// Tool calls made, with whether each finished (`false`: cut off by the end).
    pub calls_started: usize,
}

/// A script to run.
pub struct ScriptRun {
    pub source: String,
    pub tools: Vec<ScriptTool>,
    /// `load()`'s values: key to JSON text.
    pub store: serde_json::Map<String, Value>,
    pub timeout: Option<Duration>,
    pub memory_limit: usize,
}

/// Runs `run` on a new engine thread and waits for it (honouring `abort`, which the engine
/// itself also sees through its interrupt hook).
pub fn run_script(run: ScriptRun, host: Arc<dyn ScriptHost>, abort: &Abort) -> ScriptResult {
    let (tx, rx) = crossbeam_channel::bounded(1);
    let thread_abort = abort.clone();
    let spawned = std::thread::Builder::new()
        .name("pi-codemode".into())
        .stack_size(ENGINE_THREAD_STACK)
        .spawn(move || {
            let result = crate::util::panic::catch(|| execute(run, host, &thread_abort))
                .unwrap_or_else(|panic| failed(format!("the engine failed: {panic}")));
            let _ = tx.send(result);
        });
    if let Err(e) = spawned {
        return failed(format!("could not start the script thread: {e}"));
    }
    // The engine ends by itself within a poll of an abort or its deadline (the interrupt hook),
    // so this waits for it rather than leaving it running.
    rx.recv()
        .unwrap_or_else(|_| failed("the script thread ended without a result".into()))
}

fn failed(message: String) -> ScriptResult {
    ScriptResult {
        output: Vec::new(),
        outcome: Err(ScriptError::Sandbox(message)),
        store_writes: Vec::new(),
        calls_started: 0,
    }
}

/// What the prelude reported through the host function, shared with the native closure.
#[derive(Default)]
struct Bridge {
    output: Vec<OutputItem>,
    /// Tool and lookup calls made since the engine last looked.
    requests: Vec<Request>,
    done: Option<(bool, Option<String>, Option<String>)>,
}

enum Request {
    Tool { id: u64, name: String, args: String },
    Model { id: u64, name: String, args: String },
    Global { id: u64, name: String, args: String },
}

type Settled = (u64, Result<Value, String>);

fn execute(run: ScriptRun, host: Arc<dyn ScriptHost>, abort: &Abort) -> ScriptResult {
    let started = Instant::now();
    let deadline = run.timeout.map(|t| started + t);
    let runtime = match Runtime::new() {
        Ok(r) => r,
        Err(e) => return failed(format!("could not create the JavaScript runtime: {e}")),
    };
    runtime.set_memory_limit(run.memory_limit);
    runtime.set_max_stack_size(JS_STACK_BYTES);
    let exited = Arc::new(AtomicBool::new(false));
    {
        let abort = abort.clone();
        let exited = Arc::clone(&exited);
        runtime.set_interrupt_handler(Some(Box::new(move || {
            abort.is_aborted()
                || exited.load(Ordering::Relaxed)
                || deadline.is_some_and(|d| Instant::now() >= d)
        })));
    }
    let context = match Context::full(&runtime) {
        Ok(c) => c,
        Err(e) => return failed(format!("could not create the JavaScript context: {e}")),
    };
    let bridge = Rc::new(RefCell::new(Bridge::default()));
    let tools_json = serde_json::to_string(&run.tools).unwrap_or_else(|_| "[]".into());
    let store_json: serde_json::Map<String, Value> = run
        .store
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.to_string())))
        .collect();
    let store_json = Value::Object(store_json).to_string();
    let setup = context.with(|ctx| -> rquickjs::Result<()> {
        let host_fn = host_function(ctx.clone(), Rc::clone(&bridge), Arc::clone(&exited))?;
        let make: Function = ctx.eval_with_options(PRELUDE, eval_options(PRELUDE_FILE))?;
        let api: Object = make.call((host_fn, tools_json, store_json))?;
        ctx.globals().set("__pi_api", api)
    });
    if let Err(e) = setup {
        let text = context.with(|ctx| exception_text(&ctx, e));
        // An abort or the deadline may interrupt the prelude itself.
        let error = if abort.is_aborted() {
            ScriptError::Aborted
        } else if deadline.is_some_and(|d| Instant::now() >= d) {
            ScriptError::Timeout(run.timeout.map_or(0, |t| t.as_millis() as u64))
        } else {
            ScriptError::Sandbox(text)
        };
        return finish(&bridge, Err(error), 0);
    }
    // The script's synchronous start runs inside this call; an interrupt (abort, deadline,
    // exit) or an error the prelude could not catch comes back as an exception here.
    let started_run = context.with(|ctx| -> Result<(), String> {
        let run_fn = || -> rquickjs::Result<()> {
            let api: Object = ctx.globals().get("__pi_api")?;
            match ctx.eval_with_options::<Function, _>(
                wrap_script(&run.source),
                eval_options(SCRIPT_FILE),
            ) {
                Ok(script) => api.get::<_, Function>("run")?.call::<_, ()>((script,)),
                // A syntax error: reported as the script's own error, as pi reports it.
                Err(rquickjs::Error::Exception) => {
                    let error = ctx.catch();
                    api.get::<_, Function>("failed")?.call::<_, ()>((error,))
                }
                Err(e) => Err(e),
            }
        };
        run_fn().map_err(|e| exception_text(&ctx, e))
    });
    let mut uncaught = started_run.err();

    let call_abort = Abort::new();
    let turns = Arc::new(Turnstile::default());
    let (settled_tx, settled_rx) = crossbeam_channel::unbounded::<Settled>();
    let mut in_flight = 0usize;
    let mut calls_started = 0usize;
    let abort_signal = abort.signal();
    let outcome = loop {
        while runtime.is_job_pending() {
            if let Err(e) = runtime.execute_pending_job() {
                // An exception out of a job is an interrupt or out-of-memory: the checks below
                // name an interrupt; a script's own errors land in its promise.
                uncaught.get_or_insert_with(|| e.to_string());
                break;
            }
        }
        let requests = std::mem::take(&mut bridge.borrow_mut().requests);
        for request in requests {
            match request {
                Request::Tool { id, name, args } => {
                    calls_started += 1;
                    in_flight += 1;
                    let ticket = calls_started as u64 - 1;
                    spawn_call(
                        id,
                        Call::Tool(name),
                        args,
                        Some((&turns, ticket)),
                        &host,
                        &call_abort,
                        &settled_tx,
                    );
                }
                Request::Model { id, name, args } => {
                    in_flight += 1;
                    // `models` calls are not numbered among the tool calls: no turn to wait.
                    spawn_call(
                        id,
                        Call::Model(name),
                        args,
                        None,
                        &host,
                        &call_abort,
                        &settled_tx,
                    );
                }
                Request::Global { id, name, args } => {
                    let args = serde_json::from_str(&args).unwrap_or(Value::Null);
                    let _ = settled_tx.send((id, host.call_global(&name, args)));
                    in_flight += 1;
                }
            }
        }
        if abort.is_aborted() {
            break Err(ScriptError::Aborted);
        }
        if let Some(d) = deadline.filter(|d| Instant::now() >= *d) {
            let _ = d;
            break Err(ScriptError::Timeout(
                run.timeout.map_or(0, |t| t.as_millis() as u64),
            ));
        }
        if let Some((ok, payload, _)) = bridge.borrow().done.clone() {
            break if ok {
                Ok(payload)
            } else {
                Err(ScriptError::Thrown(payload.unwrap_or_default()))
            };
        }
        if let Some(text) = uncaught.take() {
            break Err(ScriptError::Thrown(text));
        }
        if in_flight == 0 {
            let stalled = context.with(|ctx| -> rquickjs::Result<bool> {
                let api: Object = ctx.globals().get("__pi_api")?;
                let stalled: Function = api.get("stalled")?;
                stalled.call(())
            });
            if stalled.is_err() {
                break Err(ScriptError::Sandbox("the script's state was lost".into()));
            }
            continue;
        }
        let wait = deadline.map_or(POLL, |d| {
            d.saturating_duration_since(Instant::now()).min(POLL)
        });
        select! {
            recv(settled_rx) -> got => {
                let Ok((id, result)) = got else { continue };
                in_flight -= 1;
                let _ = context.with(|ctx| -> rquickjs::Result<()> {
                    let api: Object = ctx.globals().get("__pi_api")?;
                    let settle: Function = api.get("settle")?;
                    match result {
                        // `null` settles as `undefined` (an unknown model, or `describeTool` of an
                        // unknown name).
                        Ok(Value::Null) => settle.call((id, true, None::<String>)),
                        Ok(value) => settle.call((id, true, Some(value.to_string()))),
                        Err(message) => settle.call((id, false, message)),
                    }
                });
            }
            recv(abort_signal) -> _ => {}
            default(wait) => {}
        }
    };
    // Calls still running are cancelled; their late results go to a channel nobody reads.
    call_abort.abort();
    finish(&bridge, outcome, calls_started)
}

fn finish(
    bridge: &Rc<RefCell<Bridge>>,
    outcome: Result<Option<String>, ScriptError>,
    calls_started: usize,
) -> ScriptResult {
    let mut b = bridge.borrow_mut();
    let store_writes = match (&outcome, &b.done) {
        (Ok(_), Some((true, _, Some(writes)))) => parse_writes(writes),
        _ => Vec::new(),
    };
    ScriptResult {
        output: std::mem::take(&mut b.output),
        outcome,
        store_writes,
        calls_started,
    }
}

fn parse_writes(json: &str) -> Vec<(String, Option<String>)> {
    let Ok(Value::Array(list)) = serde_json::from_str::<Value>(json) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|entry| {
            let pair = entry.as_array()?;
            let key = pair.first()?.as_str()?.to_string();
            Some((key, pair.get(1).and_then(Value::as_str).map(str::to_string)))
        })
        .collect()
}

/// What a call thread runs: a tool, or a `models` method.
enum Call {
    Tool(String),
    Model(String),
}

/// Lets a script's calls start one at a time, in the order it made them; each lets the next go
/// once it has its id (or has finished, or the script is over).
#[derive(Default)]
struct Turnstile {
    next: std::sync::Mutex<u64>,
    moved: std::sync::Condvar,
}

impl Turnstile {
    fn wait_for(&self, ticket: u64, abort: &Abort) {
        let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
        while *next < ticket && !abort.is_aborted() {
            next = self
                .moved
                .wait_timeout(next, POLL)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    fn pass(&self, ticket: u64) {
        let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
        if *next <= ticket {
            *next = ticket + 1;
        }
        self.moved.notify_all();
    }
}

fn spawn_call(
    id: u64,
    call: Call,
    args: String,
    turn: Option<(&Arc<Turnstile>, u64)>,
    host: &Arc<dyn ScriptHost>,
    abort: &Abort,
    settled: &Sender<Settled>,
) {
    let turn = turn.map(|(turns, ticket)| (Arc::clone(turns), ticket));
    let host = Arc::clone(host);
    let abort = abort.clone();
    let settled = settled.clone();
    let args: Value = serde_json::from_str(&args).unwrap_or(Value::Object(Default::default()));
    let gate = turn.clone();
    // Detached: a call stuck in the kernel must not hold the script; its late result is dropped.
    let spawned = std::thread::Builder::new()
        .name("pi-codemode-call".into())
        .spawn({
            let settled = settled.clone();
            move || {
                if let Some((turns, ticket)) = &turn {
                    turns.wait_for(*ticket, &abort);
                }
                let started = || {
                    if let Some((turns, ticket)) = &turn {
                        turns.pass(*ticket);
                    }
                };
                let result = crate::util::panic::catch(|| match &call {
                    Call::Tool(name) => host.call_tool(name, args, &abort, &started),
                    Call::Model(method) => host.call_model(method, args, &abort),
                })
                .unwrap_or_else(|panic| {
                    let name = match &call {
                        Call::Tool(name) => name.clone(),
                        Call::Model(method) => format!("models.{method}"),
                    };
                    Err(format!("Tool {name} failed unexpectedly: {panic}"))
                });
                started();
                let _ = settled.send((id, result));
            }
        });
    if let Err(e) = spawned {
        if let Some((turns, ticket)) = gate {
            turns.pass(ticket);
        }
        let _ = settled.send((id, Err(format!("Could not start the tool call: {e}"))));
    }
}

/// The one native function the prelude gets: `host(kind, ...)`.
fn host_function<'js>(
    ctx: Ctx<'js>,
    bridge: Rc<RefCell<Bridge>>,
    exited: Arc<AtomicBool>,
) -> rquickjs::Result<Function<'js>> {
    Function::new(
        ctx,
        move |kind: String, a: JsValue<'js>, b: JsValue<'js>, c: JsValue<'js>| {
            let mut bridge = bridge.borrow_mut();
            match kind.as_str() {
                "done" => {
                    let ok = a.as_bool().unwrap_or(false);
                    bridge.done = Some((ok, js_string(&b), js_string(&c)));
                    // Unwinds a script that called exit() inside try/catch.
                    exited.store(true, Ordering::Relaxed);
                }
                "output" => {
                    let data = js_string(&b).unwrap_or_default();
                    let item = match js_string(&a).as_deref() {
                        Some("image") => OutputItem::Image {
                            data,
                            mime_type: js_string(&c).unwrap_or_default(),
                        },
                        Some("console") => OutputItem::Console(data),
                        _ => OutputItem::Text(data),
                    };
                    bridge.output.push(item);
                }
                "call" | "global" | "model" => {
                    let id = a.as_number().unwrap_or(0.0) as u64;
                    let name = js_string(&b).unwrap_or_default();
                    let args = js_string(&c).unwrap_or_else(|| "{}".into());
                    bridge.requests.push(match kind.as_str() {
                        "call" => Request::Tool { id, name, args },
                        "model" => Request::Model { id, name, args },
                        _ => Request::Global { id, name, args },
                    });
                }
                _ => {}
            }
        },
    )
}

fn js_string(v: &JsValue<'_>) -> Option<String> {
    v.as_string().and_then(|s| s.to_string().ok())
}

/// The text of a pending exception (a syntax error in the prelude, out of memory at start).
fn exception_text(ctx: &Ctx<'_>, e: rquickjs::Error) -> String {
    if !matches!(e, rquickjs::Error::Exception) {
        return e.to_string();
    }
    let caught = ctx.catch();
    if let Some(ex) = caught.as_exception() {
        return ex.to_string().trim_end().to_string();
    }
    caught
        .as_string()
        .and_then(|s| s.to_string().ok())
        .unwrap_or_else(|| "unknown error".into())
}
