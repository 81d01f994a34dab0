//! Provider stub: to be implemented.

use crossbeam_channel::Receiver;

use crate::ai::stream::{spawn_stream, Abort};
use crate::ai::types::{AssistantEvent, Context, Model, StreamOptions};

pub fn stream(
    model: &Model,
    _context: &Context,
    _options: &StreamOptions,
    abort: Abort,
) -> Receiver<AssistantEvent> {
    spawn_stream(model, abort, |_| Err("not implemented".into()))
}
