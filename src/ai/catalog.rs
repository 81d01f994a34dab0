//! The built-in model catalog (stub until generated).

use super::types::Model;

/// Every built-in model.
pub fn builtin_models() -> Vec<Model> {
    Vec::new()
}
