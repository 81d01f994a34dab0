//! Steering and follow-up queues: messages typed while the agent works. Steering is delivered
//! after the current tool batch, before the next LLM call; follow-ups when the agent would
//! stop. Each queue delivers one message per turn (`one-at-a-time`, pi's default) or all.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::ai::Message;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueueMode {
    All,
    #[default]
    OneAtATime,
}

impl QueueMode {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "all" => Some(QueueMode::All),
            "one-at-a-time" => Some(QueueMode::OneAtATime),
            _ => None,
        }
    }
}

/// A queue shared between the run thread and whoever feeds it; clones share contents.
#[derive(Debug, Clone, Default)]
pub struct MessageQueue {
    items: Arc<Mutex<VecDeque<Message>>>,
    all: Arc<AtomicBool>,
}

impl MessageQueue {
    pub fn set_mode(&self, mode: QueueMode) {
        self.all.store(mode == QueueMode::All, Ordering::SeqCst);
    }

    pub fn mode(&self) -> QueueMode {
        if self.all.load(Ordering::SeqCst) {
            QueueMode::All
        } else {
            QueueMode::OneAtATime
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Message>> {
        self.items.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn push(&self, m: Message) {
        self.lock().push_back(m);
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The queued messages, oldest first, left in place.
    pub fn peek(&self) -> Vec<Message> {
        self.lock().iter().cloned().collect()
    }

    pub fn clear(&self) -> Vec<Message> {
        self.lock().drain(..).collect()
    }

    /// The messages to deliver now, according to the mode.
    pub fn take(&self) -> Vec<Message> {
        let mut q = self.lock();
        if self.all.load(Ordering::SeqCst) {
            q.drain(..).collect()
        } else {
            q.pop_front().into_iter().collect()
        }
    }
}
