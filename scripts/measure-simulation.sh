#!/usr/bin/env bash
# The simulated and emulated instruction counts (`--instructions simulated`,
# under callgrind, and `--instructions emulated`, under QEMU), measured:
#   - their cost: seconds per measured iteration under each against the
#     same iteration run natively, as a ratio (each from the difference of a
#     process with 1 + N measured iterations and one with 1, so that start-up
#     and warm-up cancel);
#   - their residual spread: instructions per iteration of one build across
#     PROCESSES processes (default 5) of 3 iterations each, as the largest
#     over the smallest, minus 1, for a single-threaded test
#     (ProfileSuite's "parse document") and the demo's tests ("capture frame",
#     and "apply lens" with two worker threads).
# Prints the CPU and the load average with the figures; BUSY=1 keeps one core
# busy meanwhile; MODES="simulated" measures one of the two.
#
#   bash scripts/measure-simulation.sh [PROCESSES]
set -euo pipefail
cd "$(dirname "$0")/.."
# SwiftPM with one environment for every call (scripts/swift.sh).
swift_script="$PWD/scripts/swift.sh"
swift() { bash "$swift_script" "$@"; }
processes=${1:-5}
swift build -c release --product ProfileSuite >/dev/null
swift build -c release --product LensPerfTests >/dev/null
bin=$(swift build -c release --show-bin-path)
work=$(mktemp -d /tmp/strobe-simulation.XXXXXX)
trap 'rm -rf "$work"' EXIT
source scripts/measure-common.sh
export PROFILE_SUITE_SCALE=${PROFILE_SUITE_SCALE:-0.2}

seconds() { python3 -c 'import time; print(time.monotonic())'; }

# run_seconds OUT ARGS...: the seconds a suite process takes.
run_seconds() {
    local out=$1
    shift
    local start end
    start=$(seconds)
    "$@" --results-dir "$out" >/dev/null 2>&1
    end=$(seconds)
    python3 -c "print($end - $start)"
}

# instructions FILE TEST: the instructions samples of TEST in a results file.
samples() {
    python3 - "$1" "$2" <<'PY'
import struct, sys
def varint(b, i):
    r = s = 0
    while True:
        c = b[i]; i += 1; r |= (c & 0x7f) << s; s += 7
        if c < 0x80: return r, i
def fields(b):
    i = 0
    while i < len(b):
        k, i = varint(b, i); f, w = k >> 3, k & 7
        if w == 0: v, i = varint(b, i)
        elif w == 1: v = b[i:i+8]; i += 8
        elif w == 5: v = b[i:i+4]; i += 4
        else:
            n, i = varint(b, i); v = b[i:i+n]; i += n
        yield f, v
data = open(sys.argv[1], 'rb').read()
for f, test in fields(data):
    if f != 2: continue
    entries = list(fields(test))
    if not any(g == 1 and v.decode() == sys.argv[2] for g, v in entries): continue
    for g, metric in entries:
        if g != 2: continue
        parts = list(fields(metric))
        if any(h == 1 and v.decode() == 'instructions' for h, v in parts):
            for h, v in parts:
                if h == 4:
                    print(' '.join('%d' % struct.unpack('<d', v[j:j+8])[0] for j in range(0, len(v), 8)))
PY
}

echo "$(machine_line "load average $(cut -d' ' -f1-3 /proc/loadavg) at the start")"
printf '%-10s %-16s %12s %12s %8s %14s %10s\n' "mode" "test" "native/iter" "counted/iter" "ratio" "instructions" \
    "spread"
measure() {
    local mode=$MODE name=$1 test=$2 extra=$3
    shift 3
    local command=("$@")
    local n=4
    local native_one native_many sim_one sim_many
    native_one=$(run_seconds "$work/n1" "${command[@]}" --filter "^$test\$" --iterations 1 --warmup 1 $extra)
    native_many=$(run_seconds "$work/n2" "${command[@]}" --filter "^$test\$" --iterations $((1 + n)) --warmup 1 $extra)
    sim_one=$(run_seconds "$work/s1" "${command[@]}" --filter "^$test\$" --iterations 1 --warmup 1 --instructions "$mode" $extra)
    sim_many=$(run_seconds "$work/s2" "${command[@]}" --filter "^$test\$" --iterations $((1 + n)) --warmup 1 --instructions "$mode" $extra)
    local all=()
    for process in $(seq 1 "$processes"); do
        "${command[@]}" --filter "^$test\$" --iterations 3 --warmup 1 --instructions "$mode" $extra \
            --results-dir "$work/spread-$name-$process" >/dev/null 2>&1
        all+=($(samples "$(ls "$work/spread-$name-$process"/*.strobe-results)" "$test"))
    done
    python3 - "$mode" "$name" "$native_one" "$native_many" "$sim_one" "$sim_many" "$n" "${all[@]}" <<'PY'
import sys
mode, name = sys.argv[1], sys.argv[2]
native = (float(sys.argv[4]) - float(sys.argv[3])) / int(sys.argv[7])
sim = (float(sys.argv[6]) - float(sys.argv[5])) / int(sys.argv[7])
values = [int(v) for v in sys.argv[8:]]
spread = max(values) / min(values) - 1 if values else float('nan')
print('%-10s %-16s %10.2f ms %10.1f ms %7.1fx %14d %9.4f%%' % (mode, name, native * 1e3, sim * 1e3,
      sim / max(native, 1e-9), sorted(values)[len(values) // 2], spread * 100))
PY
}
for MODE in ${MODES:-simulated emulated}; do
    measure "parse document" "parse document" "" "$bin/ProfileSuite"
    measure "capture frame" "capture frame" "" "$bin/LensPerfTests"
    LENS_APPLY_FRAMES=2 measure "apply lens" "apply lens" "" env LENS_APPLY_FRAMES=2 "$bin/LensPerfTests"
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); spread over $processes processes of 3 iterations each"
