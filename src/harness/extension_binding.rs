//! What a session keeps about its extensions ([`ExtensionBinding`]): the host, the tools and
//! system prompt they may change, how to look a model up for `setModel`. `extensions`
//! drives them.

use std::sync::Arc;

use super::model_cycle::Credentials;
use crate::agent::{StreamFn, Tool};
use crate::ai::Model;
use crate::extensions::ExtensionHost;

/// Finds a model and its credentials for an extension's `setModel`.
pub type ModelLookup =
    Arc<dyn Fn(&str, &str) -> Result<(Model, Credentials), String> + Send + Sync>;

/// What a session keeps about its extensions.
pub struct ExtensionBinding {
    pub host: Arc<ExtensionHost>,
    /// Every tool that could be active (built-ins and extension tools), for `setActiveTools`.
    pub tool_registry: Vec<Arc<dyn Tool>>,
    /// The system prompt before any `before_agent_start` change.
    pub base_system_prompt: String,
    pub models: Option<ModelLookup>,
    /// How the session streams replies before extension providers are added.
    pub(super) base_stream: StreamFn,
    /// A run happened since extensions last heard `agent_before_settle`/`agent_settled`.
    pub(super) settle_pending: bool,
    /// The host's registration generation the tool set was last built from.
    pub(super) tools_generation: u64,
    /// Rebuilds the streaming message for `message_update` subscribers (pi's SDK events
    /// carry it).
    pub events: crate::agent::events::SnapshotWriter,
}
