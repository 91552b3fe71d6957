import Foundation
import StrobeResults

/// A percentile of events pooled over sessions, with a confidence interval
/// that treats the session as the unit.
public struct SessionQuantileEstimate: Sendable, Hashable, Codable {
    /// The probability (0.9 for P90).
    public var probability: Double
    /// The percentile of the pooled events (from the merged sketch).
    public var estimate: Double
    /// The interval's lower end.
    public var lower: Double
    /// The interval's upper end.
    public var upper: Double
    /// The interval's confidence.
    public var confidence: Double
    /// The standard error of the log of the estimate, from the interval.
    public var logStandardError: Double
    /// Sessions.
    public var sessions: Int
    /// Events over all sessions.
    public var events: UInt64
    /// The events beyond the percentile on the side with fewer (below it,
    /// at most ``estimate``, or above it, at least ``estimate``), counted
    /// from the sessions' sketches: Kish's effective count `(Σw·t)² / Σw²·t`
    /// (`t` a session's events on that side, `w` its weight) when the
    /// sessions carry unequal weights, the plain count otherwise (at least
    /// `⌊min(p, 1 − p) · events⌋`, more where events tie with the
    /// percentile in its bucket, which counts on both sides). It is what
    /// ``SessionQuantiles/compare(_:alpha:)`` holds against
    /// ``SessionQuantiles/minimumTailEvents``. Nil for an estimate read from
    /// JSON written before it was recorded, or made by hand without it;
    /// `compare` then takes `min(p, 1 − p) · events`.
    public var tailEvents: Double?

    /// An estimate with these values.
    public init(
        probability: Double, estimate: Double, lower: Double, upper: Double, confidence: Double,
        logStandardError: Double,
        sessions: Int, events: UInt64, tailEvents: Double? = nil
    ) {
        self.probability = probability
        self.estimate = estimate
        self.lower = lower
        self.upper = upper
        self.confidence = confidence
        self.logStandardError = logStandardError
        self.sessions = sessions
        self.events = events
        self.tailEvents = tailEvents
    }
}

/// Percentiles of a fleet's events with intervals that resample nothing and
/// still treat the session as the unit.
///
/// Events of one session share its device, its load and its data, so they
/// are not independent, and an interval that counts every event as a draw is
/// far too narrow. The method is Woodruff's (1952) for cluster samples: the
/// sessions are the clusters. For the pooled estimate `q̂` of the `p`
/// percentile, each session `s` contributes `n_s` events of which `y_s` are
/// at most `q̂`; the fraction below, `Σw·y/Σw·n`, is a ratio estimator whose
/// variance comes from the sessions' totals alone (the linearized, "ultimate
/// cluster" variance `m/(m−1)·Σw²(y_s − p̂·n_s)² / (Σw·n)²`), which holds the
/// spread between sessions and within them. The interval of the fraction,
/// `p ± z·se`, is carried through the pooled distribution:
/// `[Q(p − z·se), Q(p + z·se)]`. It needs no distribution of the durations,
/// costs one pass over the sessions' sketches (a bootstrap costs a thousand,
/// ``bootstrap(sessions:samplingProbabilities:probabilities:confidence:resamples:generator:)``),
/// and its coverage is measured in `make bench fleet` and docs/statistics.md.
///
/// Sessions sampled with different probabilities `π_s` are weighted by
/// `w_s = 1/π_s` (Horvitz–Thompson), in the pooled distribution and in the
/// variance, so that the percentiles describe the population rather than the
/// sample; with equal probabilities every weight is 1 and the answer is
/// exactly the unweighted one.
public enum SessionQuantiles {
    /// The percentiles `probabilities` of the events of `sessions` (one
    /// sketch per session), each with its interval at `confidence`.
    ///
    /// `samplingProbabilities`, one per session in (0, 1], are the
    /// probabilities that admitted them; when they differ the sessions are
    /// weighted by their inverse (``weights(samplingProbabilities:sessions:)``).
    /// Each estimate carries the events beyond its percentile
    /// (``SessionQuantileEstimate/tailEvents``), effective ones when the
    /// sessions are weighted.
    public static func estimate(
        sessions: [QuantileSketch], samplingProbabilities: [Double]? = nil, probabilities: [Double],
        confidence: Double = 0.95
    ) -> [SessionQuantileEstimate] {
        let weights = Self.weights(samplingProbabilities: samplingProbabilities, sessions: sessions)
        let pooled = merge(sessions, weights: weights)
        let z = NormalDistribution.quantile(1 - (1 - confidence) / 2)
        let events = sessions.reduce(0) { $0 + $1.count }
        return probabilities.map { p in
            let estimate = pooled.quantile(p)
            var lower = estimate
            var upper = estimate
            if let standardError = shareStandardError(
                at: estimate, sessions: sessions, weights: weights, pooled: pooled)
            {
                lower = Swift.min(estimate, pooled.interpolatedQuantile(max(0, p - z * standardError)))
                upper = Swift.max(estimate, pooled.interpolatedQuantile(min(1, p + z * standardError)))
            }
            return SessionQuantileEstimate(
                probability: p, estimate: estimate, lower: lower, upper: upper, confidence: confidence,
                logStandardError: logStandardError(lower, upper, z: z), sessions: sessions.count, events: events,
                tailEvents: TailEvents.effective(beyond: estimate, sessions: sessions, weights: weights))
        }
    }

