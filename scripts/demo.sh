#!/usr/bin/env bash
# The end-to-end demo behind `make demo`: instrument an app, record a trace,
# run perf tests on a fast and a slow build, and catch the regression.
set -euo pipefail
cd "$(dirname "$0")/.."
# SwiftPM with one environment for every call (scripts/swift.sh).
swift_script="$PWD/scripts/swift.sh"
swift() { bash "$swift_script" "$@"; }

out=out/demo
rm -rf "$out"
mkdir -p "$out"
# Each comparison runs interleaved rounds until every gated metric is decided
# or its time budget is spent. The counted metrics (instructions, allocations)
# decide at the first look; the budget bounds what time can add.
max_time=${DEMO_MAX_TIME:-60s}
cold_start_time=${DEMO_COLD_START_TIME:-40s}
iterations=${DEMO_ITERATIONS:-5}
policy=Examples/LensPerfTests/strobe-policy.yml

# Each part's time (installs, builds, each step) goes to the table printed
# at the end, however the demo ends, so that the next slow part shows itself.
# `make demo` passes when its installs began (DEMO_SETUP_START, in ns).
parts=()
part=""
part_start=$(date +%s%N)
if [ -n "${DEMO_SETUP_START:-}" ]; then
    parts+=("installs (scripts/setup.sh --demo)|$(( (part_start - DEMO_SETUP_START) / 1000000 ))")
