import Foundation

/// What a comparison concluded about one metric.
public enum Verdict: String, Sendable, Hashable, Codable, CaseIterable {
    /// Significantly worse, by more than the noise floor.
    case regression
    /// Significantly better, by more than the noise floor.
    case improvement
    /// No change beyond the noise floor: the confidence interval lies within
    /// it, or the change is real but smaller than the floor.
    case unchanged
    /// The data cannot tell at the chosen error rates: more iterations needed.
    case inconclusive
}

/// The settings of a comparison.
public struct ComparisonOptions: Sendable, Hashable, Codable {
    /// The false discovery rate across all metrics compared together
    /// (Benjamini–Hochberg). With every metric unchanged it is also the chance
    /// of any false alarm. Default 0.01.
    public var alpha = 0.01
    /// The noise floor: relative changes smaller than this are never called a
    /// regression or an improvement. Default 0.02 (2%).
    public var minimumEffect = 0.02
    /// Confidence of the intervals. Default 0.95.
    public var confidence = 0.95
    /// Percentiles to report (0–100). Default 50 and 90.
    public var percentiles: [Double] = [50, 90]
    /// The power the "iterations needed" estimate aims at. Default 0.8.
    public var power = 0.8

    /// The defaults.
    public init() {}
}

/// A metric's samples on one side of a comparison, summarized.
public struct SampleSummary: Sendable, Hashable, Codable {
    /// Number of samples.
    public var count: Int
    /// Median.
    public var median: Double
    /// 90th percentile.
    public var p90: Double
    /// Mean.
    public var mean: Double
    /// The requested percentiles, keyed by their value ("50", "90", "99.9").
    public var percentiles: [String: Double]

    /// Summarizes `samples`.
    public init(_ samples: [Double], percentiles: [Double]) {
        let sorted = samples.sorted()
        count = sorted.count
        median = Quantiles.median(sorted: sorted)
        p90 = Quantiles.quantile(sorted: sorted, 0.9)
        mean = sorted.isEmpty ? .nan : sorted.reduce(0, +) / Double(sorted.count)
        var values: [String: Double] = [:]
        for percentile in percentiles {
            let key = percentile == percentile.rounded() ? String(Int(percentile)) : String(percentile)
            values[key] = Quantiles.quantile(sorted: sorted, percentile / 100)
        }
        self.percentiles = values
    }
}

/// One metric compared between baseline and candidate.
public struct MetricComparison: Sendable, Hashable, Codable {
    /// The metric's name.
    public var name: String
    /// The group it belongs to (`--group-by`), or "" for all.
    public var group: String
    /// Its unit.
    public var unit: String
    /// Whether smaller is better.
    public var lowerIsBetter: Bool
    /// The baseline's samples, summarized.
    public var baseline: SampleSummary
    /// The candidate's samples, summarized.
    public var candidate: SampleSummary
    /// The ratio candidate / baseline and its confidence interval.
    public var shift: ShiftEstimate?
    /// Mann–Whitney U: the test for a shift.
    public var mannWhitney: TestResult
    /// Kolmogorov–Smirnov: a difference of shape, reported for information.
    public var kolmogorovSmirnov: TestResult
    /// The Mann–Whitney p-value after Benjamini–Hochberg adjustment across
    /// every metric of the comparison.
    public var adjustedPValue: Double
    /// The conclusion.
    public var verdict: Verdict
    /// For inconclusive metrics: iterations per side that would detect a
    /// change the size of the noise floor with the options' power.
    public var iterationsNeeded: Int?
    /// Caveats, e.g. too few samples.
    public var warnings: [String]
}

/// Compares metrics between two sets of samples.
public enum ComparisonEngine {
    /// One metric's samples on both sides.
    public struct Input: Sendable, Hashable {
        /// The metric's name.
        public var name: String
        /// The group (`--group-by` value), or "".
        public var group: String
        /// Its unit.
        public var unit: String
        /// Whether smaller is better.
        public var lowerIsBetter: Bool
        /// Baseline samples.
        public var baseline: [Double]
        /// Candidate samples.
        public var candidate: [Double]

