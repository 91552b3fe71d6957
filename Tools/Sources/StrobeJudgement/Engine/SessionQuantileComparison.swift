import Foundation
import StrobeResults
import StrobeStatistics

/// The change of one percentile between two sets of sessions, and the
/// verdict on it.
public struct SessionQuantileChange: Sendable, Hashable, Codable {
    /// The baseline's percentile.
    public var baseline: SessionQuantileEstimate
    /// The candidate's percentile.
    public var candidate: SessionQuantileEstimate
    /// Candidate over baseline, with its interval.
    public var shift: ShiftEstimate
    /// The two-sided p-value for "no change".
    public var pValue: Double
    /// That p-value adjusted by Benjamini–Hochberg across the whole report.
    public var adjustedPValue: Double
    /// The verdict, by the rules of `strobe diff`.
    public var verdict: Verdict
    /// Whether the change was judged: false where a side has too few events
    /// beyond the percentile (``SessionQuantiles/minimumTailEvents``) or no
    /// positive estimate. An unjudged change has no honest interval, and
    /// reports show none.
    public var judged: Bool
    /// For an inconclusive judged change, about how many sessions per side
    /// would decide a change the size of the floor (at the report's level,
    /// with 80% power); nil otherwise.
    public var sessionsNeeded: Int?
}

extension SessionQuantiles {
    /// One comparison of a report: the two sides' estimates of one
    /// percentile, and how the metric is judged.
    public struct Comparison: Sendable, Hashable {
        /// The baseline's estimate.
        public var baseline: SessionQuantileEstimate
        /// The candidate's estimate.
        public var candidate: SessionQuantileEstimate
        /// Which way the metric gets better (durations: `.lower`).
        public var better: MetricDirection
        /// Changes up to this fraction never count (0.02 = 2%).
        public var relativeFloor: Double
        /// Changes up to this, in the metric's unit, never count.
        public var absoluteFloor: Double

        /// A comparison with these values.
        public init(
            baseline: SessionQuantileEstimate, candidate: SessionQuantileEstimate, better: MetricDirection = .lower,
            relativeFloor: Double = ComparisonOptions().minimumEffect, absoluteFloor: Double = 0
        ) {
            self.baseline = baseline
            self.candidate = candidate
            self.better = better
            self.relativeFloor = relativeFloor
            self.absoluteFloor = absoluteFloor
        }
    }

    /// The events each side needs beyond a percentile (below it and above
    /// it) for its change to be judged: 10.
    public static let minimumTailEvents = 10.0

