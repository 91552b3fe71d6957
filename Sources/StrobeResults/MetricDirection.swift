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

extension MetricDirection {
    /// The direction an object stores under `key` (`"better": "lower"` or
    /// `"higher"`), lower when the key is absent, as a results file's metric
    /// reads: the one way every JSON form of a metric, comparison or series
    /// reads its direction.
    ///
    /// - Throws: a decoding error when the key holds anything else.
    public static func decoded<Key: CodingKey>(from container: KeyedDecodingContainer<Key>, forKey key: Key) throws
        -> MetricDirection
    {
        try container.decodeIfPresent(MetricDirection.self, forKey: key) ?? .lower
    }
}
