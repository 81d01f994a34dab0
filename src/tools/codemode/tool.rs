//! The `codemode` tool: runs a script (`engine`) whose `tools.*` calls go through the run's own
//! tool path (`ToolContext::nested`: validation, the `tool_call`/`tool_result` hooks, the
//! sandbox), and lays the script's output out as pi 1.x does: a `Script completed` or `Script
//! failed` header with the wall time, text and images in order (`==> text N/M <==` when there
//! are several texts), one `<console_output>` block, the error and the calls made before it,
//! and output past the token budget kept as its start and end with the whole in a spill file.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::engine::{
    run_script, OutputItem, ScriptError, ScriptHost, ScriptResult, ScriptRun, ScriptTool,
    MEMORY_LIMIT_BYTES,
};
use super::loadout::{prepare, Mode, DEFAULT_INLINE_BUDGET};
use super::models::{CallLog, ScriptModels};
use super::search::{rank_plain, Ranker};
use super::source::parse_source;
use super::store::StoreLink;
use crate::agent::tool::{NestedTools, Tool, ToolContext, ToolNamespace, ToolOutput};
use crate::ai::{Abort, Content};

pub use super::loadout::CODEMODE_TOOL_NAME;
pub use super::typescript::{declaration, script_identifier};
const DEFAULT_MAX_OUTPUT_TOKENS: u64 = 10_000;
const CHARS_PER_TOKEN: u64 = 4;
const DEFAULT_MAX_WORKERS: usize = 2;
const WORKER_WAIT: Duration = Duration::from_secs(60);
/// Why an aborted script stopped, as Node words an aborted signal's reason.
const ABORTED: &str = "This operation was aborted";

