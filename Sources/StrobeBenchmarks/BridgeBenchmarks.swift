#if StrobeMetrics && StrobeTracing
import StrobeTestSupport
import Foundation
import CStrobe
import CoreMetrics
import Strobe
import StrobeMetrics
import StrobeTracing
import Tracing

/// The cost of recording through the bridges, beside the core's own call.
enum BridgeBenchmarks {
    static func run() {
        metrics()
        tracing()
    }

    static func metrics() {
        let count = 1_000_000
        let factory = StrobeMetricsFactory()
        let counter = Counter(label: "bridge counter", factory: factory)
        let core = median(runs: 5) {
            CoreBenchmarks.withSession { timeCounters(count) / Double(count) }
        }
        let bridged = median(runs: 5) {
            CoreBenchmarks.withSession { timeMetricsIncrements(counter, count) / Double(count) }
        }
        Figure(
            name: "swift-metrics Counter.increment through StrobeMetrics", value: bridged, unit: "ns/event",
            baselineName: "Trace.counter, same run", baselineValue: core
        ).printLine()
    }

    /// A session whose buffers hold every span of a run, so the background
    /// writer stays idle while the calling thread is timed (it encodes at
    /// the stop), as in the core figures.
    static var spanConfiguration: TraceConfiguration {
        var configuration = CoreBenchmarks.quietConfiguration()
        configuration.bufferSizePerThread = 512 << 20
        return configuration
    }

    static func tracing() {
        InstrumentationSystem.bootstrap(StrobeTracer())
        let count = 100_000
        // Warm the chunk pool and the name table.
        CoreBenchmarks.withSession(spanConfiguration) {
            _ = timeAsyncIntervals(count)
            _ = timeSpans(count)
        }
        /// The median over 5 sessions of `time`'s nanoseconds per span.
        func perSpanWhileRecording(_ time: (Int) -> Double) -> Double {
            median(runs: 5) { CoreBenchmarks.withSession(spanConfiguration) { time(count) / Double(count) } }
        }
        let core = perSpanWhileRecording(timeAsyncIntervals)
        // The tracer called directly, as the no-op tracer is, the two
        // alternating in one process: Strobe's own share of a span is the
        // difference, and swift-distributed-tracing's share (the task-local
        // context, the default instants) is what the no-op tracer costs.
        var samples: [String: [Double]] = [:]
        for _ in 0..<7 {
            CoreBenchmarks.withSession(spanConfiguration) {
                samples["strobe", default: []].append(timeSpans(StrobeTracer(), count) / Double(count))
                samples["noop", default: []].append(timeSpans(NoOpTracer(), count) / Double(count))
                samples["strobe attribute", default: []].append(
                    timeSpansWithOneAttribute(StrobeTracer(), count) / Double(count))
                samples["noop attribute", default: []].append(
                    timeSpansWithOneAttribute(NoOpTracer(), count) / Double(count))
            }
        }
        let figures = samples.mapValues(median)
        let direct = figures["strobe"]!
        let noOp = figures["noop"]!
        Figure(
            name: "StrobeTracer().withSpan while recording", value: direct, unit: "ns/span",
            baselineName: "NoOpTracer().withSpan, same run", baselineValue: noOp,
            target: "value - baseline <= 150 ns",
            extra: ["strobe_share_ns": direct - noOp, "beginAsync_end_ns": core]
        ).printLine()
        let attributedDirect = figures["strobe attribute"]!
        let attributedNoOp = figures["noop attribute"]!
        Figure(
            name: "StrobeTracer().withSpan with 1 attribute while recording", value: attributedDirect,
            unit: "ns/span", baselineName: "NoOpTracer().withSpan with 1 attribute, same run",
            baselineValue: attributedNoOp, target: "value - baseline <= 220 ns",
            extra: ["strobe_share_ns": attributedDirect - attributedNoOp]
        ).printLine()
        // Through the global function, which asks InstrumentationSystem
        // for the tracer (a lock and dynamic casts) on every call.
        let throughTheGlobalFunction: [(name: String, time: (Int) -> Double)] = [
            ("swift-distributed-tracing withSpan through StrobeTracing", { timeSpans($0) }),
            ("withSpan with 2 attributes through StrobeTracing", timeSpansWithAttributes),
        ]
        for (name, time) in throughTheGlobalFunction {
            Figure(
                name: name, value: perSpanWhileRecording(time), unit: "ns/span",
                baselineName: "Trace.beginAsync + AsyncInterval.end, same run", baselineValue: core
            ).printLine()
        }
        // With no session, what is left is swift-distributed-tracing's own
        // bookkeeping: compare with its no-op tracer.
        let idleNoOp = median(runs: 5) { timeSpans(NoOpTracer(), count) / Double(count) }
        let idleSpans = median(runs: 5) { timeSpans(StrobeTracer(), count) / Double(count) }
        Figure(
            name: "StrobeTracer().withSpan, no session", value: idleSpans, unit: "ns/span",
            baselineName: "NoOpTracer().withSpan, same run", baselineValue: idleNoOp
        ).printLine()
        spanAllocationFigure()
        uniqueNameMemoryFigure()
    }

