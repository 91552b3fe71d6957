#!/usr/bin/env bash
# The demo as a user meets it, RUNS times over (default 10): `scripts/demo.sh`
# whole, with its defaults, each run's output kept in out/demo-runs/N.log.
# Per run it prints the compare step's rounds, seconds and verdict, and what
# the history step's `strobe trend` said of the rebuilt curve that lands on
# night 11: the change found at night 11, found a night early or late, only a
# "possible change", or nothing. With BUSY=1 a busy loop keeps one core
# occupied for the whole measurement, as a parallel build on a CI runner
# would. The CPU and the load average at the end of each run go beside it.
# Usage: scripts/measure-demo.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
# SwiftPM with one environment for every call (scripts/swift.sh).
swift_script="$PWD/scripts/swift.sh"
swift() { bash "$swift_script" "$@"; }
runs=${1:-10}
logs=out/demo-runs
rm -rf "$logs"
mkdir -p "$logs"
tools_bin=$(swift build -c "${DEMO_TOOLS_CONFIGURATION:-debug}" --package-path Tools --traits Server --show-bin-path)

source scripts/measure-common.sh
machine_line

for run in $(seq 1 "$runs"); do
    log="$logs/$run.log"
    status=0
    bash scripts/demo.sh >"$log" 2>&1 || status=$?
    load=$(cut -d' ' -f1 /proc/loadavg)
    if [ "$status" -ne 0 ]; then
        echo "demo $run: failed with exit status $status (see $log), load $load"
        continue
    fi
    history=out/demo/history
    # Each run's store is kept, so that another strobe can judge the same
    # nights again (strobe trend --history out/demo-runs/N-history/...).
    rm -rf "$logs/$run-history"
    cp -r "$history" "$logs/$run-history"
    "$tools_bin/strobe" trend --history "$history/history.sqlite" --repository "$history/repo" \
        --reference build=reference --metric 'wall|lens apply' --format json >"$logs/$run-trend.json" 2>/dev/null || true
    "$tools_bin/strobe" trend --history "$history/history.sqlite" --repository "$history/repo" \
        --reference build=reference --metric 'instructions$' --format json >"$logs/$run-counted.json" 2>/dev/null || true
    python3 - "$log" "$logs/$run-trend.json" "$run" "$load" "$logs/$run-counted.json" <<'PY'
import json, re, sys
log, trend_path, run, load, counted_path = sys.argv[1:]
def counted_steps(path):
    try:
        counted = json.load(open(path))
    except Exception as error:
        return f"unreadable ({error})"
    lines = []
    for change in counted.get("changes", []):
        if change.get("test") != "apply lens":
            continue
        commits = change.get("commits") or [""]
        found = re.search(r"night (\d+)", commits[0])
        line = "night " + (found.group(1) if found else "?") + ", the " + str((change.get("step") or {}).get("cause")) + "'s"
        functions = change.get("functionsThatStepped") or []
        if functions:
            line += ", naming " + str(functions[0].get("function"))
        lines.append(line)
    return "; ".join(lines) or "nothing found"
counted_line = "; instructions: " + counted_steps(counted_path)
text = open(log, errors="replace").read()
# The compare step is the first comparison of the log (the suite's); its
# summary line reads "compare: N rounds in M:SS, ...".
found = re.search(r"compare: (\d+) rounds? in (\d+):(\d\d)", text)
rounds, seconds = ("?", "?") if not found else (found.group(1), int(found.group(2)) * 60 + int(found.group(3)))
verdict = "regression" if "strobe compare found a regression" in text else "no regression"
try:
    trend = json.load(open(trend_path))
except Exception as error:
    print(f"demo {run}: compare {seconds} s, {rounds} rounds, {verdict}; trend unreadable ({error}); load {load}")
    sys.exit(0)
def night(change):
    commits = change.get("commits") or []
    found = re.search(r"night (\d+)", commits[0]) if commits else None
    return int(found.group(1)) if found else None
lens = [c for c in trend.get("changes", []) if c.get("test") == "apply lens"]
nights = sorted({night(c) for c in lens if night(c) is not None})
causes = sorted({str((c.get("step") or {}).get("cause")) for c in lens})
possible = [n for n in trend.get("notes", []) if n.startswith("possible change") and "apply lens" in n]
# Where the instructions stepped and no time did: each note's changes of
# the times there.
untold = [n.split("beyond its noise: ", 1)[-1].split(";")[0] for n in trend.get("notes", [])
          if "/apply lens" in n and "its counted work stepped" in n]
# Every series of the test told once, at night 11, the code's: anything
# else (a second night, a series told twice, the machine's) is said.
told = {}
for c in lens:
    told[c.get("metric")] = told.get(c.get("metric"), 0) + 1
if nights == [11] and causes == ["code"] and all(count == 1 for count in told.values()):
    history = f"night 11 the code's ({len(lens)} series)"
    if untold:
        history += "; the others at the counted step: " + untold[0]
elif nights:
    history = ("changes at night " + ", ".join(map(str, nights)) + " (" + ", ".join(causes) + "; "
               + ", ".join(f"{m} ×{n}" for m, n in sorted(told.items())) + ")")
elif possible:
    history = "a possible change only: " + possible[0]
elif untold:
    history = "no time step; at the counted step: " + untold[0]
else:
    history = "nothing found"
print(f"demo {run}: compare {seconds} s, {rounds} rounds, {verdict}; history: {history}{counted_line}; load {load}")
PY
done
