import Foundation

/// A run at which a metric's level changed.
public struct ChangePoint: Sendable, Hashable, Codable {
    /// The index of the first run after the change.
    public var index: Int
    /// Median of the samples before it (back to the previous change).
    public var medianBefore: Double
    /// Median of the samples after it (up to the next change).
    public var medianAfter: Double
    /// Relative change of the median.
    public var change: Double
    /// The split's Mann–Whitney p-value, Bonferroni-adjusted for the splits tried.
    public var pValue: Double
}

/// Finds where a metric's level changed in a history of runs.
public enum ChangePointDetector {
    /// Binary segmentation with a rank statistic: within a segment of runs,
    /// every boundary between runs is a candidate; the one whose before/after
    /// Mann–Whitney test is strongest is kept when its p-value, multiplied by
    /// the number of candidates, is below `alpha` and the medians differ by
    /// more than `minimumEffect`. Each side is then searched the same way.
    /// Robust to outliers and to the noise's shape.
    ///
    /// - Parameter runs: Samples per run, in history order.
    public static func detect(
        runs: [[Double]], alpha: Double = 0.01, minimumEffect: Double = 0.02, maximumChanges: Int = 5
    ) -> [ChangePoint] {
        var found: [ChangePoint] = []
        search(runs, range: 0..<runs.count, alpha: alpha, minimumEffect: minimumEffect, found: &found, budget: maximumChanges)
        return found.sorted { $0.index < $1.index }
    }

    private static func search(
        _ runs: [[Double]], range: Range<Int>, alpha: Double, minimumEffect: Double, found: inout [ChangePoint], budget: Int
    ) {
        guard range.count >= 2, found.count < budget else { return }
        var best: ChangePoint?
        let candidates = range.count - 1
        for split in (range.lowerBound + 1)..<range.upperBound {
            let before = runs[range.lowerBound..<split].flatMap { $0 }
            let after = runs[split..<range.upperBound].flatMap { $0 }
            guard before.count >= 3, after.count >= 3 else { continue }
            let test = RankTests.mannWhitney(before, after)
            let p = min(1, test.pValue * Double(candidates))
            let medianBefore = Quantiles.median(sorted: before.sorted())
            let medianAfter = Quantiles.median(sorted: after.sorted())
            let change = medianBefore != 0 ? medianAfter / medianBefore - 1 : 0
            if best == nil || p < best!.pValue {
                best = ChangePoint(index: split, medianBefore: medianBefore, medianAfter: medianAfter, change: change, pValue: p)
            }
        }
        guard let best, best.pValue <= alpha, abs(best.change) > minimumEffect else { return }
        found.append(best)
        search(runs, range: range.lowerBound..<best.index, alpha: alpha, minimumEffect: minimumEffect, found: &found, budget: budget)
        search(runs, range: best.index..<range.upperBound, alpha: alpha, minimumEffect: minimumEffect, found: &found, budget: budget)
    }
}
