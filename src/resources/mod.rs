//! Configuration read from disk: settings, auth, models.json.

pub mod settings;
