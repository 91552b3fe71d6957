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
# Then `strobe trend --reference build=reference` over each store, and the
# checks: A has no change that is the code's; B has changes of `checksum`
# and `sieve` only, each at night STEP, as the code's, with the commit
# range; nothing else is the code's. Exit status 1 when a check fails.
#
#   bash scripts/nightly-history.sh [OUTPUT_DIR]     # reports kept in OUTPUT_DIR
#   STROBE=Tools/.build/debug/strobe bash scripts/nightly-history.sh
set -euo pipefail
cd "$(dirname "$0")/.."
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
    swift build -c release --package-path Tools --product strobe >/dev/null
    strobe=$(swift build -c release --package-path Tools --show-bin-path)/strobe
fi
cp "$suite_bin" "$work/NightlyPerf-candidate"
cp "$suite_bin" "$work/NightlyPerf-reference"   # the pinned build: never changes

run_history() {
    local name=$1 step=$2
    local repo="$work/$name/repo" store="$work/$name/history.sqlite"
    mkdir -p "$repo"
    git init -q "$repo"
    for night in $(seq 1 "$NIGHTS"); do
        local message="night $night" longer=0
        if [ "$step" -gt 0 ] && [ "$night" -ge "$step" ]; then longer=1; fi
        if [ "$step" -gt 0 ] && [ "$night" -eq "$step" ]; then message="night $night: checksum and sieve loop 10% longer"; fi
        git -C "$repo" -c user.name=Nightly -c user.email=nightly@example.com commit -q --allow-empty -m "$message"
        local sha
        sha=$(git -C "$repo" rev-parse HEAD)
        local sides=(candidate reference)
        if [ $((RANDOM % 2)) -eq 1 ]; then sides=(reference candidate); fi
        for side in "${sides[@]}"; do
            local env_longer=0
            if [ "$side" = candidate ]; then env_longer=$longer; fi
            GITHUB_SHA=$sha NIGHTLY_LONGER_LOOPS=$env_longer "$work/NightlyPerf-$side" \
                --results-dir "$work/$name/results/night$night-$side" --iterations "$ITERATIONS" \
                --tag build="$side" --tag branch=main --run-id "$name-night$night-$side" >/dev/null
        done
        "$strobe" history add "$work/$name/results/night$night-candidate" "$work/$name/results/night$night-reference" \
            --history "$store" >/dev/null
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
echo "history B: checksum and sieve 10% more work from night $STEP"
run_history B "$STEP"

python3 - "$out" "$STEP" <<'PY'
import json, sys
out, step = sys.argv[1], int(sys.argv[2])
failed = False
def show(name, report):
    print(f"{name}: {report['runCount']} runs + {report['referenceRunCount']} reference runs, {len(report['series'])} series, "
          f"{len(report['changes'])} changes")
    for c in report['changes']:
        lo, hi = (c['change']['lower'] - 1) * 100, (c['change']['upper'] - 1) * 100
        print(f"  {c['test']}/{c['metric']}: {(c['change']['ratio'] - 1) * 100:+.1f}% [{lo:+.1f}, {hi:+.1f}] at position "
              f"{c['firstAfter']['slot'] + 1}, {c['status']}, the {c['cause']}'s ({c['reason']}), "
              f"{c['lastBefore']['commit'][:7]}..{c['firstAfter']['commit'][:7]}")
a = json.load(open(f"{out}/A.json"))
show("A", a)
code_a = [c for c in a['changes'] if c['cause'] == 'code']
if code_a:
    failed = True
    print(f"FAIL A: {len(code_a)} changes reported as the code's")
else:
    print("ok A: no change reported as the code's")
b = json.load(open(f"{out}/B.json"))
show("B", b)
before, after = open(f"{out}/B.step-commits").read().split()
code_b = [c for c in b['changes'] if c['cause'] == 'code']
tests = sorted({c['test'] for c in code_b})
wrong = [c for c in code_b if c['test'] not in ('checksum', 'sieve') or c['firstAfter']['slot'] != step - 1
         or c['lastBefore']['commit'] != before or c['firstAfter']['commit'] != after]
metrics = sorted(f"{c['test']}/{c['metric']}" for c in code_b)
if tests == ['checksum', 'sieve'] and not wrong:
    print(f"ok B: the code's changes are checksum and sieve ({', '.join(metrics)}), all at night {step}, "
          f"range {before[:10]}..{after[:10]}")
else:
    failed = True
    print(f"FAIL B: the code's changes are in {tests}; {len(wrong)} elsewhere or at another night")
sys.exit(1 if failed else 0)
PY
echo "reports: $out/{A,B}.{txt,json,html}"
