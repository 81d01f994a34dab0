//! pi-ai's images API beside the chat API (pi 1.6.0): the catalog of non-chat models (image
//! generators and classifiers, `catalog`), what a call takes and gives back (`types`), and the
//! one images API 1.6.0 registers, `openrouter-images` (`openrouter`). A call is blocking and
//! honours the abort flag within 100 ms; it never fails with `Err`: provider errors come back as
//! a result with `stopReason: "error"`, as pi's `generateImages()` reports them.

pub mod catalog;
pub mod classify;
pub mod models;
pub mod openrouter;
pub mod types;

pub use catalog::{find_model, models_of_kind, NonChatModel};
pub use models::{ModelSource, Models, ModelsLink, MODEL_TYPES};
pub use types::{ImageBlock, ImagesResult, ModelAuth, OutputBlock};
