import Foundation

/// The samples one replicate contributed to a metric: every iteration of one
/// process (or one launch of a program).
///
/// Iterations of one process share its heap layout, CPU frequency, core
/// placement and neighbours, so they are not independent of each other;
/// processes are. A comparison therefore treats the process as the unit and
/// uses its iterations only to summarise it precisely.
public struct Replicate: Sendable, Hashable, Codable {
    /// Names the process, unique within its side.
    public var id: String
    /// The round of an interleaved comparison it ran in, if any: the baseline
    /// and candidate replicates of one round ran back to back.
    public var round: Int?
    /// Its samples, one per iteration.
    public var samples: [Double]

    /// A replicate.
    public init(id: String, round: Int? = nil, samples: [Double]) {
        self.id = id
        self.round = round
        self.samples = samples
    }
}

/// How one replicate's iterations become the one value the comparison uses.
public enum ReplicateSummary: String, Sendable, Hashable, Codable, CaseIterable {
    /// The median iteration: robust to a few slow iterations, and the
    /// default.
    case median
    /// The fastest iteration. On a shared machine, interference (preemption,
    /// a neighbour on the core, cache pollution) only ever adds time, so the
    /// minimum estimates the time of the code itself most precisely (Chen
    /// and Revels, "Robust benchmarking in noisy environments", 2016). Use it
    /// for CPU-bound times; it does not see changes that only widen the tail.
    case minimum
}

extension ReplicateSummary {
    /// The summary of `samples` (not empty).
    public func value(of samples: [Double]) -> Double {
        switch self {
        case .median: return Quantiles.median(sorted: samples.sorted())
        case .minimum: return samples.min() ?? .nan
        }
    }
}

/// How a metric's two sides were compared.
public enum ComparisonMethod: String, Sendable, Hashable, Codable {
    /// Rounds pair a baseline and a candidate process: a t-test on the mean
    /// of the per-round differences of process medians (log ratios for
    /// positive metrics), which cancels the drift both processes of a round
    /// share; 15%-trimmed when a round stands apart from the others.
    case pairedRounds = "paired rounds"
    /// Welch's t-test on the process medians of each side (log values for
    /// positive metrics); Yuen's test (on 15%-trimmed means) when a process
    /// stands apart from the others of its side.
    case processes
    /// One process on a side: its iterations are compared as if they were
    /// independent (Mann–Whitney U), which cannot see the noise between
    /// processes.
    case iterations
    /// No spread on either side, or a counted metric whose sides spread
    /// within its tolerance (the judgement's `countTolerance`): the
    /// values are compared as they are.
    case exact
}

/// The outcome of the process-level test of one metric.
public struct ReplicateTestResult: Sendable, Hashable, Codable {
    /// How the sides were compared.
    public var method: ComparisonMethod
    /// Whether the analysis ran on log values (every sample positive), so
    /// that differences are log ratios.
    public var logScale: Bool
    /// The estimated difference candidate − baseline on the analysis scale.
    public var estimate: Double
    /// Its standard error; 0 for exact comparisons.
    public var standardError: Double
    /// Degrees of freedom of the t statistic; infinity for exact ones.
    public var degreesOfFreedom: Double
    /// The test statistic (t).
    public var statistic: Double
    /// Two-sided p-value for "no difference".
    public var pValue: Double
    /// Replicates used per side (pairs for ``ComparisonMethod/pairedRounds``).
    public var baselineReplicates: Int
    /// Replicates used on the candidate's side.
    public var candidateReplicates: Int
    /// The spread of one replicate's summary on the analysis scale (the
    /// standard deviation of the per-round differences when paired, the
    /// pooled one of the process medians otherwise): what decides how many
    /// more rounds a verdict needs.
    public var replicateSpread: Double
    /// Whether a replicate stood apart from the others of its side (or a
    /// round's difference from the other rounds'), so that the means were
    /// 15%-trimmed (Yuen's test) rather than plain (Welch's).
    public var trimmed: Bool = false

