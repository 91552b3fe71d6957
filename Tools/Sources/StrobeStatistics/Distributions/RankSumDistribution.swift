/// The exact distribution of the sum of `k` scores drawn without
/// replacement from a fixed multiset: the permutation distribution of a rank
/// sum, with ties (scores are doubled mid-ranks, so whole numbers).
struct RankSumDistribution {
    /// `counts[k][s]`: how many k-subsets of the scores sum to s.
    private var counts: [[Double]]

    /// The distributions of every subset size up to `largest` (at most 12).
    init(scores: [Int], largest: Int) {
        // A sum of `size` scores is at most `size` times the largest score.
        let top = scores.max() ?? 0
        counts = [[Double]](repeating: [Double](repeating: 0, count: largest * top + 1), count: largest + 1)
        counts[0][0] = 1
        var reached = 0
        for score in scores {
            reached += score
            for size in stride(from: largest, through: 1, by: -1) {
                var sum = min(reached, size * top)
                while sum >= score {
                    let ways = counts[size - 1][sum - score]
                    if ways > 0 { counts[size][sum] += ways }
                    sum -= 1
                }
            }
        }
    }

    /// The two-sided p-value of a sum `observed` of `k` scores: twice the
    /// smaller tail, at most 1.
    func twoSidedPValue(k: Int, observed: Int) -> Double {
        let row = counts[k]
        var all = 0.0
        var upper = 0.0
        var lower = 0.0
        for (sum, ways) in row.enumerated() where ways > 0 {
            all += ways
            if sum >= observed { upper += ways }
            if sum <= observed { lower += ways }
        }
        guard all > 0 else { return 1 }
        return min(1, 2 * min(upper, lower) / all)
    }
}
