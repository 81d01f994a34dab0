#!/usr/bin/env bash
# Benchmark: the CPU cost of streaming a long reply (100,000 vs 400,000 characters) and a long
# streamed `write` (50,000 vs 200,000), RPC start-up and per-event cost, startup time, one streamed round trip (wall time and peak RSS) against a local mock
# LLM server (and the same with SSL_CERT_FILE/SSL_CERT_DIR pointing at the system store, which
# plain HTTP must not read), binary size, and three tool runs (each a whole `pi -p` process whose mock model calls
# one tool and then answers `done`): an edit on a 10 MB file, grep over a 50,000-file tree (next to
# ripgrep doing the same search, when `rg` is installed), bash streaming 100 MB of output (wall
# and peak RSS), and grep over one 100 MB file (peak RSS, goal <= 16 MiB; `BENCH_ONLY=grep_big`
# runs that row alone). Then sessions: resuming a generated ~100 MB session file (a long chain of messages
# ending in a compaction, so the context sent is small) for one `-p` round trip (wall and peak RSS),
# and the cost of appending one entry to a session of 10 entries vs of 100,000
# (examples/session_bench.rs). Then MCP (examples/mcp_bench.rs): what it adds to start-up with no
# server configured, and a `tools/call` round trip over stdio on top of the server's own time. Then the terminal UI (examples/tui_bench.rs): one streamed token
# re-rendered under a 10,000-line transcript (time and rows written), and the CPU share of a core
# while a Markdown reply streams at 200 tokens/s with frames at 60 fps. Then extensions: 1, 5 and
# 20 small TypeScript extensions loaded for one -p round trip (wall, peak RSS of pi plus the Node.js
# it starts, and how many Node.js processes ran; ours runs them all in one). Then the sandbox
# (examples/sandbox_bench.rs): `bash -c true` spawned as the bash tool does, without and with
# `--sandbox workspace-write`. Then codemode (examples/codemode_bench.rs; `BENCH_ONLY=codemode` runs
# those rows and the static binary's size alone): the engine's start-up per call, and 20 `read`s in
# one script against 20 direct calls (time, and tokens reaching the model). Then checkpoints (examples/checkpoint_bench.rs; `BENCH_ONLY=checkpoint`
# runs those rows alone): a snapshot before a turn on a 10,000-file repository, unchanged and with 5
# files changed, and after a 100 MB binary file changed. Then memory against the length of a session
# (scripts/long_session.py): RSS after 10 and 1,000 prompts of one RPC session beside the session
# file's size, and RSS after resuming a 200 MB uncompacted session (BENCH_LONG_PROMPTS,
# BENCH_RESUME_MB). Then ACP (scripts/acp_bench.py): `pi acp` from spawn to `session/new` answered,
# beside pi-acp + ours and + the TypeScript pi (`BENCH_ONLY=acp` alone). Prints one table; the
# TypeScript pi gets a second column when it is installed ($PI_TS, ../scratch/pits or
# ../../scratch/pi073 node_modules/.bin/pi, or `pi-ts` on PATH).
#
# Never reaches the network: the model is a mock on 127.0.0.1, PI_OFFLINE=1, the environment is
# cleared of provider keys and proxies, and HOME is a scratch directory.
#
#   BENCH_RUNS=30 BENCH_TOOL_RUNS=5 BENCH_SESSION_RUNS=5 BENCH_SESSION_MB=100 scripts/bench.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
RUNS="${BENCH_RUNS:-30}"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
MUSL_BIN="$TARGET_DIR/x86_64-unknown-linux-musl/release/pi"

echo "building release binary..." >&2
cargo build --release --quiet
PI_RS="$TARGET_DIR/release/pi"
if [[ -z "${BENCH_ONLY:-}" ]]; then
cargo build --release --quiet --example session_bench
SESSION_BENCH="$TARGET_DIR/release/examples/session_bench"
cargo build --release --quiet --example tui_bench
TUI_BENCH="$TARGET_DIR/release/examples/tui_bench"
cargo build --release --quiet --example mcp_bench
MCP_BENCH="$TARGET_DIR/release/examples/mcp_bench"
cargo build --release --quiet --example sandbox_bench
SANDBOX_BENCH="$TARGET_DIR/release/examples/sandbox_bench"
fi
if [[ -z "${BENCH_ONLY:-}" || "${BENCH_ONLY:-}" == codemode ]]; then
cargo build --release --quiet --example codemode_bench
CODEMODE_BENCH="$TARGET_DIR/release/examples/codemode_bench"
fi
if [[ -z "${BENCH_ONLY:-}" || "${BENCH_ONLY:-}" == checkpoint ]]; then
cargo build --release --quiet --example checkpoint_bench
CHECKPOINT_BENCH="$TARGET_DIR/release/examples/checkpoint_bench"
fi
SESSION_BENCH="${SESSION_BENCH:-}" TUI_BENCH="${TUI_BENCH:-}" MCP_BENCH="${MCP_BENCH:-}"
SANDBOX_BENCH="${SANDBOX_BENCH:-}" CODEMODE_BENCH="${CODEMODE_BENCH:-}" CHECKPOINT_BENCH="${CHECKPOINT_BENCH:-}"

# ---- the TypeScript pi, if present -------------------------------------------------------------
PI_TS="${PI_TS:-}"
for candidate in "$ROOT/../scratch/pits/node_modules/.bin/pi" "$ROOT/../../scratch/pi073/node_modules/.bin/pi"; do
    if [[ -z "$PI_TS" && -x "$candidate" ]]; then
        PI_TS="$candidate"
    fi
done
if [[ -z "$PI_TS" ]] && command -v pi-ts >/dev/null 2>&1; then
    PI_TS="$(command -v pi-ts)"
fi
if [[ -n "$PI_TS" && ! -x "$PI_TS" ]]; then
    echo "warning: PI_TS=$PI_TS is not executable; skipping the TypeScript column" >&2
    PI_TS=""
fi

# ---- scratch dir and mock server -----------------------------------------------------------------
SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/pi-bench.XXXXXX")"
MOCK_PID=""
cleanup() {
    if [[ -n "$MOCK_PID" ]]; then
        kill "$MOCK_PID" 2>/dev/null || true
        wait "$MOCK_PID" 2>/dev/null || true
    fi
    rm -rf "$SCRATCH"
}
trap cleanup EXIT INT TERM

PORT_FILE="$SCRATCH/port"
# A minimal OpenAI Chat Completions server (scripts/bench_mock.py), stateless and scripted by the
# request itself: when the last message is a user message containing `BENCH_TOOL {"name": ...,
# "arguments": {...}}` it answers with that one tool call; when the last message is a tool result
# it answers `done`; otherwise a short greeting. Always this one in the repo, so the figures don't
# depend on anything outside it.
python3 "$ROOT/scripts/bench_mock.py" "$PORT_FILE" "$SCRATCH/last_request" >/dev/null 2>&1 &
MOCK_PID=$!
for _ in $(seq 1 100); do
    [[ -s "$PORT_FILE" ]] && break
    sleep 0.05
done
[[ -s "$PORT_FILE" ]] || { echo "error: mock server did not start" >&2; exit 1; }
PORT="$(tr -d '[:space:]' <"$PORT_FILE")"

AGENT_DIR="$SCRATCH/home/.pi/agent"
mkdir -p "$AGENT_DIR" "$SCRATCH/work" "$SCRATCH/tools" "$SCRATCH/tmp" "$SCRATCH/sessions"
cat >"$AGENT_DIR/models.json" <<EOF
{
  "providers": {
    "mock": {
      "baseUrl": "http://127.0.0.1:$PORT/v1",
      "api": "openai-completions",
      "apiKey": "bench-key",
      "models": [{ "id": "mock-model" }]
    }
  }
}
EOF

# ACP (issue 32): spawn -> initialize -> session/new answered and the tree's peak RSS, for `pi acp`
# beside pi-acp over ours and over today's TypeScript pi (BENCH_ACP_REF, 1.6.0; empty leaves it
# out) when pi-acp is installed (make acp-check installs it). `BENCH_ONLY=acp` runs this row alone.
bench_acp() {
    local ref="${BENCH_ACP_REF-1.6.0}"
    python3 "$ROOT/scripts/acp_bench.py" --pi "$PI_RS" --runs "$(( RUNS < 10 ? RUNS : 10 ))" \
        ${ref:+--ref "$ref"}
}
if [[ "${BENCH_ONLY:-}" == acp ]]; then
    bench_acp
    exit 0
