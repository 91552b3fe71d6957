import Foundation
import PerfettoWire
import Strobe
import StrobeProcessRunner
import StrobeResults
import StrobeTestSupport
import StrobeTestTraits
import Testing

@testable import StrobePerf

#if canImport(Glibc)
import Glibc
#endif

/// What the CPU metrics count: every thread of the process that did the
/// work, never Strobe's own writer; and the direction each metric carries.
@Suite(.serialized, .processWide)
struct ResourceMetricTests {
    /// Runs `count` threads that each burn `milliseconds` of CPU, and waits
    /// for all of them to exit.
    static func burnOnThreads(_ count: Int, milliseconds: Double) {
        var threads: [pthread_t] = []
        for _ in 0..<count {
            var thread = pthread_t()
            let box = Unmanaged.passRetained(NSNumber(value: milliseconds)).toOpaque()
            let created = pthread_create(
                &thread, nil,
                { context in
                    let milliseconds = Unmanaged<NSNumber>.fromOpaque(context!).takeRetainedValue().doubleValue
                    burnThreadCPU(milliseconds: milliseconds)
                    return nil
                }, box)
            precondition(created == 0, "pthread_create failed")
            threads.append(thread)
        }
        for thread in threads { pthread_join(thread, nil) }
    }

    static func runner(iterations: Int = 2) -> PerfRunner {
        var options = PerfRunner.Options()
        options.stopRule = .iterations(iterations)
        options.warmupIterations = 0
        return PerfRunner(options: options)
    }

    static func total(_ result: PerfTestResult, _ prefix: String, _ index: Int) -> Double {
        (result.metric("\(prefix).cpu.user")?.samples[index] ?? 0)
            + (result.metric("\(prefix).cpu.system")?.samples[index] ?? 0)
    }

    @Test func processCPUOfASyncTestCountsItsWorkerThreads() async throws {
        // The measuring thread burns 20 ms itself and 60 ms on each of two
        // workers: the process figure must hold all 140 ms, the thread
        // figure only its own 20.
        let test = PerfTest("workers") { _ in
            burnThreadCPU(milliseconds: 20)
            Self.burnOnThreads(2, milliseconds: 60)
        }
        let result = await Self.runner().run(test)
        #expect(result.error == nil)
        for index in 0..<2 {
            let process = Self.total(result, "process", index)
            let thread = Self.total(result, "thread", index)
            #expect(thread >= 15e6 && thread < 60e6, "thread CPU \(thread / 1e6) ms")
            #expect(process >= thread + 90e6, "process \(process / 1e6) ms, thread \(thread / 1e6) ms")
            let processUser = try #require(result.metric("process.cpu.user")?.samples[index])
            let threadUser = try #require(result.metric("thread.cpu.user")?.samples[index])
            #expect(processUser >= 1.5 * threadUser)
        }
    }

    @Test func processCPUOfAnAsyncTestCountsItsWorkerThreads() async {
        let test = PerfTest(
            "async workers",
            measureAsync: { _ in
                await Task.detached { Self.burnOnThreads(2, milliseconds: 60) }.value
            })
        let result = await Self.runner().run(test)
        #expect(result.error == nil)
        #expect(result.metric("thread.cpu.user") == nil)
        for index in 0..<2 {
            let process = Self.total(result, "process", index)
            #expect(process >= 90e6, "process \(process / 1e6) ms")
        }
    }

