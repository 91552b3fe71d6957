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
    /// The share of its wall time a test must spend off the CPU to count
    /// as waiting: 10%. `strobe compare` reads it in the least-waiting
    /// iteration on either side (the one a neighbour's process preempted
    /// least), `strobe trend` in the median run on either side of a step.
    public static let waitingShare = 0.1
    /// How far the median parallelism (process CPU time over wall time) of
    /// a test may differ between two sides for its time to be settled by
    /// its counts: 5%. Two workers taken one after another by a lock halve
    /// it.
    public static let parallelismTolerance = 0.05
}