fi

# ---- measure -------------------------------------------------------------------------------------
export BENCH_RUNS="$RUNS" BENCH_HOME="$SCRATCH/home" BENCH_AGENT_DIR="$AGENT_DIR" BENCH_CWD="$SCRATCH/work"
export BENCH_TOOL_RUNS="${BENCH_TOOL_RUNS:-5}" BENCH_TOOL_CWD="$SCRATCH/tools" BENCH_TMP="$SCRATCH/tmp"
export BENCH_SESSION_RUNS="${BENCH_SESSION_RUNS:-5}" BENCH_SESSION_DIR="$SCRATCH/sessions"
export BENCH_LAST_REQUEST="$SCRATCH/last_request" BENCH_SESSION_BENCH="$SESSION_BENCH"
export BENCH_TUI_BENCH="$TUI_BENCH" BENCH_MCP_BENCH="$MCP_BENCH" BENCH_SCRIPTS="$ROOT/scripts"
export BENCH_SANDBOX_BENCH="$SANDBOX_BENCH" BENCH_CODEMODE_BENCH="$CODEMODE_BENCH"
export BENCH_CHECKPOINT_BENCH="$CHECKPOINT_BENCH"
export BENCH_PI_RS="$PI_RS" BENCH_PI_TS="$PI_TS" BENCH_MUSL="$MUSL_BIN"
echo "measuring ($RUNS runs each, $BENCH_TOOL_RUNS for the tool rows, $BENCH_SESSION_RUNS for the session resume)..." >&2
python3 - <<'PY'
import json, os, shlex, shutil, statistics, subprocess, sys, tempfile, time

runs = int(os.environ["BENCH_RUNS"])
tool_runs = int(os.environ["BENCH_TOOL_RUNS"])
tool_cwd = os.environ["BENCH_TOOL_CWD"]
tmp_dir = os.environ["BENCH_TMP"]
env = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "HOME": os.environ["BENCH_HOME"],
    "PI_CODING_AGENT_DIR": os.environ["BENCH_AGENT_DIR"],
    "PI_OFFLINE": "1",
    "PI_SKIP_VERSION_CHECK": "1",
    "PI_TELEMETRY": "0",
    "TERM": "dumb",
    # Full bash output spills to temp files; keep them in the scratch dir the trap removes.
    "TMPDIR": tmp_dir,
}
# A Node without type stripping (< 22.6) needs jiti for TypeScript extensions. Our bridge would
# install it with npm, which reaches the registry: the bench never does. It looks for one
# (BENCH_JITI, the TypeScript pi's, a global npm's) and, finding none, leaves the extension rows
# out with the reason instead of reporting them failed.
def find_jiti():
    places = [os.environ.get("BENCH_JITI")]
    if os.environ.get("BENCH_PI_TS"):
        nm = os.path.realpath(os.environ["BENCH_PI_TS"])
        while nm != "/" and os.path.basename(nm) != "node_modules":
            nm = os.path.dirname(nm)
        places.append(os.path.join(nm, "jiti"))
    root = os.path.dirname(os.path.realpath(os.environ["BENCH_SCRIPTS"]))
    for up in ("..", "../.."):
        places.append(os.path.join(root, up, "scratch/pi073/node_modules/jiti"))
    try:
        npm_root = subprocess.run(["npm", "root", "-g"], capture_output=True, text=True,
                                  timeout=30).stdout.strip()
        if npm_root:
            places.append(os.path.join(npm_root, "jiti"))
    except (OSError, subprocess.SubprocessError):
        pass
    for jiti in places:
        if jiti and os.path.isfile(os.path.join(jiti, "lib", "jiti.mjs")):
            return os.path.realpath(jiti)
    return None

def node_strips_types():
    try:
        v = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
        major, minor = (int(x) for x in v.lstrip("v").split(".")[:2])
        return (major, minor) >= (22, 6)
    except (OSError, ValueError):
        return False

JITI = find_jiti()
if JITI:
    env["PI_JITI"] = JITI
# Why the extension rows cannot run here, or None.
EXT_SKIP = None
if not shutil.which("node"):
    EXT_SKIP = "n/a (no node on PATH)"
elif not JITI and not node_strips_types():
    EXT_SKIP = "n/a (Node < 22.6 and no jiti found: set BENCH_JITI)"
cwd = os.environ["BENCH_CWD"]

GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None

