//! The `codemode` tool (pi 1.x, `docs/codemode.md`): the model writes JavaScript that calls the
//! other tools, and only the script's output reaches the model. `engine` runs one script in an
//! embedded QuickJS on its own thread; `source` reads the `// @options:` line; `tool` is the
//! tool itself: what a nested call resolves to, the output layout, budget and spill file.

pub mod engine;
pub mod loadout;
pub mod models;
pub mod schemas;
mod search;
pub mod source;
pub mod store;
pub mod tool;
pub mod typescript;
