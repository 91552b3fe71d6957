import StrobeStatistics

/// The settings of a comparison.
public struct ComparisonOptions: Sendable, Hashable, Codable {
    /// The false discovery rate across all metrics compared together
    /// (Benjamini–Hochberg). With every metric unchanged it is also the chance
    /// of any false alarm. Default 0.01.
    public var alpha = JudgementDefaults.alpha
    /// The noise floor: relative changes smaller than this are never called a
    /// regression or an improvement. Default 0.02 (2%).
    public var minimumEffect = JudgementDefaults.relativeFloor
    /// Confidence of the intervals. Default 0.95.
    public var confidence = JudgementDefaults.confidence
    /// Percentiles to report (0–100). Default 50 and 90.
    public var percentiles: [Double] = [50, 90]
    /// The power the "rounds needed" estimate aims at. Default 0.8.
    public var power = 0.8
    /// The processes each side needs before a count that is the same in
    /// every iteration of all of them is judged exactly, by its difference
    /// alone. A count can repeat within one process and differ in the next
    /// (a worker thread the runtime starts inside one process's window and
    /// reuses in another's), so one process a side cannot show that it
    /// repeats. Default 1, for `strobe diff` of one results file a side;
    /// `strobe compare` asks 2, so its counting processes' counts are
    /// decided once a native process on each side has repeated them.
    public var exactCountProcesses = 1

    /// The defaults.
    public init() {}
}
