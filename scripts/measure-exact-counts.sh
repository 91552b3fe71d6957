#!/usr/bin/env bash
# Whether the exact counts (allocations, their bytes, the remaining ones,
# retains, releases) of one build repeat: in every iteration of PROCESSES
# native processes (default 10), of as many native processes with
# --profile, and of SIMULATED processes counted under callgrind (default 3)
# and under QEMU (`--instructions emulated`), for every test of the suites
# `make bench` and the demo measure: ProfileSuite (one thread,
# concurrentPerform, a task group, an allocating test, two threads; scale
# 0.05), the demo's LensPerfTests and NightlySuite.
#
#   scripts/measure-exact-counts.sh [PROCESSES] [SIMULATED]
#
# Prints, per test and count, the values seen in each way of running and
# whether they are one value everywhere, and the spread of the instructions
# each counting engine counted, under the CPU and the load average.
# BUSY=1 keeps one core busy meanwhile; STROBE=path picks the strobe binary
# that reads the results (default: the lean release build). Exits 1 when a
# count differs anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
# SwiftPM with one environment for every call (scripts/swift.sh).
swift_script="$PWD/scripts/swift.sh"
swift() { bash "$swift_script" "$@"; }
processes=${1:-10}
simulated=${2:-3}
strobe=${STROBE:-Tools/.build-lean/release/strobe}
[ -x "$strobe" ] || { echo "measure-exact-counts: $strobe is not built (make strobe-lean)" >&2; exit 2; }
swift build -c release --product ProfileSuite >/dev/null
swift build -c release --product LensPerfTests >/dev/null
swift build -c release --package-path Examples/NightlySuite --product NightlyPerf >/dev/null
bin=$(swift build -c release --show-bin-path)
nightly=$(swift build -c release --package-path Examples/NightlySuite --show-bin-path)/NightlyPerf
work=out/exact-counts
rm -rf "$work"
mkdir -p "$work"
source scripts/measure-common.sh
echo "$(machine_line "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)")"

# run WAY INDEX SUITE-NAME COMMAND...: one process, its counts appended to
# $work/counts as "WAY SUITE/TEST/METRIC VALUE" lines, separated by tabs.
run() {
    local way=$1 index=$2 name=$3
    shift 3
    local dir="$work/$name-$way-$index"
    "$@" --results-dir "$dir" >"$dir.log" 2>&1 || { echo "measure-exact-counts: $name ($way) failed:" >&2; tail -5 "$dir.log" >&2; exit 1; }
    "$strobe" results export "$dir"/*.strobe-results --format csv \
        | awk -F, -v way="$way" -v suite="$name" '
            $3 ~ /\/(allocations|allocations\.bytes|allocations\.remaining|retains|releases|instructions)$/ {
                print way "\t" suite "/" $3 "\t" $NF }' >>"$work/counts"
}

: >"$work/counts"
for way in native profiled simulated emulated; do
    case $way in
    native | profiled) count=$processes iterations=20 ;;
    *) count=$simulated iterations=3 ;;
    esac
    flags=()
    case $way in
    profiled) flags=(--profile) ;;
    simulated) flags=(--instructions simulated) ;;
    emulated) flags=(--instructions emulated) ;;
    esac
    for index in $(seq 1 "$count"); do
        run "$way" "$index" ProfileSuite env PROFILE_SUITE_SCALE=0.05 "$bin/ProfileSuite" --iterations "$iterations" \
            "${flags[@]}"
        run "$way" "$index" LensPerfTests "$bin/LensPerfTests" --iterations "$iterations" "${flags[@]}"
        run "$way" "$index" NightlySuite "$nightly" --iterations "$iterations" "${flags[@]}"
    done
done

echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$processes native processes of 20 iterations, as many with --profile; $simulated of 3 iterations under callgrind and QEMU each"
python3 - "$work/counts" <<'EOF'
import collections, sys
seen = collections.defaultdict(lambda: collections.defaultdict(collections.Counter))
spreads = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    way, metric, value = line.rstrip("\n").split("\t")
    if metric.endswith("/instructions"):
        spreads[metric][way].append(float(value))
    else:
        seen[metric][way][float(value)] += 1
ways = ["native", "profiled", "simulated", "emulated"]
differ = 0
print("%-58s %-9s %s" % ("suite/test/count", "repeats", "values (iterations) per way"))
for metric in sorted(seen):
    values = set(v for way in seen[metric] for v in seen[metric][way])
    same = len(values) == 1
    differ += not same
    text = "; ".join("%s %s" % (way, ", ".join("%g (%d)" % (v, n) for v, n in sorted(seen[metric][way].items())))
                     for way in ways if way in seen[metric])
    print("%-58s %-9s %s" % (metric[:58], "yes" if same else "NO", text))
print("%d of %d counts repeat exactly in every iteration of every way" % (len(seen) - differ, len(seen)))
print()
print("instructions per iteration: the median, and the spread (largest over smallest, minus 1) per engine")
for metric in sorted(spreads):
    text = "; ".join("%s %d, spread %.4f%% (%d instructions)" % (
        way, sorted(values)[len(values) // 2], (max(values) / min(values) - 1) * 100 if min(values) > 0 else 0,
        max(values) - min(values)) for way, values in sorted(spreads[metric].items()))
    print("%-58s %s" % (metric[:58], text))
sys.exit(1 if differ else 0)
EOF