const DESCRIPTION: &str = concat!("Run JavaScript that calls other tools. The input is raw JavaScript (not JSON, no code fence), run as an async function body in a QuickJS sandbox: top-level `await` and `return` work. No Node, file system, network, or timers.
- `await tools.<name>({ ...args })` resolves to a string, or an object if the tool's declaration says so, and rejects with an Error on failure. A tool whose declaration returns an object resolves on failure too when it returned that object; check its fields. Calls still running when the script ends are cancelled.
- Optional first line: `// @options: {\"max_output_tokens\": 10000, \"timeout_ms\": 60000}`

Globals:
- `text(value)`, `image(dataUrlOrImageBlock)`, `console.", "log(...)`, and top-level `return` add output; `exit()` ends the script. With several text items, each starts with a `==> text N/M <==` line, and `console` lines follow the other output in one `<console_output>` block. `image()` also saves the image to a temp file and the result names its path.
- `store(key, value)` and `load(key)` keep JSON values across codemode calls.
- `ALL_TOOLS`, `await searchTools(query, { limit?, namespace? })`, `await describeTool(name)`, `await describeNamespace(name)`: find unlisted tools, such as MCP tools.
- `models`: classifiers and image generation. `await models.getAvailableOfType(\"classifier\" | \"image\")` lists the models you can use; `await models.classify(model, { state, images?, questions })` and `await models.generateImages(model, { input: [text and image blocks] })` resolve to results with `stopReason` (check it) and `errorMessage`; show generated images with `image(block)`.");

const GUIDELINES: &[&str] = &["Use codemode to batch independent tool calls (Promise.allSettled), chain them, or filter large output, instead of many separate calls."];

/// The `codemode` tool. `ranker` orders `searchTools()` results (pi's BM25, which lives with
/// `tool_search` in `mcp::search`); without one a plain word match is used.
#[derive(Default)]
pub struct CodemodeTool {
    pub ranker: Option<Ranker>,
    /// Where `store()`/`load()` values live; without a session, `load()` starts empty and
    /// writes are dropped.
    pub store: Option<StoreLink>,
    /// `codemode.mode`: how the other declared tools are presented.
    pub mode: Mode,
    /// `codemode.inlineBudget`: estimated tokens the description may spend on declarations.
    pub inline_budget: Option<u64>,
    /// The session's model catalog and credentials, for `models` (pi 1.6.0).
    pub models: Option<crate::ai::images::ModelsLink>,
}

impl Tool for CodemodeTool {
    fn name(&self) -> &str {
        CODEMODE_TOOL_NAME
    }
    fn description(&self) -> &str {
        DESCRIPTION
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"code": {"type": "string", "description": "Raw JavaScript source."}},
            "required": ["code"]
        })
    }
    fn prompt_snippet(&self) -> &str {
        "Run JavaScript that calls other tools"
    }
    fn prompt_guidelines(&self) -> &[&str] {
        GUIDELINES
    }
    fn prepare_loadout(&self, specs: &mut Vec<crate::ai::ToolSpec>, tools: &[Arc<dyn Tool>]) {
        prepare(
            specs,
            tools,
            self.mode,
            self.inline_budget.unwrap_or(DEFAULT_INLINE_BUDGET),
            DESCRIPTION,
        );
    }
    fn execute(&self, id: &str, args: Value, ctx: &ToolContext) -> Result<ToolOutput, String> {
        let input = args.get("code").and_then(Value::as_str).unwrap_or("");
        let (code, options) = parse_source(input)?;
        let started = Instant::now();
        // Shown as running before its first call, so a view's timer starts.
        (ctx.on_update)(ToolOutput {
            content: Vec::new(),
            details: Some(calls_details(&[])),
            terminate: false,
            is_error: false,
            structured_content: None,
        });
        let nested = ctx.nested.clone();
        let callable: Vec<Arc<dyn Tool>> = nested
            .as_ref()
            .map(|n| n.tools(&ctx.abort))
            .unwrap_or_default()
            .into_iter()
            .filter(|t| t.name() != CODEMODE_TOOL_NAME)
            .collect();
        let tools: Vec<ScriptTool> = callable
            .iter()
            .map(|t| ScriptTool {
                id: script_identifier(t.name()),
                name: t.name().to_string(),
                description: declaration(t.as_ref()),
            })
            .collect();
        let calls = Arc::new(Mutex::new(Vec::<CallRecord>::new()));
        let host = Arc::new(Host {
            caller_id: id.to_string(),
            nested,
            tools: callable,
            calls: Arc::clone(&calls),
            ranker: self.ranker.clone(),
            models: ScriptModels::new(self.models.as_ref().and_then(|m| m.get()), id),
        });
        let timeout = options.timeout_ms.map(Duration::from_millis);
        let slot = match WorkerSlot::acquire(&ctx.abort, timeout) {
            Ok(slot) => slot,
            Err(why) => {
                let text = format!("Script error:\n{why}\n\nThe script did not start.");
                return Ok(failed_output(started, vec![Content::text(text)]));
            }
        };
        let remaining = timeout.map(|t| {
            t.saturating_sub(started.elapsed())
                .max(Duration::from_millis(1))
        });
        let result = run_script(
            ScriptRun {
                source: code,
                tools,
                store: self
                    .store
                    .as_ref()
                    .map(StoreLink::values)
                    .unwrap_or_default(),
                timeout: remaining,
                memory_limit: MEMORY_LIMIT_BYTES,
            },
            Arc::clone(&host) as Arc<dyn ScriptHost>,
            &ctx.abort,
        );
        drop(slot);
        let generated_images = host.models.generated_images.load(Ordering::Relaxed);
        if result.outcome.is_ok() {
            if let Some(store) = &self.store {
                store.record(&result.store_writes);
            }
        }
        let calls = calls.lock().unwrap_or_else(|p| p.into_inner()).clone();
        // The deadline counts the wait for a worker; the message names the one the script set.
        let mut result = result;
        if let (Err(ScriptError::Timeout(ms)), Some(set)) =
            (&mut result.outcome, options.timeout_ms)
        {
            *ms = set;
        }
        Ok(render(
            result,
            &calls,
            started,
            options
                .max_output_tokens
                .unwrap_or(DEFAULT_MAX_OUTPUT_TOKENS),
            generated_images,
        ))
    }
}

