import CStrobe
import Foundation
import Strobe
import StrobeTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Figures of the recording core: cost per call against one
/// `clock_gettime(CLOCK_MONOTONIC)`, measured in the same process.
enum CoreBenchmarks {
    static let eventsPerRun = 1_000_000
    static let runs = 7

    static func temporaryPath(_ name: String) -> String {
        NSTemporaryDirectory() + "strobe-bench-\(getpid())-\(name).pftrace"
    }

    /// A session that only records to memory and never flushes during a run.
    static func quietConfiguration(path: String? = nil) -> TraceConfiguration {
        var configuration = TraceConfiguration(outputPath: path)
        configuration.flushInterval = .seconds(1000)
        configuration.processSamplingInterval = .zero
        return configuration
    }

    static func withSession<Result>(
        _ configuration: TraceConfiguration = quietConfiguration(), _ body: () -> Result
    ) -> Result {
        let session = try! TraceSession.start(configuration)
        let result = body()
        try! session.stop()
        return result
    }

    static func clockBaseline() -> Double {
        median(runs: runs) { timeClockGettime(eventsPerRun) / Double(eventsPerRun) }
    }

    static func rusageBaseline() -> Double {
        median(runs: runs) { timeGetrusage(20_000) / 20_000 }
    }

    static func run() {
        let clock = clockBaseline()
        let rusage = rusageBaseline()
        let baselineName = "clock_gettime(CLOCK_MONOTONIC)"

        // Warm the chunk pool so runs measure steady state, not first-touch page faults.
        withSession {
            _ = timeBegins(eventsPerRun)
            _ = timeEnds(eventsPerRun)
        }

        let begin = median(runs: runs) {
            withSession {
                let elapsed = timeBegins(eventsPerRun)
                _ = timeEnds(eventsPerRun)
                return elapsed / Double(eventsPerRun)
            }
        }
        let end = median(runs: runs) {
            withSession {
                _ = timeBegins(eventsPerRun)
                return timeEnds(eventsPerRun) / Double(eventsPerRun)
            }
        }
        let pair = median(runs: runs) {
            withSession { timePairs(eventsPerRun / 2) / Double(eventsPerRun / 2) }
        }
        let counter = median(runs: runs) {
            withSession { timeCounters(eventsPerRun) / Double(eventsPerRun) }
        }
        let disabled = median(runs: runs) { timePairs(eventsPerRun * 10) / Double(eventsPerRun * 20) }
        let withUsage = median(runs: runs) {
            withSession { timeResourceUsageIntervals(20_000) / 20_000 }
        }

        let againstTheClock: [(name: String, value: Double, unit: String, target: String)] = [
            ("begin", begin, "ns/event", "ratio <= 0.6"),
            ("end", end, "ns/event", "ratio <= 0.6"),
            ("begin+end pair", pair, "ns/pair", "ratio <= 1.2"),
            ("counter", counter, "ns/event", "ratio <= 0.6"),
            ("disabled (no session), per call", disabled, "ns/call", "value <= 1 ns"),
        ]
        for figure in againstTheClock {
            Figure(
                name: figure.name, value: figure.value, unit: figure.unit, baselineName: baselineName,
                baselineValue: clock, target: figure.target
            ).printLine()
        }
        Figure(
            name: "interval with rusage at both ends", value: withUsage, unit: "ns/interval",
            baselineName: "getrusage(RUSAGE_THREAD)", baselineValue: rusage, target: "ratio <= 2.2"
        ).printLine()

        // What an event adds above reading its timestamp: the cycle counter
        // (rdtsc where the CPU has an invariant TSC), read in the same run.
        let timestamp = median(runs: runs) { timeFastTimestamps(eventsPerRun) / Double(eventsPerRun) }
        for (name, value) in [("begin", begin), ("end", end)] {
            Figure(
                name: "\(name) above the timestamp read", value: value - timestamp, unit: "ns/event",
                baselineName: "cstrobe_fast_timestamp() (rdtsc)", baselineValue: timestamp,
                target: "value <= 4 ns", extra: ["event_ns": value]
            ).printLine()
        }

        discardFigure(clock: clock)
        allocationFigure(clock: clock)
        twoThreadFigure()
    }

    /// What a counter costs when its thread's buffer is full
    /// (`whenBufferFull: .discardNewest`, the smallest buffer, filled
    /// first): an event finds no room until the writer has drained the
    /// buffer, and is counted as discarded. The writer still drains now and
    /// then, so some timed events are recorded; the share discarded is
    /// printed beside the figure. A discard should cost no more than a
    /// recorded event.
    static func discardFigure(clock: Double) {
        var configuration = quietConfiguration()
        configuration.bufferSizePerThread = 1
        configuration.whenBufferFull = .discardNewest
        var discarded: UInt64 = 0
        let perEvent = median(runs: runs) {
            let session = try! TraceSession.start(configuration)
            _ = timeCounters(eventsPerRun / 10)
            let before = session.statistics.discardedEvents
            let elapsed = timeCounters(eventsPerRun)
            discarded = session.statistics.discardedEvents - before
            try! session.stop()
            return elapsed / Double(eventsPerRun)
        }
        Figure(
            name: "counter discarded (buffer full)", value: perEvent, unit: "ns/event",
            baselineName: "clock_gettime(CLOCK_MONOTONIC)", baselineValue: clock, target: "ratio <= 0.6",
            extra: ["discarded_per_timed_event": Double(discarded) / Double(eventsPerRun)]
        ).printLine()
    }