    /// A result with these values.
    public init(
        method: ComparisonMethod, logScale: Bool, estimate: Double, standardError: Double, degreesOfFreedom: Double,
        statistic: Double, pValue: Double, baselineReplicates: Int, candidateReplicates: Int, replicateSpread: Double,
        trimmed: Bool = false
    ) {
        self.method = method
        self.logScale = logScale
        self.estimate = estimate
        self.standardError = standardError
        self.degreesOfFreedom = degreesOfFreedom
        self.statistic = statistic
        self.pValue = pValue
        self.baselineReplicates = baselineReplicates
        self.candidateReplicates = candidateReplicates
        self.replicateSpread = replicateSpread
        self.trimmed = trimmed
    }

    /// The two-sided confidence interval of ``estimate`` at `confidence`.
    public func interval(confidence: Double) -> (lower: Double, upper: Double) {
        guard standardError > 0 else { return (estimate, estimate) }
        let t = StudentDistribution.quantile(1 - (1 - confidence) / 2, degreesOfFreedom: degreesOfFreedom)
        return (estimate - t * standardError, estimate + t * standardError)
    }
}

/// The process-level two-sample comparison behind `strobe diff`.
public enum ReplicateTest {
    /// Compares the replicates of a metric.
    ///
    /// - Each replicate is summarised by the median (or, with `summary`, the
    ///   minimum) of its samples, on log values when every sample on both
    ///   sides is positive.
    /// - When every replicate has a round and at least two rounds have both
    ///   sides, the per-round differences are tested with a one-sample
    ///   t-test on their mean (several replicates of one side in a round
    ///   are averaged).
    /// - Otherwise, with at least two replicates per side, Welch's t-test
    ///   compares the two sets of summaries.
    /// - When a value stands apart (``standsApart(_:)``: further from its
    ///   side's median than ``outlierDistance`` scaled MADs), the means are
    ///   15%-trimmed (none under 7 values) with winsorized variances: Yuen's
    ///   tests. That keeps a process that a neighbour slowed for its whole
    ///   life from swamping the others. Trimming always would cost power on
    ///   clean data: at 10 processes it drops 2 of 10 values and 2 degrees
    ///   of freedom per side, which tells at the level Benjamini–Hochberg
    ///   asks of one metric among 20 (alpha/20): see docs/statistics.md for
    ///   the measured power against the oracle's. The check is invariant
    ///   to location and scale, so for normal data it is independent of the
    ///   means and standard deviations (Basu's theorem): choosing Welch's
    ///   test by it keeps that test's error rate exactly.
    /// - With a single replicate on a side, nothing measures the noise
    ///   between processes; the samples fall back to the Mann–Whitney test
    ///   of iterations (``ComparisonMethod/iterations``), which the caller
    ///   should flag.
    /// - With no spread at all on either side, the result is exact.
    ///
    /// With `logScaleAllowed` false the values are compared as they are, so
    /// the estimate is a difference in their unit (a function's CPU time per
    /// iteration, which is 0 where the function never ran).
    public static func compare(
        baseline: [Replicate], candidate: [Replicate], summary kind: ReplicateSummary = .median,
        logScaleAllowed: Bool = true
    ) -> ReplicateTestResult {
        let base = baseline.filter { !$0.samples.isEmpty }
        let cand = candidate.filter { !$0.samples.isEmpty }
        let logScale = logScaleAllowed && (base + cand).allSatisfy { $0.samples.allSatisfy { $0 > 0 } }
        func summary(_ replicate: Replicate) -> Double {
            let value = kind.value(of: replicate.samples)
            return logScale ? log(value) : value
        }
        let allBase = base.flatMap(\.samples)
        let allCand = cand.flatMap(\.samples)
        if Set(allBase).count <= 1, Set(allCand).count <= 1, let b = allBase.first, let c = allCand.first {
            let difference = logScale ? log(c) - log(b) : c - b
            return ReplicateTestResult(
                method: .exact, logScale: logScale, estimate: difference, standardError: 0, degreesOfFreedom: .infinity,
                statistic: difference == 0 ? 0 : .infinity, pValue: difference == 0 ? 1 : 0,
                baselineReplicates: base.count, candidateReplicates: cand.count, replicateSpread: 0)
        }
        if let paired = pairedRounds(base, cand, summary: summary, logScale: logScale) { return paired }
        if base.count >= 2, cand.count >= 2 {
            return processes(base.map(summary), cand.map(summary), logScale: logScale)
        }
        return iterations(allBase, allCand, logScale: logScale, baseCount: base.count, candCount: cand.count)
    }

