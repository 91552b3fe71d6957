import Foundation

/// A counted metric that repeats from process to process only up to a small
/// relative spread (the instructions a measure block executed): its spread,
/// and the comparison of its sides' centers when both lie within a
/// tolerance.
extension ReplicateTest {
    /// The relative spread of a side's samples, `max / min − 1`: 0 for a
    /// side whose samples are all equal, infinity for one that holds a zero
    /// or a negative value beside larger ones, nil for a side with none.
    public static func relativeSpread(_ replicates: [Replicate]) -> Double? {
        let values = replicates.flatMap(\.samples)
        guard let low = values.min(), let high = values.max() else { return nil }
        if low == high { return 0 }
        guard low > 0 else { return .infinity }
        return high / low - 1
    }

    /// Compares a count that repeats across processes up to a small
    /// relative spread as a deterministic one, when each side's spread
    /// (``relativeSpread(_:)``) lies within `tolerance`:
    /// an ``ComparisonMethod/exact`` result whose estimate is the difference
    /// of the sides' centers (the median of the replicates' medians), as a
    /// log ratio when both are positive and `logScaleAllowed`. Its p-value
    /// is 0, or 1 when the centers agree. Nil past the tolerance or with an
    /// empty side.
    public static func withinTolerance(
        baseline: [Replicate], candidate: [Replicate], tolerance: Double, logScaleAllowed: Bool = true
    ) -> ReplicateTestResult? {
        guard let baseSpread = relativeSpread(baseline),
            let candSpread = relativeSpread(candidate), max(baseSpread, candSpread) <= tolerance
        else { return nil }
        let base = baseline.filter { !$0.samples.isEmpty }
        let cand = candidate.filter { !$0.samples.isEmpty }
        func center(_ replicates: [Replicate]) -> Double {
            Quantiles.median(sorted: replicates.map { ReplicateSummary.median.value(of: $0.samples) }.sorted())
        }
        let before = center(base)
        let after = center(cand)
        let logScale = logScaleAllowed && before > 0 && after > 0
        let difference = logScale ? log(after) - log(before) : after - before
        return ReplicateTestResult(
            method: .exact, logScale: logScale, estimate: difference, standardError: 0, degreesOfFreedom: .infinity,
            statistic: difference == 0 ? 0 : .infinity, pValue: difference == 0 ? 1 : 0,
            baselineReplicates: base.count, candidateReplicates: cand.count, replicateSpread: 0)
    }
}
