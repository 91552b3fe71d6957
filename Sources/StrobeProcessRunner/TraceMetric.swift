import StrobeReader
import StrobeResults

/// A metric a perf test takes from each iteration's trace.
public struct TraceMetric: Sendable, Hashable {
    /// How the intervals of one name in an iteration become one value.
    public enum IntervalAggregate: String, Sendable, Hashable, CaseIterable {
        /// The duration of the first.
        case first
        /// The sum of durations.
        case sum
        /// How many there are.
        case count
        /// The longest.
        case max
        /// The sum of their CPU time (intervals that captured rusage).
        case cpu
        /// The sum of their critical paths' lengths (``CriticalPath``):
        /// the time of the intervals, on any thread, on the chain of work
        /// and waits that bounds each one's wall time.
        case criticalPath = "critical_path"
    }

    /// How a counter's samples in an iteration become one value.
    public enum CounterAggregate: String, Sendable, Hashable, CaseIterable {
        /// The last value.
        case last
        /// The largest value.
        case max
        /// Last minus first.
        case delta
    }

    enum Source: Hashable {
        case interval(String, IntervalAggregate)
        case counter(String, CounterAggregate)
    }

    let source: Source
    /// Which way the metric gets better; written into results with its samples.
    public let better: MetricDirection

    /// Intervals named `name`, aggregated per iteration (like Macrobenchmark's
    /// trace-section metric). Shorter and fewer is better unless `better`
    /// says otherwise.
    public static func interval(
        _ name: String, _ aggregate: IntervalAggregate = .sum, better: MetricDirection = .lower
    ) -> TraceMetric {
        TraceMetric(source: .interval(name, aggregate), better: better)
    }

    /// The counter named `name`, aggregated per iteration. Declare
    /// `better: .higher` for counters such as frame rates or throughput.
    public static func counter(
        _ name: String, _ aggregate: CounterAggregate = .last, better: MetricDirection = .lower
    ) -> TraceMetric {
        TraceMetric(source: .counter(name, aggregate), better: better)
    }

    /// The metric's name in results: `interval:NAME:AGGREGATE` or
    /// `counter:NAME:AGGREGATE`.
    public var name: String {
        switch source {
        case .interval(let name, let aggregate): return "interval:\(name):\(aggregate.rawValue)"
        case .counter(let name, let aggregate): return "counter:\(name):\(aggregate.rawValue)"
        }
    }

    /// The unit of its values.
    package func unit(in trace: ParsedTrace) -> String {
        switch source {
        case .interval(_, let aggregate): return aggregate == .count ? "count" : "ns"
        case .counter(let name, _): return trace.counter(named: name)?.unit ?? "count"
        }
    }

    /// The value in `trace`, or nil when the trace has nothing to measure.
    package func value(in trace: ParsedTrace) -> Double? { reading(in: trace).value }

    /// The value in `trace` and, for a ``IntervalAggregate/criticalPath``
    /// metric, what its interval's critical paths crossed there (from the
    /// same paths): the interval's name and the iteration's record; nil
    /// when the trace has no instance of it.
    package func reading(in trace: ParsedTrace) -> (
        value: Double?, criticalPath: (interval: String, iteration: CriticalPathRecord.Iteration)?
    ) {
        if case .interval(let name, .criticalPath) = source {
            let all = Array(trace.intervals)
            let paths = trace.intervals(named: name).compactMap { CriticalPath.of($0, in: all) }
            guard !paths.isEmpty else { return (nil, nil) }
            return (Double(paths.reduce(0) { $0 + $1.length }), (name, CriticalPathRecord.Iteration(paths)))
        }
        return (plainValue(in: trace), nil)
    }

    /// The value of any metric but a critical path.
    private func plainValue(in trace: ParsedTrace) -> Double? {
        switch source {
        case .interval(let name, let aggregate):
            let intervals = trace.intervals(named: name)
            let durations = intervals.compactMap(\.duration)
            switch aggregate {
            case .count: return Double(intervals.count)
            case .first: return intervals.min { $0.start < $1.start }?.duration.map { Double($0) }
            case .sum: return durations.isEmpty ? nil : Double(durations.reduce(0, +))
            case .max: return durations.max().map { Double($0) }
            case .cpu:
                let times = intervals.compactMap(\.cpuTime)
                return times.isEmpty ? nil : Double(times.reduce(0, +))
            case .criticalPath: return reading(in: trace).value
            }
        case .counter(let name, let aggregate):
            guard let samples = trace.counter(named: name)?.samples, let first = samples.first, let last = samples.last
            else { return nil }
            switch aggregate {
            case .last: return last.value
            case .max: return samples.map(\.value).max()
            case .delta: return last.value - first.value
            }
        }
    }
}
