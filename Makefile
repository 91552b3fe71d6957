# Strobe: `make demo` runs the end-to-end demo, `make test` runs every test.
# Both install what is missing first (see scripts/setup.sh).

SWIFT ?= swift
RELEASE_FLAGS = -c release

.PHONY: setup demo test bench tsan fuzz validate-gate example-server proto proto-check build clean

setup:
	@bash scripts/setup.sh

build: setup
	$(SWIFT) build $(RELEASE_FLAGS)

demo: setup
	@bash scripts/demo.sh

test: setup
	bash scripts/generate-protos.sh --check
	python3 Tests/python/check_schema.py
	python3 Tests/python/test_perfetto_decode.py
	$(SWIFT) build --build-tests
	# Trace sessions are process-wide, and every test target runs in one
	# process, so the tests run one at a time.
	$(SWIFT) test --skip-build --no-parallel

# The recording, session and reader tests under ThreadSanitizer, in a build
# directory of their own; the first report fails the run. Resident-memory
# checks skip themselves under the sanitizer, and one test that compares CPU
# time with wall time is left out (the sanitizer slows threads unevenly).
TSAN_SUITES = RecordingTests|QuiescenceTests|RingBoundTests|StressTests|StrobeReaderTests|FlightRecorderTriggerTests
tsan: setup
	$(SWIFT) build --build-tests --sanitize=thread --build-path .build/tsan
	TSAN_OPTIONS="halt_on_error=1 abort_on_error=1 $(TSAN_OPTIONS)" $(SWIFT) test --skip-build --no-parallel \
		--sanitize=thread --build-path .build/tsan --filter '$(TSAN_SUITES)' \
		--skip resourceUsageShowsAsThreadTimeAndArguments

# Coverage-guided fuzzing (libFuzzer, with AddressSanitizer) of the readers
# of untrusted files: traces (TraceReader and TraceSummary), results files,
# CSV samples and crash files (`strobe recover`). Seeds come from
# scripts/fuzz-seeds.sh; the corpus grows in .build/fuzz-corpus. Each input
# is at most 64 KiB and no single allocation
# may exceed 16 MiB. FUZZ_LIMIT bounds each run (CI passes a time limit).
FUZZ_LIMIT ?= -runs=1000000
FUZZ_FLAGS = -max_len=65536 -malloc_limit_mb=16 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
	-artifact_prefix=.build/fuzz-artifacts/
FUZZ_BUILD = -c release --sanitize=fuzzer --sanitize=address --build-path .build/fuzz --product StrobeFuzz \
	-Xswiftc -Xfrontend -Xswiftc -entry-point-function-name -Xswiftc -Xfrontend -Xswiftc StrobeFuzz_main
fuzz: setup
	$(SWIFT) build
	bash scripts/fuzz-seeds.sh .build/debug .build/fuzz-seeds
	$(SWIFT) build $(FUZZ_BUILD)
	for target in reader results csv recover; do \
		mkdir -p .build/fuzz-corpus/$$target .build/fuzz-artifacts && \
		LSAN_OPTIONS=suppressions=scripts/lsan-suppressions.txt ASAN_OPTIONS=malloc_context_size=4 \
		.build/fuzz/release/StrobeFuzz $$target $(FUZZ_FLAGS) $(FUZZ_LIMIT) \
			.build/fuzz-corpus/$$target .build/fuzz-seeds/$$target || exit 1; \
	done

# `make bench` runs every section; `make bench core triggers` runs those.
BENCH_SECTIONS = core crash triggers categories async session format reader statistics bridges signposts runner changepoints
bench: setup
	$(SWIFT) build $(RELEASE_FLAGS) --product StrobeBenchmarks
	.build/release/StrobeBenchmarks $(filter $(BENCH_SECTIONS),$(MAKECMDGOALS))

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
	cd Examples/ServerTracing && $(SWIFT) build $(EXAMPLE_SERVER_FLAGS)
	cd Examples/ServerTracing && $(SWIFT) run --skip-build $(EXAMPLE_SERVER_FLAGS) ServerTracing

proto:
	bash scripts/generate-protos.sh

clean:
	rm -rf .build .strobe out Examples/ServerTracing/.build
