#!/usr/bin/env bash
# Benchmark: startup time, one streamed round trip (wall time and peak RSS) against a local mock
# LLM server, binary size, and three tool runs (each a whole `pi -p` process whose mock model calls
# one tool and then answers `done`): an edit on a 10 MB file, grep over a 50,000-file tree (next to
# ripgrep doing the same search, when `rg` is installed), and bash streaming 100 MB of output (wall
# and peak RSS). Prints one table; the TypeScript pi gets a second column when it is installed
# ($PI_TS, ../scratch/pits/node_modules/.bin/pi, or `pi-ts` on PATH).
#
# Never reaches the network: the model is a mock on 127.0.0.1, PI_OFFLINE=1, the environment is
# cleared of provider keys and proxies, and HOME is a scratch directory.
#
#   BENCH_RUNS=30 BENCH_TOOL_RUNS=5 scripts/bench.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
RUNS="${BENCH_RUNS:-30}"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
MUSL_BIN="$TARGET_DIR/x86_64-unknown-linux-musl/release/pi"

echo "building release binary..." >&2
cargo build --release --quiet
PI_RS="$TARGET_DIR/release/pi"

# ---- the TypeScript pi, if present -------------------------------------------------------------
PI_TS="${PI_TS:-}"
if [[ -z "$PI_TS" && -x "$ROOT/../scratch/pits/node_modules/.bin/pi" ]]; then
    PI_TS="$ROOT/../scratch/pits/node_modules/.bin/pi"
fi
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
# A minimal OpenAI Chat Completions server, stateless and scripted by the request itself: when the
# last message is a user message containing `BENCH_TOOL {"name": ..., "arguments": {...}}` it answers
# with that one tool call; when the last message is a tool result it answers `done`; otherwise a
# short greeting. Always this inline one, so the figures don't depend on anything outside the repo.
cat >"$SCRATCH/mock.py" <<'PY'
import json, os, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

def chunk(delta, finish=None, usage=None):
    obj = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0,
           "model": "mock-model",
           "choices": [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage:
        obj["usage"] = usage
    return b"data: " + json.dumps(obj).encode() + b"\n\n"

USAGE = chunk(None, usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})

def text_stream(parts):
    return b"".join([chunk({"role": "assistant", "content": ""})]
                    + [chunk({"content": t}) for t in parts]
                    + [chunk({}, "stop"), USAGE, b"data: [DONE]\n\n"])

GREETING = text_stream(["Hello from ", "the bench mock."])
DONE = text_stream(["done"])

def tool_stream(name, arguments):
    call = {"index": 0, "id": "call_bench", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}
    return b"".join([chunk({"role": "assistant", "content": None, "tool_calls": [call]}),
                     chunk({}, "tool_calls"), USAGE, b"data: [DONE]\n\n"])

def text_of(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content
                       if isinstance(p, dict) and p.get("type") == "text")
    return ""

def answer(raw):
    try:
        msgs = json.loads(raw or b"{}").get("messages") or []
    except ValueError:
        return GREETING
    last = msgs[-1] if msgs and isinstance(msgs[-1], dict) else {}
    if last.get("role") == "tool":
        return DONE
    if last.get("role") == "user":
        text = text_of(last.get("content"))
        at = text.find("BENCH_TOOL ")
        if at >= 0:
            rest = text[at + len("BENCH_TOOL "):].lstrip()
            try:
                spec, _ = json.JSONDecoder().raw_decode(rest)
                return tool_stream(spec["name"], spec.get("arguments") or {})
            except (ValueError, KeyError, TypeError):
                pass
    return GREETING

