//! The editor's terminals for `bash`: when the client's `initialize` offers
//! `clientCapabilities.terminal`, the model's commands run in a terminal of the editor
//! (`terminal/create`), pi waits for the exit (`terminal/wait_for_exit`, killing it with
//! `terminal/kill` on cancel or timeout), reads what it printed (`terminal/output`) and releases
//! it (`terminal/release`); the tool call embeds the terminal, so the editor shows it live.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::ai::Abort;
use crate::tools::editor_terminal::{EditorTerminal, TerminalCommand, TerminalExit, TerminalRun};

use super::wire::Wire;

/// How long pi waits for the editor to answer anything but the wait for the exit.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);
/// After a cancel: how long pi waits for each answer still needed (a new terminal's id, then
/// `terminal/kill` and `terminal/release`), so a cancel stays within its 100 ms.
const CANCEL_GRACE: Duration = Duration::from_millis(25);

pub struct ClientTerminals {
    wire: Wire,
    session_id: Arc<Mutex<String>>,
}

impl ClientTerminals {
    /// Terminals when the client offered them in `initialize`'s `clientCapabilities`.
    pub fn offered(
        wire: &Wire,
        session_id: &Arc<Mutex<String>>,
        capabilities: &Value,
    ) -> Option<ClientTerminals> {
        (capabilities["terminal"] == true).then(|| ClientTerminals {
            wire: wire.clone(),
            session_id: Arc::clone(session_id),
        })
    }

    fn params(&self, mut params: Value) -> Value {
        params["sessionId"] = json!(self
            .session_id
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone());
        params
    }

    /// Asks and waits up to `timeout` (or until `abort`).
    fn ask_within(
        &self,
        method: &str,
        params: Value,
        abort: &Abort,
        timeout: Duration,
    ) -> Result<Value, String> {
        match self
            .wire
            .request(method, self.params(params), abort, Some(timeout))
        {
            Some(Ok(v)) => Ok(v),
            Some(Err(e)) => Err(format!("the editor said: {}", e.message)),
            None => Err(format!("the editor did not answer {method}")),
        }
    }

    fn ask(&self, method: &str, params: Value) -> Result<Value, String> {
        self.ask_within(method, params, &Abort::new(), ANSWER_TIMEOUT)
    }
}

/// The `terminal/create` parameters for a command. Pure.
pub fn create_params(command: &TerminalCommand) -> Value {
    let env: Vec<Value> = command
        .env
        .iter()
        .map(|(name, value)| json!({"name": name, "value": value}))
        .collect();
    json!({
        "command": command.program,
        "args": command.args,
        "env": env,
        "cwd": command.cwd.to_string_lossy(),
        "outputByteLimit": command.output_limit,
    })
}

/// How a command ended, from `terminal/wait_for_exit`'s answer (or an exit status). Pure.
pub fn exit_of(status: &Value) -> TerminalExit {
    TerminalExit::Exited {
        code: status["exitCode"].as_u64().map(|c| c as u32),
        signal: status["signal"].as_str().map(str::to_string),
    }
}

impl EditorTerminal for ClientTerminals {
    fn run(
        &self,
        command: &TerminalCommand,
        abort: &Abort,
        timeout: Option<Duration>,
        started: &mut dyn FnMut(&str),
    ) -> Result<TerminalRun, String> {
        let aborted = || TerminalRun {
            terminal_id: String::new(),
            output: String::new(),
            truncated: false,
            exit: TerminalExit::Aborted,
        };
        // A cancel while the editor creates the terminal still waits a moment for its id,
        // so the terminal is killed and released rather than left running.
        let created = match self.wire.request_with_grace(
            "terminal/create",
            self.params(create_params(command)),
            abort,
            Some(ANSWER_TIMEOUT),
            CANCEL_GRACE,
        ) {
            Some(Ok(v)) => v,
            Some(Err(e)) => return Err(format!("the editor said: {}", e.message)),
            None if abort.is_aborted() => return Ok(aborted()),
            None => return Err("the editor did not answer terminal/create".into()),
        };
        let id = created["terminalId"]
            .as_str()
            .ok_or("the editor's terminal/create answer had no \"terminalId\"")?
            .to_string();
        let terminal = json!({ "terminalId": id });
        let stop = |id: String| {
            // Cancelled: kill and release without waiting long for the editor.
            for method in ["terminal/kill", "terminal/release"] {
                let _ = self.ask_within(method, terminal.clone(), &Abort::new(), CANCEL_GRACE);
            }
            Ok(TerminalRun {
                terminal_id: id,
                ..aborted()
            })
        };
        if abort.is_aborted() {
            return stop(id);
        }
        started(&id);
        let began = Instant::now();
        let waited = self.wire.request(
            "terminal/wait_for_exit",
            self.params(terminal.clone()),
            abort,
            timeout,
        );
        let exit = match waited {
            Some(Ok(status)) => exit_of(&status),
            Some(Err(e)) => {
                let _ = self.ask("terminal/release", terminal.clone());
                return Err(format!("the editor said: {}", e.message));
            }
            None => {
                let exit = if abort.is_aborted() {
                    TerminalExit::Aborted
                } else if timeout.is_some_and(|t| began.elapsed() >= t) {
                    TerminalExit::TimedOut
                } else {
                    return Err("the editor did not answer terminal/wait_for_exit".into());
                };
                if exit == TerminalExit::Aborted {
                    return stop(id);
                }
                // Timed out: the command is killed, its terminal kept for its output.
                let _ = self.ask("terminal/kill", terminal.clone());
                exit
            }
        };
        let output = self.ask("terminal/output", terminal.clone());
        let _ = self.ask("terminal/release", terminal);
        let output = output?;
        Ok(TerminalRun {
            terminal_id: id,
            output: output["output"].as_str().unwrap_or("").to_string(),
            truncated: output["truncated"] == true,
            exit,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_exits_translate_to_and_from_the_protocol() {
        let command = TerminalCommand {
            program: "/bin/bash".into(),
            args: vec!["-c".into(), "ls".into()],
            cwd: "/p".into(),
            env: vec![("PI_MODEL".into(), "m".into())],
            output_limit: 10,
        };
        assert_eq!(
            create_params(&command),
            json!({"command": "/bin/bash", "args": ["-c", "ls"], "cwd": "/p",
                "env": [{"name": "PI_MODEL", "value": "m"}], "outputByteLimit": 10})
        );
        assert_eq!(
            exit_of(&json!({"exitCode": 3, "signal": null})),
            TerminalExit::Exited {
                code: Some(3),
                signal: None
            }
        );
        assert_eq!(
            exit_of(&json!({"exitCode": null, "signal": "SIGKILL"})),
            TerminalExit::Exited {
                code: None,
                signal: Some("SIGKILL".into())
            }
        );
    }
}
