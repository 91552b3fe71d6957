#!/usr/bin/env bash
# `swift` as every script and make target here runs it: with one fixed
# environment, so that SwiftPM reads each package's manifests once.
#
# SwiftPM keeps one compiled manifest per package and keys it on the whole
# environment of the call (manifests may read it). Any variable that differs
# from the last call (make's MAKELEVEL, a test's STROBE_* setting, PWD)
# compiles every manifest of the package again: 26 for the tools, 14-28 s
# of a build that has nothing to do (Intel Xeon, family 6 model 207, load
# 2-4). So the calls here see only what a build needs, always the same:
# PATH, HOME, TMPDIR, the locale, proxies when set, and fixed hashing.
#
# Fixed hashing (SWIFT_DETERMINISTIC_HASHING=1): SwiftPM writes a package's
# enabled traits onto the compiler's command line in the order of a Set,
# which Swift seeds anew in every process; with two traits on (the SDK's
# bridges), each time it reads the manifest again the order may flip, and
# every module of the package compiles again (50 s of a debug build).
#
# Tests that need settings of their own run their test bundle directly
# (`BUNDLE.xctest --testing-library swift-testing`), not through here.
#
# STROBE_WHOLE_MODULE=1 compiles each module of a debug build whole, on two
# threads (-wmo -num-threads 2), as a release build compiles it: each file's
# declarations are type-checked once per module rather than once per batch
# of files. A cold build takes three quarters of the time (the tools' test
# build 229 s against 310 s, the SDK's 78 s against 96 s; Intel Xeon, family
# 6 model 207, load 2-3), and an edit recompiles its whole module, so CI
# sets it (.ci/run) and a checkout one works in does not. Every build of a
# run must see the same setting: SwiftPM compiles a build folder again for
# other flags.
set -euo pipefail
keep=(PATH HOME TMPDIR LANG LC_ALL TERM http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY)
settings=(SWIFT_DETERMINISTIC_HASHING=1)
for name in "${keep[@]}"; do
    if [ -n "${!name:-}" ]; then settings+=("$name=${!name}"); fi
done
arguments=("$@")
if [ "${STROBE_WHOLE_MODULE:-0}" = 1 ] && [ "${1:-}" = build ]; then
    release=0
    for argument in "$@"; do
        case $argument in release | --configuration=release | -c=release) release=1 ;; esac
    done
    if [ "$release" -eq 0 ]; then arguments+=(-Xswiftc -wmo -Xswiftc -num-threads -Xswiftc 2); fi
fi
exec env -i "${settings[@]}" swift "${arguments[@]}"
