import Foundation

/// The error control of a comparison that looks at its data more than once
/// and stops as soon as every metric is decided (`strobe compare`).
///
/// Looking after every round and stopping at the first significant result
/// would raise the false-alarm rate far above the nominal one. The design
/// spends the error rate over the looks instead (Lan and DeMets' alpha
/// spending). Each look tests at the level it is given; since the levels of
/// all looks add up to at most alpha, the chance of a false alarm at any
/// look — whatever the stopping rule and however the looks' statistics
/// depend on each other — is at most alpha (a union bound). The miss rate of
/// "unchanged" verdicts (their interval's coverage) is spent the same way.
///
/// Two schedules:
///
/// - ``Schedule/geometric`` (the default): looks after `firstLook` rounds
///   and then whenever the rounds have grown by half (rounded down, and by
///   one round at least), but at least every fifth of the plan (2, 3, 4, 6,
///   9, 13, 19, 25, 30 for 30 planned rounds from a first look at 2),
///   with alpha spent in equal shares over the looks that fit in the
///   planned rounds. A large change is decided at the first look; the
///   intervals of the later looks shrink with the square root of the rounds,
///   so looking at a constant ratio of rounds spends the error rate where
///   the information grows. The miss rate of intervals is spent by the
///   O'Brien–Fleming-type function of the rounds, as below.
/// - ``Schedule/fractionOfPlan``: looks after `firstLook` rounds and then
///   every fifth of the planned rounds, spending `2 − 2Φ(z₁₋α/₂ / √t)` by
///   the fraction `t` of the planned rounds run (O'Brien–Fleming type). It
///   spends almost nothing early: under 10⁻⁸ of 0.01 at a fifth of the
///   plan, so a first look cannot decide even a large change with few
///   degrees of freedom. It is kept to measure the default against.
public struct SequentialDesign: Sendable, Hashable, Codable {
    /// When the design looks and how it spends the error rates.
    public enum Schedule: String, Sendable, Hashable, Codable, CaseIterable {
        /// Looks at rounds growing by half; equal shares of alpha per planned look.
        case geometric
        /// Looks every fifth of the plan; O'Brien–Fleming-type spending.
        case fractionOfPlan = "fraction of plan"
    }

    /// The error rate over all looks together.
    public var alpha: Double
    /// 1 − the confidence of "unchanged" intervals, over all looks together.
    public var intervalMiss: Double
    /// The planned number of rounds (what fits in the time budget). It may
    /// be raised between looks when rounds grew shorter: the error rates
    /// already spent stay spent, and the last look spends what is left.
    public var plannedRounds: Int
    /// The rounds before the first look.
    public var firstLook: Int
    /// When to look and how to spend.
    public var schedule: Schedule
    /// The share of alpha spent so far (the information fraction of the
    /// last look under ``Schedule/fractionOfPlan``), 0 before the first look.
    public private(set) var spentFraction = 0.0
    /// The fraction of the planned rounds of the last look, 0 before the
    /// first: what the intervals' miss rate is spent by.
    public private(set) var spentRoundsFraction = 0.0
    /// The rounds of the last look made, 0 before the first.
    public private(set) var lastLookRounds = 0

    /// How much the rounds grow from one look to the next under
    /// ``Schedule/geometric`` (never by more than a fifth of the plan).
    static let growth = 1.5

    /// A design spending `alpha` (and `1 − confidence` for intervals) over
    /// `plannedRounds` rounds, looking first after `firstLook` rounds.
    public init(
        alpha: Double, confidence: Double, plannedRounds: Int, firstLook: Int = 4, schedule: Schedule = .geometric
    ) {
        self.alpha = alpha
        intervalMiss = 1 - confidence
        self.firstLook = max(firstLook, 1)
        self.plannedRounds = max(plannedRounds, self.firstLook)
        self.schedule = schedule
    }

    /// The rounds after which the design plans to look, the last one being
    /// the planned rounds.
    public var plannedLooks: [Int] {
        var looks: [Int] = []
        var rounds = firstLook
        while rounds < plannedRounds {
            looks.append(rounds)
            rounds = nextLook(after: rounds)
        }
        looks.append(plannedRounds)
        return looks
    }

    /// The look that follows one after `rounds` rounds.
    func nextLook(after rounds: Int) -> Int {
        switch schedule {
        case .geometric:
            let grown = Int((Double(rounds) * Self.growth).rounded(.down))
            let step = Int((0.2 * Double(plannedRounds)).rounded(.up))
            return max(rounds + 1, min(grown, rounds + step))
        case .fractionOfPlan:
            return max(rounds + 1, rounds + Int((0.2 * Double(plannedRounds)).rounded(.up)))
        }
    }

    /// Whether the design looks after `rounds` rounds (the planned looks;
    /// the caller adds a last look when its budget runs out).
    public func looks(afterRound rounds: Int) -> Bool {
        guard rounds >= firstLook else { return false }
        if lastLookRounds == 0 { return true }
        if rounds >= plannedRounds { return true }
        return rounds >= nextLook(after: lastLookRounds)
    }

    /// The part of `rate` spent by information fraction `t` under the
    /// O'Brien–Fleming-type function: 2 − 2Φ(z₁₋ᵣₐₜₑ/₂ / √t), which is
    /// `rate` at t = 1.
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

    /// The share of the error rates spent by a look after `rounds` rounds
    /// that is look `number`: equal shares of the planned looks
    /// (geometric), or the O'Brien–Fleming-type share of the planned rounds.
    func fraction(number: Int, rounds: Int) -> Double {
        switch schedule {
        case .geometric:
            return min(Double(number) / Double(plannedLooks.count), 1)
        case .fractionOfPlan:
            return min(Double(rounds) / Double(plannedRounds), 1)
        }
    }

    /// Takes the next look after `rounds` rounds; `final` spends all that is
    /// left (the budget is spent, or the planned rounds are reached).
    ///
    /// Under ``Schedule/geometric`` alpha goes in equal shares of the
    /// planned looks, while the miss rate of "unchanged" intervals keeps the
    /// O'Brien–Fleming-type spending by the fraction of planned rounds: an
    /// interval narrow enough to lie inside a 2% floor takes many rounds
    /// under process noise, so that rate is worth most at the last looks.
    public mutating func look(number: Int, rounds: Int, final: Bool) -> Look {
        let isFinal = final || rounds >= plannedRounds
        // A plan that grew since the last look (``plannedRounds`` raised)
        // can put a look's fraction at or below what is spent: it then
        // spends an equal share of what is left over the looks left.
        var alphaFraction = isFinal ? 1 : fraction(number: number, rounds: rounds)
        if alphaFraction <= spentFraction {
            let left = plannedLooks.filter { $0 > rounds }.count + 1
            alphaFraction = spentFraction + (1 - spentFraction) / Double(left)
        }
        let roundsFraction = max(isFinal ? 1 : min(Double(rounds) / Double(plannedRounds), 1), spentRoundsFraction)
        let level: Double
        switch schedule {
        case .geometric: level = alpha * (alphaFraction - spentFraction)
        case .fractionOfPlan: level = Self.spending(alpha, at: alphaFraction) - Self.spending(alpha, at: spentFraction)
        }
        let miss =
            Self.spending(intervalMiss, at: roundsFraction) - Self.spending(intervalMiss, at: spentRoundsFraction)
        spentFraction = max(spentFraction, alphaFraction)
        spentRoundsFraction = max(spentRoundsFraction, roundsFraction)
        lastLookRounds = rounds
        return Look(number: number, rounds: rounds, alpha: level, confidence: 1 - miss, isFinal: isFinal)
    }
}
