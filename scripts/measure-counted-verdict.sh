#!/usr/bin/env bash
# How soon `strobe compare`, with its defaults, ends on a suite whose tests
# are CPU-bound: Examples/NightlySuite (five tests of about 20 ms) built once
# in release, compared RUNS times per kind, each comparison timed from
# outside and its verdict line kept.
#
#   scripts/measure-counted-verdict.sh RUNS "KINDS"
#
# Kinds:
#   ab     `checksum` does 2% more work in the candidate (NIGHTLY_CHECKSUM_PERCENT=2)
#   aa     the build against itself
#   wait   with `handoff` (10 ms of work, then a 10 ms sleep), whose sleep is
#          20% longer in the candidate (NIGHTLY_WAIT_PERCENT=20)
#   wait-aa  the same suite with `handoff`, against itself
#
# BUSY=1 keeps one core busy throughout. STROBE=path picks the strobe binary
# (default: the tools' debug build). Prints a row per comparison and a
# summary per kind, under the CPU and the load average.
set -euo pipefail
cd "$(dirname "$0")/.."
# SwiftPM with one environment for every call (scripts/swift.sh).
swift_script="$PWD/scripts/swift.sh"
swift() { bash "$swift_script" "$@"; }
runs=${1:-10}
kinds=${2:-"ab aa"}
strobe=${STROBE:-Tools/.build/debug/strobe}
[ -x "$strobe" ] || { echo "measure-counted-verdict: $strobe is not built (swift build --package-path Tools)" >&2; exit 2; }
swift build -c release --package-path Examples/NightlySuite --product NightlyPerf >/dev/null
suite=$(swift build -c release --package-path Examples/NightlySuite --show-bin-path)/NightlyPerf
out=out/counted-verdict
rm -rf "$out"
mkdir -p "$out"
# Each side's command: the suite with the side's environment.
command_of() {
    case $1 in
    plain) echo "$suite" ;;
    checksum2) echo "env NIGHTLY_CHECKSUM_PERCENT=2 $suite" ;;
    waiting) echo "env NIGHTLY_WAITING=1 $suite" ;;
    waiting20) echo "env NIGHTLY_WAITING=1 NIGHTLY_WAIT_PERCENT=20 $suite" ;;
    esac
}
. scripts/measure-common.sh
echo "$(machine_line "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)")"
for kind in $kinds; do
    case $kind in
    ab) baseline=plain candidate=checksum2 ;;
    aa) baseline=plain candidate=plain ;;
    wait) baseline=waiting candidate=waiting20 ;;
    wait-aa) baseline=waiting candidate=waiting ;;
    *) echo "measure-counted-verdict: unknown kind $kind" >&2; exit 2 ;;
    esac
    : >"$out/$kind.rows"
    for run in $(seq 1 "$runs"); do
        dir="$out/$kind-$run"
        start=$(date +%s.%N)
        status=0
        "$strobe" compare --baseline "$(command_of "$baseline")" --candidate "$(command_of "$candidate")" \
            --results-dir "$dir" >"$dir.log" 2>&1 || status=$?
        seconds=$(echo "$(date +%s.%N) - $start" | bc)
        headline=$(grep -m1 -E "^([0-9]+ tests?'? |no test|nothing)" "$dir.log" | cut -c1-120 || true)
        flagged=$(grep -m1 -E '^gated metrics: ' "$dir.log" | sed -E 's/^gated metrics: ([0-9]+) regressions?, ([0-9]+) improvements?.*/\1+\2 flagged/' || true)
        printf '%s %d %.1f %s %s | %s\n' "$kind" "$status" "$seconds" "$(cut -d' ' -f1 /proc/loadavg)" "${flagged:-?}" \
            "$headline" \
            | tee -a "$out/$kind.rows"
    done
done
echo
echo "$(machine_line "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)")"
for kind in $kinds; do
    # Sorted by seconds (the third field), then by load (the fourth).
    secs=$(awk '{print $3}' "$out/$kind.rows" | sort -n | tr '\n' ' ')
    loads=$(awk '{print $4}' "$out/$kind.rows" | sort -n | tr '\n' ' ')
    awk -v kind="$kind" -v secs="$secs" -v loads="$loads" '
        { n++; if ($2 == 1) flagged++; if ($3 <= 30) within++ }
        END {
            split(secs, s, " "); split(loads, l, " ")
            printf "%-8s %d runs: exit 1 (a regression) in %d; ended in %.1f–%.1f s (median %.1f), %d within 30 s; load %.2f–%.2f\n",
                kind, n, flagged, s[1], s[n], (s[int((n + 1) / 2)] + s[int(n / 2) + 1]) / 2, within, l[1], l[n]
        }' "$out/$kind.rows"
done
