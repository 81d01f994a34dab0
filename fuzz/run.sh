#!/usr/bin/env bash
# Builds the fuzz targets with coverage instrumentation and runs each one for a fixed budget
# (see README.md). Usage: fuzz/run.sh [target...]   (default: every target)
#   FUZZ_RUNS     inputs per target (default 1000000)
#   FUZZ_TIMEOUT  seconds one input may take before it counts as a hang (default 10: a
#                 loaded machine slows everything; a real hang never ends)
#   FUZZ_RSS_MB   memory limit of the fuzzing process and of any one allocation (default 1024)
#   FUZZ_JOBS     parallel targets (default 1)
# Exits non-zero if any target found a crash, a hang or an input over the memory limit; the input that did it is
# saved in fuzz/target/artifacts/<target>/ — copy it to fuzz/regressions/<target>/ once fixed.
set -euo pipefail
cd "$(dirname "$0")"

RUNS=${FUZZ_RUNS:-1000000}
TIMEOUT=${FUZZ_TIMEOUT:-10}
JOBS=${FUZZ_JOBS:-1}
RSS_MB=${FUZZ_RSS_MB:-1024}
TRIPLE=$(rustc -vV | sed -n 's/^host: //p')
BIN=target/$TRIPLE/release

# Stable rustc's SanitizerCoverage flags, the ones cargo-fuzz passes (no sanitizer: the code
# under test is safe Rust, so a crash is a panic, an abort, a hang or the memory limit).
export RUSTFLAGS="-Cpasses=sancov-module \
 -Cllvm-args=-sanitizer-coverage-level=4 \
 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
 -Cllvm-args=-sanitizer-coverage-pc-table \
 -Cllvm-args=-sanitizer-coverage-trace-compares \
 --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
# --target keeps the instrumentation off build scripts and proc macros.
cargo build --release --target "$TRIPLE" --bins

all=$(sed -n 's/^    ("\([a-z_]*\)", .*/\1/p' targets/mod.rs)
targets=${*:-$all}

mkdir -p target/work target/artifacts target/logs
# Files the targets create (session files, @file arguments) go to a RAM disk when there is one.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=${TMPDIR:-/dev/shm}

# Runs one target; prints its summary line and leaves `ok` or `FAILED` in its status file.
run_one() {
    local t=$1 work=target/work/$1 log=target/logs/$1.log max_len=4096
    mkdir -p "$work" "target/artifacts/$t" "corpus/$t"
    local dict=()
    [ -f "dict/$t.dict" ] && dict=(-dict="dict/$t.dict")
    local start end status runs secs rate cov verdict
    start=$(date +%s.%N)
    set +e
    # New inputs go to the scratch corpus; the committed one (second directory) is only read.
    "$BIN/$t" -runs="$RUNS" -timeout="$TIMEOUT" -rss_limit_mb="$RSS_MB" \
        -malloc_limit_mb="$RSS_MB" -max_len="$max_len" -print_final_stats=1 \
        -artifact_prefix="target/artifacts/$t/" "${dict[@]}" "$work" "corpus/$t" >"$log" 2>&1
    status=$?
    set -e
    end=$(date +%s.%N)
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    runs=${runs:-0}
    secs=$(echo "$end - $start" | bc)
    rate=$(echo "scale=0; $runs / $secs" | bc)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    if [ "$status" -eq 0 ] && [ "$runs" -ge "$RUNS" ]; then
        verdict="ok"
    else
        verdict="FAILED (exit $status, see fuzz/$log)"
    fi
    echo "$verdict" >"target/logs/$t.status"
    printf '%-18s %9s inputs %7.1f s %7s inputs/s  cov %-5s %s\n' \
        "$t" "$runs" "$secs" "$rate" "${cov:-?}" "$verdict"
}

summary=target/logs/summary.txt
: >"$summary"
running=0
for t in $targets; do
    run_one "$t" | tee -a "$summary" &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then
        wait -n || true
        running=$((running - 1))
    fi
done
wait
failed=0
for t in $targets; do
    grep -qx ok "target/logs/$t.status" || failed=1
done
exit $failed