    private static func pairedRounds(
        _ base: [Replicate], _ cand: [Replicate], summary: (Replicate) -> Double, logScale: Bool
    ) -> ReplicateTestResult? {
        guard base.allSatisfy({ $0.round != nil }), cand.allSatisfy({ $0.round != nil }) else { return nil }
        func byRound(_ replicates: [Replicate]) -> [Int: Double] {
            Dictionary(grouping: replicates, by: { $0.round ?? 0 }).mapValues { group in
                group.map(summary).reduce(0, +) / Double(group.count)
            }
        }
        let baseRounds = byRound(base)
        let candRounds = byRound(cand)
        let differences = baseRounds.keys.sorted().compactMap { round in
            candRounds[round].map { $0 - baseRounds[round]! }
        }
        guard differences.count >= 2 else { return nil }
        let trimmed = TrimmedMean(differences, trimming: standsApart(differences) ? trimming : 0)
        let mean = trimmed.mean
        let error = trimmed.standardError
        let degrees = trimmed.degreesOfFreedom
        let t = error > 0 ? mean / error : (mean == 0 ? 0 : (mean > 0 ? .infinity : -.infinity))
        let pValue =
            error > 0 ? 2 * StudentDistribution.survival(abs(t), degreesOfFreedom: degrees) : (mean == 0 ? 1 : 0)
        return ReplicateTestResult(
            method: .pairedRounds, logScale: logScale, estimate: mean, standardError: error, degreesOfFreedom: degrees,
            statistic: t, pValue: pValue, baselineReplicates: differences.count, candidateReplicates: differences.count,
            replicateSpread: trimmed.spread, trimmed: trimmed.trimmedPerEnd > 0)
    }

    /// Welch's t-test on the two sides' values, or Yuen's test (on
    /// 15%-trimmed means with winsorized variances) when a value of either
    /// side stands apart from the rest of its side.
    static func processes(_ base: [Double], _ cand: [Double], logScale: Bool) -> ReplicateTestResult {
        let trim = standsApart(base) || standsApart(cand)
        return yuen(base, cand, logScale: logScale, trimming: trim ? trimming : 0)
    }

    /// Yuen's test: Welch's t-test on trimmed means with winsorized
    /// variances (with no trimming, or below 7 replicates, it is Welch's
    /// test).
    static func yuen(_ base: [Double], _ cand: [Double], logScale: Bool, trimming: Double = trimming)
        -> ReplicateTestResult
    {
        let b = TrimmedMean(base, trimming: trimming)
        let c = TrimmedMean(cand, trimming: trimming)
        let trimmed = b.trimmedPerEnd > 0 || c.trimmedPerEnd > 0
        let termB = b.standardError * b.standardError
        let termC = c.standardError * c.standardError
        let error = (termB + termC).squareRoot()
        let estimate = c.mean - b.mean
        let pooled = ((b.spread * b.spread + c.spread * c.spread) / 2).squareRoot()
        guard error > 0 else {
            return ReplicateTestResult(
                method: .processes, logScale: logScale, estimate: estimate, standardError: 0,
                degreesOfFreedom: b.degreesOfFreedom + c.degreesOfFreedom,
                statistic: estimate == 0 ? 0 : .infinity, pValue: estimate == 0 ? 1 : 0, baselineReplicates: base.count,
                candidateReplicates: cand.count, replicateSpread: pooled, trimmed: trimmed)
        }
        let degrees =
            (termB + termC) * (termB + termC)
            / (termB * termB / max(b.degreesOfFreedom, 1) + termC * termC / max(c.degreesOfFreedom, 1))
        let t = estimate / error
        return ReplicateTestResult(
            method: .processes, logScale: logScale, estimate: estimate, standardError: error, degreesOfFreedom: degrees,
            statistic: t, pValue: 2 * StudentDistribution.survival(abs(t), degreesOfFreedom: degrees),
            baselineReplicates: base.count, candidateReplicates: cand.count, replicateSpread: pooled, trimmed: trimmed)
    }