/// A nested call as the result's details record it (pi 1.6.0's `CodemodeCallRecord`).
#[derive(Debug, Clone)]
struct CallRecord {
    id: String,
    name: String,
    /// The arguments as JSON, cut to 200 characters.
    args: String,
    status: &'static str,
    duration_ms: Option<f64>,
    /// The result's text, cut to 500 characters, for a failed call.
    error: Option<String>,
}

impl CallRecord {
    fn to_json(&self) -> Value {
        let mut v =
            json!({"id": self.id, "name": self.name, "args": self.args, "status": self.status});
        if let Some(ms) = self.duration_ms {
            v["durationMs"] = json!(ms);
        }
        if let Some(e) = &self.error {
            v["error"] = json!(e);
        }
        v
    }
}

const ARGS_PREVIEW_CHARS: usize = 200;
const ERROR_PREVIEW_CHARS: usize = 500;

/// `text` cut to `max` characters, the last three of them `...`, as pi cuts previews.
fn preview(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let head: String = text.chars().take(max.saturating_sub(3)).collect();
    format!("{head}...")
}

/// The details a running or finished script shows: `{ calls }`.
fn calls_details(calls: &[CallRecord]) -> Value {
    json!({"calls": calls.iter().map(CallRecord::to_json).collect::<Vec<_>>()})
}

struct Host {
    /// The script's own call id: a call's record is `<id>/?` until the call has its id.
    caller_id: String,
    nested: Option<Arc<dyn NestedTools>>,
    tools: Vec<Arc<dyn Tool>>,
    calls: Arc<Mutex<Vec<CallRecord>>>,
    ranker: Option<Ranker>,
    models: ScriptModels,
}

impl CallLog for Host {
    fn start(&self, id: String, name: &str) -> usize {
        let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        calls.push(CallRecord {
            id,
            name: name.to_string(),
            args: String::new(),
            status: "running",
            duration_ms: None,
            error: None,
        });
        calls.len() - 1
    }

    fn finish(&self, row: usize, status: &'static str) {
        let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(call) = calls.get_mut(row) {
            call.status = status;
        }
    }
}

impl Host {
    /// Shows the calls so far as the script's partial result (`tool_execution_update`).
    fn publish(&self, calls: &[CallRecord]) {
        if let Some(nested) = &self.nested {
            nested.report(ToolOutput {
                content: Vec::new(),
                details: Some(calls_details(calls)),
                terminate: false,
                is_error: false,
                structured_content: None,
            });
        }
    }

    fn calls(&self) -> std::sync::MutexGuard<'_, Vec<CallRecord>> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl ScriptHost for Host {
    fn call_model(&self, method: &str, args: Value, abort: &Abort) -> Result<Value, String> {
        self.models.call(method, args, abort, self)
    }

