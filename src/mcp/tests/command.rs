use super::*;

fn run_cmd(args: &[&str], agent: &Path, cwd: &Path) -> (i32, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let code = run(
        &args,
        agent,
        cwd,
        &mut Io {
            out: &mut out,
            err: &mut err,
        },
    );
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

#[test]
fn help_usage_and_unknown_commands() {
    let d = tempfile::tempdir().unwrap();
    let (code, out, _) = run_cmd(&[], d.path(), d.path());
    assert_eq!(code, 0);
    assert!(out.starts_with("Usage:\n  pi mcp add <server> [options] -- <command> [args...]\n"));
    assert_eq!(run_cmd(&["list", "--help"], d.path(), d.path()).1, out);
    let (code, _, err) = run_cmd(&["frob"], d.path(), d.path());
    assert_eq!(
        (code, err.as_str()),
        (
            1,
            "Unknown mcp command \"frob\".\nUse \"pi mcp --help\" for usage.\n"
        )
    );
    let (code, _, err) = run_cmd(&["list", "--jsn"], d.path(), d.path());
    assert_eq!(
        (code, err.as_str()),
        (
            1,
            "Unknown option --jsn.\nUse \"pi mcp --help\" for usage.\n"
        )
    );
    let (code, _, err) = run_cmd(&["list", "extra"], d.path(), d.path());
    assert_eq!(
        (code, err.as_str()),
        (
            1,
            "Usage: pi mcp list [--json]\nUse \"pi mcp --help\" for usage.\n"
        )
    );
    let (code, _, err) = run_cmd(&["login", "x"], d.path(), d.path());
    assert_eq!(
        (code, err.as_str()),
        (1, "No MCP server named \"x\". Configured: none.\n")
    );
}

#[test]
fn add_checks_its_options() {
    let d = tempfile::tempdir().unwrap();
    let (a, c) = (d.path().join("agent"), d.path().join("w"));
    let (code, _, err) = run_cmd(
        &["add", "x", "--header", "novalue", "--url", "https://x"],
        &a,
        &c,
    );
    assert_eq!(
        (code, err.as_str()),
        (1, "--header expects KEY=VALUE, got \"novalue\".\n")
    );
    let (code, _, err) = run_cmd(&["add", "x", "--cwd"], &a, &c);
    assert_eq!((code, err.as_str()), (1, "--cwd needs a value.\n"));
    let (code, _, err) = run_cmd(&["add", "x", "--header", "A=1", "--", "cmd"], &a, &c);
    assert_eq!(
        (code, err.as_str()),
        (1, "--header only applies to HTTP servers (--url).\n")
    );
    let (code, _, err) = run_cmd(&["add", "x", "--url", "ftp://x"], &a, &c);
    assert_eq!(
        (code, err.as_str()),
        (1, "server \"x\": url must be an http or https URL\n")
    );
    let (code, _, err) = run_cmd(&["add", "x", "--exposure", "loud", "--", "cmd"], &a, &c);
    assert_eq!(code, 1);
    assert!(
        err.starts_with("server \"x\": exposure must be one of"),
        "{err}"
    );
    assert!(
        !config::global_path(&a).exists(),
        "nothing written on errors"
    );

    let (code, out, _) = run_cmd(
        &[
            "add",
            "o",
            "--url",
            "http://127.0.0.1:9/mcp",
            "--oauth-client-id",
            "cid",
            "--oauth-callback-port",
            "8765",
            "--oauth-client-registration",
            "dcr",
        ],
        &a,
        &c,
    );
    assert_eq!(code, 0);
    assert!(
        out.ends_with("Check it with: pi mcp list. If it requires sign-in: pi mcp login o\n"),
        "{out}"
    );
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(config::global_path(&a)).unwrap()).unwrap();
    assert_eq!(
        doc["mcpServers"]["o"],
        json!({"url": "http://127.0.0.1:9/mcp", "oauth": {"clientId": "cid", "callbackPort": 8765, "clientRegistration": "dcr"}})
    );
    let (code, out, _) = run_cmd(
        &["add", "o", "--", "node", "server.js", "--port", "3"],
        &a,
        &c,
    );
    assert_eq!(code, 0);
    assert!(out.starts_with("Replaced global MCP server \"o\""), "{out}");
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(config::global_path(&a)).unwrap()).unwrap();
    assert_eq!(
        doc["mcpServers"]["o"],
        json!({"command": "node", "args": ["server.js", "--port", "3"]})
    );
}
