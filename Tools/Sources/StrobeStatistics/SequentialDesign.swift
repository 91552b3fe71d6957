import Foundation

/// The error control of a comparison that looks at its data more than once
/// and stops as soon as every metric is decided (`strobe compare`).
///
/// Looking after every round and stopping at the first significant result
/// would raise the false-alarm rate far above the nominal one. The design
/// spends the error rate over the looks instead (Lan and DeMets' alpha
/// spending): what is spent by the time a fraction `t` of the planned rounds
/// has run is `2 − 2Φ(z₁₋α/₂ / √t)`, the O'Brien–Fleming-type function. It
/// spends almost nothing early, so only an overwhelming change stops the
/// comparison early, and keeps most of alpha for the last looks, where noisy
/// machines make their decisions. Each look tests at the level it is given;
/// since the levels of all looks add up to at most alpha, the chance of a
/// false alarm at any look — whatever the stopping rule and however the
/// looks' statistics depend on each other — is at most alpha (a union
/// bound). The miss rate of "unchanged" verdicts (their interval's
/// coverage) is spent the same way.
public struct SequentialDesign: Sendable, Hashable, Codable {
    /// The error rate over all looks together.
    public var alpha: Double
    /// 1 − the confidence of "unchanged" intervals, over all looks together.
    public var intervalMiss: Double
    /// The planned number of rounds: the information fraction of a look is
    /// its rounds over this.
    public var plannedRounds: Int
    /// The information fraction of the last look made, 0 before the first.
    public private(set) var spentFraction = 0.0

    /// A design spending `alpha` (and `1 − confidence` for intervals) over
    /// `plannedRounds` rounds.
    public init(alpha: Double, confidence: Double, plannedRounds: Int) {
        self.alpha = alpha
        intervalMiss = 1 - confidence
        self.plannedRounds = max(plannedRounds, 1)
    }

    /// The part of `rate` spent by information fraction `t`:
    /// 2 − 2Φ(z₁₋ᵣₐₜₑ/₂ / √t), which is `rate` at t = 1.
    public static func spending(_ rate: Double, at t: Double) -> Double {
        let fraction = min(max(t, 0), 1)
        guard fraction > 0 else { return 0 }
        guard fraction < 1 else { return rate }
        let z = NormalDistribution.quantile(1 - rate / 2)
        return 2 * NormalDistribution.survival(z / fraction.squareRoot())
    }

    /// The levels of one look.
    public struct Look: Sendable, Hashable, Codable {
        /// Its number, from 1.
        public var number: Int
        /// Rounds analysed.
        public var rounds: Int
        /// The false-alarm level this look tests at.
        public var alpha: Double
        /// The confidence of its intervals.
        public var confidence: Double
        /// Whether it spends everything that was left (the last look).
        public var isFinal: Bool
    }

    /// Takes the next look after `rounds` rounds; `final` spends all that is
    /// left (the budget is spent, or the planned rounds are reached).
    public mutating func look(number: Int, rounds: Int, final: Bool) -> Look {
        let fraction = final ? 1 : min(Double(rounds) / Double(plannedRounds), 1)
        let level = Self.spending(alpha, at: fraction) - Self.spending(alpha, at: spentFraction)
        let miss = Self.spending(intervalMiss, at: fraction) - Self.spending(intervalMiss, at: spentFraction)
        spentFraction = max(spentFraction, fraction)
        return Look(number: number, rounds: rounds, alpha: level, confidence: 1 - miss, isFinal: final || fraction >= 1)
    }
}