    /// The fallback for a single process on a side: Mann–Whitney U on the
    /// iterations, with the Hodges–Lehmann shift as the estimate and the
    /// standard error implied by its interval.
    private static func iterations(
        _ base: [Double], _ cand: [Double], logScale: Bool, baseCount: Int, candCount: Int
    ) -> ReplicateTestResult {
        let test = RankTests.mannWhitney(base, cand)
        let transform = { (values: [Double]) in logScale ? values.map { log($0) } : values }
        let b = transform(base)
        let c = transform(cand)
        var differences: [Double] = []
        differences.reserveCapacity(b.count * c.count)
        for x in c { for y in b { differences.append(x - y) } }
        differences.sort()
        let estimate = differences.isEmpty ? 0 : Quantiles.median(sorted: differences)
        let spread = Quantiles.scaledMAD(
            b.map { $0 - Quantiles.median(sorted: b.sorted()) }
                + c.map { $0 - Quantiles.median(sorted: c.sorted()) })
        // The rank test's efficiency against the t-test is 3/π; its
        // interval is that of a t-test on (π/3)·n effective samples.
        let error = spread * (Double.pi / 3 * (1 / Double(max(b.count, 1)) + 1 / Double(max(c.count, 1)))).squareRoot()
        let degrees = Double(max(b.count + c.count - 2, 1))
        return ReplicateTestResult(
            method: .iterations, logScale: logScale, estimate: estimate, standardError: error,
            degreesOfFreedom: degrees,
            statistic: test.statistic, pValue: test.pValue, baselineReplicates: baseCount,
            candidateReplicates: candCount,
            replicateSpread: spread)
    }

    /// The share trimmed from each end of the replicates' summaries when one
    /// stands apart: 15%, so that a process hit by a burst of noise from a
    /// neighbour does not swamp the others, while small samples (under 7)
    /// keep them all.
    static let trimming = 0.15

    /// How far from the median, in scaled MADs, a value stands apart: 4.
    /// For normal data, some value of a side of 10 lies that far in about 8%
    /// of sides (whose comparisons then pay Yuen's loss of power); a
    /// process slowed by 30% among processes of 5% noise is 6 standard
    /// deviations out.
    static let outlierDistance = 4.0

    /// Whether some value lies more than ``outlierDistance`` scaled MADs
    /// (1.4826 × the median absolute deviation) from the median of
    /// `values`; with a MAD of 0, whether any value differs from the
    /// median. Fewer than 7 values are never trimmed, so never stand apart.
    public static func standsApart(_ values: [Double]) -> Bool {
        guard values.count >= 7 else { return false }
        let center = Quantiles.median(sorted: values.sorted())
        let scale = Quantiles.scaledMAD(values)
        let farthest = values.reduce(0) { max($0, abs($1 - center)) }
        return scale > 0 ? farthest > outlierDistance * scale : farthest > 0
    }

    package static func meanAndVariance(_ values: [Double]) -> (mean: Double, variance: Double) {
        let n = Double(values.count)
        let mean = values.reduce(0, +) / n
        guard values.count > 1 else { return (mean, 0) }
        let variance = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / (n - 1)
        return (mean, variance)
    }
}

/// A trimmed mean with the standard error of Tukey and McLaughlin (from the
/// winsorized variance), as Yuen's tests use it.
struct TrimmedMean {
    /// The mean of the values left after trimming.
    var mean: Double
    /// Its standard error: s_w / ((1 − 2γ)·√n), s_w the winsorized standard deviation.
    var standardError: Double
    /// n − 2g − 1, for the t statistic.
    var degreesOfFreedom: Double
    /// g, the values trimmed from each end.
    var trimmedPerEnd: Int
    /// The spread of one value on the scale of a standard deviation: the
    /// standard error times √n.
    var spread: Double

    init(_ values: [Double], trimming: Double = ReplicateTest.trimming) {
        let sorted = values.sorted()
        let n = sorted.count
        let g = Int((trimming * Double(n)).rounded(.down))
        trimmedPerEnd = g
        let kept = sorted[g..<(n - g)]
        mean = kept.reduce(0, +) / Double(kept.count)
        var winsorized = sorted
        for index in 0..<g {
            winsorized[index] = sorted[g]
            winsorized[n - 1 - index] = sorted[n - 1 - g]
        }
        let variance = ReplicateTest.meanAndVariance(winsorized).variance
        let effective = Double(n - 2 * g)
        standardError = n > 1 ? (variance * Double(n - 1)).squareRoot() / (effective * (effective - 1)).squareRoot() : 0
        degreesOfFreedom = max(effective - 1, 1)
        spread = standardError * Double(n).squareRoot()
    }
}