    static func allocationFigure(clock: Double) {
        let active = AllocationCount.isActive
        let (allocations, events, baselineAllocations) = withSession { () -> (UInt64, Int, UInt64) in
            // Attach the thread first, so only steady-state events are counted.
            Trace.begin("warm")
            Trace.end()
            let events = 200_000
            let allocations = AllocationCount.during {
                for _ in 0..<(events / 4) {
                    Trace.begin("allocation check")
                    Trace.counter("allocation counter", 1)
                    Trace.instant("allocation instant")
                    Trace.end()
                }
            }.allocations
            // Baseline: one Swift array allocation per iteration, to prove the counter counts.
            let (sink, baseline) = AllocationCount.during {
                var sink = 0
                for index in 0..<1000 { sink &+= makeArray(index).count }
                return sink
            }
            if sink == -1 { print(sink) }
            return (allocations, events, baseline)
        }
        Figure(
            name: "heap allocations per event (StaticString names)",
            value: Double(allocations) / Double(events), unit: "allocations/event",
            baselineName: "allocations per [Int] array creation (counter check)",
            baselineValue: Double(baselineAllocations) / 1000,
            target: "value == 0", extra: ["counter_active": active ? 1 : 0]
        ).printLine()
    }

    /// Two threads record flat out, `eventsPerThread` begin/end events each,
    /// with the default configuration; the figure is the per-thread cost
    /// against one thread running the same loop under the same configuration,
    /// and the events lost.
    static func twoThreadFigure() {
        let eventsPerThread = 2_000_000
        let path = temporaryPath("two-threads")
        let configuration = TraceConfiguration(outputPath: path)
        var single: [Double] = []
        var double: [Double] = []
        var lost: UInt64 = 0
        var recorded: UInt64 = 0
        for _ in 0..<5 {
            for threadCount in [1, 2] {
                let session = try! TraceSession.start(configuration)
                let results = Mutex2Results()
                let threads = (0..<threadCount).map { _ in
                    Thread {
                        let elapsed = timePairs(eventsPerThread / 2)
                        results.append(elapsed / Double(eventsPerThread))
                    }
                }
                threads.forEach { $0.start() }
                while results.count < threadCount { usleep(1000) }
                try! session.stop()
                let statistics = session.statistics
                let cost = results.values.reduce(0, +) / Double(threadCount)
                if threadCount == 1 {
                    single.append(cost)
                } else {
                    double.append(cost)
                    lost += statistics.discardedEvents + statistics.overwrittenEvents
                    recorded += statistics.recordedEvents
                }
            }
        }
        try? FileManager.default.removeItem(atPath: path)
        single.sort()
        double.sort()
        Figure(
            name: "2 threads x 2M begin/end events, per-thread cost", value: double[double.count / 2], unit: "ns/event",
            baselineName: "1 thread x 2M begin/end events, same configuration", baselineValue: single[single.count / 2],
            target: "ratio <= 1.3, events_lost == 0",
            extra: [
                "events_lost": Double(lost), "events_recorded": Double(recorded), "runs": Double(double.count),
                "events_per_thread": Double(eventsPerThread),
            ]
        ).printLine()
    }
}

/// A small thread-safe list of results; `@unchecked Sendable` because
/// `stored` is reached only while holding `lock`.
final class Mutex2Results: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [Double] = []
    func append(_ value: Double) {
        lock.lock()
        stored.append(value)
        lock.unlock()
    }
    var values: [Double] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
    var count: Int { values.count }
}

@inline(never)
func makeArray(_ index: Int) -> [Int] { [index, index + 1] }

@inline(never)
func timeClockGettime(_ count: Int) -> Double {
    var sink: UInt64 = 0
    var spec = timespec()
    let elapsed = nanoseconds(repeating: count) { _ in
        clock_gettime(CLOCK_MONOTONIC, &spec)
        sink &+= UInt64(spec.tv_nsec)
    }
    if sink == 1 { print(sink) }
    return elapsed
}

@inline(never)
func timeFastTimestamps(_ count: Int) -> Double {
    var sink: UInt64 = 0
    let elapsed = nanoseconds(repeating: count) { _ in sink &+= cstrobe_fast_timestamp() }
    if sink == 1 { print(sink) }
    return elapsed
}

@inline(never)
func timeGetrusage(_ count: Int) -> Double {
    var usage = cstrobe_rusage()
    return nanoseconds(repeating: count) { _ in cstrobe_thread_rusage(&usage) }
}

@inline(never)
func timeBegins(_ count: Int) -> Double {
    nanoseconds(repeating: count) { _ in Trace.begin("benchmark interval") }
}

@inline(never)
func timeEnds(_ count: Int) -> Double {
    nanoseconds(repeating: count) { _ in Trace.end() }
}

@inline(never)
func timePairs(_ count: Int) -> Double {
    nanoseconds(repeating: count) { _ in
        Trace.begin("benchmark interval")
        Trace.end()
    }
}

@inline(never)
func timeCounters(_ count: Int) -> Double {
    nanoseconds(repeating: count) { index in Trace.counter("benchmark counter", Int64(index)) }
}

@inline(never)
func timeResourceUsageIntervals(_ count: Int) -> Double {
    nanoseconds(repeating: count) { _ in
        Trace.begin("benchmark rusage", capturing: .resourceUsage)
        Trace.end()
    }
}
