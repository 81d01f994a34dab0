//! The `bash` tool when the editor runs its commands (`editor_terminal`): the command line goes
//! to the editor's terminal, the tool call shows that terminal (its id in the first partial
//! result's `details.terminalId`), and the model gets the output's tail and how the command
//! ended, as from a command pi ran itself.

use std::time::Instant;

use serde_json::json;

use super::editor_terminal::{EditorTerminal, TerminalCommand, TerminalExit};
use super::truncate::{truncate_tail, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES};
use crate::agent::tool::{ToolContext, ToolOutput};

/// The output an editor is asked to keep: the tail the model sees, with room to spare.
const OUTPUT_LIMIT: u64 = 1024 * 1024;

/// Runs `command` with `shell -c` in the editor's terminal.
pub fn run(
    editor: &dyn EditorTerminal,
    shell: &str,
    command: &str,
    timeout: Option<(f64, std::time::Duration)>,
    ctx: &ToolContext,
    env: Vec<(String, String)>,
) -> Result<ToolOutput, String> {
    let request = TerminalCommand {
        program: shell.to_string(),
        args: vec!["-c".into(), command.to_string()],
        cwd: ctx.cwd.clone(),
        env,
        output_limit: OUTPUT_LIMIT,
    };
    let started_at = Instant::now();
    let mut started = |id: &str| {
        (ctx.on_update)(ToolOutput {
            details: Some(json!({ "terminalId": id })),
            ..Default::default()
        });
    };
    let run = editor
        .run(&request, &ctx.abort, timeout.map(|t| t.1), &mut started)
        .map_err(|e| format!("Could not run the command in the editor's terminal: {e}"))?;
    let t = truncate_tail(&run.output, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
    let mut text = if t.content.is_empty() {
        String::new()
    } else {
        t.content.clone()
    };
    if t.truncated || run.truncated {
        let end = t.total_lines;
        let start = end + 1 - t.output_lines.min(end);
        text.push_str(&format!(
            "\n\n[Showing the last lines ({start}-{end} of what the editor kept). Full output: the editor's terminal]"
        ));
    }
    let with_status = |status: String| {
        if text.is_empty() {
            status
        } else {
            format!("{text}\n\n{status}")
        }
    };
    let code = match &run.exit {
        TerminalExit::Aborted => return Err(with_status("Command aborted".into())),
        TerminalExit::TimedOut => {
            let secs = timeout.map(|t| t.0).unwrap_or_default();
            return Err(with_status(format!(
                "Command timed out after {secs} seconds"
            )));
        }
        TerminalExit::Exited {
            signal: Some(signal),
            ..
        } => return Err(with_status(format!("Command was killed by {signal}"))),
        TerminalExit::Exited { code, .. } => code.unwrap_or(0),
    };
    if code != 0 {
        return Err(with_status(format!("Command exited with code {code}")));
    }
    let mut out = ToolOutput::text(if text.is_empty() {
        "(no output)".to_string()
    } else {
        text
    });
    out.details = Some(json!({ "terminalId": run.terminal_id }));
    let tenths = (started_at.elapsed().as_secs_f64() * 10.0).round() / 10.0;
    out.structured_content = Some(json!({
        "output": run.output,
        "truncated": run.truncated,
        "exit_code": code,
        "wall_time_seconds": tenths,
    }));
    Ok(out)
}
