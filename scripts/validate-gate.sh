#!/usr/bin/env bash
# Measures the regression gate on this machine, as a user would see it:
#   - RUNS comparisons of the lens suite as it is (baseline) with a build that
#     has a regression (candidate; REGRESSION=rebuilt-curve by default, the
#     demo's, or scalar): is the lens-apply regression caught, and is
#     anything flagged on the unchanged `capture frame` test?
#   - RUNS comparisons of the vectorized build with itself: is any regression
#     (or improvement) raised?
# Each comparison is one `strobe compare` with the demo's policy and budget.
#
#   scripts/validate-gate.sh [RUNS]        (default 10; MAX_TIME=150s)
#
# It prints the CPU, one line per comparison and the rates at the end. Only
# metrics that gate count as flagged: the report-only rows (resource counts,
# and whatever the policy sets `gate: false`) are listed apart, since a moved
# report-only row fails no comparison. Expect it to take about
# 2 × RUNS × MAX_TIME.
set -euo pipefail
cd "$(dirname "$0")/.."
# SwiftPM with one environment for every call (scripts/swift.sh).
swift_script="$PWD/scripts/swift.sh"
swift() { bash "$swift_script" "$@"; }

runs=${1:-10}
max_time=${MAX_TIME:-150s}
iterations=${ITERATIONS:-5}
regression=${REGRESSION:-rebuilt-curve}
policy=Examples/LensPerfTests/strobe-policy.yml
out=out/validate-gate
rm -rf "$out"
mkdir -p "$out"

swift build -c release --product LensPerfTests >/dev/null
swift build -c release --package-path Tools --traits Server --product strobe >/dev/null
# A copy of the binaries, so that builds during the (long) run change nothing.
mkdir -p "$out/bin"
cp "$(swift build -c release --show-bin-path)"/LensPerfTests "$out/bin/"
cp "$(swift build -c release --package-path Tools --traits Server --show-bin-path)"/strobe "$out/bin/"
bin=$out/bin
cpu="$(lscpu | sed -n 's/^Model name: *//p' | head -1), family $(lscpu | sed -n 's/^CPU family: *//p' | head -1) model $(lscpu | sed -n 's/^Model: *//p' | head -1), $(nproc) cores"
echo "CPU: $cpu; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "regression build: LENS_KERNEL=$regression"

# judge REPORT.json KIND: prints "caught=0|1 wrong=N rounds=N reported=N ..."
# (wrong: gated rows flagged that should not be; reported: report-only rows
# that moved, which fail nothing and are not counted)
judge() {
    python3 - "$1" "$2" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
kind = sys.argv[2]
rows = [r for r in report["rows"] if r["gates"]]
flagged = lambda r: r["verdict"] in ("regression", "improvement")
reported = [r["name"] + ":" + r["verdict"] for r in report["rows"] if not r["gates"] and flagged(r)]
caught = any(r["verdict"] == "regression" and r["name"].startswith("apply lens/") for r in rows)
if kind == "regression":
    wrong = [r["name"] + ":" + r["verdict"] for r in rows if r["name"].startswith("capture frame/") and flagged(r)]
    wrong += [r["name"] + ":" + r["verdict"] for r in rows if r["name"].startswith("apply lens/") and r["verdict"] == "improvement"]
else:
    wrong = [r["name"] + ":" + r["verdict"] for r in rows if flagged(r)]
look = report.get("look") or {}
print(f"caught={int(caught)} wrong={len(wrong)} rounds={look.get('rounds', 0)} reported={len(reported)} {' '.join(wrong)}")
PY
}

caught=0
wrong_regression=0
wrong_self=0
for kind in regression self; do
    for run in $(seq 1 "$runs"); do
        dir="$out/$kind-$run"
        candidate_kernel=$regression
        [ "$kind" = self ] && candidate_kernel=vectorized
        start=$(date +%s)
        status=0
        "$bin/strobe" compare \
            --baseline "env LENS_KERNEL=vectorized $bin/LensPerfTests" \
            --candidate "env LENS_KERNEL=$candidate_kernel $bin/LensPerfTests" \
            --iterations "$iterations" --max-time "$max_time" --policy "$policy" --results-dir "$dir" \
            --format json --output "$dir.json" 2>"$dir.log" || status=$?
        seconds=$(( $(date +%s) - start ))
        if [ "$status" -ge 2 ]; then echo "$kind $run: strobe compare failed ($status), see $dir.log"; exit "$status"; fi
        verdict=$(judge "$dir.json" "$kind")
        echo "$kind $run: exit $status, ${seconds}s, $verdict"
        case "$verdict" in *"caught=1"*) [ "$kind" = regression ] && caught=$((caught + 1)) ;; esac
        case "$verdict" in
            *"wrong=0"*) ;;
            *) if [ "$kind" = regression ]; then wrong_regression=$((wrong_regression + 1)); else wrong_self=$((wrong_self + 1)); fi ;;
        esac
    done
done
echo
echo "on $cpu; load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-48s %s of %s\n' "lens-apply regression ($regression) caught:" "$caught" "$runs" \
    "comparisons flagging an unchanged test:" "$wrong_regression" "$runs" \
    "self-comparisons raising any change:" "$wrong_self" "$runs"
