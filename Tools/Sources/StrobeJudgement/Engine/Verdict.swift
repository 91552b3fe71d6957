import StrobeStatistics

/// What a comparison concluded about one metric.
public enum Verdict: String, Sendable, Hashable, Codable, CaseIterable {
    /// Significantly worse, by more than the noise floor.
    case regression
    /// Significantly better, by more than the noise floor.
    case improvement
    /// No change beyond the noise floor: the confidence interval lies within
    /// it, or the change is real but smaller than the floor.
    case unchanged
    /// The data cannot tell at the chosen error rates: its interval reaches
    /// past a floor without excluding no change (``MetricComparison/advice``
    /// says what would decide it).
    case inconclusive
}

extension Verdict {
    /// Several verdicts taken together, the one rule for a test's gated
    /// metrics in `strobe diff` and `strobe compare` and for a group's
    /// percentiles in `strobe fleet`: a regression if any regressed, else
    /// inconclusive if any is undecided (an improvement beside an open
    /// metric does not make the whole faster), else an improvement if any
    /// improved, else unchanged (also for none).
    public static func combined(_ verdicts: some Sequence<Verdict>) -> Verdict {
        let all = Set(verdicts)
        return [Verdict.regression, .inconclusive, .improvement].first { all.contains($0) } ?? .unchanged
    }
}
