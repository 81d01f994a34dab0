//! pi packages: bundles of extensions, skills, prompt templates and themes installed from npm,
//! git or a local path and recorded in the `packages` array of the global or project
//! `settings.json` (a source string, or `{source, extensions?, skills?, prompts?, themes?}` with
//! filters).
//!
//! `source` parses sources, `collect` finds what one package directory contributes,
//! `manager` installs / removes / updates them with the system `git` and `npm`, `entry` holds
//! what a configured package is, and `resolve` turns the configured packages into resource
//! paths for the loader, the extension host and the TUI. This file only declares and
//! re-exports.

pub mod collect;
pub mod config;
pub mod entry;
pub mod error;
pub mod manager;
pub mod resolve;
pub mod source;

pub use entry::{
    entries_of, Filters, PackageContext, PackageEntry, ResourceKind, Scope,
    PROJECT_NPM_COMMAND_IGNORED,
};
pub use error::PackageError;
pub use manager::PackageManager;
pub use resolve::{resolve, resolve_for_run, Missing, PackageResource, PackageResources};
pub use source::PackageSource;

#[cfg(test)]
mod tests;
