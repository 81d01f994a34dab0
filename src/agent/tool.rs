//! The tool interface the agent loop executes. A tool is a name, a description, a JSON-schema
//! for its arguments and an `execute` that runs on its own thread, may stream partial results,
//! and must honour the abort flag. Tools know nothing about sessions or the UI.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use crate::ai::{Abort, Content, ToolSpec};

/// What a finished tool call returns to the model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOutput {
    pub content: Vec<Content>,
    /// Extra structured data for UIs and sessions (never sent to the model).
    pub details: Option<Value>,
    /// If every call of a batch sets this, the loop stops after the batch.
    pub terminate: bool,
    /// An error result that keeps its content blocks and details (a failed `codemode` script
    /// keeps its partial output); a plain failure returns `Err(message)` instead.
    pub is_error: bool,
    /// The result for programmatic callers (pi 1.6.0's `structuredContent`: `read`'s text or
    /// image, `bash`'s output and exit code); shown in `tool_execution_end`, never sent to the
    /// model nor stored in the session.
    pub structured_content: Option<Value>,
}

impl ToolOutput {
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            content: vec![Content::text(text)],
            details: None,
            terminate: false,
            is_error: false,
            structured_content: None,
        }
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }
}

/// A group of tools as scripts see it (pi 1.6.0's `ToolNamespace`): an MCP server is
/// `mcp__<server>`, also found by its plain name.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolNamespace {
    pub name: String,
    pub aliases: Vec<String>,
    pub description: Option<String>,
    pub instructions: Option<String>,
}

/// How a batch containing this tool runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExecutionMode {
    #[default]
    Parallel,
    Sequential,
}

/// Everything a tool may use while running.
pub struct ToolContext<'a> {
    pub cwd: PathBuf,
    pub abort: Abort,
    /// Streams a partial result (`tool_execution_update`); cheap to call often, the agent
    /// forwards every call.
    pub on_update: &'a (dyn Fn(ToolOutput) + Sync),
    /// The other tools of the run, for a tool that calls tools itself (`codemode`); `None`
    /// where a tool runs outside the agent loop.
    pub nested: Option<Arc<dyn NestedTools>>,
}

/// One tool call a tool made through [`NestedTools::call`], after the tool ran.
#[derive(Debug, Clone)]
pub struct NestedOutcome {
    /// `<caller id>/<n>`, as pi numbers a tool's own calls.
    pub id: String,
    pub output: ToolOutput,
    pub is_error: bool,
}

/// Tool calls made by a running tool. Each goes through the same path as a call the model made
/// (argument preparation and validation, the `tool_call` and `tool_result` hooks), so nothing a
/// direct call is checked against is skipped.
pub trait NestedTools: Send + Sync {
    /// The tools a nested call may name: the run's declared tools, then those kept for
    /// scripts (MCP tools not declared to the model). May wait for MCP servers connecting.
    fn tools(&self, abort: &Abort) -> Vec<Arc<dyn Tool>>;
    /// Runs `name` with `args` on the calling thread; honours `abort`. `started` is called
    /// once the call's `tool_execution_start` is out, before it runs.
    fn call(&self, name: &str, args: Value, abort: &Abort, started: &dyn Fn()) -> NestedOutcome;
    /// Streams a partial result of the calling tool (`tool_execution_update`), in order with
    /// its nested calls' events; callable from any thread.
    fn report(&self, _partial: ToolOutput) {}
}

pub trait Tool: Send + Sync {
    fn name(&self) -> &str;
    /// Full description sent to the model.
    fn description(&self) -> &str;
    /// JSON schema of the arguments object.
    fn parameters(&self) -> Value;
    /// One line for the system prompt's tool list.
    fn prompt_snippet(&self) -> &str;
    /// Extra guideline lines for the system prompt.
    fn prompt_guidelines(&self) -> &[&str] {
        &[]
    }
    /// Reshapes the model's raw arguments before they are validated (pi's `prepareArguments`),
    /// for tools that accept older or looser shapes than their schema declares.
    fn prepare_arguments(&self, args: Value) -> Value {
        args
    }
    fn execution_mode(&self) -> ExecutionMode {
        ExecutionMode::Parallel
    }
    /// The JSON schema of what a script's call resolves to (its structured result), for tools
    /// that have one (pi 1.6.0's `outputSchema`); others resolve to their text.
    fn output_schema(&self) -> Option<Value> {
        None
    }
    /// The group a tool belongs to for scripts (an MCP server), if any.
    fn namespace(&self) -> Option<ToolNamespace> {
        None
    }
    /// Called on the run thread, in call order, before the call's own thread starts: a tool
    /// that must keep that order (file mutations queue per file, as pi's do) takes its place
    /// here and returns what to run first on the call's thread to claim it.
    fn reserve(&self, _args: &Value, _cwd: &std::path::Path) -> Option<Box<dyn FnOnce() + Send>> {
        None
    }
    /// Runs the call. `Err(message)` becomes an error result whose text is `message` (pi's
    /// behaviour for a tool that throws).
    fn execute(&self, call_id: &str, args: Value, ctx: &ToolContext) -> Result<ToolOutput, String>;

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name().to_string(),
            description: self.description().to_string(),
            parameters: self.parameters(),
        }
    }
    /// Rewrites the declarations of a request this tool is declared in (pi's
    /// `prepareLoadout`): `specs` are those of `tools`, in order. `codemode` lists or annotates
    /// the tools scripts call.
    fn prepare_loadout(&self, _specs: &mut Vec<ToolSpec>, _tools: &[Arc<dyn Tool>]) {}
}

/// The declarations a request sends for `tools`, each tool's loadout hook applied.
pub fn request_specs(tools: &[Arc<dyn Tool>]) -> Vec<ToolSpec> {
    let mut specs: Vec<ToolSpec> = tools.iter().map(|t| t.spec()).collect();
    for t in tools {
        t.prepare_loadout(&mut specs, tools);
    }
    specs
}

/// Tools that join or leave while the agent runs (MCP servers connecting, `tool_search`
/// loading tools). The agent asks before every model call; they are declared after its fixed
/// tools, which win on a name clash.
pub trait ToolSource: Send + Sync {
    fn tools(&self) -> Vec<Arc<dyn Tool>>;
    /// Tools a tool's own calls may reach without their being declared to the model (MCP
    /// tools with `codemode` or `deferred` exposure, for `codemode` scripts). May wait for
    /// sources still starting (servers connecting), honouring `abort`.
    fn script_tools(&self, _abort: &Abort) -> Vec<Arc<dyn Tool>> {
        Vec::new()
    }
}
