import Foundation

/// The result of a two-sample test.
public struct TestResult: Sendable, Hashable, Codable {
    /// The test statistic.
    public var statistic: Double
    /// The two-sided p-value.
    public var pValue: Double
}

/// Distribution-free two-sample tests.
public enum RankTests {
    /// The Mann–Whitney U test for a shift between `first` and `second`:
    /// U of `second` over `first`, with the normal approximation corrected
    /// for ties and for continuity. Two-sided.
    public static func mannWhitney(_ first: [Double], _ second: [Double]) -> TestResult {
        let n1 = Double(first.count)
        let n2 = Double(second.count)
        guard n1 > 0, n2 > 0 else { return TestResult(statistic: 0, pValue: 1) }
        var pooled = first.map { ($0, 0) } + second.map { ($0, 1) }
        pooled.sort { $0.0 < $1.0 }
        var rankSumSecond = 0.0
        var tieTerm = 0.0
        var index = 0
        while index < pooled.count {
            var end = index
            while end + 1 < pooled.count, pooled[end + 1].0 == pooled[index].0 { end += 1 }
            let rank = Double(index + end) / 2 + 1
            let ties = Double(end - index + 1)
            if ties > 1 { tieTerm += ties * ties * ties - ties }
            for position in index...end where pooled[position].1 == 1 { rankSumSecond += rank }
            index = end + 1
        }
        let u = rankSumSecond - n2 * (n2 + 1) / 2
        let mean = n1 * n2 / 2
        let n = n1 + n2
        let variance = n1 * n2 / 12 * ((n + 1) - tieTerm / (n * (n - 1)))
        guard variance > 0 else { return TestResult(statistic: u, pValue: 1) }
        let distance = max(abs(u - mean) - 0.5, 0)
        let z = distance / variance.squareRoot()
        return TestResult(statistic: u, pValue: min(1, 2 * NormalDistribution.survival(z)))
    }

    /// The two-sample Kolmogorov–Smirnov test for any difference in shape:
    /// the largest gap between the empirical distribution functions, with
    /// the asymptotic p-value (Kolmogorov's series with Stephens' small-
    /// sample correction).
    public static func kolmogorovSmirnov(_ first: [Double], _ second: [Double]) -> TestResult {
        guard !first.isEmpty, !second.isEmpty else { return TestResult(statistic: 0, pValue: 1) }
        let a = first.sorted()
        let b = second.sorted()
        var i = 0
        var j = 0
        var largest = 0.0
        while i < a.count, j < b.count {
            let value = min(a[i], b[j])
            while i < a.count, a[i] <= value { i += 1 }
            while j < b.count, b[j] <= value { j += 1 }
            largest = max(largest, abs(Double(i) / Double(a.count) - Double(j) / Double(b.count)))
        }
        let effective = Double(a.count * b.count) / Double(a.count + b.count)
        let root = effective.squareRoot()
        let lambda = (root + 0.12 + 0.11 / root) * largest
        guard lambda > 0.2 else { return TestResult(statistic: largest, pValue: 1) }
        var sum = 0.0
        for k in 1...100 {
            let term = exp(-2 * Double(k * k) * lambda * lambda) * (k % 2 == 1 ? 1 : -1)
            sum += term
            if abs(term) < 1e-12 { break }
        }
        return TestResult(statistic: largest, pValue: min(max(2 * sum, 0), 1))
    }
}
