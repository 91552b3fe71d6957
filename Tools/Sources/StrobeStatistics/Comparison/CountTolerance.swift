import Foundation

/// The tolerance rule (``ComparisonEngine/Input/countTolerance``): a counted
/// metric that repeats from process to process only up to a small relative
/// spread (the instructions a measure block executed) is judged as a
/// deterministic count when each side's spread lies within its tolerance:
/// the relative difference of the sides' centers against the relative
/// floor, at the first look, with no test of noise. A side that spreads
/// wider is judged like any metric, with a warning that names its spread.
extension ComparisonEngine {
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

    /// The larger of the two sides' relative spreads of an input with a
    /// tolerance; nil for an input without one, or with an empty side.
    static func countSpread(_ input: Input) -> Double? {
        guard input.countTolerance != nil, let base = relativeSpread(input.baseline),
            let cand = relativeSpread(input.candidate)
        else { return nil }
        return max(base, cand)
    }

    /// Whether `input` has a tolerance and both sides spread within it.
    static func isWithinTolerance(_ input: Input) -> Bool {
        guard let tolerance = input.countTolerance, let spread = countSpread(input) else { return false }
        return spread <= tolerance
    }

    /// The comparison of a counted metric within its tolerance (see
    /// ``ReplicateTest/withinTolerance(baseline:candidate:tolerance:logScaleAllowed:)``);
    /// nil for any other input.
    static func toleranceTest(_ input: Input) -> ReplicateTestResult? {
        guard let tolerance = input.countTolerance else { return nil }
        return ReplicateTest.withinTolerance(baseline: input.baseline, candidate: input.candidate, tolerance: tolerance)
    }

    /// The caveat of a counted metric that spread past its tolerance: "the
    /// count was not deterministic (it spread 0.84% within a side, past the
    /// 0.2% tolerance): judged process by process like a time".
    static func spreadWarning(spread: Double, tolerance: Double) -> String {
        func percent(_ fraction: Double) -> String {
            guard fraction.isFinite else { return "without bound" }
            let value = fraction * 100
            return String(format: value >= 10 ? "%.0f%%" : value >= 1 ? "%.1f%%" : "%.2f%%", value)
        }
        return "the count was not deterministic (it spread \(percent(spread)) within a side, past the "
            + "\(percent(tolerance)) tolerance): judged process by process like a time"
    }
}

extension ReplicateTest {
    /// Compares a count that repeats across processes up to a small
    /// relative spread as a deterministic one, when each side's spread
    /// (``ComparisonEngine/relativeSpread(_:)``) lies within `tolerance`:
    /// an ``ComparisonMethod/exact`` result whose estimate is the difference
    /// of the sides' centers (the median of the replicates' medians), as a
    /// log ratio when both are positive and `logScaleAllowed`. Its p-value
    /// is 0, or 1 when the centers agree. Nil past the tolerance or with an
    /// empty side.
    public static func withinTolerance(
        baseline: [Replicate], candidate: [Replicate], tolerance: Double, logScaleAllowed: Bool = true
    ) -> ReplicateTestResult? {
        guard let baseSpread = ComparisonEngine.relativeSpread(baseline),
            let candSpread = ComparisonEngine.relativeSpread(candidate), max(baseSpread, candSpread) <= tolerance
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
