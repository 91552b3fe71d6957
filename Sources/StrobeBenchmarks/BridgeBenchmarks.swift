import CMallocCounter
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

    static func tracing() {
        InstrumentationSystem.bootstrap(StrobeTracer())
        let count = 100_000
        // Warm the chunk pool and the name table.
        CoreBenchmarks.withSession {
            _ = timeAsyncIntervals(count)
            _ = timeSpans(count)
        }
        let core = median(runs: 5) {
            CoreBenchmarks.withSession { timeAsyncIntervals(count) / Double(count) }
        }
        let spans = median(runs: 5) {
            CoreBenchmarks.withSession { timeSpans(count) / Double(count) }
        }
        Figure(
            name: "swift-distributed-tracing withSpan through StrobeTracing", value: spans, unit: "ns/span",
            baselineName: "Trace.beginAsync + AsyncInterval.end, same run", baselineValue: core
        ).printLine()
        let attributed = median(runs: 5) {
            CoreBenchmarks.withSession { timeSpansWithAttributes(count) / Double(count) }
        }
        Figure(
            name: "withSpan with 2 attributes through StrobeTracing", value: attributed, unit: "ns/span",
            baselineName: "Trace.beginAsync + AsyncInterval.end, same run", baselineValue: core
        ).printLine()
        // With no session, what is left is swift-distributed-tracing's own
        // bookkeeping: compare with its no-op tracer.
        let idleNoOp = median(runs: 5) { timeSpans(NoOpTracer(), count) / Double(count) }
        let idleSpans = median(runs: 5) { timeSpans(StrobeTracer(), count) / Double(count) }
        Figure(
            name: "StrobeTracer().withSpan, no session", value: idleSpans, unit: "ns/span",
            baselineName: "NoOpTracer().withSpan, same run", baselineValue: idleNoOp
        ).printLine()
        spanAllocationFigure()
    }

    /// Heap allocations per span on the calling thread, with the writer
    /// idle; the baseline is the same loop through swift-distributed-tracing's
    /// no-op tracer, which is what the library itself allocates.
    static func spanAllocationFigure() {
        let count = 10_000
        let strobe = CoreBenchmarks.withSession { () -> UInt64 in
            _ = timeSpans(StrobeTracer(), 100)
            let before = cmalloc_counter_allocations()
            _ = timeSpans(StrobeTracer(), count)
            return cmalloc_counter_allocations() - before
        }
        _ = timeSpans(NoOpTracer(), 100)
        let before = cmalloc_counter_allocations()
        _ = timeSpans(NoOpTracer(), count)
        let noOp = cmalloc_counter_allocations() - before
        Figure(
            name: "heap allocations per withSpan through StrobeTracing", value: Double(strobe) / Double(count),
            unit: "allocations/span", baselineName: "NoOpTracer().withSpan, same run",
            baselineValue: Double(noOp) / Double(count),
            extra: ["counter_active": cmalloc_counter_is_active() != 0 ? 1 : 0]
        ).printLine()
    }
}

@inline(never)
func timeMetricsIncrements(_ counter: Counter, _ count: Int) -> Double {
    let start = cstrobe_monotonic_ns()
    for _ in 0..<count { counter.increment() }
    return Double(cstrobe_monotonic_ns() - start)
}

@inline(never)
func timeAsyncIntervals(_ count: Int) -> Double {
    let start = cstrobe_monotonic_ns()
    for _ in 0..<count { Trace.beginAsync("span").end() }
    return Double(cstrobe_monotonic_ns() - start)
}

@inline(never)
func timeSpans(_ count: Int) -> Double {
    let start = cstrobe_monotonic_ns()
    for _ in 0..<count { withSpan("span") { _ in } }
    return Double(cstrobe_monotonic_ns() - start)
}

@inline(never)
func timeSpans(_ tracer: some Tracer, _ count: Int) -> Double {
    let start = cstrobe_monotonic_ns()
    for _ in 0..<count { tracer.withSpan("span") { _ in } }
    return Double(cstrobe_monotonic_ns() - start)
}

@inline(never)
func timeSpansWithAttributes(_ count: Int) -> Double {
    let start = cstrobe_monotonic_ns()
    for index in 0..<count {
        withSpan("span") { span in
            span.attributes["http.route"] = "/photos/{id}"
            span.attributes["http.response.status_code"] = index & 0xFF
        }
    }
    return Double(cstrobe_monotonic_ns() - start)
}
