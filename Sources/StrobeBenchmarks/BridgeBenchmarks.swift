import CStrobe
import CoreMetrics
import Strobe
import StrobeMetrics

/// The cost of recording through the bridges, beside the core's own call.
enum BridgeBenchmarks {
    static func run() {
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
}

@inline(never)
func timeMetricsIncrements(_ counter: Counter, _ count: Int) -> Double {
    let start = cstrobe_monotonic_ns()
    for _ in 0..<count { counter.increment() }
    return Double(cstrobe_monotonic_ns() - start)
}
