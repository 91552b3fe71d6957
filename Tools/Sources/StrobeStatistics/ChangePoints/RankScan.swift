import Foundation

/// Mid-ranks of a sample and the tie term of their variance.
struct MidRanks {
    /// The rank of each value (1-based; tied values share their mean rank).
    var ranks: [Double]
    /// Σ (t³ − t) over groups of t tied values.
    var tieTerm: Double

    init<C: Collection<Double>>(_ values: C) {
        var order = values.enumerated().map { (value: $0.element, index: $0.offset) }
        order.sort { $0.value < $1.value }
        ranks = [Double](repeating: 0, count: order.count)
        tieTerm = 0
        var start = 0
        while start < order.count {
            var end = start
            while end + 1 < order.count, order[end + 1].value == order[start].value { end += 1 }
            let rank = Double(start + end) / 2 + 1
            for position in start...end { ranks[order[position].index] = rank }
            let ties = Double(end - start + 1)
            if ties > 1 { tieTerm += ties * ties * ties - ties }
            start = end + 1
        }
    }

    /// The variance of the rank sum of `k` of the `n` values under exchangeability.
    func rankSumVariance(k: Int) -> Double {
        let n = Double(ranks.count)
        let size = Double(k)
        return size * (n - size) / 12 * ((n + 1) - tieTerm / (n * (n - 1)))
    }
}

/// The strongest split of a segment of runs by a rank statistic.
///
/// For every split with at least `minimumSegment` runs on each side, the
/// Mann–Whitney statistic of the runs after the split against the runs
/// before it, standardized under exchangeability (mid-ranks, tie-corrected
/// variance). The scan keeps the split whose |z| is largest. Ranks make it
/// indifferent to the noise's shape: a metric whose processes are bimodal
/// has exactly the same null distribution as a normal one.
struct RankScan: Sendable, Hashable {
    /// Offset in the segment of the first run after the split.
    var split: Int
    /// The standardized statistic there; positive when the runs after are larger.
    var z: Double
    /// The chance under "no change" of a maximum |z| at least this large
    /// (`ScanNullDistribution`).
    var pValue: Double

    /// The scan of `values`, or nil when they are fewer than two minimum
    /// segments. Without `pValue` the scan only places the split (its
    /// p-value is left at 1).
    static func scan(_ values: ArraySlice<Double>, minimumSegment: Int, pValue: Bool = true) -> RankScan? {
        let n = values.count
        guard n >= 2 * minimumSegment else { return nil }
        let midRanks = MidRanks(values)
        let mean = Double(n + 1) / 2
        var before = 0.0
        var best = RankScan(split: minimumSegment, z: 0, pValue: 1)
        var found = false
        for k in 1...(n - minimumSegment) {
            before += midRanks.ranks[k - 1]
            guard k >= minimumSegment else { continue }
            let variance = midRanks.rankSumVariance(k: k)
            guard variance > 0 else { continue }
            // The rank sum after the split, centred: minus that of the runs before.
            let z = -(before - Double(k) * mean) / variance.squareRoot()
            if !found || abs(z) > abs(best.z) {
                best = RankScan(split: k, z: z, pValue: 1)
                found = true
            }
        }
        guard found, best.z != 0, pValue else { return found ? best : nil }
        best.pValue = ScanNullDistribution.pValue(abs(best.z), count: n, minimumSegment: minimumSegment)
        return best
    }

    /// P(max over splits of |z| ≥ b) for `count` exchangeable runs: the
    /// smaller of Bonferroni over the splits and Siegmund's approximation
    /// for the maximum of a standardized two-sample statistic,
    /// b φ(b) Σₖ wₖ ν(b √wₖ), wₖ = n / (k (n − k)), with the overshoot
    /// correction ν of Siegmund and Yakir. Both err on the large side here:
    /// rank sums have lighter tails than the normal (their range is bounded),
    /// so the reported p-value is conservative, most for short segments.
    static func maximumTail(_ b: Double, count n: Int, minimumSegment m: Int) -> Double {
        let splits = n - 2 * m + 1
        guard splits > 0 else { return 1 }
        let density = exp(-b * b / 2) / (2 * Double.pi).squareRoot()
        var sum = 0.0
        for k in m...(n - m) {
            let weight = Double(n) / (Double(k) * Double(n - k))
            sum += weight * overshoot(b * weight.squareRoot())
        }
        let siegmund = b * density * sum
        let bonferroni = Double(splits) * 2 * NormalDistribution.survival(b)
        return min(1, siegmund, bonferroni)
    }

    /// Siegmund and Yakir's approximation of the overshoot correction ν(x)
    /// for a random walk observed at discrete steps.
    static func overshoot(_ x: Double) -> Double {
        guard x > 1e-9 else { return 1 }
        let half = x / 2
        let cdf = NormalDistribution.cdf(half)
        let density = exp(-half * half / 2) / (2 * Double.pi).squareRoot()
        return (2 / x) * (cdf - 0.5) / (half * cdf + density)
    }

    /// The standardized Mann–Whitney statistic of `values[split...]` against
    /// `values[..<split]`: positive when the runs after are larger. Zero when
    /// either side is empty or every value is tied.
    static func splitStatistic(_ values: ArraySlice<Double>, split: Int) -> Double {
        let n = values.count
        guard split > 0, split < n else { return 0 }
        let midRanks = MidRanks(values)
        let variance = midRanks.rankSumVariance(k: n - split)
        guard variance > 0 else { return 0 }
        let after = midRanks.ranks[split...].reduce(0, +)
        return (after - Double(n - split) * Double(n + 1) / 2) / variance.squareRoot()
    }

    /// The two-sided p-value of ``splitStatistic(_:split:)`` under its
    /// normal approximation, at most 1.
    static func splitPValue(_ values: ArraySlice<Double>, split: Int) -> Double {
        splitPValue(values, split: split, up: true, expectedShare: 0.5)
    }

    /// The p-value of ``splitStatistic(_:split:)`` under its normal
    /// approximation, with the share `expectedShare` of the level given to
    /// the direction expected (the runs after larger when `up`) and the
    /// rest to the other: the smaller of the two one-sided p-values, each
    /// over its share, at most 1. A share of 0.5 gives the two-sided
    /// p-value.
    static func splitPValue(_ values: ArraySlice<Double>, split: Int, up: Bool, expectedShare: Double) -> Double {
        let z = splitStatistic(values, split: split)
        let expected = NormalDistribution.survival(up ? z : -z) / expectedShare
        let other = NormalDistribution.survival(up ? -z : z) / (1 - expectedShare)
        return min(1, expected, other)
    }
}
