import Foundation

/// When a test stops iterating (after its warm-up iterations).
public enum StopRule: Sendable, Hashable {
    /// A fixed number of measured iterations.
    case iterations(Int)
    /// As many iterations as fit in `seconds`, within the bounds.
    case timeBudget(seconds: Double, minimum: Int = 5, maximum: Int = 10_000)
    /// Until the 95% confidence interval of the primary metric's p90 is
    /// narrower than `relativeWidth` of the p90 (0.05 for 5%), within the
    /// bounds. The interval is distribution-free: the order statistics whose
    /// ranks bracket 0.9·n by 1.96 binomial standard deviations.
    case p90Precision(relativeWidth: Double, minimum: Int = 20, maximum: Int = 500)

    /// Whether to stop after `samples` of the primary metric, `elapsed`
    /// seconds into the measured iterations.
    package func isSatisfied(samples: [Double], elapsed: Double) -> Bool {
        switch self {
        case .iterations(let count):
            return samples.count >= count
        case .timeBudget(let seconds, let minimum, let maximum):
            return samples.count >= maximum || samples.count >= minimum && elapsed >= seconds
        case .p90Precision(let width, let minimum, let maximum):
            if samples.count >= maximum { return true }
            guard samples.count >= minimum, let interval = Self.p90Interval(samples) else { return false }
            return interval.relativeWidth <= width
        }
    }

    /// The p90 and its distribution-free 95% confidence interval, when n is
    /// large enough for one to exist.
    package static func p90Interval(_ samples: [Double]) -> (
        p90: Double, lower: Double, upper: Double, relativeWidth: Double
    )? {
        let sorted = samples.sorted()
        let n = Double(sorted.count)
        let spread = 1.96 * (n * 0.9 * 0.1).squareRoot()
        let lowerRank = Int((n * 0.9 - spread).rounded(.down))
        let upperRank = Int((n * 0.9 + spread).rounded(.up)) + 1
        guard lowerRank >= 1, upperRank <= sorted.count else { return nil }
        let position = 0.9 * (n - 1)
        let below = Int(position.rounded(.down))
        let p90 =
            sorted[below] + (sorted[min(below + 1, sorted.count - 1)] - sorted[below]) * (position - Double(below))
        let lower = sorted[lowerRank - 1]
        let upper = sorted[upperRank - 1]
        guard p90 > 0 else { return nil }
        return (p90, lower, upper, (upper - lower) / p90)
    }
}
