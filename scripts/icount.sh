#!/usr/bin/env bash
# Instruction counts (callgrind Ir, all threads) of the bench's workloads for two pi binaries, as a
# ratio table: a deterministic "did it get slower" check where wall-clock time is noise (a shared,
# loaded machine). Used to compare build profiles and code changes (Cargo.toml's profile notes).
#
#   scripts/icount.sh OLD_PI NEW_PI [OLD_TUI_BENCH NEW_TUI_BENCH]
#
# Workloads (scripts/bench.sh's, some made smaller so valgrind finishes in minutes; the mock is
# scripts/bench_mock.py): `--version`; a `-p` round trip; a `-p` reply of 100,000 chars in
# 4-char deltas; a streamed `write` of 50,000 chars; an RPC reply of 10,000 one-char deltas and
# of one delta (their difference is the per-delta cost); the four-tool task; an edit on a 10 MB
# file; grep over a 50,000-file tree; bash streaming 20 MB; resuming a 10,000-message session;
# with tui_bench binaries, tui_bench's deterministic part (frames under a 10,000-line
# transcript; its timed streaming part is left out with `0` seconds). ICOUNT_ONLY=name,name picks workloads; ICOUNT_KEEP=dir keeps the callgrind files
# (`callgrind_annotate --inclusive=no dir/NAME.old | head -60`: unstripped binaries name functions),
# and ICOUNT_REUSE=1 with it reuses the files already there (one baseline against several builds).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[[ $# -eq 2 || $# -eq 4 ]] || { sed -n '2,15p' "$0" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "error: needs valgrind (callgrind)" >&2; exit 1; }
OLD="$(realpath "$1")"
NEW="$(realpath "$2")"
OLD_TUI="${3:+$(realpath "$3")}"
NEW_TUI="${4:+$(realpath "$4")}"

SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/pi-icount.XXXXXX")"
MOCK_PID=""
cleanup() {
    if [[ -n "$MOCK_PID" ]]; then
        kill "$MOCK_PID" 2>/dev/null || true
        wait "$MOCK_PID" 2>/dev/null || true
    fi
    rm -rf "$SCRATCH"
}
trap cleanup EXIT INT TERM
KEEP="${ICOUNT_KEEP:-$SCRATCH/out}"
mkdir -p "$KEEP"

python3 "$ROOT/scripts/bench_mock.py" "$SCRATCH/port" >/dev/null 2>&1 &
MOCK_PID=$!
for _ in $(seq 1 100); do
    [[ -s "$SCRATCH/port" ]] && break
    sleep 0.05
done
[[ -s "$SCRATCH/port" ]] || { echo "error: mock server did not start" >&2; exit 1; }
PORT="$(tr -d '[:space:]' <"$SCRATCH/port")"
AGENT_DIR="$SCRATCH/home/.pi/agent"
WORK="$SCRATCH/work"
mkdir -p "$AGENT_DIR" "$WORK" "$SCRATCH/tmp"
cat >"$AGENT_DIR/models.json" <<EOF
{"providers": {"mock": {"baseUrl": "http://127.0.0.1:$PORT/v1", "api": "openai-completions",
  "apiKey": "bench-key", "models": [{"id": "mock-model"}]}}}
EOF

echo "preparing inputs..." >&2
python3 - "$WORK" <<'PY'
import os, sys
work = sys.argv[1]
filler = ("x" * 99 + "\n").encode()
with open(os.path.join(work, "big.orig"), "wb") as f:
    f.write(filler * 50_000 + b"UNIQUE_MARKER_LINE".ljust(99, b"-") + b"\n" + filler * 49_999)
n = 0
for d in range(500):
    dpath = os.path.join(work, "tree", f"d{d:03}")
    os.makedirs(dpath)
    for i in range(100):
        body = f"file {n} line one\nsome ordinary text {n * 7}\nthe end of file {n}\n"
        if n % 100 == 37:
            body += f"here is needle_{n} in the middle\n"
        with open(os.path.join(dpath, f"f{i:03}.txt"), "w") as f:
            f.write(body)
        n += 1
PY
python3 "$ROOT/scripts/gen_session.py" "$SCRATCH/session.orig" "$WORK" 10000

tool() { # tool NAME ARGS_JSON -> the -p arguments of a one-tool-call run
    printf '%s\0' -p --model mock/mock-model --tools "$1" "BENCH_TOOL {\"name\": \"$1\", \"arguments\": $2}"
}
rpc_input() { # rpc_input N -> one RPC prompt streaming N one-char deltas
    printf '{"type":"prompt","message":"BENCH_STREAM %s"}\n' "$1"
}

