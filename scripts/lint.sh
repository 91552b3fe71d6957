#!/usr/bin/env bash
# `make lint`: every Swift file of both packages, checked against the
# committed .swift-format configuration (4-space indent, 120 columns). A
# violation fails the run; `scripts/lint.sh --fix` formats the files in place.
#
# Two rules of the defaults are off: ReplaceForEachWithForLoop
# (SpanAttributes can only be walked with forEach) and
# OnlyOneTrailingClosureArgument (the SDK's recording paths pass a closure
# argument and a trailing body in several places, where the rewrite it asks
# for reads worse). Single exceptions are marked where they are, with
# `// swift-format-ignore: RULE` and a reason.
#
# It also holds the SDK's public API to its bar: at most 150 public
# declarations in the Strobe module, counted by scripts/count-public-api.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
paths=(Sources Tools/Sources Tests Tools/Tests Examples Benchmarks Package.swift Tools/Package.swift)
if [ "${1:-}" = "--fix" ]; then
    swift format format --in-place --recursive --parallel "${paths[@]}"
fi
swift format lint --strict --recursive --parallel "${paths[@]}"
echo "lint: no violations in $(find "${paths[@]}" -name '*.swift' -not -path '*/.build*' | wc -l) Swift files"
bash scripts/count-public-api.sh --max 150 >/dev/null
echo "lint: $(bash scripts/count-public-api.sh) public declarations in Strobe (at most 150)"
