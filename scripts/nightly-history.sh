#!/usr/bin/env bash
# Real nightly histories on this machine, judged by `strobe trend`.
#
# Builds Examples/NightlySuite (five CPU-bound tests) once in release; a copy
# of the binary is the pinned reference build. Then, for each of two
# histories, NIGHTS nights (default 30): a commit in a fresh git repository
# (the night's "checkout"), one process of the build (--tag build=candidate)
# and one of the reference (--tag build=reference), in random order, both
# tagged with the night's commit, added to a fresh SQLite store.
#   A: the code never changes.
#   B: from night STEP (default 16) the build runs with NIGHTLY_LONGER_LOOPS=1:
#      `checksum` and `sieve` do 10% more work (the commit says so).
#   C (with COUNTED=1): from night STEP `checksum` alone does 2% more work
#      (NIGHTLY_CHECKSUM_PERCENT=2), a change wall time cannot see here.
# With COUNTED=1 each night also runs the build once more with
# --instructions COUNTING (simulated, the default, or emulated), whose
# instruction counts join the night's runs; history B is then skipped.
# Then `strobe trend --reference build=reference` over each store, and the
# checks: A has no change that is the code's; B has changes of `checksum`
# and `sieve` only, each at night STEP, as the code's, with the commit
# range; C has the code's changes in `checksum` only (its instructions among
# them), at night STEP; nothing else is the code's. Exit status 1 when a
# check fails.
#
#   bash scripts/nightly-history.sh [OUTPUT_DIR]     # reports kept in OUTPUT_DIR
#   STROBE=Tools/.build/debug/strobe bash scripts/nightly-history.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# SwiftPM with one environment for every call (scripts/swift.sh).
swift_script="$PWD/scripts/swift.sh"
swift() { bash "$swift_script" "$@"; }
NIGHTS=${NIGHTS:-30}
STEP=${STEP:-16}
ITERATIONS=${ITERATIONS:-5}
out=${1:-.build/nightly-history}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d /tmp/strobe-nightly.XXXXXX)
trap 'rm -rf "$work"' EXIT

echo "CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
swift build -c release --package-path Examples/NightlySuite --product NightlyPerf >/dev/null
suite_bin=$(swift build -c release --package-path Examples/NightlySuite --show-bin-path)/NightlyPerf
# STROBE=PATH uses a strobe already built (the analysis is as fast in debug).
strobe=${STROBE:-}
if [ -z "$strobe" ]; then
    swift build -c release --package-path Tools --traits Server --product strobe >/dev/null
    strobe=$(swift build -c release --package-path Tools --traits Server --show-bin-path)/strobe
fi
cp "$suite_bin" "$work/NightlyPerf-candidate"
cp "$suite_bin" "$work/NightlyPerf-reference"   # the pinned build: never changes

COUNTED=${COUNTED:-0}
COUNTING=${COUNTING:-simulated}

