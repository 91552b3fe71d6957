#!/usr/bin/env bash
# Instructions per call of the recording calls, counted by callgrind on a
# release build: each loop of StrobeBenchmarks' `instructions` section runs
# InstructionCountBenchmarks.calls times under a C name, and its inclusive
# count divided by that is the figure. Unlike wall time on a shared machine,
# these counts repeat exactly from run to run.
#
#   bash scripts/instruction-counts.sh [path/to/StrobeBenchmarks]
set -euo pipefail
binary=${1:-.build/release/StrobeBenchmarks}
calls=100000
if ! command -v valgrind >/dev/null; then
    echo "instruction-counts: valgrind is not installed (apt-get install valgrind)" >&2
    exit 2
fi
if [ ! -x "$binary" ]; then
    echo "instruction-counts: $binary is missing; build it with" \
        "swift build -c release --traits StrobeMetrics,StrobeTracing --product StrobeBenchmarks" >&2
    exit 2
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Older valgrind cannot read the DWARF 5 the toolchain writes; the symbol
# table is enough to name functions.
objcopy --strip-debug "$binary" "$out/StrobeBenchmarks"
valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out" "$out/StrobeBenchmarks" instructions >"$out/stdout" 2>"$out/stderr" || {
    cat "$out/stderr" >&2
    exit 1
}
callgrind_annotate --inclusive=yes --threshold=100 "$out/callgrind.out" >"$out/annotated"
# Each loop runs twice for some calls (a warm-up first); callgrind sums
# both, so the warm-up counts are subtracted by counting calls too.
printf '%-46s %s\n' "loop" "instructions/call"
for loop in begin end counter async_interval strobe_span noop_span strobe_span_attribute noop_span_attribute strobe_span_attributes5 noop_span_attributes5; do
    line=$(grep -E "[^_a-z]strobe_instructions_${loop}( |\$|\[)" "$out/annotated" | head -1 || true)
    [ -n "$line" ] || continue
    total=$(echo "$line" | awk '{gsub(",", "", $1); print $1}')
    # The loops that also ran as a warm-up ran twice.
    case $loop in begin|end|strobe_span) runs=2 ;; *) runs=1 ;; esac
    awk -v t="$total" -v n=$((calls * runs)) -v name="$loop" 'BEGIN { printf "%-46s %.1f\n", name, t / n }'
done
