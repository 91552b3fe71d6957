import StrobeStatistics

/// What would decide an inconclusive metric.
public enum DecisionAdvice: String, Sendable, Hashable, Codable, CaseIterable {
    /// Most of the noise between rounds is the noise of the iterations
    /// inside each process: more iterations per process tighten every
    /// process's summary.
    case moreIterations = "more iterations"
    /// The interval shrinks with the square root of the rounds, and a few
    /// times the rounds run so far would bring it inside the floor.
    case longerBudget = "longer budget"
    /// The noise of one process is so large against the floor that no
    /// reasonable number of rounds decides it: a quieter machine, or a wider
    /// floor for this metric in the policy.
    case quieterMachine = "quieter machine"
}
