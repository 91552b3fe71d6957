#!/usr/bin/env bash
# The end-to-end demo behind `make demo`: instrument an app, record a trace,
# run perf tests on a fast and a slow build, and catch the regression.
set -euo pipefail
cd "$(dirname "$0")/.."

out=out/demo
rm -rf "$out"
mkdir -p "$out"
iterations=${DEMO_ITERATIONS:-15}
rounds=${DEMO_ROUNDS:-3}

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

step "Building in release mode"
swift build -c release --product LensPipeline
swift build -c release --product LensPerfTests
swift build -c release --product strobe
bin=$(swift build -c release --show-bin-path)

step "1. The instrumented app: a lens pipeline with worker threads and frame deadlines, traced"
"$bin/LensPipeline" --frames 240 --trace "$out/lens.pftrace"

step "2. What the trace says (strobe summarize)"
"$bin/strobe" summarize "$out/lens.pftrace" --frame-budget 16.67ms

step "3. Perf tests: the vectorized build (baseline) against the scalar build (candidate)"
# The talk's regression: a build change turned the SIMD colour grade scalar.
# Rounds alternate the two builds so machine drift lands on both alike.
for round in $(seq 1 "$rounds"); do
    LENS_KERNEL=vectorized "$bin/LensPerfTests" --iterations "$iterations" --output "$out/baseline" --tag kernel=vectorized
    LENS_KERNEL=scalar "$bin/LensPerfTests" --iterations "$iterations" --output "$out/candidate" --tag kernel=scalar
done

step "   and a process-level cold-start test of the app (strobe run)"
"$bin/strobe" run --iterations 12 --warmup 1 --output "$out/baseline" --name "cold start" --tag kernel=vectorized \
    -- "$bin/LensPipeline" --frames 3 --kernel vectorized
"$bin/strobe" run --iterations 12 --warmup 1 --output "$out/candidate" --name "cold start" --tag kernel=scalar \
    -- "$bin/LensPipeline" --frames 3 --kernel scalar

step "4. The verdict (strobe diff)"
metrics='wall|lens apply|interval:frame:sum|interval:capture:sum|cpu.user'
status=0
"$bin/strobe" diff --baseline "$out/baseline" --candidate "$out/candidate" --metric "$metrics" || status=$?
"$bin/strobe" diff --baseline "$out/baseline" --candidate "$out/candidate" --metric "$metrics" \
    --format markdown --output "$out/pr-comment.md" || true
"$bin/strobe" diff --baseline "$out/baseline" --candidate "$out/candidate" --metric "$metrics" \
    --format html --output "$out/report.html" || true
case $status in
    0) echo "No regression found." ;;
    1) echo "strobe diff found a regression (exit status 1): that is what this demo set out to show." ;;
    *) echo "strobe diff could not compare the results (exit status $status)"; exit "$status" ;;
esac

step "5. Where to look next"
echo "Trace of the app:        $out/lens.pftrace"
echo "  open it at https://ui.perfetto.dev (Open trace file): each interval sits beside the thread"
echo "  that ran it; select a 'lens apply' slice to see its thread CPU time and rusage deltas."
echo "Pull-request comment:    $out/pr-comment.md"
echo "HTML report with plots: $out/report.html"
echo "Raw results:             $out/baseline, $out/candidate (strobe results export FILE --format csv)"
echo "Slow iterations:         rerun a suite with --keep-traces to keep each iteration's trace."
