//! Output modes over the shared `AgentSession`: print (`-p`, text answer) and json (one event
//! per line). Interactive and RPC modes come later.

pub mod interactive;
pub mod print;
pub mod rpc;
pub mod rpc_session;
pub mod rpc_ui;
