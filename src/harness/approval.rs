//! Approval rules at work (issue 34): the [`ToolGate`] every tool call of the session passes
//! (the model's, and the built-in tools extensions run through `tools.run`). It applies the
//! `permissions` policy (`tools::permissions`); where the policy says ask, it asks through the
//! mode's UI — the terminal's four-way question, an RPC client's `confirm` request — and where
//! there is nobody to ask (print and JSON modes) it refuses at once. Every decision is kept
//! for the session file (a `custom` entry pi ignores), written before the call's result.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use serde_json::{json, Value};

use crate::agent::ToolGate;
use crate::ai::{Abort, ToolCall};
use crate::extensions::ui::{Answer, Dialog, ExtensionUi};
use crate::resources::settings::Settings;
use crate::tools::permissions::{Evaluation, Policy, Verdict};

/// The `customType` of the session entries that record decisions.
pub const DECISION_ENTRY: &str = "pi-rust.approval";

/// The answers the terminal offers.
const ONCE: &str = "Yes, once";
const SESSION: &str = "Yes, and don't ask again for this call until pi exits";
const ALWAYS: &str = "Yes, always (saved to your settings)";
const NO: &str = "No, and tell the model why";

/// What an answer of the four-way question means, for a mode that shows the answers its own
/// way (ACP's permission options: allow once, allow always, reject).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerKind {
    Once,
    /// Not asked again for this exact call until pi exits.
    Session,
    /// Saved to the global settings as an allow rule.
    Always,
    No,
}

/// The kind of one of the question's options; `None` for any other text (an extension's own
/// `select`).
pub fn answer_kind(option: &str) -> Option<AnswerKind> {
    match option {
        ONCE => Some(AnswerKind::Once),
        SESSION => Some(AnswerKind::Session),
        ALWAYS => Some(AnswerKind::Always),
        NO => Some(AnswerKind::No),
        _ => None,
    }
}

/// How a mode asks.
#[derive(Clone)]
pub struct Asker {
    pub ui: Arc<dyn ExtensionUi>,
    /// No answer by then is a no (RPC clients get two minutes).
    pub timeout: Option<Duration>,
    /// The terminal's four-way question; otherwise a yes/no `confirm`.
    pub menu: bool,
}

/// The session's approval rules and what the user answered so far.
pub struct Approvals {
    policy: Policy,
    cwd: PathBuf,
    asker: RwLock<Option<Asker>>,
    /// Exact calls (`bash(git push)`) the user allowed until pi exits, or saved.
    approved: Mutex<Vec<String>>,
    /// Where "always" is saved.
    settings: Mutex<Settings>,
    /// Decisions not yet written to the session file.
    pending: Mutex<Vec<Value>>,
}

