#!/usr/bin/env bash
# Whether `strobe compare --profile` names the right function, how often it
# names a wrong one, and what profiling costs in time to a verdict, over
# repeated real comparisons:
#   demo      the lens suite (release) against its rebuilt-curve build, with
#             --profile: the first function listed under "apply lens" should
#             be the tone-curve builder, Lens.makeToneCurve().
#   demo-aa   the lens suite against itself with --profile: no function
#             should be named as changed.
#   slower10  Examples/ProfileSuite against the same suite with
#             Document.tokenize doing 10% more work (PROFILE_SUITE_SLOWER):
#             the tokenizer should lead the list.
#   plain     the demo comparison without --profile, for the time to a
#             verdict profiling is compared with.
#   instr2    ProfileSuite scaled to a 3.7 ms test (PROFILE_SUITE_SCALE=0.05)
#             against the same with the tokenizer doing 2% more work, with
#             strobe compare's defaults (instructions from a simulation where
#             the CPU has no counter): a regression on instructions, the
#             tokenizer first.
#   instr2-aa that suite against itself: no metric flagged.
#   short10   the 3.7 ms suite with the tokenizer doing 10% more work, with
#             --profile: the tokenizer first (from the counted instructions
#             per function where a simulation counted them).
#   short10-aa that suite against itself with --profile: no function named.
#   shapes2   the whole 3.7 ms ProfileSuite (one thread, concurrentPerform, a
#             task group, an allocating test, two threads) against the same
#             with the tokenizer doing 2% more work, with compare's defaults:
#             each test's instructions a regression, the tokenizer first in
#             every one of them.
#   shapes2-profile  shapes2 with --profile.
#   shapes-aa that whole suite against itself: no metric of any test flagged.
#   shapes-aa-profile  shapes-aa with --profile: no function named either.
#   serial    ProfileSuite's "parse in two threads" at PROFILE_SUITE_SCALE=0.2
#             against the same with its worker 1 waiting for worker 0
#             (PROFILE_SUITE_SERIAL=1: the same instructions and allocations),
#             with compare's defaults: its critical path a regression, the
#             new wait named.
#   serial-aa that test against itself: nothing flagged, no wait named.
# Each line: the kind, the run, seconds, exit status, the first function
# listed (or the functions named as changed) and the load average at its
# end. With BUSY=1 a busy loop keeps one core occupied throughout.
# STROBE=PATH uses that `strobe` instead of the debug build of Tools/.
# Usage: scripts/measure-profile-attribution.sh [RUNS] [KINDS]
#        (default 10, "demo demo-aa slower10 plain"; instr2 and instr2-aa on request)
set -euo pipefail
cd "$(dirname "$0")/.."
# SwiftPM with one environment for every call (scripts/swift.sh).
swift_script="$PWD/scripts/swift.sh"
swift() { bash "$swift_script" "$@"; }
runs=${1:-10}
kinds=${2:-demo demo-aa slower10 plain}
max_time=${MAX_TIME:-150s}
work=out/profile-attribution
rm -rf "$work"
mkdir -p "$work"
swift build -c release --product LensPerfTests >/dev/null
swift build -c release --product ProfileSuite >/dev/null
bin=$(swift build -c release --show-bin-path)
if [ -n "${STROBE:-}" ]; then
    strobe=$STROBE
else
    swift build --package-path Tools --traits Server --product strobe >/dev/null
    strobe="$(swift build --package-path Tools --traits Server --show-bin-path)/strobe"
fi
source scripts/measure-common.sh
machine_line "max time $max_time"

# The first function listed under TEST and every function named as changed,
# from a JSON report.
functions() { # REPORT TEST
    python3 - "$1" "$2" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
tests = [t for t in report.get("functionChanges", []) if t["test"] == sys.argv[2]]
flagged = [r["name"] for r in report.get("rows", []) if r.get("gates") and r.get("verdict") in ("regression", "improvement")]
print("flagged=" + (",".join(flagged) if flagged else "none"), end=" ")
if not tests:
    print("first=- named=-")
    sys.exit()
functions = tests[0]["functions"]
lead = [f for f in functions if f["changed"] and "explainedBy" not in f]
first = lead[0]["function"] if lead else "-"
named = [f["function"] for f in functions if f["changed"]]
print(f"first={first} named={len(named)}" + (f" ({'; '.join(named)})" if named else ""))
EOF
}

# Every gated metric flagged, then each test's first function (- where none
# is named), from a JSON report.
shapes() { # REPORT
    python3 - "$1" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
flagged = [r["name"] for r in report.get("rows", []) if r.get("gates") and r.get("verdict") in ("regression", "improvement")]
print("flagged=" + (",".join(flagged) if flagged else "none"), end="")
for test in report.get("functionChanges", []):
    lead = [f for f in test["functions"] if f["changed"] and "explainedBy" not in f]
    print(f" | {test['test']}: {lead[0]['function'] if lead else '-'}", end="")
print()
EOF
}

