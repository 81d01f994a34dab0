//! `PI_OFFLINE` (issue 35): with no registry to reach, no command waits on a network it may
//! not use. Each test points npm at a port nothing listens on and, where a command would
//! reach the registry, asserts the clear answer rather than an elapsed time.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use crate::ext_bridge::{have_node, module, node_strips_types, with_ext};
use crate::support::{MockServer, PiCommand, Reply};

const API: &str = "openai-completions";
const NO_REGISTRY: &str = "http://127.0.0.1:1/";

/// An executable script in the run's home that logs its arguments to `<name>.log` and fails
/// the way a tool without a network would.
fn logging_stub(pi: &PiCommand, name: &str) -> (PathBuf, PathBuf) {
    let log = pi.home().join(format!("{name}.log"));
    let path = module(
        pi,
        name,
        &format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\necho 'npm ERR! network request failed' >&2\nexit 1\n",
            log.display()
        ),
    );
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    (path, log)
}

fn offline(pi: PiCommand) -> PiCommand {
    pi.env("PI_OFFLINE", "1")
        .env("npm_config_registry", NO_REGISTRY)
}

#[test]
fn offline_a_typescript_extension_needing_jiti_fails_at_once_and_says_why() {
    let test = "offline_a_typescript_extension_needing_jiti_fails_at_once_and_says_why";
    if !have_node(test) {
        return;
    }
    if node_strips_types() {
        eprintln!("SKIPPED {test}: this Node strips types itself, so no jiti is needed");
        return;
    }
    let mock = MockServer::with_replies([Reply::text(API, "answered")]);
    let pi = PiCommand::for_mock(API, &mock);
    let (npm, log) = logging_stub(&pi, "npm");
    let ext = module(&pi, "hello.ts", "export default function (pi: any) {}\n");
    let out = with_ext(offline(pi.again()), &ext)
        .env("PI_NPM", npm.to_string_lossy())
        .env("PI_JITI", "")
        .args(["-p", "hi"])
        .run();
    out.assert_no_panic();
    assert!(
        !log.exists(),
        "npm was run offline: {}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    assert!(
        out.stderr
            .contains("pi is offline (PI_OFFLINE or --offline)"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("PI_JITI"), "{}", out.stderr);
    assert!(!out.stderr.contains("installing it into"), "{}", out.stderr);
}

#[test]
fn offline_pi_install_refuses_npm_and_git_sources_without_running_them() {
    let pi = PiCommand::new();
    let (npm, log) = logging_stub(&pi, "npm");
    let pi = pi.write_agent_file(
        "settings.json",
        &serde_json::json!({"npmCommand": [npm]}).to_string(),
    );
    for (source, named) in [
        ("npm:left-pad", "Installing npm:left-pad needs the network"),
        (
            "git:example.com/team/demo",
            "Installing https://example.com/team/demo needs the network",
        ),
    ] {
        let out = offline(pi.again())
            .env("GIT_CONFIG_COUNT", "1")
            .env("GIT_CONFIG_KEY_0", format!("url.{NO_REGISTRY}.insteadOf"))
            .env("GIT_CONFIG_VALUE_0", "https://example.com/")
            .args(["install", source])
            .run();
        out.assert_code(1).assert_no_panic();
        assert!(out.stderr.contains(named), "{source}: {}", out.stderr);
        assert!(
            out.stderr
                .contains("pi is offline (PI_OFFLINE or --offline)"),
            "{}",
            out.stderr
        );
        assert!(!out.stderr.contains("failed with code"), "{}", out.stderr);
    }
    assert!(
        !log.exists(),
        "npm ran: {}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    // Nothing was recorded as installed.
    let settings = std::fs::read_to_string(pi.agent_dir().join("settings.json")).unwrap();
    assert!(!settings.contains("packages"), "{settings}");
}

#[test]
fn offline_an_npx_mcp_server_not_in_the_cache_fails_at_once_and_says_why() {
    if !have_node("offline_an_npx_mcp_server_not_in_the_cache_fails_at_once_and_says_why") {
        return;
    }
    let pi = PiCommand::new();
    let cache = pi.home().join("npm-cache");
    std::fs::create_dir_all(&cache).unwrap();
    let pi = pi.write_agent_file(
        "mcp.json",
        &crate::support::mcp::mcp_json(serde_json::json!({
            "remote": {"command": "npx", "args": ["-y", "pi-test-package-nobody-cached"]}
        })),
    );
    let started = std::time::Instant::now();
    let out = offline(pi.again())
        .env("npm_config_cache", cache.to_string_lossy())
        .args(["mcp", "list"])
        .run();
    out.assert_no_panic();
    let text = format!("{}{}", out.stdout, out.stderr);
    assert!(text.contains("remote: failed"), "{text}");
    // npm's own reason, then pi's.
    assert!(text.contains("ENOTCACHED"), "{text}");
    assert!(
        text.contains(
            "pi is offline (PI_OFFLINE or --offline), so npx may use only what its cache holds"
        ),
        "{text}"
    );
    // A safety net only: npm used to retry the registry for a minute.
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn offline_an_expired_oauth_token_is_not_refreshed_and_the_login_is_kept() {
    let mock = MockServer::start();
    let stored = serde_json::json!({"anthropic": {"type": "oauth", "access": "old",
        "refresh": "rt", "expires": 1}});
    let pi = PiCommand::new()
        .env("PI_OAUTH_TEST_BASE", mock.url())
        .write_agent_file("auth.json", &stored.to_string());
    let out = offline(pi.again())
        .args(["auth", "print-bearer-token", "--provider", "anthropic"])
        .run();
    out.assert_no_panic();
    assert_ne!(out.code, Some(0), "{}", out.stdout);
    assert_eq!(mock.request_count(), 0, "no refresh request offline");
    assert!(
        out.stderr
            .contains("The OAuth token for anthropic has expired, and pi is offline"),
        "{}",
        out.stderr
    );
    let kept: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(pi.agent_dir().join("auth.json")).unwrap())
            .unwrap();
    assert_eq!(kept, stored);
}
