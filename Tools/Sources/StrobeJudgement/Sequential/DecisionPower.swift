import Foundation
import StrobeStatistics

/// The power arithmetic of every comparison: the replicates a test needs
/// to find a change (``replicatesToDetect(_:spread:level:power:)``, which
/// `strobe diff`'s rounds needed and `strobe fleet`'s sessions needed
/// both use), how many rounds would decide a metric at its look's level
/// with 80% power, the smallest change a number of rounds can decide, and
/// (``TQuantiles``) the rounds a paired t-test needs to reach a distance.
/// ``DecisionLedger`` sets metrics aside by it; `strobe compare`'s
/// iteration plan chooses iterations by it.
public enum DecisionPower {
    /// z₁₋ₗₑᵥₑₗ/₂ + z_power for a two-sided `level` (the smallest level a
    /// double holds, for an early look's tiny one).
    public static func powerQuantile(level: Double, power: Double = 0.8) -> Double {
        NormalDistribution.quantile(1 - max(level / 2, 1e-15)) + NormalDistribution.quantile(power)
    }

    /// z₁₋ₗₑᵥₑₗ/₂ + z₀.₈: the row's two-sided level with 80% power.
    public static func powerQuantile(_ row: MetricComparison) -> Double { powerQuantile(level: row.level) }

    /// The replicates (rounds, processes or sessions per side) a test at
    /// the two-sided `level` needs to find a change of `effect` with
    /// `power`, when one replicate's estimate of the change has the spread
    /// `spread` (both on one scale): `((z₁₋ₗₑᵥₑₗ/₂ + z_power) · s / δ)²`, the
    /// normal approximation. Infinite for an effect of 0.
    public static func replicatesToDetect(_ effect: Double, spread: Double, level: Double, power: Double = 0.8)
        -> Double
    {
        pow(powerQuantile(level: level, power: power) * spread / effect, 2)
    }

    /// A relative floor on the log scale the rows are judged on.
    public static func logFloor(_ relative: Double) -> Double { log(1 + max(relative, 1e-6)) }

    /// About how many rounds in all would decide the row either way at its
    /// level with 80% power, on the log scale with the noise seen so far:
    /// a change of the size estimated (`(z·s/d)²`) or, when the estimate
    /// lies inside the floor, "unchanged" (`(z·s/(floor − |d|))²`), whichever
    /// comes first; twice that when the sides are not paired. Nil for a
    /// metric without a log scale or a spread, which this cannot tell.
    ///
    /// `optimistic` reads the rounds so far in the metric's favour, as the
    /// fewest rounds that are still plausible: the spread at its 80% lower
    /// confidence bound (`s·√(ν/χ²₀.₈(ν))`, χ²₀.₈ its 80th percentile), and the change 0.84 standard
    /// errors larger for the change and smaller for "unchanged". A few
    /// rounds' spread is rough (with 2 degrees of freedom the bound is 0.79
    /// of the estimate); a metric set aside on this reading needs more
    /// rounds than the plan holds unless its true spread lies below that
    /// bound, a chance of about one in five.
    public static func roundsToDecide(_ row: MetricComparison, optimistic: Bool = false) -> Double? {
        guard row.test.method == .pairedRounds || row.test.method == .processes, row.test.logScale,
            row.test.replicateSpread > 0
        else { return nil }
        var spread = row.test.replicateSpread * (row.test.method == .processes ? 2.0.squareRoot() : 1)
        var effect = abs(row.test.estimate)
        var settledEffect = effect
        if optimistic {
            let degrees = max(row.test.degreesOfFreedom, 1)
            spread *= (degrees / ChiSquaredDistribution.quantile(0.8, degreesOfFreedom: degrees)).squareRoot()
            let margin = NormalDistribution.quantile(0.8) * row.test.standardError
            effect += margin
            settledEffect = max(settledEffect - margin, 0)
        }
        let floor = logFloor(row.relativeFloor)
        var rounds = Double.infinity
        if effect > 0 { rounds = min(rounds, replicatesToDetect(effect, spread: spread, level: row.level)) }
        if settledEffect < floor {
            rounds = min(rounds, replicatesToDetect(floor - settledEffect, spread: spread, level: row.level))
        }
        return rounds
    }

    /// The smallest change, as a fraction, that `rounds` rounds would
    /// decide at the row's level with 80% power: z·s/√n on the log scale
    /// (twice the variance when the sides are not paired); nil without a
    /// log scale or a spread.
    public static func reachableFloor(_ row: MetricComparison, rounds: Int) -> Double? {
        guard row.test.logScale, row.test.replicateSpread > 0, rounds > 0 else { return nil }
        let z = powerQuantile(row)
        var variance = row.test.replicateSpread * row.test.replicateSpread / Double(rounds)
        if row.test.method == .processes { variance *= 2 }
        return exp(z * variance.squareRoot()) - 1
    }

    /// Student's t quantiles of one level, by degrees of freedom, computed
    /// once each.
    public struct TQuantiles: Sendable {
        /// The two-sided level.
        public let level: Double
        private var cache: [Int: Double] = [:]
        private let power = NormalDistribution.quantile(0.8)

        /// The quantiles of `level` (held within 10⁻¹² and 0.5).
        public init(level: Double) { self.level = min(max(level, 1e-12), 0.5) }

        /// The quantile `1 − level/2` of Student's t with `degrees`
        /// degrees of freedom.
        public mutating func quantile(_ degrees: Int) -> Double {
            if let known = cache[degrees] { return known }
            let value = StudentDistribution.quantile(1 - level / 2, degreesOfFreedom: Double(degrees))
            cache[degrees] = value
            return value
        }

        /// The fewest rounds (2 to 2,000) whose paired t-test at the level
        /// reaches a log distance `target` with 80% power, for rounds whose
        /// paired differences have `roundVariance`.
        public mutating func roundsToReach(_ target: Double, roundVariance: Double) -> Double {
            guard target > 0 else { return 2000 }
            func enough(_ rounds: Int) -> Bool {
                let z = quantile(rounds - 1) + power
                return Double(rounds) >= z * z * roundVariance / (target * target)
            }
            var low = 2
            var high = 2000
            if !enough(high) { return Double(high) }
            while low < high {
                let middle = (low + high) / 2
                if enough(middle) { high = middle } else { low = middle + 1 }
            }
            return Double(low)
        }
    }
}
