#!/usr/bin/env bash
# Runs each libFuzzer target of StrobeFuzz over its corpus and seeds, as many
# at once as FUZZ_JOBS (default: the number of cores), each writing to a log
# of its own; prints each target's final statistics, and a failing target's
# whole log. Exits non-zero when any target found a problem.
# Usage: scripts/fuzz-targets.sh FUZZER TARGET... -- LIBFUZZER_FLAGS...
set -euo pipefail
fuzzer=$1
shift
targets=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    targets+=("$1")
    shift
done
[ $# -gt 0 ] && shift
flags=("$@")
jobs=${FUZZ_JOBS:-$(nproc)}
logs=Tools/.build/fuzz-logs
mkdir -p "$logs" Tools/.build/fuzz-artifacts

run_target() {
    local target=$1
    mkdir -p "Tools/.build/fuzz-corpus/$target"
    LSAN_OPTIONS=suppressions=scripts/lsan-suppressions.txt ASAN_OPTIONS=malloc_context_size=4 \
        "$fuzzer" "$target" "${flags[@]}" "Tools/.build/fuzz-corpus/$target" "Tools/.build/fuzz-seeds/$target" \
        >"$logs/$target.log" 2>&1
}

failed=()
running=0
pids=()
names=()
finish() { # wait for the oldest running target
    local status=0
    wait "${pids[0]}" || status=$?
    if [ "$status" -eq 0 ]; then
        echo "fuzz ${names[0]}: $(grep -E '^stat::(number_of_executed_units|peak_rss_mb)' "$logs/${names[0]}.log" | tr '\n' ' ')"
    else
        echo "fuzz ${names[0]}: FAILED (exit status $status); its log:"
        cat "$logs/${names[0]}.log"
        failed+=("${names[0]}")
    fi
    pids=("${pids[@]:1}")
    names=("${names[@]:1}")
    running=$((running - 1))
}
for target in "${targets[@]}"; do
    if [ "$running" -ge "$jobs" ]; then finish; fi
    run_target "$target" &
    pids+=($!)
    names+=("$target")
    running=$((running + 1))
done
while [ "$running" -gt 0 ]; do finish; done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: ${failed[*]} failed (artifacts in Tools/.build/fuzz-artifacts)" >&2
    exit 1
fi
