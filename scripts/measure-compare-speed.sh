#!/usr/bin/env bash
# How fast `strobe compare` decides with its defaults on a real suite that is
# not the demo: Tests/Fixtures/AdoptingApp's YAML suite (decode, encode,
# untyped load of a 330 KB document) built against Yams 5.0.1 (baseline) and
# Yams 6.2.2 (candidate), a real dependency upgrade. RUNS A/B comparisons and
# RUNS A/A comparisons (5.0.1 against itself), each with no policy; prints
# per comparison the verdicts, rounds and seconds, and the CPU. COMPARE_ARGS
# adds options to every comparison (for example "--iterations 3"). With
# BUSY=1 a busy loop keeps one core occupied for the whole measurement, as a
# parallel build on a CI runner would; each line gives the load average at
# its end. STROBE=PATH uses that `strobe` instead of building one in release.
# Usage: scripts/measure-compare-speed.sh [RUNS]   (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
# SwiftPM with one environment for every call (scripts/swift.sh).
swift_script="$PWD/scripts/swift.sh"
swift() { bash "$swift_script" "$@"; }
runs=${1:-3}
max_time=${MAX_TIME:-180s}
work=out/compare-speed
# The builds are kept between runs; the comparisons start afresh.
rm -rf "$work/runs"
mkdir -p "$work/runs"
root=$(pwd)

# Two builds of the same suite: the fixture as it is (Yams 5.0.1) and a copy
# pinned to Yams 6.2.2.
build() { # NAME YAMS_VERSION
    local dir="$work/$1"
    rm -rf "$dir/Sources"
    mkdir -p "$dir"
    cp -R Tests/Fixtures/AdoptingApp/Package.swift Tests/Fixtures/AdoptingApp/Sources "$dir/"
    sed -i "s|path: \"../../..\"|path: \"$root\"|; s|exact: \"5.0.1\"|exact: \"$2\"|" "$dir/Package.swift"
    swift build -c release --package-path "$dir" --product YAMLPerfTests >/dev/null
    echo "$(swift build -c release --package-path "$dir" --show-bin-path)/YAMLPerfTests"
}
yams5=$(build yams5 5.0.1)
yams6=$(build yams6 6.2.2)
if [ -n "${STROBE:-}" ]; then
    strobe=$STROBE
else
    swift build -c release --package-path Tools --traits Server --product strobe >/dev/null
    strobe="$(swift build -c release --package-path Tools --traits Server --show-bin-path)/strobe"
fi
source scripts/measure-common.sh
machine_line "max time $max_time"

compare() { # KIND RUN BASELINE CANDIDATE
    local dir="$work/runs/${1//\//}-$2"
    local start end status=0
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    "$strobe" compare --baseline "$3" --candidate "$4" --max-time "$max_time" ${COMPARE_ARGS:-} \
        --results-dir "$dir" --format json --output "$dir.json" >"$dir.log" 2>&1 || status=$?
    end=$(date +%s.%N)
    # When the counts were told: the elapsed time of the counting processes'
    # line, or of the round or look, that came before the first line telling
    # a count changed or unchanged.
    local told
    told=$(awk '/^compare: (round [0-9]+|instructions counted),/ {t = $4}
        /(changed|unchanged) (at look|before round)/ {print t; exit}' "$dir.log")
    python3 - "$dir.json" "$dir.log" "$1" "$2" "$status" "$start" "$end" "$(cut -d' ' -f1 /proc/loadavg)" "${told:-never}" <<'PY'
import json, re, sys
path, log, kind, run, status, start, end, load, told = sys.argv[1:]
seconds = float(end) - float(start)
rounds = "?"
for line in open(log, errors="replace"):
    found = re.search(r"compare: (\d+) rounds in", line)
    if found:
        rounds = found.group(1)
try:
    report = json.load(open(path))
except Exception as error:
    print(f"{kind} {run}: exit {status}, {seconds:.0f} s, rounds {rounds}, no report ({error})")
    sys.exit(0)
gated = [row for row in report.get("rows", []) if row.get("gates")]
verdicts = {}
for row in gated:
    verdicts.setdefault(row.get("verdict", "?"), []).append(row.get("name", "?"))
summary = ", ".join(f"{k} {len(v)}" for k, v in sorted(verdicts.items()))
counted = next((line.strip() for line in open(log, errors="replace") if line.startswith("instructions:")), "")
print(f"{kind} {run}: exit {status}, {seconds:.0f} s, {rounds} rounds, load {load}, counts told at {told}; "
      f"gated metrics: {summary}")
if counted:
    print(f"    {counted}")
for name in verdicts.get("regression", []) + verdicts.get("improvement", []):
    row = next(r for r in gated if r.get("name") == name)
    print(f"    {row.get('verdict')}: {name}")
PY
}
for run in $(seq 1 "$runs"); do
    compare "A/B" "$run" "$yams5" "$yams6"
    compare "A/A" "$run" "$yams5" "$yams5"
done
