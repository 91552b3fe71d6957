/// Which way a metric gets better: what turns a shift into a regression or
/// an improvement in `strobe diff`.
///
/// ```swift
/// .counter("fps", .last, better: .higher)
/// context.report("items per second", rate, unit: "count/s", better: .higher)
/// ```
public enum MetricDirection: String, Sendable, Hashable, Codable, CaseIterable {
    /// Smaller values are better: durations, CPU time, memory, misses.
    case lower
    /// Larger values are better: throughput, frame rates, hit ratios.
    case higher
}