    fn call_tool(
        &self,
        name: &str,
        args: Value,
        abort: &Abort,
        has_started: &dyn Fn(),
    ) -> Result<Value, String> {
        let Some(nested) = &self.nested else {
            return Err("Tool calls need a session".into());
        };
        let index = {
            let mut calls = self.calls();
            calls.push(CallRecord {
                id: format!("{}/?", self.caller_id),
                name: name.to_string(),
                args: preview(
                    &serde_json::to_string(&args).unwrap_or_default(),
                    ARGS_PREVIEW_CHARS,
                ),
                status: "running",
                duration_ms: None,
                error: None,
            });
            calls.len() - 1
        };
        let started = Instant::now();
        // Shown running once its own start event is out, the order pi 1.6.0's events come in.
        let outcome = nested.call(name, args, abort, &|| {
            self.publish(&self.calls());
            has_started();
        });
        let text = crate::agent::execute::content_text(&outcome.output.content);
        {
            let mut calls = self.calls();
            let record = &mut calls[index];
            record.id = outcome.id.clone();
            record.duration_ms = Some(started.elapsed().as_secs_f64() * 1000.0);
            record.status = match (outcome.is_error, abort.is_aborted()) {
                (false, _) => "ok",
                (true, true) => "cancelled",
                (true, false) => "error",
            };
            if outcome.is_error {
                let shown = if text.is_empty() {
                    format!("Tool \"{name}\" failed")
                } else {
                    text.clone()
                };
                record.error = Some(preview(&shown, ERROR_PREVIEW_CHARS));
            }
            self.publish(&calls);
        }
        // A tool with a structured result (bash, read, MCP tools) resolves to it, an error
        // result that carries one too.
        if let Some(structured) = &outcome.output.structured_content {
            return Ok(structured.clone());
        }
        // An MCP tool (`mcp__<server>__<tool>`, or details naming its server) resolves to its
        // call result, an error result included.
        if name.starts_with("mcp__")
            || outcome
                .output
                .details
                .as_ref()
                .is_some_and(|d| d.get("server").is_some() && d.get("tool").is_some())
        {
            // pi 1.6.0: the call result as the server sent it, less `_meta`.
            if let Some(result) = &outcome.output.structured_content {
                return Ok(result.clone());
            }
            let mut result = json!({"content": outcome.output.content});
            if outcome.is_error {
                result["isError"] = json!(true);
            }
            return Ok(result);
        }
        if let Some(structured) = outcome
            .output
            .details
            .as_ref()
            .and_then(|d| d.get("structuredContent"))
        {
            return Ok(structured.clone());
        }
        if outcome.is_error {
            return Err(if text.is_empty() {
                format!("Tool \"{name}\" failed")
            } else {
                text
            });
        }
        if name == "read" {
            if let Some(image) = outcome.output.content.iter().find_map(|c| match c {
                Content::Image(i) => Some(i),
                _ => None,
            }) {
                return Ok(
                    json!({"type": "image", "data": image.data, "mimeType": image.mime_type, "note": text}),
                );
            }
        }
        Ok(Value::String(text))
    }

    fn call_global(&self, name: &str, args: Value) -> Result<Value, String> {
        let first = args.get(0).cloned().unwrap_or(Value::Null);
        match name {
            "describeTool" => {
                let Some(wanted) = first.as_str() else {
                    return Err("describeTool() expects a tool name".into());
                };
                Ok(self
                    .tools
                    .iter()
                    .find(|t| t.name() == wanted || script_identifier(t.name()) == wanted)
                    .map_or(Value::Null, |t| Value::String(declaration(t.as_ref()))))
            }
            "searchTools" => {
                let Some(query) = first.as_str() else {
                    return Err("searchTools() expects a query string".into());
                };
                let options = args.get(1);
                let limit = match options.and_then(|o| o.get("limit")) {
                    None | Some(Value::Null) => 8,
                    Some(v) => match v.as_u64().filter(|n| *n > 0) {
                        Some(n) => n as usize,
                        None => return Err("searchTools() limit must be a positive integer".into()),
                    },
                };
                let namespace = match options.and_then(|o| o.get("namespace")) {
                    None | Some(Value::Null) => None,
                    Some(Value::String(n)) => Some(n.as_str()).filter(|n| !n.is_empty()),
                    Some(_) => return Err("searchTools() namespace must be a string".into()),
                };
                let candidates: Vec<Arc<dyn Tool>> = self
                    .tools
                    .iter()
                    .filter(|t| {
                        namespace.is_none_or(|wanted| {
                            t.namespace()
                                .is_some_and(|ns| is_namespace_name(&ns, wanted))
                        })
                    })
                    .cloned()
                    .collect();
                let names = match &self.ranker {
                    Some(rank) => rank(query, &candidates, limit),
                    None => rank_plain(query, &candidates, limit),
                };
                Ok(Value::Array(
                    names
                        .iter()
                        .filter_map(|n| self.tools.iter().find(|t| t.name() == n))
                        .map(|t| json!({"name": script_identifier(t.name()), "description": declaration(t.as_ref())}))
                        .collect(),
                ))
            }
            "describeNamespace" => {
                let Some(wanted) = first.as_str() else {
                    return Err("describeNamespace() expects a namespace name".into());
                };
                let mut found: Option<ToolNamespace> = None;
                let mut names = Vec::new();
                for t in &self.tools {
                    let Some(ns) = t.namespace().filter(|ns| is_namespace_name(ns, wanted)) else {
                        continue;
                    };
                    found.get_or_insert(ns);
                    names.push(script_identifier(t.name()));
                }
                let Some(ns) = found else {
                    return Ok(Value::Null);
                };
                let mut out = json!({"name": ns.name});
                if let Some(d) = ns.description.filter(|d| !d.is_empty()) {
                    out["description"] = json!(d);
                }
                if let Some(i) = ns.instructions.filter(|i| !i.is_empty()) {
                    out["instructions"] = json!(i);
                }
                out["tools"] = json!(names);
                Ok(out)
            }
            other => Err(format!("{other} is not available")),
        }
    }
}

