/// Whether a step made a metric worse or better.
public enum StepDirection: String, Sendable, Hashable, Codable, CaseIterable {
    /// Worse: slower, larger, or lower where higher is better.
    case regression
    /// Better.
    case improvement
}

/// How sure a step is.
public enum StepStatus: Sendable, Hashable, Codable, CustomStringConvertible {
    /// At least the minimum segment of runs on each side.
    case confirmed
    /// In the last few runs: significant, but with fewer runs after it than
    /// a confirmed step needs. `runsToConfirm` more runs would complete the
    /// segment (and may also show that it was not a step).
    case possible(runsToConfirm: Int)

    /// "confirmed", or "possible, 2 more runs to confirm".
    public var description: String {
        switch self {
        case .confirmed: "confirmed"
        case .possible(let runs): "possible, \(runs) more run\(runs == 1 ? "" : "s") to confirm"
        }
    }
}

/// A change of a metric's level between two consecutive runs.
public struct HistoryStep: Sendable, Hashable, Codable {
    /// The metric's name.
    public var metric: String
    /// Index of the last run at the old level.
    public var lastBefore: Int
    /// Index of the first run at the new level (`lastBefore + 1`).
    public var firstAfter: Int
    /// The level after over the level before, as a ratio with its confidence
    /// interval: the Hodges–Lehmann shift of log values between the runs
    /// before and after (at most `estimateWindow` runs each side, never past
    /// a neighbouring step), with its distribution-free interval.
    public var change: ShiftEstimate
    /// The p-value of the test that found the step: the rank scan of its
    /// segment, or for a possible step the exact rank test of the last runs.
    public var pValue: Double
    /// The level that p-value had to meet: the Benjamini–Hochberg level its
    /// series was granted, three quarters of it for the scan and a quarter
    /// for the test of the end.
    public var level: Double
    /// Regression or improvement, by the metric's direction.
    public var direction: StepDirection
    /// Confirmed, or possible with the number of runs still to come.
    public var status: StepStatus
    /// Runs before the step that the estimate used.
    public var runsBefore: Int
    /// Runs after the step that the estimate used.
    public var runsAfter: Int
}

/// The steps found in one series, with the series' own evidence.
public struct SeriesSteps: Sendable, Hashable, Codable {
    /// The metric's name.
    public var metric: String
    /// The series' p-value for "the level never changed": the smaller of
    /// the whole-series scan's p-value over 0.75 and the end test's over 0.25.
    public var pValue: Double
    /// That p-value adjusted by Benjamini–Hochberg across all series analysed.
    public var adjustedPValue: Double
    /// Its steps, oldest first. Empty when the series is flat at `alpha`, or
    /// when every step it has is within the metric's floor.
    public var steps: [HistoryStep]
    /// Where the series most likely changed when the evidence is short of
    /// `alpha` but within ``PossibleChange/levelFactor`` times it: nil when
    /// the series has steps, or nothing comes near.
    public var possibleChange: PossibleChange? = nil
}

/// A change the evidence points to but does not reach: the strongest split
/// of a series whose adjusted p-value lies above `alpha` and within
/// ``levelFactor`` times it, with about how many more runs at the new level
/// would confirm it.
public struct PossibleChange: Sendable, Hashable, Codable {
    /// The first run at the new level.
    public var firstAfter: Int
    /// The series' adjusted p-value.
    public var adjustedPValue: Double
    /// About how many more runs like those after the split would bring the
    /// scan's evidence to `alpha` (a normal approximation of the rank
    /// statistic, which grows with √(n·m/(n+m)) for n runs before and m
    /// after).
    public var runsToConfirm: Int

    /// How far above `alpha` a series' adjusted p-value may be for its
    /// split to be told as possible: 5 times.
    public static let levelFactor = 5.0
}

/// The outcome of change-point detection over many series.
public struct HistoryReport: Sendable, Hashable, Codable {
    /// One entry per input series, in input order.
    public var series: [SeriesSteps]
    /// The options used.
    public var options: StepDetectionOptions

    /// Every step of every series, series by series, oldest first.
    public var steps: [HistoryStep] { series.flatMap(\.steps) }
}