    /// Judges every comparison of a report together: each change of a
    /// percentile is a log ratio with the standard error of both sides'
    /// intervals (a z-test), the p-values are adjusted by Benjamini–Hochberg
    /// across all of them, and each verdict follows `strobe diff`'s rules
    /// (`MetricComparison`): significant at `alpha` and beyond both floors
    /// in the worse direction is a regression; an interval at confidence
    /// 1 − 2·alpha inside the relative floor is unchanged; anything else
    /// is inconclusive.
    ///
    /// A percentile is judged only where each side has at least
    /// ``minimumTailEvents`` events on each side of it (the interval rests
    /// on a normal approximation of the share of events below the
    /// percentile, which fails in a tail that few events reach: P99 of 30
    /// events is their largest). The events are the side's
    /// ``SessionQuantileEstimate/tailEvents`` (counted from its sketches;
    /// for weighted sessions Kish's effective count, which a few heavy
    /// sessions keep small), or `min(p, 1 − p) · events` for an estimate
    /// without them. Other changes are inconclusive, not judged
    /// (``SessionQuantileChange/judged``), and stay out of the
    /// Benjamini–Hochberg family.
    ///
    /// Every interval is at ``intervalConfidence(selected:judged:alpha:)``,
    /// the level of the judgement, and an inconclusive change carries the
    /// sessions per side that would decide it.
    public static func compare(_ comparisons: [Comparison], alpha: Double = JudgementDefaults.alpha)
        -> [SessionQuantileChange]
    {
        let zEquivalence = NormalDistribution.quantile(1 - alpha)
        struct Test {
            var d: Double
            var error: Double
            var p: Double
            var judged = true
        }
        let tests: [Test] = comparisons.map { comparison in
            let a = comparison.baseline
            let b = comparison.candidate
            guard a.estimate > 0, b.estimate > 0 else { return Test(d: 0, error: 0, p: 1, judged: false) }
            let judged = [a, b].allSatisfy { side in
                let tail = side.tailEvents ?? min(side.probability, 1 - side.probability) * Double(side.events)
                return tail >= minimumTailEvents
            }
            let d = log(b.estimate / a.estimate)
            // No interval is narrower than the sketch's resolution.
            let floor = QuantileSketch.defaultRelativeAccuracy
            let error = (pow(max(a.logStandardError, floor), 2) + pow(max(b.logStandardError, floor), 2)).squareRoot()
            return Test(d: d, error: error, p: 2 * NormalDistribution.survival(abs(d) / error), judged: judged)
        }
        var adjusted = [Double](repeating: 1, count: tests.count)
        let family = tests.indices.filter { tests[$0].judged }
        for (index, value) in zip(family, MultipleComparisons.benjaminiHochberg(family.map { tests[$0].p })) {
            adjusted[index] = value
        }
        let confidence = intervalConfidence(
            selected: family.filter { adjusted[$0] <= alpha }.count, judged: family.count, alpha: alpha)
        let z = NormalDistribution.quantile(1 - (1 - confidence) / 2)
        return zip(comparisons, zip(tests, adjusted)).map { comparison, pair in
            let (test, adjustedP) = pair
            let shift = ShiftEstimate(
                ratio: exp(test.d), lower: exp(test.d - z * test.error), upper: exp(test.d + z * test.error),
                confidence: confidence)
            let result = ReplicateTestResult(
                method: .processes, logScale: true, estimate: test.d, standardError: test.error,
                degreesOfFreedom: .infinity, statistic: test.error > 0 ? test.d / test.error : 0, pValue: test.p,
                baselineReplicates: comparison.baseline.sessions, candidateReplicates: comparison.candidate.sessions,
                replicateSpread: test.error
                    * Double(max(1, min(comparison.baseline.sessions, comparison.candidate.sessions))).squareRoot())
            let base = comparison.baseline.estimate
            let difference = comparison.candidate.estimate - base
            let equivalence = (
                lower: exp(test.d - zEquivalence * test.error), upper: exp(test.d + zEquivalence * test.error)
            )
            let verdict =
                !test.judged
                ? .inconclusive
                : ComparisonEngine.decide(
                    test: result, shift: shift, difference: difference, equivalenceRatio: equivalence,
                    equivalenceDifference: (base * (equivalence.lower - 1), base * (equivalence.upper - 1)),
                    adjustedPValue: adjustedP, level: alpha, better: comparison.better,
                    relativeFloor: comparison.relativeFloor, absoluteFloor: comparison.absoluteFloor)
            let needed =
                test.judged && verdict == .inconclusive
                ? sessionsNeeded(
                    error: test.error, sessions: min(comparison.baseline.sessions, comparison.candidate.sessions),
                    relativeFloor: comparison.relativeFloor, alpha: alpha, comparisons: max(family.count, 1))
                : nil
            return SessionQuantileChange(
                baseline: comparison.baseline, candidate: comparison.candidate, shift: shift, pValue: test.p,
                adjustedPValue: adjustedP, verdict: verdict, judged: test.judged, sessionsNeeded: needed)
        }
    }

    /// The confidence of the intervals a report prints beside changes
    /// judged by Benjamini–Hochberg at `alpha`: Benjamini and Yekutieli's
    /// false-coverage-rate level 1 − R·α/m for R of m judged changes
    /// selected (1 − α/m when none is). At that level an interval excludes
    /// zero exactly when its change was found significant, so the numbers
    /// and the verdicts never disagree.
    static func intervalConfidence(selected: Int, judged: Int, alpha: Double) -> Double {
        guard judged > 0 else { return 1 - alpha }
        return 1 - Double(max(selected, 1)) * alpha / Double(judged)
    }

    /// About how many sessions per side would decide a change of
    /// `relativeFloor`: the log standard error shrinks with the square root
    /// of the sessions (one session's spread is `error · √sessions`), and a
    /// change the size of the floor must reach significance at the
    /// worst-case Benjamini–Hochberg level α/m with `power`, by the power
    /// arithmetic `strobe diff` uses
    /// (``DecisionPower/replicatesToDetect(_:spread:level:power:)``). Nil
    /// when the estimate is not finite.
    static func sessionsNeeded(
        error: Double, sessions: Int, relativeFloor: Double, alpha: Double, comparisons: Int,
        power: Double = ComparisonOptions().power
    ) -> Int? {
        guard error > 0, sessions > 0 else { return nil }
        let needed = DecisionPower.replicatesToDetect(
            DecisionPower.logFloor(relativeFloor), spread: error * Double(sessions).squareRoot(),
            level: alpha / Double(comparisons), power: power)
        guard needed.isFinite, needed < 1e9 else { return nil }
        return max(Int(needed.rounded(.up)), sessions + 1)
    }
}
