/// The rank scan over a segment and over seeded intervals inside it, so that
/// a step that is undone a few runs later (a regression and its fix) is
/// found: one split of the whole segment sees such a bump only weakly.
///
/// Seeded binary segmentation (Kovács, Li, Bühlmann and Munk, 2020): at
/// scale j ≥ 2 there are 2ʲ − 1 intervals of length n / 2ʲ⁻¹, evenly
/// spread over the segment, down to the shortest length that still holds
/// two minimum segments. The whole segment gets half of the level
/// (its p-value times 2); the other scales share the other half equally,
/// and the intervals of one scale share theirs (weighted Bonferroni), so the
/// result's p-value holds its level however many intervals are tried.
struct SeededScan: Sendable, Hashable {
    /// Absolute index (in the series) of the first run after the split.
    var split: Int
    /// The Bonferroni-weighted p-value of the best interval.
    var pValue: Double

    /// The most significant split of `values`, or nil when it is shorter than
    /// two minimum segments.
    static func best(_ values: ArraySlice<Double>, minimumSegment: Int) -> SeededScan? {
        let n = values.count
        guard let whole = RankScan.scan(values, minimumSegment: minimumSegment) else { return nil }
        var best = SeededScan(split: values.startIndex + whole.split, pValue: min(1, 2 * whole.pValue))
        var scales: [(length: Int, count: Int)] = []
        var scale = 2
        while scale < 40 {
            let length = Int((Double(n) / Double(1 << (scale - 1))).rounded())
            guard length >= 2 * minimumSegment else { break }
            scales.append((length, (1 << scale) - 1))
            scale += 1
        }
        for (length, count) in scales {
            let weight = 2 * Double(scales.count) * Double(count)
            let stride = Double(n - length) / Double(count - 1)
            for interval in 0..<count {
                let start = values.startIndex + Int((Double(interval) * stride).rounded())
                guard let scan = RankScan.scan(values[start..<(start + length)], minimumSegment: minimumSegment) else {
                    continue
                }
                let p = min(1, weight * scan.pValue)
                if p < best.pValue { best = SeededScan(split: start + scan.split, pValue: p) }
            }
        }
        return best
    }
}
