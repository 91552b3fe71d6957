/// What a test's counted work settled of its time in a sequential
/// comparison (``CountedWork``), set on the time rows it settled: those rows
/// keep the verdict and the estimate they had at that look, and are not
/// measured further.
public enum WorkCoverage: String, Sendable, Hashable, Codable {
    /// The test is CPU-bound and its counts (instructions, allocations) are
    /// unchanged: its work is the same, so its time needs no decision.
    case unchanged
    /// The test is CPU-bound and its counts changed: the counts gave the
    /// verdict, and the time is as measured at the look that decided them.
    case changed
}
