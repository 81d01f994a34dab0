//! Extension tools: a `Tool` whose execution is a `tool` request to the extension process.
//! Partial results stream back as `tool_update` lines; abort sends `cancel` and ends the call
//! at once; a dead extension makes the call fail with a clear error instead of hanging.

use std::sync::Arc;

use serde_json::{json, Value};

use super::extension::Extension;
use super::process::RequestError;
use super::protocol::ToolRegistration;
use crate::agent::{ExecutionMode, Tool, ToolContext, ToolOutput};
use crate::ai::Content;

pub struct ExtensionTool {
    extension: Arc<Extension>,
    spec: ToolRegistration,
    guidelines: Vec<&'static str>,
}

impl ExtensionTool {
    pub fn new(extension: Arc<Extension>, spec: ToolRegistration) -> ExtensionTool {
        // The Tool trait lends guidelines as `&'static str`; a registration lives for the
        // whole process, so leaking these few lines once is the honest way to satisfy it.
        let guidelines = spec
            .prompt_guidelines
            .iter()
            .map(|g| &*Box::leak(g.clone().into_boxed_str()))
            .collect();
        ExtensionTool {
            extension,
            spec,
            guidelines,
        }
    }

    pub fn extension_path(&self) -> String {
        self.extension.display_path()
    }

    pub fn label(&self) -> &str {
        &self.spec.label
    }
}

/// `{content, details?, terminate?}` from the extension, as a tool output.
fn output_of(v: &Value) -> Result<ToolOutput, String> {
    let content = match v.get("content") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => vec![Content::text(s.clone())],
        Some(c) => serde_json::from_value::<Vec<Content>>(c.clone())
            .map_err(|e| format!("invalid tool result content: {e}"))?,
    };
    Ok(ToolOutput {
        content,
        details: v.get("details").filter(|d| !d.is_null()).cloned(),
        terminate: v["terminate"].as_bool().unwrap_or(false),
        is_error: false,
        structured_content: None,
    })
}

impl Tool for ExtensionTool {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn description(&self) -> &str {
        &self.spec.description
    }

    fn parameters(&self) -> Value {
        self.spec.parameters.clone()
    }

    fn prompt_snippet(&self) -> &str {
        &self.spec.prompt_snippet
    }

    fn prompt_guidelines(&self) -> &[&str] {
        &self.guidelines
    }

    fn execution_mode(&self) -> ExecutionMode {
        self.spec.execution_mode
    }

    fn execute(&self, call_id: &str, args: Value, ctx: &ToolContext) -> Result<ToolOutput, String> {
        let process = &self.extension.process;
        let name = &self.spec.name;
        if let Some(reason) = process.dead_reason() {
            return Err(format!(
                "Tool {name} is unavailable: extension {} {reason}",
                self.extension.source.name()
            ));
        }
        let id = process.next_id();
        let msg = json!({"type": "tool", "id": id, "tool": name, "toolCallId": call_id,
            "params": args});
        let mut on_update = |v: Value| {
            if let Ok(partial) = output_of(&v) {
                (ctx.on_update)(partial);
            }
        };
        let result = process.request(id, msg, None, Some(&ctx.abort), &mut on_update);
        match result {
            Ok(v) => {
                let out = output_of(&v)?;
                if v["isError"] == true {
                    return Err(crate::agent::execute::content_text(&out.content));
                }
                Ok(out)
            }
            Err(RequestError::Aborted) => Err("Operation aborted".into()),
            Err(RequestError::Failed(e)) => Err(e),
            Err(RequestError::Dead(reason)) => Err(format!(
                "Tool {name} failed: extension {} {reason}",
                self.extension.source.name()
            )),
            Err(RequestError::Timeout(_)) => Err(format!("Tool {name} timed out")),
        }
    }
}
