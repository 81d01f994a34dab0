"""Interactive-mode benchmarks on a pseudo-terminal: time from exec to a ready editor, idle
RSS (and its anonymous part), and keystroke-to-screen latency with a long session loaded.

    python3 scripts/bench_interactive.py <agent dir> <cwd> <session.jsonl|-> <runs> -- <pi command...>

The agent dir must hold a models.json whose default model `mock/mock-model` needs no network to
start (the footer shows its name once the editor is ready). Prints one `key value` line per
metric (milliseconds / KiB); `make bench` reads them."""
import os, pty, select, shutil, statistics, sys, time, fcntl, termios, struct, signal

def spawn(argv, env, cwd, cols=120, rows=40):
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(cwd)
        os.execve(argv[0], argv, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    return pid, fd

def read_until(fd, needle, timeout, answer_queries=True):
    """Reads until `needle` (bytes) appears; answers terminal queries like a terminal would."""
    buf = b""
    end = time.perf_counter() + timeout
    while time.perf_counter() < end:
        r, _, _ = select.select([fd], [], [], max(0, end - time.perf_counter()))
        if not r:
            break
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        buf += chunk
        if needle in buf:
            return buf, time.perf_counter()
    raise SystemExit(f"timed out waiting for {needle!r}; got {buf[-400:]!r}")

def rss_kib(pid, field="VmRSS:"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1])
    return 0

def main():
    agent_dir, cwd, session, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    command = sys.argv[sys.argv.index("--") + 1:]
    command[0] = shutil.which(command[0]) or command[0]
    session = None if session == "-" else session
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "HOME": os.environ.get("BENCH_HOME", os.path.dirname(os.path.dirname(agent_dir))),
           "PI_CODING_AGENT_DIR": agent_dir, "TERM": "xterm-256color", "LANG": "C.UTF-8",
           "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"}
    # Start-up: exec to the footer's model name (drawn with the editor in the first frame).
    starts, rss, anon = [], [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        pid, fd = spawn(command, env, cwd)
        _, t1 = read_until(fd, b"mock-model", 30)
        starts.append((t1 - t0) * 1000)
        time.sleep(0.3)
        rss.append(rss_kib(pid))
        anon.append(rss_kib(pid, "RssAnon:"))
        os.kill(pid, signal.SIGKILL); os.waitpid(pid, 0); os.close(fd)
    print(f"startup_ms {statistics.median(starts):.1f}")
    print(f"idle_rss_kib {statistics.median(rss):.0f}")
    # The rest of RSS is the binary's and libc's pages, mapped from the page cache: how many
    # depends on how that file sits in the cache (a freshly copied binary maps ~0.5 MB more),
    # so only the anonymous part follows what the program allocates.
    print(f"idle_anon_kib {statistics.median(anon):.0f}")
    if session:
        pid, fd = spawn(command + ["--session", session], env, cwd)
        # The last message of the generated session must be on screen: it really loaded.
        read_until(fd, b"Done", 60)
        time.sleep(0.5)
        lat = []
        for i in range(40):
            ch = "abcdefghijklmnopqrstuvwxyz"[i % 26]
            t0 = time.perf_counter()
            os.write(fd, ch.encode())
            # The editor redraws its line; the synchronized-output end marks the frame done.
            read_until(fd, b"\x1b[?2026l", 5)
            lat.append((time.perf_counter() - t0) * 1000)
            time.sleep(0.03)
        print(f"keystroke_ms {statistics.median(lat):.2f}")
        print(f"keystroke_p95_ms {sorted(lat)[int(len(lat) * 0.95) - 1]:.2f}")
        print(f"loaded_rss_kib {rss_kib(pid)}")
        os.kill(pid, signal.SIGKILL); os.waitpid(pid, 0); os.close(fd)

main()
