/// How many events a set of sessions has beyond a percentile, for the rule
/// that judges a change only where each side has at least
/// `SessionQuantiles.minimumTailEvents` (StrobeJudgement) of them
/// (``SessionQuantileEstimate/tailEvents``).
///
/// The rule is there because the interval rests on a normal approximation
/// of the share of events beyond the percentile, which fails when few
/// events make that share. With sessions weighted by the inverse of their
/// sampling probability, a tail of 40 events of which 35 come from a
/// session that counts a hundred times is, for the precision of the
/// weighted share, closer to a handful: the count overstates it.
///
/// Kish's effective sample size puts the count on the scale of an
/// unweighted sample: `n_eff = (Σw)² / Σw²`. It is taken over the events
/// beyond the percentile, each carrying its session's weight, so that with
/// `t_s` of session `s`'s events beyond it, `n_eff = (Σ w_s·t_s)² / Σ w_s²·t_s`.
/// Events rather than sessions, because that is what the weighted share's
/// variance is made of and what the rule counts: Woodruff's variance
/// (``SessionQuantiles``) sums `w_s²·(y_s − p̂·n_s)²`, where
/// each session's events enter with its weight squared, so for events that
/// were independent the weighted tail total `Σ w_s·t_s` would have variance
/// `Σ w_s²·t_s`, and `n_eff` is the number of unweighted events whose count
/// has the same relative precision. The spread between sessions, which the
/// cluster variance adds, is in the interval already; the rule guards the
/// approximation, and for that it needs events. Counting sessions instead
/// would make the rule one of sessions, which with equal weights would no
/// longer be the count the unweighted rule uses. With equal weights
/// `n_eff` is exactly the number of events beyond the percentile.
///
/// The events are counted from the sketches, whole buckets at a time, and
/// the bucket that holds the percentile counts on both sides: the sketch
/// cannot tell its events from the percentile, which is one of them. Were
/// it left out of either side, a percentile whose bucket holds nearly every
/// event (work that takes the same time each run, to the sketch's 1%)
/// would look like a thin tail however many events there are.
package enum TailEvents {
    /// Kish's effective number of events beyond `estimate` of `sessions`
    /// (each with its weight, as ``SessionQuantiles/weights(samplingProbabilities:sessions:)``
    /// gives them), on the side with fewer: below it (events at most
    /// `estimate`) or above it (events at least `estimate`), each with the
    /// bucket of `estimate`. 0 when a side has none.
    package static func effective(beyond estimate: Double, sessions: [QuantileSketch], weights: [Double]) -> Double {
        precondition(sessions.count == weights.count, "one weight per session")
        var below = (sum: 0.0, squares: 0.0)
        var above = (sum: 0.0, squares: 0.0)
        for (session, weight) in zip(sessions, weights) {
            let atMost = session.count(atMost: estimate)
            let atLeast = session.count - session.count(below: estimate)
            below.sum += weight * Double(atMost)
            below.squares += weight * weight * Double(atMost)
            above.sum += weight * Double(atLeast)
            above.squares += weight * weight * Double(atLeast)
        }
        return min(kish(below), kish(above))
    }

    /// `(Σw·t)² / Σw²·t`, written `S·(S/Q)` so that with every weight 1 it is
    /// the count itself to the last bit (`S/Q` is then exactly 1).
    private static func kish(_ side: (sum: Double, squares: Double)) -> Double {
        side.squares > 0 ? side.sum * (side.sum / side.squares) : 0
    }
}
