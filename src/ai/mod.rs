//! The LLM layer: message types, the assistant event stream, SSE/HTTP plumbing, the wire
//! protocol of each API, the built-in model catalog, why a request failed (`error`), overflow
//! detection and cost. Imports
//! nothing else from the crate.

pub mod catalog;
pub mod error;
pub mod http;
pub mod image;
pub mod images;
pub mod jwt;
pub mod overflow;
pub mod partial_json;
pub mod provider_retry;
pub mod providers;
pub mod proxy;
pub mod sse;
pub mod stream;
pub mod tls;
pub mod transform;
pub mod types;

pub use error::ProviderError;
pub use stream::{spawn_stream, Abort, StreamWriter};
pub use types::*;
