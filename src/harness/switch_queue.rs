//! The queue of model and thinking-level changes a mode makes while a run holds the session
//! ([`Switches`]), as plain data; `switches` writes them to the session and hands them to the
//! agent.

use std::sync::{Arc, Mutex};

use super::model_cycle::{Credentials, SavedDefault};
use crate::ai::{Model, ThinkingLevel};

/// One change, in the order the user made it.
#[derive(Debug, Clone)]
pub enum Switch {
    Model {
        model: Box<Model>,
        credentials: Credentials,
    },
    Thinking(ThinkingLevel),
    /// A start-up default saved explicitly (Ctrl+S in a selector); settings only.
    Save(SavedDefault),
}

/// The queue shared between the mode and the thread that holds the session.
#[derive(Clone, Default)]
pub struct Switches(Arc<Mutex<Vec<Switch>>>);

impl Switches {
    pub fn push(&self, switch: Switch) {
        lock(&self.0).push(switch);
    }

    pub(super) fn take(&self) -> Vec<Switch> {
        std::mem::take(&mut *lock(&self.0))
    }
}

/// The queue stays usable after a panic elsewhere: its contents are plain data.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
