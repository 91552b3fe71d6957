#!/usr/bin/env bash
# `make test-adoption`: an app that adopts Strobe resolves only what it uses.
# Tests/Fixtures/AdoptingApp pins Yams 5.0.1 (the tools package builds with
# Yams 5 or 6) and depends on the Strobe and StrobePerf products by path. It
# must resolve, build and run one perf test; its resolution must hold nothing
# but Yams (its own) and the strobe package, which itself adds no package:
# no YAML, database, HTTP-server, SwiftNIO or argument-parsing package of the
# tools reaches it.
set -euo pipefail
cd "$(dirname "$0")/.."
# SwiftPM with one environment for every call (scripts/swift.sh).
swift_script="$PWD/scripts/swift.sh"
swift() { bash "$swift_script" "$@"; }
app=Tests/Fixtures/AdoptingApp
swift package --package-path "$app" resolve
swift package --package-path "$app" show-dependencies --format json > "$app/.build/dependencies.json"
python3 - "$app/.build/dependencies.json" "$(pwd)" <<'PY'
import json, os, sys
tree = json.load(open(sys.argv[1]))
root = os.path.realpath(sys.argv[2])
found = []
def walk(node, depth):
    for dependency in node.get("dependencies", []):
        found.append((depth, dependency["identity"], dependency.get("url", ""), dependency.get("version", "")))
        walk(dependency, depth + 1)
walk(tree, 0)
allowed = {"yams"}
problems = []
for depth, identity, url, version in found:
    is_strobe = os.path.realpath(url) == root
    if is_strobe or identity in allowed:
        if identity == "yams" and version != "5.0.1":
            problems.append(f"yams resolved at {version}, not the pinned 5.0.1")
        continue
    problems.append(f"{identity} ({url} {version}) entered the app's resolution")
if not any(os.path.realpath(url) == root for _, _, url, _ in found):
    problems.append("the strobe package is missing from the resolution")
print("adoption: resolved " + ", ".join(sorted({f"{i} {v}".strip() for _, i, _, v in found})))
if problems:
    print("adoption: FAILED\n  " + "\n  ".join(problems), file=sys.stderr)
    sys.exit(1)
PY
swift build --package-path "$app" --product YAMLPerfTests
output=$(mktemp -d)
trap 'rm -rf "$output"' EXIT
"$(swift build --package-path "$app" --show-bin-path)/YAMLPerfTests" --filter decode --iterations 2 --warmup 0 --results-dir "$output"
count=$(find "$output" -name '*.strobe-results' | wc -l)
if [ "$count" -ne 1 ]; then echo "adoption: expected one results file, found $count" >&2; exit 1; fi
echo "adoption: the app resolved only Yams and strobe, built, and ran a perf test"
