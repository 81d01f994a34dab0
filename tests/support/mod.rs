//! Shared helpers for the integration tests: the in-process mock LLM server (`mock`) and the
//! `pi` process runner (`pi`). Std only (plus the crate's own serde_json and libc).

#![allow(dead_code, unused_imports)]

pub mod mcp;
pub mod mock;
pub mod pi;
pub mod session;

pub use mock::{
    error_body, read_fixture, route, sse_events, sse_malformed, sse_text, MockServer, Reply,
    Request, APIS,
};
pub use pi::{
    base_url_for, models_json_for, models_json_without_key, Output, PiChild, PiCommand, TestDir,
    FAST_RETRY_SETTINGS, NO_RETRY_SETTINGS, TIMEOUT,
};
pub mod pty;
