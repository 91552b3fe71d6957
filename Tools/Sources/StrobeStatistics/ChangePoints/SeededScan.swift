/// The rank scan over a segment and over seeded intervals inside it, so that
/// a step that is undone a few runs later (a regression and its fix) is
/// found: one split of the whole segment sees such a bump only weakly.
///
/// Seeded binary segmentation (Kovács, Li, Bühlmann and Munk, 2020): at
/// scale j ≥ 2 there are 2ʲ − 1 intervals of length n / 2ʲ⁻¹, evenly
/// spread over the segment, down to 1/64 of the segment or the shortest
/// length that still holds two minimum segments. The whole segment gets three quarters of the level
/// (its p-value divided by 0.75), as a single step is the common case; the
/// other scales share the last quarter equally, and the intervals of one
/// scale share theirs (weighted Bonferroni), so the result's p-value holds
/// its level however many intervals are tried. An interval whose |z| is
/// below 2.5 is not given a p-value: weighted by at least 24 it could not
/// come below 0.3, and skipping it keeps long histories fast.
struct SeededScan: Sendable, Hashable {
    /// Absolute index (in the series) of the first run after the split.
    var split: Int
    /// The Bonferroni-weighted p-value of the best interval.
    var pValue: Double

    /// The share of the level given to the whole segment.
    static let wholeWeight = 0.75
    /// The finest scale: intervals of 1/64 of the segment. A shorter bump
    /// in a long segment is found once the segment has been divided.
    static let deepestScale = 7
    /// Intervals with a smaller |z| are not tested.
    static let smallestInterestingZ = 2.5

    /// The most significant split of `values`, or nil when it is shorter than
    /// two minimum segments.
    static func best(_ values: ArraySlice<Double>, minimumSegment: Int) -> SeededScan? {
        let n = values.count
        guard let whole = RankScan.scan(values, minimumSegment: minimumSegment) else { return nil }
        var best = SeededScan(split: values.startIndex + whole.split, pValue: min(1, whole.pValue / wholeWeight))
        var scales: [(length: Int, count: Int)] = []
        var scale = 2
        while scale <= deepestScale {
            let length = Int((Double(n) / Double(1 << (scale - 1))).rounded())
            guard length >= 2 * minimumSegment else { break }
            scales.append((length, (1 << scale) - 1))
            scale += 1
        }
        for (length, count) in scales {
            let weight = Double(scales.count) * Double(count) / (1 - wholeWeight)
            let stride = Double(n - length) / Double(count - 1)
            for interval in 0..<count {
                let start = values.startIndex + Int((Double(interval) * stride).rounded())
                let interval = values[start..<(start + length)]
                guard let scan = RankScan.scan(interval, minimumSegment: minimumSegment, pValue: false),
                    abs(scan.z) >= smallestInterestingZ
                else { continue }
                let p = min(
                    1, weight * ScanNullDistribution.pValue(abs(scan.z), count: length, minimumSegment: minimumSegment))
                if p < best.pValue { best = SeededScan(split: start + scan.split, pValue: p) }
            }
        }
        return best
    }
}