    @Test func theWritersCPUIsLeftOut() throws {
        // A block that records until the session's writer has spent 20 ms of
        // CPU encoding its events: the process figure, which would hold those
        // 20 ms, stays near what the recording thread itself used.
        var configuration = TraceConfiguration(
            outputPath: NSTemporaryDirectory() + "strobe-writer-cpu-\(getpid()).pftrace")
        configuration.flushInterval = .milliseconds(5)
        configuration.processSamplingInterval = .zero
        defer { try? FileManager.default.removeItem(atPath: configuration.outputPath!) }
        let session = try TraceSession.start(configuration)
        defer { try? session.stop() }
        let writerBefore = session.backgroundCPUTime
        let before = PerfRunner.ResourceReading(session: session, thread: true)
        let deadline = ProcessMeasurements.monotonicNanoseconds() + 20_000_000_000
        while session.backgroundCPUTime - writerBefore < .milliseconds(20),
            ProcessMeasurements.monotonicNanoseconds() < deadline
        {
            for _ in 0..<20_000 { Trace.interval("tick") {} }
            usleep(1000)
        }
        let after = PerfRunner.ResourceReading(session: session, thread: true)
        let writer = session.backgroundCPUTime - writerBefore
        #expect(writer >= .milliseconds(20), "the writer never got busy")

        let metrics = PerfRunner.resourceMetrics(wall: 1, before: before, after: after)
        func value(_ name: String) -> Double { metrics.first { $0.name == name }?.samples.first ?? -1 }
        let process = value("process.cpu.user") + value("process.cpu.system")
        let thread = value("thread.cpu.user") + value("thread.cpu.system")
        let writerNanoseconds = Double(writer.components.attoseconds) / 1e9 + Double(writer.components.seconds) * 1e9
        #expect(
            process < thread + writerNanoseconds / 2,
            "process \(process / 1e6) ms, thread \(thread / 1e6) ms, writer \(writerNanoseconds / 1e6) ms")
        #expect(process >= thread * 0.8, "process \(process / 1e6) ms, thread \(thread / 1e6) ms")
    }

    @Test func theWritersCPUTimeStaysReadableAfterTheStop() throws {
        let path = NSTemporaryDirectory() + "strobe-writer-final-\(getpid()).pftrace"
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = TraceConfiguration(outputPath: path)
        configuration.flushInterval = .milliseconds(1)
        let session = try TraceSession.start(configuration)
        for _ in 0..<10 {
            for _ in 0..<1_000 { Trace.interval("tick") {} }
            usleep(2_000)
        }
        let running = session.backgroundCPUTime
        try session.stop()
        let final = session.backgroundCPUTime
        #expect(running > .zero)
        #expect(final >= running)
        #expect(session.backgroundCPUTime == final)

        var unsampled = TraceConfiguration(outputPath: nil)
        unsampled.samplingProbability = 0
        let nothing = try TraceSession.start(unsampled)
        #expect(nothing.backgroundCPUTime == .zero)
        try nothing.stop()
    }

    @Test func everyIterationRunsUnderASessionWhetherOrNotItsTraceIsRead() async {
        let unread = await Self.runner().run(
            PerfTest("no trace metric") { context in
                context.report("recording", Trace.isRecording ? 1 : 0, better: .higher)
            })
        let read = await Self.runner().run(
            PerfTest("a trace metric", metrics: [.interval("x", .count)]) { context in
                Trace.interval("x") {}
                context.report("recording", Trace.isRecording ? 1 : 0, better: .higher)
            })
        #expect(unread.metric("recording")?.samples == [1, 1])
        #expect(read.metric("recording")?.samples == [1, 1])
        #expect(read.metric("interval:x:count")?.samples == [1, 1])
    }

    @Test func strobesCPUIsRemovedInTheProportionOfTheBlocksSplit() {
        func reading(user: Int64, system: Int64, strobe: UInt64) -> PerfRunner.ResourceReading {
            let usage = ResourceUsage(userNanoseconds: user, systemNanoseconds: system)
            return PerfRunner.ResourceReading(process: usage, thread: nil, strobeCPU: strobe)
        }
        let start = reading(user: 1_000, system: 500, strobe: 7)
        let metrics = PerfRunner.resourceMetrics(
            wall: 10, before: start, after: reading(user: 81_000, system: 20_500, strobe: 10_007))
        #expect(metrics.first { $0.name == "process.cpu.user" }?.samples == [72_000])
        #expect(metrics.first { $0.name == "process.cpu.system" }?.samples == [18_000])
        #expect(!metrics.contains { $0.name.hasPrefix("thread.") })
        // Strobe's reading can run ahead of the process's: never below zero.
        let ahead = PerfRunner.resourceMetrics(
            wall: 10, before: start, after: reading(user: 2_000, system: 500, strobe: 5_007))
        #expect(ahead.first { $0.name == "process.cpu.user" }?.samples == [0])
        #expect(ahead.first { $0.name == "process.cpu.system" }?.samples == [0])
    }

    @Test func directionGoesFromTheDeclarationToTheResultsFile() async throws {
        let directory = NSTemporaryDirectory() + "strobe-direction-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let test = PerfTest(
            "frames",
            metrics: [
                .counter("fps", .last, better: .higher), .counter("dropped", .max), .interval("frame", .sum),
                .interval("frame", .count, better: .higher),
            ]
        ) { context in
            Trace.interval("frame") { Trace.counter("fps", 60.0) }
            Trace.counter("dropped", 1)
            context.report("frames per second", 60, unit: "count/s", better: .higher)
        }
        let options = try PerfSuiteOptions.parse(["--iterations", "2", "--warmup", "0", "--results-dir", directory])
        _ = try await PerfSuite("direction", tests: [test]).run(options: options)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter {
            $0.hasSuffix(".strobe-results")
        }
        let run = try ResultsFile.read(directory + "/" + #require(files.first))
        let result = try #require(run.tests.first)
        #expect(result.metric("counter:fps:last")?.better == .higher)
        #expect(result.metric("counter:fps:last")?.samples == [60, 60])
        #expect(result.metric("counter:dropped:max")?.better == .lower)
        #expect(result.metric("interval:frame:sum")?.better == .lower)
        #expect(result.metric("interval:frame:count")?.better == .higher)
        #expect(result.metric("frames per second")?.better == .higher)
        #expect(result.metric("process.cpu.user")?.better == .lower)
    }

    @Test func aDirectionReadsFromBetterAndNothingElse() throws {
        let current = Data(#"{"name":"fps","unit":"count/s","better":"higher","samples":[60]}"#.utf8)
        let otherKey = Data(#"{"name":"fps","unit":"count/s","lowerIsBetter":false,"samples":[60]}"#.utf8)
        #expect(try JSONDecoder().decode(PerfMetric.self, from: current).better == .higher)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(PerfMetric.self, from: otherKey) }
        let written = try JSONEncoder().encode(PerfMetric(name: "fps", unit: "count/s", better: .higher, samples: [60]))
        #expect(String(decoding: written, as: UTF8.self).contains(#""better":"higher""#))
        #expect(TraceMetric.counter("fps", better: .higher).better == .higher)
        #expect(TraceMetric.interval("frame").better == .lower)
    }
}
