#!/usr/bin/env bash
# The end-to-end demo behind `make demo`.
set -euo pipefail
cd "$(dirname "$0")/.."

out=out/demo
mkdir -p "$out"

echo "==> Building (release)"
swift build -c release --product LensPipeline
swift build -c release --product strobe
bin=$(swift build -c release --show-bin-path)

echo
echo "==> 1. Recording a trace of the lens pipeline app"
"$bin/LensPipeline" --frames 240 --trace "$out/lens.pftrace"

echo
echo "==> 2. What the trace says"
"$bin/strobe" summarize "$out/lens.pftrace" --frame-budget 16.67ms

echo
echo "Trace: $out/lens.pftrace"
echo "  Open it at https://ui.perfetto.dev (Open trace file) to see each interval beside the thread that ran it."
