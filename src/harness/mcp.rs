//! The session's side of MCP: before each prompt, servers signed in from elsewhere reconnect,
//! the first prompt waits (briefly) for servers with direct tools, and the current
//! `mcp_servers` section is taken for the prompt (the last section, as pi places it; a change
//! is recorded as a system message, see `system_checkpoint`). Extensions' tool getters see MCP
//! tools too.

use super::AgentSession;

impl AgentSession {
    /// Called as a prompt starts, after extensions had their say on the system prompt.
    pub(super) fn prepare_mcp(&mut self) {
        let Some(mcp) = self.mcp.clone() else { return };
        mcp.reconnect_signed_in();
        mcp.wait_for_direct_servers(&self.abort);
        let section = mcp.servers_section();
        self.mcp_section = section;
    }
}

/// Adds the MCP tools to what extensions' `getAllTools` / `getActiveTools` answer.
pub(super) fn add_mcp_tools(
    mcp: Option<&std::sync::Arc<crate::mcp::McpManager>>,
    active: &mut Vec<String>,
    all: &mut Vec<serde_json::Value>,
) {
    let Some(mcp) = mcp else { return };
    let (infos, declared) = mcp.tool_infos();
    for name in declared {
        if !active.contains(&name) {
            active.push(name);
        }
    }
    for info in infos {
        if !all.iter().any(|t| t["name"] == info["name"]) {
            all.push(info);
        }
    }
}
