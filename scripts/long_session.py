#!/usr/bin/env python3
"""Memory against the length of a session (issue 35, item 5). Python standard library only.

    long_session.py prompts PI [--counts 10,1000] [--tool-bytes N] [--json]
        One RPC session (`PI --mode rpc`) against scripts/bench_mock.py: each prompt asks for a
        `bash` call printing N bytes (default 4000; 0: plain chat), so every turn writes a user
        message, an assistant tool call, a tool result and an answer. After each count of
        prompts, prints pi's VmRSS/VmHWM and the session file's size.
    long_session.py generate OUT.jsonl MEGABYTES [--cwd DIR]
        An uncompacted v3 session of about that size: many turns with large tool results and
        an image every 50 turns.
    long_session.py resume PI FILE
        Resumes FILE with `PI --session FILE --mode rpc`, answers `get_state` and
        `get_messages`, and prints VmRSS/VmHWM beside the file's size.

PI is a command (e.g. target/release/pi, or "node dist/cli.js" for the TypeScript pi)."""
import argparse, base64, json, os, random, shlex, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))


def proc_status(pid):
    """(VmRSS KiB, VmHWM KiB) of a live process."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1])
    return out.get("VmRSS", 0), out.get("VmHWM", 0)


class Mock:
    """scripts/bench_mock.py on a free port, with an agent dir whose models.json points at it."""

    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="pi-long-")
        port_file = os.path.join(self.dir, "port")
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "bench_mock.py"), port_file],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            time.sleep(0.05)
        port = open(port_file).read().strip()
        agent = os.path.join(self.dir, "home", ".pi", "agent")
        os.makedirs(agent)
        self.cwd = os.path.join(self.dir, "work")
        os.makedirs(self.cwd)
        with open(os.path.join(agent, "models.json"), "w") as f:
            json.dump({"providers": {"mock": {"baseUrl": f"http://127.0.0.1:{port}/v1",
                                              "api": "openai-completions", "apiKey": "k",
                                              "models": [{"id": "mock-model"}]}}}, f)
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                    "HOME": os.path.join(self.dir, "home"), "PI_CODING_AGENT_DIR": agent,
                    "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0",
                    "TERM": "dumb", "TMPDIR": self.dir}
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait()
        subprocess.run(["rm", "-rf", self.dir])


def pi_cmd(pi):
    """PI as an argv; a relative program path is taken from the caller's directory (pi runs in
    a scratch directory)."""
    argv = shlex.split(pi)
    if os.sep in argv[0] and not os.path.isabs(argv[0]):
        argv[0] = os.path.abspath(argv[0])
    return argv


def read_until(p, prefix):
    while True:
        line = p.stdout.readline()
        if not line:
            raise RuntimeError(f"pi closed stdout waiting for {prefix!r}")
        if line.startswith(prefix):
            return line


def long_session(pi, counts, tool_bytes, env=None, cwd=None):
    """[(prompts, VmRSS KiB, VmHWM KiB, session bytes)] of one RPC process."""
    with Mock() as mock:
        session = os.path.join(mock.dir, "long.jsonl")
        cmd = pi_cmd(pi) + ["--mode", "rpc", "--model", "mock/mock-model", "--session", session]
        p = subprocess.Popen(cmd, env=env or mock.env, cwd=cwd or mock.cwd, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        if tool_bytes:
            # Distinct lines, so nothing compresses or deduplicates by accident.
            shell = f"seq 100000000 200000000 | head -c {tool_bytes}"
            text = "BENCH_TOOL " + json.dumps({"name": "bash", "arguments": {"command": shell}})
        else:
            text = "hello"
        rows, done = [], 0
        try:
            for target in sorted(counts):
                while done < target:
                    p.stdin.write(json.dumps({"type": "prompt", "message": f"{done}: {text}"}).encode() + b"\n")
                    p.stdin.flush()
                    read_until(p, b'{"type":"agent_end"')
                    done += 1
                time.sleep(0.2)  # let the session write settle
                rss, hwm = proc_status(p.pid)
                size = os.path.getsize(session) if os.path.exists(session) else 0
                rows.append((target, rss, hwm, size))
        finally:
            p.stdin.close()
            p.stdout.read()
            p.wait()
        return rows


def generate(out, megabytes, cwd="/tmp"):
    """An uncompacted linear session of about `megabytes` MB: user prompt, assistant tool call,
    large tool result (8-64 KB), assistant answer; a small PNG in a tool result every 50 turns."""
    rng = random.Random(35)
    target = int(megabytes * 1e6)
    words = "the a of to in is fn let mut match error value src/session/store.rs é 日本 🙂 \"q\" \\ \t".split(" ")
    blob = " ".join(rng.choice(words) for _ in range(200_000)) + "\n"
    png = base64.b64encode(bytes(range(256)) * 64).decode()
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    usage = {"input": 100, "output": 50, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 150,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
    ms = 1795304767000
    n = 0
    parent = None
    with open(out, "w", encoding="utf-8") as f:
        f.write(dumps({"type": "session", "version": 3, "id": "019a0000-0000-7000-8000-000000000035",
                       "timestamp": "2026-11-21T00:00:00.000Z", "cwd": cwd}) + "\n")

        def entry(msg):
            nonlocal parent, n, ms
            n += 1
            ms += 1000
            eid = f"{n:08x}"
            f.write(dumps({"type": "message", "id": eid, "parentId": parent,
                           "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(ms / 1000)),
                           "message": dict(msg, timestamp=ms)}) + "\n")
            parent = eid

        turn = 0
        while f.tell() < target:
            turn += 1
            entry({"role": "user", "content": [{"type": "text", "text": f"Turn {turn}: look at the logs"}]})
            call = f"call_{turn}"
            entry({"role": "assistant", "content": [{"type": "toolCall", "id": call, "name": "bash",
                                                     "arguments": {"command": "cat log.txt"}}],
                   "api": "openai-completions", "provider": "mock", "model": "mock-model",
                   "usage": usage, "stopReason": "toolUse"})
            size = rng.randint(8_000, 64_000)
            at = rng.randrange(len(blob) - size)
            content = [{"type": "text", "text": blob[at:at + size]}]
            if turn % 50 == 0:
                content.append({"type": "image", "data": png, "mimeType": "image/png"})
            entry({"role": "toolResult", "toolCallId": call, "toolName": "bash", "content": content,
                   "isError": False})
            entry({"role": "assistant", "content": [{"type": "text", "text": f"Done with turn {turn}."}],
                   "api": "openai-completions", "provider": "mock", "model": "mock-model",
                   "usage": usage, "stopReason": "stop"})
    return n


def resume(pi, path, env=None, cwd=None):
    """{"state": (VmRSS, VmHWM) KiB after get_state, "messages": the same after get_messages,
    "bytes": file size, "count": messages}."""
    with Mock() as mock:
        cmd = pi_cmd(pi) + ["--mode", "rpc", "--model", "mock/mock-model", "--session", path]
        p = subprocess.Popen(cmd, env=env or mock.env, cwd=cwd or mock.cwd, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            p.stdin.write(b'{"type":"get_state","id":"s"}\n')
            p.stdin.flush()
            read_until(p, b'{"id":"s"')
            time.sleep(0.2)
            state = proc_status(p.pid)
            p.stdin.write(b'{"type":"get_messages","id":"m"}\n')
            p.stdin.flush()
            line = read_until(p, b'{"id":"m"')
            count = len(json.loads(line)["data"]["messages"])
            time.sleep(0.2)
            messages = proc_status(p.pid)
        finally:
            p.stdin.close()
            p.stdout.read()
            p.wait()
        return {"state": state, "messages": messages, "bytes": os.path.getsize(path), "count": count}


def bench_rows(impls, prompts=1000, tool_bytes=4000, resume_mb=200.0):
    """The bench's two memory rows for each (name, PI command): {row: [cell per impl]}."""
    rows = {"long_session": [], "resume_memory": []}
    scratch = tempfile.mkdtemp(prefix="pi-long-bench-")
    big = os.path.join(scratch, "big.jsonl")
    generate(big, resume_mb)
    try:
        for name, pi in impls:
            print(f"{name}: {prompts} prompts in one RPC session...", file=sys.stderr)
            try:
                (_, r0, _, s0), (_, r1, _, s1) = long_session(pi, [10, prompts], tool_bytes)
                rows["long_session"].append(
                    f"{r0 / 1024:.1f} -> {r1 / 1024:.1f} MiB for a {s0 / 1024:.0f} KiB -> {s1 / 1024:.0f} KiB "
                    f"file ({(r1 - r0) * 1024 / max(1, s1 - s0):.2f}x its growth)")
            except (RuntimeError, OSError) as e:
                print(f"warning: long session: {e}", file=sys.stderr)
                rows["long_session"].append("failed")
            print(f"{name}: resuming a {resume_mb:g} MB session...", file=sys.stderr)
            copy = os.path.join(scratch, "resume.jsonl")
            subprocess.run(["cp", big, copy], check=True)
            try:
                r = resume(pi, copy)
                size = r["bytes"] / 1024
                rows["resume_memory"].append(
                    f"{r['state'][0] / 1024:.0f} MiB ({r['state'][0] / size:.2f}x), peak "
                    f"{r['state'][1] / 1024:.0f} MiB; get_messages peak {r['messages'][1] / 1024:.0f} MiB")
            except (RuntimeError, OSError, ValueError, KeyError) as e:
                print(f"warning: resume: {e}", file=sys.stderr)
                rows["resume_memory"].append("failed")
    finally:
        subprocess.run(["rm", "-rf", scratch])
    return rows


