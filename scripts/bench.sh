#!/usr/bin/env bash
# Benchmark: startup time, one streamed round trip (wall time and peak RSS) against a local mock
# LLM server, and binary size. Prints one table; the TypeScript pi gets a second column when it
# is installed ($PI_TS, ../scratch/pits/node_modules/.bin/pi, or `pi-ts` on PATH).
#
# Never reaches the network: the model is a mock on 127.0.0.1, PI_OFFLINE=1, the environment is
# cleared of provider keys and proxies, and HOME is a scratch directory.
#
#   BENCH_RUNS=30 scripts/bench.sh
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
MOCKLLM="$ROOT/../shared/tools/mockllm/mockllm.py"
if [[ -f "$MOCKLLM" ]]; then
    python3 "$MOCKLLM" --port 0 --port-file "$PORT_FILE" --echo --quiet >/dev/null 2>&1 &
    MOCK_PID=$!
else
    # A minimal OpenAI Chat Completions server: every POST gets the same short SSE stream.
    cat >"$SCRATCH/mock.py" <<'PY'
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

def chunk(delta, finish=None, usage=None):
    obj = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0,
           "model": "mock-model",
           "choices": [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage:
        obj["usage"] = usage
    return b"data: " + json.dumps(obj).encode() + b"\n\n"

BODY = b"".join([
    chunk({"role": "assistant", "content": ""}),
    chunk({"content": "Hello from "}), chunk({"content": "the bench mock."}),
    chunk({}, "stop"),
    chunk(None, usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}),
    b"data: [DONE]\n\n",
])

class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(BODY)
        self.close_connection = True

srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os; os.replace(sys.argv[1] + ".tmp", sys.argv[1])
srv.serve_forever()
PY
    python3 "$SCRATCH/mock.py" "$PORT_FILE" >/dev/null 2>&1 &
    MOCK_PID=$!
fi
for _ in $(seq 1 100); do
    [[ -s "$PORT_FILE" ]] && break
    sleep 0.05
done
[[ -s "$PORT_FILE" ]] || { echo "error: mock server did not start" >&2; exit 1; }
PORT="$(tr -d '[:space:]' <"$PORT_FILE")"

AGENT_DIR="$SCRATCH/home/.pi/agent"
mkdir -p "$AGENT_DIR" "$SCRATCH/work"
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
export BENCH_PI_RS="$PI_RS" BENCH_PI_TS="$PI_TS" BENCH_MUSL="$MUSL_BIN"
echo "measuring ($RUNS runs each)..." >&2
python3 - <<'PY'
import os, statistics, subprocess, sys, tempfile, time

runs = int(os.environ["BENCH_RUNS"])
env = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "HOME": os.environ["BENCH_HOME"],
    "PI_CODING_AGENT_DIR": os.environ["BENCH_AGENT_DIR"],
    "PI_OFFLINE": "1",
    "PI_SKIP_VERSION_CHECK": "1",
    "PI_TELEMETRY": "0",
    "TERM": "dumb",
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

impls = [("pi (rust)", [os.environ["BENCH_PI_RS"]])]
ts = os.environ.get("BENCH_PI_TS")
if ts:
    impls.append(("pi (ts)", [ts]))

rows = {k: [] for k in ("version", "print_wall", "print_rss", "size", "static")}
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

labels = {
    "version": "pi --version, wall (median)",
    "print_wall": "pi -p round trip, wall (median)",
    "print_rss": "pi -p round trip, peak RSS (median)",
    "size": "release binary size",
    "static": "static musl binary size",
}
header = ["metric"] + [n for n, _ in impls]
table = [header] + [[labels[k]] + rows[k] for k in labels]
widths = [max(len(r[i]) for r in table) for i in range(len(header))]
print(f"pi benchmark: {runs} runs per figure, mock server on 127.0.0.1")
for i, r in enumerate(table):
    print("  ".join(c.ljust(widths[j]) for j, c in enumerate(r)).rstrip())
    if i == 0:
        print("  ".join("-" * w for w in widths))
PY
