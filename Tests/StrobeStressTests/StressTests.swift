import Foundation
import Strobe
import StrobeReader
import StrobeTestSupport
import StrobeTestTraits
import Testing

/// Many threads with tiny buffers and a starved writer: every event is
/// accounted for, exactly, per thread. Seconds of every core, so they run
/// only when asked (`make test`, `make test-stress` and `make tsan` set
/// `STROBE_STRESS_TESTS=1`); a plain `swift test` reports them skipped.
@Suite(
    .serialized, .processWide,
    .enabled(
        if: ProcessInfo.processInfo.environment["STROBE_STRESS_TESTS"] == "1",
        "seconds of every core: set STROBE_STRESS_TESTS=1, as make test does"))
struct StressTests {
    /// One thread's mix of events; returns how many it emitted (ends of
    /// async intervals whose begin was discarded are not events: the call
    /// returns at once).
    static func mix(thread: Int, loops: Int) -> Int {
        let interval = Trace.Name("t\(thread)")
        let counter = Trace.Name("c\(thread)")
        let instant = Trace.Name("i\(thread)")
        let async = Trace.Name("a\(thread)")
        var emitted = 0
        for index in 0..<loops {
            let flow = Trace.Flow()
            Trace.begin(interval, flow: flow)
            Trace.counter(counter, Int64(index))
            Trace.begin(interval, terminatingFlow: flow)
            Trace.instant(instant)
            Trace.end()
            let pending = Trace.beginAsync(async)
            Trace.end()
            emitted += 7
            if pending.id != 0 {
                pending.end()
                emitted += 1
            }
        }
        return emitted
    }

    @Test func sixtyFourThreadsAccountForEveryEventExactly() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        configuration.bufferSizePerThread = 1
        configuration.flushInterval = .seconds(10)
        let threads = 64
        let emitted = Locked<[Int: Int]>([:])
        let session = try TraceSession.start(configuration)
        let group = DispatchGroup()
        for thread in 0..<threads {
            group.enter()
            Thread {
                // Loop counts differ per thread, so each thread's total is
                // its own and the trace's per-buffer counts map back to it.
                // ThreadSanitizer runs this 20 times slower, and finds races
                // where the threads overlap, not by volume: a fifth of the
                // loops still fills every buffer many times over.
                let base = ProcessMemory.isThreadSanitized ? 300 : 1500
                let count = Self.mix(thread: thread, loops: base + 13 * thread)
                emitted.withLock { $0[thread] = count }
                group.leave()
            }.start()
        }
        group.wait()
        try session.stop()
        let statistics = session.statistics
        let byThread = emitted.withLock { $0 }
        let total = byThread.values.reduce(0, +)
        #expect(statistics.discardedEvents > 0, "8 KiB buffers and a starved writer must discard")
        #expect(statistics.overwrittenEvents == 0)
        #expect(Int(statistics.recordedEvents + statistics.discardedEvents) == total)

        let trace = try TraceReader.read(contentsOf: path)
        #expect(trace.isComplete)
        let buffers = trace.loss.threads.filter { $0.recorded + $0.discarded > 0 }
        #expect(buffers.count == threads)
        #expect(buffers.reduce(0) { $0 + $1.recorded } == statistics.recordedEvents)
        #expect(buffers.reduce(0) { $0 + $1.discarded } == statistics.discardedEvents)
        // Per thread: the buffer whose recorded + discarded is the thread's
        // emitted count, and every recorded event of the thread in the file.
        // Two threads may emit the same count by chance (whether an async
        // begin was kept changes a thread's count); such threads are matched
        // with their buffers as a group.
        #expect(buffers.allSatisfy { $0.overwritten == 0 })
        let buffersByTotal = Dictionary(grouping: buffers) { Int($0.recorded + $0.discarded) }
        let threadsByCount = Dictionary(grouping: byThread.keys) { byThread[$0]! }
        for (count, group) in threadsByCount {
            let matches = buffersByTotal[count] ?? []
            #expect(matches.count == group.count, "threads \(group.sorted()): \(count) events emitted")
            var inFile: [Int] = []
            for thread in group {
                let intervals = trace.intervals(named: "t\(thread)")
                #expect(intervals.allSatisfy { $0.duration != nil }, "thread \(thread): a kept begin keeps its end")
                let asyncIntervals = trace.intervals(named: "a\(thread)")
                #expect(
                    asyncIntervals.allSatisfy { $0.duration != nil },
                    "thread \(thread): a kept async begin keeps its end")
                inFile.append(
                    intervals.count * 2 + asyncIntervals.count * 2
                        + (trace.counter(named: "c\(thread)")?.samples.count ?? 0)
                        + trace.instants.filter { $0.name == "i\(thread)" }.count)
            }
            #expect(
                inFile.sorted() == matches.map { Int($0.recorded) }.sorted(),
                "threads \(group.sorted()): recorded events in the file")
        }
    }

    /// Ten thousand threads, sixteen at a time, each recording three events
    /// and exiting, in a child process (`TraceChild churn`): its resident
    /// memory is then the session's alone, where in this process the suites
    /// running beside this one moved it by 26 MB (a CI run on an Intel Xeon,
    /// 2 cores, with the tools' test build beside it).
    @Test func tenThousandShortLivedThreadsLeakNothing() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let total = 10_000
        let outcome = try runProgram(builtProgram("TraceChild"), ["churn", "\(total)", path], timeLimit: 300)
        try #require(outcome.status == 0, "TraceChild churn: \(outcome.errors)")
        let lines = outcome.output.split(separator: "\n")
        let resident = lines.compactMap { $0.hasPrefix("resident ") ? Int($0.dropFirst("resident ".count)) : nil }
        let counts = try #require(lines.last { $0.hasPrefix("threads ") }).split(separator: " ")
        #expect(resident.count == 5)
        #expect(counts.count == 4 && Int(counts[1]) ?? 0 >= total, "\(counts)")
        #expect(counts.count == 4 && counts[3] == "0", "discarded events: \(counts)")
        // After the first fifth, memory stays on a flat line: exited threads'
        // recorders, chunks and encoder state are all released.
        let settled = resident.dropFirst(resident.count / 5)
        if !ProcessMemory.isThreadSanitized, let low = settled.min(), let high = settled.max() {
            #expect(high - low < 16 << 20, "resident memory moved \(high - low) bytes: \(resident)")
        }
        let trace = try TraceReader.read(contentsOf: path)
        #expect(trace.isComplete)
        let indexes = (trace.counter(named: "churn index")?.samples ?? []).map { Int($0.value) }.sorted()
        #expect(indexes == Array(0..<total), "every thread's events are in the file")
        #expect(trace.intervals(named: "churn").count == total)
        #expect(trace.intervals(named: "churn").allSatisfy { $0.duration != nil })
        #expect(trace.instants.filter { $0.name == "churn instant" }.count == total)
    }
}

/// A value guarded by a lock.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
