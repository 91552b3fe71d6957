/// A metric's samples on one side of a comparison, summarized.
public struct SampleSummary: Sendable, Hashable, Codable {
    /// Number of samples.
    public var count: Int
    /// Median.
    public var median: Double
    /// 90th percentile.
    public var p90: Double
    /// Mean.
    public var mean: Double
    /// The requested percentiles, keyed by their value ("50", "90", "99.9").
    public var percentiles: [String: Double]

    /// Summarizes `samples`.
    public init(_ samples: [Double], percentiles: [Double]) {
        let sorted = samples.sorted()
        count = sorted.count
        median = Quantiles.median(sorted: sorted)
        p90 = Quantiles.quantile(sorted: sorted, 0.9)
        mean = sorted.isEmpty ? .nan : sorted.reduce(0, +) / Double(sorted.count)
        var values: [String: Double] = [:]
        for percentile in percentiles {
            let key = percentile == percentile.rounded() ? String(Int(percentile)) : String(percentile)
            values[key] = Quantiles.quantile(sorted: sorted, percentile / 100)
        }
        self.percentiles = values
    }
}
