/// The defaults every judgement starts from, in one place: `strobe diff`
/// and `compare` (``ComparisonOptions`` in StrobeJudgement), `strobe trend`
/// (``StepDetectionOptions`` and the trend's floor), `strobe fleet` and
/// `strobe diff-traces` read them here, so the floor a trend reports at is
/// the floor a comparison gates at, and a change of one changes them all.
public enum JudgementDefaults {
    /// The false discovery rate across the metrics (or series) judged
    /// together, Benjamini–Hochberg: 0.01.
    public static let alpha = 0.01
    /// The relative noise floor: a change of at most 2% is never called a
    /// regression or an improvement.
    public static let relativeFloor = 0.02
    /// The confidence of the intervals shown: 0.95.
    public static let confidence = 0.95
}
