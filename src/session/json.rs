//! Moved to `util::json` (the JS number printer sits on the bottom floor, below the agent
//! loop); this re-export keeps the old path working until every caller names the new one.

pub use crate::util::json::{js_number, to_js_string};
