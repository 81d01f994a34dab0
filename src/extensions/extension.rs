//! One running extension: where it came from, its process, what it registered (a protocol-2
//! extension may register more later) and its flags' values. Everything else in this module
//! talks about extensions through this type.

use std::sync::RwLock;
use std::sync::RwLockReadGuard;

use serde_json::{Map, Value};

use super::discovery::ExtensionSource;
use super::process::ExtensionProcess;
use super::protocol::{self, Registration};

/// One running extension and what it registered.
pub struct Extension {
    pub source: ExtensionSource,
    pub process: ExtensionProcess,
    /// What it registered; a protocol-2 extension may register more later (a tool added at
    /// runtime, a new event).
    pub(super) registration: RwLock<Registration>,
    /// Its flags' values: from the command line, else their defaults.
    pub flag_values: Map<String, Value>,
}

impl Extension {
    /// The path shown in errors and `sourceInfo`.
    pub fn display_path(&self) -> String {
        self.source.path.to_string_lossy().into_owned()
    }

    pub fn registration(&self) -> RwLockReadGuard<'_, Registration> {
        self.registration.read().unwrap_or_else(|p| p.into_inner())
    }

    pub fn protocol(&self) -> u64 {
        self.registration().protocol
    }

    pub fn subscribes(&self, event: &str) -> bool {
        self.registration().subscribes(event)
    }

    /// An event message for this extension (blocking or not as its protocol says).
    pub fn event(&self, id: u64, name: &str, data: Value) -> Value {
        protocol::event(id, name, data, self.protocol())
    }
}
