//! The `sandbox` setting and the `--sandbox` flag: which mode, extra writable roots, whether
//! the network stays open, and what to do on a kernel that cannot enforce it.
//!
//! The setting is a mode name (`"sandbox": "workspace-write"`) or an object
//! (`{"mode": …, "writableRoots": […], "network": true, "fallback": "warn"}`). A value pi does
//! not understand is an error, never read as "off": a typo must not silently unconfine.
//!
//! The user's own settings and `--sandbox` set the sandbox; a project's `.pi/settings.json`
//! may only tighten it ([`Config::resolve_layers`]): a stricter mode (off < workspace-write <
//! read-only), `network: false`, `fallback: "error"`. What would loosen it — turning it off,
//! extra writable roots, an open network, a "warn" fallback — is ignored with a warning, so a
//! file the model (or a cloned repository) wrote cannot weaken the next run.

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
    /// How strict the mode is: off < workspace-write < read-only.
    fn strictness(self) -> u8 {
        match self {
            Mode::Off => 0,
            Mode::WorkspaceWrite => 1,
            Mode::ReadOnly => 2,
        }
    }

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

/// The sandbox from its layers, and a warning for each thing the project asked for and did
/// not get.
#[derive(Debug, Clone, PartialEq)]
pub struct Layered {
    pub config: Config,
    pub warnings: Vec<String>,
}

impl Config {
    /// From the user's own `sandbox` setting (`~/.pi/agent/settings.json`), the project's
    /// (`.pi/settings.json`, only read in a trusted folder) and the `--sandbox` flag. The
    /// project may only tighten what the user set; the flag's mode wins over both.
    pub fn resolve_layers(
        user: Option<&Value>,
        project: Option<&Value>,
        flag: Option<Mode>,
    ) -> Result<Layered, String> {
        let mut config = Config::resolve(user, None)?;
        let mut warnings = Vec::new();
        if let Some(project) = project.filter(|v| !v.is_null()) {
            let asked = Config::resolve(Some(project), None)
                .map_err(|e| format!("{e} (in the project's .pi/settings.json)"))?;
            let mode_set = match project {
                Value::String(_) => true,
                Value::Object(o) => o.get("mode").is_some_and(|v| !v.is_null()),
                _ => false,
            };
            let mut ignored = Vec::new();
            if mode_set {
                if asked.mode.strictness() >= config.mode.strictness() {
                    config.mode = asked.mode;
                } else {
                    ignored.push(format!("mode \"{}\"", asked.mode.as_str()));
                }
            }
            if let Value::Object(o) = project {
                if o.get("network") == Some(&Value::Bool(false)) {
                    config.network = false;
                } else if asked.network && !config.network {
                    ignored.push("network: true".into());
                }
                match o.get("fallback").and_then(Value::as_str) {
                    Some("error") => config.fallback = Fallback::Refuse,
                    Some("warn") if config.fallback != Fallback::Warn => {
                        ignored.push("fallback \"warn\"".into())
                    }
                    _ => {}
                }
            }
            if !asked.writable_roots.is_empty() {
                ignored.push(format!("writableRoots {:?}", asked.writable_roots));
            }
            let on = flag.unwrap_or(config.mode) != Mode::Off;
            if on && !ignored.is_empty() {
                warnings.push(format!(
                    "the project's .pi/settings.json asks the sandbox for {}; ignored: a project may only tighten the sandbox. Loosen it in your own settings (~/.pi/agent/settings.json) or with --sandbox.",
                    ignored.join(", ")
                ));
            }
        }
        if let Some(mode) = flag {
            config.mode = mode;
        }
        Ok(Layered { config, warnings })
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

    fn layers(user: Value, project: Value, flag: Option<Mode>) -> Layered {
        let user = (!user.is_null()).then_some(user);
        Config::resolve_layers(user.as_ref(), Some(&project), flag).unwrap()
    }

    #[test]
    fn a_project_cannot_loosen_what_the_user_set() {
        let l = layers(
            json!("workspace-write"),
            json!({"mode": "off", "writableRoots": ["~"], "network": true, "fallback": "warn"}),
            None,
        );
        assert_eq!(
            l.config,
            Config {
                mode: Mode::WorkspaceWrite,
                ..Config::default()
            }
        );
        assert_eq!(l.warnings.len(), 1, "{:?}", l.warnings);
        for part in [
            "mode \"off\"",
            "writableRoots",
            "network: true",
            "fallback \"warn\"",
        ] {
            assert!(l.warnings[0].contains(part), "{part}: {}", l.warnings[0]);
        }
        // The flag's mode still wins; the project's loosening is still ignored.
        let l = layers(json!(null), json!({"network": true}), Some(Mode::ReadOnly));
        assert_eq!((l.config.mode, l.config.network), (Mode::ReadOnly, false));
        assert_eq!(l.warnings.len(), 1);
    }

    #[test]
    fn a_project_may_tighten() {
        let l = layers(
            json!({"mode": "workspace-write", "network": true, "fallback": "warn", "writableRoots": ["/x"]}),
            json!({"mode": "read-only", "network": false, "fallback": "error"}),
            None,
        );
        assert_eq!(
            l.config,
            Config {
                mode: Mode::ReadOnly,
                writable_roots: vec!["/x".into()],
                network: false,
                fallback: Fallback::Refuse,
            }
        );
        assert!(l.warnings.is_empty());
        // A project may turn the sandbox on where the user has none.
        let l = layers(json!(null), json!("workspace-write"), None);
        assert_eq!(l.config.mode, Mode::WorkspaceWrite);
        // Asking for what the user already allows is no loosening.
        let l = layers(
            json!({"mode": "workspace-write", "network": true}),
            json!({"mode": "workspace-write", "network": true}),
            None,
        );
        assert!(l.config.network && l.warnings.is_empty());
        // --sandbox off wins over everything.
        let l = layers(json!("read-only"), json!("read-only"), Some(Mode::Off));
        assert_eq!(l.config.mode, Mode::Off);
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
