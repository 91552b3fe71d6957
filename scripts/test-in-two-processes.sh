#!/usr/bin/env bash
# Runs one package's tests as two `swift test` processes at once: the test
# targets matching PATTERN in one, every other in the second.
#
#   scripts/test-in-two-processes.sh PATTERN swift test --skip-build [OPTIONS...]
#
# Suites that use state of the whole process (the `.processWide` trait) run
# one at a time inside a process, so a package's run lasts at least as long
# as their chain. Two processes have two chains, one per core. Each
# process's output is kept apart and printed whole when both have ended;
# the run fails when either fails.
set -uo pipefail
if [ $# -lt 2 ]; then
    echo "usage: $0 PATTERN swift test [OPTIONS...]" >&2
    exit 64
fi
pattern="$1"
shift
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
"$@" --filter "$pattern" >"$logs/first" 2>&1 &
first=$!
# The second reads the same build directory while the first holds its lock.
"$@" --ignore-lock --skip "$pattern" >"$logs/second" 2>&1 &
second=$!
wait "$first"
first_status=$?
wait "$second"
second_status=$?
echo "== tests matching $pattern (exit $first_status)"
cat "$logs/first"
echo "== every other test (exit $second_status)"
cat "$logs/second"
if [ "$first_status" -ne 0 ] || [ "$second_status" -ne 0 ]; then
    echo "test-in-two-processes: failed (tests matching $pattern: exit $first_status; the rest: exit $second_status)" >&2
    exit 1
fi
