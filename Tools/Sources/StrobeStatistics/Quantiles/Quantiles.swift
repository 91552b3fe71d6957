/// Order statistics of samples.
public enum Quantiles {
    /// The `probability` quantile of `sorted` (ascending), interpolating
    /// linearly between order statistics: Hyndman and Fan's definition 7,
    /// the default of R and NumPy.
    public static func quantile(sorted: [Double], _ probability: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let position = min(max(probability, 0), 1) * Double(sorted.count - 1)
        let lower = Int(position.rounded(.down))
        let upper = min(lower + 1, sorted.count - 1)
        return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - Double(lower))
    }

    /// The median of `sorted`.
    public static func median(sorted: [Double]) -> Double { quantile(sorted: sorted, 0.5) }

    /// The median absolute deviation of `values`, scaled by 1.4826 so it
    /// estimates the standard deviation of normal data.
    static func scaledMAD(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let center = median(sorted: sorted)
        let deviations = values.map { abs($0 - center) }.sorted()
        return 1.4826 * median(sorted: deviations)
    }
}
