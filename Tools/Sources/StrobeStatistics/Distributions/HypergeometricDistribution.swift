import Foundation

/// The hypergeometric distribution, for Fisher's exact test of two
/// proportions: how often one side's share of events exceeds the other's
/// by chance when both draw from one pool.
package enum HypergeometricDistribution {
    /// Fisher's one-sided exact p-value that the `candidate` side's share of
    /// events (`candidateEvents` of `candidateTotal`) exceeds the baseline's
    /// (`baselineEvents` of `baselineTotal`) by chance alone: the probability,
    /// with the tables' margins fixed, of the candidate holding
    /// `candidateEvents` or more of all the events. 1 when a side is empty.
    package static func fisherGreater(
        candidateEvents: Int, candidateTotal: Int, baselineEvents: Int, baselineTotal: Int
    ) -> Double {
        guard candidateTotal > 0, baselineTotal > 0,
            (0...candidateTotal).contains(candidateEvents), (0...baselineTotal).contains(baselineEvents)
        else { return 1 }
        let events = candidateEvents + baselineEvents
        func logChoose(_ n: Int, _ k: Int) -> Double {
            lgamma(Double(n) + 1) - lgamma(Double(k) + 1) - lgamma(Double(n - k) + 1)
        }
        let logAll = logChoose(candidateTotal + baselineTotal, events)
        var p = 0.0
        // From the candidate's events up to all of them or all its places;
        // the baseline then holds no more than its own events, so never more
        // than its places.
        for k in candidateEvents...min(events, candidateTotal) {
            p += exp(logChoose(candidateTotal, k) + logChoose(baselineTotal, events - k) - logAll)
        }
        return min(p, 1)
    }
}