class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def do_POST(self):
        body = answer(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
        self.close_connection = True

srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
srv.daemon_threads = True
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
srv.serve_forever()
PY
python3 "$SCRATCH/mock.py" "$PORT_FILE" >/dev/null 2>&1 &
MOCK_PID=$!
for _ in $(seq 1 100); do
    [[ -s "$PORT_FILE" ]] && break
    sleep 0.05
done
[[ -s "$PORT_FILE" ]] || { echo "error: mock server did not start" >&2; exit 1; }
PORT="$(tr -d '[:space:]' <"$PORT_FILE")"

AGENT_DIR="$SCRATCH/home/.pi/agent"
mkdir -p "$AGENT_DIR" "$SCRATCH/work" "$SCRATCH/tools" "$SCRATCH/tmp"
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

# ---- measure -------------------------------------------------------------------------------------
export BENCH_RUNS="$RUNS" BENCH_HOME="$SCRATCH/home" BENCH_AGENT_DIR="$AGENT_DIR" BENCH_CWD="$SCRATCH/work"
export BENCH_TOOL_RUNS="${BENCH_TOOL_RUNS:-5}" BENCH_TOOL_CWD="$SCRATCH/tools" BENCH_TMP="$SCRATCH/tmp"
export BENCH_PI_RS="$PI_RS" BENCH_PI_TS="$PI_TS" BENCH_MUSL="$MUSL_BIN"
echo "measuring ($RUNS runs each, $BENCH_TOOL_RUNS for the tool rows)..." >&2
python3 - <<'PY'
import json, os, shutil, statistics, subprocess, sys, tempfile, time

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
cwd = os.environ["BENCH_CWD"]

GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None

def peak_rss_kib(cmd):
    """Peak RSS of one run. Measured through GNU time when present: a child forked from this
    Python process inherits Python's own high-water mark in ru_maxrss (Linux folds the old
    address space's peak in at exec), which would hide a footprint of a few MiB."""
    if GNU_TIME is None:
        return None
    with tempfile.NamedTemporaryFile(mode="r") as out:
        p = subprocess.run([GNU_TIME, "-f", "%M", "-o", out.name] + cmd, env=env, cwd=cwd,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        text = out.read().strip().splitlines()
        return int(text[-1]) if p.returncode == 0 and text else None

def measure(cmd, want_output=False):
    """Median wall ms and median peak RSS (KiB) over `runs` runs; None if the command fails
    (or, with want_output, prints nothing on stdout)."""
    walls, rss = [], []
    for _ in range(runs):
        with tempfile.TemporaryFile() as err:
            t0 = time.perf_counter()
            p = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
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
        peak = peak_rss_kib(cmd)
        rss.append(peak if peak is not None else usage.ru_maxrss)
    return statistics.median(walls), statistics.median(rss)

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

impls = [("pi (rust)", [os.environ["BENCH_PI_RS"]])]
ts = os.environ.get("BENCH_PI_TS")
if ts:
    impls.append(("pi (ts)", [ts]))

rows = {k: [] for k in ("version", "print_wall", "print_rss", "size", "static", "edit", "grep",
                        "rg", "grep_ratio", "bash_wall", "bash_rss")}
print("writing the 50,000-file tree...", file=sys.stderr)
make_tree()
if RG:
    run_rg()  # unmeasured: the first walk of a fresh tree pays for what the later ones don't
for name, base in impls:
    v = measure(base + ["--version"])
    p = measure(base + ["-p", "--model", "mock/mock-model", "say hello"], want_output=True)
    rows["version"].append(f"{v[0]:.1f} ms" if v else "failed")
    rows["print_wall"].append(f"{p[0]:.1f} ms" if p else "failed")
    rows["print_rss"].append(f"{p[1] / 1024:.1f} MiB" if p else "failed")
    if name == "pi (rust)":
        s = size_of(base[0])
        rows["size"].append(f"{s / 1e6:.2f} MB" if s else "n/a")
        m = size_of(os.environ["BENCH_MUSL"])
        rows["static"].append(f"{m / 1e6:.2f} MB" if m else "not built (make static)")
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
        g = bench_grep(base, with_rg=RG is not None and name == "pi (rust)")
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

labels = {
    "version": "pi --version, wall (median)",
    "print_wall": "pi -p round trip, wall (median)",
    "print_rss": "pi -p round trip, peak RSS (median)",
    "size": "release binary size",
    "static": "static musl binary size",
    "edit": "edit 10 MB file, whole -p run (median)",
    "grep": "grep 50,000 files, whole -p run (median)",
    "rg": "ripgrep, same search, direct (median)",
    "grep_ratio": "grep run / ripgrep",
    "bash_wall": "bash 100 MB output, whole -p run (median)",
    "bash_rss": "bash 100 MB output, peak RSS (median)",
}
header = ["metric"] + [n for n, _ in impls]
table = [header] + [[labels[k]] + rows[k] for k in labels]
widths = [max(len(r[i]) for r in table) for i in range(len(header))]
print(f"pi benchmark: {runs} runs per figure ({tool_runs} for the tool rows), mock server on 127.0.0.1")
for i, r in enumerate(table):
    print("  ".join(c.ljust(widths[j]) for j, c in enumerate(r)).rstrip())
    if i == 0:
        print("  ".join("-" * w for w in widths))
PY
