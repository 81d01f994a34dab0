//! Bottom-floor helpers every layer may use: they import nothing from the rest of the crate.
//!
//! `atomic` replaces a file's content atomically (the one routine for every file pi
//! rewrites); `files` opens a file for reading only if it is a regular file, so a FIFO or a
//! device passed where a file is expected never blocks or floods us, and tells whether two
//! paths are the same file; `js` holds JavaScript's whitespace rules; `json` prints JSON as
//! JavaScript's `JSON.stringify` does; `output_file` creates the private files that hold
//! output the model was not shown in full; `sandbox` confines the commands pi runs (Landlock
//! and seccomp); `browser` opens a sign-in URL when there is a desktop. `encoding` (base64,
//! hex, percent-encoding), `random` and `date` (calendar days, ISO-8601 and HTTP dates) are
//! the one implementation of each small job; `math` is `ln`/`exp`/`powf` without linking libm;
//! `panic` is where a panic becomes an error (a tool call, a provider stream, the agent loop);
//! `packed` inflates the cold text `build.rs` compiles in deflated;
//! `reply` carries one-shot answers between threads; `reuse` overwrites a kept buffer's
//! elements in place (frames of rendered lines); `sort` is every sort in the crate,
//! compiled once instead of once per element type; `collate` orders names as JavaScript's
//! `localeCompare` does; `offline` reads `PI_OFFLINE` for every network path pi takes on its
//! own account; `heap` gives freed memory back to the system when a run ends; `typed_json`
//! reads a JSON value into a typed shape with errors that name the field; `home` shows a
//! path under `$HOME` as `~` and expands a leading `~` (the one rule for each).

pub mod atomic;
pub mod browser;
pub mod collate;
pub mod date;
pub mod encoding;
pub mod files;
pub mod heap;
pub mod home;
pub mod js;
pub mod json;
pub mod math;
pub mod offline;
pub mod output_file;
pub mod packed;
pub mod panic;
pub mod process;
pub mod random;
pub mod reply;
pub mod reuse;
pub mod sandbox;
pub mod shell_commands;
pub mod shutdown;
pub mod sort;
pub mod terminal_text;
pub mod typed_json;
