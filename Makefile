# Strobe: `make demo` runs the end-to-end demo, `make test` runs every test.
# Both install what is missing first (see scripts/setup.sh).

# Every `swift` call goes through scripts/swift.sh: one fixed environment
# (so SwiftPM compiles each package's manifests once, not again for each
# variable that differs from the last call) and fixed hashing (so a package's
# traits reach the compiler in one order and nothing compiles twice). Tests
# that need settings of their own run their test bundle directly.
SWIFT ?= bash $(CURDIR)/scripts/swift.sh
SWIFT_BUILD = $(SWIFT) build
# The test bundles the test builds make, run directly with the settings
# their tests read (STROBE_*): `swift test` would pass those to SwiftPM too.
SDK_TEST_BUNDLE = .build/debug/strobePackageTests.xctest
TOOLS_TEST_BUNDLE = Tools/.build/debug/strobe-toolsPackageTests.xctest
RUN_TESTS = --testing-library swift-testing
RELEASE_FLAGS = -c release
# The SDK package (the repository root) with its bridges, which are behind
# package traits; the tools package (`strobe`, the gate) is in Tools/.
SDK_TRAITS = --traits StrobeMetrics,StrobeTracing
# The tools with their package trait Server (`strobe serve` and the OTLP/HTTP
# sender, on SwiftNIO and Hummingbird), which the tests, the demo's fleet and
# the benchmarks use; every build here and in scripts/ passes it, since a
# build folder built with other traits compiles each module of the package
# again. `make strobe-lean` builds the command without them, as a CI job
# needs it (Tools/.build-lean/release/strobe).
TOOLS = --package-path Tools --traits Server
# The test builds: each package's test bundle (with the programs its tests
# start: TraceChild and LensPipeline, the debug `strobe`), and the programs
# the tests, the workflow check and the fuzz seeds run besides (LensPerfTests,
# ProfileSuite), or that must keep compiling (StrobeFuzz, built plainly: it
# replays a corpus). The benchmarks (StrobeBenchmarks, StrobeToolBenchmarks)
# are left to `make bench`, which builds them in release: `--build-tests`
# would compile them in debug too, for nothing. Product builds share a
# package's debug build folder, so a later `--product X` builds nothing.
SDK_TEST_BUILD = $(SWIFT_BUILD) $(SDK_TRAITS) --product strobePackageTests && \
	$(SWIFT_BUILD) $(SDK_TRAITS) --product LensPerfTests && $(SWIFT_BUILD) $(SDK_TRAITS) --product ProfileSuite
TOOLS_TEST_BUILD = $(SWIFT_BUILD) $(TOOLS) --product strobe-toolsPackageTests && \
	$(SWIFT_BUILD) $(TOOLS) --product StrobeFuzz

.PHONY: setup setup-demo demo demo-fleet lint test test-sdk test-stress test-tools test-history test-adoption bench tsan fuzz validate-gate example-server bench-otel proto \
	proto-check build strobe strobe-lean clean test-workflow check-workflow check-workflow-debian-root

setup:
	@bash scripts/setup.sh
	@bash scripts/build-commit.sh

# What the demo alone needs: the libraries it links, no test tools.
setup-demo:
	@bash scripts/setup.sh --demo
	@bash scripts/build-commit.sh

build: setup
	$(SWIFT_BUILD) $(RELEASE_FLAGS) $(SDK_TRAITS)
	$(SWIFT_BUILD) $(RELEASE_FLAGS) $(TOOLS)

# The `strobe` command alone, in release: Tools/.build/release/strobe.
strobe: setup
	$(SWIFT_BUILD) $(RELEASE_FLAGS) $(TOOLS) --product strobe

# The lean `strobe` (no server stack: every command but `serve` and
# `--otlp-endpoint`), optimized for size as the CI example builds it (a
# tenth or more less to compile), in a build folder of its own:
# Tools/.build-lean/release/strobe.
strobe-lean: setup
	$(SWIFT_BUILD) $(RELEASE_FLAGS) --package-path Tools --scratch-path Tools/.build-lean --product strobe \
		-Xswiftc -Osize

# The demo times its installs too: it prints how long each part took.
demo:
	@DEMO_SETUP_START=$$(date +%s%N) && bash scripts/setup.sh --demo && bash scripts/build-commit.sh && \
		DEMO_SETUP_START=$$DEMO_SETUP_START bash scripts/demo.sh

