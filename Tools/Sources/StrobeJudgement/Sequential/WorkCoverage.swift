/// What a test's counted work settled of its time in a sequential
/// comparison (``CountedWork``), set on the time rows it settled (every time
/// of a CPU-bound test, the CPU time of one that waits): those rows keep the
/// verdict and the estimate they had at that look, and are not measured
/// further.
public enum WorkCoverage: String, Sendable, Hashable, Codable {
    /// The test's counts (instructions, allocations) are unchanged: its
    /// work is the same, so the time it covers needs no decision.
    case unchanged
    /// The test's counts changed: the counts gave the verdict, and the time
    /// they cover is as measured at the look that decided them.
    case changed
}