/// Whether `query` names `namespace`: its name or an alias, as written or as the same script
/// identifier (`dev-radius` and `dev_radius`).
fn is_namespace_name(namespace: &ToolNamespace, query: &str) -> bool {
    let wanted = script_identifier(query);
    std::iter::once(&namespace.name)
        .chain(&namespace.aliases)
        .any(|n| n == query || script_identifier(n) == wanted)
}

/// The process-wide cap on running scripts (`PI_CODEMODE_MAX_WORKERS`, default 2), taken in
/// arrival order.
struct WorkerSlot;

/// Scripts running, and the tickets of those waiting, in arrival order.
struct Workers {
    running: usize,
    waiting: std::collections::VecDeque<u64>,
    next_ticket: u64,
}

static WORKERS: Mutex<Workers> = Mutex::new(Workers {
    running: 0,
    waiting: std::collections::VecDeque::new(),
    next_ticket: 0,
});
static WORKERS_FREED: Condvar = Condvar::new();

fn max_workers() -> usize {
    std::env::var("PI_CODEMODE_MAX_WORKERS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(DEFAULT_MAX_WORKERS)
}

impl WorkerSlot {
    /// Waits (in arrival order, at most 60 s or the script's deadline, honouring `abort`
    /// within 50 ms) for a free worker.
    fn acquire(abort: &Abort, timeout: Option<Duration>) -> Result<WorkerSlot, String> {
        let wait = timeout.map_or(WORKER_WAIT, |t| t.min(WORKER_WAIT));
        let until = Instant::now() + wait;
        let mut state = WORKERS.lock().unwrap_or_else(|p| p.into_inner());
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        state.waiting.push_back(ticket);
        loop {
            if state.waiting.front() == Some(&ticket) && state.running < max_workers() {
                state.waiting.pop_front();
                state.running += 1;
                WORKERS_FREED.notify_all();
                return Ok(WorkerSlot);
            }
            let now = Instant::now();
            if abort.is_aborted() || now >= until {
                // Out of the queue, so those behind move up.
                state.waiting.retain(|t| *t != ticket);
                WORKERS_FREED.notify_all();
                return Err(if abort.is_aborted() {
                    format!("Script aborted: {ABORTED}")
                } else if timeout.is_some_and(|t| t <= WORKER_WAIT) {
                    format!(
                        "Script timed out: Execution timed out after {} ms while waiting for a free codemode worker",
                        timeout.unwrap_or_default().as_millis()
                    )
                } else {
                    format!("No codemode worker became free within 60 seconds. All {} workers, shared by every session in this process, are held by other scripts. Retry after they finish.", max_workers())
                });
            }
            let step = (until - now).min(Duration::from_millis(50));
            state = WORKERS_FREED
                .wait_timeout(state, step)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

impl Drop for WorkerSlot {
    fn drop(&mut self) {
        let mut state = WORKERS.lock().unwrap_or_else(|p| p.into_inner());
        state.running -= 1;
        WORKERS_FREED.notify_all();
    }
}

fn header(ok: bool, started: Instant) -> String {
    format!(
        "{}\nWall time {:.1} seconds\nOutput:\n",
        if ok {
            "Script completed"
        } else {
            "Script failed"
        },
        started.elapsed().as_secs_f64()
    )
}

fn failed_output(started: Instant, mut body: Vec<Content>) -> ToolOutput {
    body.insert(0, Content::text(header(false, started)));
    ToolOutput {
        content: body,
        details: Some(json!({"calls": []})),
        terminate: false,
        is_error: true,
        structured_content: None,
    }
}

enum Item {
    Text(String),
    Image { data: String, mime_type: String },
}

fn render(
    result: ScriptResult,
    calls: &[CallRecord],
    started: Instant,
    max_tokens: u64,
    generated_images: usize,
) -> ToolOutput {
    let ok = result.outcome.is_ok();
    let mut output = result.output;
    if let Ok(Some(value)) = &result.outcome {
        let text = match serde_json::from_str::<Value>(value) {
            Ok(Value::String(s)) => s,
            _ => value.clone(),
        };
        output.push(OutputItem::Text(text));
    }
    let texts = output
        .iter()
        .filter(|i| matches!(i, OutputItem::Text(_)))
        .count();
    let mut items = Vec::new();
    let mut console = Vec::new();
    let mut n = 0;
    for item in output {
        match item {
            OutputItem::Text(t) => {
                n += 1;
                items.push(Item::Text(if texts > 1 {
                    format!("==> text {n}/{texts} <==\n{t}")
                } else {
                    t
                }));
            }
            OutputItem::Console(line) => console.push(line),
            OutputItem::Image { data, mime_type } => items.push(Item::Image { data, mime_type }),
        }
    }
    if !console.is_empty() {
        items.push(Item::Text(format!(
            "<console_output>\n{}\n</console_output>",
            console.join("\n")
        )));
    }
    let mut cancelled_calls = calls.to_vec();
    for c in &mut cancelled_calls {
        if c.status == "running" {
            c.status = "cancelled";
        }
    }
    if let Err(error) = &result.outcome {
        let head = match error {
            ScriptError::Thrown(text) => text.clone(),
            ScriptError::Timeout(ms) => {
                format!("Script timed out: Execution timed out after {ms} ms")
            }
            ScriptError::Aborted => format!("Script aborted: {ABORTED}"),
            ScriptError::Sandbox(m) => format!("Script sandbox failed: {m}"),
        };
        let summary = if cancelled_calls.is_empty() {
            "No tool calls were made.".to_string()
        } else {
            format!(
                "Tool calls made before the failure (they are not undone): {}",
                cancelled_calls
                    .iter()
                    .map(|c| format!("{} ({})", c.name, c.status))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        items.push(Item::Text(format!("Script error:\n{head}\n\n{summary}")));
    }
    if generated_images > 0 && !items.iter().any(|i| matches!(i, Item::Image { .. })) {
        let s = if generated_images == 1 { "" } else { "s" };
        items.push(Item::Text(format!("Note: models.generateImages() returned {generated_images} image{s} that the script did not show. Show each image block of result.output with image(block).")));
    }
    let items = join_adjacent(items);
    let (items, spill) = apply_budget(items, max_tokens);
    let mut content = vec![Content::text(header(ok, started))];
    for item in join_adjacent(save_images(items)) {
        content.push(match item {
            Item::Text(t) => Content::text(t),
            Item::Image { data, mime_type } => {
                Content::Image(crate::ai::ImageContent { data, mime_type })
            }
        });
    }
    let mut details = calls_details(&cancelled_calls);
    if let Some(path) = spill {
        details["fullOutputPath"] = json!(path);
    }
    ToolOutput {
        content,
        details: Some(details),
        terminate: false,
        is_error: !ok,
        structured_content: None,
    }
}

/// Adjacent text items become one, each part on its own line.
fn join_adjacent(items: Vec<Item>) -> Vec<Item> {
    let mut out: Vec<Item> = Vec::new();
    let mut parts = String::new();
    let mut open = false;
    let mut last = String::new();
    for item in items {
        match item {
            Item::Text(t) => {
                if !last.is_empty() && !last.ends_with('\n') {
                    parts.push('\n');
                    last = "\n".into();
                }
                parts.push_str(&t);
                if !t.is_empty() {
                    last = t;
                }
                open = true;
            }
            image => {
                if open {
                    out.push(Item::Text(std::mem::take(&mut parts)));
                    open = false;
                    last.clear();
                }
                out.push(image);
            }
        }
    }
    if open {
        out.push(Item::Text(parts));
    }
    out
}

/// Keeps the start and end of text over `max_tokens` (4 characters a token) and writes the
/// whole to a spill file.
fn apply_budget(items: Vec<Item>, max_tokens: u64) -> (Vec<Item>, Option<String>) {
    let texts: Vec<&str> = items
        .iter()
        .filter_map(|i| match i {
            Item::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    let combined = texts.join("\n");
    let chars: Vec<char> = combined.chars().collect();
    let budget = (max_tokens * CHARS_PER_TOKEN) as usize;
    if texts.is_empty() || chars.len() <= budget {
        return (items, None);
    }
    let head_chars = budget / 2;
    let tail_chars = budget - head_chars;
    let removed = chars.len() - head_chars - tail_chars;
    let head: String = chars[..head_chars].iter().collect();
    let tail: String = chars[chars.len() - tail_chars..].iter().collect();
    let tokens = |n: usize| n.div_ceil(CHARS_PER_TOKEN as usize);
    let mut text = format!(
        "Warning: truncated output (original token count: {})\nTotal output lines: {}\n\n{head}…{} tokens truncated…{tail}",
        tokens(chars.len()),
        combined.split('\n').count(),
        tokens(removed)
    );
    let path = match crate::util::output_file::write_output_file(
        "pi-codemode",
        ".txt",
        combined.as_bytes(),
    ) {
        Ok(p) => {
            let p = p.to_string_lossy().into_owned();
            text.push_str(&format!("\n\n[Full output: {p} (read with offset/limit)]"));
            Some(p)
        }
        Err(e) => {
            text.push_str(&format!("\n\n[Could not save the full output: {e}]"));
            None
        }
    };
    let mut out = vec![Item::Text(text)];
    out.extend(
        items
            .into_iter()
            .filter(|i| matches!(i, Item::Image { .. })),
    );
    (out, path)
}

/// Puts `[Image saved to PATH (type, size)]` before each image.
fn save_images(items: Vec<Item>) -> Vec<Item> {
    let mut out = Vec::new();
    for item in items {
        if let Item::Image { data, mime_type } = &item {
            let bytes = crate::util::encoding::base64_decode(data).unwrap_or_default();
            let ext = match mime_type.as_str() {
                "image/png" => ".png",
                "image/jpeg" => ".jpg",
                "image/gif" => ".gif",
                _ => ".webp",
            };
            let kind = format!(
                "{mime_type}, {}",
                crate::tools::truncate::format_size(bytes.len())
            );
            let label =
                match crate::util::output_file::write_output_file("pi-codemode", ext, &bytes) {
                    Ok(p) => format!("[Image saved to {} ({kind})]", p.to_string_lossy()),
                    Err(e) => format!("[Image ({kind}) could not be saved: {e}]"),
                };
            out.push(Item::Text(label));
        }
        out.push(item);
    }
    out
}

#[cfg(test)]
mod worker_tests {
    use super::*;

    fn queued() -> usize {
        WORKERS.lock().unwrap().waiting.len()
    }

    /// A waiter that gives up leaves the queue, so those after it still get a worker.
    #[test]
    fn a_waiter_that_gives_up_does_not_block_the_queue() {
        let held: Vec<WorkerSlot> = (0..max_workers())
            .map(|_| WorkerSlot::acquire(&Abort::new(), None).unwrap())
            .collect();
        let patient = std::thread::spawn(|| {
            WorkerSlot::acquire(&Abort::new(), Some(Duration::from_secs(30)))
                .map(drop)
                .is_ok()
        });
        while queued() < 1 {
            std::thread::yield_now();
        }
        // Behind `patient`, and gives up first.
        let why = WorkerSlot::acquire(&Abort::new(), Some(Duration::from_millis(20)))
            .err()
            .expect("timed out");
        assert!(
            why.contains("while waiting for a free codemode worker"),
            "{why}"
        );
        drop(held);
        assert!(patient.join().unwrap());
        assert!(WorkerSlot::acquire(&Abort::new(), Some(Duration::from_secs(30))).is_ok());
    }
}
