#!/usr/bin/env python3
"""make bench's ACP row (issue 32): spawn -> `initialize` answered -> `session/new` answered,
wall time (median) and the peak RSS of the whole process tree then, for `pi acp` natively,
for pi-acp (the Node adapter editors use today) over ours, and over the TypeScript pi.

    python3 scripts/acp_bench.py --pi target/release/pi [--ref 1.6.0] [--runs 10]

pi-acp and the reference pi come from the conformance cache (scripts/acp_check.py installs
pi-acp there; `--ref` the TypeScript pi); the columns whose programs are missing are left out.
HOME and the agent folder are scratch; no model is called.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "conformance"))
sys.dont_write_bytecode = True

import install  # noqa: E402


def tree_pids(pid):
    pids = [pid]
    for p in pids:
        try:
            for task in os.listdir("/proc/%d/task" % p):
                with open("/proc/%d/task/%s/children" % (p, task)) as f:
                    pids.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return pids


def peak_rss_kib(pid):
    total = 0
    for p in tree_pids(pid):
        try:
            with open("/proc/%d/status" % p) as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def one_run(argv, env, work):
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, cwd=work, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)

    def ask(i, method, params):
        p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode())
        p.stdin.flush()
        for line in p.stdout:
            m = json.loads(line)
            if m.get("id") == i and "method" not in m:
                return m
        return None

    ok = ask(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    ok = ok and ask(2, "session/new", {"cwd": work, "mcpServers": []})
    wall = (time.perf_counter() - t0) * 1000
    rss = peak_rss_kib(p.pid)
    p.stdin.close()
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    return (wall, rss) if ok and "result" in ok else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pi", required=True)
    ap.add_argument("--ref", default="")
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    home = tempfile.mkdtemp(prefix="pi-acp-bench-")
    try:
        agent = os.path.join(home, ".pi", "agent")
        work = os.path.join(home, "work")
        bin_dir = os.path.join(home, "bin")
        for d in (agent, work, bin_dir):
            os.makedirs(d)
        with open(os.path.join(agent, "models.json"), "w") as f:
            json.dump({"providers": {"mock": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions",
                                              "apiKey": "k", "models": [{"id": "mock-model"}]}}}, f)
        with open(os.path.join(agent, "settings.json"), "w") as f:
            json.dump({"defaultProvider": "mock", "defaultModel": "mock-model", "quietStartup": True}, f)
        base = {"HOME": home, "PI_CODING_AGENT_DIR": agent, "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1",
                "PI_TELEMETRY": "0"}
        pi = os.path.abspath(args.pi)
        columns = [("pi acp (native)", [pi, "acp"], dict(base, PATH=bin_dir))]
        node = install.system_node()
        entry = os.path.join(install.cache_dir(), "pi-acp-0.0.34", "node_modules", "pi-acp", "dist", "index.js")
        if node and os.path.exists(entry):
            path = os.environ.get("PATH", "")
            columns.append(("pi-acp + ours", [node, entry], dict(base, PATH=path, PI_ACP_PI_COMMAND=pi)))
            for v in [x for x in args.ref.split(",") if x]:
                ref = install.reference(v)
                columns.append(("pi-acp + pi " + v, [node, entry],
                                dict(base, PATH=os.pathsep.join(ref.path_prefix + [path]),
                                     PI_ACP_PI_COMMAND=ref.cli_js)))
        else:
            print("note: pi-acp not installed (make acp-check installs it); native column only", file=sys.stderr)
        cells = []
        for name, argv, env in columns:
            runs = [r for r in (one_run(argv, env, work) for _ in range(args.runs)) if r]
            if not runs:
                cells.append((name, "failed"))
                continue
            wall = statistics.median(r[0] for r in runs)
            rss = statistics.median(r[1] for r in runs) / 1024
            cells.append((name, "%.1f ms, %.1f MiB" % (wall, rss)))
        print("acp: spawn -> initialize -> session/new answered, wall / peak RSS of the tree (median of %d)"
              % args.runs)
        for name, cell in cells:
            print("  %-24s %s" % (name, cell))
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
