#!/usr/bin/env bash
# Installs what building and testing Strobe needs, when it is missing:
#   - libprotobuf-c (the C runtime the trace format is serialized with),
#   - valgrind (callgrind counts instructions where the CPU has no counter),
#   - qemu-user (its emulator counts them faster, with no functions),
#   - protoc-c (to check that the generated code is current),
#   - systemtap-sdt-dev (the header behind Strobe's USDT probes) and readelf,
#   - zlib1g-dev (gzip, for `strobe export --format pprof`),
#   - golang-go (`go tool pprof`, which a test reads the pprof export with),
#   - GNU time (the peak memory of the commands `make bench export` runs),
#   - libsqlite3-dev (the run history's SQLite store), libpq-dev (its
#     PostgreSQL store) and libssl-dev (libcrypto's SHA-256, which keys runs
#     without a run id),
#   - chromium (headless, for the test that renders the trend dashboard),
#   - Python's `perfetto` and `protobuf` packages (the official trace schema,
#     used by the tests as an independent decoder) and `opentelemetry-proto`
#     (OTLP's schema, which reads the OTLP export back).
# Safe to run again: it only installs what it cannot find.
#
# `scripts/setup.sh --demo` installs only what `make demo` needs (the C
# libraries the two packages link), not the test tools (protoc-c, the probe
# headers, readelf, the browser, the Python schema).
set -euo pipefail
demo_only=false
if [ "${1:-}" = "--demo" ]; then demo_only=true; fi

need_apt=()
pkg-config --exists libprotobuf-c 2>/dev/null || need_apt+=(libprotobuf-c-dev)
command -v pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
if ! $demo_only; then
    command -v protoc-c >/dev/null 2>&1 || need_apt+=(protobuf-c-compiler)
    # USDT probe notes (sys/sdt.h); without it Strobe builds with no probes.
    if [ ! -f /usr/include/sys/sdt.h ] && [ ! -f "/usr/include/$(uname -m)-linux-gnu/sys/sdt.h" ]; then
        need_apt+=(systemtap-sdt-dev)
    fi
    # readelf, which the tests use to check the probe notes.
    command -v readelf >/dev/null 2>&1 || need_apt+=(binutils)
fi
# Valgrind: its callgrind counts the instructions of a suite run with
# --instructions simulated (the machine needs no hardware counter), and its
# headers let the runner switch the count on and off around measure blocks.
command -v valgrind >/dev/null 2>&1 && [ -f /usr/include/valgrind/callgrind.h ] || need_apt+=(valgrind)
# QEMU's user-mode emulator: with Strobe's plugin it counts the instructions
# of a suite run with --instructions emulated, about 20 times slower than
# natively for integer code (callgrind measures 20 to 100 times slower).
command -v "qemu-$(uname -m)" >/dev/null 2>&1 || need_apt+=(qemu-user)
# SQLite's headers and library, for the run history (strobe history).
pkg-config --exists sqlite3 2>/dev/null || need_apt+=(libsqlite3-dev)
# PostgreSQL's C client library, for a PostgreSQL history store.
pkg-config --exists libpq 2>/dev/null || need_apt+=(libpq-dev)
# OpenSSL's libcrypto, for the SHA-256 of results files without a run id.
pkg-config --exists libcrypto 2>/dev/null || need_apt+=(libssl-dev)
# zlib, which gzips `strobe export --format pprof`.
pkg-config --exists zlib 2>/dev/null || need_apt+=(zlib1g-dev)
# Go, whose `go tool pprof` reads the pprof export in a test.
$demo_only || command -v go >/dev/null 2>&1 || need_apt+=(golang-go)
# GNU time, which `make bench export` measures each command's peak memory with.
$demo_only || [ -x /usr/bin/time ] || need_apt+=(time)
# A browser for the test that renders `strobe trend --format html`.
$demo_only || command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || need_apt+=(chromium)

if [ ${#need_apt[@]} -gt 0 ]; then
    echo "setup: installing ${need_apt[*]}"
    sudo_cmd=""
    if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if ! $demo_only && ! python3 -c 'import perfetto.protos.perfetto.trace.perfetto_trace_pb2' >/dev/null 2>&1; then
    echo "setup: installing the Python packages perfetto and protobuf"
    python3 -m pip install --quiet --disable-pip-version-check perfetto protobuf
fi
# GitHub's workflow schema, for the CI example (`make test`; it ships the
# schema, so the check needs no network), and PyYAML, which reads the
# workflow's steps to run them (scripts/run-workflow.py).
if ! $demo_only && { ! command -v check-jsonschema >/dev/null 2>&1 || ! python3 -c 'import yaml' 2>/dev/null; }; then
    echo "setup: installing the Python packages check-jsonschema and PyYAML"
    python3 -m pip install --quiet --disable-pip-version-check check-jsonschema pyyaml
fi
if ! $demo_only && ! python3 -c 'import opentelemetry.proto.collector.trace.v1.trace_service_pb2' >/dev/null 2>&1; then
    echo "setup: installing the Python package opentelemetry-proto"
    python3 -m pip install --quiet --disable-pip-version-check opentelemetry-proto
fi