# The demo's fleet part alone (step 6 of `make demo`): sampled sessions of two
# app versions uploaded to `strobe serve` and reported by `strobe fleet`.
demo-fleet: setup
	$(SWIFT_BUILD) $(RELEASE_FLAGS) --product LensPipeline
	$(SWIFT_BUILD) $(RELEASE_FLAGS) $(TOOLS) --product strobe
	bash scripts/demo-fleet.sh "$$($(SWIFT_BUILD) -c release --show-bin-path)" \
		"$$($(SWIFT_BUILD) $(RELEASE_FLAGS) $(TOOLS) --show-bin-path)" out/demo-fleet

# The two packages are resolved one after the other (they share SwiftPM's
# caches); then their test builds run side by side (scripts/beside.sh): each
# leaves a core idle while one large module compiles, which the other
# takes. Then the SDK's tests, the adoption check beside their longer
# process, and beside them the tools' tests: the SDK's tests wait on
# children and clocks for much of their run, and the three together took
# 182 s where one after the other they take about 210 (Intel Xeon, family 6
# model 207). (The tools' build beside the SDK's tests took 490 s where it
# takes 277 s alone: the tests' busy stretches and the compiler slowed each
# other.) Last, OTLP read back with OpenTelemetry's own classes, from the
# debug LensPipeline and strobe the two test builds made.
test: setup
	bash scripts/generate-protos.sh --check
	bash scripts/generate-plugin-source.sh --check
	python3 Tests/python/check_schema.py
	python3 Tests/python/test_perfetto_decode.py
	$(SWIFT) package resolve >/dev/null
	$(SWIFT) package --package-path Tools resolve >/dev/null
	bash scripts/beside.sh "the tools' test build" '$(TOOLS_TEST_BUILD)' -- bash -c '$(SDK_TEST_BUILD)'
	bash scripts/beside.sh "the tools' tests" '$(MAKE) --no-print-directory test-tools' -- \
		$(MAKE) --no-print-directory test-sdk SDK_TESTS_THEN='bash scripts/check-adoption.sh'
	python3 Tests/python/test_otlp_export.py
	$(MAKE) --no-print-directory test-workflow

# The CI example (Examples/CI/perf-gate.yml) against GitHub's workflow schema,
# and its run: steps on a fixture repository of two commits, with the debug
# strobe and LensPerfTests the test builds made standing in for the release
# builds (scripts/run-workflow.py --fast; 9 s, most of it the debug suite's
# processes, AMD EPYC family 25 model 17): the last part of `make test`.
# `make check-workflow` runs the same steps with the real builds and
# instruction counting, and must find the regression (minutes).
test-workflow:
	check-jsonschema --builtin-schema vendor.github-workflows Examples/CI/perf-gate.yml
	python3 scripts/run-workflow.py --fast Tools/.build/debug/strobe .build/debug/LensPerfTests

check-workflow: setup
	python3 scripts/run-workflow.py --real

# The same steps, the install step too, in a new Debian bookworm root that
# holds only the toolchain's own packages (as root; minutes).
check-workflow-debian-root:
	bash scripts/check-workflow-in-debian-root.sh

# Trace sessions are process-wide, and every test target runs in one
# process: the suites that use such state carry the `.processWide` trait,
# which runs them one at a time, so the rest run in parallel. StrobeTests
# runs in a process of its own beside the other targets, so the two chains of
# such suites run side by side (scripts/test-in-two-processes.sh); its
# KillSafetyTests (12 s of killed children) run with the other targets,
# which make the shorter chain even with the adoption check after it. The
# tools' tests run programs the SDK package builds (TraceChild), so the SDK
# package builds first.
# The stress tests (StrobeStressTests, seconds of threads) run in the second
# process, beside the longer first; without STROBE_STRESS_TESTS=1 they report
# themselves skipped, so a plain `swift test` leaves them out. `make test`
# runs the adoption check (test-adoption) after the second process too
# (SDK_TESTS_THEN).
test-sdk:
	$(SDK_TEST_BUILD)
	STROBE_STRESS_TESTS=1 THEN_IN_SECOND="$(SDK_TESTS_THEN)" bash scripts/test-in-two-processes.sh \
		$(SDK_TEST_BUNDLE) 'StrobeTests\.(?!KillSafetyTests)'

# Many threads with tiny buffers and a starved writer, and ten thousand
# short-lived threads: every event accounted for and no memory kept. `make
# test` runs them too; this runs them alone.
test-stress: setup
	$(SDK_TEST_BUILD)
	STROBE_STRESS_TESTS=1 $(SDK_TEST_BUNDLE) $(RUN_TESTS) --filter StrobeStressTests

