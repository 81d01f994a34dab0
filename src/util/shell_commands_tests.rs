use super::*;

/// Every text a rule may see: each command's full form and what runs inside it.
fn seen(line: &str) -> Vec<String> {
    let mut v = Vec::new();
    for c in analyze(line).unwrap_or_else(|e| panic!("{line}: {e}")) {
        v.push(c.full);
        v.extend(c.unwrapped);
    }
    v
}

fn sees(line: &str, command: &str) {
    let all = seen(line);
    assert!(
        all.iter().any(|c| c == command),
        "{line:?} should run {command:?}; saw {all:?}"
    );
}

#[test]
fn chains_and_pipes_are_split() {
    sees("cd x && git push origin", "git push origin");
    sees("ls; git push", "git push");
    sees("true || git push", "git push");
    sees("curl -s https://x | grep y", "curl -s https://x");
    sees("ls\ngit push", "git push");
    sees("(cd a; git push)", "git push");
    sees("{ git push; }", "git push");
    sees("if true; then git push; fi", "git push");
    sees("sleep 1 & git push", "git push");
}

#[test]
fn quotes_and_backslashes_are_removed() {
    sees("g'i't  \"push\"", "git push");
    sees("gi\\t pu\\\nsh", "git push");
    sees("$'git' push", "git push");
    sees("/usr/bin/git push", "git push");
}

#[test]
fn wrappers_and_shells_are_seen_through() {
    sees("bash -c 'git push'", "git push");
    sees("sh -c \"cd x && git push\"", "git push");
    sees("bash -lc 'git push'", "git push");
    sees("env -i FOO=1 git push", "git push");
    sees("sudo -u root git push", "git push");
    sees("FOO=1 git push", "git push");
    sees("timeout 5 nice -n 3 git push", "git push");
    sees("eval 'git push'", "git push");
    sees("echo $(git push)", "git push");
    sees("echo \"`git push`\"", "git push");
    sees("diff <(git push) x", "git push");
    sees("bash <<'EOF'\ngit push\nEOF", "git push");
    sees("bash <<< 'git push'", "git push");
    sees("sudo bash -c 'rm -rf src'", "rm -rf src");
    sees("shopt -s expand_aliases\nalias p='git push'\np", "git push");
    sees("echo src | xargs rm -rf", "rm -rf");
    sees("su -c 'cd x && git push' root", "git push");
    sees("trap 'git push' EXIT", "git push");
    sees("find . -name x -exec git push \\;", "git push ;");
    sees("command git push", "git push");
    sees("git -C dir -c a=b --no-pager push", "git push");
    sees("sudo git -C . push", "git push");
    sees("X=push; git $X", "git \u{1}");
    sees("cat < <(git push)", "git push");
}

#[test]
fn what_cannot_be_known_is_an_error() {
    for line in [
        "curl https://x | sh",
        "curl https://x | sudo bash",
        "$CMD push",
        "\"$(echo git)\" push",
        "bash -c \"$SCRIPT\"",
        "eval \"$X\"",
        "echo 'unterminated",
        "case x in x) git push;; esac",
        "sudo $(which git) push",
        "g* push",
        "$'\\x67it' push",
        "git${IFS}push",
        "a[$(git push)]=1",
        "bash <(echo git push)",
        "source <(curl x)",
        "printf 'git push' | bash",
        "echo 'git push' | xargs sh -c",
        "find . -exec $X \\;",
        "cat <<EOF | sh\ngit push\nEOF",
    ] {
        assert!(
            analyze(line).is_err(),
            "{line:?} should not be understood: {:?}",
            analyze(line)
        );
    }
}

#[test]
fn ordinary_commands_read_plainly() {
    let c = analyze("ls -la src 2>&1").unwrap();
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].full, "ls -la src");
    assert!(!c[0].writes_file);
    assert!(analyze("echo hi > out.txt").unwrap()[0].writes_file);
    assert_eq!(seen("git status"), vec!["git status".to_string()]);
    // A here-document's body is data unless a shell reads it.
    assert_eq!(
        seen("cat > f <<'EOF'\ngit push\nEOF"),
        vec!["cat".to_string()]
    );
    assert!(analyze("echo $((1 + 2)) # git push").is_ok());
    assert_eq!(seen("echo '#' x"), vec!["echo # x".to_string()]);
    assert_eq!(
        seen("for f in a b; do echo $f; done"),
        vec!["echo $f".to_string(), "echo \u{1}".to_string()]
    );
}

#[test]
fn never_panics_on_any_line() {
    const ALPHABET: &[&str] = &[
        "a", " ", "'", "\"", "\\", "$", "(", ")", "`", "{", "}", "<", ">", "<<", "EOF", "\n", "|",
        "&", ";", "#", "*", "=", "-c", "bash", "sudo", "eval", "find", "-exec", "$'", "\\x", "[",
        "2>", "<(", "$((", "trap", "é",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..20_000 {
        let mut line = String::new();
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let len = (seed % 24) as usize;
        for _ in 0..len {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            line.push_str(ALPHABET[(seed % ALPHABET.len() as u64) as usize]);
        }
        let _ = analyze(&line);
    }
    assert!(analyze(&"$(".repeat(500)).is_err());
    assert!(analyze(&format!("sudo {}git push", "-E ".repeat(80))).is_err());
    let long = format!("echo {}", "word ".repeat(100_000));
    assert_eq!(analyze(&long).unwrap().len(), 1);
}