impl Approvals {
    pub fn new(policy: Policy, cwd: PathBuf, settings: Settings) -> Arc<Approvals> {
        Arc::new(Approvals {
            policy,
            cwd,
            asker: RwLock::new(None),
            approved: Mutex::new(Vec::new()),
            settings: Mutex::new(settings),
            pending: Mutex::new(Vec::new()),
        })
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// How to ask from now on (`None`: nobody to ask; asking calls are refused).
    pub fn set_asker(&self, asker: Option<Asker>) {
        *self.asker.write().unwrap_or_else(|p| p.into_inner()) = asker;
    }

    /// The gate to install on the agent and lend to extensions.
    pub fn gate(self: &Arc<Self>) -> ToolGate {
        let me = Arc::clone(self);
        Arc::new(move |call: &ToolCall, args: &Value, abort: &Abort| me.check(call, args, abort))
    }

    /// The decisions made since the last call, oldest first, as session entry data.
    pub fn take_decisions(&self) -> Vec<Value> {
        std::mem::take(&mut *self.pending.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn record(&self, call: &ToolCall, e: &Evaluation, decision: &str, by: &str, extra: Value) {
        let mut entry = json!({
            "toolCallId": call.id,
            "tool": call.name,
            "subject": e.subject,
            "decision": decision,
            "by": by,
        });
        if let Some(rule) = &e.rule {
            entry["rule"] = json!(rule);
        }
        if let Some(why) = &e.not_understood {
            entry["notUnderstood"] = json!(why);
        }
        if let (Value::Object(m), Value::Object(x)) = (&mut entry, extra) {
            m.extend(x);
        }
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(entry);
    }

    /// Runs the policy on one call; `Err` is the tool result the model gets instead.
    pub fn check(&self, call: &ToolCall, args: &Value, abort: &Abort) -> Result<(), String> {
        if !self.policy.is_active() {
            return Ok(());
        }
        let e = self.policy.evaluate(&call.name, args, &self.cwd);
        let rule = e.rule.clone().unwrap_or_default();
        let unclear = e
            .not_understood
            .as_ref()
            .map(|why| {
                format!(
                    " The command could not be analysed ({why}), so every bash rule applies to it."
                )
            })
            .unwrap_or_default();
        match e.verdict {
            Verdict::Allow => {
                self.record(
                    call,
                    &e,
                    "allow",
                    if e.rule.is_some() { "rule" } else { "default" },
                    json!({}),
                );
                Ok(())
            }
            Verdict::Deny => {
                let denied_by_rule = self.policy.deny.iter().any(|r| r.text == rule);
                let why = if denied_by_rule {
                    format!("the approval rule \"{rule}\" in the permissions settings denies it")
                } else {
                    format!(
                        "it needs the user's confirmation ({}), and the approval preset \"never\" never asks",
                        rule.trim_start_matches("approval: ")
                    )
                };
                let by = if denied_by_rule { "rule" } else { "never" };
                self.record(call, &e, "deny", by, json!({}));
                Err(format!(
                    "Not run: {why}.{unclear} Do not try to reach the same result another way; ask the user if it is needed."
                ))
            }
            Verdict::Ask => {
                let approved = self
                    .approved
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .contains(&e.exact_rule);
                if approved {
                    self.record(call, &e, "allow", "user", json!({"answer": "session"}));
                    return Ok(());
                }
                self.ask(call, &e, &rule, &unclear, abort)
            }
        }
    }

    fn ask(
        &self,
        call: &ToolCall,
        e: &Evaluation,
        rule: &str,
        unclear: &str,
        abort: &Abort,
    ) -> Result<(), String> {
        let asker = self.asker.read().unwrap_or_else(|p| p.into_inner()).clone();
        let Some(asker) = asker.filter(|a| a.ui.has_ui()) else {
            self.record(call, e, "deny", "no-ui", json!({}));
            return Err(format!(
                "Not run: the approval rule \"{rule}\" requires the user's confirmation, and nobody can answer in this mode (print or JSON).{unclear} Tell the user what you wanted to run; they can allow it in the permissions settings or run pi interactively."
            ));
        };
        let Some(shown) = crate::tools::sandbox::shown_whole(&e.subject) else {
            self.record(call, e, "deny", "too-long", json!({}));
            return Err(format!(
                "Not run: the approval rule \"{rule}\" requires the user's confirmation, and this call is too long to show whole. Split it into smaller calls."
            ));
        };
        let why = match rule.strip_prefix("approval: ") {
            Some(preset) => format!("Asked because of the approval preset \"{preset}\"."),
            None => format!("Asked because of the rule \"{rule}\"."),
        };
        let question = format!(
            "Allow this {} call?\n\n  {shown}\n\n{why}{unclear}",
            call.name
        );
        if !asker.menu {
            let dialog = Dialog::Confirm {
                title: "Approve tool call".into(),
                message: question,
                timeout: asker.timeout,
            };
            return if asker.ui.dialog(dialog, abort) == Answer::Confirmed(true) {
                self.record(call, e, "allow", "user", json!({"answer": "once"}));
                Ok(())
            } else {
                self.record(call, e, "deny", "user", json!({"answer": "no"}));
                Err("Not run: the user declined this tool call.".into())
            };
        }
        // "Always" saves this exact call as an allow rule; a call with wildcard characters
        // would save a pattern, so it is not offered.
        let can_save = !e.subject.contains(['*', '?']) && !e.subject.contains('\n');
        let mut options = vec![ONCE.to_string(), SESSION.to_string()];
        if can_save {
            options.push(ALWAYS.to_string());
        }
        options.push(NO.to_string());
        let dialog = Dialog::Select {
            title: question,
            options,
            timeout: asker.timeout,
        };
        match asker.ui.dialog(dialog, abort) {
            Answer::Value(v) if v == ONCE => {
                self.record(call, e, "allow", "user", json!({"answer": "once"}));
                Ok(())
            }
            Answer::Value(v) if v == SESSION => {
                self.approve(&e.exact_rule);
                self.record(call, e, "allow", "user", json!({"answer": "session"}));
                Ok(())
            }
            Answer::Value(v) if v == ALWAYS => {
                self.approve(&e.exact_rule);
                let saved = self
                    .settings
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push_global_list("permissions", "allow", &e.exact_rule);
                let mut extra = json!({"answer": "always", "saved": e.exact_rule});
                if let Err(error) = &saved {
                    extra["saveError"] = json!(error.to_string());
                    asker.ui.notice(crate::extensions::ui::Notice::Notify {
                        message: format!("Allowed for now, but not saved: {error}"),
                        kind: Some("error".into()),
                    });
                }
                self.record(call, e, "allow", "user", extra);
                Ok(())
            }
            Answer::Value(v) if v == NO => {
                let reason = asker.ui.dialog(
                    Dialog::Input {
                        title: "Why not? (sent to the model; Enter to skip)".into(),
                        placeholder: None,
                        timeout: asker.timeout,
                    },
                    abort,
                );
                let reason = match reason {
                    Answer::Value(r) if !r.trim().is_empty() => Some(r.trim().to_string()),
                    _ => None,
                };
                self.record(
                    call,
                    e,
                    "deny",
                    "user",
                    json!({"answer": "no", "reason": reason}),
                );
                Err(match reason {
                    Some(r) => format!("Not run: the user declined this tool call: {r}"),
                    None => "Not run: the user declined this tool call.".into(),
                })
            }
            _ => {
                self.record(call, e, "deny", "user", json!({"answer": "dismissed"}));
                Err("Not run: the user declined this tool call.".into())
            }
        }
    }

    fn approve(&self, exact_rule: &str) {
        let mut approved = self.approved.lock().unwrap_or_else(|p| p.into_inner());
        if !approved.iter().any(|r| r == exact_rule) {
            approved.push(exact_rule.to_string());
        }
    }
}

#[cfg(test)]
#[path = "tests/approval.rs"]
mod tests;