# Every gated metric flagged (with "by-waits" where the waits decided it)
# and the test's critical-path sentence, from a JSON report.
paths() { # REPORT
    python3 - "$1" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
flagged = [r["name"].split("/")[-1] + ("(by-waits)" if r.get("decidedByWaits") else "")
           for r in report.get("rows", []) if r.get("gates") and r.get("verdict") in ("regression", "improvement")]
print("flagged=" + (",".join(flagged) if flagged else "none"), end="")
sentences = [t["criticalPath"] for t in report.get("testVerdicts", []) if t.get("criticalPath")]
print(" | " + ("; ".join(sentences) if sentences else "no path sentence"))
EOF
}

compare() { # KIND RUN TEST BASELINE CANDIDATE [FLAGS...]
    local kind=$1 run=$2 test=$3 baseline=$4 candidate=$5
    shift 5
    local dir="$work/$kind-$run" status=0 start end
    start=$(date +%s.%N)
    "$strobe" compare --baseline "$baseline" --candidate "$candidate" --max-time "$max_time" \
        --results-dir "$dir" --format json --output "$dir.json" "$@" 2>"$dir.log" || status=$?
    end=$(date +%s.%N)
    local found="-"
    if [ -f "$dir.json" ]; then
        case $test in
            "*") found=$(shapes "$dir.json") ;;
            "paths") found=$(paths "$dir.json") ;;
            *) found=$(functions "$dir.json" "$test") ;;
        esac
    fi
    # When a count decided the test: the elapsed time of the round or look that
    # told it.
    local told
    told=$(awk '/^compare: round [0-9]+,/ {t = $4} /changed at (look|round)/ {print t; exit}' "$dir.log")
    [ -n "$told" ] && found="$found told at $told"
    printf '%-9s %2d  %5.1f s  exit %d  %s  load %s\n' "$kind" "$run" "$(echo "$end - $start" | bc)" "$status" \
        "$found" "$(cut -d' ' -f1 /proc/loadavg)"
}

lens=$bin/LensPerfTests
# ProfileSuite's single-threaded test alone.
document="$bin/ProfileSuite --filter ^parse.document\$"
policy=Examples/LensPerfTests/strobe-policy.yml
# Its test of two worker threads alone.
two="$bin/ProfileSuite --filter ^parse.in.two.threads\$"
for run in $(seq 1 "$runs"); do
    for kind in $kinds; do
        case $kind in
            demo)
                compare demo "$run" "apply lens" "env LENS_KERNEL=vectorized $lens" \
                    "env LENS_KERNEL=rebuilt-curve $lens" --policy "$policy" --profile ;;
            demo-aa)
                compare demo-aa "$run" "apply lens" "env LENS_KERNEL=vectorized $lens" \
                    "env LENS_KERNEL=vectorized $lens" --policy "$policy" --profile ;;
            slower10)
                compare slower10 "$run" "parse document" "$document" \
                    "env PROFILE_SUITE_SLOWER=tokenize $document" --profile ;;
            instr2)
                PROFILE_SUITE_SCALE=0.05 compare instr2 "$run" "parse document" "$document" \
                    "env PROFILE_SUITE_SLOWER=tokenize PROFILE_SUITE_FACTOR=1.02 $document" ;;
            instr2-aa)
                PROFILE_SUITE_SCALE=0.05 compare instr2-aa "$run" "parse document" "$document" \
                    "$document" ;;
            short10)
                PROFILE_SUITE_SCALE=0.05 compare short10 "$run" "parse document" "$document" \
                    "env PROFILE_SUITE_SLOWER=tokenize $document" --profile ;;
            short10-aa)
                PROFILE_SUITE_SCALE=0.05 compare short10-aa "$run" "parse document" "$document" \
                    "$document" --profile ;;
            shapes2)
                PROFILE_SUITE_SCALE=0.05 compare shapes2 "$run" "*" "$bin/ProfileSuite" \
                    "env PROFILE_SUITE_SLOWER=tokenize PROFILE_SUITE_FACTOR=1.02 $bin/ProfileSuite" ;;
            shapes2-profile)
                PROFILE_SUITE_SCALE=0.05 compare shapes2-profile "$run" "*" "$bin/ProfileSuite" \
                    "env PROFILE_SUITE_SLOWER=tokenize PROFILE_SUITE_FACTOR=1.02 $bin/ProfileSuite" --profile ;;
            shapes-aa)
                PROFILE_SUITE_SCALE=0.05 compare shapes-aa "$run" "*" "$bin/ProfileSuite" "$bin/ProfileSuite" ;;
            shapes-aa-profile)
                PROFILE_SUITE_SCALE=0.05 compare shapes-aa-profile "$run" "*" "$bin/ProfileSuite" "$bin/ProfileSuite" \
                    --profile ;;
            plain)
                compare plain "$run" "apply lens" "env LENS_KERNEL=vectorized $lens" \
                    "env LENS_KERNEL=rebuilt-curve $lens" --policy "$policy" ;;
            serial)
                PROFILE_SUITE_SCALE=0.2 compare serial "$run" paths "$two" "env PROFILE_SUITE_SERIAL=1 $two" ;;
            serial-aa)
                PROFILE_SUITE_SCALE=0.2 compare serial-aa "$run" paths "$two" "$two" ;;
            *) echo "unknown kind $kind (demo, demo-aa, slower10, plain, instr2, instr2-aa, short10, short10-aa, shapes2, shapes2-profile, shapes-aa, shapes-aa-profile, serial, serial-aa)" >&2; exit 2 ;;
        esac
    done
done
