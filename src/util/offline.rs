//! `PI_OFFLINE` (`--offline` sets it): pi reaches no network on its own account — no package
//! installs or updates, no jiti install, no registry fetches by the MCP servers it starts
//! through `npx`/`uvx`, no OAuth refresh. Model requests, which the user asks for, still go.

/// `PI_OFFLINE` set to `1`, `true` or `yes` (any case).
pub fn offline() -> bool {
    std::env::var("PI_OFFLINE").is_ok_and(|v| is_offline_value(&v))
}

fn is_offline_value(v: &str) -> bool {
    matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes")
}

/// What a command that needs the network says when refused offline.
pub fn refused(what: &str) -> String {
    format!(
        "{what} needs the network, and pi is offline (PI_OFFLINE or --offline). \
         Run it again without PI_OFFLINE to go ahead."
    )
}

/// The environment that keeps a package runner pi starts (`npx`, `npm exec`, `uvx`) off the
/// network: it uses what its cache holds and fails at once on anything else.
pub const RUNNER_OFFLINE_ENV: [(&str, &str); 4] = [
    ("npm_config_offline", "true"),
    ("npm_config_update_notifier", "false"),
    ("UV_OFFLINE", "1"),
    ("PIP_NO_INDEX", "1"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_that_mean_offline() {
        for v in ["1", "true", "TRUE", "yes", "Yes"] {
            assert!(is_offline_value(v), "{v}");
        }
        for v in ["", "0", "false", "no", "offline"] {
            assert!(!is_offline_value(v), "{v}");
        }
    }
}
