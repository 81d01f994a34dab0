//! The session's side of MCP: before each prompt, the first one waits (briefly) for servers
//! with direct tools, and the system prompt gets the current `mcp_servers` section, appended
//! after everything else as pi places it (replacing the one appended before).

use super::AgentSession;

impl AgentSession {
    /// Called as a prompt starts, after extensions had their say on the system prompt.
    pub(super) fn prepare_mcp(&mut self) {
        let Some(mcp) = self.mcp.clone() else { return };
        mcp.wait_for_direct_servers(&self.abort);
        let section = mcp.servers_section();
        let previous = self.mcp_section.take();
        let prompt = &mut self.agent_mut().system_prompt;
        if let Some(old) = previous {
            let appended = format!("\n\n{old}");
            if prompt.ends_with(&appended) {
                prompt.truncate(prompt.len() - appended.len());
            }
        }
        if let Some(s) = &section {
            prompt.push_str("\n\n");
            prompt.push_str(s);
        }
        self.mcp_section = section;
    }
}
