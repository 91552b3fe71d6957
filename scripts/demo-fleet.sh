#!/usr/bin/env bash
# The fleet part of the demo (scripts/demo.sh step 6, or `make demo-fleet`):
# several hundred short sessions of the lens app, as a fleet of devices in
# the field would run them, under two app versions on three classes of
# device; a share of them sampled and traced, uploaded to `strobe serve`,
# and reported per version and device class by `strobe fleet`.
#
#   scripts/demo-fleet.sh APP_BIN_DIR STROBE_BIN_DIR OUT_DIR
#
# Version 5.1 is the vectorized build; 5.2 has the demo's regression
# (FLEET_REGRESSION, default rebuilt-curve: the tone curve's table rebuilt for
# every band). Device classes differ in
# speed the way the demo can make them differ on one machine: a slower class
# gets more pixels per frame for the same CPU (320x240, 480x360 and 640x480,
# the lens's own size for the slowest, where the table's rebuild costs the
# least in proportion). FLEET_SESSIONS sessions run
# per version and class (default 50), FLEET_SAMPLING of them are traced
# (default 0.5), FLEET_FRAMES frames each (default 8).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/serve-common.sh

if [ $# -ne 3 ]; then
    echo "usage: scripts/demo-fleet.sh APP_BIN_DIR STROBE_BIN_DIR OUT_DIR" >&2
    exit 2
fi
bin=$1
tools_bin=$2
out=$3
sessions=${FLEET_SESSIONS:-50}
sampling=${FLEET_SAMPLING:-0.5}
frames=${FLEET_FRAMES:-8}
regression=${FLEET_REGRESSION:-rebuilt-curve}
for name in LensPipeline; do
    [ -x "$bin/$name" ] || { echo "demo-fleet: $bin/$name is not built" >&2; exit 2; }
done
[ -x "$tools_bin/strobe" ] || { echo "demo-fleet: $tools_bin/strobe is not built" >&2; exit 2; }

rm -rf "$out"
mkdir -p "$out/traces"
store="$out/fleet.sqlite"

# One line per session: version, kernel, class, frame size, session number.
plan="$out/sessions.txt"
: > "$plan"
for version in 5.1 5.2; do
    kernel=vectorized
    if [ "$version" = 5.2 ]; then kernel=$regression; fi
    for class in high:320x240 mid:480x360 low:640x480; do
        for session in $(seq 1 "$sessions"); do
            echo "$version $kernel ${class%%:*} ${class#*:} $session" >> "$plan"
        done
    done
done
total=$(wc -l < "$plan")
echo "demo-fleet: $total sessions (2 versions × 3 device classes × $sessions), each traced with probability $sampling"
started=$(date +%s)
# Two sessions at a time, one per core, in a shuffled order so that neither
# version has the quieter part of the run.
shuf "$plan" | xargs -P 2 -L 1 sh -c '
    version=$1; kernel=$2; class=$3; size=$4; session=$5
    "$0/LensPipeline" --frames '"$frames"' --size "$size" --kernel "$kernel" \
        --app-version "$version" --device-class "$class" --sampling '"$sampling"' \
        --trace "'"$out"'/traces/$version-$class-$session.pftrace" > /dev/null
' "$bin"
traced=$(find "$out/traces" -name '*.pftrace' | wc -l)
echo "demo-fleet: the sessions ran in $(( $(date +%s) - started )) s; $traced of $total were sampled and traced"

# The analysis service: devices upload their traces over HTTP.
serve_token "$out/token"
trap 'kill "${serve_pid:-0}" 2>/dev/null || true' EXIT
serve_start "$tools_bin/strobe" "$store" "$out/token" "$out/serve.log"
python3 scripts/serve-load.py --url "http://127.0.0.1:$serve_port" --token-file "$out/token" --connections 4 "$out/traces"
serve_stop
trap - EXIT
tail -n 1 "$out/serve.log"
# Ingesting the same files again changes nothing: each trace is stored once.
"$tools_bin/strobe" ingest "$out/traces" --history "$store"

status=0
"$tools_bin/strobe" fleet --history "$store" --metric "lens apply" --metric "app startup" \
    --group-by device.class --compare 5.1 5.2 | tee "$out/fleet.txt" || status=$?
"$tools_bin/strobe" fleet --history "$store" --metric "lens apply" --metric "app startup" \
    --group-by device.class --compare 5.1 5.2 --format markdown --output "$out/fleet.md" || true
case $status in
    0) echo "demo-fleet: no version regression found." ;;
    1) echo "demo-fleet: strobe fleet found the regression of version 5.2 (exit status 1)." ;;
    *) echo "demo-fleet: strobe fleet failed (exit status $status)"; exit "$status" ;;
esac
