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
