//! The `sandbox` setting and the `--sandbox` flag: which mode, extra writable roots, whether
//! the network stays open, and what to do on a kernel that cannot enforce it.
//!
//! The setting is a mode name (`"sandbox": "workspace-write"`) or an object
//! (`{"mode": …, "writableRoots": […], "network": true, "fallback": "warn"}`). A value pi does
//! not understand is an error, never read as "off": a typo must not silently unconfine.

use serde_json::Value;

/// How far commands are confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Commands run with all of the user's rights (pi's behaviour).
    #[default]
    Off,
    /// Read anything, write only the sandbox's temp directory, no network.
    ReadOnly,
    /// As read-only, plus writes under the working directory and `writableRoots`.
    WorkspaceWrite,
}

impl Mode {
    pub const NAMES: &'static str = "off, read-only, workspace-write";

    pub fn parse(s: &str) -> Option<Mode> {
        match s {
            "off" => Some(Mode::Off),
            "read-only" => Some(Mode::ReadOnly),
            "workspace-write" => Some(Mode::WorkspaceWrite),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::ReadOnly => "read-only",
            Mode::WorkspaceWrite => "workspace-write",
        }
    }
}

/// What pi does when the kernel cannot enforce part of the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fallback {
    /// Refuse to start (the default).
    #[default]
    Refuse,
    /// Warn once and confine with what the kernel offers.
    Warn,
}

/// The sandbox as configured (nothing checked against the kernel yet).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    pub mode: Mode,
    /// Extra writable paths (workspace-write only): `~` and relative paths as in a shell.
    pub writable_roots: Vec<String>,
    /// Leave the network open.
    pub network: bool,
    pub fallback: Fallback,
}

impl Config {
    /// From the merged `sandbox` setting (absent: off) and the `--sandbox` flag, which wins
    /// over the setting's mode.
    pub fn resolve(setting: Option<&Value>, flag: Option<Mode>) -> Result<Config, String> {
        let mut config = match setting {
            None | Some(Value::Null) => Config::default(),
            Some(Value::String(s)) => Config {
                mode: parse_mode(s)?,
                ..Config::default()
            },
            Some(Value::Object(o)) => Config {
                mode: match o.get("mode") {
                    None | Some(Value::Null) => Mode::Off,
                    Some(Value::String(s)) => parse_mode(s)?,
                    Some(v) => return Err(invalid("sandbox.mode", v, Mode::NAMES)),
                },
                writable_roots: match o.get("writableRoots") {
                    None | Some(Value::Null) => Vec::new(),
                    Some(Value::Array(a)) if a.iter().all(Value::is_string) => a
                        .iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect(),
                    Some(v) => return Err(invalid("sandbox.writableRoots", v, "a list of paths")),
                },
                network: match o.get("network") {
                    None | Some(Value::Null) => false,
                    Some(Value::Bool(b)) => *b,
                    Some(v) => return Err(invalid("sandbox.network", v, "true or false")),
                },
                fallback: match o.get("fallback") {
                    None | Some(Value::Null) => Fallback::Refuse,
                    Some(Value::String(s)) if s == "error" => Fallback::Refuse,
                    Some(Value::String(s)) if s == "warn" => Fallback::Warn,
                    Some(v) => return Err(invalid("sandbox.fallback", v, "\"error\" or \"warn\"")),
                },
            },
            Some(v) => return Err(invalid("sandbox", v, Mode::NAMES)),
        };
        if let Some(mode) = flag {
            config.mode = mode;
        }
        Ok(config)
    }
}

fn parse_mode(s: &str) -> Result<Mode, String> {
    Mode::parse(s).ok_or_else(|| invalid("sandbox", &Value::String(s.into()), Mode::NAMES))
}

fn invalid(key: &str, v: &Value, valid: &str) -> String {
    format!("Invalid setting {key}: {v} (valid: {valid})")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_mode_name_or_an_object() {
        assert_eq!(Config::resolve(None, None).unwrap(), Config::default());
        assert_eq!(
            Config::resolve(Some(&json!("read-only")), None)
                .unwrap()
                .mode,
            Mode::ReadOnly
        );
        let c = Config::resolve(
            Some(
                &json!({"mode": "workspace-write", "writableRoots": ["~/.cache"],
                "network": true, "fallback": "warn", "futureKey": 1}),
            ),
            None,
        )
        .unwrap();
        assert_eq!(
            c,
            Config {
                mode: Mode::WorkspaceWrite,
                writable_roots: vec!["~/.cache".into()],
                network: true,
                fallback: Fallback::Warn,
            }
        );
    }

    #[test]
    fn the_flag_wins_over_the_setting() {
        let c = Config::resolve(
            Some(&json!({"mode": "workspace-write", "network": true})),
            Some(Mode::ReadOnly),
        )
        .unwrap();
        assert_eq!((c.mode, c.network), (Mode::ReadOnly, true));
        let c = Config::resolve(Some(&json!("workspace-write")), Some(Mode::Off)).unwrap();
        assert_eq!(c.mode, Mode::Off);
    }

    #[test]
    fn a_value_it_does_not_understand_is_an_error_not_off() {
        for bad in [
            json!("workspace"),
            json!(true),
            json!({"mode": "ro"}),
            json!({"mode": "read-only", "writableRoots": "/tmp"}),
            json!({"mode": "read-only", "network": "yes"}),
            json!({"mode": "read-only", "fallback": "ignore"}),
        ] {
            let e = Config::resolve(Some(&bad), None).unwrap_err();
            assert!(e.starts_with("Invalid setting sandbox"), "{e}");
        }
    }
}
