import Foundation
import Strobe
import StrobePerf
import StrobeProcessRunner
import StrobeResults
import StrobeTestTraits
import Synchronization
import Testing

/// Runs perf tests, each iteration in its own trace session; sessions are
/// process-wide, so the suite runs one test at a time.
@Suite(.serialized, .processWide)
struct PerfRunnerTests {
    struct Planned: Error, CustomStringConvertible {
        var description: String { "planned failure" }
    }

    static func runner(iterations: Int = 5, warmup: Int = 1) -> PerfRunner {
        var options = PerfRunner.Options()
        options.stopRule = .iterations(iterations)
        options.warmupIterations = warmup
        return PerfRunner(options: options)
    }

    @Test func slowIntervalShowsInItsMetric() async throws {
        let test = PerfTest(
            "slow and fast", metrics: [.interval("slow"), .interval("fast"), .interval("fast", .count)]
        ) { _ in
            Trace.interval("slow") { usleep(20_000) }
            for _ in 0..<3 { Trace.interval("fast") {} }
        }
        let result = await Self.runner().run(test)
        #expect(result.error == nil)
        let slow = try #require(result.metric("interval:slow:sum"))
        let fast = try #require(result.metric("interval:fast:sum"))
        #expect(slow.samples.count == 5)
        #expect(slow.samples.allSatisfy { $0 >= 20_000_000 })
        #expect(fast.samples.allSatisfy { $0 < 5_000_000 })
        #expect(result.metric("interval:fast:count")?.samples == [3, 3, 3, 3, 3])
        #expect(slow.unit == "ns")
    }

    @Test func setupTimeNeverLeaksIntoMeasure() async {
        // Setup takes 200 ms; a measured iteration of 1 ms stays far below
        // that even on a loaded machine.
        let test = PerfTest("setup heavy", setup: { usleep(200_000) }, measure: { _ in usleep(1_000) })
        let result = await Self.runner(iterations: 4).run(test)
        let wall = result.metric("wall")?.samples ?? []
        #expect(wall.count == 4)
        #expect(wall.allSatisfy { $0 >= 1_000_000 && $0 < 100_000_000 })
    }

    @Test func iterationCountsComeOutAsAsked() async {
        let calls = Atomic<Int>(0)
        let test = PerfTest("counted") { _ in calls.add(1, ordering: .relaxed) }
        let result = await Self.runner(iterations: 7, warmup: 3).run(test)
        #expect(calls.load(ordering: .relaxed) == 10)
        #expect(result.warmupIterations == 3)
        for metric in result.metrics { #expect(metric.samples.count == 7, "\(metric.name)") }
        #expect(
            Set(result.metrics.map(\.name)).isSuperset(of: [
                "wall", "process.cpu.user", "process.cpu.system", "process.context_switches.voluntary",
                "process.context_switches.involuntary", "process.faults.minor", "process.faults.major",
                "thread.cpu.user", "thread.cpu.system", "thread.context_switches.voluntary", "thread.faults.minor",
            ]))
    }

    @Test func timeBudgetAndPrecisionRulesStop() async {
        var options = PerfRunner.Options()
        options.warmupIterations = 0
        options.stopRule = .timeBudget(seconds: 0.05, minimum: 3, maximum: 1000)
        let timed = await PerfRunner(options: options).run(PerfTest("timed") { _ in usleep(5_000) })
        let count = timed.metric("wall")?.samples.count ?? 0
        #expect(count >= 3 && count < 30)

        options.stopRule = .p90Precision(relativeWidth: 0.5, minimum: 20, maximum: 60)
        let precise = await PerfRunner(options: options).run(PerfTest("precise") { _ in usleep(1_000) })
        let samples = precise.metric("wall")?.samples ?? []
        #expect(samples.count >= 20 && samples.count <= 60)
        if samples.count < 60 {
            let interval = StopRule.p90Interval(samples)
            #expect(interval != nil && interval!.relativeWidth <= 0.5)
        }
    }

    @Test func p90IntervalBracketsTheP90() throws {
        let samples = (1...100).map(Double.init)
        let interval = try #require(StopRule.p90Interval(samples))
        #expect(interval.lower <= interval.p90 && interval.p90 <= interval.upper)
        #expect(interval.lower >= 80 && interval.upper <= 98)
        #expect(StopRule.p90Interval([1, 2, 3]) == nil)
    }

    @Test func customValuesAreRecorded() async {
        let test = PerfTest("custom") { context in
            context.report("items", Double(context.iteration), better: .higher)
            context.report("misses", 1)
        }
        let result = await Self.runner(iterations: 3, warmup: 1).run(test)
        let items = result.metric("items")
        #expect(items?.samples == [1, 2, 3])
        #expect(items?.better == .higher)
        #expect(result.metric("misses")?.better == .lower)
    }

