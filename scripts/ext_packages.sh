#!/usr/bin/env bash
# Installs popular third-party pi packages with our `pi install npm:NAME` (from the npm
# registry, into a scratch agent dir) and checks that each one's extensions load: a run of
# `pi --no-session -p hi` against a local echo mock must end with no extension error, and RPC
# `get_commands` lists what the package adds.
#
#   scripts/ext_packages.sh [NAME...]      (default: the list below)
#
# Needs the npm registry (for the install only); the runs themselves stay offline (PI_OFFLINE=1,
# mock on 127.0.0.1, scratch HOME). PI_RS picks the binary (default target/debug/pi).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PI_RS="${PI_RS:-$ROOT/target/debug/pi}"
MOCKLLM="${MOCKLLM:-/work/shared/tools/mockllm/mockllm.py}"
TIMEOUT="${EXT_PACKAGES_TIMEOUT:-60}"
PACKAGES=("$@")
if [[ ${#PACKAGES[@]} -eq 0 ]]; then
    PACKAGES=(pi-subagents pi-mcp-adapter pi-web-access pi-aliases pi-mermaid
        pi-prompt-template-model pi-markdown-preview @agentuity/pi
        @baochunli/pi-collaborating-agents)
fi
[[ -x "$PI_RS" ]] || { echo "build pi first (cargo build), or set PI_RS" >&2; exit 2; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/pi-ext-packages.XXXXXX")"
MOCK_PID=""
cleanup() {
    [[ -n "$MOCK_PID" ]] && kill "$MOCK_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

python3 "$MOCKLLM" --port 0 --echo --quiet --port-file "$WORK/port" >/dev/null 2>&1 &
MOCK_PID=$!
for _ in $(seq 50); do [[ -s "$WORK/port" ]] && break; sleep 0.1; done
PORT="$(cat "$WORK/port")"

printf '%-38s %-8s %-6s %s\n' package install load "commands / note"
for pkg in "${PACKAGES[@]}"; do
    dir="$WORK/$(echo "$pkg" | tr '/@' '__')"
    mkdir -p "$dir/agent" "$dir/home" "$dir/proj"
    cat >"$dir/agent/models.json" <<EOF
{"providers":{"mock":{"api":"openai-completions","baseUrl":"http://127.0.0.1:$PORT/v1","apiKey":"x",
 "models":[{"id":"mock-model","name":"Mock","contextWindow":128000,"maxTokens":4096}]}}}
EOF
    echo '{"defaultProvider":"mock","defaultModel":"mock-model"}' >"$dir/agent/settings.json"
    run() {
        (cd "$dir/proj" && HOME="$dir/home" PI_CODING_AGENT_DIR="$dir/agent" "$@") </dev/null
    }
    if ! run timeout 300 "$PI_RS" install "npm:$pkg" >"$dir/install.log" 2>&1; then
        printf '%-38s %-8s %-6s %s\n' "$pkg" FAIL - "$(tail -1 "$dir/install.log" | cut -c1-80)"
        continue
    fi
    run env PI_OFFLINE=1 timeout "$TIMEOUT" "$PI_RS" --no-session -p hi >"$dir/run.log" 2>&1
    rc=$?
    err="$(grep -m1 -E 'Extension error|Failed to load|Cannot find (module|package)|is not a function' "$dir/run.log")"
    commands="$(echo '{"id":"c","type":"get_commands"}' |
        (cd "$dir/proj" && HOME="$dir/home" PI_CODING_AGENT_DIR="$dir/agent" PI_OFFLINE=1 \
            timeout "$TIMEOUT" "$PI_RS" --no-session --mode rpc 2>/dev/null) |
        python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("id") == "c":
        print(" ".join(sorted(c["name"] for c in m.get("data", {}).get("commands", []) if c.get("source") == "extension")) or "-")
        break
')"
    if [[ -n "$err" ]]; then
        printf '%-38s %-8s %-6s %s\n' "$pkg" ok FAIL "$(echo "$err" | cut -c1-100)"
    elif [[ $rc -ne 0 ]]; then
        printf '%-38s %-8s %-6s %s\n' "$pkg" ok FAIL "exit $rc: $(tail -1 "$dir/run.log" | cut -c1-80)"
    else
        printf '%-38s %-8s %-6s %s\n' "$pkg" ok ok "${commands:--}"
    fi
    [[ -n "${EXT_PACKAGES_VERBOSE:-}" ]] && cat "$dir/run.log" >&2
done
