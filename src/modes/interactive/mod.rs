//! Interactive mode (the app lives on the `interactive` branch; this file only wires in the
//! selectors until the two meet).

pub mod selectors;
