#!/usr/bin/env bash
# Runs a command while a second one runs beside it, and fails when either
# fails.
#
#   scripts/beside.sh LABEL 'BACKGROUND COMMAND' -- COMMAND [ARGUMENTS...]
#
# `make test` runs the tools' test build beside the SDK's (each leaves a core
# idle while one large module compiles, which the other takes), then the
# tools' tests beside the SDK's (which wait on children and clocks for much
# of their run). The background command runs
# in a session of its own, its output kept in a log: its last lines are
# printed when it succeeds, the whole log when it fails. When COMMAND fails,
# the background command and every process it started are stopped.
set -uo pipefail
if [ $# -lt 4 ] || [ "$3" != "--" ]; then
    echo "usage: $0 LABEL 'BACKGROUND COMMAND' -- COMMAND [ARGUMENTS...]" >&2
    exit 64
fi
label=$1
background=$2
shift 3
log=$(mktemp)
trap 'rm -f "$log"' EXIT
started=$(date +%s)
setsid bash -c "$background" >"$log" 2>&1 &
pid=$!
status=0
"$@" || status=$?
if [ "$status" -ne 0 ]; then
    kill -TERM -- "-$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    echo "beside: stopped $label, since the command beside it failed (exit status $status)" >&2
    exit "$status"
fi
background_status=0
wait "$pid" || background_status=$?
if [ "$background_status" -ne 0 ]; then
    cat "$log"
    echo "beside: $label failed (exit status $background_status)" >&2
    exit 1
fi
echo "== $label, beside it ($(( $(date +%s) - started )) s in all):"
tail -n 3 "$log"
