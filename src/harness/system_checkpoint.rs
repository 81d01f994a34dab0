//! The session's record of the prompt and tools (pi 1.x's system messages). Before a prompt
//! runs, the sections and tools it wants are compared with what the branch declared so far
//! (its system messages replayed, a compaction's checkpoint included); a difference becomes a
//! `role: "system"` message the run emits and the session records before the user message —
//! the full checkpoint on a branch that has none (a new session, or one an older pi wrote), a
//! patch afterwards. The request is built from the replayed result, so what the session says
//! the model saw is what it saw. Moving in the tree restores the branch's recorded tools.

use serde_json::{json, Value};

use super::AgentSession;
use crate::agent::system_message::SystemState;
use crate::agent::Tool;
use crate::ai::now_ms;

/// A tool as a system message declares it.
pub fn declaration(tool: &dyn Tool) -> Value {
    json!({
        "name": tool.name(),
        "description": tool.description(),
        "parameters": tool.parameters(),
    })
}

impl AgentSession {
    /// What the current branch has declared: its system messages replayed in order.
    pub fn system_state(&self) -> SystemState {
        self.session.system_state()
    }

    /// Called as a prompt starts, once extensions and MCP had their say: gives the run the
    /// system message to record (if the prompt or tools changed) and the prompt to send. An
    /// extension's `before_agent_start` prompt is sent as it is, but not recorded (as 1.x).
    pub(super) fn declare_system(&mut self) {
        let forced = self.forced_prompt.take();
        let Some(source) = &self.prompt_source else {
            return;
        };
        let agent = self.agent();
        let tools = agent.current_tools();
        let mut sections = source.sections(&agent.tools);
        if let Some(mcp) = &self.mcp_section {
            sections.push((crate::mcp::prompt::SECTION.to_string(), mcp.clone()));
        }
        // Each tool as the request declares it (codemode's loadout rewrites descriptions); a
        // tool `codemode.mode: only` leaves out of requests is still recorded, as 1.6.0 does.
        let projected = crate::agent::tool::request_specs(&tools);
        let declared: Vec<Value> = tools
            .iter()
            .map(|t| {
                let s = projected
                    .iter()
                    .find(|s| s.name == t.name())
                    .cloned()
                    .unwrap_or_else(|| t.spec());
                json!({"name": s.name, "description": s.description, "parameters": s.parameters})
            })
            .collect();
        let mut state = self.system_state();
        let patch = state.patch(&sections, &declared, now_ms());
        if let Some(m) = &patch {
            state.apply(m);
        }
        let prompt = forced.unwrap_or_else(|| state.prompt());
        let agent = self.agent_mut();
        agent.system_prompt = prompt;
        agent.prompt_system = patch;
    }

    /// After moving in the session tree: the tools the new branch last declared become the
    /// active ones (those this process has), and the prompt follows, as 1.x restores a
    /// transcript's loadout on `/tree`. A branch that declared nothing (an older pi wrote it)
    /// keeps the current tools. Startup and resume keep the tools the flags and settings give,
    /// as 1.x does; the next prompt records the difference.
    pub fn restore_tools_from_transcript(&mut self) {
        let state = self.system_state();
        let Some(b) = self.extensions.as_mut().filter(|_| state.declared) else {
            return;
        };
        let tools: Vec<_> = state
            .tool_names()
            .iter()
            .filter_map(|n| b.tool_registry.iter().find(|t| t.name() == n).cloned())
            .collect();
        let prompt = self.prompt_source.as_ref().map(|s| s.build(&tools));
        if let Some(p) = &prompt {
            b.base_system_prompt = p.clone();
        }
        let agent = self.agent_mut();
        agent.tools = tools;
        if let Some(p) = prompt {
            agent.system_prompt = p;
        }
    }
}
