import Foundation

/// How much of a series' night-to-night movement its reference explains,
/// and whether the series adjusted by it is the better one to search.
///
/// On the log scale the series y is regressed on its reference x (the same
/// nights): the adjusted series is y − b·(x − mean x). The slope b comes
/// from the flat stretches: from the first differences of both series,
/// leaving out the pairs where either moves by more than
/// ``outlierScale`` robust deviations (a step, a process out of line), by
/// least squares through the origin, clamped to [0, 1]. So a reference
/// that shares the machine's noise with the series (b near 1) cancels it,
/// and one whose noise is its own (b near 0) adds next to nothing.
///
/// The adjusted series is used only when its noise (the scaled median
/// absolute deviation of its first differences) is clearly smaller than the
/// raw series' (at most ``requiredGain`` of it): the reference never makes a
/// series noisier, and independent noise in it never hides a step the raw
/// series shows. (A slope fitted to the same nights always explains a
/// little of independent noise; the margin keeps such a reference out.)
public struct ReferenceAdjustment: Sendable, Hashable, Codable {
    /// The host of the series.
    public var host: String
    /// The metric's name.
    public var metric: String
    /// The slope of the series on its reference (log scale), in [0, 1].
    public var slope: Double
    /// The raw series' noise: the robust scale of its first differences
    /// of log values.
    public var rawNoise: Double
    /// The adjusted series' noise, on the same scale.
    public var adjustedNoise: Double
    /// Whether the adjusted series was searched beside the raw one: its
    /// noise is smaller.
    public var used: Bool

    /// "adjusted by the reference (b = 0.97)" or "raw (the reference
    /// explains too little: b = 0.05)".
    public var summary: String {
        used
            ? String(format: "adjusted by the reference (b = %.2f)", slope)
            : String(format: "raw (the reference explains too little: b = %.2f)", slope)
    }

    /// The largest share of the raw series' noise the adjusted series may
    /// keep and be used: 0.9.
    static let requiredGain = 0.9

    /// How far, in robust deviations of the first differences, a pair may
    /// move and still count as part of a flat stretch: 4.
    static let outlierScale = 4.0

    /// The consistency factor that makes the median absolute deviation a
    /// standard deviation under normal noise.
    static let madScale = 1.4826

    /// The adjustment of `series` by `reference` (same length, positive
    /// values): the decision, and the adjusted series (nil when the raw one
    /// is kept).
    static func adjust(
        _ series: MetricHistory, by reference: [Double], host: String
    ) -> (adjustment: ReferenceAdjustment, adjusted: MetricHistory?) {
        let y = series.values.map { log($0) }
        let x = reference.map { log($0) }
        let slope = self.slope(y: y, x: x)
        let mean = x.reduce(0, +) / Double(max(x.count, 1))
        let adjustedLogs = zip(y, x).map { $0 - slope * ($1 - mean) }
        let rawNoise = noise(y)
        let adjustedNoise = noise(adjustedLogs)
        let used = slope > 0 && adjustedNoise < requiredGain * rawNoise
        let adjustment = ReferenceAdjustment(
            host: host, metric: series.name, slope: slope, rawNoise: rawNoise, adjustedNoise: adjustedNoise,
            used: used)
        guard used else { return (adjustment, nil) }
        return (
            adjustment,
            MetricHistory(
                name: series.name, values: adjustedLogs.map { exp($0) }, better: series.better,
                relativeFloor: series.relativeFloor)
        )
    }

    /// The slope of `y` on `x` over their flat stretches, clamped to [0, 1];
    /// 0 when `x` does not move there.
    static func slope(y: [Double], x: [Double]) -> Double {
        let dy = zip(y, y.dropFirst()).map { $1 - $0 }
        let dx = zip(x, x.dropFirst()).map { $1 - $0 }
        guard !dy.isEmpty else { return 0 }
        let cy = Quantiles.median(sorted: dy.sorted())
        let cx = Quantiles.median(sorted: dx.sorted())
        let sy = madScale * Quantiles.median(sorted: dy.map { abs($0 - cy) }.sorted())
        let sx = madScale * Quantiles.median(sorted: dx.map { abs($0 - cx) }.sorted())
        var products = 0.0
        var squares = 0.0
        for (a, b) in zip(dx, dy) {
            guard abs(a - cx) <= outlierScale * sx, abs(b - cy) <= outlierScale * sy else { continue }
            products += a * b
            squares += a * a
        }
        guard squares > 0 else { return 0 }
        return min(1, max(0, products / squares))
    }

    /// The robust scale of the first differences of `logs`: the scaled
    /// median absolute deviation from their median.
    static func noise(_ logs: [Double]) -> Double {
        let differences = zip(logs, logs.dropFirst()).map { $1 - $0 }
        guard !differences.isEmpty else { return 0 }
        let center = Quantiles.median(sorted: differences.sorted())
        return madScale * Quantiles.median(sorted: differences.map { abs($0 - center) }.sorted())
    }
}
