import Foundation
import Strobe
import StrobePerf
import StrobeProcessRunner
import StrobeResults
import StrobeTestSupport
import StrobeTestTraits
import Testing

@Suite(.processWide) struct ProcessRunnerTests {
    /// The built child program.
    static var child: String { builtProgram("TraceChild") }

    static func run(_ mode: String, iterations: Int = 3, timeout: Double = 20) -> PerfTestResult {
        var options = ProcessRunner.Options()
        options.iterations = iterations
        options.warmupIterations = 1
        options.timeout = timeout
        options.name = "child \(mode)"
        return ProcessRunner(options: options).run([child, mode, "5"])
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: child)))
    func measuresAChildFromItsRusageAndTrace() {
        let result = Self.run("ok")
        #expect(result.error == nil)
        #expect(result.metric("wall")?.samples.count == 3)
        #expect(result.metric("process.max_rss")?.samples.allSatisfy { $0 > 0 } == true)
        #expect(result.metric("process.cpu.user")?.samples.count == 3)
        #expect(result.metric("process.context_switches.voluntary")?.samples.count == 3)
        #expect(result.metrics.allSatisfy { !$0.name.hasPrefix("cpu.") && !$0.name.hasPrefix("thread.") })
        let load = result.metric("interval:load:sum")
        #expect(load?.samples.count == 3)
        #expect(load?.samples.allSatisfy { $0 >= 5_000_000 } == true)
        #expect(result.metric("counter:items:last")?.samples == [42, 42, 42])
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: child)))
    func crashingChildIsReported() {
        let result = Self.run("crash")
        #expect(result.error?.contains("crashed with signal 11") == true)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: child)))
    func failingChildIsReported() {
        #expect(Self.run("fail").error?.contains("exited with status 3") == true)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: child)))
    func hangingChildIsStoppedAtTheTimeout() {
        let start = Date()
        let result = Self.run("hang", iterations: 1, timeout: 0.5)
        #expect(result.error?.contains("timeout") == true)
        #expect(Date().timeIntervalSince(start) < 10)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: child)))
    func childWithoutTraceIsReported() {
        #expect(Self.run("no-trace").error?.contains("wrote no trace") == true)
    }

    /// The runner spells the variable that names a child's trace itself (it
    /// links no recording runtime); it must be the one the SDK reads.
    @Test func theRunnerNamesTheVariableTheSDKReads() {
        #expect(ProcessRunner.traceOutputVariable == TraceSession.outputEnvironmentVariable)
    }

    @Test func missingCommandIsReported() {
        var options = ProcessRunner.Options()
        options.iterations = 1
        let result = ProcessRunner(options: options).run(["/nonexistent/program"])
        #expect(result.error?.contains("cannot start /nonexistent/program") == true)
    }
}

@Suite(.processWide) struct ResultsFileTests {
    static let sample = PerfRun(
        metadata: RunMetadata(
            suite: "suite", gitCommit: "abc", host: "host", os: "Debian", cpuModel: "CPU", coreCount: 2,
            buildConfiguration: "release", timestamp: 1_700_000_000_000_000_000, tags: ["device": "a", "build": "pr"]),
        tests: [
            PerfTestResult(
                name: "t",
                metrics: [
                    PerfMetric(name: "wall", unit: "ns", samples: [1, 2.5, 3]),
                    PerfMetric(name: "items", unit: "count", better: .higher, samples: [10]),
                ], error: nil, warmupIterations: 2, tracePaths: ["/tmp/x.pftrace"]),
            PerfTestResult(name: "broken", metrics: [], error: "setup failed", warmupIterations: 1),
        ])

    @Test func roundTrips() throws {
        let bytes = ResultsFile.encode(Self.sample)
        #expect(try ResultsFile.decode(bytes, path: "memory") == Self.sample)
        var profiled = Self.sample
        var builder = CallStackProfileBuilder(nanosecondsPerSample: 1e9 / 999)
        builder.add(["main", "work", "libm.so.6+0x72c29"], samples: 3)
        builder.add(["main", "work"], samples: 5)
        builder.add(["main", "work", "libm.so.6+0x72bad"])
        builder.finishIteration(lostSamples: 2, method: "perf_event")
        profiled.tests[0].profile = builder.profile
        #expect(try ResultsFile.decode(ResultsFile.encode(profiled), path: "memory") == profiled)
        var pathed = Self.sample
        pathed.tests[0].criticalPaths = [
            CriticalPathRecord(
                interval: "apply",
                iterations: [
                    CriticalPathRecord.Iteration(
                        names: ["worker 1", "worker 0"],
                        waits: [
                            .init(waiter: "worker 1", waitedFor: "worker 0"), .init(waiter: nil, waitedFor: "worker 1"),
                        ]),
                    CriticalPathRecord.Iteration(names: ["worker 0"]),
                ])
        ]
        let decoded = try ResultsFile.decode(ResultsFile.encode(pathed), path: "memory")
        #expect(decoded == pathed)
        #expect(decoded.tests[0].criticalPaths.first?.iterations.first?.waits.first?.waiter == nil)
    }

    @Test func aProfileGivesEachFunctionsTimePerIteration() throws {
        var builder = CallStackProfileBuilder(nanosecondsPerSample: 1_000_000)
        builder.add(["main", "work", "libm.so.6+0x72c29"], samples: 3)
        builder.add(["main", "work"], samples: 5)
        builder.add(["main", "work", "libm.so.6+0x72bad"])
        // Recursion counts a function once per sample in its inclusive time.
        builder.add(["main", "work", "work"], samples: 2)
        builder.finishIteration(lostSamples: 0, method: nil)
        builder.finishIteration(lostSamples: 1, method: "cpu_timer")
        let profile = builder.profile
        #expect(profile.functions == ["main", "work", "libm.so.6 (no symbol)"])
        #expect(profile.iterations == 2 && profile.lostSamples == 1 && profile.method == "cpu_timer")
        let times = profile.timePerIteration
        #expect(times["work"]?.inclusive == 5_500_000)
        #expect(times["work"]?.exclusive == 3_500_000)
        #expect(times["libm.so.6 (no symbol)"]?.inclusive == 2_000_000)
        #expect(times["main"]?.exclusive == 0)
        #expect(profile.callees["work"] == ["libm.so.6 (no symbol)"])
    }

    @Test func aProfileNamingAFunctionItDoesNotHaveIsRefused() throws {
        var run = Self.sample
        run.tests[0].profile = CallStackProfile(
            functions: ["main"], stacks: [.init(frames: [0, 4], samples: 1)], nanosecondsPerSample: 1, iterations: 1)
        let error = #expect(throws: ResultsFileError.self) {
            try ResultsFile.decode(ResultsFile.encode(run), path: "bad.strobe-results")
        }
        #expect(error?.description.contains("bad.strobe-results") == true)
        #expect(error?.description.contains("function 4 of 1") == true)
    }

    @Test func corruptFilesGiveClearErrorsNeverCrashes() {
        #expect(throws: ResultsFileError.self) { try ResultsFile.decode([], path: "empty") }
        #expect(throws: ResultsFileError.self) { try ResultsFile.read("/nonexistent/file.strobe-results") }
        let bytes = ResultsFile.encode(Self.sample)
        var generator = SystemRandomNumberGenerator()
        for length in 0..<bytes.count { _ = try? ResultsFile.decode(Array(bytes[0..<length]), path: "prefix") }
        for _ in 0..<500 {
            var damaged = bytes
            damaged[Int.random(in: 0..<damaged.count, using: &generator)] ^= UInt8.random(
                in: 1...255, using: &generator)
            _ = try? ResultsFile.decode(damaged, path: "flipped")
        }
        do {
            _ = try ResultsFile.decode([0xFF, 0xFF, 0xFF], path: "garbage.strobe-results")
            Issue.record("garbage decoded")
        } catch {
            #expect(error.description.hasPrefix("garbage.strobe-results: not a results file"))
        }
    }

    @Test func exportsCSVThatDiffCanRead() {
        let csv = ResultsCSV.render(Self.sample)
        let lines = csv.split(separator: "\n")
        #expect(lines[0] == "suite,test,metric,unit,better,run,round,iteration,value,build,device")
        #expect(lines[1] == "suite,t,t/wall,ns,lower,,,0,1.0,pr,a")
        #expect(lines[4] == "suite,t,t/items,count,higher,,,0,10.0,pr,a")
        #expect(lines.count == 1 + 4)
    }
}