# The run history's tests run against a real PostgreSQL: a throwaway cluster
# (scripts/postgres.sh, on its own Unix socket and loopback port) started
# for the run and stopped and removed however the tests end, installed
# first if it is missing. Outside make, the tests start such a cluster
# themselves when PostgreSQL is installed and are skipped, saying why, when
# it is not; STROBE_REQUIRE_POSTGRES=1 makes that skip a failure.
HISTORY_TESTS = StrobeHistoryTests|StrobeHistoryStoreTests|StrobePostgresTests|StrobeTrendTests
test-tools:
	$(TOOLS_TEST_BUILD)
	STROBE_REQUIRE_POSTGRES=1 bash scripts/with-postgres.sh $(TOOLS_TEST_BUNDLE) $(RUN_TESTS)

# The run history's tests alone: its model, stores, PostgreSQL client and
# trend.
test-history: setup
	$(TOOLS_TEST_BUILD)
	STROBE_REQUIRE_POSTGRES=1 bash scripts/with-postgres.sh $(TOOLS_TEST_BUNDLE) $(RUN_TESTS) \
		--filter '$(HISTORY_TESTS)'

# A client package that pins an older major of a package the tools use
# resolves, builds and runs a perf test with Strobe and StrobePerf, and its
# resolution holds nothing those products do not need.
test-adoption:
	bash scripts/check-adoption.sh

# The recording, session, reader, flight-recorder and crash-capture tests
# under ThreadSanitizer, in a build directory of their own; the first report
# fails the run. Resident-memory checks skip themselves under the sanitizer.
# Crashing children are told to leave fatal signals to crash capture.
TSAN_SUITES = RecordingTests|QuiescenceTests|RingBoundTests|StressTests|StrobeReaderTests|FlightRecorder|CrashCaptureTests|CrashedChildTests|CrashSafetyTests
# The bridges' traits stay off: none of these suites uses them, so their
# packages are not built a second time.
tsan: setup
	$(SWIFT_BUILD) --product strobePackageTests --sanitize=thread --build-path .build/tsan
	STROBE_STRESS_TESTS=1 TSAN_OPTIONS="halt_on_error=1 abort_on_error=1 $(TSAN_OPTIONS)" \
		.build/tsan/debug/strobePackageTests.xctest $(RUN_TESTS) --filter '$(TSAN_SUITES)'

# Coverage-guided fuzzing (libFuzzer, with AddressSanitizer) of the readers
# of untrusted files: traces (TraceReader and TraceSummary), results files,
# CSV samples and crash files (`strobe recover`). Seeds come from
# scripts/fuzz-seeds.sh; the corpus grows in Tools/.build/fuzz-corpus. Each input
# is at most 64 KiB and no single allocation
# may exceed 16 MiB. FUZZ_LIMIT bounds each run (CI passes a time limit); the
# targets run as many at once as the machine has cores (FUZZ_JOBS).
FUZZ_LIMIT ?= -runs=1000000
FUZZ_FLAGS = -max_len=65536 -malloc_limit_mb=16 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
	-artifact_prefix=Tools/.build/fuzz-artifacts/
# swiftc keeps only the last of several -sanitize= flags, and SwiftPM passes
# one per sanitizer: the Swift code would get AddressSanitizer without the
# fuzzer's coverage counters, and libFuzzer would mutate blind. The one list
# at the end gives the Swift code both; the C code and the link take
# SwiftPM's own flags. FUZZ_CONFIGURATION=debug builds in two thirds of the
# time and fuzzes about a tenth as fast (CI's short run uses it); it also
# leaves the statistics modules unoptimized (-Onone after the package's -O,
# which SwiftPM places before the -Xswiftc flags): the fuzzed readers do not
# need them fast, and optimizing them under AddressSanitizer is most of that
# build.
FUZZ_CONFIGURATION ?= release
FUZZ_OPTIMIZATION = $(if $(filter debug,$(FUZZ_CONFIGURATION)),-Xswiftc -Onone)
FUZZ_BUILD = -c $(FUZZ_CONFIGURATION) --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=address,fuzzer \
	$(FUZZ_OPTIMIZATION) $(TOOLS) --build-path Tools/.build/fuzz --product StrobeFuzz \
	-Xswiftc -Xfrontend -Xswiftc -entry-point-function-name -Xswiftc -Xfrontend -Xswiftc StrobeFuzz_main