fi
# Ends the part under way and begins the part named $1.
begin_part() {
    local now
    now=$(date +%s%N)
    if [ -n "$part" ]; then parts+=("$part|$(( (now - part_start) / 1000000 ))"); fi
    part=$1
    part_start=$now
}
print_parts() {
    local status=$? total=0 entry
    begin_part ""
    echo
    echo "Time per part of the demo:"
    for entry in "${parts[@]}"; do
        printf '  %7.1f s  %s\n' "$(echo "${entry##*|}" | awk '{print $1 / 1000}')" "${entry%|*}"
        total=$(( total + ${entry##*|} ))
    done
    printf '  %7.1f s  in all%s\n' "$(echo "$total" | awk '{print $1 / 1000}')" \
        "$([ "$status" -eq 0 ] || echo " (the demo failed with exit status $status)")"
}
trap print_parts EXIT
heading() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
step() {
    begin_part "$*"
    heading "$*"
}

heading "Building in release mode"
# The `strobe` command is in the tools package, Tools/. The apps it measures
# are always release builds; the command is a debug build unless
# DEMO_TOOLS_CONFIGURATION=release: its statistics modules are optimized in
# debug builds too, and a debug build of it takes half the time of a release
# one on a fresh 2-core machine (263 s against 519 s, AMD EPYC family 25
# model 17, load average 2.5-5).
tools_configuration=${DEMO_TOOLS_CONFIGURATION:-debug}
# Both packages are resolved first, one after the other (they share
# SwiftPM's caches); then the apps build beside the command. Each build alone
# leaves a core idle for much of its time (a release module compiles whole,
# on one core), so side by side they end sooner than one after the other
# (on a fresh Intel Xeon, family 6 model 167: 236 s for strobe, then 94 s for
# the apps, one after the other).
begin_part "resolve both packages"
swift package resolve >/dev/null
swift package --package-path Tools resolve >/dev/null
begin_part "build the apps (release) beside strobe ($tools_configuration, with the Server trait)"
apps_log=$(mktemp)
apps_times=$(mktemp)
(
    started=$(date +%s)
    swift build -c release --product LensPipeline
    swift build -c release --product LensPerfTests
    echo "$(( $(date +%s) - started ))" >"$apps_times"
) >"$apps_log" 2>&1 &
apps_pid=$!
tools_started=$(date +%s)
# A failed build of the command stops the apps' build beside it too.
swift build -c "$tools_configuration" --package-path Tools --traits Server --product strobe || {
    status=$?
    pkill -TERM -P "$apps_pid" 2>/dev/null || true
    kill "$apps_pid" 2>/dev/null || true
    wait "$apps_pid" 2>/dev/null || true
    rm -f "$apps_log" "$apps_times"
    exit "$status"
}
tools_seconds=$(( $(date +%s) - tools_started ))
apps_status=0
wait "$apps_pid" || apps_status=$?
tail -n 3 "$apps_log"
if [ "$apps_status" -ne 0 ]; then
    cat "$apps_log" >&2
    echo "demo: the release build of the apps failed (exit status $apps_status)" >&2
    exit 1
fi
echo "Built strobe in $tools_seconds s and, beside it, LensPipeline and LensPerfTests in $(cat "$apps_times") s."
rm -f "$apps_log" "$apps_times"
bin=$(swift build -c release --show-bin-path)
tools_bin=$(swift build -c "$tools_configuration" --package-path Tools --traits Server --show-bin-path)

step "1. The instrumented app: a lens pipeline with worker threads and frame deadlines, traced and CPU-profiled"
"$bin/LensPipeline" --frames 240 --trace "$out/lens.pftrace" --cpu-profile 999

step "2. What the trace says (strobe summarize)"
"$tools_bin/strobe" summarize "$out/lens.pftrace" --frame-budget 16.67ms

step "2a. Which code ran inside 'lens apply' (strobe summarize --profile)"
"$tools_bin/strobe" summarize "$out/lens.pftrace" --profile --interval "lens apply" --top 8
"$tools_bin/strobe" export "$out/lens.pftrace" --format folded -o "$out/lens.folded"
# The same samples for the tools teams already run: pprof, and the intervals as OpenTelemetry spans.
"$tools_bin/strobe" export "$out/lens.pftrace" --format pprof -o "$out/lens.pb.gz"
"$tools_bin/strobe" export "$out/lens.pftrace" --format otlp -o "$out/lens.otlp.pb"

step "2b. The same app as a flight recorder: it dumps the seconds around a late frame"
# Nothing is written until a frame takes over 33 ms (frame 90 waits for a
# shader compile, so at least one does); then what the ring holds from up to
# two seconds before (here, all since the app started) and the half second
# after go to one file, which strobe summarize opens with the trigger. The
# app keeps producing frames until the dump is written, so the half second
# after is whole on any machine.
"$bin/LensPipeline" --frames 200 --stall-frame 90 --flight-recorder "$out/flight-recorder" --cpu-profile 999
"$tools_bin/strobe" summarize "$out/flight-recorder"/*.pftrace | sed -n '1,8p'
# The dump carries the CPU samples of its window: what the threads ran.
"$tools_bin/strobe" summarize "$out/flight-recorder"/*.pftrace --profile --top 5 | sed -n '1,9p'

# The regression: a refactor moved the lens's tone-curve table into the
# function that applies it, so the table (3 × 4,096 entries, two powf and an
# expf each) is rebuilt for every band of every frame instead of once per
# lens. Its cost is scalar arithmetic, the same share of the work on any
# CPU. Another build
# is chosen by name: DEMO_REGRESSION=scalar (a colour grade that lost SIMD,
# whose cost depends on the CPU's vector units).
regression=${DEMO_REGRESSION:-rebuilt-curve}

step "3. strobe compare: the lens as it was (baseline) against the $regression build (candidate)"
# Each round runs one process of each build, in random order; each process is
# one replicate, and rounds are added until every gated metric is decided.
# --profile samples each process's measure blocks, so the slower test lists
# the functions whose CPU time per iteration changed: the one that rebuilds
# the curve first.
status=0
"$tools_bin/strobe" compare --profile \
    --baseline "env LENS_KERNEL=vectorized $bin/LensPerfTests --tag kernel=vectorized" \
    --candidate "env LENS_KERNEL=$regression $bin/LensPerfTests --tag kernel=$regression" \
    --iterations "$iterations" --max-time "$max_time" --policy "$policy" --results-dir "$out/suite" || status=$?
case $status in
    0) echo "No regression found." ;;
    1) echo "strobe compare found a regression (exit status 1): that is what this demo set out to show." ;;
    *) echo "strobe compare could not compare the builds (exit status $status)"; exit "$status" ;;
esac

step "4. A process-level cold-start test of the app (strobe compare --process)"
cold_status=0
"$tools_bin/strobe" compare --process --name "cold start" \
    --baseline "$bin/LensPipeline --frames 3 --kernel vectorized" \
    --candidate "$bin/LensPipeline --frames 3 --kernel $regression" \
    --metric 'wall' --max-time "$cold_start_time" --policy "$policy" --results-dir "$out/cold-start" || cold_status=$?
if [ "$cold_status" -ge 2 ]; then echo "strobe compare could not compare the cold starts (exit status $cold_status)"; exit "$cold_status"; fi

# The results stay usable: strobe diff writes the pull-request comment and
# the HTML report from them.
# The comment links to the HTML report's differential flame graphs, where
# LensKit.Lens.makeToneCurve() stands new under apply lens.
"$tools_bin/strobe" diff --baseline "$out/suite/baseline" --candidate "$out/suite/candidate" --policy "$policy" \
    --format markdown --html-link report.html --output "$out/pr-comment.md" || true
"$tools_bin/strobe" diff --baseline "$out/suite/baseline" --candidate "$out/suite/candidate" --policy "$policy" \
    --format html --output "$out/report.html" || true

step "4a. Two traces of the app compared (strobe diff-traces): the lens as it was against the $regression build"
# The trace of step 1 (vectorized) against one of the candidate: per interval
# name, duration, thread CPU time and blocked time, and the functions whose CPU
# samples inside it moved (makeToneCurve() new inside lens apply).
"$bin/LensPipeline" --frames 240 --kernel "$regression" --trace "$out/lens-$regression.pftrace" --cpu-profile 999
"$tools_bin/strobe" diff-traces "$out/lens.pftrace" "$out/lens-$regression.pftrace" --interval 'lens apply|^frame$' \
    --format html --output "$out/traces.html" || true
"$tools_bin/strobe" diff-traces "$out/lens.pftrace" "$out/lens-$regression.pftrace" --interval 'lens apply|^frame$' \
    | sed -n '1,12p' || true

nights=${DEMO_NIGHTS:-20}
night_processes=${DEMO_NIGHT_PROCESSES:-2}
night_iterations=${DEMO_NIGHT_ITERATIONS:-10}
step "5. A short history: $nights nights in a store, judged by strobe trend"
# Each night is a commit; two processes of the nightly build and two of a
# pinned reference build (always vectorized), in turn, run ten iterations
# each and go into an SQLite store (DEMO_NIGHT_PROCESSES and
# DEMO_NIGHT_ITERATIONS set how many). One `apply lens` iteration's time
# moves by ±20% from the next on a 2-core guest, and a process's value is
# the median of its iterations: over three iterations the processes of one
# build differ by 21-27% (coefficient of variation), over twenty by 8-11%
# (eight processes of the reference; Intel Xeon, family 6 model 207, load
# 1.1-2.9). Ten iterations in each of two processes cost about what three
# iterations in each of three did in startups, and halve the noise a
# night's value carries, so the rebuilt curve's +30% stands out of ten
# nights against ten. From night 11 the nightly build is the regressing
# one. strobe trend takes each night's processes of a build as one value
# (their median), pins the change to its commit range, and uses the
# reference to tell the code's changes from the machine's. The runs are
# profiled (--profile), so the change names the function that came into the
# profile with it.
history_dir=$out/history
history_repo=$history_dir/repo
mkdir -p "$history_repo"
git init -q "$history_repo"
for night in $(seq 1 "$nights"); do
    kernel=vectorized
    message="night $night"
    if [ "$night" -ge 11 ]; then kernel=$regression; fi
    if [ "$night" -eq 11 ]; then message="night 11: the tone curve is built where it is applied ($regression)"; fi
    git -C "$history_repo" -c user.name=Nightly -c user.email=nightly@example.com commit -q --allow-empty -m "$message"
    sha=$(git -C "$history_repo" rev-parse HEAD)
    for _ in $(seq 1 "$night_processes"); do
        GITHUB_SHA=$sha LENS_KERNEL=$kernel "$bin/LensPerfTests" --iterations "$night_iterations" \
            --profile --tag build=nightly --tag branch=main --results-dir "$history_dir/results/night$night-nightly" >/dev/null
        GITHUB_SHA=$sha LENS_KERNEL=vectorized "$bin/LensPerfTests" --iterations "$night_iterations" \
            --profile --tag build=reference --tag branch=main --results-dir "$history_dir/results/night$night-reference" >/dev/null
    done
    printf '.'
done
echo
# Each night's build also runs once under simulation (--instructions
# simulated): Valgrind's callgrind counts the instructions of both tests,
# which repeat from process to process whatever the machine does, so the
# night the code changed shows in them exactly, and a test whose count held
# its level while its time stepped ("capture frame", whose code never
# changes) is not told the code's. The pinned reference is
# counted every third night and on the last (its count moves only with the
# toolchain or the system; strobe trend gives each other night its nearest
# count): a simulation of both tests costs about 7 s of CPU. Two at a time, after the
# timed processes, so that no simulation slows a timed one. One warm-up
# iteration first, as a native run has: the first iteration of a process
# does first-use work (21 allocations where a later one does the native
# run's 14), so a count of it would not be the native count. It costs 0.2 s
# of a 5.6 s process (Intel Xeon, family 6 model 167, load 0.8).
simulate_night() {
    local night=$1 build=$2 kernel=$3 sha=$4
    GITHUB_SHA=$sha LENS_KERNEL=$kernel "$bin/LensPerfTests" --instructions simulated \
        --iterations 1 --warmup 1 --tag build="$build" --tag branch=main \
        --results-dir "$history_dir/results/night$night-$build-simulated" >/dev/null
}
simulations=()
for night in $(seq 1 "$nights"); do
    kernel=vectorized
    if [ "$night" -ge 11 ]; then kernel=$regression; fi
    sha=$(git -C "$history_repo" rev-parse "HEAD~$((nights - night))")
    simulations+=("$night nightly $kernel $sha")
    if [ $(( (night - 1) % 3 )) -eq 0 ] || [ "$night" -eq "$nights" ]; then
        simulations+=("$night reference vectorized $sha")
    fi
done
running=0
for simulation in "${simulations[@]}"; do
    read -r night build kernel sha <<<"$simulation"
    simulate_night "$night" "$build" "$kernel" "$sha" &
    running=$((running + 1))
    if [ "$running" -ge 2 ]; then
        wait -n
        running=$((running - 1))
        printf '.'
    fi
done
while [ "$running" -gt 0 ]; do
    wait -n
    running=$((running - 1))
    printf '.'
done
echo
"$tools_bin/strobe" history add "$history_dir/results" --history "$history_dir/history.sqlite"
# First the counted work, which the machine does not move: the night the code
# changed, and the functions whose instructions stepped with it.
"$tools_bin/strobe" trend --history "$history_dir/history.sqlite" --repository "$history_repo" \
    --reference build=reference --metric 'instructions$' --suite-executable .build/release/LensPerfTests \
    --build-command 'swift build -c release --product LensPerfTests' | sed -n '1,12p'
# Then the times, which see what instructions do not (and the machine's noise).
echo
"$tools_bin/strobe" trend --history "$history_dir/history.sqlite" --repository "$history_repo" \
    --reference build=reference --metric 'wall|lens apply' \
    | sed -n -E '/^[0-9]+ runs|^[0-9]+ change|^  (regression|improvement)|cause:|counted work stepped at/p' | sed -n '1,12p'
"$tools_bin/strobe" trend --history "$history_dir/history.sqlite" --repository "$history_repo" \
    --reference build=reference --format html --output "$out/history.html"

step "6. A fleet in the field: sampled sessions of two versions, uploaded to strobe serve, reported by strobe fleet"
# The same regression as the fleet would see it: hundreds of short sessions
# of each version on three classes of device, a share of them traced (as
# production sampling does), sent over HTTP and judged per device class.
FLEET_REGRESSION=$regression bash scripts/demo-fleet.sh "$bin" "$tools_bin" "$out/fleet"

step "7. Where to look next"
echo "Trace of the app:        $out/lens.pftrace"
echo "  open it at https://ui.perfetto.dev (Open trace file): each interval sits beside the thread"
echo "  that ran it; select a 'lens apply' slice to see its thread CPU time and rusage deltas."
echo "  Under each worker thread's slices is its CPU-samples track: drag across it over a few"
echo "  'lens apply' slices for a flame graph of the code that ran (the Perf Samples flame graph)."
echo "Folded stacks:           $out/lens.folded (flamegraph.pl or speedscope.app)"
echo "pprof profile:           $out/lens.pb.gz (go tool pprof -http=:8080 $out/lens.pb.gz)"
echo "OpenTelemetry spans:     $out/lens.otlp.pb (OTLP/protobuf; a Collector's otlp receiver takes it, docs/export.md)"
echo "Flight-recorder dump:    $out/flight-recorder/ (the trigger is the instant strobe.trigger)"
echo "Pull-request comment:    $out/pr-comment.md"
echo "HTML report:             $out/report.html (plots; a flame graph per changed test)"
echo "Two traces compared:     $out/traces.html (strobe diff-traces, a flame graph per interval)"
echo "History dashboard:       $out/history.html (one plot per series, change points with their commit range)"
echo "Fleet report:            $out/fleet/fleet.txt, $out/fleet/fleet.md (percentiles per version and device class)"
echo "Raw results:             $out/suite/baseline, $out/suite/candidate, one file per process"
echo "                         (strobe results export FILE --format csv; strobe diff re-judges them)"
echo "Slow iterations:         rerun a suite with --keep-traces to keep each iteration's trace."