    /// The weight of each session: 1 for all when `samplingProbabilities` is
    /// nil or they are all equal; otherwise `1/π_s` scaled so that the
    /// weighted events add up to the events (`Σw·n = Σn`), which keeps the
    /// pooled distribution's ranks on the scale of the sample.
    ///
    /// - Precondition: one probability per session, each in (0, 1].
    public static func weights(samplingProbabilities: [Double]?, sessions: [QuantileSketch]) -> [Double] {
        guard let probabilities = samplingProbabilities else { return Array(repeating: 1, count: sessions.count) }
        precondition(probabilities.count == sessions.count, "one sampling probability per session")
        precondition(probabilities.allSatisfy { $0 > 0 && $0 <= 1 }, "sampling probabilities must be in (0, 1]")
        guard let first = probabilities.first, probabilities.contains(where: { $0 != first }) else {
            return Array(repeating: 1, count: sessions.count)
        }
        let events = sessions.reduce(0.0) { $0 + Double($1.count) }
        let weighted = zip(sessions, probabilities).reduce(0.0) { $0 + Double($1.0.count) / $1.1 }
        guard events > 0 else { return probabilities.map { 1 / $0 } }
        let scale = events / weighted
        return probabilities.map { scale / $0 }
    }

    /// The merge of `sessions`, each with its weight.
    package static func merge(_ sessions: [QuantileSketch], weights: [Double]) -> WeightedQuantileSketch {
        var pooled = WeightedQuantileSketch(
            relativeAccuracy: sessions.first?.relativeAccuracy ?? QuantileSketch.defaultRelativeAccuracy)
        for (session, weight) in zip(sessions, weights) { pooled.merge(session, weight: weight) }
        return pooled
    }

    /// Woodruff's standard error of the weighted share of events at most
    /// `value`: `√(m/(m−1)·Σw²(y − p̂·n)²) / Σw·n`; nil for fewer than two
    /// sessions or no events.
    static func shareStandardError(
        at value: Double, sessions: [QuantileSketch], weights: [Double], pooled: WeightedQuantileSketch
    ) -> Double? {
        let m = sessions.count
        let total = pooled.totalWeight
        guard m >= 2, total > 0 else { return nil }
        let share = pooled.weight(atMost: value) / total
        var sumSquares = 0.0
        for (session, weight) in zip(sessions, weights) {
            let below = Double(session.count(atMost: value))
            let residual = weight * (below - share * Double(session.count))
            sumSquares += residual * residual
        }
        return (Double(m) / Double(m - 1) * sumSquares).squareRoot() / total
    }

    /// The standard error of the log of an estimate whose interval at the
    /// normal quantile `z` is `[lower, upper]`; 0 unless both are positive.
    package static func logStandardError(_ lower: Double, _ upper: Double, z: Double) -> Double {
        lower > 0 && upper > 0 ? (log(upper) - log(lower)) / (2 * z) : 0
    }
}

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

    /// A change of `baseline` to `candidate`.
    public init(
        baseline: SessionQuantileEstimate, candidate: SessionQuantileEstimate, shift: ShiftEstimate, pValue: Double,
        adjustedPValue: Double, verdict: Verdict, judged: Bool = true, sessionsNeeded: Int? = nil
    ) {
        self.baseline = baseline
        self.candidate = candidate
        self.shift = shift
        self.pValue = pValue
        self.adjustedPValue = adjustedPValue
        self.verdict = verdict
        self.judged = judged
        self.sessionsNeeded = sessionsNeeded
    }

    private enum CodingKeys: String, CodingKey {
        case baseline, candidate, shift, pValue, adjustedPValue, verdict, judged, sessionsNeeded
    }

    /// Decodes a change; one written before `judged` existed counts as judged.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        baseline = try container.decode(SessionQuantileEstimate.self, forKey: .baseline)
        candidate = try container.decode(SessionQuantileEstimate.self, forKey: .candidate)
        shift = try container.decode(ShiftEstimate.self, forKey: .shift)
        pValue = try container.decode(Double.self, forKey: .pValue)
        adjustedPValue = try container.decode(Double.self, forKey: .adjustedPValue)
        verdict = try container.decode(Verdict.self, forKey: .verdict)
        judged = try container.decodeIfPresent(Bool.self, forKey: .judged) ?? true
        sessionsNeeded = try container.decodeIfPresent(Int.self, forKey: .sessionsNeeded)
    }
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
    public static func compare(_ comparisons: [Comparison], alpha: Double = 0.01) -> [SessionQuantileChange] {
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
    /// of the sessions, and a change the size of the floor must reach
    /// significance at the worst-case Benjamini–Hochberg level α/m with 80%
    /// power. Nil when the estimate is not finite.
    static func sessionsNeeded(
        error: Double, sessions: Int, relativeFloor: Double, alpha: Double, comparisons: Int
    ) -> Int? {
        let effect = log(1 + max(relativeFloor, 1e-6))
        guard error > 0, sessions > 0 else { return nil }
        let z =
            NormalDistribution.quantile(1 - alpha / Double(comparisons) / 2) + NormalDistribution.quantile(0.8)
        let factor = pow(z * error / effect, 2)
        let needed = Double(sessions) * factor
        guard needed.isFinite, needed < 1e9 else { return nil }
        return max(Int(needed.rounded(.up)), sessions + 1)
    }
}
