import Foundation
import StrobeResults
import StrobeStatistics

/// One metric compared between baseline and candidate.
public struct MetricComparison: Sendable, Hashable, Codable {
    /// The metric's name.
    public var name: String
    /// The group it belongs to (`--group-by`), or "" for all.
    public var group: String
    /// Its unit.
    public var unit: String
    /// Which way the metric gets better.
    public var better: MetricDirection
    /// Whether its verdict gates (a regression fails the comparison) or is
    /// only reported.
    public var gates: Bool
    /// The relative noise floor that applied (0.02 = 2%).
    public var relativeFloor: Double
    /// The absolute floor that applied, in the metric's unit (0 = none).
    public var absoluteFloor: Double
    /// How each replicate's iterations were summarised.
    public var summary: ReplicateSummary
    /// The baseline's samples, summarized.
    public var baseline: SampleSummary
    /// The candidate's samples, summarized.
    public var candidate: SampleSummary
    /// The process-level test: method, estimate, p-value, replicates.
    public var test: ReplicateTestResult
    /// The ratio candidate / baseline and its confidence interval; nil when
    /// the baseline's center is not positive (a count that is zero).
    public var shift: ShiftEstimate?
    /// The caveat of a metric judged on the iterations of one process a
    /// side.
    public static let singleProcessWarning =
        "a single process on one side: the noise between processes is not measured and iterations are treated as "
        + "independent; run more processes (strobe compare) for a sound verdict"
    /// The caveat of a metric whose baseline is 0 or below: it has no ratio.
    public static let zeroBaselineWarning =
        "the baseline is 0 or below, so no percentage exists: the change is judged in the metric's own unit"

    /// The change candidate − baseline in the metric's unit: the
    /// process-level test's estimate (on a log scale, the baseline's center
    /// times the estimated ratio less one), so it lies inside its interval.
    public var difference: Double
    /// The confidence interval of ``difference`` (at the interval's
    /// confidence), in the metric's unit: lower bound.
    public var differenceLower: Double
    /// Its upper bound.
    public var differenceUpper: Double
    /// Mann–Whitney U over the pooled iterations, for information: it treats
    /// iterations as independent, so it does not enter the verdict unless a
    /// side has a single process.
    public var mannWhitney: TestResult
    /// Kolmogorov–Smirnov over the pooled iterations: a difference of shape,
    /// reported for information.
    public var kolmogorovSmirnov: TestResult
    /// The process-level p-value after Benjamini–Hochberg adjustment across
    /// the metrics of its family: the gated ones, or the report-only ones.
    public var adjustedPValue: Double
    /// The false-alarm level the adjusted p-value was held to (alpha, or the
    /// share of it a sequential look spends).
    public var level: Double
    /// The conclusion.
    public var verdict: Verdict
    /// For inconclusive metrics compared by processes: about how many more
    /// rounds (processes per side) would decide a change the size of the
    /// floor with the options' power.
    public var roundsNeeded: Int?
    /// For inconclusive metrics: what would decide them, most useful first.
    public var advice: [DecisionAdvice] = []
    /// For inconclusive metrics compared by processes: the share of the
    /// variance of one process's summary that its own iterations' noise
    /// explains (0–1); nil when it cannot be told.
    public var iterationNoiseShare: Double?
    /// Caveats, e.g. a single process on a side.
    public var warnings: [String]
    /// Whether the metric is an exact count (allocations, retains): with the
    /// same value in every iteration of every process on each side
    /// (``ComparisonMethod/exact``) any difference beyond the absolute floor
    /// is decided at once; when it varies, its absolute floor is at least
    /// ``MetricDefaults/countFloor``.
    public var isCount = false
    /// Whether the metric is an exact count with the same value in every
    /// iteration of every process on each side: its change is the change
    /// of that value ("+1 allocation per iteration (12 → 13)").
    public var isConstantCount = false
    /// For a counted metric with a tolerance (instructions): the relative
    /// spread (`max / min − 1`) up to which each side is judged as a
    /// deterministic count; nil for other metrics.
    public var countTolerance: Double?
    /// For a counted metric with a tolerance: the larger of the two sides'
    /// relative spreads. Within ``countTolerance`` the metric was judged by
    /// the ratio of the sides' centers at once; past it, like a time.
    public var countSpread: Double?
    /// The baseline's center as the test compared it: the median of its
    /// processes' summaries (of their means, for a count that varies); nil
    /// when it has none. The medians of all samples (``baseline``) can
    /// point the other way from the change.
    public var baselineCenter: Double?
    /// The candidate's center as the test compared it; nil when it has
    /// none.
    public var candidateCenter: Double?
    /// For a time row of `strobe compare` that the test's counted work
    /// settled (``CountedWork``): whether the counts were unchanged or
    /// changed. The row keeps the verdict and estimate of the look that
    /// settled it and was measured no further; nil for every other row.
    public var settledByCounts: WorkCoverage?
    /// True for a settled time, or a critical path its waits decided, whose
    /// interval does not size its change (``SizedInterval``): the reports
    /// print "not measured far enough" in place of its change and interval,
    /// which the JSON keeps; nil for every other row.
    public var notMeasuredFarEnough: Bool?
    /// True for a critical path's length that its time left inconclusive
    /// and the waits on the path decided
    /// (``CriticalPathComparison/verdictByWaits(for:)``): the row keeps its
    /// estimate and interval as measured; nil for every other row.
    public var decidedByWaits: Bool?

    /// Whether the metric is a counted one judged within its tolerance:
    /// its change is the ratio of the sides' centers ("+1.9% instructions
    /// per iteration (4.12 M → 4.20 M)").
    public var isWithinCountTolerance: Bool {
        guard let countTolerance, let countSpread else { return false }
        return countSpread <= countTolerance && test.method == .exact
    }
}

extension MetricComparison {
    /// What the metric measures (``MetricKind``), from its name and unit.
    public var kind: MetricKind { MetricDefaults.kind(of: name, unit: unit) }
}