    @Test func failuresAreReportedAgainstTheirTestAndTheSuiteCarriesOn() async throws {
        let directory = NSTemporaryDirectory() + "strobe-suite-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let suite = PerfSuite(
            "mixed",
            tests: [
                PerfTest("fails in setup", setup: { throw Planned() }, measure: { _ in }),
                PerfTest("fails in measure") { context in if context.iteration == 2 { throw Planned() } },
                PerfTest("passes") { _ in Trace.interval("work") {} },
            ])
        let options = try PerfSuiteOptions.parse([
            "--iterations", "3", "--warmup", "1", "--results-dir", directory, "--tag", "device=test",
        ])
        let run = try await suite.run(options: options)
        #expect(run.hasFailures)
        #expect(run.tests.map(\.name) == ["fails in setup", "fails in measure", "passes"])
        #expect(run.tests[0].error?.contains("setup failed: planned failure") == true)
        #expect(run.tests[1].error?.contains("iteration 2: measure failed") == true)
        #expect(run.tests[1].metric("wall")?.samples.count == 1)
        #expect(run.tests[2].error == nil)
        #expect(run.tests[2].metric("wall")?.samples.count == 3)
        #expect(run.metadata.tags == ["device": "test"])
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter {
            $0.hasSuffix(".strobe-results")
        }
        #expect(files.count == 1)
        let reread = try ResultsFile.read(directory + "/" + files[0])
        #expect(reread == run)
    }

    @Test func keptTracesAreNamedAfterTheirIteration() async throws {
        let directory = NSTemporaryDirectory() + "strobe-kept-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = PerfRunner.Options()
        options.stopRule = .iterations(2)
        options.warmupIterations = 0
        options.traceDirectory = directory
        options.suite = "kept"
        let result = await PerfRunner(options: options).run(PerfTest("keep me") { _ in Trace.interval("x") {} })
        #expect(result.tracePaths.count == 2)
        for path in result.tracePaths {
            #expect(FileManager.default.fileExists(atPath: path))
            #expect(path.contains("/kept/keep-me/iter-00"))
            #expect(path.hasSuffix("ms.pftrace"))
        }
    }

    @Test func aProfiledTestKeepsTheStacksOfItsMeasuredIterations() async throws {
        var options = PerfRunner.Options()
        options.stopRule = .iterations(3)
        options.warmupIterations = 1
        var profile = TraceConfiguration.CPUProfile()
        profile.frequency = 999
        options.cpuProfile = profile
        let result = await PerfRunner(options: options).run(
            PerfTest("spinning") { _ in PerfRunnerTests.spin(milliseconds: 40) })
        #expect(result.error == nil)
        let kept = try #require(result.profile)
        #expect(kept.iterations == 3)
        #expect(abs(kept.nanosecondsPerSample - 1e9 / 999) < 1)
        #expect(kept.method == "perf_event" || kept.method == "cpu_timer")
        // 3 × 40 ms of CPU at 999 Hz is about 120 samples (about 12 where the
        // kernel refuses perf events and the CPU-time timer samples on a
        // 100 Hz tick).
        #expect(kept.sampleCount >= 8 && kept.sampleCount <= 400, "\(kept.sampleCount) samples")
        let times = kept.timePerIteration
        #expect(times.keys.contains { $0.contains("spin(milliseconds:)") }, "\(times.keys.sorted())")
        // The session's writer is the runner's work, not the test's.
        #expect(!kept.functions.contains { $0.contains("SessionWriter") })
        let unprofiled = await Self.runner(iterations: 2).run(PerfTest("plain") { _ in })
        #expect(unprofiled.profile == nil)
    }

    @Test func aCriticalPathMetricRecordsWhatEachIterationsPathCrossed() async throws {
        // Worker 1 starts its 20 ms when worker 0's 20 ms end: both lie on
        // the path, and worker 1 waits for worker 0.
        let test = PerfTest("two workers", metrics: [.interval("two workers", .criticalPath)]) { _ in
            Trace.interval("two workers") {
                let first = DispatchSemaphore(value: 0)
                let second = DispatchSemaphore(value: 0)
                Thread {
                    Trace.interval("worker 0") { PerfRunnerTests.spin(milliseconds: 20) }
                    first.signal()
                }.start()
                Thread {
                    first.wait()
                    Trace.interval("worker 1") { PerfRunnerTests.spin(milliseconds: 20) }
                    second.signal()
                }.start()
                second.wait()
            }
        }
        let result = await Self.runner(iterations: 3).run(test)
        #expect(result.error == nil)
        #expect(result.metric("interval:two workers:critical_path")?.samples.count == 3)
        let record = try #require(result.criticalPaths.first)
        #expect(result.criticalPaths.count == 1 && record.interval == "two workers")
        #expect(record.metric == "interval:two workers:critical_path")
        #expect(record.iterations.count == 3)
        for iteration in record.iterations {
            #expect(iteration.names.contains("worker 0") && iteration.names.contains("worker 1"), "\(iteration)")
            #expect(
                iteration.waits.contains(CriticalPathRecord.Wait(waiter: "worker 1", waitedFor: "worker 0")),
                "\(iteration.waits)")
        }
        let plain = await Self.runner(iterations: 2).run(PerfTest("plain", metrics: [.interval("x")]) { _ in })
        #expect(plain.criticalPaths.isEmpty)
    }

    /// Burns CPU on the calling thread for about `milliseconds` of its CPU
    /// time.
    @inline(never)
    static func spin(milliseconds: Double) {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        let end = Double(ts.tv_sec) * 1e3 + Double(ts.tv_nsec) / 1e6 + milliseconds
        var x = 1.0
        repeat {
            for _ in 0..<10_000 { x = x * 1.000_001 + 1e-9 }
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        } while Double(ts.tv_sec) * 1e3 + Double(ts.tv_nsec) / 1e6 < end
        if x == 0 { print(x) }
    }
}
