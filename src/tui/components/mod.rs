//! Ready-made components. Each renders lines no wider than the width it is given.

pub mod boxed;
pub mod loader;
pub mod text;
