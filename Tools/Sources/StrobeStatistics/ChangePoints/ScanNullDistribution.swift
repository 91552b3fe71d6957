import Synchronization

/// The null distribution of the rank scan's maximum |z| for short segments,
/// drawn by permutation.
///
/// Under "no change" the runs are exchangeable, so their ranks are a uniform
/// random permutation whatever the noise's shape: the distribution of the
/// maximum depends only on the segment's length and the minimum segment, and
/// one table serves every series. Segments of up to ``longest`` runs use a
/// table of permutations; beyond the table's resolution (fewer
/// than ``tailDraws`` draws as large) the analytic tail takes over, scaled
/// to meet the table where it ends. The analytic tail alone is conservative
/// by a factor of 2–4 at 20–60 runs (rank sums have lighter tails than the
/// normal), which costs short segments and steps near the ends their power.
/// Each table is drawn from a generator seeded by its length, so results
/// never vary from run to run; tables are kept for the life of the process.
enum ScanNullDistribution {
    /// The longest segment given a table; longer ones use the analytic tail.
    static let longest = 200
    /// Segments up to this length get a table of their own and
    /// ``shortDraws`` permutations; longer ones share the table of the next
    /// multiple of ``lengthStep`` (more splits: a conservative stand-in) with
    /// ``longDraws``.
    static let shortest = 64
    static let lengthStep = 8
    static let shortDraws = 50_000
    static let longDraws = 20_000
    /// The fewest draws at or beyond a value for the table alone to give its p-value.
    static let tailDraws = 25

    private struct Key: Hashable {
        var count: Int
        var minimumSegment: Int
    }

    /// A table: the sorted maxima, and the analytic tail's scale where they end.
    private struct Table {
        var maxima: [Float]
        var scale: Double
    }

    private static let tables = Mutex<[Key: Table]>([:])

    /// P(max over splits of |z| ≥ b) for `count` exchangeable runs.
    static func pValue(_ b: Double, count: Int, minimumSegment: Int) -> Double {
        // Far from any level in use the conservative tail is good enough,
        // and most segments of flat series never need a table.
        guard count <= longest, count >= 2 * minimumSegment, b > 2 else {
            return RankScan.maximumTail(b, count: count, minimumSegment: minimumSegment)
        }
        let length = count <= shortest ? count : (count + lengthStep - 1) / lengthStep * lengthStep
        let draws = count <= shortest ? shortDraws : longDraws
        let table = table(count: length, minimumSegment: minimumSegment, draws: draws)
        // Draws at least as large as b (the maxima are sorted ascending).
        let threshold = Float(b) * (1 - 1e-6)
        var low = 0
        var high = table.maxima.count
        while low < high {
            let middle = (low + high) / 2
            if table.maxima[middle] < threshold { low = middle + 1 } else { high = middle }
        }
        let beyond = table.maxima.count - low
        if beyond >= tailDraws { return Double(beyond + 1) / Double(draws + 1) }
        let resolution = Double(tailDraws + 1) / Double(draws + 1)
        return min(resolution, RankScan.maximumTail(b, count: length, minimumSegment: minimumSegment) * table.scale)
    }

    private static func table(count: Int, minimumSegment: Int, draws: Int) -> Table {
        let key = Key(count: count, minimumSegment: minimumSegment)
        if let table = tables.withLock({ $0[key] }) { return table }
        let maxima = draw(count: count, minimumSegment: minimumSegment, draws: draws)
        let resolution = Double(tailDraws + 1) / Double(draws + 1)
        let edge = Double(maxima[maxima.count - tailDraws])
        let scale = min(1, resolution / RankScan.maximumTail(edge, count: count, minimumSegment: minimumSegment))
        let table = Table(maxima: maxima, scale: scale)
        tables.withLock { $0[key] = table }
        return table
    }

    /// The sorted maxima of `draws` random permutations of 1…count.
    private static func draw(count n: Int, minimumSegment m: Int, draws: Int) -> [Float] {
        var state = UInt64(n) &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(m)
        let mean = Double(n + 1) / 2
        let scales = (0...n).map { k -> Double in
            k >= m && k <= n - m ? 1 / (Double(k) * Double(n - k) * Double(n + 1) / 12).squareRoot() : 0
        }
        var ranks = (1...n).map(Double.init)
        var maxima = [Float](repeating: 0, count: draws)
        scales.withUnsafeBufferPointer { scales in
            ranks.withUnsafeMutableBufferPointer { ranks in
                for draw in 0..<draws {
                    // Fisher–Yates with SplitMix64 and Lemire's multiply-shift.
                    var index = n - 1
                    while index > 0 {
                        state &+= 0x9E37_79B9_7F4A_7C15
                        var z = state
                        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                        z ^= z >> 31
                        let other = Int(((z >> 32) &* UInt64(index + 1)) >> 32)
                        let swapped = ranks[index]
                        ranks[index] = ranks[other]
                        ranks[other] = swapped
                        index -= 1
                    }
                    var sum = 0.0
                    var largest = 0.0
                    var k = 1
                    while k <= n - m {
                        sum += ranks[k - 1]
                        let z = abs(sum - Double(k) * mean) * scales[k]
                        if z > largest { largest = z }
                        k += 1
                    }
                    maxima[draw] = Float(largest)
                }
            }
        }
        maxima.sort()
        return maxima
    }
}
