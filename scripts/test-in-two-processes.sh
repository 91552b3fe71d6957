#!/usr/bin/env bash
# Runs a package's built tests as two processes at once: the tests matching
# PATTERN in one, every other in the second.
#
#   scripts/test-in-two-processes.sh TEST_BUNDLE PATTERN [SWIFT-TESTING OPTIONS...]
#
# Suites that use state of the whole process (the `.processWide` trait) run
# one at a time inside a process, so a package's run lasts at least as long
# as their chain. Two processes have two chains, one per core. The test
# bundle (`swift build --build-tests` makes it) is run directly with Swift
# Testing's options, not through `swift test`: two `swift test` processes
# at once on one build directory leave it to be rebuilt from scratch.
# Each process's output is kept apart and printed whole when both have
# ended; the run fails when either fails. THEN_IN_SECOND, when set, is a
# command run after the second process, beside the first (which lasts
# longer), and fails the run too.
set -uo pipefail
if [ $# -lt 2 ]; then
    echo "usage: $0 TEST_BUNDLE PATTERN [SWIFT-TESTING OPTIONS...]" >&2
    exit 64
fi
bundle="$1"
pattern="$2"
shift 2
if [ ! -x "$bundle" ]; then
    echo "test-in-two-processes: $bundle is not built (swift build --build-tests)" >&2
    exit 1
fi
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
"$bundle" --testing-library swift-testing --filter "$pattern" "$@" >"$logs/first" 2>&1 &
first=$!
"$bundle" --testing-library swift-testing --skip "$pattern" "$@" >"$logs/second" 2>&1 &
second=$!
then_status=0
if [ -n "${THEN_IN_SECOND:-}" ]; then
    wait "$second"
    second_status=$?
    bash -c "$THEN_IN_SECOND" >"$logs/then" 2>&1 || then_status=$?
fi
wait "$first"
first_status=$?
if [ -z "${THEN_IN_SECOND:-}" ]; then
    wait "$second"
    second_status=$?
fi
echo "== tests matching $pattern (exit $first_status)"
cat "$logs/first"
echo "== every other test (exit $second_status)"
cat "$logs/second"
if [ -n "${THEN_IN_SECOND:-}" ]; then
    echo "== then: $THEN_IN_SECOND (exit $then_status)"
    cat "$logs/then"
fi
if [ "$first_status" -ne 0 ] || [ "$second_status" -ne 0 ] || [ "$then_status" -ne 0 ]; then
    echo "test-in-two-processes: failed (tests matching $pattern: exit $first_status; the rest: exit" \
        "$second_status; then: exit $then_status)" >&2
    exit 1
fi