BENCH_LABELS = {
    "long_session": "rpc: RSS after 10 -> N prompts (4 KB bash result each), vs session file",
    "resume_memory": "rpc: resume an uncompacted session, RSS after get_state (x file)",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("prompts")
    a.add_argument("pi")
    a.add_argument("--counts", default="10,1000")
    a.add_argument("--tool-bytes", type=int, default=4000)
    a.add_argument("--json", action="store_true")
    g = sub.add_parser("generate")
    g.add_argument("out")
    g.add_argument("megabytes", type=float)
    g.add_argument("--cwd", default="/tmp")
    b = sub.add_parser("bench", help="the bench's memory rows: bench NAME=PI [NAME=PI ...]")
    b.add_argument("impls", nargs="+")
    b.add_argument("--prompts", type=int, default=1000)
    b.add_argument("--resume-mb", type=float, default=200.0)
    b.add_argument("--json", action="store_true")
    r = sub.add_parser("resume")
    r.add_argument("pi")
    r.add_argument("file")
    r.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.cmd == "prompts":
        rows = long_session(args.pi, [int(c) for c in args.counts.split(",")], args.tool_bytes)
        if args.json:
            print(json.dumps(rows))
            return
        for n, rss, hwm, size in rows:
            print(f"{n:6d} prompts: VmRSS {rss / 1024:7.1f} MiB  VmHWM {hwm / 1024:7.1f} MiB  "
                  f"session {size / 1024:9.1f} KiB")
        (n0, r0, _, s0), (n1, r1, _, s1) = rows[0], rows[-1]
        if s1 > s0:
            print(f"growth {n0}->{n1}: RSS +{(r1 - r0) / 1024:.1f} MiB, file +{(s1 - s0) / 1024:.1f} KiB, "
                  f"ratio {(r1 - r0) * 1024 / (s1 - s0):.2f}x")
    elif args.cmd == "generate":
        n = generate(args.out, args.megabytes, args.cwd)
        print(f"{args.out}: {os.path.getsize(args.out) / 1e6:.1f} MB, {n} entries")
    elif args.cmd == "bench":
        impls = [tuple(i.split("=", 1)) for i in args.impls]
        rows = bench_rows(impls, args.prompts, resume_mb=args.resume_mb)
        if args.json:
            print(json.dumps(rows))
            return
        for key, label in BENCH_LABELS.items():
            print(label)
            for (name, _), cell in zip(impls, rows[key]):
                print(f"  {name}: {cell}")
    else:
        r = resume(args.pi, args.file)
        if args.json:
            print(json.dumps(r))
            return
        size = r["bytes"]
        print(f"resume {size / 1e6:.1f} MB ({r['count']} messages): after get_state VmRSS "
              f"{r['state'][0] / 1024:.1f} MiB, VmHWM {r['state'][1] / 1024:.1f} MiB "
              f"({r['state'][1] * 1024 / size:.2f}x the file); after get_messages VmRSS "
              f"{r['messages'][0] / 1024:.1f} MiB, VmHWM {r['messages'][1] / 1024:.1f} MiB")

if __name__ == "__main__":
    main()
