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
    /// `SessionQuantiles.compare` (StrobeJudgement) holds against
    /// its `minimumTailEvents`. Nil for an estimate read from
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
