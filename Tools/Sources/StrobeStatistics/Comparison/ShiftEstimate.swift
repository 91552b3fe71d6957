import Foundation

/// How much the candidate differs from the baseline, as a ratio.
public struct ShiftEstimate: Sendable, Hashable, Codable {
    /// The estimated ratio candidate / baseline (1.10 = 10% larger).
    public var ratio: Double
    /// The lower end of its confidence interval.
    public var lower: Double
    /// The upper end of its confidence interval.
    public var upper: Double
    /// The interval's confidence level.
    public var confidence: Double

    /// A ratio with its interval at `confidence`.
    public init(ratio: Double, lower: Double, upper: Double, confidence: Double) {
        self.ratio = ratio
        self.lower = lower
        self.upper = upper
        self.confidence = confidence
    }

    /// The relative change, `ratio - 1`.
    public var change: Double { ratio - 1 }

    /// The Hodges–Lehmann estimate of the shift between log values — the
    /// median of all pairwise differences log(candidate) − log(baseline) —
    /// as a ratio, with its distribution-free confidence interval: the
    /// pairwise differences at the ranks the Mann–Whitney distribution gives
    /// for `confidence`. Exact for a pure multiplicative shift whatever the
    /// noise's shape; values must be positive.
    ///
    /// When some values are zero or negative (counts that can be zero), the
    /// shift is estimated on the values themselves and expressed relative to
    /// the baseline's median; it is undefined when that median is not positive.
    public static func hodgesLehmann(baseline: [Double], candidate: [Double], confidence: Double = 0.95)
        -> ShiftEstimate?
    {
        guard !baseline.isEmpty, !candidate.isEmpty else { return nil }
        if baseline.allSatisfy({ $0 > 0 }) && candidate.allSatisfy({ $0 > 0 }) {
            return shift(baseline.map { log($0) }, candidate.map { log($0) }, confidence: confidence) { exp($0) }
        }
        let reference = Quantiles.median(sorted: baseline.sorted())
        guard reference > 0 else { return nil }
        return shift(baseline, candidate, confidence: confidence) { max(1 + $0 / reference, 0) }
    }

    /// The Hodges–Lehmann shift of `cand` over `base` and its interval,
    /// mapped to a ratio by `ratio`.
    private static func shift(
        _ base: [Double], _ cand: [Double], confidence: Double, ratio: (Double) -> Double
    ) -> ShiftEstimate {
        var differences: [Double] = []
        differences.reserveCapacity(base.count * cand.count)
        for c in cand {
            for b in base { differences.append(c - b) }
        }
        differences.sort()
        let count = differences.count
        let n1 = Double(base.count)
        let n2 = Double(cand.count)
        let z = NormalDistribution.quantile(1 - (1 - confidence) / 2)
        let spread = z * (n1 * n2 * (n1 + n2 + 1) / 12).squareRoot()
        let k = max(Int((n1 * n2 / 2 - spread).rounded(.down)), 0)
        let lowerIndex = min(k, count - 1)
        let upperIndex = max(count - 1 - k, 0)
        let center = Quantiles.median(sorted: differences)
        return ShiftEstimate(
            ratio: ratio(center), lower: ratio(differences[lowerIndex]), upper: ratio(differences[upperIndex]),
            confidence: confidence)
    }
}

/// Control of the false discovery rate across many tests.
public enum MultipleComparisons {
    /// Benjamini–Hochberg adjusted p-values, in the order given: reject
    /// every hypothesis whose adjusted p-value is at most q to keep the
    /// expected share of false discoveries at or below q (and, when every
    /// hypothesis is true, the chance of any false discovery too).
    public static func benjaminiHochberg(_ pValues: [Double]) -> [Double] {
        let m = pValues.count
        guard m > 0 else { return [] }
        let order = pValues.indices.sorted { pValues[$0] < pValues[$1] }
        var adjusted = [Double](repeating: 1, count: m)
        var running = 1.0
        for rank in stride(from: m, through: 1, by: -1) {
            let index = order[rank - 1]
            running = min(running, pValues[index] * Double(m) / Double(rank))
            adjusted[index] = min(running, 1)
        }
        return adjusted
    }
}