    /// Resident memory gained over 1 M spans with unique names (a URL per
    /// request), streamed to a file: the second million beside the first,
    /// which fills the thread's buffers and the writer's tables. Names are
    /// written into the trace, not kept, so the second million adds about
    /// nothing.
    static func uniqueNameMemoryFigure() {
        let count = 1_000_000
        let tracer = StrobeTracer()
        let path = CoreBenchmarks.temporaryPath("unique-names")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        let session = try! TraceSession.start(configuration)
        let start = residentBytes()
        var marks: [UInt64] = []
        for million in 0..<3 {
            for index in (million * count)..<((million + 1) * count) {
                tracer.withSpan("GET /photos/\(index)") { _ in }
            }
            marks.append(residentBytes())
        }
        let dropped = session.statistics.discardedEvents
        try! session.stop()
        let first = marks[0]
        let second = marks[2] - min(marks[2], marks[1]) + first
        let firstGrowth = Double(first) - Double(start)
        let secondGrowth = Double(second) - Double(first)
        Figure(
            name: "resident memory gained over the 3rd million spans with unique names",
            value: secondGrowth / 1_048_576, unit: "MiB",
            baselineName: "over the 1st million, same run", baselineValue: firstGrowth / 1_048_576,
            target: "value about 0 (flat)",
            extra: ["bytes_per_span": secondGrowth / Double(count), "events_discarded": Double(dropped)]
        ).printLine()
    }

    /// The process's resident set, in bytes (Linux `/proc/self/statm`).
    static func residentBytes() -> UInt64 {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = UInt64(fields[1]) else { return 0 }
        return pages * UInt64(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Heap allocations per span on the calling thread, with the writer
    /// idle; the baseline is the same loop through swift-distributed-tracing's
    /// no-op tracer, which is what the library itself allocates.
    static func spanAllocationFigure() {
        let count = 10_000
        let strobe = CoreBenchmarks.withSession(spanConfiguration) { () -> UInt64 in
            _ = timeSpans(StrobeTracer(), 100)
            return AllocationCount.during { _ = timeSpans(StrobeTracer(), count) }.allocations
        }
        _ = timeSpans(NoOpTracer(), 100)
        let noOp = AllocationCount.during { _ = timeSpans(NoOpTracer(), count) }.allocations
        Figure(
            name: "heap allocations per withSpan through StrobeTracing", value: Double(strobe) / Double(count),
            unit: "allocations/span", baselineName: "NoOpTracer().withSpan, same run",
            baselineValue: Double(noOp) / Double(count),
            extra: ["counter_active": AllocationCount.isActive ? 1 : 0]
        ).printLine()
    }
}

@inline(never)
func timeMetricsIncrements(_ counter: Counter, _ count: Int) -> Double {
    nanoseconds(repeating: count) { _ in counter.increment() }
}

@inline(never)
func timeAsyncIntervals(_ count: Int) -> Double {
    nanoseconds(repeating: count) { _ in Trace.beginAsync("span").end() }
}

@inline(never)
func timeSpans(_ count: Int) -> Double {
    nanoseconds(repeating: count) { _ in withSpan("span") { _ in } }
}

@inline(never)
func timeSpans(_ tracer: some Tracer, _ count: Int) -> Double {
    nanoseconds(repeating: count) { _ in tracer.withSpan("span") { _ in } }
}

@inline(never)
func timeSpansWithOneAttribute(_ tracer: some Tracer, _ count: Int) -> Double {
    nanoseconds(repeating: count) { _ in
        tracer.withSpan("span") { span in span.attributes["http.route"] = "/photos/{id}" }
    }
}

@inline(never)
func timeSpansWithAttributes(_ count: Int) -> Double {
    nanoseconds(repeating: count) { index in
        withSpan("span") { span in
            span.attributes["http.route"] = "/photos/{id}"
            span.attributes["http.response.status_code"] = index & 0xFF
        }
    }
}
#endif