# The seeds come from the SDK's debug programs (TraceChild, LensPipeline,
# LensPerfTests) as its test build makes them, so after `make test` they are
# not built again (with the SDK's traits, as the test build has them: without
# them every module would compile anew), and from the debug `strobe`.
fuzz: setup
	$(SDK_TEST_BUILD)
	$(SWIFT_BUILD) $(TOOLS) --product strobe
	bash scripts/fuzz-seeds.sh .build/debug Tools/.build/debug Tools/.build/fuzz-seeds
	$(SWIFT_BUILD) $(FUZZ_BUILD)
	bash scripts/fuzz-targets.sh Tools/.build/fuzz/$(FUZZ_CONFIGURATION)/StrobeFuzz reader results csv recover -- \
		$(FUZZ_FLAGS) $(FUZZ_LIMIT)

# `make bench` runs every section; `make bench core triggers` runs those.
# The SDK's sections run in StrobeBenchmarks, the statistics' in the tools
# package's StrobeToolBenchmarks.
SDK_BENCH_SECTIONS = core crash triggers categories async session format reader bridges signposts runner instructions counting profile
TOOL_BENCH_SECTIONS = statistics changepoints compare history trend sketch fleet export
# strobe serve over HTTP, by a script (scripts/measure-serve.sh); the cost
# and spread of simulated instruction counts (scripts/measure-simulation.sh).
SCRIPT_BENCH_SECTIONS = serve simulation
BENCH_SECTIONS = $(SDK_BENCH_SECTIONS) $(TOOL_BENCH_SECTIONS) $(SCRIPT_BENCH_SECTIONS)
BENCH_ASKED = $(filter $(BENCH_SECTIONS),$(MAKECMDGOALS))
bench: setup
	@if [ -z "$(BENCH_ASKED)" ] || [ -n "$(filter $(SDK_BENCH_SECTIONS),$(BENCH_ASKED))" ]; then \
		$(SWIFT_BUILD) $(RELEASE_FLAGS) $(SDK_TRAITS) --product StrobeBenchmarks && \
		.build/release/StrobeBenchmarks $(filter $(SDK_BENCH_SECTIONS),$(BENCH_ASKED)) || exit 1; \
	fi
	@if [ -z "$(BENCH_ASKED)" ] || [ -n "$(filter $(TOOL_BENCH_SECTIONS),$(BENCH_ASKED))" ]; then \
		$(SWIFT_BUILD) $(RELEASE_FLAGS) $(TOOLS) --product StrobeToolBenchmarks && \
		$(SWIFT_BUILD) $(RELEASE_FLAGS) $(TOOLS) --product strobe && \
		Tools/.build/release/StrobeToolBenchmarks $(filter $(TOOL_BENCH_SECTIONS),$(BENCH_ASKED)) || exit 1; \
	fi
	@if [ -z "$(BENCH_ASKED)" ] || [ -n "$(filter serve,$(BENCH_ASKED))" ]; then \
		bash scripts/measure-serve.sh || exit 1; \
	fi
	@if [ -z "$(BENCH_ASKED)" ] || [ -n "$(filter simulation,$(BENCH_ASKED))" ]; then \
		bash scripts/measure-simulation.sh || exit 1; \
	fi

ifneq ($(filter bench,$(MAKECMDGOALS)),)
$(BENCH_SECTIONS):
	@:
endif

# The gate on real runs: the demo's regression caught, and nothing flagged on
# unchanged tests or on self-comparisons, over RUNS repeated comparisons.
RUNS ?= 10
validate-gate: setup
	bash scripts/validate-gate.sh $(RUNS)

# A Hummingbird server and an AsyncHTTPClient client recording into one trace
# through StrobeTracing; the program checks its own trace. A package of its
# own, so Hummingbird stays out of the core build.
EXAMPLE_SERVER_FLAGS ?=
example-server: setup
	cd Examples/ServerTracing && $(SWIFT_BUILD) $(EXAMPLE_SERVER_FLAGS)
	cd Examples/ServerTracing && $(SWIFT) run --skip-build $(EXAMPLE_SERVER_FLAGS) ServerTracing

# A span through StrobeTracer beside swift-otel's SDK tracer and the no-op
# tracer, in one process (Benchmarks/SpanComparison). A package of its own,
# so swift-otel stays out of both packages' builds; not part of `make bench`,
# `make test` or CI (its first release build takes minutes).
bench-otel: setup
	cd Benchmarks/SpanComparison && $(SWIFT_BUILD) $(RELEASE_FLAGS)
	Benchmarks/SpanComparison/.build/release/SpanComparison

# Every Swift file against the committed .swift-format configuration; a
# violation fails. `bash scripts/lint.sh --fix` formats in place.
lint:
	bash scripts/lint.sh

proto:
	bash scripts/generate-protos.sh

clean:
	rm -rf .build Tools/.build Tools/.build-lean .strobe out Examples/ServerTracing/.build Tests/Fixtures/*/.build