        /// An input.
        public init(name: String, group: String = "", unit: String, lowerIsBetter: Bool, baseline: [Double], candidate: [Double]) {
            self.name = name
            self.group = group
            self.unit = unit
            self.lowerIsBetter = lowerIsBetter
            self.baseline = baseline
            self.candidate = candidate
        }
    }

    /// Compares every input; p-values are adjusted across all of them.
    public static func compare(_ inputs: [Input], options: ComparisonOptions = ComparisonOptions()) -> [MetricComparison] {
        let tests = inputs.map { RankTests.mannWhitney($0.baseline, $0.candidate) }
        let adjusted = MultipleComparisons.benjaminiHochberg(tests.map(\.pValue))
        // The per-test level that BH needs at worst, for the sample-size estimate.
        let worstCaseLevel = options.alpha / Double(max(inputs.count, 1))
        return inputs.indices.map { index in
            let input = inputs[index]
            var warnings: [String] = []
            let smaller = min(input.baseline.count, input.candidate.count)
            if smaller < 9 { warnings.append("only \(smaller) samples on one side; rank tests need about 9 or more") }
            let shift = ShiftEstimate.hodgesLehmann(
                baseline: input.baseline, candidate: input.candidate, confidence: options.confidence)
            let identical = Set(input.baseline).count == 1 && Set(input.baseline) == Set(input.candidate)
            if shift == nil && !identical {
                warnings.append("the baseline's median is not positive: the relative change is undefined")
            }
            let verdict = identical && smaller >= 2 ? .unchanged : decide(
                shift: shift, adjustedPValue: adjusted[index], lowerIsBetter: input.lowerIsBetter,
                enoughSamples: smaller >= 2, options: options)
            var needed: Int?
            if verdict == .inconclusive {
                needed = iterationsNeeded(input, level: worstCaseLevel, options: options)
            }
            return MetricComparison(
                name: input.name, group: input.group, unit: input.unit, lowerIsBetter: input.lowerIsBetter,
                baseline: SampleSummary(input.baseline, percentiles: options.percentiles),
                candidate: SampleSummary(input.candidate, percentiles: options.percentiles),
                shift: shift, mannWhitney: tests[index],
                kolmogorovSmirnov: RankTests.kolmogorovSmirnov(input.baseline, input.candidate),
                adjustedPValue: adjusted[index], verdict: verdict, iterationsNeeded: needed, warnings: warnings)
        }
    }

    static func decide(
        shift: ShiftEstimate?, adjustedPValue: Double, lowerIsBetter: Bool, enoughSamples: Bool,
        options: ComparisonOptions
    ) -> Verdict {
        guard enoughSamples, let shift else { return .inconclusive }
        let floor = options.minimumEffect
        if adjustedPValue <= options.alpha {
            guard abs(shift.change) > floor else { return .unchanged }
            let worse = lowerIsBetter ? shift.change > 0 : shift.change < 0
            return worse ? .regression : .improvement
        }
        if shift.lower >= 1 - floor && shift.upper <= 1 + floor { return .unchanged }
        return .inconclusive
    }

    /// Iterations per side for a rank test at `level` to detect a shift of
    /// the noise floor with the options' power, from the robust spread of
    /// the log samples (normal approximation, with the rank test's 3/π
    /// efficiency against the t-test).
    static func iterationsNeeded(_ input: Input, level: Double, options: ComparisonOptions) -> Int? {
        let logs = { (values: [Double]) in values.filter { $0 > 0 }.map { log($0) } }
        let base = logs(input.baseline)
        let cand = logs(input.candidate)
        guard base.count >= 2, cand.count >= 2 else { return nil }
        let baseCenter = Quantiles.median(sorted: base.sorted())
        let candCenter = Quantiles.median(sorted: cand.sorted())
        let spread = Quantiles.scaledMAD(base.map { $0 - baseCenter } + cand.map { $0 - candCenter })
        guard spread > 0 else { return max(base.count, cand.count) }
        let effect = log(1 + options.minimumEffect)
        let z = NormalDistribution.quantile(1 - level / 2) + NormalDistribution.quantile(options.power)
        let perSide = 2 * z * z * spread * spread / (effect * effect) * Double.pi / 3
        return Int(perSide.rounded(.up))
    }
}
