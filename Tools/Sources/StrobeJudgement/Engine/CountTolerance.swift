import Foundation
import StrobeStatistics

/// The tolerance rule (``ComparisonEngine/Input/countTolerance``): a counted
/// metric that repeats from process to process only up to a small relative
/// spread (the instructions a measure block executed) is judged as a
/// deterministic count when each side's spread lies within its tolerance:
/// the relative difference of the sides' centers against the relative
/// floor, at the first look, with no test of noise. A side that spreads
/// wider is judged like any metric, with a warning that names its spread.
extension ComparisonEngine {
    /// The larger of the two sides' relative spreads of an input with a
    /// tolerance; nil for an input without one, or with an empty side.
    static func countSpread(_ input: Input) -> Double? {
        guard input.countTolerance != nil, let base = ReplicateTest.relativeSpread(input.baseline),
            let cand = ReplicateTest.relativeSpread(input.candidate)
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

    /// The caveat of an exact count that took more than one value within a
    /// side (a runtime's per-thread caches, a path the clock picks): "the
    /// count was not exact (3 to 4 per iteration within a side): judged
    /// process by process like a time"; nil when each side kept one value.
    static func varyingCountWarning(baseline: [Double], candidate: [Double]) -> String? {
        let ranges = [baseline, candidate].compactMap { side -> (Double, Double)? in
            guard let low = side.min(), let high = side.max(), low < high else { return nil }
            return (low, high)
        }
        guard let widest = ranges.max(by: { $0.1 - $0.0 < $1.1 - $1.0 }) else { return nil }
        func count(_ value: Double) -> String {
            value == value.rounded() ? String(format: "%.0f", value) : String(format: "%.1f", value)
        }
        return "the count was not exact (\(count(widest.0)) to \(count(widest.1)) per iteration within a side): "
            + "judged process by process like a time"
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
