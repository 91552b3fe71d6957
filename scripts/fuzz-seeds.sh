#!/usr/bin/env bash
# Seeds for `make fuzz`, written into DIR/reader, DIR/results and DIR/csv:
# traces Strobe wrote (a child program and the example app, one of them
# cut short), traces written through Perfetto's official Python schema, a
# results file of the example perf suite, and CSV samples (one of them the
# results file exported by `strobe results export`).
# Usage: scripts/fuzz-seeds.sh SDK_BIN TOOLS_BIN DIR   (debug builds of the SDK
# package and of Tools/, which builds `strobe`)
set -euo pipefail
bin="$1"
tools_bin="$2"
out="$3"
mkdir -p "$out/reader" "$out/results" "$out/csv" "$out/recover"
STROBE_TRACE_OUTPUT="$out/reader/child.pftrace" "$bin/TraceChild" ok 2
STROBE_TRACE_OUTPUT="$out/reader/rusage.pftrace" STROBE_TRACE_RUSAGE='*' "$bin/TraceChild" ok 1
"$bin/LensPipeline" --frames 3 --size 32x24 --trace "$out/reader/lens.pftrace" >/dev/null
head -c 3000 "$out/reader/lens.pftrace" > "$out/reader/lens-cut.pftrace"
python3 "$(dirname "$0")/../Tests/python/make_perfetto_seeds.py" "$out/reader"
rm -rf "$out/.suite"
"$bin/LensPerfTests" --iterations 2 --warmup 0 --filter 'capture' --results-dir "$out/.suite" >/dev/null
find "$out/.suite" -name '*.strobe-results' -exec cp {} "$out/results/" \;
for file in "$out"/results/*.strobe-results; do
    "$tools_bin/strobe" results export "$file" --format csv > "$out/csv/$(basename "$file" .strobe-results).csv" 2>/dev/null || true
done
printf 'metric,value\nwall,1.5\nwall,1.7\ncpu,0.9\n' > "$out/csv/simple.csv"
# Crash files of small rings (the child dies of the signal on purpose).
for how in segv abrt; do
    SWIFT_BACKTRACE=enable=no TRACE_CHILD_BUFFER_BYTES=8192 "$bin/TraceChild" crash-capture "$how" \
        "$out/recover/$how.strobe-crash" 2>/dev/null || true
done
rm -rf "$out/.suite"