# run NAME WHICH PI ARGS... : one callgrind run, stdin from $STDIN (default /dev/null).
run() {
    local name="$1" which="$2" exe="$3"
    shift 3
    [[ -n "${ICOUNT_REUSE:-}" && -s "$KEEP/$name.$which" ]] && return 0
    case "$name" in
        edit) cp "$WORK/big.orig" "$WORK/big.txt" ;;
        resume) cp "$SCRATCH/session.orig" "$SCRATCH/session.jsonl" ;;
        task) rm -f "$WORK/task.txt" ;;
    esac
    rm -rf "$SCRATCH/tmp"/*
    env -i PATH="$PATH" HOME="$SCRATCH/home" PI_CODING_AGENT_DIR="$AGENT_DIR" PI_OFFLINE=1 \
        PI_SKIP_VERSION_CHECK=1 PI_TELEMETRY=0 TERM=dumb TMPDIR="$SCRATCH/tmp" \
        valgrind --tool=callgrind --callgrind-out-file="$KEEP/$name.$which" "$exe" "$@" \
        <"${STDIN:-/dev/null}" >"$SCRATCH/stdout" 2>"$SCRATCH/stderr" || {
        echo "error: $name ($which) failed:" >&2
        tail -5 "$SCRATCH/stderr" >&2
        exit 1
    }
}

total() { # the Ir total of a callgrind file
    awk '/^(summary|totals):/ { print $2; exit }' "$1"
}

wanted() { [[ -z "${ICOUNT_ONLY:-}" || ",$ICOUNT_ONLY," == *",$1,"* ]]; }

rpc_input 10000 >"$SCRATCH/rpc10k"
rpc_input 1 >"$SCRATCH/rpc1"
mapfile -d '' EDIT < <(tool edit '{"path": "big.txt", "edits": [{"oldText": "UNIQUE_MARKER_LINE", "newText": "REPLACED_MARKER_LINE"}]}')
mapfile -d '' GREP < <(tool grep '{"pattern": "needle_[0-9]+", "path": "tree", "limit": 100000}')
mapfile -d '' BASH < <(tool bash '{"command": "head -c 20000000 /dev/zero | tr \"\\\\0\" a | fold -w 100"}')

NAMES=()
workload() { # workload NAME ARGS... (STDIN may be set)
    local name="$1"
    shift
    wanted "$name" || return 0
    echo "  $name..." >&2
    (cd "$WORK" && run "$name" old "$OLD" "$@" && run "$name" new "$NEW" "$@")
    NAMES+=("$name")
}
echo "running (each workload under callgrind, old then new)..." >&2
workload version --version
workload p_hello -p --model mock/mock-model "say hello"
workload stream_100k -p --no-session --model mock/mock-model "BENCH_CHARS 100000"
workload write_50k -p --no-session --model mock/mock-model --tools write "BENCH_WRITE 50000"
STDIN="$SCRATCH/rpc10k" workload rpc_10k --mode rpc --no-session --model mock/mock-model
STDIN="$SCRATCH/rpc1" workload rpc_1 --mode rpc --no-session --model mock/mock-model
workload task -p --model mock/mock-model --tools write,bash,edit,read \
    "BENCH_TASK: write task.txt, run echo, edit and read it back"
workload edit "${EDIT[@]}"
workload grep "${GREP[@]}"
workload bash "${BASH[@]}"
workload resume -p --model mock/mock-model --session "$SCRATCH/session.jsonl" hi
if [[ -n "$OLD_TUI" ]] && wanted tui; then
    echo "  tui..." >&2
    (cd "$WORK" && run tui old "$OLD_TUI" 0 && run tui new "$NEW_TUI" 0)
    NAMES+=(tui)
fi

printf '%-12s %16s %16s %8s\n' workload "old Ir" "new Ir" new/old
for name in "${NAMES[@]}"; do
    a="$(total "$KEEP/$name.old")"
    b="$(total "$KEEP/$name.new")"
    printf '%-12s %16s %16s %8s\n' "$name" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.4f", b / a }')"
done
if [[ " ${NAMES[*]} " == *" rpc_10k "* && " ${NAMES[*]} " == *" rpc_1 "* ]]; then
    d_old=$(($(total "$KEEP/rpc_10k.old") - $(total "$KEEP/rpc_1.old")))
    d_new=$(($(total "$KEEP/rpc_10k.new") - $(total "$KEEP/rpc_1.new")))
    printf '%-12s %16s %16s %8s\n' "rpc/delta" "$((d_old / 9999))" "$((d_new / 9999))" \
        "$(awk -v a="$d_old" -v b="$d_new" 'BEGIN { printf "%.4f", b / a }')"
fi