def peak_rss_kib(cmd, run_env=None):
    """Peak RSS of one run. Measured through GNU time when present: a child forked from this
    Python process inherits Python's own high-water mark in ru_maxrss (Linux folds the old
    address space's peak in at exec), which would hide a footprint of a few MiB."""
    if GNU_TIME is None:
        return None
    with tempfile.NamedTemporaryFile(mode="r") as out:
        p = subprocess.run([GNU_TIME, "-f", "%M", "-o", out.name] + cmd, env=run_env or env, cwd=cwd,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        text = out.read().strip().splitlines()
        return int(text[-1]) if p.returncode == 0 and text else None

def measure(cmd, want_output=False, extra_env=None, n=None):
    """Median wall ms and median peak RSS (KiB) over `n` (default `runs`) runs; None if the
    command fails (or, with want_output, prints nothing on stdout). `extra_env` is added to the
    environment."""
    run_env = dict(env, **(extra_env or {}))
    walls, rss = [], []
    for _ in range(n or runs):
        with tempfile.TemporaryFile() as err:
            t0 = time.perf_counter()
            p = subprocess.Popen(cmd, env=run_env, cwd=cwd, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=err)
            out = p.stdout.read()
            p.stdout.close()
            _, status, usage = os.wait4(p.pid, 0)
            walls.append((time.perf_counter() - t0) * 1000)
            p.returncode = os.waitstatus_to_exitcode(status)
            err.seek(0)
            msg = err.read().decode(errors="replace").strip()
        if p.returncode != 0 or (want_output and not out.strip()):
            print(f"warning: {' '.join(cmd)} exited {p.returncode} (stdout {len(out)} bytes): {msg[:300]}",
                  file=sys.stderr)
            return None
        peak = peak_rss_kib(cmd, run_env)
        rss.append(peak if peak is not None else usage.ru_maxrss)
    return statistics.median(walls), statistics.median(rss)

def measure_paired(cmd, extra_env, want_output=False):
    """(ratio of median wall, ratio of median peak RSS, median wall ms, median peak RSS KiB) of
    `cmd` with `extra_env` against `cmd` without it, runs alternating so both see the same load;
    None on failure."""
    plain, extra = [], []
    for _ in range(runs):
        a = measure(cmd, want_output, n=1)
        b = measure(cmd, want_output, extra_env, n=1)
        if a is None or b is None:
            return None
        plain.append(a)
        extra.append(b)
    med = lambda xs, i: statistics.median(x[i] for x in xs)
    return (med(extra, 0) / med(plain, 0), med(extra, 1) / med(plain, 1), med(extra, 0),
            med(extra, 1))

def wall_with_stdin(cmd, stdin_bytes, n, with_cpu=False):
    """Median wall ms of `cmd` fed `stdin_bytes`, over `n` runs; None on failure. With
    `with_cpu`, (median wall ms, median CPU ms of pi itself): the wall time also counts the
    mock server making the stream, which a busy machine slows."""
    walls, cpus = [], []
    for _ in range(n):
        t0 = time.perf_counter()
        # The stdin is one short line, so writing it all before reading cannot block.
        p = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        p.stdin.write(stdin_bytes)
        p.stdin.close()
        out = p.stdout.read()
        p.stdout.close()
        _, status, usage = os.wait4(p.pid, 0)
        walls.append((time.perf_counter() - t0) * 1000)
        code = os.waitstatus_to_exitcode(status)
        if code != 0 or not out.strip():
            print(f"warning: {' '.join(cmd)} (rpc) exited {code}", file=sys.stderr)
            return None
        cpus.append((usage.ru_utime + usage.ru_stime) * 1000)
    if not with_cpu:
        return statistics.median(walls)
    return statistics.median(walls), statistics.median(cpus)

def rpc_session(cmd, prompts, idle_event):
    """(wall ms, CPU ms of pi) of one RPC process that runs `prompts` one after another, each
    sent once the previous one's `idle_event` arrived; None on failure."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    ok = True
    for text in prompts:
        p.stdin.write(json.dumps({"type": "prompt", "message": text}).encode() + b"\n")
        p.stdin.flush()
        while True:
            line = p.stdout.readline()
            if not line:
                ok = False
                break
            if line.startswith(b'{"type":"%s"' % idle_event.encode()):
                break
        if not ok:
            break
    p.stdin.close()
    p.stdout.read()
    p.stdout.close()
    _, status, usage = os.wait4(p.pid, 0)
    wall = (time.perf_counter() - t0) * 1000
    if not ok or os.waitstatus_to_exitcode(status) != 0:
        print(f"warning: {' '.join(cmd)} (rpc, {len(prompts)} prompts) failed", file=sys.stderr)
        return None
    return wall, (usage.ru_utime + usage.ru_stime) * 1000

def rpc_stream_costs(cmd, n, idle_event):
    """Streaming cost per event against the length of the reply: the same 100,000 one-character
    deltas as a hundred prompts of 1,000 and as ten prompts of 10,000, each in one RPC
    process, plus the same prompts with a one-delta reply (keys 100 and 10: the process and
    per-prompt cost to subtract), all interleaved `n` times. 100,000 deltas (~0.5 s of CPU)
    keep the kernel's CPU accounting granularity (a few ms) small against what is compared.
    {1000, 10000, 100, 10: (median wall ms, median CPU ms of pi)}; None on failure."""
    shapes = {1000: ["BENCH_STREAM 1000"] * 100, 10000: ["BENCH_STREAM 10000"] * 10,
              100: ["BENCH_STREAM 1"] * 100, 10: ["BENCH_STREAM 1"] * 10}
    walls = {k: [] for k in shapes}
    cpus = {k: [] for k in shapes}
    for _ in range(n):
        for k, prompts in shapes.items():
            r = rpc_session(cmd, prompts, idle_event)
            if r is None:
                return None
            walls[k].append(r[0])
            cpus[k].append(r[1])
    return {k: (statistics.median(walls[k]), statistics.median(cpus[k])) for k in shapes}

def cpu_of(cmd, n, ok_output=None):
    """Median CPU seconds (user + system) of `cmd` over `n` runs; None on failure. With
    `ok_output`, stdout must be exactly that (after stripping)."""
    cpus = []
    for _ in range(n):
        p = subprocess.Popen(cmd, env=env, cwd=tool_cwd, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        out = p.stdout.read()
        p.stdout.close()
        _, status, usage = os.wait4(p.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0 or (ok_output is not None
                                                      and out.decode().strip() != ok_output):
            print(f"warning: {' '.join(cmd)[:120]} failed (exit {status}, {len(out)} bytes out)",
                  file=sys.stderr)
            return None
        cpus.append(usage.ru_utime + usage.ru_stime)
    return statistics.median(cpus)

def size_of(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return None

def du(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total

# ---- tool rows: each a whole `pi -p` process, two mock round trips around one tool call ---------
RG = shutil.which("rg", path=env["PATH"])
TIMEOUT = 600

def clear_tmp():
    for name in os.listdir(tmp_dir):
        path = os.path.join(tmp_dir, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                os.unlink(path)
            except OSError:
                pass

def tool_cmd(base, tool, arguments):
    spec = json.dumps({"name": tool, "arguments": arguments})
    return base + ["-p", "--model", "mock/mock-model", "--tools", tool, "BENCH_TOOL " + spec]

def run_tool(cmd, rss=False):
    """One run: (wall ms, peak RSS KiB or None), or None after a warning when the process fails
    or its final answer isn't `done`. With rss, the run goes through GNU time (its own fork and
    exec cost a millisecond or so, noise next to the runs it is used for)."""
    out_file = tempfile.NamedTemporaryFile(mode="r", dir=tmp_dir, delete=False) if rss else None
    full = ([GNU_TIME, "-f", "%M", "-o", out_file.name] if rss and GNU_TIME else []) + cmd
    t0 = time.perf_counter()
    try:
        p = subprocess.run(full, env=env, cwd=tool_cwd, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        print(f"warning: {' '.join(cmd)[:200]} timed out after {TIMEOUT} s", file=sys.stderr)
        return None
    wall = (time.perf_counter() - t0) * 1000
    peak = None
    if out_file is not None:
        lines = out_file.read().strip().splitlines()
        out_file.close()
        os.unlink(out_file.name)
        if lines and lines[-1].strip().isdigit():
            peak = int(lines[-1])
    out = p.stdout.decode(errors="replace").strip()
    if p.returncode != 0 or out != "done":
        err = p.stderr.decode(errors="replace").strip()
        print(f"warning: {' '.join(cmd)[:200]} exited {p.returncode}, stdout {out[:100]!r}: {err[-300:]}",
              file=sys.stderr)
        return None
    return wall, peak

def mib_goal(kib, goal_mib, ours=True):
    """A peak RSS in MiB, beside its goal when it is ours."""
    if not ours:
        return f"{kib / 1024:.1f} MiB"
    ok = "ok" if kib / 1024 <= goal_mib else "MISSED"
    return f"{kib / 1024:.1f} MiB (goal <= {goal_mib} MiB: {ok})"

# task: four tool calls in four turns (the mock's BENCH_TASK script), the file checked after.
TASK_FILE = os.path.join(tool_cwd, "task.txt")

def bench_task(base):
    """Median wall ms and median peak RSS KiB of the four-tool task; None after a warning."""
    cmd = base + ["-p", "--model", "mock/mock-model", "--tools", "write,bash,edit,read",
                  "BENCH_TASK: write task.txt, run echo, edit and read it back"]
    walls, peaks = [], []
    for _ in range(runs):
        if os.path.exists(TASK_FILE):
            os.unlink(TASK_FILE)
        r = run_tool(cmd, rss=True)
        if r is None:
            return None
        with open(TASK_FILE) as f:
            if f.read() != "goodbye from the task\n":
                print("warning: the four-tool task finished but task.txt was not edited",
                      file=sys.stderr)
                return None
        walls.append(r[0])
        if r[1] is not None:
            peaks.append(r[1])
    return median_or_none(walls), median_or_none(peaks)

def median_or_none(values):
    return statistics.median(values) if values else None

# edit: a 10 MB file of 100-byte lines with one unique marker line in the middle.
BIG = os.path.join(tool_cwd, "big.txt")
filler = ("x" * 99 + "\n").encode()
BIG_BYTES = filler * 50_000 + b"UNIQUE_MARKER_LINE".ljust(99, b"-") + b"\n" + filler * 49_999
EDIT_ARGS = {"path": "big.txt",
             "edits": [{"oldText": "UNIQUE_MARKER_LINE", "newText": "REPLACED_MARKER_LINE"}]}

def bench_edit(base):
    walls = []
    for _ in range(tool_runs):
        with open(BIG, "wb") as f:
            f.write(BIG_BYTES)
        r = run_tool(tool_cmd(base, "edit", EDIT_ARGS))
        if r is None:
            return None
        with open(BIG, "rb") as f:
            if b"REPLACED_MARKER_LINE" not in f.read():
                print("warning: edit run finished but big.txt has no REPLACED_MARKER_LINE",
                      file=sys.stderr)
                return None
        walls.append(r[0])
    return median_or_none(walls)

# grep: 500 dirs x 100 files, a few lines each, `needle_<n>` in every 100th file.
TREE = os.path.join(tool_cwd, "tree")
GREP_ARGS = {"pattern": "needle_[0-9]+", "path": "tree", "limit": 100000}
RG_CMD = [RG, "--json", "--line-number", "--color=never", "--hidden", "needle_[0-9]+", "tree"] if RG else None

def make_tree():
    n = 0
    for d in range(500):
        dpath = os.path.join(TREE, f"d{d:03}")
        os.makedirs(dpath)
        for i in range(100):
            body = f"file {n} line one\nsome ordinary text {n * 7}\nthe end of file {n}\n"
            if n % 100 == 37:
                body += f"here is needle_{n} in the middle\n"
            with open(os.path.join(dpath, f"f{i:03}.txt"), "w") as f:
                f.write(body)
            n += 1

def run_rg():
    t0 = time.perf_counter()
    p = subprocess.run(RG_CMD, env=env, cwd=tool_cwd, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=TIMEOUT)
    wall = (time.perf_counter() - t0) * 1000
    if p.returncode != 0 or b"needle_" not in p.stdout:
        print(f"warning: rg exited {p.returncode}", file=sys.stderr)
        return None
    return wall

rg_walls = []

def bench_grep(base, with_rg):
    walls = []
    for _ in range(tool_runs):
        r = run_tool(tool_cmd(base, "grep", GREP_ARGS))
        if r is None:
            return None
        walls.append(r[0])
        if with_rg:
            w = run_rg()
            if w is not None:
                rg_walls.append(w)
    return median_or_none(walls)

# bash: 100 MB of output through the tool; the figure that matters is peak RSS.
BASH_ARGS = {"command": "head -c 100000000 /dev/zero | tr '\\0' a | fold -w 100"}

def bench_bash(base):
    walls, peaks = [], []
    for _ in range(tool_runs):
        r = run_tool(tool_cmd(base, "bash", BASH_ARGS), rss=True)
        clear_tmp()
        if r is None:
            return None
        walls.append(r[0])
        if r[1] is not None:
            peaks.append(r[1])
    return median_or_none(walls), median_or_none(peaks)

# grep over one 100 MB file (1,000,000 lines of 100 bytes, a needle every 100,000 lines): the
# search streams the file, so peak RSS must not grow with it (goal <= 16 MiB).
GREP_BIG = os.path.join(tool_cwd, "grep-big.txt")
GREP_BIG_ARGS = {"pattern": "needle_[0-9]+", "path": "grep-big.txt"}

def bench_grep_big(base):
    if not os.path.exists(GREP_BIG):
        with open(GREP_BIG, "wb") as f:
            filler = b"x" * 99 + b"\n"
            for i in range(1_000_000):
                f.write(f"here is needle_{i}".ljust(99).encode() + b"\n" if i % 100_000 == 50_000
                        else filler)
    peaks = []
    for _ in range(tool_runs):
        r = run_tool(tool_cmd(base, "grep", GREP_BIG_ARGS), rss=True)
        if r is None:
            return None
        if r[1] is not None:
            peaks.append(r[1])
    return median_or_none(peaks)

# resume: a ~100 MB v3 session (a long linear chain of user/assistant/toolResult messages of
# 1-4 KB each) ending in a compaction that keeps only the last turn, then one more exchange: the
# file is big, the context sent to the model is small, as in a real long session after compaction.
# Generated once, untimed; each run resumes a fresh copy (a run appends to the file).
session_runs = int(os.environ["BENCH_SESSION_RUNS"])
SESSION_MB = float(os.environ.get("BENCH_SESSION_MB", "100"))
SESSION_DIR = os.environ["BENCH_SESSION_DIR"]
BIG_SESSION = os.path.join(SESSION_DIR, "big-session.jsonl")
SESSION_COPY = os.path.join(SESSION_DIR, "resume.jsonl")
LAST_REQUEST = os.environ["BENCH_LAST_REQUEST"]

def gen_session(path, target_bytes, session_cwd):
    import datetime, random
    rng = random.Random(20261121)
    words = ("the a of to in is that for it with as on be this by file function error test "
             "value return struct impl fn let mut match Some None Ok Err src/session/store.rs "
             "`cargo` \"quoted\" path/to/module.ts {\"key\": 1} <tag> tab\there back\\slash "
             "unicode: é ü 日本 — 🙂 line\n\nnew paragraph: - item\n").split(" ")
    blob = " ".join(rng.choice(words) for _ in range(400_000))
    ids = set()

    def new_id():
        while True:
            i = f"{rng.getrandbits(32):08x}"
            if i not in ids:
                ids.add(i)
                return i

    def iso(ms):
        dt = datetime.datetime.fromtimestamp(ms // 1000, datetime.timezone.utc)
        return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"

    def text(lo=1024, hi=4096):
        n = rng.randint(lo, hi)
        at = rng.randrange(len(blob) - n)
        return blob[at:at + n]

    ms = 1795304767000
    r = rng.getrandbits(74)
    h = f"{ms:012x}"
    session_id = (f"{h[:8]}-{h[8:]}-7{r & 0xfff:03x}-{8 | ((r >> 12) & 3):x}{(r >> 14) & 0xfff:03x}-"
                  f"{(r >> 26) & 0xffffffffffff:012x}")
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    out = open(path, "w", encoding="utf-8")
    out.write(dumps({"type": "session", "version": 3, "id": session_id,
                     "timestamp": iso(ms), "cwd": session_cwd}) + "\n")
    parent = None
    last = {}

    def entry(kind, **fields):
        nonlocal parent, ms
        ms += rng.randint(5, 4000)
        eid = new_id()
        obj = {"type": kind, "id": eid, "parentId": parent, "timestamp": iso(ms)}
        obj.update(fields)
        out.write(dumps(obj) + "\n")
        parent = eid
        return eid

    def usage(tokens_in, tokens_out):
        c_in, c_out = tokens_in * 3 / 1e6, tokens_out * 15 / 1e6
        return {"input": tokens_in, "output": tokens_out, "cacheRead": 0, "cacheWrite": 0,
                "totalTokens": tokens_in + tokens_out,
                "cost": {"input": c_in, "output": c_out, "cacheRead": 0, "cacheWrite": 0,
                         "total": c_in + c_out}}

    def assistant(content, stop, tokens_in):
        return {"role": "assistant", "content": content, "api": "openai-completions",
                "provider": "mock", "model": "mock-model",
                "usage": usage(tokens_in, rng.randint(20, 1200)), "stopReason": stop,
                "timestamp": ms, "responseId": f"chatcmpl-{rng.getrandbits(64):016x}"}

    def turn(tokens_in):
        last["user"] = entry("message", message={"role": "user",
                                                 "content": [{"type": "text", "text": text()}],
                                                 "timestamp": ms})
        if rng.random() < 0.4:  # a tool call and its result before the answer
            call = f"call_{rng.getrandbits(96):024x}"
            entry("message", message=assistant(
                [{"type": "thinking", "thinking": text(100, 600), "thinkingSignature": "reasoning_content"},
                 {"type": "toolCall", "id": call, "name": "bash", "arguments": {"command": "cat notes.txt"}}],
                "toolUse", tokens_in))
            entry("message", message={"role": "toolResult", "toolCallId": call, "toolName": "bash",
                                      "content": [{"type": "text", "text": text()}],
                                      "isError": False, "timestamp": ms})
        return entry("message", message=assistant([{"type": "text", "text": text()}], "stop",
                                                  tokens_in))

    entry("model_change", provider="mock", modelId="mock-model")
    entry("thinking_level_change", thinkingLevel="off")
    tokens = 1000
    while out.tell() < target_bytes:
        turn(tokens)
        tokens += rng.randint(300, 2000)
    kept = last["user"]  # the compaction keeps the last turn
    entry("compaction", summary="## Goal\n" + text(2000, 3000), firstKeptEntryId=kept,
          tokensBefore=tokens, details={"readFiles": ["notes.txt"], "modifiedFiles": []},
          fromHook=False)
    turn(3000)
    out.close()

def bench_resume(base, n):
    """Median wall ms, median peak RSS KiB and the last request's (message count, bytes) of `n`
    runs of `pi -p --session <fresh copy> hi`; None after a warning if a run fails."""
    walls, peaks, req = [], [], None
    orig = os.path.getsize(BIG_SESSION)
    for _ in range(n):
        shutil.copyfile(BIG_SESSION, SESSION_COPY)
        if os.path.exists(LAST_REQUEST):
            os.unlink(LAST_REQUEST)
        cmd = base + ["-p", "--model", "mock/mock-model", "--session", SESSION_COPY, "hi"]
        with tempfile.NamedTemporaryFile(mode="r", dir=tmp_dir) as rss_out:
            full = ([GNU_TIME, "-f", "%M", "-o", rss_out.name] if GNU_TIME else []) + cmd
            t0 = time.perf_counter()
            try:
                p = subprocess.run(full, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                                   capture_output=True, timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                print(f"warning: resume run timed out after {TIMEOUT} s", file=sys.stderr)
                return None
            walls.append((time.perf_counter() - t0) * 1000)
            lines = rss_out.read().strip().splitlines()
        if lines and lines[-1].strip().isdigit():
            peaks.append(int(lines[-1]))
        out = p.stdout.decode(errors="replace").strip()
        grew = os.path.getsize(SESSION_COPY) > orig
        if p.returncode != 0 or out != "Hello from the bench mock." or not grew:
            err = p.stderr.decode(errors="replace").strip()
            print(f"warning: resume run exited {p.returncode}, stdout {out[:100]!r}, "
                  f"session grew: {grew}: {err[-300:]}", file=sys.stderr)
            return None
        try:
            with open(LAST_REQUEST) as f:
                m, b = f.read().split()
                req = (int(m), int(b))
        except (OSError, ValueError):
            pass
    os.unlink(SESSION_COPY)
    return median_or_none(walls), median_or_none(peaks), req

# append: a Rust example timing SessionWriter::append_message at entry 10 and at entry 100,000.
def bench_append():
    exe = os.environ.get("BENCH_SESSION_BENCH")
    if not exe:
        return None
    try:
        p = subprocess.run([exe], env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        print("warning: session_bench timed out", file=sys.stderr)
        return None
    found = {}
    for line in p.stdout.decode().splitlines():
        parts = line.split()
        if parts and parts[0] == "append_us":
            kv = dict(x.split("=", 1) for x in parts[1:])
            found[int(kv["n"])] = float(kv["median"])
    if p.returncode != 0 or 10 not in found or 100_000 not in found:
        print(f"warning: session_bench exited {p.returncode}: "
              f"{p.stderr.decode(errors='replace')[-300:]}", file=sys.stderr)
        return None
    return found[10], found[100_000]

# mcp: examples/mcp_bench.rs, start-up cost without servers and the stdio call overhead.
def bench_mcp():
    exe = os.environ.get("BENCH_MCP_BENCH")
    if not exe:
        return None
    try:
        p = subprocess.run([exe], env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        print("warning: mcp_bench timed out", file=sys.stderr)
        return None
    found = {}
    for line in p.stdout.decode().splitlines():
        parts = line.split()
        if parts and parts[0] in ("mcp_start_us", "mcp_call_us"):
            found[parts[0]] = dict(x.split("=", 1) for x in parts[1:])
    if p.returncode != 0 or len(found) != 2:
        print(f"warning: mcp_bench exited {p.returncode}: "
              f"{p.stderr.decode(errors='replace')[-300:]}", file=sys.stderr)
        return None
    return found["mcp_start_us"], found["mcp_call_us"]

# interactive: the real binary on a pseudo-terminal (scripts/bench_interactive.py): exec to a
# ready editor, idle RSS, and keystroke-to-screen with a 2,000-message session loaded.
INTERACTIVE_SESSION = os.path.join(os.environ["BENCH_SESSION_DIR"], "interactive-2000.jsonl")

def bench_interactive(base, n):
    # Written afresh for each implementation: a run appends to the session it resumes.
    os.makedirs(os.path.dirname(INTERACTIVE_SESSION), exist_ok=True)
    subprocess.run([sys.executable, os.path.join(os.environ["BENCH_SCRIPTS"], "gen_session.py"),
                    INTERACTIVE_SESSION, cwd, "2000"], check=True)
    script = os.path.join(os.environ["BENCH_SCRIPTS"], "bench_interactive.py")
    try:
        p = subprocess.run([sys.executable, script, os.environ["BENCH_AGENT_DIR"], cwd,
                            INTERACTIVE_SESSION, str(n), "--"] + base,
                           capture_output=True, text=True, timeout=900,
                           env=dict(env, BENCH_HOME=os.environ["BENCH_HOME"]))
    except subprocess.TimeoutExpired:
        print("warning: interactive bench timed out", file=sys.stderr)
        return None
    found = dict(l.split(None, 1) for l in p.stdout.splitlines() if " " in l)
    if p.returncode != 0 or "startup_ms" not in found:
        print(f"warning: interactive bench failed: {(p.stdout + p.stderr)[-300:]}", file=sys.stderr)
        return None
    return found

# tui: examples/tui_bench.rs, one token under a 10,000-line transcript and 5 s of streaming.
# Extensions: N small TypeScript extensions (each a tool, a command, a flag and two event hooks,
# with TypeBox parameters), one -p round trip: wall time and peak RSS of the whole process tree
# (pi plus any Node.js it starts), and how many Node.js processes ran.
EXT_DIR = os.path.join(os.environ["BENCH_TMP"], "..", "exts")
EXT_COUNTS = (1, 5, 20)
EXT_SOURCE = """import { Type } from "typebox";
export default function (pi) {
  pi.registerTool({ name: "bench_tool_N", label: "Bench N", description: "A benchmark tool N",
    parameters: Type.Object({ text: Type.String() }),
    async execute(_id, params) { return { content: [{ type: "text", text: params.text }] }; } });
  pi.registerCommand("bench-N", { description: "Bench command N", handler: async () => {} });
  pi.on("turn_start", () => {});
  pi.on("tool_call", () => undefined);
}
"""

def make_extensions():
    os.makedirs(EXT_DIR, exist_ok=True)
    for i in range(max(EXT_COUNTS)):
        with open(os.path.join(EXT_DIR, f"bench{i}.ts"), "w") as f:
            f.write(EXT_SOURCE.replace("N", str(i)))

def tree_rss_kib(pid):
    """Summed RSS (KiB) of `pid` and its descendants, and how many of them are node."""
    total, nodes, todo = 0, 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as f:
                status = f.read()
            for line in status.splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
                elif line.startswith("Name:") and line.split()[1].startswith("node"):
                    nodes += 1
            for t in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{t}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            pass
    return total, nodes

def bench_extensions(base, n):
    """Per extension count: (median wall ms, median peak tree RSS KiB, max node processes)."""
    out = {}
    # Unmeasured: a first run may set up what later ones reuse (our bridge's cache, jiti).
    subprocess.run(list(base) + ["-e", os.path.join(EXT_DIR, "bench0.ts"), "-p", "--no-session",
                                 "--model", "mock/mock-model", "hi"], env=env, cwd=cwd,
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for count in EXT_COUNTS:
        cmd = list(base)
        for i in range(count):
            cmd += ["-e", os.path.join(EXT_DIR, f"bench{i}.ts")]
        cmd += ["-p", "--no-session", "--model", "mock/mock-model", "say hello"]
        walls, peaks, nodes = [], [], 0
        for _ in range(n):
            t0 = time.perf_counter()
            p = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            peak = 0
            while p.poll() is None:
                rss, nd = tree_rss_kib(p.pid)
                peak, nodes = max(peak, rss), max(nodes, nd)
                time.sleep(0.005)
            wall = (time.perf_counter() - t0) * 1000
            out_text, err_text = p.communicate()
            if p.returncode != 0 or not out_text.strip() or b"rror" in err_text:
                print(f"warning: {count} extensions: exit {p.returncode}: "
                      f"{err_text.decode(errors='replace')[:300]}", file=sys.stderr)
                out[count] = None
                break
            walls.append(wall)
            peaks.append(peak)
        else:
            out[count] = (statistics.median(walls), statistics.median(peaks), nodes)
    return out

def bench_tui():
    exe = os.environ.get("BENCH_TUI_BENCH")
    if not exe:
        return None
    try:
        p = subprocess.run([exe], env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        print("warning: tui_bench timed out", file=sys.stderr)
        return None
    found = {}
    for line in p.stdout.decode().splitlines():
        parts = line.split()
        if parts and parts[0] in ("tui_frame_us", "tui_stream"):
            found[parts[0]] = dict(x.split("=", 1) for x in parts[1:])
    if p.returncode != 0 or len(found) != 2:
        print(f"warning: tui_bench exited {p.returncode}: "
              f"{p.stderr.decode(errors='replace')[-300:]}", file=sys.stderr)
        return None
    return found["tui_frame_us"], found["tui_stream"]

# sandbox: examples/sandbox_bench.rs, `bash -c true` spawned as the bash tool does, without
# and with the workspace-write sandbox (Landlock + seccomp).
def bench_sandbox():
    exe = os.environ.get("BENCH_SANDBOX_BENCH")
    if not exe:
        return None
    try:
        p = subprocess.run([exe, str(max(100, runs * 10))], env=env, cwd=cwd,
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        print("warning: sandbox_bench timed out", file=sys.stderr)
        return None
    for line in p.stdout.decode().splitlines():
        parts = line.split()
        if p.returncode == 0 and parts and parts[0] == "sandbox_us":
            return dict(x.split("=", 1) for x in parts[1:])
    print(f"warning: sandbox_bench exited {p.returncode}: "
          f"{p.stderr.decode(errors='replace')[-300:]}", file=sys.stderr)
    return None

# codemode: examples/codemode_bench.rs, the engine's start-up per call, and 20 reads by one
# script against 20 direct calls (time, and estimated tokens reaching the model).
def bench_codemode():
    exe = os.environ.get("BENCH_CODEMODE_BENCH")
    if not exe:
        return None
    try:
        p = subprocess.run([exe, str(max(20, runs))], env=env, cwd=cwd,
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        print("warning: codemode_bench timed out", file=sys.stderr)
        return None
    for line in p.stdout.decode().splitlines():
        parts = line.split()
        if p.returncode == 0 and parts and parts[0] == "codemode_us":
            return dict(x.split("=", 1) for x in parts[1:])
    print(f"warning: codemode_bench exited {p.returncode}: "
          f"{p.stderr.decode(errors='replace')[-300:]}", file=sys.stderr)
    return None

# checkpoints: examples/checkpoint_bench.rs, a snapshot before a turn on a 10,000-file repository
# (unchanged, 5 files changed) and after one byte of a 100 MB binary changed. Goals, set from
# measurements on a busy 2-core machine (walk 78 ms, unchanged 120 ms, 5 changed 128 ms, 100 MB
# 470 ms): an unchanged tree costs at most twice the walk (the look git status would take), five
# changed files at most 20% more, the 100 MB file at most 1 s (it is read and copied once).
def bench_checkpoint():
    exe = os.environ.get("BENCH_CHECKPOINT_BENCH")
    if not exe:
        return None
    try:
        p = subprocess.run([exe, "10"], env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=TIMEOUT * 4)
    except subprocess.TimeoutExpired:
        print("warning: checkpoint_bench timed out", file=sys.stderr)
        return None
    for line in p.stdout.decode().splitlines():
        parts = line.split()
        if p.returncode == 0 and parts and parts[0] == "checkpoint_us":
            return {k: float(v) for k, v in (x.split("=", 1) for x in parts[1:])}
    print(f"warning: checkpoint_bench exited {p.returncode}: "
          f"{p.stderr.decode(errors='replace')[-300:]}", file=sys.stderr)
    return None

def checkpoint_cells(cp):
    """(unchanged/changed row, 100 MB row) for our pi."""
    if not cp:
        return "failed", "failed"
    ms = lambda k: cp[k] / 1000
    ok_small = cp["unchanged"] <= 2 * cp["walk"] and cp["changed5"] <= 1.2 * cp["unchanged"]
    small = (f"unchanged {ms('unchanged'):.0f} ms, 5 files changed {ms('changed5'):.0f} ms "
             f"(walk alone {ms('walk'):.0f} ms, first {ms('cold') / 1000:.1f} s); goal <= 2x walk, "
             f"+20% for 5 changes: {'ok' if ok_small else 'MISSED'}")
    big = (f"{ms('big100mb'):.0f} ms; goal <= 1000 ms: "
           f"{'ok' if ms('big100mb') <= 1000 else 'MISSED'}")
    return small, big

impls = [("pi (rust)", [os.environ["BENCH_PI_RS"]])]
ts = os.environ.get("BENCH_PI_TS")
if ts:
    impls.append(("pi (ts)", [ts]))

# Hosts (Nix, corporate machines) that point SSL_CERT_FILE/SSL_CERT_DIR at the system store: a
# plain-HTTP round trip must not pay for reading it.
SSL_ENV = {"SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt", "SSL_CERT_DIR": "/etc/ssl/certs"}
HAVE_SSL_STORE = os.path.isfile(SSL_ENV["SSL_CERT_FILE"]) and os.path.isdir(SSL_ENV["SSL_CERT_DIR"])

def bench_memory(impls):
    """Memory against the length of a session (issue 35), from scripts/long_session.py: RSS
    after 10 and after 1,000 prompts of one RPC session (each with a 4 KB bash result) beside
    the session file, and RSS after resuming a 200 MB uncompacted session. Alone:
    `scripts/long_session.py bench "pi (rust)=target/release/pi"`. {row: [cell per impl]}."""
    script = os.path.join(os.environ["BENCH_SCRIPTS"], "long_session.py")
    names = [f"{name}={shlex.join(base)}" for name, base in impls]
    prompts = os.environ.get("BENCH_LONG_PROMPTS", "1000")
    mb = os.environ.get("BENCH_RESUME_MB", "200")
    p = subprocess.run([sys.executable, script, "bench", "--json", "--prompts", prompts,
                        "--resume-mb", mb] + names, capture_output=True, text=True, env=os.environ.copy())
    sys.stderr.write(p.stderr)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {"long_session": ["failed"] * len(impls), "resume_memory": ["failed"] * len(impls)}

# BENCH_ONLY=checkpoint: only the checkpoint rows (ours; pi has no checkpoints).
if os.environ.get("BENCH_ONLY") == "checkpoint":
    small, big = checkpoint_cells(bench_checkpoint())
    print("metric  pi (rust)")
    print(f"checkpoint per turn, 10,000-file repository  {small}")
    print(f"checkpoint per turn, 100 MB binary changed  {big}")
    sys.exit(0)

def codemode_cells(cm):
    if not cm:
        return "failed", "failed"
    return (f"{float(cm['start']) / 1000:.2f} ms",
            f"{float(cm['script20']) / 1000:.2f} ms vs {float(cm['direct20']) / 1000:.2f} ms "
            f"(tools only; direct calls also cost 19 more model requests); "
            f"~{cm['tokens_script']} vs ~{cm['tokens_direct']} tokens to the model")

def static_cell():
    m = size_of(os.environ["BENCH_MUSL"])
    return (f"{m / 1e6:.2f} MB, {m / 2**20:.2f} MiB (budget <= 10 MiB: "
            f"{'ok' if m <= 10 * 2**20 else 'OVER'})" if m else "not built (make static)")

# BENCH_ONLY=codemode: only the codemode rows and the static binary's size (ours).
if os.environ.get("BENCH_ONLY") == "codemode":
    start, reads = codemode_cells(bench_codemode())
    print("metric  pi (rust)")
    print(f"codemode: engine start-up, a script that returns at once (median)  {start}")
    print(f"codemode: 20 reads in one script vs 20 direct reads (median)  {reads}")
    print(f"static musl binary size (make static; codemode's QuickJS included)  {static_cell()}")
    sys.exit(0)

# BENCH_ONLY=grep_big: only the grep-over-a-100-MB-file row, for each pi.
if os.environ.get("BENCH_ONLY") == "grep_big":
    print("metric  " + "  ".join(n for n, _ in impls))
    cells = []
    for name, base in impls:
        kib = bench_grep_big(base)
        cells.append(mib_goal(kib, 16, ours=name == "pi (rust)") if kib else "failed")
    print("grep over a 100 MB file: peak RSS (median)  " + "  ".join(cells))
    sys.exit(0)

rows = {k: [] for k in ("stream_100k", "stream_400k", "stream_ratio", "write_50k", "write_200k",
                        "write_ratio", "tui_start", "tui_idle", "tui_key", "rpc_state", "rpc_1k", "rpc_10k", "rpc_ratio", "version", "version_rss", "print_wall", "print_rss", "task_rss", "print_ssl", "size", "static", "edit", "grep",
                        "rg", "grep_ratio", "bash_wall", "bash_rss", "grep_big_rss", "resume_wall",
                        "resume_rss", "append_10", "append_100k", "append_ratio",
                        "tui_frame", "tui_stream", "mcp_start", "mcp_call", "sandbox_plain",
                        "sandbox_confined", "codemode_start", "codemode_reads", "checkpoint_small",
                        "checkpoint_big", "long_session",
                        "resume_memory")}
for count in EXT_COUNTS:
    rows[f"ext_{count}"] = []
print("writing the 50,000-file tree...", file=sys.stderr)
make_tree()
make_extensions()
print(f"writing a {SESSION_MB:g} MB session...", file=sys.stderr)
gen_session(BIG_SESSION, int(SESSION_MB * 1e6), cwd)
SESSION_SIZE = os.path.getsize(BIG_SESSION)
if RG:
    run_rg()  # unmeasured: the first walk of a fresh tree pays for what the later ones don't
for name, base in impls:
    rpc = base + ["--mode", "rpc", "--no-session", "--model", "mock/mock-model"]
    st = wall_with_stdin(rpc, b'{"id":"1","type":"get_state"}\n', runs)
    rows["rpc_state"].append(f"{st:.1f} ms" if st else "failed")
    # Per-event cost of a streamed reply against its length: 100,000 deltas as a hundred
    # 1,000-delta replies and as ten 10,000-delta replies, one process each. Flat means a delta costs the same
    # late in a long reply as early in a short one (no per-delta copy of the message so far).
    # Today's pi says `agent_settled` once it takes the next prompt; 0.73.1 ends with agent_end.
    idle = "agent_settled" if name == "pi (rust)" else "agent_end"
    # A round is ~1.5 s for pi (rust) and tens of seconds for the TypeScript pi (its rounds are
    # few; its per-delta cost is far above the accounting granularity anyway).
    per = rpc_stream_costs(rpc, max(15, runs) if name == "pi (rust)" else 3, idle)
    for n, key, what in ((1000, "rpc_1k", "100 x 1,000"), (10000, "rpc_10k", "10 x 10,000")):
        if per is None:
            rows[key].append("failed")
            continue
        w, c = per[n]
        rows[key].append(f"{w:.0f} ms wall, CPU {c:.0f} ms ({c / 100:.1f} µs/event; {what} deltas)")
    if per is None:
        rows["rpc_ratio"].append("n/a")
    else:
        # Net of what does not depend on the reply's length: the process and each prompt (as
        # many prompts of one delta), so both sides count only deltas.
        short = (per[1000][1] - per[100][1]) / (100 * 999)
        long_ = (per[10000][1] - per[10][1]) / (10 * 9999)
        if short <= 0 or long_ <= 0:
            rows["rpc_ratio"].append("n/a (too noisy)")
        else:
            ratio = long_ / short
            ok = "ok" if 0.9 <= ratio <= 1.1 else "MISSED"
            rows["rpc_ratio"].append(
                f"{ratio:.2f}x ({long_ * 1000:.1f} vs {short * 1000:.1f} µs/delta net of "
                f"start-up and per-prompt cost; goal 0.90x-1.10x: {ok})")
    # Streaming cost: one plain reply (and one streamed `write`) at 1x and 4x the size. Linear
    # cost means the 4x run takes about 4x the CPU; a per-delta copy of the message makes it 16x.
    n = max(3, runs // 10)
    print(f"{name}: streaming cost...", file=sys.stderr)
    sp = base + ["-p", "--no-session", "--model", "mock/mock-model"]
    c1 = cpu_of(sp + ["BENCH_CHARS 100000"], n, "abcd" * 25000)
    c4 = cpu_of(sp + ["BENCH_CHARS 400000"], n, "abcd" * 100000)
    rows["stream_100k"].append(f"{c1 * 1000:.0f} ms" if c1 else "failed")
    rows["stream_400k"].append(f"{c4 * 1000:.0f} ms" if c4 else "failed")
    rows["stream_ratio"].append(f"{c4 / c1:.2f}x (goal <= 4.5x)" if c1 and c4 else "n/a")
    w1 = cpu_of(sp + ["--tools", "write", "BENCH_WRITE 50000"], n, "done")
    w4 = cpu_of(sp + ["--tools", "write", "BENCH_WRITE 200000"], n, "done")
    rows["write_50k"].append(f"{w1 * 1000:.0f} ms" if w1 else "failed")
    rows["write_200k"].append(f"{w4 * 1000:.0f} ms" if w4 else "failed")
    rows["write_ratio"].append(f"{w4 / w1:.2f}x (goal <= 4.5x)" if w1 and w4 else "n/a")
    v = measure(base + ["--version"])
    p = measure(base + ["-p", "--model", "mock/mock-model", "say hello"], want_output=True)
    ours = name == "pi (rust)"
    rows["version"].append(f"{v[0]:.1f} ms" if v else "failed")
    rows["version_rss"].append(mib_goal(v[1], 3, ours) if v else "failed")
    rows["print_wall"].append(f"{p[0]:.1f} ms" if p else "failed")
    rows["print_rss"].append(mib_goal(p[1], 6, ours) if p else "failed")
    t = bench_task(base)
    rows["task_rss"].append(f"{t[0]:.1f} ms, {mib_goal(t[1], 6, ours)}" if t and t[1] is not None
                            else f"{t[0]:.1f} ms" if t else "failed")
    if HAVE_SSL_STORE:
        q = measure_paired(base + ["-p", "--model", "mock/mock-model", "say hello"], SSL_ENV,
                           want_output=True)
        rows["print_ssl"].append(f"{q[2]:.1f} ms, {q[3] / 1024:.1f} MiB "
                                 f"({q[0]:.2f}x / {q[1]:.2f}x without, runs alternating)" if q
                                 else "failed")
    else:
        rows["print_ssl"].append("n/a (no /etc/ssl/certs)")
    if name == "pi (rust)":
        s = size_of(base[0])
        rows["size"].append(f"{s / 1e6:.2f} MB" if s else "n/a")
        rows["static"].append(static_cell())
    else:
        real = os.path.realpath(base[0])
        # .../node_modules/@scope/pkg/dist/cli.js -> .../node_modules
        nm = real
        while nm != "/" and os.path.basename(nm) != "node_modules":
            nm = os.path.dirname(nm)
        rows["size"].append(f"{du(nm) / 1e6:.1f} MB (node_modules)" if nm != "/" else "n/a")
        rows["static"].append("n/a (needs node)")

    print(f"{name}: tool rows...", file=sys.stderr)
    e = bench_edit(base)
    rows["edit"].append(f"{e:.1f} ms (-p round trip {e - p[0]:+.1f} ms)" if e and p
                        else f"{e:.1f} ms" if e else "failed")
    if RG is None and name != "pi (rust)":
        g = None
        rows["grep"].append("n/a (needs rg)")
    else:
        g = bench_grep(base, with_rg=RG is not None and ours)
        rows["grep"].append(f"{g:.1f} ms" if g else "failed")
    rg = median_or_none(rg_walls)
    rows["rg"].append(f"{rg:.1f} ms" if rg else "rg not installed" if RG is None else "failed")
    if g and rg:
        # Net of the plain round trip only where that is meaningful: for a slow-starting pi the
        # round trip's own noise can exceed the search.
        net = f", {(g - p[0]) / rg:.2f}x net of the -p round trip" if p and g > p[0] else ""
        rows["grep_ratio"].append(f"{g / rg:.2f}x{net}")
    else:
        rows["grep_ratio"].append("n/a")
    b = bench_bash(base)
    rows["bash_wall"].append(f"{b[0]:.1f} ms" if b else "failed")
    rows["bash_rss"].append(f"{b[1] / 1024:.1f} MiB" if b and b[1] is not None else "failed" if not b else "n/a")
    gb = bench_grep_big(base)
    rows["grep_big_rss"].append(mib_goal(gb, 16, ours=name == "pi (rust)") if gb else "failed")

    n = runs if name == "pi (rust)" else min(runs, 3)
    print(f"{name}: interactive mode on a pty ({n} starts)...", file=sys.stderr)
    it = bench_interactive(base, n)
    if it:
        rows["tui_start"].append(f"{float(it['startup_ms']):.1f} ms")
        anon = f" ({float(it['idle_anon_kib']) / 1024:.1f} MiB anonymous)" if "idle_anon_kib" in it else ""
        rows["tui_idle"].append(f"{float(it['idle_rss_kib']) / 1024:.1f} MiB{anon}")
        rows["tui_key"].append(f"{float(it['keystroke_ms']):.2f} ms (p95 {float(it['keystroke_p95_ms']):.2f} ms, "
                               f"{float(it['loaded_rss_kib']) / 1024:.0f} MiB loaded)")
    else:
        for k in ("tui_start", "tui_idle", "tui_key"):
            rows[k].append("failed")

    n = min(runs, 5)
    print(f"{name}: TypeScript extensions ({n} runs each)...", file=sys.stderr)
    ex = bench_extensions(base, n) if EXT_SKIP is None else {}
    for count in EXT_COUNTS:
        r = ex.get(count)
        procs = lambda k: f"{k} node process" + ("" if k == 1 else "es")
        rows[f"ext_{count}"].append(f"{r[0]:.0f} ms, {r[1] / 1024:.0f} MiB ({procs(r[2])})" if r
                                    else EXT_SKIP or "failed")

    n = session_runs if name == "pi (rust)" else min(session_runs, 3)
    print(f"{name}: resuming the session ({n} runs)...", file=sys.stderr)
    r = bench_resume(base, n)
    req = f" ({r[2][0]} msgs, {r[2][1] / 1024:.1f} KiB request)" if r and r[2] else ""
    rows["resume_wall"].append(f"{r[0]:.1f} ms{req}" if r else "failed")
    rows["resume_rss"].append(f"{r[1] / 1024:.1f} MiB" if r and r[1] is not None else "failed" if not r else "n/a")
    if name == "pi (rust)":
        print("session_bench: append cost...", file=sys.stderr)
        a = bench_append()
        rows["append_10"].append(f"{a[0]:.1f} µs" if a else "failed")
        rows["append_100k"].append(f"{a[1]:.1f} µs" if a else "failed")
        rows["append_ratio"].append(f"{a[1] / a[0]:.2f}x" if a else "n/a")
        print("tui_bench: render and streaming cost...", file=sys.stderr)
        t = bench_tui()
        if t:
            f, st = t
            rows["tui_frame"].append(f"{float(f['median']) / 1000:.3f} ms (at most {f['rows']} rows, "
                                     f"{f['bytes']} bytes per frame)")
            rows["tui_stream"].append(f"{float(st['cpu_pct']):.1f}% ({st['frames']} frames, "
                                      f"{st['tokens']} tokens in {st['seconds']} s)")
        else:
            rows["tui_frame"].append("failed")
            rows["tui_stream"].append("failed")
        print("mcp_bench: start-up and call overhead...", file=sys.stderr)
        mc = bench_mcp()
        if mc:
            st, call = mc
            rows["mcp_start"].append(f"{float(st['median']):.1f} µs")
            rows["mcp_call"].append(f"{float(call['overhead']):.1f} µs ({float(call['ours']):.1f} µs vs "
                                    f"{float(call['raw']):.1f} µs over raw pipes)")
        else:
            rows["mcp_start"].append("failed")
            rows["mcp_call"].append("failed")
        print("sandbox_bench: bash true with and without the sandbox...", file=sys.stderr)
        sb = bench_sandbox()
        if sb:
            rows["sandbox_plain"].append(f"{float(sb['plain']) / 1000:.2f} ms")
            over = float(sb['overhead']) / 1000
            rows["sandbox_confined"].append(
                f"{float(sb['confined']) / 1000:.2f} ms (+{over:.2f} ms, "
                f"{float(sb['prepare']) / 1000:.2f} ms of it preparing, "
                f"{float(sb.get('sweep', 0)) / 1000:.2f} ms looking for new .git/.pi; "
                f"goal +1 ms: {'ok' if over <= 1.0 else 'MISSED'})")
        else:
            rows["sandbox_plain"].append("failed")
            rows["sandbox_confined"].append("failed")
        print("codemode_bench: engine start-up, 20 reads in a script vs direct...", file=sys.stderr)
        start, reads = codemode_cells(bench_codemode())
        rows["codemode_start"].append(start)
        rows["codemode_reads"].append(reads)
        print("checkpoint_bench: a snapshot per turn on 10,000 files and a 100 MB binary...",
              file=sys.stderr)
        small, big = checkpoint_cells(bench_checkpoint())
        rows["checkpoint_small"].append(small)
        rows["checkpoint_big"].append(big)
    else:
        for k in ("append_10", "append_100k", "append_ratio", "tui_frame", "tui_stream",
                  "mcp_start", "mcp_call"):
            rows[k].append("n/a (Rust library)")
        rows["sandbox_plain"].append("n/a (Rust library)")
        rows["sandbox_confined"].append("n/a (pi has no sandbox)")
        rows["codemode_start"].append("n/a (Rust library)")
        rows["codemode_reads"].append("n/a (Rust library)")
        rows["checkpoint_small"].append("n/a (pi has no checkpoints)")
        rows["checkpoint_big"].append("n/a (pi has no checkpoints)")

print("memory against session length (long_session.py)...", file=sys.stderr)
mem = bench_memory(impls)
rows["long_session"] = mem["long_session"]
rows["resume_memory"] = mem["resume_memory"]

labels = {
    "stream_100k": "-p reply of 100,000 chars in 4-char deltas, CPU (median)",
    "stream_400k": "-p reply of 400,000 chars in 4-char deltas, CPU (median)",
    "stream_ratio": "CPU at 400,000 / at 100,000 chars",
    "write_50k": "-p streamed write of 50,000 chars (4-char fragments), CPU",
    "write_200k": "-p streamed write of 200,000 chars (4-char fragments), CPU",
    "write_ratio": "CPU at 200,000 / at 50,000 chars",
    "rpc_state": "rpc: start, get_state, exit (median)",
    "rpc_1k": "rpc: streaming 1,000-delta replies, one process (median)",
    "rpc_10k": "rpc: streaming 10,000-delta replies, one process (median)",
    "rpc_ratio": "rpc: CPU per delta, 10,000-delta / 1,000-delta replies",
    "version": "pi --version, wall (median)",
    "version_rss": "pi --version, peak RSS (median)",
    "print_wall": "pi -p round trip, wall (median)",
    "print_rss": "pi -p round trip, peak RSS (median)",
    "task_rss": "pi -p four-tool task (write, bash echo, edit, read), wall and peak RSS",
    "print_ssl": "pi -p round trip, SSL_CERT_FILE/_DIR set, wall and peak RSS (goal: 1.00x)",
    "size": "release binary size",
    "static": "static musl binary size (make static; codemode's QuickJS included)",
    "codemode_start": "codemode: engine start-up, a script that returns at once (median)",
    "codemode_reads": "codemode: 20 reads in one script vs 20 direct reads (median)",
    "edit": "edit 10 MB file, whole -p run (median)",
    "grep": "grep 50,000 files, whole -p run (median)",
    "rg": "ripgrep, same search, direct (median)",
    "grep_ratio": "grep run / ripgrep",
    "bash_wall": "bash 100 MB output, whole -p run (median)",
    "bash_rss": "bash 100 MB output, peak RSS (median)",
    "grep_big_rss": "grep over a 100 MB file: peak RSS (median)",
    "resume_wall": f"resume {SESSION_SIZE / 1e6:.0f} MB session, whole -p run (median)",
    "resume_rss": f"resume {SESSION_SIZE / 1e6:.0f} MB session, peak RSS (median)",
    "append_10": "append entry at 10, per append (median of 1,000)",
    "append_100k": "append entry at 100,000, per append (median of 1,000)",
    "append_ratio": "append at 100,000 / at 10",
    "tui_start": "interactive: start to ready editor on a pty (median)",
    "tui_idle": "interactive: idle RSS after start (median)",
    "tui_key": "interactive: keystroke to screen, 2,000-message session (median)",
    "tui_frame": "tui: 1 token into 10,000-line transcript, frame (median)",
    "tui_stream": "tui: stream 200 tokens/s at 60 fps, CPU of one core",
    "mcp_start": "mcp: added to start-up, no server configured (median)",
    "mcp_call": "mcp: tools/call over stdio, on top of the server (median)",
    "sandbox_plain": "bash `true`, spawn to exit, no sandbox (median)",
    "sandbox_confined": "bash `true`, workspace-write sandbox (median, +paired overhead)",
    "checkpoint_small": "checkpoint per turn, 10,000-file repository (median)",
    "checkpoint_big": "checkpoint per turn, 100 MB binary file changed (median)",
    "long_session": "rpc: RSS after 10 -> 1,000 prompts (4 KB bash result each), session file (goal: growth <= 2x)",
    "resume_memory": "rpc: resume 200 MB uncompacted session, RSS after get_state (goal <= 2x)",
}
NODE_VERSION = subprocess.run(["node", "--version"], env=env, capture_output=True, text=True).stdout.strip() or "no node"
for count in EXT_COUNTS:
    labels[f"ext_{count}"] = (f"{count} TS extension{'s' if count > 1 else ''} (node {NODE_VERSION}): "
                              "-p run, wall / peak RSS of pi + node")
header = ["metric"] + [n for n, _ in impls]
table = [header] + [[labels[k]] + rows[k] for k in labels]
widths = [max(len(r[i]) for r in table) for i in range(len(header))]
print(f"pi benchmark: {runs} runs per figure ({tool_runs} for the tool rows, {session_runs} for the "
      f"session resume, at most 3 of those for pi (ts)), mock server on 127.0.0.1")
for i, r in enumerate(table):
    print("  ".join(c.ljust(widths[j]) for j, c in enumerate(r)).rstrip())
    if i == 0:
        print("  ".join("-" * w for w in widths))
PY
# A BENCH_ONLY run (codemode, checkpoint, grep_big) is that row alone.
if [[ -z "${BENCH_ONLY:-}" ]]; then
    bench_acp
fi