run_history() {
    local name=$1 step=$2 extra_work=${3:-NIGHTLY_LONGER_LOOPS=1}
    local repo="$work/$name/repo" store="$work/$name/history.sqlite"
    mkdir -p "$repo"
    git init -q "$repo"
    for night in $(seq 1 "$NIGHTS"); do
        local message="night $night" longer=0
        if [ "$step" -gt 0 ] && [ "$night" -ge "$step" ]; then longer=1; fi
        if [ "$step" -gt 0 ] && [ "$night" -eq "$step" ]; then message="night $night: $extra_work"; fi
        git -C "$repo" -c user.name=Nightly -c user.email=nightly@example.com commit -q --allow-empty -m "$message"
        local sha
        sha=$(git -C "$repo" rev-parse HEAD)
        local sides=(candidate reference)
        if [ $((RANDOM % 2)) -eq 1 ]; then sides=(reference candidate); fi
        local work_env=()
        if [ "$longer" = 1 ]; then work_env=("$extra_work"); fi
        for side in "${sides[@]}"; do
            local side_env=()
            if [ "$side" = candidate ]; then side_env=("${work_env[@]}"); fi
            env GITHUB_SHA="$sha" "${side_env[@]}" "$work/NightlyPerf-$side" \
                --results-dir "$work/$name/results/night$night-$side" --iterations "$ITERATIONS" \
                --tag build="$side" --tag branch=main --run-id "$name-night$night-$side" >/dev/null
        done
        local counted=()
        if [ "$COUNTED" = 1 ]; then
            env GITHUB_SHA="$sha" "${work_env[@]}" "$work/NightlyPerf-candidate" \
                --results-dir "$work/$name/results/night$night-counted" --iterations 1 --warmup 1 \
                --instructions "$COUNTING" --tag build=candidate --tag branch=main \
                --run-id "$name-night$night-counted" >/dev/null
            counted=("$work/$name/results/night$night-counted")
        fi
        "$strobe" history add "$work/$name/results/night$night-candidate" "$work/$name/results/night$night-reference" \
            "${counted[@]}" --history "$store" >/dev/null
        printf '.'
    done
    echo
    "$strobe" trend --history "$store" --repository "$repo" --reference build=reference --format json --output "$out/$name.json" >/dev/null
    "$strobe" trend --history "$store" --repository "$repo" --reference build=reference --format html --output "$out/$name.html" >/dev/null
    "$strobe" trend --history "$store" --repository "$repo" --reference build=reference --build-command \
        'swift build -c release --package-path Examples/NightlySuite' --suite-executable 'Examples/NightlySuite/.build/release/NightlyPerf' \
        > "$out/$name.txt"
    git -C "$repo" rev-parse "HEAD~$((NIGHTS - step + 1))" "HEAD~$((NIGHTS - step))" > "$out/$name.step-commits" 2>/dev/null || true
}

echo "history A: the code never changes"
run_history A 0
if [ "$COUNTED" = 1 ]; then
    echo "history C: checksum 2% more work from night $STEP, each night also counted ($COUNTING)"
    run_history C "$STEP" NIGHTLY_CHECKSUM_PERCENT=2
else
    echo "history B: checksum and sieve 10% more work from night $STEP"
    run_history B "$STEP"
fi

python3 - "$out" "$STEP" "$COUNTED" <<'PY'
import json, sys
out, step, counted = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
failed = False
def show(name, report):
    print(f"{name}: {report['runCount']} runs + {report['referenceRunCount']} reference runs, {len(report['series'])} series, "
          f"{len(report['changes'])} changes")
    for c in report['changes']:
        step = c['step']['step']
        change = step['change']
        lo, hi = (change['lower'] - 1) * 100, (change['upper'] - 1) * 100
        status = next(iter(step['status']))
        print(f"  {c['test']}/{c['metric']}: {(change['ratio'] - 1) * 100:+.1f}% [{lo:+.1f}, {hi:+.1f}] at position "
              f"{c['firstAfter']['slot'] + 1}, {status}, the {c['step']['cause']}'s ({c['step']['reason']}), "
              f"{c['lastBefore']['commit'][:7]}..{c['firstAfter']['commit'][:7]}")
a = json.load(open(f"{out}/A.json"))
show("A", a)
code_a = [c for c in a['changes'] if c['step']['cause'] == 'code']
if code_a:
    failed = True
    print(f"FAIL A: {len(code_a)} changes reported as the code's")
else:
    print("ok A: no change reported as the code's")
name, expected = ("C", ['checksum']) if counted else ("B", ['checksum', 'sieve'])
b = json.load(open(f"{out}/{name}.json"))
show(name, b)
before, after = open(f"{out}/{name}.step-commits").read().split()
code_b = [c for c in b['changes'] if c['step']['cause'] == 'code']
tests = sorted({c['test'] for c in code_b})
wrong = [c for c in code_b if c['test'] not in expected or c['firstAfter']['slot'] != step - 1
         or c['lastBefore']['commit'] != before or c['firstAfter']['commit'] != after]
metrics = sorted(f"{c['test']}/{c['metric']}" for c in code_b)
missing = counted and 'checksum/instructions' not in metrics
if tests == expected and not wrong and not missing:
    print(f"ok {name}: the code's changes are {' and '.join(expected)} ({', '.join(metrics)}), all at night {step}, "
          f"range {before[:10]}..{after[:10]}")
else:
    failed = True
    print(f"FAIL {name}: the code's changes are in {tests} ({', '.join(metrics)}); {len(wrong)} elsewhere or at "
          f"another night")
sys.exit(1 if failed else 0)
PY
echo "reports: $out/{A,B,C}.{txt,json,html} (B without COUNTED=1, C with it)"
