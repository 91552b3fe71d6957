#!/usr/bin/env bash
# `make bench serve`: strobe serve's ingest rate over HTTP on loopback,
# beside `strobe ingest` of the same files in the same run (the baseline),
# into SQLite and into a throwaway PostgreSQL (scripts/with-postgres.sh).
#
#   scripts/measure-serve.sh [TRACES]      (default 200)
#
# The traces are the lens app's, of about 5,300 intervals each, all
# different. Prints one JSON line per store and connection count: traces/s
# through the server, traces/s through `strobe ingest`, their ratio, and
# whether the store holds each trace exactly once. Exits 1 if it does not.
set -euo pipefail
cd "$(dirname "$0")/.."
# SwiftPM with one environment for every call (scripts/swift.sh).
swift_script="$PWD/scripts/swift.sh"
swift() { bash "$swift_script" "$@"; }
source scripts/serve-common.sh
count=${1:-200}
if [ "${STROBE_MEASURE_SERVE_INNER:-}" != 1 ]; then
    swift build -c release --product LensPipeline
    swift build -c release --package-path Tools --traits Server --product strobe
    STROBE_MEASURE_SERVE_INNER=1 exec bash scripts/with-postgres.sh bash "$0" "$count"
fi
bin=$(swift build -c release --show-bin-path)
strobe="$(swift build -c release --package-path Tools --traits Server --show-bin-path)/strobe"
work=$(mktemp -d /tmp/strobe-serve-bench.XXXXXX)
trap 'kill "${serve_pid:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/traces"
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -n 1)
for i in $(seq 1 "$count"); do
    "$bin/LensPipeline" --frames 240 --size 64x48 --app-version "5.$((i % 2 + 1))" \
        --device-class "c$((i % 3))" --trace "$work/traces/session-$i.pftrace" > /dev/null
done
serve_token "$work/token"

stored_once() {  # STORE: whether the store holds every trace exactly once
    "$strobe" ingest "$work/traces" --history "$1" | grep -q "^$count traces: 0 added, $count already stored, 0 skipped"
}

status=0
n=0
for backend in sqlite postgres; do
    for connections in 4 8; do
        n=$((n + 1))
        if [ "$backend" = sqlite ]; then
            served="$work/served-$n.sqlite"
            ingested="$work/ingested-$n.sqlite"
        else
            psql "$STROBE_TEST_POSTGRES_URL" -qc "CREATE DATABASE served_$n" -c "CREATE DATABASE ingested_$n"
            served=${STROBE_TEST_POSTGRES_URL/\/strobe_test\?/\/served_$n?}
            ingested=${STROBE_TEST_POSTGRES_URL/\/strobe_test\?/\/ingested_$n?}
        fi
        serve_start "$strobe" "$served" "$work/token" "$work/serve.log"
        load=$(python3 scripts/serve-load.py --url "http://127.0.0.1:$serve_port" --token-file "$work/token" \
            --connections "$connections" "$work/traces")
        serve_stop
        serve_rate=$(echo "$load" | sed -n 's/.* \([0-9]*\) traces\/s over.*/\1/p')
        start=$(date +%s.%N)
        "$strobe" ingest "$work/traces" --history "$ingested" > /dev/null
        ingest_rate=$(python3 -c "import sys; print(round($count / ($(date +%s.%N) - $start)))")
        once=true
        stored_once "$served" || { once=false; status=1; }
        echo "{\"figure\":\"serve.ingest_rate\",\"store\":\"$backend\",\"connections\":$connections,\"traces\":$count," \
            "\"traces_per_s\":$serve_rate,\"baseline\":\"strobe ingest\",\"baseline_traces_per_s\":$ingest_rate," \
            "\"ratio\":$(python3 -c "print(round($serve_rate / $ingest_rate, 3))"),\"stored_once\":$once," \
            "\"load\":\"$(cut -d' ' -f1-3 /proc/loadavg)\",\"cpu\":\"$cpu\"}"
    done
done
exit $status
