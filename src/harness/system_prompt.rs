//! The system prompt: who pi is, the active tools, guidelines, appended text, then the date and
//! working directory last. Written in our own words; project context files and skills are
//! added by later layers.

use crate::ai::ToolSpec;

pub struct PromptInputs<'a> {
    /// `--system-prompt` (text or file contents) replacing the base prompt.
    pub custom: Option<&'a str>,
    /// `--append-system-prompt` values.
    pub append: &'a [String],
    pub tools: &'a [ToolSpec],
    pub cwd: &'a str,
    /// Local date as `YYYY-MM-DD`.
    pub date: &'a str,
}

pub fn build(inputs: &PromptInputs) -> String {
    let mut out = String::new();
    match inputs.custom {
        Some(custom) => out.push_str(custom),
        None => {
            out.push_str(
                "You are an expert coding assistant working inside pi, a terminal coding agent. \
                 You help the user by reading files, running commands, editing code and writing files.\n\n",
            );
            out.push_str("Available tools:\n");
            if inputs.tools.is_empty() {
                out.push_str("(none)\n");
            }
            for t in inputs.tools {
                let first = t.description.lines().next().unwrap_or("");
                out.push_str(&format!("- {}: {}\n", t.name, first));
            }
            out.push_str("\nGuidelines:\n- Be concise in your responses\n- Show file paths clearly when working with files\n");
        }
    }
    if !inputs.append.is_empty() {
        out.push_str("\n\n");
        out.push_str(&inputs.append.join("\n\n"));
    }
    out.push_str(&format!(
        "\nCurrent date: {}\nCurrent working directory: {}",
        inputs.date, inputs.cwd
    ));
    out
}
